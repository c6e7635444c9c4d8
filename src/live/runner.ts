/**
 * The running side of live streams: each stream's source connected (and reconnected with backoff,
 * or ended when its kind says the source has finished), its frames kept as JPEGs and reordered
 * into windows, and the pump that hands the windows, one at a time and streams in turn, to the
 * window analysis (in an analysis worker process). The stream records, caps and quotas are the
 * live service's; this only runs what it is told to run.
 */
import { readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config';
import { ApiError } from '../errors';
import type { Logger } from '../log';
import type { Catalog } from '../storage/catalog';
import type { DataDir } from '../storage/files';
import {
  countDroppedFrames,
  findStream,
  frameFilesOf,
  markStreamLive,
  setStreamOrigin,
  setStreamState,
} from '../storage/repositories/streams';
import type { LiveState, LiveStream } from '../storage/rows';
import type { FiredAlert } from './alerts';
import { SoundBuffer } from './audio';
import { BACKLOG_SEC, FrameQueue, type PendingFrame } from './frame-queue';
import { guardConnection } from './egress';
import { checkStreamUrl, PulledSource } from './source';
import type { Connection } from './sources/kind';
import { sourceKindOf } from './sources';
import type { WindowRequest, WindowResult } from './window';

/** States in which a stream counts against the user's caps. */
export const RUNNING: LiveState[] = ['connecting', 'live', 'reconnecting', 'paused'];
/** Frames of one stream analysed together (one window). */
const WINDOW_FRAMES = 8;
/** Reconnect delays of a pulled source: doubling from 1 s up to 30 s. */
const BACKOFF_MS = 1000;
const BACKOFF_CAP_MS = 30_000;
/** Seconds of unanalysed sound kept per stream (like the frames' backlog). */
const AUDIO_KEEP_SEC = BACKLOG_SEC + 10;

export interface StreamRun {
  id: string;
  videoId: string;
  userId: string;
  fps: number;
  queue: FrameQueue;
  source: PulledSource | null;
  /** Sound heard and not yet analysed (pulled sources with audio, when speech is analysed). */
  sound: SoundBuffer;
  /** The source has no sound track: connected without asking for one. */
  noAudio: boolean;
  /** Bytes of the stream's kept frames (JPEGs), counted as they come and go; null: not measured yet. */
  frameBytes: number | null;
  /** Sizes of the recording's segment files, by name (the newest, still growing, measured again). */
  recording: Map<string, number>;
  /** What the source kind keeps between connections. */
  memo: Record<string, unknown>;
  backoffMs: number;
  retry: ReturnType<typeof setTimeout> | null;
  /** Unix ms of stream time 0. */
  originMs: number | null;
  width: number;
  height: number;
  stopped: boolean;
}

export interface RunnerDeps {
  /** The catalog (either dialect): the streams' state, origin, dropped frames and analysed frames. */
  catalog: Catalog;
  config: Config;
  files: DataDir;
  log: Logger;
  ffmpeg: () => Promise<string>;
  /** Whether windows hear their sound (speech is analysed): pulled sources then hand it out. */
  hearsSpeech: boolean;
  /** Analyses a window (in a worker process, or here when the server has none). */
  analyse: (w: WindowRequest) => Promise<WindowResult>;
  /** A stream's segments or state changed: drop cached listings and retrieval data. */
  onChanged: (videoId: string) => void;
  onFired: (userId: string, fired: FiredAlert) => void;
  /** A window of the stream was stored (its kept bytes grew). */
  afterWindow: (run: StreamRun) => Promise<void>;
}

export class StreamRunner {
  private readonly runs = new Map<string, StreamRun>();
  private pumping = false;
  private timer: ReturnType<typeof setInterval> | null = null;
  private cursor = 0;
  private closed = false;

  constructor(private readonly d: RunnerDeps) {}

  startPump(): void {
    this.timer = setInterval(() => void this.pump(), 500);
    this.timer.unref?.();
  }

  stop(): void {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    for (const run of this.runs.values()) this.halt(run);
    this.runs.clear();
  }

  get(id: string): StreamRun | undefined {
    return this.runs.get(id);
  }

  /** The stream's run (made on first use). */
  runOf(row: LiveStream): StreamRun {
    const existing = this.runs.get(row.id);
    if (existing) return existing;
    const run: StreamRun = {
      id: row.id,
      videoId: row.videoId,
      userId: row.userId,
      fps: row.fps,
      queue: new FrameQueue(row.fps),
      source: null,
      sound: new SoundBuffer(AUDIO_KEEP_SEC),
      noAudio: false,
      frameBytes: null,
      recording: new Map(),
      memo: {},
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

  /** Stops a stream's run and forgets it (stopped, ended or removed). */
  forget(run: StreamRun): void {
    this.halt(run);
    this.runs.delete(run.id);
  }

  /**
   * Another node runs the stream now (its lease went there, issue 33): the run stops here and is
   * forgotten, its unanalysed frames' JPEGs left for the new owner to queue.
   */
  release(run: StreamRun): void {
    this.halt(run, false);
    run.queue.drain();
    this.runs.delete(run.id);
  }

  /** A stream that was running when the server stopped: its unanalysed frames queued, its source connected again. */
  async resume(row: LiveStream): Promise<void> {
    const run = this.runOf(row);
    await this.requeueUnanalysed(run);
    if (row.url) {
      await this.setState(row.id, 'reconnecting', 'the server restarted');
      this.connect(run);
    }
  }

  /** Stops a run's source and retries; `drop` also forgets its waiting frames. */
  halt(run: StreamRun, drop = true): void {
    run.stopped = true;
    if (run.retry) clearTimeout(run.retry);
    run.retry = null;
    run.source?.stop();
    run.source = null;
    // Frames that will never be analysed: their JPEGs go too (a restart would take them as waiting).
    if (drop) for (const f of run.queue.drain()) this.removeFrame(run, f);
  }

  /** Takes a frame into the stream's queue (dropping the oldest when the stream falls behind). */
  async accept(run: StreamRun, jpeg: Buffer, atMs: number, size: { width: number; height: number }): Promise<void> {
    const row = await findStream(this.d.catalog, run.id);
    if (!row) {
      // The stream's resource (or its index) was removed: its source stops here.
      this.forget(run);
      return;
    }
    // The first frame sets stream time 0 (kept if another request set it first).
    run.originMs ??= await setStreamOrigin(this.d.catalog, run.id, atMs);
    const tMs = atMs - run.originMs;
    // Earlier than the first frame, or a second frame for a slot: more than the stream's rate.
    if (!run.queue.takes(tMs / 1000)) {
      await countDroppedFrames(this.d.catalog, run.id, 1);
      return;
    }
    run.width = size.width;
    run.height = size.height;
    const file = `${String(tMs).padStart(12, '0')}.jpg`;
    writeFileSync(join(this.d.files.videoDir(run.videoId), 'frames', file), jpeg, { mode: 0o600 });
    if (run.frameBytes !== null) run.frameBytes += jpeg.length;
    const dropped = run.queue.add({ t: tMs / 1000, file, arrivedAt: Date.now(), bytes: jpeg.length });
    for (const f of dropped) this.removeFrame(run, f);
    if (dropped.length) await countDroppedFrames(this.d.catalog, run.id, dropped.length);
    if (row.state === 'connecting' || row.state === 'reconnecting') {
      await markStreamLive(this.d.catalog, row);
      this.d.onChanged(run.videoId);
    }
  }

  countDropped(run: StreamRun, n: number): Promise<void> {
    return countDroppedFrames(this.d.catalog, run.id, n);
  }

  async setState(id: string, state: LiveState, reason: string | null): Promise<void> {
    const videoId = await setStreamState(this.d.catalog, id, state, reason);
    if (videoId) this.d.onChanged(videoId);
  }

  /** (Re)connects a pulled source, checking its host again (DNS pinning per connection). */
  connect(run: StreamRun): void {
    if (this.closed) return;
    run.stopped = false;
    void this.open(run).catch((e) => this.scheduleReconnect(run, (e as Error).message));
  }

  private async open(run: StreamRun): Promise<void> {
    const row = await findStream(this.d.catalog, run.id);
    if (!row?.url || !RUNNING.includes(row.state) || row.state === 'paused') return;
    let url: URL;
    let address: string;
    try {
      ({ url, address } = await checkStreamUrl(row.url, this.d.config.allowPrivateUrls));
    } catch (e) {
      if (e instanceof ApiError && e.status === 403) {
        await this.setState(run.id, 'failed', e.message);
        return;
      }
      this.scheduleReconnect(run, (e as Error).message);
      return;
    }
    if (run.stopped || this.closed) return;
    const kind = await sourceKindOf({ url, address });
    if (!kind) {
      await this.setState(run.id, 'failed', `no kind of live source reads ${url.protocol} URLs`);
      return;
    }
    const conn: Connection = { url, address, wasLive: run.originMs !== null, memo: run.memo };
    const prepared = await kind.prepare(conn);
    if (run.stopped || this.closed) return;
    if ('ended' in prepared) {
      this.end(run, prepared.ended);
      return;
    }
    const ffmpeg = await this.d.ffmpeg();
    // Every request of ffmpeg is checked: through a proxy (http(s), rtsps, rtmps: each hop checked
    // and pinned), an RTSP relay (no redirect, UDP pinned), or the checked address (RTMP).
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
      inputArgs: prepared.args,
      audio: this.d.hearsSpeech && !run.noAudio,
      fps: run.fps,
      recordDir: join(this.d.files.videoDir(run.videoId), 'live'),
      segmentSec: this.d.config.liveSegmentSec,
      stallSec: this.d.config.liveStallSec,
      onFrame: (jpeg, atMs) => {
        run.backoffMs = BACKOFF_MS;
        this.accept(run, jpeg, atMs, { width: 0, height: 0 }).catch((e) =>
          this.d.log.warn('live frame not kept', { stream_id: run.id, reason: (e as Error).message }),
        );
      },
      onAudio: (pcm, atMs) => run.sound.push(pcm, atMs),
      onEnd: (reason, noAudio, code) => {
        if (run.source !== source) return;
        run.source = null;
        if (noAudio && !run.noAudio) {
          // A source without a sound track: at once again, frames only.
          run.noAudio = true;
          if (!run.stopped && !this.closed) this.connect(run);
          return;
        }
        void kind
          .finished({ ...conn, wasLive: run.originMs !== null }, { code, frames: source.frames })
          .catch(() => null)
          .then((ended) => {
            if (run.stopped || this.closed) return;
            if (ended) this.end(run, ended);
            else this.scheduleReconnect(run, reason);
          });
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
  }

  /**
   * The source has finished for good: the stream ends (its frames still waiting are analysed
   * first, by the pump), and the status says so.
   */
  private end(run: StreamRun, reason: string): void {
    run.stopped = true;
    this.noted(run, this.setState(run.id, 'ended', reason));
    this.d.log.info('live source ended', { stream_id: run.id, reason });
  }

  /** A state write started from a source's callback: its failure is logged (nothing awaits it). */
  private noted(run: StreamRun, write: Promise<void>): void {
    write.catch((e) =>
      this.d.log.warn('live stream state not written', { stream_id: run.id, reason: (e as Error).message }),
    );
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
    this.noted(run, this.setState(run.id, 'failed', reason));
  }

  private scheduleReconnect(run: StreamRun, reason: string): void {
    this.noted(run, this.reconnectLater(run, reason));
  }

  private async reconnectLater(run: StreamRun, reason: string): Promise<void> {
    const stopped = run.stopped;
    const row = await findStream(this.d.catalog, run.id);
    if (!row || !RUNNING.includes(row.state) || row.state === 'paused') return;
    // Halted (paused, stopped, released) or closed while the row was read: not reconnected.
    if ((run.stopped && !stopped) || this.closed) return;
    await this.setState(run.id, 'reconnecting', reason);
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
        const ready = [...this.runs.values()].filter((r) => r.queue.ready());
        if (!ready.length || this.closed) break;
        // Streams take turns: a busy stream never holds up the others for more than one window.
        const run = ready[this.cursor++ % ready.length]!;
        const batch = run.queue.take(WINDOW_FRAMES);
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

  private async analyseWindow(run: StreamRun, batch: PendingFrame[]): Promise<void> {
    const last = batch[batch.length - 1]!;
    const dir = this.d.files.videoDir(run.videoId);
    // The window's sound (pulled sources with audio): speech reads it like a short file's track.
    const audio =
      this.d.hearsSpeech && run.originMs !== null ? run.sound.take(run.originMs, dir, last.t + 1 / run.fps) : null;
    let result: WindowResult;
    try {
      result = await this.d.analyse({
        streamId: run.id,
        videoId: run.videoId,
        fps: run.fps,
        width: run.width,
        height: run.height,
        frames: batch.map((f) => ({ t: f.t, file: f.file })),
        audio,
      });
    } catch (e) {
      if (audio) rmSync(audio.path, { force: true });
      throw e;
    }
    if (!result.alive) {
      // The stream (or its video or index) was removed meanwhile.
      this.forget(run);
      return;
    }
    this.d.onChanged(run.videoId);
    for (const f of result.fired) this.d.onFired(run.userId, f);
    await this.d.afterWindow(run);
  }

  private removeFrame(run: StreamRun, f: PendingFrame): void {
    rmSync(join(this.d.files.videoDir(run.videoId), 'frames', f.file), { force: true });
    if (run.frameBytes !== null) run.frameBytes = Math.max(0, run.frameBytes - f.bytes);
  }

  /** JPEGs written before a restart whose window was never stored: analysed now. */
  private async requeueUnanalysed(run: StreamRun): Promise<void> {
    const dir = join(this.d.files.videoDir(run.videoId), 'frames');
    const known = await frameFilesOf(this.d.catalog, run.videoId);
    for (const name of safeList(dir)) {
      const m = /^(\d+)\.jpg$/.exec(name);
      if (!m || known.has(name)) continue;
      const t = Number(m[1]) / 1000;
      for (const f of run.queue.add({ t, file: name, arrivedAt: 0, bytes: fileSize(join(dir, name)) }))
        this.removeFrame(run, f);
    }
  }
}

export function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

export function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
