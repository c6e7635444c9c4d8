/**
 * Media indexes as the rest of the code reads and writes them. `indexOf` is the one access-checked
 * lookup ("this user's index, by id or by name"); a deleted index is left out unless asked for.
 */
import { and, desc, eq, inArray, isNotNull, isNull, lt, sql } from 'drizzle-orm';
import { isIndexIdShape } from '../../ids';
import type { Db } from '../db';
import { mediaIndexes, type MediaIndex, videos } from '../schema';

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
export function indexOf(db: Db, userId: string, ref: string, opts: IndexLookup): MediaIndex | undefined {
  const active = opts.includeDeleted ? undefined : isNull(mediaIndexes.deletedAt);
  if (isIndexIdShape(ref)) {
    const byId = db
      .select()
      .from(mediaIndexes)
      .where(and(eq(mediaIndexes.id, ref), eq(mediaIndexes.userId, userId), active))
      .get();
    if (byId || !opts.byName) return byId;
  }
  if (!opts.byName) return undefined;
  return db
    .select()
    .from(mediaIndexes)
    .where(and(eq(mediaIndexes.userId, userId), eq(mediaIndexes.name, ref.trim()), active))
    .orderBy(desc(mediaIndexes.createdAt))
    .get();
}

/**
 * Active (not deleted) indexes named `ref` (by id or by name) across users, or of one user: for the command line,
 * where no token says whose index it is.
 */
export function activeIndexesNamed(db: Db, ref: string, userId?: string): { id: string; userId: string }[] {
  const ofUser = userId ? eq(mediaIndexes.userId, userId) : undefined;
  const columns = { id: mediaIndexes.id, userId: mediaIndexes.userId };
  const byId = db
    .select(columns)
    .from(mediaIndexes)
    .where(and(isNull(mediaIndexes.deletedAt), ofUser))
    .all()
    .filter((i) => i.id === ref);
  const byName = db
    .select(columns)
    .from(mediaIndexes)
    .where(and(isNull(mediaIndexes.deletedAt), eq(mediaIndexes.name, ref), ofUser))
    .all();
  return byId.concat(byName);
}

/** The user's indexes, newest first, with their video count and total duration (seconds). */
export function indexListing(db: Db, userId: string, includeDeleted: boolean) {
  return db
    .select({
      index: mediaIndexes,
      count: sql<number>`count(${videos.id})`,
      total: sql<number>`coalesce(sum(${videos.durationSec}), 0)`,
    })
    .from(mediaIndexes)
    .leftJoin(videos, eq(videos.indexId, mediaIndexes.id))
    .where(
      includeDeleted
        ? eq(mediaIndexes.userId, userId)
        : and(eq(mediaIndexes.userId, userId), isNull(mediaIndexes.deletedAt)),
    )
    .groupBy(mediaIndexes.id)
    .orderBy(desc(mediaIndexes.createdAt))
    .all();
}

export function insertIndex(tx: Db, index: MediaIndex): void {
  tx.insert(mediaIndexes).values(index).run();
}

/** Soft-deletes (a date) or restores (null) an index. */
export function setIndexDeletedAt(db: Db, indexId: string, deletedAt: Date | null): void {
  db.update(mediaIndexes).set({ deletedAt }).where(eq(mediaIndexes.id, indexId)).run();
}

/** Soft-deleted indexes older than the cutoff, for the purge. */
export function indexesDeletedBefore(db: Db, cutoff: Date): MediaIndex[] {
  return db
    .select()
    .from(mediaIndexes)
    .where(and(isNotNull(mediaIndexes.deletedAt), lt(mediaIndexes.deletedAt, cutoff)))
    .all();
}

/** Removes an index row for good (the purge; its videos' rows and files go first). */
export function deleteIndexRow(db: Db, indexId: string): void {
  db.delete(mediaIndexes).where(eq(mediaIndexes.id, indexId)).run();
}

/** Which of these index ids still have a row (deleted or not). */
export function existingIndexIds(db: Db, ids: string[]): Set<string> {
  if (ids.length === 0) return new Set();
  return new Set(
    db
      .select({ id: mediaIndexes.id })
      .from(mediaIndexes)
      .where(inArray(mediaIndexes.id, ids))
      .all()
      .map((r) => r.id),
  );
}
