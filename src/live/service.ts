/**
 * Live streams (issue 21): frames pushed by clients (`POST /stream`) or pulled from a camera or a
 * live playlist by ffmpeg, analysed in short windows by the same analyzers as files (in the
 * analysis worker processes), their segments and frames written to the stream's own `videos` row
 * (so search, answers and citations see them at once), standing questions (alerts) checked on
 * every window.
 *
 * This is the orchestration: the stream records, the caps and the storage quota, control, the
 * views, clips and the retention purge. The rooms: sources/ (one module per kind of source),
 * runner.ts (connecting, reordering, the pump), window.ts (a window analysed and stored), audio.ts
 * (the sound and its WAV files), alerts.ts (alert records and their evaluation), clips.ts.
 *
 * Crash safety: a frame's JPEG is written on arrival; its `frames` row, its segments, the stream's
 * counters and any alert event are written in one transaction after its window is analysed. A
 * restart takes the JPEGs without a row as still to analyse, so nothing is analysed twice.
 */
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config';
import { badRequest, conflict, insufficientStorage, notFound, tooManyRequests } from '../errors';
import { newVideoId, randomId } from '../ids';
import type { IndexService } from '../indexes/service';
import type { Logger } from '../log';
import type { Catalog } from '../storage/catalog';
import type { DataDir } from '../storage/files';
import { videoDuration } from '../storage/repositories/analysis';
import {
  allStreams,
  findStream,
  insertStream,
  latestFrameTime,
  lockStreamCaps,
  pulledStreams,
  purgeStreamBefore,
  renameStream,
  setShownSource,
  setVideoSize,
  streamCapsOfUser,
  streamOfVideo,
  streamsInStates,
  streamsOfIndex,
  streamsOfUser,
} from '../storage/repositories/streams';
import { userUsage } from '../storage/repositories/uploads';
import type { LiveState, LiveStream, User } from '../storage/rows';
import { AlertService, type AlertView, type FiredAlert } from './alerts';
import { type LiveClip, liveClip, pruneClips } from './clips';
import { fileSize, RUNNING, safeList, StreamRunner, type StreamRun } from './runner';
import { checkStreamUrl, defaultStreamName, redactUrl } from './source';
import { decodePushedFrame } from './sources/push';
import type { WindowRequest, WindowResult } from './window';

/**
 * A pushed frame's time lies within this window around the server's clock: a frame time sets the
 * stream's clock (its first frame is stream time 0), so one far off would put every later frame,
 * the "last 10 minutes" and the retention purge out of place.
 */
const FRAME_MAX_AGE_SEC = 24 * 3600;
const FRAME_MAX_AHEAD_SEC = 5 * 60;
export type { AlertView } from './alerts';

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

export interface LiveDeps {
  /** The catalog (either dialect): the streams, their frames and the alerts' records. */
  catalog: Catalog;
  config: Config;
  files: DataDir;
  indexes: IndexService;
  log: Logger;
  ffmpeg: () => Promise<string>;
  /** Whether speech is analysed (pulled sources then hand out their sound for the windows). */
  hearsSpeech: boolean;
  /** Analyses a window: in an analysis worker process, or in this one when the server has none. */
  analyseWindow: (w: WindowRequest) => Promise<WindowResult>;
  /** A stream's segments changed: drop cached listings and retrieval data. */
  onChanged: (videoId: string) => void;
  /**
   * Which node runs each stream (issue 33): a lease per stream (src/cluster/heartbeat.ts). Absent:
   * this process runs every stream (tests that build a Service without serving).
   */
  ownership?: StreamOwnership;
}

/** The leases that give one node of a cluster each running stream (the Heartbeat). */
export interface StreamOwnership {
  want(name: string, handlers: { gained?: () => void; lost?: () => void }, now?: boolean): Promise<boolean>;
  unwant(name: string): Promise<void>;
  holds(name: string): boolean;
}

/** The lease of one stream: its holder connects it, analyses its windows and fires its alerts. */
export const streamLease = (streamId: string) => `stream:${streamId}`;
/** The states in which a stream runs somewhere. */
const ACTIVE: LiveState[] = ['connecting', 'live', 'reconnecting'];
/** How often a node looks for streams to want (streams added on other nodes, and taken over). */
const CLAIM_EVERY_MS = 5_000;

