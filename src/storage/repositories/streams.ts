/**
 * Live stream rows (`live_streams`), the `videos` row each stream writes into, and the frames and
 * counters of its analysed windows. No access check here: the live service resolved the user's
 * stream or index first.
 */
import { and, asc, desc, eq, inArray, isNotNull, isNull, lt, sql } from 'drizzle-orm';
import { type Catalog, first } from '../catalog';
import type { LiveState, LiveStream } from '../schema';

/** A stream by id. */
export function findStream(c: Catalog, id: string): Promise<LiveStream | undefined> {
  const { liveStreams } = c.t;
  return c.run(async (db) => first(await db.select().from(liveStreams).where(eq(liveStreams.id, id)).limit(1)));
}

/** The stream that writes into a video (none for an uploaded file). */
export function streamOfVideo(c: Catalog, videoId: string): Promise<LiveStream | undefined> {
  const { liveStreams } = c.t;
  return c.run(async (db) =>
    first(await db.select().from(liveStreams).where(eq(liveStreams.videoId, videoId)).limit(1)),
  );
}

export function streamsInStates(c: Catalog, states: readonly LiveState[]): Promise<LiveStream[]> {
  const { liveStreams } = c.t;
  return c.run((db) =>
    db
      .select()
      .from(liveStreams)
      .where(inArray(liveStreams.state, [...states])),
  );
}

export function allStreams(c: Catalog): Promise<LiveStream[]> {
  return c.run((db) => db.select().from(c.t.liveStreams));
}

/** The user's streams, oldest first (of one index when given). */
export function streamsOfUser(c: Catalog, userId: string, indexId?: string): Promise<LiveStream[]> {
  const { liveStreams } = c.t;
  return c.run((db) =>
    db
      .select()
      .from(liveStreams)
      .where(
        indexId
          ? and(eq(liveStreams.userId, userId), eq(liveStreams.indexId, indexId))
          : eq(liveStreams.userId, userId),
      )
      .orderBy(asc(liveStreams.createdAt), asc(liveStreams.id)),
  );
}

export function streamsOfIndex(c: Catalog, indexId: string): Promise<LiveStream[]> {
  const { liveStreams } = c.t;
  return c.run((db) => db.select().from(liveStreams).where(eq(liveStreams.indexId, indexId)));
}

/** Every stream the user keeps, with its rate and state (for the caps). */
export function streamCapsOfUser(c: Catalog, userId: string): Promise<{ id: string; fps: number; state: LiveState }[]> {
  const { liveStreams } = c.t;
  return c.run((db) =>
    db
      .select({ id: liveStreams.id, fps: liveStreams.fps, state: liveStreams.state })
      .from(liveStreams)
      .where(eq(liveStreams.userId, userId)),
  );
}

/**
 * Inside a write: the user's streams are counted and added by one request at a time (on SQLite the
 * write lock does it already; on PostgreSQL a transaction-scoped advisory lock per user).
 */
export async function lockStreamCaps(tx: Catalog, userId: string): Promise<void> {
  if (tx.dialect === 'postgres') await tx.rows(sql`SELECT pg_advisory_xact_lock(hashtext(${`live-caps:${userId}`}))`);
}

/** The pulled streams: their URL, name and video (for rewriting what they show). */
export async function pulledStreams(c: Catalog): Promise<{ id: string; videoId: string; url: string; name: string }[]> {
  const { liveStreams } = c.t;
  return (await c.run((db) =>
    db
      .select({ id: liveStreams.id, videoId: liveStreams.videoId, url: liveStreams.url, name: liveStreams.name })
      .from(liveStreams)
      .where(isNotNull(liveStreams.url)),
  )) as { id: string; videoId: string; url: string; name: string }[];
}

/** Renames a stream and its resource. */
export function renameStream(c: Catalog, s: { id: string; videoId: string }, name: string): Promise<void> {
  return c.write((tx) =>
    tx.run(async (db) => {
      await db.update(tx.t.liveStreams).set({ name }).where(eq(tx.t.liveStreams.id, s.id));
      await db.update(tx.t.videos).set({ fileName: name }).where(eq(tx.t.videos.id, s.videoId));
    }),
  );
}

/** Sets the source a stream's resource shows (when it differs). */
export function setShownSource(c: Catalog, videoId: string, shown: string): Promise<void> {
  const { videos } = c.t;
  return c.run(async (db) => {
    await db
      .update(videos)
      .set({ sourceUrl: shown })
      .where(and(eq(videos.id, videoId), sql`${videos.sourceUrl} != ${shown}`));
  });
}

/** A new stream and the `videos` row its windows write into (the stream's resource). */
export function insertStream(
  tx: Catalog,
  s: {
    id: string;
    videoId: string;
    indexId: string;
    userId: string;
    url: string | null;
    shownSource: string;
    name: string;
    fps: number;
    retentionSec: number;
    at: Date;
  },
): Promise<void> {
  return tx.write((w) =>
    w.run(async (db) => {
      await db.insert(w.t.videos).values({
        id: s.videoId,
        indexId: s.indexId,
        userId: s.userId,
        sourceUrl: s.shownSource,
        fileName: s.name,
        fileType: 'video/x-live',
        storagePath: `media/${s.videoId}/live`,
        durationSec: 0,
        fps: s.fps,
        hasAudio: false,
        status: 'ready',
        stage: 'live',
        progress: 100,
        uploadedAt: s.at,
        updatedAt: s.at,
      });
      await db.insert(w.t.liveStreams).values({
        id: s.id,
        videoId: s.videoId,
        indexId: s.indexId,
        userId: s.userId,
        url: s.url,
        name: s.name,
        fps: s.fps,
        retentionSec: s.retentionSec,
        state: 'connecting',
        createdAt: s.at,
        updatedAt: s.at,
      });
    }),
  );
}

