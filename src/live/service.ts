/**
 * Live streams (issue 21): frames pushed by clients (`POST /stream`) or pulled from a camera or a
 * live playlist by ffmpeg, analysed in short windows by the same analyzers as files, their segments
 * and frames written to the stream's own `videos` row (so search, answers and citations see them at
 * once), standing questions (alerts) checked on every window.
 *
 * Crash safety: a frame's JPEG is written on arrival; its `frames` row, its segments, the stream's
 * counters and any alert event are written in one transaction after its window is analysed. A
 * restart takes the JPEGs without a row as still to analyse, so nothing is analysed twice.
 */
import { mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { and, asc, desc, eq, gte, inArray, isNotNull, isNull, lt, lte, or, sql } from 'drizzle-orm';
import { loadSharp } from '../analysis/assets/sharp';
import type { Analyzer, NewSegment, StageContext } from '../analysis/contracts';
import { EngineUnavailableError } from '../analysis/contracts';
import { FrameStream, type SampledFrame } from '../analysis/frame-stream';
import type { Config } from '../config';
import { ApiError, badRequest, conflict, insufficientStorage, notFound, tooManyRequests } from '../errors';
import { newVideoId, randomId } from '../ids';
import type { IndexService } from '../indexes/service';
import type { Logger } from '../log';
import { cosine, descriptorOf, JOIN_SIMILARITY } from '../people/group';
import { writeTx, type Db } from '../storage/db';
import type { DataDir } from '../storage/files';
import {
  ALERT_KINDS,
  frames,
  liveAlertEvents,
  liveAlerts,
  liveStreams,
  people,
  personAppearances,
  segments,
  videos,
  webhookEvents,
  type AlertKind,
  type LiveAlert,
  type LiveState,
  type LiveStream,
  type User,
} from '../storage/schema';
import { AlertHub, matchAlert, type FiredAlert } from './alerts';
import { type LiveClip, liveClip, pruneClips } from './clips';
import { checkStreamUrl, defaultStreamName, isMjpegSource, PCM_BYTES_PER_SEC, PulledSource, redactUrl } from './source';
import { guardConnection } from './egress';

/** States in which a stream counts against the user's caps. */
const RUNNING: LiveState[] = ['connecting', 'live', 'reconnecting', 'paused'];
/** A frame waits this long after it arrived, so that frames sent out of order join its window. */
const REORDER_MS = 1200;
/** Seconds of frames a stream may have waiting before the oldest are dropped (counted). */
const BACKLOG_SEC = 30;
/** Frames of one stream analysed together (one window). */
const WINDOW_FRAMES = 8;
/** Reconnect delays of a pulled source: doubling from 1 s up to 30 s. */
const BACKOFF_MS = 1000;
const BACKOFF_CAP_MS = 30_000;
/**
 * A pushed frame's time lies within this window around the server's clock: a frame time sets the
 * stream's clock (its first frame is stream time 0), so one far off would put every later frame,
 * the "last 10 minutes" and the retention purge out of place.
 */
const FRAME_MAX_AGE_SEC = 24 * 3600;
const FRAME_MAX_AHEAD_SEC = 5 * 60;
/** Decoded pushed frames are at most this many lines high (like the pulled ones). */
const MAX_FRAME_HEIGHT = 720;

interface PendingFrame {
  t: number;
  file: string;
  arrivedAt: number;
  bytes: number;
}

interface StreamRun {
  id: string;
  videoId: string;
  userId: string;
  indexId: string;
  fps: number;
  pending: PendingFrame[];
  /** Frame slots (floor(t·fps)) taken, so that a stream never analyses more than its rate. */
  slots: Set<number>;
  /** The largest pending queue before the oldest frames are dropped. */
  maxPending: number;
  source: PulledSource | null;
  /** Sound heard and not yet analysed (pulled sources with audio, when speech is analysed). */
  audio: { atMs: number; pcm: Buffer }[];
  /** Unix ms up to which the sound was analysed (the next window's audio starts there). */
  heardUntilMs: number;
  /** The source has no sound track: connected without asking for one. */
  noAudio: boolean;
  /** Bytes of the stream's kept frames (JPEGs), counted as they come and go; null: not measured yet. */
  frameBytes: number | null;
  /** Sizes of the recording's segment files, by name (the newest, still growing, measured again). */
  recording: Map<string, number>;
  /** RTSP transport of the next connection: TCP first; a server that gives nothing over TCP is tried with ffmpeg's UDP-then-TCP. */
  rtspTransport: 'tcp' | 'auto';
  backoffMs: number;
  retry: ReturnType<typeof setTimeout> | null;
  /** Unix ms of stream time 0. */
  originMs: number | null;
  width: number;
  height: number;
  stopped: boolean;
}

export interface StreamView {
  stream_id: string;
  file_id: string;
  index_id: string;
  name: string;
  /** push, or the source URL's scheme and host (redactUrl). */
  source: string;
  status: LiveState;
  reason?: string;
  went_live_at?: string;
  fps: number;
  retention_sec: number;
  frames_analysed: number;
  seconds_analysed: number;
  frames_dropped: number;
  /** Seconds since the stream started of the newest analysed frame. */
  latest_time?: number;
  created_at: string;
}

export interface AlertView {
  alert_id: string;
  index_id: string;
  stream_id: string | null;
  kind: AlertKind;
  query: string;
  count: number;
  colour: string | null;
  person: string | null;
  cooldown_sec: number;
  created_at: string;
}

export interface LiveDeps {
  db: Db;
  config: Config;
  files: DataDir;
  indexes: IndexService;
  log: Logger;
  ffmpeg: () => Promise<string>;
  /** The frame-reading analyzers (objects, OCR, captions…), created on the first window. */
  analyzers: () => Promise<Analyzer[]>;
  /** A stream's segments changed: drop cached listings and retrieval data. */
  onChanged: (videoId: string) => void;
}

/** Seconds of unanalysed sound kept per stream (like the frames' backlog). */
const AUDIO_KEEP_SEC = BACKLOG_SEC + 10;
/** A window's sound shorter than this is left for the next window. */
const MIN_AUDIO_SEC = 0.5;

export class LiveService {
  readonly hub = new AlertHub();
  private readonly runs = new Map<string, StreamRun>();
  private analyzers: Promise<Analyzer[]> | null = null;
  private pumping = false;
  private timer: ReturnType<typeof setInterval> | null = null;
  private cursor = 0;
  private closed = false;

  constructor(private readonly d: LiveDeps) {}

  /** Resumes the streams that were running when the server stopped. */
  start(): void {
    this.hideOldSourcePaths();
    const rows = this.d.db
      .select()
      .from(liveStreams)
      .where(inArray(liveStreams.state, ['connecting', 'live', 'reconnecting']))
      .all();
    for (const row of rows) {
      const run = this.runOf(row);
      this.requeueUnanalysed(run);
      if (row.url) {
        this.setState(row.id, 'reconnecting', 'the server restarted');
        this.connect(run);
      }
    }
    if (rows.length) this.d.log.info('live streams resumed', { streams: rows.length });
    this.timer = setInterval(() => void this.pump(), 500);
    this.timer.unref?.();
  }

  /**
   * Streams added before names and shown sources left the URL's path out (it can hold an RTMP
   * stream key or a camera password): their default names and their resources' source are
   * rewritten once, at start-up. A name the user gave is kept.
   */
  private hideOldSourcePaths(): void {
    const rows = this.d.db
      .select({ id: liveStreams.id, videoId: liveStreams.videoId, url: liveStreams.url, name: liveStreams.name })
      .from(liveStreams)
      .where(isNotNull(liveStreams.url))
      .all();
    writeTx(this.d.db, (tx) => {
      for (const r of rows) {
        const shown = redactUrl(r.url!);
        let path = '';
        try {
          path = new URL(r.url!).pathname;
        } catch {
          /* kept as it is */
        }
        const oldDefault = path.length > 1 && r.name.includes('://') && r.name.includes(path);
        if (oldDefault) {
          const name = defaultStreamName(r.url!);
          tx.update(liveStreams).set({ name }).where(eq(liveStreams.id, r.id)).run();
          tx.update(videos).set({ fileName: name }).where(eq(videos.id, r.videoId)).run();
        }
        tx.update(videos)
          .set({ sourceUrl: shown })
          .where(and(eq(videos.id, r.videoId), sql`${videos.sourceUrl} != ${shown}`))
          .run();
      }
    });
  }

  stop(): void {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    for (const run of this.runs.values()) this.halt(run);
    this.runs.clear();
  }

  // --- streams

  async addStream(
    user: User,
    body: { index: string; url?: string; name?: string; fps?: number; retention?: number },
  ): Promise<{ status: 'success'; stream_id: string } | { error: string }> {
    const found = this.d.indexes.forStreaming(user, body.index);
    if ('error' in found) return { error: found.error };
    const { config } = this.d;
    const fps = body.fps ?? config.liveFps;
    if (!(fps > 0 && fps <= 30)) throw badRequest('fps must be a number above 0 and at most 30');
    // Refused early (no DNS lookup for a user at a cap); counted again, authoritatively, in the insert below.
    this.refuseOverCaps(this.d.db, user.id, fps);
    this.refuseOverQuota(user.id);
    const retention = body.retention ?? config.liveRetentionSec;
    if (!(Number.isInteger(retention) && retention >= 60 && retention <= 365 * 86400))
      throw badRequest('retention must be a whole number of seconds from 60 to 31536000');
    let source: string | null = null;
    if (body.url !== undefined) {
      const { url } = await checkStreamUrl(body.url, config.allowPrivateUrls);
      source = url.toString();
    }
    const name = (body.name ?? '').trim() || (source ? defaultStreamName(source) : 'live stream');
    if (name.length > 200) throw badRequest('name must be at most 200 characters');
    const id = `ls_${randomId(40)}`;
    const videoId = newVideoId();
    const now = new Date();
    const dir = this.d.files.videoDir(videoId);
    mkdirSync(join(dir, 'frames'), { recursive: true, mode: 0o700 });
    mkdirSync(join(dir, 'live'), { recursive: true, mode: 0o700 });
    try {
      writeTx(this.d.db, (tx) => {
        // Counted and inserted in one write transaction: parallel requests cannot all pass the caps.
        this.refuseOverCaps(tx, user.id, fps);
        tx.insert(videos)
          .values({
            id: videoId,
            indexId: found.index.id,
            userId: user.id,
            sourceUrl: source ? redactUrl(source) : 'live:push',
            fileName: name,
            fileType: 'video/x-live',
            storagePath: `media/${videoId}/live`,
            durationSec: 0,
            fps,
            hasAudio: false,
            status: 'ready',
            stage: 'live',
            progress: 100,
            uploadedAt: now,
            updatedAt: now,
          })
          .run();
        tx.insert(liveStreams)
          .values({
            id,
            videoId,
            indexId: found.index.id,
            userId: user.id,
            url: source,
            name,
            fps,
            retentionSec: retention,
            state: 'connecting',
            createdAt: now,
            updatedAt: now,
          })
          .run();
      });
    } catch (e) {
      rmSync(dir, { recursive: true, force: true });
      throw e;
    }
    this.d.onChanged(videoId);
    const row = this.row(id)!;
    const run = this.runOf(row);
    if (source) this.connect(run);
    this.d.log.info('live stream added', { stream_id: id, source: source ? redactUrl(source) : 'push', fps });
    return { status: 'success', stream_id: id };
  }

  /**
   * A pushed frame. `user` is null when the caller sent no token (the hosted SDK's way: the stream
   * id is the credential); with a token, the stream must be the token's.
   */
  async pushFrame(
    user: User | null,
    body: { base64_image: string; stream_id: string; time?: number },
  ): Promise<{ success: true } | { success: false; action: 'paused' | 'stopped' }> {
    const row = this.row(body.stream_id);
    if (!row || (user && row.userId !== user.id)) throw notFound('no such stream (stream_id)');
    if (row.state === 'paused') return { success: false, action: 'paused' };
    if (row.state === 'stopped' || row.state === 'failed') return { success: false, action: 'stopped' };
    if (row.url) throw conflict('this stream pulls its frames from its url; frames cannot be pushed to it');
    const nowSec = Date.now() / 1000;
    const time = body.time ?? nowSec;
    if (
      typeof time !== 'number' ||
      !Number.isFinite(time) ||
      time < nowSec - FRAME_MAX_AGE_SEC ||
      time > nowSec + FRAME_MAX_AHEAD_SEC
    )
      throw badRequest(
        `time must be the Unix time of the frame in seconds, at most ${FRAME_MAX_AGE_SEC / 3600} hours before the server's clock and ${FRAME_MAX_AHEAD_SEC / 60} minutes after it`,
      );
    const bytes = Buffer.from(body.base64_image, 'base64');
    if (bytes.length < 8) throw badRequest('base64_image must be a PNG or JPEG image encoded as base64');
    let jpeg: Buffer;
    let info: { width: number; height: number };
    try {
      // Loaded on first use: in the executable libvips must be extracted first.
      const sharp = await loadSharp(this.d.files.assetsDir);
      const out = await sharp(bytes, { limitInputPixels: 40_000_000 })
        .resize({ height: MAX_FRAME_HEIGHT, withoutEnlargement: true })
        .jpeg({ quality: 80 })
        .toBuffer({ resolveWithObject: true });
      jpeg = out.data;
      info = out.info;
    } catch {
      throw badRequest('base64_image is not a readable image (send a PNG or JPEG encoded as base64)');
    }
    const run = this.runs.get(row.id) ?? this.runOf(row);
    this.accept(run, jpeg, Math.round(time * 1000), info);
    return { success: true };
  }

  /** pause | resume | stop a stream of the user. */
  control(user: User, streamId: string, action: 'pause' | 'resume' | 'stop'): StreamView {
    const row = this.row(streamId);
    if (!row || row.userId !== user.id) throw notFound('no such stream (stream_id)');
    if (row.state === 'stopped' && action !== 'stop')
      throw conflict('the stream is stopped; add a new stream with POST /add-stream');
    const run = this.runs.get(row.id) ?? this.runOf(row);
    if (action === 'pause') {
      this.halt(run, false);
      this.setState(row.id, 'paused', null);
    } else if (action === 'stop') {
      this.halt(run);
      this.runs.delete(row.id);
      // What it keeps until the retention purge counts in the quota.
      this.d.db
        .update(videos)
        .set({ sizeBytes: this.measure(run) })
        .where(eq(videos.id, run.videoId))
        .run();
      this.setState(row.id, 'stopped', null);
    } else if (row.state === 'paused' || row.state === 'failed') {
      // A failed stream does not count as running: resuming it must fit the caps again.
      if (row.state === 'failed') this.refuseOverCaps(this.d.db, user.id, row.fps, row.id);
      this.refuseOverQuota(user.id);
      this.setState(row.id, row.url ? 'connecting' : 'live', null);
      run.stopped = false;
      if (row.url) this.connect(run);
    }
    return this.viewOf(this.row(row.id)!);
  }

  /**
   * 429 when one more stream of `fps` would pass a user's caps: running streams, their analysed
   * frames per second together, and all streams kept (stopped and failed ones hold their rows,
   * frames and recordings until their resources are removed, so they count too). `except`: a
   * stream being resumed, counted as not running.
   */
  private refuseOverCaps(db: Db, userId: string, fps: number, except?: string): void {
    const { config } = this.d;
    const mine = db
      .select({ id: liveStreams.id, fps: liveStreams.fps, state: liveStreams.state })
      .from(liveStreams)
      .where(eq(liveStreams.userId, userId))
      .all();
    if (except === undefined && mine.length >= config.liveMaxKeptStreamsPerUser)
      throw tooManyRequests(
        `at most ${config.liveMaxKeptStreamsPerUser} live streams per user are kept, stopped ones included (--live-max-kept-streams-per-user); remove a stopped stream's resource first (POST /remove-from-index)`,
      );
    const running = mine.filter((r) => r.id !== except && RUNNING.includes(r.state));
    if (running.length >= config.liveMaxStreamsPerUser)
      throw tooManyRequests(
        `at most ${config.liveMaxStreamsPerUser} live streams per user run at once (--live-max-streams-per-user); stop one first (POST /streams/{stream_id}/stop)`,
      );
    const used = running.reduce((n, r) => n + r.fps, 0);
    if (used + fps > config.liveMaxFpsPerUser + 1e-9)
      throw tooManyRequests(
        `the live streams of a user analyse at most ${config.liveMaxFpsPerUser} frames per second together (${used} in use); ask for a lower fps`,
      );
  }

  /** 507 when the user's videos and recordings already fill their storage quota. */
  private refuseOverQuota(userId: string): void {
    const quota = this.d.config.userMaxStorageBytes;
    const used = quota ? this.usedBytes(userId) : 0;
    if (quota && used >= quota)
      throw insufficientStorage(
        `your videos and live recordings take ${used} bytes, the per-user storage limit of ${quota} bytes (--user-max-storage-bytes, VIDQ_USER_MAX_STORAGE_BYTES); remove videos, or ask the operator to raise it`,
      );
  }

  list(user: User, indexId?: string): StreamView[] {
    return this.d.db
      .select()
      .from(liveStreams)
      .where(
        indexId
          ? and(eq(liveStreams.userId, user.id), eq(liveStreams.indexId, indexId))
          : eq(liveStreams.userId, user.id),
      )
      .orderBy(asc(liveStreams.createdAt))
      .all()
      .map((r) => this.viewOf(r));
  }

  /** The live part of each stream resource of an index, by file_id. */
  viewsByVideo(indexId: string): Map<string, StreamView> {
    const rows = this.d.db.select().from(liveStreams).where(eq(liveStreams.indexId, indexId)).all();
    return new Map(rows.map((r) => [r.videoId, this.viewOf(r)]));
  }

  get(user: User, streamId: string): StreamView {
    const row = this.row(streamId);
    if (!row || row.userId !== user.id) throw notFound('no such stream (stream_id)');
    return this.viewOf(row);
  }

  /**
   * Stream seconds ↔ Unix time of a live video, for answers about "the last 10 minutes" or "now":
   * null for a video that is not a live stream.
   */
  clockOf(videoId: string): { originMs: number; latestT: number; state: LiveState } | null {
    const row = this.d.db.select().from(liveStreams).where(eq(liveStreams.videoId, videoId)).get();
    if (!row || row.originMs === null) return null;
    const v = this.d.db.select({ d: videos.durationSec }).from(videos).where(eq(videos.id, videoId)).get();
    return { originMs: row.originMs, latestT: v?.d ?? 0, state: row.state };
  }

  /**
   * The stream-time window [from, to] of the last `seconds` of a live video (for "what happened in
   * the last 10 minutes"), or null for a video that is not live.
   */
  lastWindow(videoId: string, seconds: number, nowMs = Date.now()): { from: number; to: number } | null {
    const c = this.clockOf(videoId);
    if (!c) return null;
    const to = (nowMs - c.originMs) / 1000;
    return { from: Math.max(0, to - seconds), to };
  }

  // --- alerts

  createAlert(
    user: User,
    body: {
      index: string;
      stream_id?: string;
      kind: string;
      query: string;
      count?: number;
      colour?: string;
      person?: string;
      cooldown_sec?: number;
    },
  ): AlertView {
    const index = this.d.indexes.resolve(user, body.index, { byName: true });
    if (!(ALERT_KINDS as readonly string[]).includes(body.kind))
      throw badRequest(`kind must be one of ${ALERT_KINDS.join(', ')}`);
    const query = (body.query ?? '').trim();
    if (!query || query.length > 300) throw badRequest('query must be 1 to 300 characters');
    if (body.stream_id !== undefined) {
      const s = this.row(body.stream_id);
      if (!s || s.userId !== user.id || s.indexId !== index.id)
        throw notFound('no such stream in this index (stream_id)');
    }
    const count = body.count ?? 1;
    if (!(Number.isInteger(count) && count >= 1 && count <= 1000))
      throw badRequest('count must be a whole number from 1');
    const cooldown = body.cooldown_sec ?? 30;
    if (!(Number.isInteger(cooldown) && cooldown >= 0 && cooldown <= 86400))
      throw badRequest('cooldown_sec must be a whole number of seconds from 0 to 86400');
    const row: LiveAlert = {
      id: `al_${randomId(24)}`,
      userId: user.id,
      indexId: index.id,
      streamId: body.stream_id ?? null,
      kind: body.kind as AlertKind,
      query,
      minCount: count,
      colour: body.colour?.trim() || null,
      person: body.person?.trim() || null,
      cooldownSec: cooldown,
      createdAt: new Date(),
    };
    this.d.db.insert(liveAlerts).values(row).run();
    return alertView(row);
  }

  listAlerts(user: User, indexId?: string): AlertView[] {
    return this.d.db
      .select()
      .from(liveAlerts)
      .where(
        indexId ? and(eq(liveAlerts.userId, user.id), eq(liveAlerts.indexId, indexId)) : eq(liveAlerts.userId, user.id),
      )
      .orderBy(asc(liveAlerts.createdAt))
      .all()
      .map(alertView);
  }

  deleteAlert(user: User, alertId: string): void {
    const r = this.d.db
      .delete(liveAlerts)
      .where(and(eq(liveAlerts.id, alertId), eq(liveAlerts.userId, user.id)))
      .returning({ id: liveAlerts.id })
      .all();
    if (!r.length) throw notFound('no such alert (alert_id)');
  }

  /** Fired alerts of the user (newest first), optionally of one alert. */
  firedAlerts(user: User, alertId?: string, limit = 100): FiredAlert[] {
    const rows = this.d.db
      .select({ e: liveAlertEvents, a: liveAlerts, s: liveStreams })
      .from(liveAlertEvents)
      .innerJoin(liveAlerts, eq(liveAlerts.id, liveAlertEvents.alertId))
      .innerJoin(liveStreams, eq(liveStreams.id, liveAlertEvents.streamId))
      .where(alertId ? and(eq(liveAlerts.userId, user.id), eq(liveAlerts.id, alertId)) : eq(liveAlerts.userId, user.id))
      .orderBy(desc(liveAlertEvents.id))
      .limit(limit)
      .all();
    return rows.map(({ e, a, s }) => firedOf(e.id, a, s, e.t, e.evidence, e.frame));
  }

  /** A playable MP4 of stream seconds [start, end] of a live video (see clips.ts); null when nothing kept covers them. */
  async clip(videoId: string, originMs: number, start: number, end: number): Promise<LiveClip | null> {
    return liveClip({ ffmpeg: await this.d.ffmpeg(), dir: this.d.files.videoDir(videoId), originMs, start, end });
  }

  // --- retention

  /** Drops what is older than each stream's retention: recording segments, frames, segments, alert events. */
  purge(nowMs = Date.now()): { streams: number; files: number } {
    let removed = 0;
    const rows = this.d.db.select().from(liveStreams).all();
    for (const row of rows) {
      // Clips made for citations are kept an hour (they are made again on demand).
      pruneClips(this.d.files.videoDir(row.videoId), nowMs);
      if (row.originMs === null) continue;
      const cutT = (nowMs - row.originMs) / 1000 - row.retentionSec;
      if (cutT <= 0) continue;
      const dir = this.d.files.videoDir(row.videoId);
      const old = writeTx(this.d.db, (tx) => {
        const gone = tx
          .delete(frames)
          .where(and(eq(frames.videoId, row.videoId), lt(frames.t, cutT)))
          .returning({ file: frames.file })
          .all();
        tx.delete(segments)
          .where(and(eq(segments.videoId, row.videoId), lt(segments.end, cutT)))
          .run();
        tx.delete(liveAlertEvents)
          .where(and(eq(liveAlertEvents.streamId, row.id), lt(liveAlertEvents.lastT, cutT)))
          .run();
        return gone;
      });
      for (const f of old) {
        rmSync(join(dir, 'frames', f.file), { force: true });
        removed++;
      }
      const cutUnix = Math.floor(nowMs / 1000) - row.retentionSec;
      let recordings = 0;
      for (const name of safeList(join(dir, 'live'))) {
        const m = /^(\d+)\.mkv$/.exec(name);
        if (m && Number(m[1]) < cutUnix) {
          rmSync(join(dir, 'live', name), { force: true });
          recordings++;
        }
      }
      removed += recordings;
      if (old.length || recordings) {
        // What is left counts in the quota (measured again in full: the purge is rare).
        const run = this.runs.get(row.id);
        if (run) run.frameBytes = null;
        const fdir = join(dir, 'frames');
        const bytes =
          safeList(fdir).reduce((n, f) => n + fileSize(join(fdir, f)), 0) + this.recordingBytes(row.videoId);
        this.d.db.update(videos).set({ sizeBytes: bytes }).where(eq(videos.id, row.videoId)).run();
      }
      if (old.length) this.d.onChanged(row.videoId);
    }
    return { streams: rows.length, files: removed };
  }

  /** Bytes of recording kept for a stream (for the benchmark and the listing). */
  recordingBytes(videoId: string): number {
    const dir = join(this.d.files.videoDir(videoId), 'live');
    return safeList(dir).reduce((s, n) => s + statSync(join(dir, n)).size, 0);
  }

  // --- internals

  private row(id: string): LiveStream | undefined {
    if (typeof id !== 'string' || id.length > 100) return undefined;
    return this.d.db.select().from(liveStreams).where(eq(liveStreams.id, id)).get();
  }

  private runOf(row: LiveStream): StreamRun {
    const existing = this.runs.get(row.id);
    if (existing) return existing;
    const run: StreamRun = {
      id: row.id,
      videoId: row.videoId,
      userId: row.userId,
      indexId: row.indexId,
      fps: row.fps,
      pending: [],
      slots: new Set(),
      maxPending: Math.max(10, Math.ceil(row.fps * BACKLOG_SEC)),
      source: null,
      frameBytes: null,
      recording: new Map(),
      audio: [],
      heardUntilMs: 0,
      noAudio: false,
      rtspTransport: 'tcp',
      backoffMs: BACKOFF_MS,
      retry: null,
      originMs: row.originMs,
      width: 0,
      height: 0,
      stopped: false,
    };
    this.runs.set(row.id, run);
    return run;
  }

  /** JPEGs written before a restart whose window was never stored: analysed now. */
  private requeueUnanalysed(run: StreamRun): void {
    const dir = join(this.d.files.videoDir(run.videoId), 'frames');
    const known = new Set(
      this.d.db
        .select({ file: frames.file })
        .from(frames)
        .where(eq(frames.videoId, run.videoId))
        .all()
        .map((r) => r.file),
    );
    for (const name of safeList(dir)) {
      const m = /^(\d+)\.jpg$/.exec(name);
      if (!m) continue;
      if (known.has(name)) continue;
      const t = Number(m[1]) / 1000;
      run.slots.add(Math.floor(t * run.fps));
      run.pending.push({ t, file: name, arrivedAt: 0, bytes: fileSize(join(dir, name)) });
    }
  }

  /** Takes a frame into the stream's queue (dropping the oldest when the stream falls behind). */
  private accept(run: StreamRun, jpeg: Buffer, atMs: number, size: { width: number; height: number }): void {
    const row = this.row(run.id);
    if (!row) {
      // The stream's resource (or its index) was removed: its source stops here.
      this.halt(run);
      this.runs.delete(run.id);
      return;
    }
    if (run.originMs === null) {
      // The first frame sets stream time 0 (kept if another request set it first).
      this.d.db
        .update(liveStreams)
        .set({ originMs: atMs })
        .where(and(eq(liveStreams.id, run.id), isNull(liveStreams.originMs)))
        .run();
      run.originMs = this.row(run.id)?.originMs ?? atMs;
    }
    const tMs = atMs - run.originMs;
    const slot = Math.floor((tMs / 1000) * run.fps);
    // Earlier than the first frame, or a second frame for a slot: more than the stream's rate.
    if (tMs < 0 || run.slots.has(slot)) {
      this.countDropped(run, 1);
      return;
    }
    run.slots.add(slot);
    run.width = size.width;
    run.height = size.height;
    const file = `${String(tMs).padStart(12, '0')}.jpg`;
    writeFileSync(join(this.d.files.videoDir(run.videoId), 'frames', file), jpeg, { mode: 0o600 });
    run.pending.push({ t: tMs / 1000, file, arrivedAt: Date.now(), bytes: jpeg.length });
    if (run.frameBytes !== null) run.frameBytes += jpeg.length;
    if (run.pending.length > run.maxPending) {
      // Falling behind: the oldest waiting frames go (counted), the stream stays current.
      run.pending.sort((a, b) => a.t - b.t);
      const drop = run.pending.splice(0, run.pending.length - run.maxPending);
      for (const f of drop) this.removeFrame(run, f);
      this.countDropped(run, drop.length);
    }
    if (row.state === 'connecting' || row.state === 'reconnecting') {
      this.d.db
        .update(liveStreams)
        .set({ state: 'live', reason: null, wentLiveAt: row.wentLiveAt ?? new Date(), updatedAt: new Date() })
        .where(eq(liveStreams.id, run.id))
        .run();
      this.d.onChanged(run.videoId);
    }
  }

  private countDropped(run: StreamRun, n: number): void {
    this.d.db
      .update(liveStreams)
      .set({ framesDropped: sql`${liveStreams.framesDropped} + ${n}` })
      .where(eq(liveStreams.id, run.id))
      .run();
  }

  private setState(id: string, state: LiveState, reason: string | null): void {
    const r = this.d.db
      .update(liveStreams)
      .set({ state, reason, updatedAt: new Date() })
      .where(eq(liveStreams.id, id))
      .returning({ videoId: liveStreams.videoId })
      .get();
    if (r) this.d.onChanged(r.videoId);
  }

  /** Stops a run's source and retries; `drop` also forgets its waiting frames. */
  private halt(run: StreamRun, drop = true): void {
    run.stopped = true;
    if (run.retry) clearTimeout(run.retry);
    run.retry = null;
    run.source?.stop();
    run.source = null;
    if (drop) {
      // Frames that will never be analysed: their JPEGs go too (a restart would take them as waiting).
      for (const f of run.pending) this.removeFrame(run, f);
      run.pending = [];
    }
  }

  /** (Re)connects a pulled source, checking its host again (DNS pinning per connection). */
  private connect(run: StreamRun): void {
    if (this.closed) return;
    run.stopped = false;
    void (async () => {
      const row = this.row(run.id);
      if (!row?.url || !RUNNING.includes(row.state) || row.state === 'paused') return;
      let url: URL;
      let address: string;
      try {
        ({ url, address } = await checkStreamUrl(row.url, this.d.config.allowPrivateUrls));
      } catch (e) {
        if (e instanceof ApiError && e.status === 403) {
          this.setState(run.id, 'failed', e.message);
          return;
        }
        this.scheduleReconnect(run, (e as Error).message);
        return;
      }
      if (run.stopped || this.closed) return;
      const isRtsp = url.protocol.startsWith('rtsp');
      const audio = !run.noAudio && (await this.loadAnalyzers()).some((a) => a.info.kind === 'speech');
      const mjpeg = /^https?:$/.test(url.protocol) && (await isMjpegSource(url, address));
      const ffmpeg = await this.d.ffmpeg();
      const egress = await guardConnection(url, address, this.d.config.allowPrivateUrls, (reason) =>
        this.refuseHop(run, source, reason),
      );
      if (run.stopped || this.closed) {
        egress.close();
        return;
      }
      const source: PulledSource = new PulledSource({
        ffmpeg,
        input: egress.input,
        egress,
        protocol: url.protocol,
        ...(isRtsp && { rtspTransport: run.rtspTransport }),
        mjpeg,
        audio,
        fps: run.fps,
        recordDir: join(this.d.files.videoDir(run.videoId), 'live'),
        segmentSec: this.d.config.liveSegmentSec,
        stallSec: this.d.config.liveStallSec,
        onFrame: (jpeg, atMs) => {
          run.backoffMs = BACKOFF_MS;
          try {
            this.accept(run, jpeg, atMs, { width: 0, height: 0 });
          } catch (e) {
            this.d.log.warn('live frame not kept', { stream_id: run.id, reason: (e as Error).message });
          }
        },
        onAudio: (pcm, atMs) => {
          run.audio.push({ atMs, pcm });
          const old = Date.now() - AUDIO_KEEP_SEC * 1000;
          while (run.audio.length && run.audio[0]!.atMs < old) run.audio.shift();
        },
        onEnd: (reason, noAudio) => {
          if (run.source !== source) return;
          run.source = null;
          if (noAudio && !run.noAudio) {
            // A source without a sound track: at once again, frames only.
            run.noAudio = true;
            if (!run.stopped && !this.closed) this.connect(run);
            return;
          }
          // Nothing came over this transport (e.g. a server without TCP interleaving): try the other.
          if (isRtsp && source.frames === 0) run.rtspTransport = run.rtspTransport === 'tcp' ? 'auto' : 'tcp';
          if (run.stopped || this.closed) return;
          this.scheduleReconnect(run, reason);
        },
      });
      run.source = source;
      try {
        source.start();
      } catch (e) {
        run.source = null;
        egress.close();
        this.scheduleReconnect(run, `ffmpeg could not start: ${(e as Error).message}`);
      }
    })();
  }

  /**
   * A request of a running source was refused by its egress proxy (a redirect, playlist or segment
   * naming a refused address): the source stops and the stream fails with the reason, as when its
   * own URL is refused; it is not reconnected into the same refusal.
   */
  private refuseHop(run: StreamRun, source: PulledSource, reason: string): void {
    this.d.log.warn('live source request refused', { stream_id: run.id, reason });
    if (run.source !== source) return;
    this.halt(run, false);
    this.setState(run.id, 'failed', reason);
  }

  private scheduleReconnect(run: StreamRun, reason: string): void {
    const row = this.row(run.id);
    if (!row || row.state === 'paused' || row.state === 'stopped' || row.state === 'failed') return;
    this.setState(run.id, 'reconnecting', reason);
    this.d.log.info('live source lost; reconnecting', { stream_id: run.id, reason, in_ms: run.backoffMs });
    run.retry = setTimeout(() => {
      run.retry = null;
      this.connect(run);
    }, run.backoffMs);
    run.retry.unref?.();
    run.backoffMs = Math.min(BACKOFF_CAP_MS, run.backoffMs * 2);
  }

  /** Analyses the next ready window of each stream in turn, one window at a time. */
  private async pump(): Promise<void> {
    if (this.pumping || this.closed) return;
    this.pumping = true;
    try {
      for (;;) {
        const ready = [...this.runs.values()].filter((r) =>
          r.pending.some((f) => Date.now() - f.arrivedAt >= REORDER_MS),
        );
        if (!ready.length || this.closed) break;
        // Streams take turns: a busy stream never holds up the others for more than one window.
        const run = ready[this.cursor++ % ready.length]!;
        run.pending.sort((a, b) => a.t - b.t);
        const cut = run.pending.findIndex((f) => Date.now() - f.arrivedAt < REORDER_MS);
        const batch = run.pending.splice(0, Math.min(WINDOW_FRAMES, cut < 0 ? run.pending.length : cut));
        try {
          await this.analyseWindow(run, batch);
        } catch (e) {
          this.d.log.warn('live window not analysed', { stream_id: run.id, reason: (e as Error).message });
        }
      }
    } finally {
      this.pumping = false;
    }
  }

  private loadAnalyzers(): Promise<Analyzer[]> {
    this.analyzers ??= this.d.analyzers().catch((e) => {
      this.d.log.warn('live analyzers unavailable', { reason: (e as Error).message });
      return [];
    });
    return this.analyzers;
  }

  private async analyseWindow(run: StreamRun, batch: PendingFrame[]): Promise<void> {
    const dir = this.d.files.videoDir(run.videoId);
    const sampled: SampledFrame[] = batch.map((f) => ({
      t: f.t,
      shot: 0,
      file: f.file,
      path: join(dir, 'frames', f.file),
    }));
    const last = sampled[sampled.length - 1]!;
    const step = 1 / run.fps;
    const analyzers = await this.loadAnalyzers();
    const found: NewSegment[] = [];
    const applies: ((tx: Db) => void)[] = [];
    const ctrl = new AbortController();
    // Each analyzer reads the window like a short video whose shot spans it.
    const shot = {
      id: -1,
      videoId: run.videoId,
      kind: 'shot' as const,
      start: sampled[0]!.t,
      end: last.t + step,
      text: '',
      confidence: null,
      extra: { index: 0 },
      embedding: null,
    };
    // The window's sound (pulled sources with audio): speech reads it like a short file's track.
    const heard = analyzers.some((a) => a.info.kind === 'speech') ? this.takeAudio(run, dir, last.t + step) : null;
    for (const a of analyzers) {
      const speech = a.info.kind === 'speech';
      if (speech && !heard) continue;
      const ctx: StageContext = {
        video: {
          id: run.videoId,
          path: speech ? heard!.path : last.path,
          dir,
          durationSec: speech ? heard!.seconds : last.t + step,
          fps: run.fps,
          width: run.width,
          height: run.height,
          hasAudio: speech,
        },
        ffmpeg: await this.d.ffmpeg(),
        signal: ctrl.signal,
        log: this.d.log.child({ stream_id: run.id }),
        progress: () => {},
        frames: () => sampled,
        segments: (kinds) => (!kinds || kinds.includes('shot') ? [shot] : []),
        frameStream: FrameStream.of(sampled),
      };
      try {
        const r = await a.run(ctx);
        for (const s of r.segments ?? []) if (s.kind !== 'shot') found.push(speech ? shifted(s, heard!.from) : s);
        // The stage's own writes (faces: grouping into the index's people) go in the window's transaction.
        if (r.apply) applies.push(r.apply);
      } catch (e) {
        if (!(e instanceof EngineUnavailableError))
          this.d.log.warn('live analyzer failed on a window', { stage: a.stage, reason: (e as Error).message });
      }
    }
    if (heard) rmSync(heard.path, { force: true });
    const fired: FiredAlert[] = [];
    const alive = writeTx(this.d.db, (tx) => {
      const row = tx.select().from(liveStreams).where(eq(liveStreams.id, run.id)).get();
      if (!row) return false;
      const known = new Set(
        tx
          .select({ file: frames.file })
          .from(frames)
          .where(
            and(
              eq(frames.videoId, run.videoId),
              inArray(
                frames.file,
                sampled.map((f) => f.file),
              ),
            ),
          )
          .all()
          .map((r) => r.file),
      );
      const fresh = sampled.filter((f) => !known.has(f.file));
      if (!fresh.length) return true;
      tx.insert(frames)
        .values(fresh.map((f) => ({ videoId: run.videoId, t: f.t, shot: 0, file: f.file })))
        .run();
      const stored = new Map<NewSegment, number>();
      for (const s of found) stored.set(s, storeSegment(tx, run.videoId, s, step));
      for (const apply of applies) apply(tx);
      tx.update(liveStreams)
        .set({
          framesAnalysed: sql`${liveStreams.framesAnalysed} + ${fresh.length}`,
          secondsAnalysed: sql`${liveStreams.secondsAnalysed} + ${fresh.length * step}`,
          updatedAt: new Date(),
        })
        .where(eq(liveStreams.id, run.id))
        .run();
      tx.update(videos)
        .set({
          durationSec: sql`max(coalesce(${videos.durationSec}, 0), ${last.t + step})`,
          updatedAt: new Date(),
          ...(run.width > 0 && { width: run.width, height: run.height }),
          ...(heard && { hasAudio: true }),
        })
        .where(eq(videos.id, run.videoId))
        .run();
      fired.push(...this.checkAlerts(tx, row, withPeople(tx, found, stored), sampled));
      return true;
    });
    if (!alive) {
      // The stream (or its video or index) was removed meanwhile.
      this.halt(run);
      this.runs.delete(run.id);
      return;
    }
    this.d.onChanged(run.videoId);
    for (const f of fired) this.hub.publish(run.userId, f);
    this.checkQuota(run);
  }

  private removeFrame(run: StreamRun, f: PendingFrame): void {
    rmSync(join(this.d.files.videoDir(run.videoId), 'frames', f.file), { force: true });
    if (run.frameBytes !== null) run.frameBytes = Math.max(0, run.frameBytes - f.bytes);
  }

  /**
   * The stream's kept bytes (frames and recording) become its resource's size, so they count in
   * the owner's storage quota like uploaded files; a user over the quota has the stream paused,
   * with the reason, until the retention purge or removed videos make room.
   */
  private checkQuota(run: StreamRun): void {
    const bytes = this.measure(run);
    this.d.db.update(videos).set({ sizeBytes: bytes }).where(eq(videos.id, run.videoId)).run();
    const quota = this.d.config.userMaxStorageBytes;
    if (!quota) return;
    const used = this.usedBytes(run.userId);
    if (used <= quota) return;
    const row = this.row(run.id);
    if (!row || !RUNNING.includes(row.state) || row.state === 'paused') return;
    // Frames still waiting are not kept: counted as dropped, as when a stream falls behind.
    const waiting = run.pending.length;
    this.halt(run);
    if (waiting) this.countDropped(run, waiting);
    const reason = `storage limit reached: your videos and live recordings take ${used} bytes of ${quota} (--user-max-storage-bytes); remove videos, or resume once the retention purge has made room`;
    this.setState(run.id, 'paused', reason);
    this.d.log.info('live stream paused: storage limit', { stream_id: run.id, used, quota });
  }

  /** Bytes the user's videos take (uploads and live streams; failed ones hold nothing). */
  private usedBytes(userId: string): number {
    return this.d.db
      .select({ bytes: sql<number>`coalesce(sum(${videos.sizeBytes}), 0)` })
      .from(videos)
      .where(and(eq(videos.userId, userId), sql`${videos.status} != 'failed'`))
      .get()!.bytes;
  }

  /** Kept frames (counted as they come, measured once per run) and recording segments (by listing). */
  private measure(run: StreamRun): number {
    const dir = this.d.files.videoDir(run.videoId);
    if (run.frameBytes === null) {
      const fdir = join(dir, 'frames');
      run.frameBytes = safeList(fdir).reduce((n, f) => n + fileSize(join(fdir, f)), 0);
    }
    const ldir = join(dir, 'live');
    const names = safeList(ldir).sort();
    const newest = names[names.length - 1];
    const seen = new Map<string, number>();
    for (const n of names)
      seen.set(n, n !== newest && run.recording.has(n) ? run.recording.get(n)! : fileSize(join(ldir, n)));
    run.recording = seen;
    let rec = 0;
    for (const v of seen.values()) rec += v;
    return run.frameBytes + rec;
  }

  /**
   * The sound not yet analysed up to stream time `toT`, written as a WAV file for the speech stage,
   * or null when less than MIN_AUDIO_SEC has been heard (it waits for the next window).
   */
  private takeAudio(run: StreamRun, dir: string, toT: number): { path: string; from: number; seconds: number } | null {
    if (run.originMs === null || !run.audio.length) return null;
    const first = run.audio[0]!;
    const tail = run.audio[run.audio.length - 1]!;
    const fromMs = Math.max(run.heardUntilMs, first.atMs);
    const toMs = Math.min(run.originMs + toT * 1000, tail.atMs + (tail.pcm.length / PCM_BYTES_PER_SEC) * 1000);
    if (toMs - fromMs < MIN_AUDIO_SEC * 1000) return null;
    const parts: Buffer[] = [];
    for (const c of run.audio) {
      const endMs = c.atMs + (c.pcm.length / PCM_BYTES_PER_SEC) * 1000;
      if (endMs <= fromMs || c.atMs >= toMs) continue;
      const a = Math.max(0, Math.floor(((fromMs - c.atMs) / 1000) * (PCM_BYTES_PER_SEC / 2))) * 2;
      const b = Math.min(c.pcm.length, Math.ceil(((toMs - c.atMs) / 1000) * (PCM_BYTES_PER_SEC / 2)) * 2);
      if (b > a) parts.push(c.pcm.subarray(a, b));
    }
    run.heardUntilMs = toMs;
    run.audio = run.audio.filter((c) => c.atMs + (c.pcm.length / PCM_BYTES_PER_SEC) * 1000 > toMs);
    const pcm = Buffer.concat(parts);
    if (pcm.length < MIN_AUDIO_SEC * PCM_BYTES_PER_SEC) return null;
    const path = join(dir, 'live-window.wav');
    writeFileSync(path, Buffer.concat([wavHeader(pcm.length), pcm]), { mode: 0o600 });
    return { path, from: (fromMs - run.originMs) / 1000, seconds: pcm.length / PCM_BYTES_PER_SEC };
  }

  /** Alerts of the stream's index checked on a window; a match within an alert's cooldown of the last one is the same event. */
  private checkAlerts(tx: Db, row: LiveStream, found: NewSegment[], sampled: SampledFrame[]): FiredAlert[] {
    if (!found.length) return [];
    const alerts = tx
      .select()
      .from(liveAlerts)
      .where(and(eq(liveAlerts.indexId, row.indexId), or(isNull(liveAlerts.streamId), eq(liveAlerts.streamId, row.id))))
      .all();
    const out: FiredAlert[] = [];
    for (const alert of alerts) {
      const m = matchAlert(alert, found);
      if (!m) continue;
      const lastT = Math.max(m.segment.end, m.t);
      const prev = tx
        .select()
        .from(liveAlertEvents)
        .where(and(eq(liveAlertEvents.alertId, alert.id), eq(liveAlertEvents.streamId, row.id)))
        .orderBy(desc(liveAlertEvents.lastT))
        .get();
      if (prev && m.t <= prev.lastT + alert.cooldownSec) {
        if (lastT > prev.lastT) tx.update(liveAlertEvents).set({ lastT }).where(eq(liveAlertEvents.id, prev.id)).run();
        continue;
      }
      const frame = nearestFrame(sampled, Number(m.segment.extra?.best_t ?? m.t));
      const ins = tx
        .insert(liveAlertEvents)
        .values({
          alertId: alert.id,
          streamId: row.id,
          t: m.t,
          lastT,
          frame,
          evidence: m.evidence,
          createdAt: new Date(),
        })
        .onConflictDoNothing()
        .returning({ id: liveAlertEvents.id })
        .get();
      if (!ins) continue;
      const fired = firedOf(ins.id, alert, row, m.t, m.evidence, frame);
      out.push(fired);
      // The signed webhook outbox (when the index or the server has a webhook URL).
      const url = tx.get<{ url: string | null }>(
        sql`SELECT COALESCE((SELECT url FROM index_webhooks WHERE index_id = ${row.indexId}), (SELECT default_url FROM webhook_settings WHERE id = 1)) AS url`,
      );
      if (url?.url) {
        const now = new Date();
        tx.insert(webhookEvents)
          .values({
            userId: row.userId,
            indexId: row.indexId,
            videoId: row.videoId,
            event: 'alert.fired',
            fileName: row.name,
            status: 'fired',
            url: url.url,
            createdAt: now,
            nextAttemptAt: now,
            data: JSON.stringify(fired),
          })
          .run();
      }
    }
    return out;
  }

  private viewOf(r: LiveStream): StreamView {
    const latest = this.d.db
      .select({ t: frames.t })
      .from(frames)
      .where(eq(frames.videoId, r.videoId))
      .orderBy(desc(frames.t))
      .limit(1)
      .get();
    return {
      stream_id: r.id,
      file_id: r.videoId,
      index_id: r.indexId,
      name: r.name,
      source: r.url ? redactUrl(r.url) : 'push',
      status: r.state,
      ...(r.reason && { reason: r.reason }),
      ...(r.wentLiveAt && { went_live_at: r.wentLiveAt.toISOString() }),
      fps: r.fps,
      retention_sec: r.retentionSec,
      frames_analysed: r.framesAnalysed,
      seconds_analysed: Math.round(r.secondsAnalysed * 10) / 10,
      frames_dropped: r.framesDropped,
      ...(latest && { latest_time: latest.t }),
      created_at: r.createdAt.toISOString(),
    };
  }
}

/**
 * A window's segment: extends the same label's (or text's) segment that ended just before it,
 * so that an object seen for minutes is one span, not one per window.
 */
function storeSegment(tx: Db, videoId: string, s: NewSegment, step: number): number {
  const gap = step * 1.5 + 0.5;
  if (s.kind === 'face') return storeFace(tx, videoId, s, gap);
  // Two sentences are two transcripts, even when they read the same.
  const prev =
    s.kind === 'transcript'
      ? undefined
      : tx
          .select({ id: segments.id, end: segments.end, extra: segments.extra })
          .from(segments)
          .where(
            and(
              eq(segments.videoId, videoId),
              eq(segments.kind, s.kind),
              eq(segments.text, s.text),
              gte(segments.end, s.start - gap),
              lte(segments.start, s.start),
            ),
          )
          .orderBy(desc(segments.end))
          .get();
  if (prev) {
    const maxCount = Math.max(Number(prev.extra?.max_count ?? 0), Number(s.extra?.max_count ?? 0));
    tx.update(segments)
      .set({
        end: Math.max(prev.end, s.end),
        ...(prev.extra && maxCount > 0 && { extra: { ...prev.extra, max_count: maxCount } }),
      })
      .where(eq(segments.id, prev.id))
      .run();
    return prev.id;
  }
  return insertSegment(tx, videoId, s);
}

function insertSegment(tx: Db, videoId: string, s: NewSegment): number {
  return tx
    .insert(segments)
    .values({
      videoId,
      kind: s.kind,
      start: s.start,
      end: s.end,
      text: s.text,
      confidence: s.confidence ?? null,
      extra: s.extra ?? null,
    })
    .returning({ id: segments.id })
    .get()!.id;
}

/**
 * A face of a window continues the appearance that ended just before it when their descriptors
 * are as alike as one person's (the people grouping's threshold); otherwise it is a new
 * appearance, grouped into the index's people by the faces stage's own write.
 */
function storeFace(tx: Db, videoId: string, s: NewSegment, gap: number): number {
  const raw = s.extra?.descriptor;
  if (Array.isArray(raw) && raw.length) {
    const near = tx
      .select({ id: segments.id, end: segments.end, descriptor: personAppearances.descriptor })
      .from(segments)
      .innerJoin(personAppearances, eq(personAppearances.segmentId, segments.id))
      .where(
        and(
          eq(segments.videoId, videoId),
          eq(segments.kind, 'face'),
          gte(segments.end, s.start - gap),
          lte(segments.start, s.start),
        ),
      )
      .all();
    let best: (typeof near)[number] | null = null;
    let bestSim = JOIN_SIMILARITY;
    for (const n of near) {
      const sim = cosine(descriptorOf(n.descriptor), raw as number[]);
      if (sim >= bestSim) [best, bestSim] = [n, sim];
    }
    if (best) {
      tx.update(segments)
        .set({ end: Math.max(best.end, s.end) })
        .where(eq(segments.id, best.id))
        .run();
      return best.id;
    }
  }
  return insertSegment(tx, videoId, s);
}

/** The window's faces with the person each was grouped into (for alerts on a named person). */
function withPeople(tx: Db, found: NewSegment[], stored: Map<NewSegment, number>): NewSegment[] {
  const faceIds = found.filter((s) => s.kind === 'face').map((s) => stored.get(s)!);
  if (!faceIds.length) return found;
  const who = new Map(
    tx
      .select({ segmentId: personAppearances.segmentId, personId: people.id, name: people.name })
      .from(personAppearances)
      .innerJoin(people, eq(people.id, personAppearances.personId))
      .where(inArray(personAppearances.segmentId, faceIds))
      .all()
      .map((r) => [r.segmentId, r]),
  );
  return found.map((s) => {
    const p = s.kind === 'face' ? who.get(stored.get(s)!) : undefined;
    if (!p) return s;
    const { descriptor: _, ...extra } = s.extra ?? {};
    return { ...s, extra: { ...extra, person_id: p.personId, ...(p.name && { person_name: p.name }) } };
  });
}

/** A segment of the window's sound moved to stream time (the sound started `from` s into the stream). */
function shifted(s: NewSegment, from: number): NewSegment {
  const r3 = (x: number) => Math.round(x * 1000) / 1000;
  const extra = s.extra ? { ...s.extra } : s.extra;
  for (const k of ['speech_start', 'speech_end'])
    if (extra && typeof extra[k] === 'number') extra[k] = r3((extra[k] as number) + from);
  return { ...s, start: r3(s.start + from), end: r3(s.end + from), ...(extra !== undefined && { extra }) };
}

/** The 44-byte header of a 16 kHz mono 16-bit PCM WAV file of `bytes` bytes of samples. */
function wavHeader(bytes: number): Buffer {
  const h = Buffer.alloc(44);
  h.write('RIFF', 0);
  h.writeUInt32LE(36 + bytes, 4);
  h.write('WAVE', 8);
  h.write('fmt ', 12);
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(16000, 24);
  h.writeUInt32LE(PCM_BYTES_PER_SEC, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36);
  h.writeUInt32LE(bytes, 40);
  return h;
}

function nearestFrame(sampled: SampledFrame[], t: number): string | null {
  let best: SampledFrame | null = null;
  for (const f of sampled) if (!best || Math.abs(f.t - t) < Math.abs(best.t - t)) best = f;
  return best?.file ?? null;
}

function firedOf(
  eventId: number,
  a: LiveAlert,
  s: LiveStream,
  t: number,
  evidence: string,
  frame: string | null,
): FiredAlert {
  return {
    event_id: eventId,
    alert_id: a.id,
    stream_id: s.id,
    index_id: s.indexId,
    file_id: s.videoId,
    kind: a.kind,
    query: a.query,
    time: Math.round(t * 100) / 100,
    at: new Date((s.originMs ?? 0) + t * 1000).toISOString(),
    evidence,
    frame_path: frame ? `/media/${s.videoId}/frames/${frame}` : null,
  };
}

function alertView(a: LiveAlert): AlertView {
  return {
    alert_id: a.id,
    index_id: a.indexId,
    stream_id: a.streamId,
    kind: a.kind,
    query: a.query,
    count: a.minCount,
    colour: a.colour,
    person: a.person,
    cooldown_sec: a.cooldownSec,
    created_at: a.createdAt.toISOString(),
  };
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
