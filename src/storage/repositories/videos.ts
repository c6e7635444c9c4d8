/**
 * Videos as the rest of the code reads them: the access-checked lookups ("this user's video in an
 * active index") and the timeline rows of a video, written once. A video of a deleted index is
 * hidden everywhere (listings, questions, segments, files, signed links included).
 */
import { and, asc, eq, inArray, isNull, lt, sql } from 'drizzle-orm';
import type { Db } from '../db';
import { frames, jobs, mediaIndexes, segments, type Video, videos } from '../schema';

/** The video `fileId` if its index is active (not deleted) and, when `userId` is given, it is that user's; else undefined. */
export function activeVideo(db: Db, fileId: string, userId: string | null): Video | undefined {
  return db
    .select({ video: videos })
    .from(videos)
    .innerJoin(mediaIndexes, eq(mediaIndexes.id, videos.indexId))
    .where(
      and(
        eq(videos.id, fileId),
        userId === null ? undefined : eq(videos.userId, userId),
        isNull(mediaIndexes.deletedAt),
      ),
    )
    .get()?.video;
}

/** The user's video in an active index, or undefined: the lookup every per-video endpoint starts with. */
export const activeVideoOf = (db: Db, userId: string, fileId: string): Video | undefined =>
  activeVideo(db, fileId, userId);

/** Every ready video in an active index, whoever's it is, with its analysis summary (no access check: for re-embedding). */
export function readyActiveVideos(db: Db): { id: string; analysis: Video['analysis'] }[] {
  return db
    .select({ id: videos.id, analysis: videos.analysis })
    .from(videos)
    .innerJoin(mediaIndexes, eq(mediaIndexes.id, videos.indexId))
    .where(and(eq(videos.status, 'ready'), isNull(mediaIndexes.deletedAt)))
    .all();
}

/** A video's segments in time order (for a timeline). */
export function timelineSegments(db: Db, videoId: string) {
  return db
    .select({
      kind: segments.kind,
      start: segments.start,
      end: segments.end,
      text: segments.text,
      confidence: segments.confidence,
    })
    .from(segments)
    .where(eq(segments.videoId, videoId))
    .orderBy(asc(segments.start), asc(segments.id))
    .all();
}

/** A video's transcript cues in time order. */
export function transcriptCues(db: Db, videoId: string): { start: number; end: number; text: string }[] {
  return db
    .select({ start: segments.start, end: segments.end, text: segments.text })
    .from(segments)
    .where(and(eq(segments.videoId, videoId), eq(segments.kind, 'transcript')))
    .orderBy(asc(segments.start), asc(segments.id))
    .all();
}

/** Every segment of a video with its details (`extra`), by kind, each kind in time order. */
export function segmentsByKind(db: Db, videoId: string) {
  return db
    .select({
      kind: segments.kind,
      start: segments.start,
      end: segments.end,
      text: segments.text,
      confidence: segments.confidence,
      extra: segments.extra,
    })
    .from(segments)
    .where(eq(segments.videoId, videoId))
    .orderBy(asc(segments.kind), asc(segments.start), asc(segments.id))
    .all();
}

/** A video's sampled frames in time order (`file` is inside `<video dir>/frames/`). */
export function timelineFrames(db: Db, videoId: string) {
  return db
    .select({ t: frames.t, file: frames.file })
    .from(frames)
    .where(eq(frames.videoId, videoId))
    .orderBy(asc(frames.t))
    .all();
}

/** Videos still downloading that started before `cutoff` (the stuck check). */
export function downloadsStartedBefore(db: Db, cutoff: Date): string[] {
  return db
    .select({ id: videos.id })
    .from(videos)
    .where(and(eq(videos.status, 'downloading'), lt(videos.uploadedAt, cutoff)))
    .all()
    .map((v) => v.id);
}

/**
 * Videos in a non-final state that have not moved since `cutoff` and are not waiting in line for
 * a worker (a pending job): the stuck check's candidates.
 */
export function unfinishedUnqueuedSince(db: Db, cutoff: Date): string[] {
  return db
    .select({ id: videos.id })
    .from(videos)
    .where(
      and(
        inArray(videos.status, ['queued', 'downloading', 'processing']),
        lt(videos.updatedAt, cutoff),
        sql`${videos.id} NOT IN (SELECT ${jobs.videoId} FROM ${jobs} WHERE ${jobs.state} = 'pending')`,
      ),
    )
    .all()
    .map((v) => v.id);
}

/** Ends a video as failed with the reason a user reads. */
export function failVideo(db: Db, videoId: string, error: string, now: Date): void {
  db.update(videos)
    .set({ status: 'failed', stage: 'failed', error, updatedAt: now })
    .where(eq(videos.id, videoId))
    .run();
}

/** Whose video it is and in which index (no access check: for cache keys). */
export function placeOf(db: Db, videoId: string): { userId: string; indexId: string } | undefined {
  return db.select({ userId: videos.userId, indexId: videos.indexId }).from(videos).where(eq(videos.id, videoId)).get();
}

/** The videos of an index in upload order (no access check: the caller resolved the index). */
export function videosOfIndex(db: Db, indexId: string): Video[] {
  return db.select().from(videos).where(eq(videos.indexId, indexId)).orderBy(videos.uploadedAt).all();
}

/** The ids of an index's videos (no access check: the caller resolved the index). */
export function videoIdsOfIndex(db: Db, indexId: string): string[] {
  return db
    .select({ id: videos.id })
    .from(videos)
    .where(eq(videos.indexId, indexId))
    .all()
    .map((r) => r.id);
}

/** The file of a video's sampled frame nearest to `t` seconds, if any frame is stored. */
export function frameNear(db: Db, videoId: string, t: number): string | undefined {
  return db
    .select({ file: frames.file })
    .from(frames)
    .where(eq(frames.videoId, videoId))
    .orderBy(sql`abs(${frames.t} - ${t})`)
    .get()?.file;
}
