/**
 * Users, API tokens and credits, on either dialect (catalog.ts). Tokens are stored as SHA-256
 * hashes only (the caller hashes; it also compares in constant time). A balance changes only
 * through one conditional UPDATE (check and change in one statement, so concurrent requests on
 * any number of nodes never overspend), written to credit_events in the same transaction.
 */
import { and, eq, gte, isNotNull, isNull, or, sql } from 'drizzle-orm';
import { type Catalog, first } from '../catalog';
import type { User } from '../schema';

export interface TokenRow {
  id: string;
  userId: string;
  hash: string;
  prefix: string;
  createdAt: Date;
}

/** A user, its first token and (when it has a balance) the credit event of it, in one transaction. */
export function insertUserWithToken(c: Catalog, user: User, token: TokenRow): Promise<void> {
  return c.write((tx) =>
    tx.run(async (db) => {
      const { users, creditEvents, tokens } = tx.t;
      await db.insert(users).values(user);
      if (user.credits)
        await db
          .insert(creditEvents)
          .values({ userId: user.id, delta: user.credits, reason: 'initial balance', createdAt: user.createdAt });
      await db.insert(tokens).values(token);
    }),
  );
}

export function insertToken(c: Catalog, token: TokenRow): Promise<void> {
  return c.run(async (db) => {
    await db.insert(c.t.tokens).values(token);
  });
}

/** Revokes the live token with this hash; false when there is none. */
export async function revokeTokenByHash(c: Catalog, hash: string, now: Date): Promise<boolean> {
  const { tokens } = c.t;
  const rows = await c.run((db) =>
    db
      .update(tokens)
      .set({ revokedAt: now })
      .where(and(eq(tokens.hash, hash), isNull(tokens.revokedAt)))
      .returning({ id: tokens.id }),
  );
  return rows.length > 0;
}

/** The token with this hash (revoked or not) and its user. */
export function tokenByHash(
  c: Catalog,
  hash: string,
): Promise<{ id: string; hash: string; revokedAt: Date | null; user: User } | undefined> {
  const { tokens, users } = c.t;
  return c.run(async (db) =>
    first(
      await db
        .select({ id: tokens.id, hash: tokens.hash, revokedAt: tokens.revokedAt, user: users })
        .from(tokens)
        .innerJoin(users, eq(users.id, tokens.userId))
        .where(eq(tokens.hash, hash))
        .limit(1),
    ),
  );
}

/** Whether the token with this id exists and is not revoked. */
export async function tokenIsLive(c: Catalog, tokenId: string): Promise<boolean> {
  const { tokens } = c.t;
  const row = await c.run(async (db) =>
    first(await db.select({ revokedAt: tokens.revokedAt }).from(tokens).where(eq(tokens.id, tokenId)).limit(1)),
  );
  return row !== undefined && row.revokedAt === null;
}

export function userById(c: Catalog, userId: string): Promise<User | undefined> {
  const { users } = c.t;
  return c.run(async (db) => first(await db.select().from(users).where(eq(users.id, userId)).limit(1)));
}

export async function userCount(c: Catalog): Promise<number> {
  const { users } = c.t;
  const [row] = await c.run((db) => db.select({ n: sql<number | string>`count(*)` }).from(users));
  // PostgreSQL's count is a bigint, which its driver hands out as text.
  return Number(row?.n ?? 0);
}

/**
 * Adds `amount` (negative: takes it away) to a limited balance, never below zero, with its credit
 * event. Returns the user as it is after: unchanged when unlimited; `negative` when the balance
 * would go below zero; undefined when there is no such user.
 */
export function addToBalance(
  c: Catalog,
  userId: string,
  amount: number,
  reason: string,
  now: Date,
): Promise<User | 'negative' | undefined> {
  return c.write((tx) =>
    tx.run(async (db) => {
      const { users, creditEvents } = tx.t;
      const [changed] = await db
        .update(users)
        .set({ credits: sql`${users.credits} + ${amount}` })
        .where(and(eq(users.id, userId), isNotNull(users.credits), gte(sql`${users.credits} + ${amount}`, 0)))
        .returning();
      if (changed) {
        await db.insert(creditEvents).values({ userId, delta: amount, reason, createdAt: now });
        return changed;
      }
      const user = first(await db.select().from(users).where(eq(users.id, userId)).limit(1));
      if (!user) return undefined;
      return user.credits === null ? user : 'negative';
    }),
  );
}

/**
 * Takes `cost` credits if the balance allows it (unlimited users, NULL, always pass), with its
 * credit event. False when the balance is short (or there is no such user).
 */
export function chargeBalance(c: Catalog, userId: string, cost: number, reason: string, now: Date): Promise<boolean> {
  return c.write((tx) =>
    tx.run(async (db) => {
      const { users, creditEvents } = tx.t;
      const taken = await db
        .update(users)
        .set({ credits: sql`CASE WHEN ${users.credits} IS NULL THEN NULL ELSE ${users.credits} - ${cost} END` })
        .where(and(eq(users.id, userId), or(isNull(users.credits), gte(users.credits, cost))))
        .returning({ id: users.id });
      if (taken.length === 0) return false;
      await db.insert(creditEvents).values({ userId, delta: -cost, reason, createdAt: now });
      return true;
    }),
  );
}

/** Gives `amount` back to a limited balance (a refunded charge), with its credit event. */
export function refundBalance(c: Catalog, userId: string, amount: number, reason: string, now: Date): Promise<void> {
  return c.write((tx) =>
    tx.run(async (db) => {
      const { users, creditEvents } = tx.t;
      await db
        .update(users)
        .set({ credits: sql`${users.credits} + ${amount}` })
        .where(and(eq(users.id, userId), isNotNull(users.credits)));
      await db.insert(creditEvents).values({ userId, delta: amount, reason, createdAt: now });
    }),
  );
}

/** A user's credit events, oldest first (for tests and audits). */
export function creditEventsOf(c: Catalog, userId: string): Promise<{ delta: number; reason: string }[]> {
  const { creditEvents } = c.t;
  return c.run((db) =>
    db
      .select({ delta: creditEvents.delta, reason: creditEvents.reason })
      .from(creditEvents)
      .where(eq(creditEvents.userId, userId))
      .orderBy(creditEvents.id),
  );
}