export class LiveService {
  readonly alerts: AlertService;
  private readonly runner: StreamRunner;
  /** Streams whose lease this node wants (with ownership). */
  private readonly claimed = new Set<string>();
  private claimTimer: ReturnType<typeof setInterval> | null = null;
  private claiming: Promise<void> | null = null;

  constructor(private readonly d: LiveDeps) {
    this.alerts = new AlertService({ catalog: d.catalog, indexes: d.indexes });
    this.runner = new StreamRunner({
      catalog: d.catalog,
      config: d.config,
      files: d.files,
      log: d.log,
      ffmpeg: d.ffmpeg,
      hearsSpeech: d.hearsSpeech,
      analyse: d.analyseWindow,
      onChanged: d.onChanged,
      onFired: (userId, fired) => this.alerts.hub.publish(userId, fired),
      afterWindow: (run) => this.checkQuota(run),
    });
  }

  get hub() {
    return this.alerts.hub;
  }

  /** Resumes the streams that were running when the server stopped. */
  async start(): Promise<void> {
    await this.hideOldSourcePaths().catch((e) =>
      this.d.log.warn('old live source paths not hidden', { reason: (e as Error).message }),
    );
    if (this.d.ownership) {
      // Each stream runs on the node that holds its lease; the others take it over when it lapses.
      // claimStreams logs its own failures.
      void this.claimStreams();
      this.claimTimer = setInterval(() => void this.claimStreams(), CLAIM_EVERY_MS);
      this.claimTimer.unref?.();
    } else {
      const rows = await streamsInStates(this.d.catalog, ACTIVE);
      for (const row of rows) this.resumeRun(row);
      if (rows.length) this.d.log.info('live streams resumed', { streams: rows.length });
    }
    this.runner.startPump();
  }

  /**
   * Wants the lease of every active stream (the heartbeat takes the free and lapsed ones, and runs
   * `takeOver`), and gives up the leases of streams no longer active (paused, stopped, ended).
   */
  claimStreams(): Promise<void> {
    this.claiming ??= (async () => {
      const active = new Set((await streamsInStates(this.d.catalog, ACTIVE)).map((r) => r.id));
      for (const id of active) if (!this.claimed.has(id)) await this.claim(id);
      for (const id of [...this.claimed])
        if (!active.has(id)) {
          this.claimed.delete(id);
          const run = this.runner.get(id);
          if (run && !run.stopped) this.runner.halt(run, false);
          await this.d.ownership?.unwant(streamLease(id));
        }
    })()
      .catch((e) => this.d.log.warn('live stream leases not claimed', { reason: (e as Error).message }))
      .finally(() => {
        this.claiming = null;
      });
    return this.claiming;
  }

  /** Wants one stream's lease now. False when another node holds it. */
  private claim(id: string): Promise<boolean> {
    const own = this.d.ownership;
    if (!own) return Promise.resolve(true);
    this.claimed.add(id);
    return own.want(
      streamLease(id),
      {
        gained: () => {
          this.takeOver(id).catch((e) =>
            this.d.log.warn('live stream not taken over', { stream_id: id, reason: (e as Error).message }),
          );
        },
        lost: () => {
          const run = this.runner.get(id);
          if (run) this.runner.release(run);
          this.d.log.warn('live stream lease lost; another node runs it', { stream_id: id });
        },
      },
      true,
    );
  }

  /** This node holds the stream's lease: it runs the stream unless it already does. */
  private async takeOver(id: string): Promise<void> {
    const row = await this.row(id);
    if (!row || !ACTIVE.includes(row.state)) return;
    const existing = this.runner.get(id);
    if (existing && !existing.stopped) return;
    this.resumeRun(row);
    this.d.log.info('live stream running on this node', { stream_id: id });
  }

  /** Runs a stream again (its run is made at once; its state written after). */
  private resumeRun(row: LiveStream): void {
    this.runner
      .resume(row)
      .catch((e) => this.d.log.warn('live stream not resumed', { stream_id: row.id, reason: (e as Error).message }));
  }

