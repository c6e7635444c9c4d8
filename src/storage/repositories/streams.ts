/**
 * Live stream rows (`live_streams`), the `videos` row each stream writes into, and the frames and
 * counters of its analysed windows. No access check here: the live service resolved the user's
 * stream or index first.
 */
import { and, asc, desc, eq, inArray, isNotNull, isNull, lt, sql } from 'drizzle-orm';
import { type Catalog, first } from '../catalog';
import { type Db, writeTx } from '../db';
import { frames, liveStreams, videos, type LiveState, type LiveStream } from '../schema';

/**
 * The embedded database inside a write, synchronous: a write transaction of its own (inWriteTx,
 * live/service.ts), or the database of the catalog's write of a live window (live/window.ts, which
 * awaits the stages' own writes, `apply`, on the catalog in the same write). The live modules name
 * it through these until they move to the catalog.
 */
export type WriteTx = Db;
export const inWriteTx = <T>(db: Db, fn: (tx: Db) => T): T => writeTx(db, fn);

export function streamById(db: Db, id: string): LiveStream | undefined {
  return db.select().from(liveStreams).where(eq(liveStreams.id, id)).get();
}

/** A stream by id, on the catalog (either dialect). */
export function findStream(c: Catalog, id: string): Promise<LiveStream | undefined> {
  const { liveStreams } = c.t;
  return c.run(async (db) => first(await db.select().from(liveStreams).where(eq(liveStreams.id, id)).limit(1)));
}

export function streamOfVideo(db: Db, videoId: string): LiveStream | undefined {
  return db.select().from(liveStreams).where(eq(liveStreams.videoId, videoId)).get();
}

export function streamsInStates(db: Db, states: readonly LiveState[]): LiveStream[] {
  return db
    .select()
    .from(liveStreams)
    .where(inArray(liveStreams.state, [...states]))
    .all();
}

export function allStreams(db: Db): LiveStream[] {
  return db.select().from(liveStreams).all();
}

/** The user's streams, oldest first (of one index when given). */
export function streamsOfUser(db: Db, userId: string, indexId?: string): LiveStream[] {
  return db
    .select()
    .from(liveStreams)
    .where(
      indexId ? and(eq(liveStreams.userId, userId), eq(liveStreams.indexId, indexId)) : eq(liveStreams.userId, userId),
    )
    .orderBy(asc(liveStreams.createdAt))
    .all();
}

export function streamsOfIndex(db: Db, indexId: string): LiveStream[] {
  return db.select().from(liveStreams).where(eq(liveStreams.indexId, indexId)).all();
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
export function pulledStreams(db: Db): { id: string; videoId: string; url: string; name: string }[] {
  return db
    .select({ id: liveStreams.id, videoId: liveStreams.videoId, url: liveStreams.url, name: liveStreams.name })
    .from(liveStreams)
    .where(isNotNull(liveStreams.url))
    .all() as { id: string; videoId: string; url: string; name: string }[];
}

/** Renames a stream and its resource. */
export function renameStream(tx: Db, s: { id: string; videoId: string }, name: string): void {
  tx.update(liveStreams).set({ name }).where(eq(liveStreams.id, s.id)).run();
  tx.update(videos).set({ fileName: name }).where(eq(videos.id, s.videoId)).run();
}

/** Sets the source a stream's resource shows (when it differs). */
export function setShownSource(tx: Db, videoId: string, shown: string): void {
  tx.update(videos)
    .set({ sourceUrl: shown })
    .where(and(eq(videos.id, videoId), sql`${videos.sourceUrl} != ${shown}`))
    .run();
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
export function latestFrameTime(db: Db, videoId: string): number | undefined {
  return db
    .select({ t: frames.t })
    .from(frames)
    .where(eq(frames.videoId, videoId))
    .orderBy(desc(frames.t))
    .limit(1)
    .get()?.t;
}

export function frameFilesOf(db: Db, videoId: string, among?: string[]): Set<string> {
  return new Set(
    db
      .select({ file: frames.file })
      .from(frames)
      .where(among ? and(eq(frames.videoId, videoId), inArray(frames.file, among)) : eq(frames.videoId, videoId))
      .all()
      .map((r) => r.file),
  );
}

/** A window's frames, counted on its stream, and the stream's video grown to cover them. */
export function recordWindow(
  tx: Db,
  w: {
    streamId: string;
    videoId: string;
    frames: { t: number; file: string }[];
    step: number;
    width: number;
    height: number;
    heard: boolean;
  },
): void {
  const last = w.frames[w.frames.length - 1]!;
  tx.insert(frames)
    .values(w.frames.map((f) => ({ videoId: w.videoId, t: f.t, shot: 0, file: f.file })))
    .run();
  tx.update(liveStreams)
    .set({
      framesAnalysed: sql`${liveStreams.framesAnalysed} + ${w.frames.length}`,
      secondsAnalysed: sql`${liveStreams.secondsAnalysed} + ${w.frames.length * w.step}`,
      updatedAt: new Date(),
    })
    .where(eq(liveStreams.id, w.streamId))
    .run();
  tx.update(videos)
    .set({
      durationSec: sql`max(coalesce(${videos.durationSec}, 0), ${last.t + w.step})`,
      updatedAt: new Date(),
      ...(w.width > 0 && { width: w.width, height: w.height }),
      ...(w.heard && { hasAudio: true }),
    })
    .where(eq(videos.id, w.videoId))
    .run();
}

export function videoDuration(db: Db, videoId: string): number | undefined {
  return db.select({ d: videos.durationSec }).from(videos).where(eq(videos.id, videoId)).get()?.d ?? undefined;
}

export function setVideoSize(db: Db, videoId: string, bytes: number): void {
  db.update(videos).set({ sizeBytes: bytes }).where(eq(videos.id, videoId)).run();
}

/** Bytes the user's videos take (uploads and live streams; failed ones hold nothing). */
export function usedBytesOfUser(db: Db, userId: string): number {
  return db
    .select({ bytes: sql<number>`coalesce(sum(${videos.sizeBytes}), 0)` })
    .from(videos)
    .where(and(eq(videos.userId, userId), sql`${videos.status} != 'failed'`))
    .get()!.bytes;
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
