/**
 * Users, API tokens and credits. Tokens are stored as SHA-256 hashes only; balances change
 * through single conditional UPDATEs (bun:sqlite is synchronous, so each is atomic) and every
 * change is written to credit_events in the same transaction.
 */
import { and, eq, isNull, sql } from 'drizzle-orm';
import { badRequest, notFound, unauthorized } from '../errors';
import { hashToken, newToken, newUserId, randomId, sameDigest } from '../ids';
import { writeTx, type Db } from '../storage/db';
import { creditEvents, tokens, users, type User } from '../storage/schema';

export interface NewUser {
  user: User;
  /** Shown once; only its hash is kept. */
  token: string;
}

export class AccountService {
  constructor(private readonly db: Db) {}

  createUser(name: string, credits: number | null): NewUser {
    const clean = name.trim();
    if (!clean || clean.length > 100 || /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/.test(clean))
      throw badRequest('name must be 1 to 100 printable characters');
    if (credits !== null && (!Number.isSafeInteger(credits) || credits < 0))
      throw badRequest('credits must be a whole number ≥ 0');
    return writeTx(this.db, (tx) => {
      const user: User = { id: newUserId(), name: clean, credits, createdAt: new Date() };
      tx.insert(users).values(user).run();
      if (credits)
        tx.insert(creditEvents)
          .values({ userId: user.id, delta: credits, reason: 'initial balance', createdAt: new Date() })
          .run();
      const token = this.insertToken(tx as unknown as Db, user.id);
      return { user, token };
    });
  }

  private insertToken(db: Db, userId: string): string {
    const token = newToken();
    db.insert(tokens)
      .values({
        id: `t_${randomId(16)}`,
        userId,
        hash: hashToken(token),
        prefix: token.slice(0, 6),
        createdAt: new Date(),
      })
      .run();
    return token;
  }

  createToken(userId: string): string {
    this.requireUser(userId);
    return this.insertToken(this.db, userId);
  }

  /** Revokes a token given in full. Returns false when it was unknown or already revoked. */
  revokeToken(token: string): boolean {
    const res = this.db
      .update(tokens)
      .set({ revokedAt: new Date() })
      .where(and(eq(tokens.hash, hashToken(token)), isNull(tokens.revokedAt)))
      .returning({ id: tokens.id })
      .all();
    return res.length > 0;
  }

  /** The user a token belongs to; 401 when missing, unknown or revoked. */
  authenticate(token: unknown): User {
    return this.authenticateToken(token).user;
  }

  /** The user a token belongs to and the token's id (not a secret: what a grant remembers it by). */
  authenticateToken(token: unknown): { user: User; tokenId: string } {
    if (typeof token !== 'string' || token.length === 0) throw unauthorized();
    const digest = hashToken(token);
    const row = this.db
      .select({ id: tokens.id, hash: tokens.hash, revokedAt: tokens.revokedAt, user: users })
      .from(tokens)
      .innerJoin(users, eq(users.id, tokens.userId))
      .where(eq(tokens.hash, digest))
      .get();
    // The lookup is by hash; the constant-time compare guards against any shortcut in it.
    if (!row || row.revokedAt || !sameDigest(row.hash, digest)) throw unauthorized('the token is unknown or revoked');
    return { user: row.user, tokenId: row.id };
  }

  /** Whether the token with this id exists and is not revoked (a signed upload URL outlives no token). */
  isTokenLive(tokenId: string): boolean {
    const row = this.db.select({ revokedAt: tokens.revokedAt }).from(tokens).where(eq(tokens.id, tokenId)).get();
    return row !== undefined && row.revokedAt === null;
  }

  getUser(userId: string): User | undefined {
    return this.db.select().from(users).where(eq(users.id, userId)).get();
  }

  requireUser(userId: string): User {
    const u = this.getUser(userId);
    if (!u) throw notFound(`user ${JSON.stringify(userId)} does not exist`);
    return u;
  }

  userCount(): number {
    return this.db.select({ n: sql<number>`count(*)` }).from(users).get()?.n ?? 0;
  }

  addCredits(userId: string, amount: number): User {
    if (!Number.isSafeInteger(amount) || amount === 0) throw badRequest('amount must be a non-zero whole number');
    return writeTx(this.db, (tx) => {
      const u = tx.select().from(users).where(eq(users.id, userId)).get();
      if (!u) throw notFound(`user ${JSON.stringify(userId)} does not exist`);
      if (u.credits === null) return u; // unlimited stays unlimited
      const next = u.credits + amount;
      if (next < 0) throw badRequest(`the balance would become negative (${u.credits} + ${amount})`);
      tx.update(users).set({ credits: next }).where(eq(users.id, userId)).run();
      tx.insert(creditEvents).values({ userId, delta: amount, reason: 'credits add', createdAt: new Date() }).run();
      return { ...u, credits: next };
    });
  }

  /**
   * Takes `cost` credits if the balance allows it: check and debit are one conditional UPDATE,
   * so concurrent requests can never overspend. Unlimited users (NULL) always pass.
   */
  charge(userId: string, cost: number, reason: string): boolean {
    if (cost === 0) return true;
    return writeTx(this.db, (tx) => {
      const taken = tx.all(sql`UPDATE users SET credits = CASE WHEN credits IS NULL THEN NULL ELSE credits - ${cost} END
                               WHERE id = ${userId} AND (credits IS NULL OR credits >= ${cost}) RETURNING id`);
      if (taken.length === 0) return false;
      tx.insert(creditEvents).values({ userId, delta: -cost, reason, createdAt: new Date() }).run();
      return true;
    });
  }

  /** Gives back a charge whose work failed (a failed question is not charged). */
  refund(userId: string, cost: number, reason: string): void {
    if (cost === 0) return;
    writeTx(this.db, (tx) => {
      tx.run(sql`UPDATE users SET credits = credits + ${cost} WHERE id = ${userId} AND credits IS NOT NULL`);
      tx.insert(creditEvents).values({ userId, delta: cost, reason, createdAt: new Date() }).run();
    });
  }
}