  /**
   * Streams added before names and shown sources left the URL's path out (it can hold an RTMP
   * stream key or a camera password): their default names and their resources' source are
   * rewritten once, at start-up. A name the user gave is kept.
   */
  private async hideOldSourcePaths(): Promise<void> {
    const rows = await pulledStreams(this.d.catalog);
    if (!rows.length) return;
    await this.d.catalog.write(async (tx) => {
      for (const r of rows) {
        let path = '';
        try {
          path = new URL(r.url).pathname;
        } catch {
          /* kept as it is */
        }
        const oldDefault = path.length > 1 && r.name.includes('://') && r.name.includes(path);
        if (oldDefault) await renameStream(tx, r, defaultStreamName(r.url));
        await setShownSource(tx, r.videoId, redactUrl(r.url));
      }
    });
  }

  stop(): void {
    if (this.claimTimer) clearInterval(this.claimTimer);
    this.runner.stop();
  }

  // --- streams

  async addStream(
    user: User,
    body: { index: string; url?: string; name?: string; fps?: number; retention?: number },
  ): Promise<{ status: 'success'; stream_id: string } | { error: string }> {
    const found = await this.d.indexes.forStreaming(user, body.index);
    if ('error' in found) return { error: found.error };
    const { config } = this.d;
    const fps = body.fps ?? config.liveFps;
    if (!(fps > 0 && fps <= 30)) throw badRequest('fps must be a number above 0 and at most 30');
    // Refused early (no DNS lookup for a user at a cap); counted again, authoritatively, in the insert below.
    await this.refuseOverCaps(this.d.catalog, user.id, fps);
    await this.refuseOverQuota(user.id);
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
    const dir = this.d.files.videoDir(videoId);
    mkdirSync(join(dir, 'frames'), { recursive: true, mode: 0o700 });
    mkdirSync(join(dir, 'live'), { recursive: true, mode: 0o700 });
    try {
      await this.d.catalog.write(async (tx) => {
        // Counted and inserted in one write transaction: parallel requests cannot all pass the caps.
        await lockStreamCaps(tx, user.id);
        await this.refuseOverCaps(tx, user.id, fps);
        await insertStream(tx, {
          id,
          videoId,
          indexId: found.index.id,
          userId: user.id,
          url: source,
          shownSource: source ? redactUrl(source) : 'live:push',
          name,
          fps,
          retentionSec: retention,
          at: new Date(),
        });
      });
    } catch (e) {
      rmSync(dir, { recursive: true, force: true });
      throw e;
    }
    this.d.onChanged(videoId);
    const run = this.runner.runOf((await this.row(id))!);
    if (source) this.runner.connect(run);
    // A new stream's lease is free: this node takes it.
    await this.claim(id);
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
    const row = await this.row(body.stream_id);
    if (!row || (user && row.userId !== user.id)) throw notFound('no such stream (stream_id)');
    if (row.state === 'paused') return { success: false, action: 'paused' };
    if (row.state === 'stopped' || row.state === 'failed' || row.state === 'ended')
      return { success: false, action: 'stopped' };
    if (row.url) throw conflict('this stream pulls its frames from its url; frames cannot be pushed to it');
    const own = this.d.ownership;
    if (own && !own.holds(streamLease(row.id)) && !(await this.claim(row.id)))
      throw conflict(
        'this stream is analysed by another node of the cluster; push its frames to that node (route POST /stream by stream_id)',
      );
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
    const { jpeg, width, height } = await decodePushedFrame(this.d.files.assetsDir, bytes);
    await this.runner.accept(this.runner.runOf(row), jpeg, Math.round(time * 1000), { width, height });
    return { success: true };
  }

