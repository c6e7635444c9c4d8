/**
 * Shots and sampled frames in ONE decode of the video: ffmpeg splits the decoded picture into a
 * tiny copy scored for scene changes (select's scene score, logged per frame) and a copy
 * sampled at a small fixed rate and written as JPEGs. The candidates are thinned to at least one
 * frame per shot and at most one every `frameIntervalSec` within a shot.
 *
 * The thinning runs while the video decodes: a candidate's fate depends only on the scores up to a
 * few seconds after it (see SETTLE_SEC), so once the decode is that far past it, it is final and is
 * handed to the stages that read frames (OCR, objects), which then work during the decode.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statfsSync } from 'node:fs';
import { join } from 'node:path';
import { startFfmpeg, summarizeFfmpegError } from '../../media/ffmpeg';
import { GiB, int } from '../../options';
import { defineAnalyzer } from '../descriptor';
import { lines } from '../../util/lines';
import type { Analyzer, NewFrame, NewSegment, StageContext, StageResult } from '../contracts';

export interface VisualOptions {
  /** At most one kept frame per this many seconds within a shot. @default 3 */
  frameIntervalSec: number;
  /** Scene score (0..1) above which a cut is always declared (lower spikes count too). @default 0.35 */
  sceneThreshold: number;
  /** Width of stored frames (px, never upscaled). @default 960 */
  frameWidth: number;
  /** Largest stored frame in pixels: tall frames are scaled by area, not width alone. @default 518400 */
  maxFramePixels?: number;
  /** Candidates per video at most: a longer video is sampled more sparsely than one per second (0 = no limit). @default 7200 */
  maxCandidates?: number;
  /** Bytes of frames on disk per video before the stage fails (0 = no limit). @default 1 GiB */
  maxFrameBytes?: number;
  /** The stage fails once the disk has less free space than this (0 = no check). @default 0 */
  minFreeBytes?: number;
}

export const DEFAULT_VISUAL: VisualOptions = {
  frameIntervalSec: 3,
  sceneThreshold: 0.35,
  frameWidth: 960,
  maxFramePixels: 960 * 540,
  maxCandidates: 7200,
  maxFrameBytes: 1024 ** 3,
  minFreeBytes: 0,
};

/** How often the frames on disk, the free space and the removal of the video are looked at while decoding. */
const WATCH_EVERY_MS = 500;

/** Shots shorter than this are merged into the previous one (flashes, fades, camera jolts). */
const MIN_SHOT_SEC = 1.0;
/**
 * Candidates: one per second. Every shot (≥ 1 s long) gets at least one; more would only cost JPEG
 * encoding (measured: 2 per second made this stage ~12 % slower for the same kept frames).
 */
const SAMPLE_FPS = 1;
/**
 * A candidate is final once the decode is this far past it: the next candidate (1 s) must be known
 * (a shot's first frame is skipped when the shot has another), and a cut up to then needs the
 * scores of the second after it (SPIKE_WINDOW_SEC); the rest is margin.
 */
const SETTLE_SEC = 3;
/**
 * The text reader reads the picture at most this far apart: kept frames, and between them the
 * candidates needed (probes). Text on screen this long is then on a read frame whatever its phase.
 */
export const PROBE_GAP_SEC = 2;

export class VisualAnalyzer implements Analyzer {
  readonly stage = 'analyzing:visual';
  readonly kinds = ['shot'] as const;
  readonly info = { kind: 'shots', name: 'ffmpeg scene score + fixed-rate sampling' };
  readonly weight = 1;
  readonly concurrent = true;
  readonly producesFrames = true;

  constructor(private readonly opts: VisualOptions = DEFAULT_VISUAL) {}