/** Sets a stream's state and reason: its video id, or undefined when the stream is gone. */
export async function setStreamState(
  c: Catalog,
  id: string,
  state: LiveState,
  reason: string | null,
): Promise<string | undefined> {
  const { liveStreams } = c.t;
  const rows = await c.run((db) =>
    db
      .update(liveStreams)
      .set({ state, reason, updatedAt: new Date() })
      .where(eq(liveStreams.id, id))
      .returning({ videoId: liveStreams.videoId }),
  );
  return rows[0]?.videoId;
}

/** The stream is live (frames come): its first time sets `went_live_at`. */
export function markStreamLive(c: Catalog, row: LiveStream): Promise<void> {
  const { liveStreams } = c.t;
  return c.run(async (db) => {
    await db
      .update(liveStreams)
      .set({ state: 'live', reason: null, wentLiveAt: row.wentLiveAt ?? new Date(), updatedAt: new Date() })
      .where(eq(liveStreams.id, row.id));
  });
}

/** Sets stream time 0 unless another request set it first: the origin in force. */
export async function setStreamOrigin(c: Catalog, id: string, atMs: number): Promise<number> {
  const { liveStreams } = c.t;
  await c.run(async (db) => {
    await db
      .update(liveStreams)
      .set({ originMs: atMs })
      .where(and(eq(liveStreams.id, id), isNull(liveStreams.originMs)));
  });
  return (await findStream(c, id))?.originMs ?? atMs;
}

export function countDroppedFrames(c: Catalog, id: string, n: number): Promise<void> {
  const { liveStreams } = c.t;
  return c.run(async (db) => {
    await db
      .update(liveStreams)
      .set({ framesDropped: sql`${liveStreams.framesDropped} + ${n}` })
      .where(eq(liveStreams.id, id));
  });
}

/** Stream seconds of the newest analysed frame of a live video. */
export async function latestFrameTime(c: Catalog, videoId: string): Promise<number | undefined> {
  const { frames } = c.t;
  const row = await c.run(async (db) =>
    first(
      await db.select({ t: frames.t }).from(frames).where(eq(frames.videoId, videoId)).orderBy(desc(frames.t)).limit(1),
    ),
  );
  return row?.t;
}

/** The file names of a video's analysed frames (of `among` only, when given). */
export async function frameFilesOf(c: Catalog, videoId: string, among?: string[]): Promise<Set<string>> {
  const { frames } = c.t;
  const rows = await c.run((db) =>
    db
      .select({ file: frames.file })
      .from(frames)
      .where(among ? and(eq(frames.videoId, videoId), inArray(frames.file, among)) : eq(frames.videoId, videoId)),
  );
  return new Set(rows.map((r) => r.file));
}

/** A window's frames, counted on its stream, and the stream's video grown to cover them. */
export function recordWindow(
  c: Catalog,
  w: {
    streamId: string;
    videoId: string;
    frames: { t: number; file: string }[];
    step: number;
    width: number;
    height: number;
    heard: boolean;
  },
): Promise<void> {
  const last = w.frames[w.frames.length - 1]!;
  const end = last.t + w.step;
  return c.write((tx) =>
    tx.run(async (db) => {
      const { frames, liveStreams, videos } = tx.t;
      const held = sql`coalesce(${videos.durationSec}, 0)`;
      await db.insert(frames).values(w.frames.map((f) => ({ videoId: w.videoId, t: f.t, shot: 0, file: f.file })));
      await db
        .update(liveStreams)
        .set({
          framesAnalysed: sql`${liveStreams.framesAnalysed} + ${w.frames.length}`,
          secondsAnalysed: sql`${liveStreams.secondsAnalysed} + ${w.frames.length * w.step}`,
          updatedAt: new Date(),
        })
        .where(eq(liveStreams.id, w.streamId));
      await db
        .update(videos)
        .set({
          // Grown, never shrunk. The larger of two: SQLite's scalar max(), PostgreSQL's greatest().
          durationSec: tx.dialect === 'postgres' ? sql`greatest(${held}, ${end})` : sql`max(${held}, ${end})`,
          updatedAt: new Date(),
          ...(w.width > 0 && { width: w.width, height: w.height }),
          ...(w.heard && { hasAudio: true }),
        })
        .where(eq(videos.id, w.videoId));
    }),
  );
}

/** The bytes a video holds (a live stream's kept frames and recording: counted in the quota). */
export function setVideoSize(c: Catalog, videoId: string, bytes: number): Promise<void> {
  const { videos } = c.t;
  return c.run(async (db) => {
    await db.update(videos).set({ sizeBytes: bytes }).where(eq(videos.id, videoId));
  });
}

/** Drops a stream's frames, segments and alert events older than stream second `cutT`: the frame files gone. */
export function purgeStreamBefore(c: Catalog, row: LiveStream, cutT: number): Promise<{ file: string }[]> {
  return c.write((tx) =>
    tx.run(async (db) => {
      const { frames, segments, liveAlertEvents } = tx.t;
      const gone = await db
        .delete(frames)
        .where(and(eq(frames.videoId, row.videoId), lt(frames.t, cutT)))
        .returning({ file: frames.file });
      await db.delete(segments).where(and(eq(segments.videoId, row.videoId), lt(segments.end, cutT)));
      await db
        .delete(liveAlertEvents)
        .where(and(eq(liveAlertEvents.streamId, row.id), lt(liveAlertEvents.lastT, cutT)));
      return gone;
    }),
  );
}