  /** pause | resume | stop a stream of the user. */
  async control(user: User, streamId: string, action: 'pause' | 'resume' | 'stop'): Promise<StreamView> {
    const row = await this.row(streamId);
    if (!row || row.userId !== user.id) throw notFound('no such stream (stream_id)');
    if (row.state === 'stopped' && action !== 'stop')
      throw conflict('the stream is stopped; add a new stream with POST /add-stream');
    if (row.state === 'ended' && action !== 'stop')
      throw conflict(
        `the stream has ended (${row.reason ?? 'its source ended'}); add a new stream with POST /add-stream`,
      );
    const run = this.runner.runOf(row);
    if (action === 'pause') {
      this.runner.halt(run, false);
      await this.runner.setState(row.id, 'paused', null);
    } else if (action === 'stop') {
      this.runner.forget(run);
      // What it keeps until the retention purge counts in the quota.
      await setVideoSize(this.d.catalog, run.videoId, this.measure(run));
      await this.runner.setState(row.id, 'stopped', null);
    } else if (row.state === 'paused' || row.state === 'failed') {
      // A failed stream does not count as running: resuming it must fit the caps again.
      if (row.state === 'failed') await this.refuseOverCaps(this.d.catalog, user.id, row.fps, row.id);
      await this.refuseOverQuota(user.id);
      await this.runner.setState(row.id, row.url ? 'connecting' : 'live', null);
      run.stopped = false;
      if (row.url) this.runner.connect(run);
      // Running again: its lease (the node that paused it gave it up).
      this.claim(row.id)
        .then((mine) => {
          if (!mine) this.runner.release(run);
        })
        .catch((e) =>
          this.d.log.warn('live stream lease not claimed', { stream_id: row.id, reason: (e as Error).message }),
        );
    }
    return this.viewOf((await this.row(row.id))!);
  }

  async list(user: User, indexId?: string): Promise<StreamView[]> {
    const rows = await streamsOfUser(this.d.catalog, user.id, indexId);
    return Promise.all(rows.map((r) => this.viewOf(r)));
  }

  /** The live part of each stream resource of an index, by file_id. */
  async viewsByVideo(indexId: string): Promise<Map<string, StreamView>> {
    const rows = await streamsOfIndex(this.d.catalog, indexId);
    return new Map(await Promise.all(rows.map(async (r) => [r.videoId, await this.viewOf(r)] as const)));
  }

  async get(user: User, streamId: string): Promise<StreamView> {
    const row = await this.row(streamId);
    if (!row || row.userId !== user.id) throw notFound('no such stream (stream_id)');
    return this.viewOf(row);
  }

  /**
   * Stream seconds ↔ Unix time of a live video, for answers about "the last 10 minutes" or "now":
   * null for a video that is not a live stream.
   */
  async clockOf(videoId: string): Promise<{ originMs: number; latestT: number; state: LiveState } | null> {
    const row = await streamOfVideo(this.d.catalog, videoId);
    if (!row || row.originMs === null) return null;
    return { originMs: row.originMs, latestT: await videoDuration(this.d.catalog, videoId), state: row.state };
  }

  /**
   * The stream-time window [from, to] of the last `seconds` of a live video (for "what happened in
   * the last 10 minutes"), or null for a video that is not live.
   */
  async lastWindow(videoId: string, seconds: number, nowMs = Date.now()): Promise<{ from: number; to: number } | null> {
    const c = await this.clockOf(videoId);
    if (!c) return null;
    const to = (nowMs - c.originMs) / 1000;
    return { from: Math.max(0, to - seconds), to };
  }

  /** A live video's "now" and newest analysed second, in stream seconds (the answering's StreamClock): null when not live. */
  async streamClock(videoId: string, nowMs = Date.now()): Promise<{ nowT: number; latestT: number } | null> {
    const c = await this.clockOf(videoId);
    return c && { nowT: (nowMs - c.originMs) / 1000, latestT: c.latestT };
  }

  // --- alerts (records and their evaluation: alerts.ts)

  createAlert(user: User, body: Parameters<AlertService['create']>[1]): Promise<AlertView> {
    return this.alerts.create(user, body);
  }

  listAlerts(user: User, indexId?: string): Promise<AlertView[]> {
    return this.alerts.list(user, indexId);
  }

  deleteAlert(user: User, alertId: string): Promise<void> {
    return this.alerts.delete(user, alertId);
  }

  firedAlerts(user: User, alertId?: string, limit = 100): Promise<FiredAlert[]> {
    return this.alerts.fired(user, alertId, limit);
  }