  async run(ctx: StageContext): Promise<StageResult> {
    const { video } = ctx;
    const framesDir = join(video.dir, 'frames');
    const work = join(video.dir, 'frames.partial');
    rmSync(work, { recursive: true, force: true });
    mkdirSync(work, { recursive: true });
    // Kept frames are moved into frames/ one by one as they become final; an earlier run's frames
    // stay until the end (their rows still point at them), and a frame kept again has the same
    // name and picture.
    mkdirSync(framesDir, { recursive: true });
    const width = Math.min(this.opts.frameWidth, video.width || this.opts.frameWidth);
    const pixels = this.opts.maxFramePixels || width * width;
    // One candidate a second, fewer for a long video: the work (JPEG encodes, frames for OCR and
    // objects) per video is bounded whatever its duration.
    const period =
      this.opts.maxCandidates && video.durationSec > this.opts.maxCandidates / SAMPLE_FPS
        ? video.durationSec / this.opts.maxCandidates
        : 1 / SAMPLE_FPS;
    // Width and area both bounded (a 960×2400 frame at 960 px wide would be 2.3 Mpx), never upscaled.
    const scale = `scale=w='trunc(min(min(${width}\\,iw)\\,sqrt(${pixels}*iw/ih))/2)*2':h=-2`;
    // The scores are logged (stderr, unbuffered): written to a file they would arrive in 256 kB
    // blocks, minutes of video each, too late to hand frames on during the decode.
    const graph =
      // Square pixels first (an anamorphic picture is stored squeezed): frames have the displayed
      // shape. ffmpeg has already turned rotated video upright. A no-op for square pixels.
      `[0:v]scale='trunc(iw*sar/2)*2':ih,setsar=1,split=2[a][b];` +
      `[a]scale=96:-2,select='gte(scene\\,0)',metadata=print:key=lavfi.scene_score[s];` +
      // Candidate n (from 0) is the picture on screen at n periods: the last frame at or before
      // that time (round=up). The default (near) took the last frame within half a period after
      // it, ~0.47 s late at one a second; start_time=0 numbers them from 0 s even when the video
      // starts later than the file (its first picture stands in until then).
      `[b]fps=fps=${(1 / period).toFixed(6)}:round=up:start_time=0,${scale}[f]`;
    // One decoding thread: the readers use the other core, and ffmpeg's frame threads cost ~25 %
    // more CPU for the same time (8.1 against 10.3 s of CPU on the 10-minute bench clip).
    const args = [
      '-nostats',
      '-threads',
      '1',
      '-i',
      video.path,
      '-an',
      '-sn',
      '-dn',
      '-filter_complex',
      graph,
      '-map',
      '[s]',
      '-f',
      'null',
      '-',
      '-map',
      '[f]',
      '-q:v',
      '4',
      '-atomic_writing',
      '1',
      join(work, '%06d.jpg'),
    ];
    // SIGKILL: on SIGTERM ffmpeg flushes its filters first, and the sampler then writes every
    // frame up to the last one decoded (minutes of JPEGs for a sparse video). Nothing of a stopped
    // run is kept anyway.
    const proc = startFfmpeg(ctx.ffmpeg, args, { logLevel: 'info', signal: ctx.signal, killSignal: 'SIGKILL' });

    const selector = new FrameSelector(work, this.opts, period);
    const kept: NewFrame[] = [];
    const probesDir = join(video.dir, 'probes');
    if (ctx.emitProbe) {
      rmSync(probesDir, { recursive: true, force: true });
      mkdirSync(probesDir, { recursive: true });
    }
    // Time of the last frame the text reader got (kept or probe); -1: the first candidate (0 s) is a second away.
    let lastRead = -1;
    const probe = (upTo: number) => {
      if (!ctx.emitProbe) return;
      for (const p of selector.probes(lastRead, upTo)) {
        const path = join(probesDir, p.file);
        renameSync(join(work, p.file), path);
        ctx.emitProbe({ ...p, path, probe: true });
        lastRead = p.t;
      }
    };
    const before = new Set(readdirSync(framesDir));
    const keep = (frames: NewFrame[]) => {
      for (const f of frames) {
        probe(f.t);
        lastRead = f.t;
        const path = join(framesDir, f.file);
        renameSync(join(work, f.file), path);
        kept.push(f);
        ctx.emitFrame?.({ ...f, path });
      }
      // Candidates before the last kept frame can no longer be kept: off the disk with them.
      selector.dropBefore(kept.at(-1)?.t ?? -1);
    };
    // Bounds that do not wait for ffmpeg's next log line (a file with one frame a minute logs one
    // line a minute while the sampler writes a JPEG a second): bytes of frames, free disk space.
    let stopped: Error | null = null;
    // Two sources of progress (the decoder's log, the sampler's files): shown only forwards.
    let shown = 0;
    const progress = (t: number) => {
      const f = video.durationSec > 0 ? Math.min(0.99, t / video.durationSec) : 0;
      if (f > shown) ctx.progress((shown = f));
    };
    const watch = setInterval(() => {
      try {
        selector.poll();
        progress(selector.sampledUpTo);
        const limit = this.opts.maxFrameBytes;
        if (limit && selector.bytesOnDisk > limit)
          throw new Error(
            `its sampled frames passed the limit of ${limit} bytes per video (--max-frame-bytes-per-video)`,
          );
        const min = this.opts.minFreeBytes;
        if (min && freeBytes(work) < min)
          throw new Error(
            `the disk is nearly full: less than ${min} bytes free (--min-free-bytes); free some space and upload the video again`,
          );
      } catch (e) {
        stopped ??= e as Error;
        proc.stop('SIGKILL');
      }
    }, WATCH_EVERY_MS);
    // Partial output goes when the stage fails: this run's frames and candidates.
    const discard = () => {
      rmSync(work, { recursive: true, force: true });
      for (const f of kept) if (!before.has(f.file)) rmSync(join(framesDir, f.file), { force: true });
    };
    // Everything else ffmpeg says: the last lines explain a failure.
    const said: string[] = [];
    let reportedAt = -Infinity;
    let code: number;
    try {
      for await (const line of lines(proc.stderr)) {
        if (!line.startsWith('[Parsed_metadata')) {
          said.push(line);
          if (said.length > 20) said.shift();
          continue;
        }
        if (!selector.scores.push(line)) continue;
        // A frame's time: report and pick about once a second of video.
        const t = selector.scores.lastT;
        if (t - reportedAt < 1) continue;
        reportedAt = t;
        progress(t);
        keep(selector.settled(kept));
      }
      code = await proc.exited;
    } catch (e) {
      clearInterval(watch);
      discard();
      throw e;
    } finally {
      clearInterval(watch);
    }
    if (stopped || ctx.signal.aborted) {
      discard();
      throw stopped ?? ctx.signal.reason;
    }
    if (code !== 0) {
      discard();
      throw new Error(`the video could not be decoded: ${summarizeFfmpegError(said.join('\n'))}`);
    }

    const { shots, rest, changed } = selector.finish(kept, video.durationSec);
    if (changed) ctx.log.warn('settled frames changed', { video_id: video.id });
    keep(rest);
    // After the last kept frame, up to the end.
    probe(video.durationSec > 0 ? video.durationSec + 1e-3 : Infinity);
    rmSync(work, { recursive: true, force: true });
    const keptNames = new Set(kept.map((k) => k.file));
    for (const f of readdirSync(framesDir)) if (!keptNames.has(f)) rmSync(join(framesDir, f), { force: true });

    const segments: NewSegment[] = shots.map((s, i) => ({
      kind: 'shot',
      start: s.start,
      end: s.end,
      text: `shot ${i + 1} of ${shots.length}`,
      confidence: s.score,
      extra: { index: i, cut_score: s.score },
    }));
    return { segments, frames: kept, summary: { engine: this.info.name, shots: shots.length, frames: kept.length } };
  }
}

