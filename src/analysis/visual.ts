/**
 * Shots and sampled frames in ONE decode of the video: ffmpeg splits the decoded picture into a
 * tiny copy scored for scene changes (select's scene score, printed per frame) and a copy sampled
 * at a small fixed rate and written as JPEGs. Afterwards the candidates are thinned: at least one
 * frame per shot, at most one every `frameIntervalSec` within a shot.
 */
import { mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { lines } from '../util/lines';
import type { Analyzer, NewFrame, NewSegment, StageContext, StageResult } from './contracts';

export interface VisualOptions {
  /** At most one kept frame per this many seconds within a shot. @default 3 */
  frameIntervalSec: number;
  /** Scene score (0..1) above which a cut is always declared (lower spikes count too). @default 0.35 */
  sceneThreshold: number;
  /** Width of stored frames (px, never upscaled). @default 960 */
  frameWidth: number;
}

export const DEFAULT_VISUAL: VisualOptions = { frameIntervalSec: 3, sceneThreshold: 0.35, frameWidth: 960 };

/** Shots shorter than this are merged into the previous one (flashes, fades, camera jolts). */
const MIN_SHOT_SEC = 1.0;

export class VisualAnalyzer implements Analyzer {
  readonly stage = 'analyzing:visual';
  readonly kinds = ['shot'] as const;
  readonly info = { kind: 'shots', name: 'ffmpeg scene score + fixed-rate sampling' };
  readonly weight = 1;

  constructor(private readonly opts: VisualOptions = DEFAULT_VISUAL) {}

  async run(ctx: StageContext): Promise<StageResult> {
    const { video } = ctx;
    const framesDir = join(video.dir, 'frames');
    const work = join(video.dir, 'frames.partial');
    rmSync(work, { recursive: true, force: true });
    mkdirSync(work, { recursive: true });
    // Candidates: one per second. Every shot (≥ 1 s long) gets at least one; more would only cost
    // JPEG encoding (measured: 2 per second made this stage ~12 % slower for the same kept frames).
    const sampleFps = 1;
    const scores = join(work, 'scores.txt');
    const width = Math.min(this.opts.frameWidth, video.width || this.opts.frameWidth);
    const graph =
      `[0:v]split=2[a][b];` +
      `[a]scale=96:-2,select='gte(scene\\,0)',metadata=print:key=lavfi.scene_score:file=${escapeFilterPath(scores)}[s];` +
      `[b]fps=${sampleFps},scale=${width}:-2[f]`;
    const args = [ctx.ffmpeg, '-hide_banner', '-nostdin', '-loglevel', 'error', '-progress', 'pipe:1', '-i', video.path, '-an', '-sn', '-dn', '-filter_complex', graph, '-map', '[s]', '-f', 'null', '-', '-map', '[f]', '-q:v', '4', join(work, '%06d.jpg')];
    const proc = Bun.spawn(args, { stdout: 'pipe', stderr: 'pipe', signal: ctx.signal });
    const stderr = new Response(proc.stderr).text();
    for await (const line of lines(proc.stdout)) {
      const m = /^out_time_ms=(\d+)/.exec(line);
      if (m && video.durationSec > 0) ctx.progress(Math.min(0.99, Number(m[1]) / 1e6 / video.durationSec));
    }
    const code = await proc.exited;
    if (code !== 0) throw new Error(`the video could not be decoded: ${summarizeFfmpegError(await stderr)}`);

    const cuts = parseCuts(readFileSync(scores, 'utf8'), this.opts.sceneThreshold);
    const shots = shotsFrom(cuts, video.durationSec);
    const candidates = readCandidates(work, sampleFps);
    const kept = thinFrames(candidates, shots, this.opts.frameIntervalSec);
    const keptNames = new Set(kept.map((k) => k.file));
    for (const c of candidates) if (!keptNames.has(c.file)) rmSync(join(work, c.file), { force: true });
    rmSync(scores, { force: true });
    rmSync(framesDir, { recursive: true, force: true });
    renameSync(work, framesDir);

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

export interface Shot {
  start: number;
  end: number;
  /** Scene score of the cut that starts it (1 for the first shot). */
  score: number;
}

/**
 * Times of cuts from ffmpeg's `metadata=print` output (pairs of "frame:.. pts_time:T" and
 * "lavfi.scene_score=S"). A frame is a cut when its score is high outright, or when it is a clear
 * spike over the frames around it: a cut between similar-looking shots scores low but stands out,
 * while a shaking camera scores high on every frame and stands out on none.
 */
export function parseCuts(text: string, threshold: number): { t: number; score: number }[] {
  const frames: { t: number; score: number }[] = [];
  let t = 0;
  for (const line of text.split('\n')) {
    const pt = /pts_time:([\d.]+)/.exec(line);
    if (pt) {
      t = Number(pt[1]);
      continue;
    }
    const sc = /lavfi\.scene_score=([\d.]+)/.exec(line);
    // Exact repeats (score 0: phones pad variable frame rates with duplicates) would make every
    // real change look isolated; judge each change against the frames that did change.
    if (sc && Number(sc[1]) > 0.0005) frames.push({ t, score: Number(sc[1]) });
  }
  const cuts: { t: number; score: number }[] = [];
  for (let i = 0; i < frames.length; i++) {
    const f = frames[i]!;
    if (f.score < SPIKE_MIN_SCORE) continue;
    if (f.score >= threshold) {
      cuts.push(f);
      continue;
    }
    const around: number[] = [];
    for (let j = i - 1; j >= 0 && f.t - frames[j]!.t <= SPIKE_WINDOW_SEC; j--) around.push(frames[j]!.score);
    for (let j = i + 1; j < frames.length && frames[j]!.t - f.t <= SPIKE_WINDOW_SEC; j++) around.push(frames[j]!.score);
    around.sort((a, b) => a - b);
    const median = around.length ? around[Math.floor(around.length / 2)]! : 0;
    // A cut changes the picture once; motion keeps changing it, so the next frames score high too.
    const next = frames[i + 1]?.score ?? 0;
    const prev = frames[i - 1]?.score ?? 0;
    if (f.score >= SPIKE_RATIO * Math.max(median, 0.01) && Math.max(prev, next) <= f.score * SPIKE_ISOLATION) cuts.push(f);
  }
  return cuts;
}

/** Spike detection: scores below this are never cuts; a spike is this many times its neighbours' median within the window. */
const SPIKE_MIN_SCORE = 0.1;
const SPIKE_RATIO = 6;
const SPIKE_WINDOW_SEC = 1;
const SPIKE_ISOLATION = 0.3;

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
}

function readCandidates(dir: string, fps: number): Candidate[] {
  const files = new Bun.Glob('*.jpg').scanSync({ cwd: dir });
  return [...files]
    .sort()
    .map((file) => ({ file, t: round((Number(file.slice(0, 6)) - 1) / fps) }));
}

/** At least one frame per shot (the one nearest its middle when nothing else fits), at most one per interval. */
export function thinFrames(candidates: Candidate[], shots: Shot[], interval: number): NewFrame[] {
  const out: NewFrame[] = [];
  shots.forEach((shot, i) => {
    const inShot = candidates.filter((c) => c.t >= shot.start && (c.t < shot.end || (i === shots.length - 1 && c.t <= shot.end)));
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

/** Paths inside a filtergraph need ':' '\\' and quotes escaped. */
function escapeFilterPath(p: string): string {
  return p.replace(/\\/g, '\\\\').replace(/:/g, '\\:').replace(/'/g, "\\'");
}

export function summarizeFfmpegError(stderr: string): string {
  const line = stderr.trim().split('\n').filter(Boolean).pop() ?? 'unknown decoder error';
  return line.replace(/^\[[^\]]+\]\s*/, '').slice(0, 200);
}

const round = (x: number) => Math.round(x * 1000) / 1000;
