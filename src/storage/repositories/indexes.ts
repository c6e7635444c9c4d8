/**
 * Media indexes as the rest of the code reads and writes them, on either dialect (catalog.ts).
 * `indexOf` is the one access-checked lookup ("this user's index, by id or by name"); a deleted
 * index is left out unless asked for.
 */
import { and, asc, desc, eq, inArray, isNotNull, isNull, lt, sql } from 'drizzle-orm';
import { isIndexIdShape } from '../../ids';
import { type Catalog, first } from '../catalog';
import type { MediaIndex } from '../schema';

export interface IndexLookup {
  /** Accept the index name as well as its id. */
  byName: boolean;
  /** Accept a soft-deleted index (restore). */
  includeDeleted?: boolean;
}

/**
 * The user's index named by `ref`: its id, or with `byName` its name (the newest active one of that
 * name when an id matches nothing). Undefined when missing, deleted (unless asked for) or
 * another user's.
 */
export function indexOf(c: Catalog, userId: string, ref: string, opts: IndexLookup): Promise<MediaIndex | undefined> {
  const { mediaIndexes } = c.t;
  const active = opts.includeDeleted ? undefined : isNull(mediaIndexes.deletedAt);
  return c.run(async (db) => {
    if (isIndexIdShape(ref)) {
      const byId = first(
        await db
          .select()
          .from(mediaIndexes)
          .where(and(eq(mediaIndexes.id, ref), eq(mediaIndexes.userId, userId), active))
          .limit(1),
      );
      if (byId || !opts.byName) return byId;
    }
    // No name holds a NUL (names are validated), and PostgreSQL cannot even compare one.
    if (!opts.byName || ref.includes('\u0000')) return undefined;
    return first(
      await db
        .select()
        .from(mediaIndexes)
        .where(and(eq(mediaIndexes.userId, userId), eq(mediaIndexes.name, ref.trim()), active))
        .orderBy(desc(mediaIndexes.createdAt))
        .limit(1),
    );
  });
}

/**
 * Active (not deleted) indexes named `ref` (by id or by name) across users, or of one user: for the command line,
 * where no token says whose index it is.
 */
export function activeIndexesNamed(
  c: Catalog,
  ref: string,
  userId?: string,
): Promise<{ id: string; userId: string }[]> {
  const { mediaIndexes } = c.t;
  const ofUser = userId ? eq(mediaIndexes.userId, userId) : undefined;
  const columns = { id: mediaIndexes.id, userId: mediaIndexes.userId };
  return c.run(async (db) => {
    const byId = await db
      .select(columns)
      .from(mediaIndexes)
      .where(and(isNull(mediaIndexes.deletedAt), eq(mediaIndexes.id, ref), ofUser));
    const byName = await db
      .select(columns)
      .from(mediaIndexes)
      .where(and(isNull(mediaIndexes.deletedAt), eq(mediaIndexes.name, ref), ofUser))
      .orderBy(asc(mediaIndexes.createdAt));
    return byId.concat(byName);
  });
}

/** The user's indexes, newest first, with their video count and total duration (seconds). */
export async function indexListing(
  c: Catalog,
  userId: string,
  includeDeleted: boolean,
): Promise<{ index: MediaIndex; count: number; total: number }[]> {
  const { mediaIndexes, videos } = c.t;
  const rows = await c.run((db) =>
    db
      .select({
        index: mediaIndexes,
        count: sql<number | string>`count(${videos.id})`,
        total: sql<number | string>`coalesce(sum(${videos.durationSec}), 0)`,
      })
      .from(mediaIndexes)
      .leftJoin(videos, eq(videos.indexId, mediaIndexes.id))
      .where(
        includeDeleted
          ? eq(mediaIndexes.userId, userId)
          : and(eq(mediaIndexes.userId, userId), isNull(mediaIndexes.deletedAt)),
      )
      .groupBy(mediaIndexes.id)
      .orderBy(desc(mediaIndexes.createdAt), asc(mediaIndexes.id)),
  );
  // PostgreSQL's count is a bigint and its sum of doubles a double, which its driver may hand out as text.
  return rows.map((r) => ({ index: r.index, count: Number(r.count), total: Number(r.total) }));
}

/**
 * Inside a write transaction: holds the user's index name until it ends, so that two requests that
 * find no index of that name do not both make one. SQLite's write lock (BEGIN IMMEDIATE) does it
 * already; PostgreSQL takes a transaction-scoped advisory lock on the (user, name).
 */
export async function lockIndexName(tx: Catalog, userId: string, name: string): Promise<void> {
  if (tx.dialect === 'postgres')
    await tx.rows(sql`SELECT pg_advisory_xact_lock(hashtext(${`index-name:${userId}:${name.trim()}`}))`);
}

export function insertIndex(c: Catalog, index: MediaIndex): Promise<void> {
  return c.run(async (db) => {
    await db.insert(c.t.mediaIndexes).values(index);
  });
}

/** Soft-deletes (a date) or restores (null) an index. */
export function setIndexDeletedAt(c: Catalog, indexId: string, deletedAt: Date | null): Promise<void> {
  const { mediaIndexes } = c.t;
  return c.run(async (db) => {
    await db.update(mediaIndexes).set({ deletedAt }).where(eq(mediaIndexes.id, indexId));
  });
}

/** Soft-deleted indexes older than the cutoff, for the purge. */
export function indexesDeletedBefore(c: Catalog, cutoff: Date): Promise<MediaIndex[]> {
  const { mediaIndexes } = c.t;
  return c.run((db) =>
    db
      .select()
      .from(mediaIndexes)
      .where(and(isNotNull(mediaIndexes.deletedAt), lt(mediaIndexes.deletedAt, cutoff)))
      .orderBy(asc(mediaIndexes.deletedAt)),
  );
}

/** Removes an index row for good (the purge; its videos' rows and files go first). */
export function deleteIndexRow(c: Catalog, indexId: string): Promise<void> {
  const { mediaIndexes } = c.t;
  return c.run(async (db) => {
    await db.delete(mediaIndexes).where(eq(mediaIndexes.id, indexId));
  });
}

/** Which of these index ids still have a row (deleted or not). */
export async function existingIndexIds(c: Catalog, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const { mediaIndexes } = c.t;
  const rows = await c.run((db) =>
    db.select({ id: mediaIndexes.id }).from(mediaIndexes).where(inArray(mediaIndexes.id, ids)),
  );
  return new Set(rows.map((r) => r.id));
}