/**
 * Picks frames from the candidates while the decode goes on: a candidate is settled once every cut
 * up to the candidate after it is settled (scores SPIKE_WINDOW_SEC past it are known) and that next
 * candidate's JPEG is written. The work per call covers only the last kept frame's shot onwards.
 */
export class FrameSelector {
  readonly scores = new SceneScores();
  private readonly cuts: ScoredFrame[] = [];
  private judged = 0;
  private readonly candidates: Candidate[] = [];
  /** The shots as last known (while decoding: up to the decode; after finish: final). */
  private shots: Shot[] = [];

  /** The next candidate file's number (dropped duplicates leave gaps in `candidates`). */
  private nextN = 1;
  /** Bytes of the candidates still on disk (in the work folder or kept). */
  bytesOnDisk = 0;
  private lastHash: bigint | number | null = null;
  private dropped = 0;

  constructor(
    private readonly dir: string,
    private readonly opts: Pick<VisualOptions, 'sceneThreshold' | 'frameIntervalSec'>,
    /** Seconds between candidates. */
    private readonly period = 1 / SAMPLE_FPS,
  ) {}

  /** Time up to which candidates have been written. */
  get sampledUpTo(): number {
    return (this.nextN - 1) * this.period;
  }

  /** Takes in the candidates written so far (frees the disk of duplicates at once). */
  poll(): void {
    this.readUpTo(Infinity);
  }

