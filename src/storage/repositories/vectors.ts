/**
 * The vector store's rows (issue 27, issue 33): each video's distinct sentence embeddings as int8
 * bytes in `segment_vectors` (a BLOB on SQLite, `bytea` on PostgreSQL), which the segments point at
 * by `vector_id`. The reads take a Catalog and run on both dialects; the search over them (exact,
 * or the IVF lists each node builds from these rows) stays in src/search/.
 *
 * The writes (storeVideoVectors, clearVideoVectors) take the analysis's write transaction (the
 * embeddings stage's `apply`, src/analysis/stages/embeddings.ts), on either dialect too.
 */
import { and, eq, type SQL, sql } from 'drizzle-orm';
import { quantize } from '../../search/int8';
import type { Catalog } from '../catalog';
import type { Db } from '../db';
import { segments, segmentVectors } from '../schema';

/** `col IN (…)` a list of ids or names, as one parameter: JSON on SQLite, an array on PostgreSQL. */
export function inJson(c: Catalog, col: SQL, values: readonly (string | number)[], type: 'text' | 'int'): SQL {
  const json = JSON.stringify(values);
  if (c.dialect === 'sqlite') return sql`${col} IN (SELECT value FROM json_each(${json}))`;
  // One array parameter, whose length the planner sees: with `IN (SELECT jsonb_array_elements…)` it
  // guessed 100 rows and read the whole segments table where the index finds a few (28 → 0.3 ms).
  return type === 'int'
    ? sql`${col} = ANY(${pgArray(values)}::bigint[])`
    : sql`${col} = ANY(${pgArray(values)}::text[])`;
}

/** A PostgreSQL array literal of these values (each quoted, `"` and `\` escaped). */
function pgArray(values: readonly (string | number)[]): string {
  return `{${values.map((v) => `"${String(v).replace(/["\\]/g, '\\$&')}"`).join(',')}}`;
}

/** A stored vector: its id and its int8 components (as bytes). */
export interface VectorRow {
  id: number;
  vector: Uint8Array;
}

const rowOf = (r: { id: unknown; vector: Uint8Array }): VectorRow => ({ id: Number(r.id), vector: r.vector });

/** These vectors by id (any order). */
export async function vectorsById(c: Catalog, ids: readonly number[]): Promise<VectorRow[]> {
  if (ids.length === 0) return [];
  const rows = await c.rows<{ id: number; vector: Uint8Array }>(
    sql`SELECT id, vector FROM segment_vectors WHERE ${inJson(c, sql`id`, ids, 'int')}`,
  );
  return rows.map(rowOf);
}

/** A video's vectors in id order. */
export async function videoVectors(c: Catalog, videoId: string): Promise<VectorRow[]> {
  const rows = await c.rows<{ id: number; vector: Uint8Array }>(
    sql`SELECT id, vector FROM segment_vectors WHERE video_id = ${videoId} ORDER BY id`,
  );
  return rows.map(rowOf);
}

/** Up to `limit` of a video's vectors with ids above `after`, in id order (a build reads a video in slices). */
export async function vectorSlice(c: Catalog, videoId: string, after: number, limit: number): Promise<VectorRow[]> {
  const rows = await c.rows<{ id: number; vector: Uint8Array }>(
    sql`SELECT id, vector FROM segment_vectors WHERE video_id = ${videoId} AND id > ${after} ORDER BY id LIMIT ${limit}`,
  );
  return rows.map(rowOf);
}

/** How many vectors each of these videos holds (videos with none are left out). */
export async function vectorCounts(c: Catalog, videoIds: readonly string[]): Promise<Map<string, number>> {
  if (videoIds.length === 0) return new Map();
  const rows = await c.rows<{ video_id: string; n: number }>(
    sql`SELECT video_id, count(*) AS n FROM segment_vectors WHERE ${inJson(c, sql`video_id`, videoIds, 'text')} GROUP BY video_id`,
  );
  return new Map(rows.map((r) => [r.video_id, Number(r.n)]));
}

/** Per video: its first and last vector id and how many (ids of one video are consecutive). */
export async function vectorRanges(
  c: Catalog,
  videoIds: readonly string[],
): Promise<Map<string, { first: number; last: number; count: number }>> {
  if (videoIds.length === 0) return new Map();
  const rows = await c.rows<{ video_id: string; first: number; last: number; n: number }>(
    sql`SELECT video_id, min(id) AS first, max(id) AS last, count(*) AS n FROM segment_vectors
        WHERE ${inJson(c, sql`video_id`, videoIds, 'text')} GROUP BY video_id`,
  );
  return new Map(rows.map((r) => [r.video_id, { first: Number(r.first), last: Number(r.last), count: Number(r.n) }]));
}

/** The size in bytes (= dimensions) of a stored vector, or null when none is stored. */
export async function storedVectorLength(c: Catalog): Promise<number | null> {
  const [one] = await c.rows<{ n: number }>(sql`SELECT length(vector) AS n FROM segment_vectors LIMIT 1`);
  return one ? Number(one.n) : null;
}

