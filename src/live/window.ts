/**
 * One window of a live stream analysed: its frames (JPEGs already in the stream's folder) and its
 * sound (a WAV file) read by the live analyzers like a short video whose one shot spans the window,
 * then, in one transaction, its frame rows, its segments (through the pipeline's segment store,
 * continuing the spans of the window before), the stages' own writes (faces: the index's people),
 * the stream's counters and the alerts it fires. Run in an analysis worker process (see
 * jobs/worker.ts), or in the server when it has no workers; the request and result are plain JSON.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { LIVE_ANALYZERS } from '../analysis/analyzers';
import { EngineUnavailableError, type Analyzer, type NewSegment, type StageContext } from '../analysis/contracts';
import { FrameStream, type SampledFrame } from '../analysis/frame-stream';
import { storeWindowSegments } from '../analysis/segment-store';
import type { Logger } from '../log';
import type { Catalog } from '../storage/catalog';
import { findStream, frameFilesOf, recordWindow } from '../storage/repositories/streams';
import { evaluateAlerts, type FiredAlert } from './alerts';
import { shifted, type HeardAudio } from './audio';

/**
 * Of a worker's analyzers (made for files), those whose descriptor says they also run on live
 * windows: the same instances, so a window uses the models the worker has loaded.
 */
export function liveAnalyzersOf(all: readonly Analyzer[]): Analyzer[] {
  return all.filter((a) => LIVE_ANALYZERS.some((name) => a.stage === `analyzing:${name}`));
}

export interface WindowRequest {
  streamId: string;
  videoId: string;
  fps: number;
  width: number;
  height: number;
  /** The window's frames in time order: stream seconds and file name in the video's `frames` folder. */
  frames: { t: number; file: string }[];
  /** The window's sound, when the source has some and speech is analysed (the file is removed after). */
  audio: HeardAudio | null;
}

export interface WindowResult {
  /** False when the stream (or its video or index) was removed meanwhile: nothing was stored. */
  alive: boolean;
  fired: FiredAlert[];
}

export interface WindowDeps {
  /** The catalog (either dialect) the window is written with. */
  catalog: Catalog;
  /** The video's folder (`media/<id>`). */
  videoDir: (videoId: string) => string;
  analyzers: readonly Analyzer[];
  ffmpeg: string;
  log: Logger;
}

export async function analyseWindow(d: WindowDeps, w: WindowRequest): Promise<WindowResult> {
  const dir = d.videoDir(w.videoId);
  const sampled: SampledFrame[] = w.frames.map((f) => ({
    t: f.t,
    shot: 0,
    file: f.file,
    path: join(dir, 'frames', f.file),
  }));
  const last = sampled[sampled.length - 1]!;
  const step = 1 / w.fps;
  const found: NewSegment[] = [];
  const applies: ((tx: Catalog) => Promise<void>)[] = [];
  const ctrl = new AbortController();
  // Each analyzer reads the window like a short video whose shot spans it.
  const shot = {
    id: -1,
    videoId: w.videoId,
    kind: 'shot' as const,
    start: sampled[0]!.t,
    end: last.t + step,
    text: '',
    confidence: null,
    extra: { index: 0 },
    embedding: null,
  };
  const heard = w.audio;
  const log = d.log.child({ stream_id: w.streamId });
  try {
    for (const a of d.analyzers) {
      const speech = a.info.kind === 'speech';
      if (speech && !heard) continue;
      const ctx: StageContext = {
        video: {
          id: w.videoId,
          path: speech ? heard!.path : last.path,
          dir,
          durationSec: speech ? heard!.seconds : last.t + step,
          fps: w.fps,
          width: w.width,
          height: w.height,
          hasAudio: speech,
        },
        ffmpeg: d.ffmpeg,
        signal: ctrl.signal,
        log,
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
          log.warn('live analyzer failed on a window', { stage: a.stage, reason: (e as Error).message });
      }
    }
  } finally {
    if (heard) rmSync(heard.path, { force: true });
  }
  let fired: FiredAlert[] = [];
  // One write of the catalog (SQLite: its lock and BEGIN IMMEDIATE; PostgreSQL: a transaction):
  // the frames, segments and counters, the stages' own writes and the alerts commit together.
  const alive = await d.catalog.write(async (tx) => {
    const row = await findStream(tx, w.streamId);
    if (!row) return false;
    const known = await frameFilesOf(
      tx,
      w.videoId,
      sampled.map((f) => f.file),
    );
    const fresh = sampled.filter((f) => !known.has(f.file));
    // Its frames are stored already: nothing more to write.
    if (!fresh.length) return true;
    await recordWindow(tx, {
      streamId: w.streamId,
      videoId: w.videoId,
      frames: fresh,
      step,
      width: w.width,
      height: w.height,
      heard: !!heard,
    });
    const stored = await storeWindowSegments(tx, w.videoId, found, step);
    for (const apply of applies) await apply(tx);
    fired = await evaluateAlerts(tx, row, found, stored, sampled);
    return true;
  });
  return { alive, fired };
}

/**
 * Windows analysed in this process, for a server with no analysis worker (`--analysis-workers 0`):
 * the analyzers are made on the first window.
 */
export function inProcessWindows(
  d: Omit<WindowDeps, 'analyzers' | 'ffmpeg'> & {
    ffmpeg: () => Promise<string>;
    analyzers: () => Promise<Analyzer[]>;
  },
): (w: WindowRequest) => Promise<WindowResult> {
  let analyzers: Promise<Analyzer[]> | null = null;
  return async (w) => {
    analyzers ??= d.analyzers().catch((e) => {
      d.log.warn('live analyzers unavailable', { reason: (e as Error).message });
      return [];
    });
    return analyseWindow({ ...d, analyzers: await analyzers, ffmpeg: await d.ffmpeg() }, w);
  };
}