  /** Deletes the candidate files before time `t` that were not kept (they no longer can be). */
  dropBefore(t: number): void {
    while (this.dropped < this.candidates.length && this.candidates[this.dropped]!.t < t) {
      const c = this.candidates[this.dropped++]!;
      const path = join(this.dir, c.file);
      if (existsSync(path)) {
        this.bytesOnDisk -= c.bytes ?? 0;
        rmSync(path, { force: true });
      }
    }
  }

  /** Frames after `kept` that no later score can change. */
  settled(kept: readonly NewFrame[]): NewFrame[] {
    const frames = this.scores.frames;
    const now = this.scores.lastT;
    while (this.judged < frames.length && frames[this.judged]!.t + SPIKE_WINDOW_SEC < now) {
      if (isCut(frames, this.judged, this.opts.sceneThreshold)) this.cuts.push(frames[this.judged]!);
      this.judged++;
    }
    let upTo = now - SETTLE_SEC;
    // The next candidate decides too (a shot's first frame is skipped when the shot has another).
    const next = this.readUpTo(upTo + this.period);
    upTo = Math.min(upTo, next - this.period);
    if (upTo <= 0) return [];
    // While decoding the end is not known: no cut is dropped for being near it.
    this.shots = shotsFrom(this.cuts, Infinity);
    return this.pick(kept, this.shots, upTo);
  }

  /**
   * Candidates after `from` and before `to` (times of two frames the text reader gets) so that
   * its reads are at most PROBE_GAP_SEC apart: greedily the latest one within the gap. Where no
   * candidate is that near (a dropped duplicate: the same picture; a sparser sampling of a very
   * long video), the next one. Only candidates already read from disk; the caller asks up to a
   * kept frame, or after finish().
   */
  probes(from: number, to: number): NewFrame[] {
    const out: NewFrame[] = [];
    let last = from;
    while (to - last > PROBE_GAP_SEC + 1e-6) {
      let pick: Candidate | undefined;
      for (const c of this.candidates) {
        if (c.t <= last + 1e-6) continue;
        if (c.t >= to - 1e-6) break;
        if (c.t - last > PROBE_GAP_SEC + 1e-6) {
          pick ??= c;
          break;
        }
        pick = c;
      }
      if (!pick) break;
      // The caller moves it out to the text reader, which deletes it once read.
      this.bytesOnDisk -= pick.bytes ?? 0;
      out.push({ t: pick.t, file: pick.file, shot: shotIndexAt(this.shots, pick.t) });
      last = pick.t;
    }
    return out;
  }

  /** At the end of the decode: the shots, and every frame still to keep after `kept`. */
  finish(kept: readonly NewFrame[], duration: number): { shots: Shot[]; rest: NewFrame[]; changed: boolean } {
    this.readUpTo(Infinity);
    const shots = shotsFrom(findCuts(this.scores.frames, this.opts.sceneThreshold), duration);
    this.shots = shots;
    const all = thinFrames(this.candidates, shots, this.opts.frameIntervalSec);
    const last = kept.at(-1);
    const rest = all.filter((f) => !last || f.t > last.t);
    const before = all.slice(0, all.length - rest.length);
    const changed =
      before.length !== kept.length || kept.some((f, i) => f.file !== before[i]!.file || f.shot !== before[i]!.shot);
    return { shots, rest, changed };
  }

