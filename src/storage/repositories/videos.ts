/**
 * Videos as the rest of the code reads them: the access-checked lookups ("this user's video in a
 * live index") and the timeline rows of a video, written once. A video of a deleted index is
 * hidden everywhere (listings, questions, segments, files, signed links included).
 */
import { and, asc, eq, isNull } from 'drizzle-orm';
import type { Db } from '../db';
import { frames, mediaIndexes, segments, type Video, videos } from '../schema';

/** The video `fileId` if its index is live and, when `userId` is given, it is that user's; else undefined. */
export function liveVideo(db: Db, fileId: string, userId: string | null): Video | undefined {
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

/** The user's video in a live index, or undefined: the lookup every per-video endpoint starts with. */
export const liveVideoOf = (db: Db, userId: string, fileId: string): Video | undefined => liveVideo(db, fileId, userId);

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

/** A video's sampled frames in time order (`file` is inside `<video dir>/frames/`). */
export function timelineFrames(db: Db, videoId: string) {
  return db
    .select({ t: frames.t, file: frames.file })
    .from(frames)
    .where(eq(frames.videoId, videoId))
    .orderBy(asc(frames.t))
    .all();
}

/** Whose video it is and in which index (no access check: for cache keys). */
export function placeOf(db: Db, videoId: string): { userId: string; indexId: string } | undefined {
  return db.select({ userId: videos.userId, indexId: videos.indexId }).from(videos).where(eq(videos.id, videoId)).get();
}
