/**
 * Videos as the rest of the code reads them, on either dialect (catalog.ts): the access-checked
 * lookups ("this user's video in an active index") and the timeline rows of a video, written once.
 * A video of a deleted index is hidden everywhere (listings, questions, segments, files, signed
 * links included).
 */
import { and, asc, eq, inArray, isNull, lt, sql } from 'drizzle-orm';
import { type Catalog, first } from '../catalog';
import type { Video } from '../schema';

/** The video `fileId` if its index is active (not deleted) and, when `userId` is given, it is that user's; else undefined. */
export function activeVideo(c: Catalog, fileId: string, userId: string | null): Promise<Video | undefined> {
  const { videos, mediaIndexes } = c.t;
  return c.run(
    async (db) =>
      first(
        await db
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
          .limit(1),
      )?.video,
  );
}

/** The user's video in an active index, or undefined: the lookup every per-video endpoint starts with. */
export const activeVideoOf = (c: Catalog, userId: string, fileId: string): Promise<Video | undefined> =>
  activeVideo(c, fileId, userId);

/** Every ready video in an active index, whoever's it is, with its analysis summary (no access check: for re-embedding). */
export function readyActiveVideos(c: Catalog): Promise<{ id: string; analysis: Video['analysis'] }[]> {
  const { videos, mediaIndexes } = c.t;
  return c.run((db) =>
    db
      .select({ id: videos.id, analysis: videos.analysis })
      .from(videos)
      .innerJoin(mediaIndexes, eq(mediaIndexes.id, videos.indexId))
      .where(and(eq(videos.status, 'ready'), isNull(mediaIndexes.deletedAt)))
      .orderBy(asc(videos.id)),
  );
}

/** A video's segments in time order (for a timeline). */
export function timelineSegments(c: Catalog, videoId: string) {
  const { segments } = c.t;
  return c.run((db) =>
    db
      .select({
        kind: segments.kind,
        start: segments.start,
        end: segments.end,
        text: segments.text,
        confidence: segments.confidence,
      })
      .from(segments)
      .where(eq(segments.videoId, videoId))
      .orderBy(asc(segments.start), asc(segments.id)),
  );
}

/** A video's transcript cues in time order. */
export function transcriptCues(c: Catalog, videoId: string): Promise<{ start: number; end: number; text: string }[]> {
  const { segments } = c.t;
  return c.run((db) =>
    db
      .select({ start: segments.start, end: segments.end, text: segments.text })
      .from(segments)
      .where(and(eq(segments.videoId, videoId), eq(segments.kind, 'transcript')))
      .orderBy(asc(segments.start), asc(segments.id)),
  );
}

/** Every segment of a video with its details (`extra`), by kind, each kind in time order. */
export function segmentsByKind(c: Catalog, videoId: string) {
  const { segments } = c.t;
  return c.run((db) =>
    db
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
      .orderBy(asc(segments.kind), asc(segments.start), asc(segments.id)),
  );
}

/** A video's sampled frames in time order (`file` is inside `<video dir>/frames/`). */
export function timelineFrames(c: Catalog, videoId: string): Promise<{ t: number; file: string }[]> {
  const { frames } = c.t;
  return c.run((db) =>
    db
      .select({ t: frames.t, file: frames.file })
      .from(frames)
      .where(eq(frames.videoId, videoId))
      .orderBy(asc(frames.t)),
  );
}

/** Videos still downloading that started before `cutoff` (the stuck check). */
export async function downloadsStartedBefore(c: Catalog, cutoff: Date): Promise<string[]> {
  const { videos } = c.t;
  const rows = await c.run((db) =>
    db
      .select({ id: videos.id })
      .from(videos)
      .where(and(eq(videos.status, 'downloading'), lt(videos.uploadedAt, cutoff))),
  );
  return rows.map((v) => v.id);
}

/**
 * Videos in a non-final state that have not moved since `cutoff` and are not waiting in line for
 * a worker (a pending job): the stuck check's candidates.
 */
export async function unfinishedUnqueuedSince(c: Catalog, cutoff: Date): Promise<string[]> {
  const { videos, jobs } = c.t;
  const rows = await c.run((db) =>
    db
      .select({ id: videos.id })
      .from(videos)
      .where(
        and(
          inArray(videos.status, ['queued', 'downloading', 'processing']),
          lt(videos.updatedAt, cutoff),
          sql`${videos.id} NOT IN (SELECT ${jobs.videoId} FROM ${jobs} WHERE ${jobs.state} = 'pending')`,
        ),
      ),
  );
  return rows.map((v) => v.id);
}

/** Ends a video as failed with the reason a user reads. */
export function failVideo(c: Catalog, videoId: string, error: string, now: Date): Promise<void> {
  const { videos } = c.t;
  return c.run(async (db) => {
    await db
      .update(videos)
      .set({ status: 'failed', stage: 'failed', error, updatedAt: now })
      .where(eq(videos.id, videoId));
  });
}

/** Whose video it is and in which index (no access check: for cache keys). */
export function placeOf(c: Catalog, videoId: string): Promise<{ userId: string; indexId: string } | undefined> {
  const { videos } = c.t;
  return c.run(async (db) =>
    first(
      await db
        .select({ userId: videos.userId, indexId: videos.indexId })
        .from(videos)
        .where(eq(videos.id, videoId))
        .limit(1),
    ),
  );
}

/** The videos of an index in upload order (no access check: the caller resolved the index). */
export function videosOfIndex(c: Catalog, indexId: string): Promise<Video[]> {
  const { videos } = c.t;
  return c.run((db) =>
    db.select().from(videos).where(eq(videos.indexId, indexId)).orderBy(asc(videos.uploadedAt), asc(videos.id)),
  );
}

/** The ids of an index's videos (no access check: the caller resolved the index). */
export async function videoIdsOfIndex(c: Catalog, indexId: string): Promise<string[]> {
  const { videos } = c.t;
  const rows = await c.run((db) => db.select({ id: videos.id }).from(videos).where(eq(videos.indexId, indexId)));
  return rows.map((r) => r.id);
}

/** The file of a video's sampled frame nearest to `t` seconds, if any frame is stored. */
export function frameNear(c: Catalog, videoId: string, t: number): Promise<string | undefined> {
  const { frames } = c.t;
  return c.run(
    async (db) =>
      first(
        await db
          .select({ file: frames.file })
          .from(frames)
          .where(eq(frames.videoId, videoId))
          .orderBy(sql`abs(${frames.t} - ${t})`)
          .limit(1),
      )?.file,
  );
}