  private pick(kept: readonly NewFrame[], shots: Shot[], upTo: number): NewFrame[] {
    const last = kept.at(-1);
    const from = last?.shot ?? 0;
    const start = shots[from]?.start ?? 0;
    const mine = this.candidates.filter((c) => c.t >= start);
    return thinFrames(mine, shots.slice(from), this.opts.frameIntervalSec)
      .map((f) => ({ ...f, shot: f.shot + from }))
      .filter((f) => f.t < upTo && (!last || f.t > last.t));
  }

  /**
   * Reads the candidates written before `t`; returns the time of the first one not yet there (or
   * `t`). A candidate identical to the one before it (the sampler repeats a frame when the video
   * has fewer than one a period) is deleted at once: the same picture is stored once.
   */
  private readUpTo(t: number): number {
    for (; (this.nextN - 1) * this.period < t; this.nextN++) {
      const file = `${String(this.nextN).padStart(6, '0')}.jpg`;
      const path = join(this.dir, file);
      const time = round((this.nextN - 1) * this.period);
      // ffmpeg writes each JPEG under a temporary name and renames it: once it exists, it is whole.
      if (!existsSync(path)) return time;
      const bytes = readFileSync(path);
      const hash = Bun.hash(bytes);
      if (hash === this.lastHash) {
        rmSync(path, { force: true });
        continue;
      }
      this.lastHash = hash;
      this.bytesOnDisk += bytes.byteLength;
      this.candidates.push({ file, t: time, bytes: bytes.byteLength });
    }
    return t;
  }
}

/** Scene scores from ffmpeg's `metadata=print` lines ("frame:.. pts_time:T", then "lavfi.scene_score=S"). */
export class SceneScores {
  /** The frames that changed, with their scores. */
  readonly frames: ScoredFrame[] = [];
  /** Time of the last decoded frame. */
  lastT = 0;

  /** Takes one line; true when it was a frame's time. */
  push(line: string): boolean {
    const pt = /pts_time:(-?[\d.]+)/.exec(line);
    if (pt) {
      this.lastT = Number(pt[1]);
      return true;
    }
    const sc = /lavfi\.scene_score=([\d.]+)/.exec(line);
    // Exact repeats (score 0: phones pad variable frame rates with duplicates) would make every
    // real change look isolated; judge each change against the frames that did change.
    if (sc && Number(sc[1]) > 0.0005) this.frames.push({ t: this.lastT, score: Number(sc[1]) });
    return false;
  }
}

export interface ScoredFrame {
  t: number;
  score: number;
}

export interface Shot {
  start: number;
  end: number;
  /** Scene score of the cut that starts it (1 for the first shot). */
  score: number;
}

/**
 * A frame is a cut when its score is high outright, or when it is a clear spike over the frames
 * around it: a cut between similar-looking shots scores low but stands out, while a shaking camera
 * scores high on every frame and stands out on none. Only frames within SPIKE_WINDOW_SEC count as
 * neighbours, so a cut is settled once the decode is that far past it.
 */
export function findCuts(frames: readonly ScoredFrame[], threshold: number): ScoredFrame[] {
  return frames.filter((_, i) => isCut(frames, i, threshold));
}

function isCut(frames: readonly ScoredFrame[], i: number, threshold: number): boolean {
  const f = frames[i]!;
  if (f.score < SPIKE_MIN_SCORE) return false;
  if (f.score >= threshold) return true;
  const around: number[] = [];
  for (let j = i - 1; j >= 0 && f.t - frames[j]!.t <= SPIKE_WINDOW_SEC; j--) around.push(frames[j]!.score);
  for (let j = i + 1; j < frames.length && frames[j]!.t - f.t <= SPIKE_WINDOW_SEC; j++) around.push(frames[j]!.score);
  around.sort((a, b) => a - b);
  const median = around.length ? around[Math.floor(around.length / 2)]! : 0;
  // A cut changes the picture once; motion keeps changing it, so the next frames score high too.
  const near = (g: ScoredFrame | undefined) => (g && Math.abs(g.t - f.t) <= SPIKE_WINDOW_SEC ? g.score : 0);
  return (
    f.score >= SPIKE_RATIO * Math.max(median, 0.01) &&
    Math.max(near(frames[i - 1]), near(frames[i + 1])) <= f.score * SPIKE_ISOLATION
  );
}

