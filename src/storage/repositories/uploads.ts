/**
 * Video rows as uploads and downloads write them, on either dialect (catalog.ts): the row made when
 * a transfer starts, its progress, the stored commit, the per-user quotas, removal and start-up
 * recovery. No access check here: the ingest service resolved the user's index first.
 */
import { and, eq, inArray, ne, sql } from 'drizzle-orm';
import type { MediaInfo } from '../../media/probe';
import { type Catalog, first } from '../catalog';
import type { Video, videos as sqliteVideos } from '../schema';

/** The row of a transfer that is starting (status `downloading`). */
export function insertVideo(c: Catalog, row: typeof sqliteVideos.$inferInsert): Promise<void> {
  return c.run(async (db) => {
    await db.insert(c.t.videos).values(row);
  });
}

/** What a user holds (bytes of videos not failed) and how many of them are still downloading or analysed. */
export async function userUsage(c: Catalog, userId: string): Promise<{ bytes: number; waiting: number }> {
  const { videos } = c.t;
  const [row] = await c.run((db) =>
    db
      .select({
        bytes: sql<number | string>`coalesce(sum(${videos.sizeBytes}), 0)`,
        waiting: sql<
          number | string
        >`coalesce(sum(CASE WHEN ${videos.status} IN ('downloading', 'processing') THEN 1 ELSE 0 END), 0)`,
      })
      .from(videos)
      .where(and(eq(videos.userId, userId), ne(videos.status, 'failed'))),
  );
  // PostgreSQL's sums of bigints are numerics, which its driver hands out as text.
  return { bytes: Number(row?.bytes ?? 0), waiting: Number(row?.waiting ?? 0) };
}

/**
 * Inside a write transaction: holds the user's storage quota until it ends, so that two uploads
 * committed at once cannot both fit in the last free bytes. SQLite's write lock (BEGIN IMMEDIATE)
 * does it already; PostgreSQL takes a transaction-scoped advisory lock on the user.
 */
export async function lockUserQuota(tx: Catalog, userId: string): Promise<void> {
  if (tx.dialect === 'postgres') await tx.rows(sql`SELECT pg_advisory_xact_lock(hashtext(${`quota:${userId}`}))`);
}

/** Bytes the user's videos (not failed) hold, leaving one video out. */
export async function storedBytesExcept(c: Catalog, userId: string, except: string): Promise<number> {
  const { videos } = c.t;
  const [row] = await c.run((db) =>
    db
      .select({ bytes: sql<number | string>`coalesce(sum(${videos.sizeBytes}), 0)` })
      .from(videos)
      .where(and(eq(videos.userId, userId), ne(videos.status, 'failed'), ne(videos.id, except))),
  );
  return Number(row?.bytes ?? 0);
}

/** Another video of the index with the same bytes (not failed): an upload of it keeps one copy. */
export function twinInIndex(c: Catalog, indexId: string, sha256: string, videoId: string): Promise<Video | undefined> {
  const { videos } = c.t;
  return c.run(async (db) =>
    first(
      await db
        .select()
        .from(videos)
        .where(
          and(
            eq(videos.indexId, indexId),
            eq(videos.sha256, sha256),
            ne(videos.id, videoId),
            ne(videos.status, 'failed'),
          ),
        )
        .limit(1),
    ),
  );
}

export function deleteVideoRow(c: Catalog, videoId: string): Promise<void> {
  const { videos } = c.t;
  return c.run(async (db) => {
    await db.delete(videos).where(eq(videos.id, videoId));
  });
}

/** Removes the index if no video is in it (an index a failed upload created). */
export function deleteIndexIfEmpty(tx: Catalog, indexId: string): Promise<void> {
  const { videos, mediaIndexes } = tx.t;
  return tx.run(async (db) => {
    const some = first(await db.select({ id: videos.id }).from(videos).where(eq(videos.indexId, indexId)).limit(1));
    if (!some) await db.delete(mediaIndexes).where(eq(mediaIndexes.id, indexId));
  });
}

/** A video by id, whoever's it is (the hosted SDK's progress poll carries only the unguessable id). */
export function videoById(c: Catalog, videoId: string): Promise<Video | undefined> {
  const { videos } = c.t;
  return c.run(async (db) => first(await db.select().from(videos).where(eq(videos.id, videoId)).limit(1)));
}

/** The video `videoId` if it is in the index (the caller resolved the index for its user). */
export function videoInIndex(c: Catalog, indexId: string, videoId: string): Promise<Video | undefined> {
  const { videos } = c.t;
  return c.run(async (db) =>
    first(
      await db
        .select()
        .from(videos)
        .where(and(eq(videos.id, videoId), eq(videos.indexId, indexId)))
        .limit(1),
    ),
  );
}

export function setTransferProgress(c: Catalog, videoId: string, stage: string, progress: number): Promise<void> {
  const { videos } = c.t;
  return c.run(async (db) => {
    await db.update(videos).set({ stage, progress, updatedAt: new Date() }).where(eq(videos.id, videoId));
  });
}

/**
 * The transfer is done: the row gets the file and its probed facts, and becomes `processing`
 * (queued for analysis) or, with analysis off, `ready`. Undefined when the row is gone (removed
 * meanwhile).
 */
export function markVideoStored(
  tx: Catalog,
  videoId: string,
  file: { rel: string; fileName: string; bytes: number; sha256: string; info: MediaInfo },
  analysis: boolean,
  now: Date,
): Promise<Video | undefined> {
  const { rel, fileName, bytes, sha256, info } = file;
  const { videos } = tx.t;
  return tx.run(async (db) =>
    first(
      await db
        .update(videos)
        .set({
          storagePath: rel,
          fileName,
          fileType: info.mimeType,
          sizeBytes: bytes,
          sha256,
          durationSec: info.durationSec,
          fps: info.fps,
          width: info.width,
          height: info.height,
          videoCodec: info.videoCodec,
          hasAudio: info.hasAudio,
          status: analysis ? 'processing' : 'ready',
          stage: analysis ? 'queued' : 'ready',
          progress: analysis ? 0 : 100,
          updatedAt: now,
        })
        .where(eq(videos.id, videoId))
        .returning(),
    ),
  );
}

/**
 * Deletes videos' rows of one index; their face appearances go with them (cascade), and the people
 * of the index left with none go too. Call it inside a write transaction.
 */
export function deleteVideoRows(tx: Catalog, indexId: string, ids: string[]): Promise<void> {
  const { videos, people, personAppearances } = tx.t;
  return tx.run(async (db) => {
    await db.delete(videos).where(inArray(videos.id, ids));
    await db
      .delete(people)
      .where(
        and(
          eq(people.indexId, indexId),
          sql`NOT EXISTS (SELECT 1 FROM ${personAppearances} WHERE ${personAppearances.personId} = ${people.id})`,
        ),
      );
  });
}

/** Start-up recovery: transfers a restart cut off become failed with the reason; returns their ids. */
export async function failInterruptedTransfers(c: Catalog, error: string): Promise<string[]> {
  const { videos } = c.t;
  const rows = await c.run((db) =>
    db
      .update(videos)
      .set({ status: 'failed', stage: 'failed', error, updatedAt: new Date() })
      .where(inArray(videos.status, ['queued', 'downloading']))
      .returning({ id: videos.id }),
  );
  return rows.map((r) => r.id);
}

/** Which of these video ids have a row. */
export async function existingVideoIds(c: Catalog, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const { videos } = c.t;
  const rows = await c.run((db) => db.select({ id: videos.id }).from(videos).where(inArray(videos.id, ids)));
  return new Set(rows.map((r) => r.id));
}
