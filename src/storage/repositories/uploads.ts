/**
 * Video rows as uploads and downloads write them: the row made when a transfer starts, its
 * progress, the stored commit, the per-user quotas, removal and start-up recovery. No access
 * check here: the ingest service resolved the user's index first.
 */
import { and, eq, inArray, ne, sql } from 'drizzle-orm';
import type { MediaInfo } from '../../media/probe';
import type { Db } from '../db';
import { mediaIndexes, type Video, videos } from '../schema';

/** The row of a transfer that is starting (status `downloading`). */
export function insertVideo(tx: Db, row: typeof videos.$inferInsert): void {
  tx.insert(videos).values(row).run();
}

/** What a user holds (bytes of videos not failed) and how many of them are still downloading or analysed. */
export function userUsage(db: Db, userId: string): { bytes: number; waiting: number } {
  return db
    .select({
      bytes: sql<number>`coalesce(sum(${videos.sizeBytes}), 0)`,
      waiting: sql<number>`coalesce(sum(${videos.status} in ('downloading', 'processing')), 0)`,
    })
    .from(videos)
    .where(and(eq(videos.userId, userId), ne(videos.status, 'failed')))
    .get()!;
}

/** Bytes the user's videos (not failed) hold, leaving one video out. */
export function storedBytesExcept(db: Db, userId: string, except: string): number {
  return db
    .select({ bytes: sql<number>`coalesce(sum(${videos.sizeBytes}), 0)` })
    .from(videos)
    .where(and(eq(videos.userId, userId), ne(videos.status, 'failed'), ne(videos.id, except)))
    .get()!.bytes;
}

/** Another video of the index with the same bytes (not failed): an upload of it keeps one copy. */
export function twinInIndex(db: Db, indexId: string, sha256: string, videoId: string): Video | undefined {
  return db
    .select()
    .from(videos)
    .where(
      and(eq(videos.indexId, indexId), eq(videos.sha256, sha256), ne(videos.id, videoId), ne(videos.status, 'failed')),
    )
    .get();
}

export function deleteVideoRow(db: Db, videoId: string): void {
  db.delete(videos).where(eq(videos.id, videoId)).run();
}

/** Removes the index if no video is in it (an index a failed upload created). */
export function deleteIndexIfEmpty(tx: Db, indexId: string): void {
  if (!tx.select({ id: videos.id }).from(videos).where(eq(videos.indexId, indexId)).get())
    tx.delete(mediaIndexes).where(eq(mediaIndexes.id, indexId)).run();
}

/** A video by id, whoever's it is (the hosted SDK's progress poll carries only the unguessable id). */
export function videoById(db: Db, videoId: string): Video | undefined {
  return db.select().from(videos).where(eq(videos.id, videoId)).get();
}

/** The video `videoId` if it is in the index (the caller resolved the index for its user). */
export function videoInIndex(db: Db, indexId: string, videoId: string): Video | undefined {
  return db
    .select()
    .from(videos)
    .where(and(eq(videos.id, videoId), eq(videos.indexId, indexId)))
    .get();
}

export function setTransferProgress(db: Db, videoId: string, stage: string, progress: number): void {
  db.update(videos).set({ stage, progress, updatedAt: new Date() }).where(eq(videos.id, videoId)).run();
}

/**
 * The transfer is done: the row gets the file and its probed facts, and becomes `processing`
 * (queued for analysis) or, with analysis off, `ready`. Undefined when the row is gone (removed
 * meanwhile).
 */
export function markVideoStored(
  tx: Db,
  videoId: string,
  file: { rel: string; fileName: string; bytes: number; sha256: string; info: MediaInfo },
  analysis: boolean,
  now: Date,
): Video | undefined {
  const { rel, fileName, bytes, sha256, info } = file;
  return tx
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
    .returning()
    .get();
}

export function deleteVideoRows(tx: Db, ids: string[]): void {
  tx.delete(videos).where(inArray(videos.id, ids)).run();
}

/** Start-up recovery: transfers a restart cut off become failed with the reason; returns their ids. */
export function failInterruptedTransfers(db: Db, error: string): string[] {
  return db
    .update(videos)
    .set({ status: 'failed', stage: 'failed', error, updatedAt: new Date() })
    .where(inArray(videos.status, ['queued', 'downloading']))
    .returning({ id: videos.id })
    .all()
    .map((r) => r.id);
}

/** Which of these video ids have a row. */
export function existingVideoIds(db: Db, ids: string[]): Set<string> {
  if (ids.length === 0) return new Set();
  return new Set(
    db
      .select({ id: videos.id })
      .from(videos)
      .where(inArray(videos.id, ids))
      .all()
      .map((r) => r.id),
  );
}