/** Spike detection: scores below this are never cuts; a spike is this many times its neighbours' median within the window. */
const SPIKE_MIN_SCORE = 0.1;
const SPIKE_RATIO = 6;
const SPIKE_WINDOW_SEC = 1;
const SPIKE_ISOLATION = 0.3;

/** Index of the shot that holds time t (the last one starting at or before it). */
export function shotIndexAt(shots: readonly Shot[], t: number): number {
  let i = 0;
  while (i + 1 < shots.length && shots[i + 1]!.start <= t) i++;
  return i;
}

export function shotsFrom(cuts: { t: number; score: number }[], duration: number): Shot[] {
  const shots: Shot[] = [];
  let start = 0;
  let score = 1;
  for (const c of cuts) {
    if (c.t - start < MIN_SHOT_SEC || duration - c.t < MIN_SHOT_SEC) continue;
    shots.push({ start: round(start), end: round(c.t), score });
    start = c.t;
    score = c.score;
  }
  shots.push({ start: round(start), end: round(Math.max(duration, start)), score });
  return shots;
}

interface Candidate {
  t: number;
  file: string;
  bytes?: number;
}

/** At least one frame per shot (the one nearest its middle when nothing else fits), at most one per interval. */
export function thinFrames(candidates: Candidate[], shots: Shot[], interval: number): NewFrame[] {
  const out: NewFrame[] = [];
  shots.forEach((shot, i) => {
    const inShot = candidates.filter(
      (c) => c.t >= shot.start && (c.t < shot.end || (i === shots.length - 1 && c.t <= shot.end)),
    );
    if (inShot.length === 0) return;
    // Skip the transition frame right at the cut when the shot has room.
    const usable = inShot.length > 1 && inShot[0]!.t - shot.start < 0.25 ? inShot.slice(1) : inShot;
    let last = -Infinity;
    const picked: Candidate[] = [];
    for (const c of usable) {
      if (c.t - last >= interval) {
        picked.push(c);
        last = c.t;
      }
    }
    for (const c of picked) out.push({ t: c.t, shot: i, file: c.file });
  });
  return out;
}

const round = (x: number) => Math.round(x * 1000) / 1000;

function freeBytes(dir: string): number {
  const st = statfsSync(dir);
  return Number(st.bavail) * Number(st.bsize);
}

/** Shots and the sampled frames every other analyzer reads: always runs, first. */
export const visualDescriptor = defineAnalyzer({
  name: 'visual',
  options: {
    // The main speed/detail trade-off of analysis.
    frameIntervalSec: int('frame-interval-sec', 5, 'at most one sampled frame per N seconds of a shot', { min: 1 }),
    maxFramesPerVideo: int('max-frames-per-video', 7200, 'sampled-frame candidates per video'),
    maxFramePixels: int('max-frame-pixels', 960 * 540, 'largest sampled frame (width x height)'),
    maxFrameBytesPerVideo: int('max-frame-bytes-per-video', 1 * GiB, 'bytes of sampled frames per video'),
  },
  engines: {},
  listed: true,
  live: false,
  // Every other stage reads its frames.
  reanalyzable: false,
  create: (c, setup) =>
    new VisualAnalyzer({
      ...DEFAULT_VISUAL,
      frameIntervalSec: c.frameIntervalSec,
      maxFramePixels: c.maxFramePixels,
      maxCandidates: c.maxFramesPerVideo,
      maxFrameBytes: c.maxFrameBytesPerVideo,
      minFreeBytes: setup.minFreeBytes,
    }),
});