  /** A playable MP4 of stream seconds [start, end] of a live video (see clips.ts); null when nothing kept covers them. */
  async clip(videoId: string, originMs: number, start: number, end: number): Promise<LiveClip | null> {
    return liveClip({ ffmpeg: await this.d.ffmpeg(), dir: this.d.files.videoDir(videoId), originMs, start, end });
  }

  // --- retention

  /** Drops what is older than each stream's retention: recording segments, frames, segments, alert events. */
  async purge(nowMs = Date.now()): Promise<{ streams: number; files: number }> {
    let removed = 0;
    const rows = await allStreams(this.d.catalog);
    for (const row of rows) {
      // Clips made for citations are kept an hour (they are made again on demand).
      pruneClips(this.d.files.videoDir(row.videoId), nowMs);
      if (row.originMs === null) continue;
      const cutT = (nowMs - row.originMs) / 1000 - row.retentionSec;
      if (cutT <= 0) continue;
      const dir = this.d.files.videoDir(row.videoId);
      const old = await purgeStreamBefore(this.d.catalog, row, cutT);
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
        const run = this.runner.get(row.id);
        if (run) run.frameBytes = null;
        const fdir = join(dir, 'frames');
        const bytes =
          safeList(fdir).reduce((n, f) => n + fileSize(join(fdir, f)), 0) + this.recordingBytes(row.videoId);
        await setVideoSize(this.d.catalog, row.videoId, bytes);
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

  // --- caps and quota

  /**
   * 429 when one more stream of `fps` would pass a user's caps: running streams, their analysed
   * frames per second together, and all streams kept (stopped and failed ones hold their rows,
   * frames and recordings until their resources are removed, so they count too). `except`: a
   * stream being resumed, counted as not running.
   */
  private async refuseOverCaps(c: Catalog, userId: string, fps: number, except?: string): Promise<void> {
    const { config } = this.d;
    const mine = await streamCapsOfUser(c, userId);
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
  private async refuseOverQuota(userId: string): Promise<void> {
    const quota = this.d.config.userMaxStorageBytes;
    const used = quota ? (await userUsage(this.d.catalog, userId)).bytes : 0;
    if (quota && used >= quota)
      throw insufficientStorage(
        `your videos and live recordings take ${used} bytes, the per-user storage limit of ${quota} bytes (--user-max-storage-bytes, VIDQ_USER_MAX_STORAGE_BYTES); remove videos, or ask the operator to raise it`,
      );
  }

  /**
   * The stream's kept bytes (frames and recording) become its resource's size, so they count in
   * the owner's storage quota like uploaded files; a user over the quota has the stream paused,
   * with the reason, until the retention purge or removed videos make room.
   */
  private async checkQuota(run: StreamRun): Promise<void> {
    await setVideoSize(this.d.catalog, run.videoId, this.measure(run));
    const quota = this.d.config.userMaxStorageBytes;
    if (!quota) return;
    const used = (await userUsage(this.d.catalog, run.userId)).bytes;
    if (used <= quota) return;
    const row = await this.row(run.id);
    if (!row || !RUNNING.includes(row.state) || row.state === 'paused') return;
    // Frames still waiting are not kept: counted as dropped, as when a stream falls behind.
    const waiting = run.queue.size;
    this.runner.halt(run);
    if (waiting) await this.runner.countDropped(run, waiting);
    const reason = `storage limit reached: your videos and live recordings take ${used} bytes of ${quota} (--user-max-storage-bytes); remove videos, or resume once the retention purge has made room`;
    await this.runner.setState(run.id, 'paused', reason);
    this.d.log.info('live stream paused: storage limit', { stream_id: run.id, used, quota });
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

  // --- records

  private async row(id: string): Promise<LiveStream | undefined> {
    if (typeof id !== 'string' || id.length > 100) return undefined;
    return findStream(this.d.catalog, id);
  }

  private async viewOf(r: LiveStream): Promise<StreamView> {
    const latest = await latestFrameTime(this.d.catalog, r.videoId);
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
      ...(latest !== undefined && { latest_time: latest }),
      created_at: r.createdAt.toISOString(),
    };
  }
}