const asBlob = (q: Int8Array) => Buffer.from(q.buffer, q.byteOffset, q.byteLength);

/**
 * Replaces a video's vectors: `vectors[which[j]]` is the embedding of `segmentIds[j]`. Each distinct
 * vector is stored once, so the ids of one video are consecutive (one transaction, AUTOINCREMENT on
 * SQLite, an identity on PostgreSQL), which the ANN index relies on to drop a video's keys. Run it
 * with the caller's write transaction (`tx`).
 */
export async function storeVideoVectors(
  tx: Catalog,
  videoId: string,
  segmentIds: readonly number[],
  which: readonly number[],
  vectors: readonly Float32Array[],
): Promise<void> {
  const { segments, segmentVectors } = tx.t;
  await clearVideoVectors(tx, videoId);
  const members: number[][] = vectors.map(() => []);
  segmentIds.forEach((id, j) => members[which[j]!]!.push(id));
  await tx.run(async (db) => {
    for (let k = 0; k < vectors.length; k++) {
      if (members[k]!.length === 0) continue;
      const [row] = await db
        .insert(segmentVectors)
        .values({ videoId, vector: asBlob(quantize(vectors[k]!)) })
        .returning({ id: segmentVectors.id });
      await db
        .update(segments)
        .set({ vectorId: row!.id })
        .where(inJson(tx, sql`${segments.id}`, members[k]!, 'int'));
    }
  });
}

/** Drops a video's vectors (its segments keep no vector: questions match them by keyword only). */
export async function clearVideoVectors(tx: Catalog, videoId: string): Promise<void> {
  const { segments, segmentVectors } = tx.t;
  await tx.run(async (db) => {
    await db.update(segments).set({ vectorId: null }).where(eq(segments.videoId, videoId));
    await db.delete(segmentVectors).where(eq(segmentVectors.videoId, videoId));
  });
}

/**
 * Moves float32 vectors left in `segments.embedding` by an earlier version into the store, a video
 * at a time (each in its own transaction, so an interrupted start resumes). Returns the videos moved.
 * Only SQLite catalogs can hold them (no PostgreSQL catalog was ever written by such a version).
 */
export async function moveLegacyVectors(c: Catalog): Promise<number> {
  if (c.dialect !== 'sqlite') return 0;
  return c.run((db) => moveLegacySqlite(db));
}

function moveLegacySqlite(db: Db): number {
  let moved = 0;
  for (;;) {
    const [next] = db.all<{ video_id: string }>(
      sql`SELECT video_id FROM segments INDEXED BY segments_legacy_embedding_idx WHERE embedding IS NOT NULL LIMIT 1`,
    );
    if (!next) return moved;
    const videoId = next.video_id;
    db.transaction((tx) => {
      const rows = tx
        .select({ id: segments.id, e: segments.embedding })
        .from(segments)
        .where(and(eq(segments.videoId, videoId), sql`${segments.embedding} IS NOT NULL`))
        .all();
      const byBytes = new Map<string, number>();
      const vectors: Float32Array[] = [];
      const which = rows.map((r) => {
        const key = (r.e as Buffer).toString('base64');
        let k = byBytes.get(key);
        if (k === undefined) {
          byBytes.set(key, (k = vectors.length));
          const b = r.e as Buffer;
          const f = new Float32Array(b.byteLength / 4);
          new Uint8Array(f.buffer).set(b);
          vectors.push(f);
        }
        return k;
      });
      storeLegacySqlite(
        tx as unknown as Db,
        videoId,
        rows.map((r) => r.id),
        which,
        vectors,
      );
      tx.run(sql`UPDATE segments SET embedding = NULL WHERE video_id = ${videoId} AND embedding IS NOT NULL`);
    });
    moved++;
  }
}

/** storeVideoVectors for the start-up move above: synchronous, in SQLite's own transaction. */
function storeLegacySqlite(
  tx: Db,
  videoId: string,
  segmentIds: readonly number[],
  which: readonly number[],
  vectors: readonly Float32Array[],
): void {
  tx.update(segments).set({ vectorId: null }).where(eq(segments.videoId, videoId)).run();
  tx.delete(segmentVectors).where(eq(segmentVectors.videoId, videoId)).run();
  const members: number[][] = vectors.map(() => []);
  segmentIds.forEach((id, j) => members[which[j]!]!.push(id));
  vectors.forEach((v, k) => {
    if (members[k]!.length === 0) return;
    const row = tx
      .insert(segmentVectors)
      .values({ videoId, vector: asBlob(quantize(v)) })
      .returning({ id: segmentVectors.id })
      .get();
    tx.run(
      sql`UPDATE segments SET vector_id = ${row.id} WHERE id IN (SELECT value FROM json_each(${JSON.stringify(members[k])}))`,
    );
  });
}
