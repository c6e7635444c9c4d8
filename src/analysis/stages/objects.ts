/**
 * Objects and people on the sampled frames: COCO CenterNet (80 labels) plus MoveNet for person
 * presence, both shipped inside `@vladmandic/human` and run on the tfjs wasm backend in a Worker
 * (see workers/objects-worker.ts for why a Worker).
 *
 * One ffmpeg process decodes every stored frame JPEG straight to the detector's input size; a
 * frame that looks like the last detected frame of its shot reuses that frame's detections.
 * Detections are thresholded per label, then each run of a label over consecutive frames becomes
 * one `object` segment whose extra keeps the label's count in every frame (so "how many bottles at
 * the start" and "when is only one left" can be answered) and the boxes of its best frame.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { framesOf, type Analyzer, type NewSegment, type StageContext, type StageResult } from '../contracts';
import { defineAnalyzer } from '../descriptor';
import { EFFORT_OPTIONS, type AnalysisEffort } from '../effort';
import { paintSegments } from './colours';
import { decodeSampledFrames, jpegSize, shotBounds, type ShotBound } from './frames';
import { FrameStream, type SampledFrame } from '../frame-stream';
import { ModelWorker } from '../engines/model-worker';
import { OBJECTS_WORKER } from '../workers/entries';

/** [x, y, width, height], normalised to 0..1 of the frame. */
export type Box = [number, number, number, number];

export interface RawDetection {
  label: string;
  score: number;
  box: Box;
}

export type DetectorRequest =
  | { type: 'init'; modelDir: string; wasmDir: string }
  /** MoveNet runs when CenterNet's best person candidate scores below `bodyBelow` (Infinity: always, even with no candidate). */
  | { type: 'detect'; id: number; rgb: ArrayBuffer; width: number; height: number; bodyBelow: number };

export type DetectorResponse =
  | { type: 'ready'; backend: string }
  | {
      type: 'result';
      id: number;
      objects: RawDetection[];
      body: { score: number; box: Box } | null;
      objectMs: number;
      bodyMs: number;
    }
  | { type: 'error'; id?: number; message: string };

export interface ObjectsOptions {
  /** Score a label other than person needs (empty scenes give bird/tv/clock at 0.15–0.28). @default 0.3 */
  minScore: number;
  /** CenterNet person score that counts as a person by itself. @default 0.35 */
  personScore: number;
  /** MoveNet body score that counts as one person when CenterNet saw none. @default 0.55 */
  bodyScore: number;
  /** Reuse the detections of the last detected frame of the same shot for frames that look the same. @default true */
  skipDuplicates: boolean;
  /**
   * A frame that looks the same is still detected again once the last detection of its shot is this
   * old (s), so that a slow change (a parked car leaving over minutes) is seen; not when no grid cell
   * changed at all since that detection (a still picture). 0: never (reuse for the whole shot). Set
   * by --analysis-effort (effort.ts). @default 0
   */
  keepAliveSec: number;
  /**
   * Grid cells (of 32×32) that may change for a frame to count as looking the same. Measured on the
   * clips: at 8 no thresholded result changed, while a bottle taken away (~30 cells) or a person
   * walking in still counts as a change. @default 8
   */
  maxChangedCells: number;
  /**
   * What changes inside the people of the last detected frame (someone talking, drumming, waving)
   * does not count as a change: the frame reuses those detections (until `keepAliveSec`). @default false
   */
  ignoreInsidePeople: boolean;
  /** Long side of the detector's input in pixels, a multiple of 32 (CenterNet was trained at 512). @default 512 */
  inputLongSide: number;
  /**
   * Detector Workers working on frames side by side. One Worker is one core at most. Each one holds
   * its own copy of the models and its own wasm heap, so a second one cost about 175 MB at the peak
   * (4 clips of 4 shapes: peak RSS 1068/1042 MB with two, 883/873 MB with one, measured when each
   * still loaded a graph per frame shape) and saves no CPU (35.2/43.3 s with two, 33.5/40.3 s with
   * one). On 2 cores the OCR, face and decode threads keep the other core busy, and the worker's
   * second job slot adds a second video's work. @default 1
   */
  workers: number;
  /** Ask MoveNet when CenterNet half sees a person (a candidate below `personScore`). @default true */
  bodyFallback: boolean;
  /** Folder with centernet.json and movenet-lightning.json (default: the `@vladmandic/human` package's). */
  modelDir?: string;
  /** Folder with the tfjs-backend-wasm .wasm files (default: the package's dist/). */
  wasmDir?: string;
}

export const DEFAULT_OBJECTS: ObjectsOptions = {
  minScore: 0.3,
  personScore: 0.35,
  bodyScore: 0.55,
  skipDuplicates: true,
  keepAliveSec: 0,
  maxChangedCells: 8,
  ignoreInsidePeople: false,
  inputLongSide: 512,
  bodyFallback: true,
  workers: 1,
};

/** A frame stands for the time around it, never for more than this either side. */
const MAX_HOLD_SEC = 3;
/** Frames decoded by one ffmpeg run: what has arrived from the visual stage, up to this many. */
const BATCH_FRAMES = 64;
const INIT_TIMEOUT_MS = 60_000;
/**
 * Near-duplicate test on a GRID×GRID grey grid: at most MAX_CHANGED_CELLS cells (under 1 % of the
 * picture) changed by more than CELL_DELTA grey levels. Measured on the clips: no thresholded result
 * changed, while a bottle taken away (~30 cells) or a person walking in still counts as a change.
 */
const GRID = 32;
const CELL_DELTA = 12;
const MAX_CHANGED_CELLS = 8;
/**
 * MoveNet is a one-person pose model that finds "a body" in a dog seen from behind (0.55 on
 * skateboarding-dog). Its person is dropped when CenterNet sees an animal over the same place.
 */
const ANIMALS = new Set([
  'bird',
  'cat',
  'dog',
  'horse',
  'sheep',
  'cow',
  'elephant',
  'bear',
  'zebra',
  'giraffe',
  'teddy bear',
]);
const ANIMAL_VETO_SCORE = 0.2;
/**
 * A frame may show a face (FrameHints, for the faces stage) when CenterNet has any person candidate
 * (its raw floor is 0.15) or MoveNet a body at this score: far below what counts as a person here,
 * as a face missed is worse than a face model run for nothing.
 */
const FACE_HINT_BODY_SCORE = 0.25;

/** Where the models and wasm binaries are: one place, so a packaged build can redirect them. */
export function objectModelPaths(): { modelDir: string; wasmDir: string } {
  const require = createRequire(import.meta.url);
  // Their export maps hide package.json; the Node entry files are one folder below the roots.
  const human = dirname(dirname(require.resolve('@vladmandic/human')));
  return { modelDir: join(human, 'models'), wasmDir: dirname(require.resolve('@tensorflow/tfjs-backend-wasm')) };
}

/** The detector's output for one frame, before thresholds. */
export interface RawFrame {
  t: number;
  shot: number;
  /** The detector did not run: the frame looked like the last detected frame of its shot. */
  reused: boolean;
  objects: RawDetection[];
  body: { score: number; box: Box } | null;
}

/** What is believed to be in one frame. */
export interface FrameObjects {
  t: number;
  shot: number;
  objects: RawDetection[];
}

export interface DetectStats {
  detected: number;
  reused: number;
  /** Time in CenterNet and in MoveNet (ms, summed), and how often MoveNet ran. */
  objectMs: number;
  bodyMs: number;
  bodyRuns: number;
}

export class ObjectsAnalyzer implements Analyzer {
  readonly stage = 'analyzing:objects';
  readonly kinds = ['object'] as const;
  readonly info = { kind: 'objects', name: 'centernet-coco (tfjs-wasm, @vladmandic/human)' };
  /** ~0.15 s per detected frame, a frame every 3 s: about twice the visual stage's time. */
  readonly weight = 2;
  /** Works on about one core, on the frames as the visual stage picks them. */
  readonly concurrent = true;
  readonly readsFrames = true;
  /** The faces stage skips frames where no person can be. */
  readonly tellsPersons = true;

  private readonly opts: ObjectsOptions;
  private detectors: Detector[] = [];
  /** Detections under way (the worker's job slots share this analyzer and its model threads). */
  private running = 0;

  constructor(opts: Partial<ObjectsOptions> = {}) {
    this.opts = { ...DEFAULT_OBJECTS, ...opts };
  }

  async run(ctx: StageContext): Promise<StageResult> {
    const started = performance.now();
    const stream = framesOf(ctx);
    const { frames: raw, stats } = await this.detect(ctx, stream, {
      // Faces are looked for only where a person may be (--analysis-effort balanced).
      onFrame: ctx.hints ? (r) => ctx.hints!.setPerson(r.t, mayShowFace(r)) : undefined,
    });
    const perFrame = raw.map((r) => applyThresholds(r, this.opts));
    const segments = mergeSpans(
      perFrame,
      shotBounds(ctx.segments(['shot']), ctx.video.durationSec),
      ctx.video.durationSec,
    );
    // The stream keeps every frame: read again from the start for their paths.
    const sampled: SampledFrame[] = [];
    for await (const batch of stream.batches()) sampled.push(...batch);
    const shots = shotBounds(ctx.segments(['shot']), ctx.video.durationSec);
    const boxesAt = new Map(perFrame.map((f) => [f.t, f.objects.map((o) => o.box)]));
    const background = await paintSegments(ctx, segments, sampled, {
      shots: [...shots.values()],
      boxesAt: (t) => boxesAt.get(t) ?? [],
    });
    const labels: Record<string, number> = {};
    for (const s of segments) labels[s.text] = Math.max(labels[s.text] ?? 0, Number(s.extra?.max_count ?? 0));
    return {
      segments,
      summary: {
        engine: this.info.name,
        frames: raw.length,
        detected: stats.detected,
        reused: stats.reused,
        /** Time in CenterNet and in MoveNet (ms, summed over the detected frames), and MoveNet's runs. */
        object_ms: Math.round(stats.objectMs),
        body_ms: Math.round(stats.bodyMs),
        body_runs: stats.bodyRuns,
        spans: segments.length,
        /** Most of each label seen in one frame. */
        labels,
        ms_per_frame: raw.length ? Math.round((performance.now() - started) / raw.length) : 0,
        /** Each shot's colours outside the detected things (walls, sky, background). */
        background,
      },
    };
  }

  /**
   * Runs the models over the frames (as they arrive, when given a stream), reusing results for
   * near-duplicates; no thresholds.
   */
  async detect(
    ctx: Pick<StageContext, 'ffmpeg' | 'signal' | 'progress' | 'video'>,
    input: FrameStream | SampledFrame[],
    opts: { alwaysBody?: boolean; onFrame?: (r: RawFrame) => void } = {},
  ): Promise<{ frames: RawFrame[]; stats: DetectStats }> {
    this.running++;
    try {
      return await this.detectAll(ctx, input, opts);
    } finally {
      this.running--;
    }
  }

  private async detectAll(
    ctx: Pick<StageContext, 'ffmpeg' | 'signal' | 'progress' | 'video'>,
    input: FrameStream | SampledFrame[],
    opts: { alwaysBody?: boolean; onFrame?: (r: RawFrame) => void },
  ): Promise<{ frames: RawFrame[]; stats: DetectStats }> {
    const stats: DetectStats = { detected: 0, reused: 0, objectMs: 0, bodyMs: 0, bodyRuns: 0 };
    const stream = Array.isArray(input) ? FrameStream.of(input) : input;
    ctx.signal.throwIfAborted();
    // MoveNet is a second opinion on a person CenterNet half sees (see workers/objects-worker.ts).
    const bodyBelow = opts.alwaysBody ? Infinity : this.opts.bodyFallback ? this.opts.personScore : -1;
    // Frames are judged in order (a near-duplicate reuses the last detected frame of its shot,
    // judged from pixels alone); detections run on whichever detector is free.
    const results: Promise<RawFrame>[] = [];
    let anchor: { shot: number; t: number; grid: Float32Array; result: Promise<RawFrame> } | null = null;
    const { keepAliveSec, maxChangedCells, ignoreInsidePeople } = this.opts;
    /** Whether the frame looks like the anchor: the same picture, or changed only inside its people. */
    const looksLike = async (grid: Float32Array, a: NonNullable<typeof anchor>): Promise<boolean> => {
      if (isNearDuplicate(grid, a.grid, maxChangedCells)) return true;
      if (!ignoreInsidePeople) return false;
      // One detector: its last detection (the anchor's) is done by the time the next may start anyway.
      const people = applyThresholds(await a.result, this.opts).objects.filter((d) => d.label === 'person');
      return (
        people.length > 0 &&
        isUnchangedOutside(
          grid,
          a.grid,
          people.map((d) => d.box),
        )
      );
    };
    let size: [number, number] | null = null;
    let pool: DetectorPool | null = null;
    let done = 0;
    const duration = ctx.video.durationSec;
    const settle = (r: RawFrame, t: number) => {
      done++;
      opts.onFrame?.(r);
      ctx.progress(stream.ended ? done / stream.count : duration > 0 ? Math.min(0.99, t / duration) : 0);
      return r;
    };
    try {
      for await (const batch of stream.batches(BATCH_FRAMES)) {
        // The models load once per process, on the first frame (none for a video without frames).
        pool ??= new DetectorPool(await this.ensureDetectors(ctx.signal));
        size ??= inputSize(jpegSize(batch[0]!.path), this.opts.inputLongSide);
        const [width, height] = size;
        let k = 0;
        for await (const rgb of decodeSampledFrames(ctx, batch, {
          width,
          height,
          stage: 'objects',
          scaleFlags: 'area',
          // A detection in flight cannot be interrupted inside wasm: the worker goes, unless another
          // video uses it (then this one's detection in flight finishes and is dropped).
          onAbort: () => this.running <= 1 && this.dropDetectors(ctx.signal.reason),
        })) {
          ctx.signal.throwIfAborted();
          const f = batch[k++]!;
          const grid = greyGrid(rgb, width, height);
          let result: Promise<RawFrame>;
          if (
            this.opts.skipDuplicates &&
            anchor &&
            anchor.shot === f.shot &&
            // The keep-alive looks again only where something changed since, however little (a
            // parked camera's still picture has nothing new to show every minute).
            (keepAliveSec <= 0 || f.t - anchor.t < keepAliveSec || isNearDuplicate(grid, anchor.grid, 0)) &&
            (await looksLike(grid, anchor))
          ) {
            stats.reused++;
            result = anchor.result.then((r) => settle({ ...r, t: f.t, shot: f.shot, reused: true }, f.t));
          } else {
            const detector = await pool.acquire();
            result = detector
              .detect(rgb, width, height, bodyBelow)
              .then((d) => {
                stats.detected++;
                stats.objectMs += d.objectMs;
                stats.bodyMs += d.bodyMs;
                if (d.bodyMs > 0) stats.bodyRuns++;
                return settle({ t: f.t, shot: f.shot, reused: false, objects: d.objects, body: d.body }, f.t);
              })
              .finally(() => pool!.release(detector));
            anchor = { shot: f.shot, t: f.t, grid, result };
          }
          // Awaited all together below; a failure must not go unhandled before then.
          result.catch(() => {});
          results.push(result);
        }
      }
      return { frames: await Promise.all(results), stats };
    } catch (e) {
      // Detections still in flight are of no use now.
      await Promise.allSettled(results);
      throw e;
    }
  }

  close(): void {
    this.dropDetectors(new Error('the objects analyzer was closed'));
  }

  private async ensureDetectors(signal: AbortSignal): Promise<Detector[]> {
    // A worker that crashed stays dead; start fresh ones.
    this.detectors = this.detectors.filter((d) => d.alive);
    const defaults = this.opts.modelDir && this.opts.wasmDir ? null : objectModelPaths();
    while (this.detectors.length < Math.max(1, this.opts.workers)) {
      this.detectors.push(
        new Detector({
          modelDir: this.opts.modelDir ?? defaults!.modelDir,
          wasmDir: this.opts.wasmDir ?? defaults!.wasmDir,
        }),
      );
    }
    const ds = this.detectors;
    const onAbort = () => this.running <= 1 && this.dropDetectors(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      await Promise.all(ds.map((d) => d.ready));
    } catch (e) {
      if (this.detectors === ds) this.dropDetectors(e);
      throw e;
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
    return ds;
  }

  private dropDetectors(reason: unknown): void {
    for (const d of this.detectors)
      d.terminate(reason instanceof Error ? reason : new Error('object detection was cancelled'));
    this.detectors = [];
  }
}

/** Hands out free detectors, one request each at a time. */
class DetectorPool {
  private readonly free: Detector[];
  private readonly waiting: ((d: Detector) => void)[] = [];

  constructor(detectors: Detector[]) {
    this.free = [...detectors];
  }

  acquire(): Promise<Detector> {
    const d = this.free.pop();
    return d ? Promise.resolve(d) : new Promise((resolve) => this.waiting.push(resolve));
  }

  release(d: Detector): void {
    const next = this.waiting.shift();
    if (next) next(d);
    else this.free.push(d);
  }
}

interface Detection {
  objects: RawDetection[];
  body: { score: number; box: Box } | null;
  objectMs: number;
  bodyMs: number;
}

/** The Worker that runs the models, one request at a time. */
class Detector extends ModelWorker<DetectorResponse, Detection> {
  constructor(paths: { modelDir: string; wasmDir: string }) {
    super(OBJECTS_WORKER, {
      name: 'object detector',
      task: 'object detection',
      init: paths,
      startTimeoutMs: INIT_TIMEOUT_MS,
      result: (m) => ({ objects: m.objects, body: m.body, objectMs: m.objectMs, bodyMs: m.bodyMs }),
    });
  }

  detect(rgb: Uint8Array, width: number, height: number, bodyBelow: number): Promise<Detection> {
    return this.request((id) => {
      // The pixels are not used here afterwards: move the buffer instead of copying it.
      const buf =
        rgb.byteOffset === 0 && rgb.byteLength === rgb.buffer.byteLength
          ? (rgb.buffer as ArrayBuffer)
          : (rgb.slice().buffer as ArrayBuffer);
      return {
        message: { type: 'detect', id, rgb: buf, width, height, bodyBelow } satisfies DetectorRequest,
        transfer: [buf],
      };
    });
  }
}

/** The detector's input for frames of w×h: the same aspect, the given long side, both sides multiples of 32 (the model's stride). */
export function inputSize([w, h]: [number, number], longSide = DEFAULT_OBJECTS.inputLongSide): [number, number] {
  const short = (long: number, other: number) => Math.max(32, Math.round((longSide * other) / long / 32) * 32);
  return w >= h ? [longSide, short(w, h)] : [short(h, w), longSide];
}

/** Mean luma of each cell of a GRID×GRID grid over an RGB picture. */
export function greyGrid(rgb: Uint8Array, width: number, height: number): Float32Array {
  const sums = new Float32Array(GRID * GRID);
  const counts = new Uint32Array(GRID * GRID);
  const col = new Uint16Array(width);
  for (let x = 0; x < width; x++) col[x] = Math.floor((x * GRID) / width);
  for (let y = 0; y < height; y++) {
    const row = Math.floor((y * GRID) / height) * GRID;
    let p = y * width * 3;
    for (let x = 0; x < width; x++, p += 3) {
      const cell = row + col[x]!;
      sums[cell]! += 0.299 * rgb[p]! + 0.587 * rgb[p + 1]! + 0.114 * rgb[p + 2]!;
      counts[cell]!++;
    }
  }
  for (let i = 0; i < sums.length; i++) sums[i] = sums[i]! / Math.max(1, counts[i]!);
  return sums;
}

export function isNearDuplicate(a: Float32Array, b: Float32Array, maxChanged = MAX_CHANGED_CELLS): boolean {
  let changed = 0;
  for (let i = 0; i < a.length; i++) if (Math.abs(a[i]! - b[i]!) > CELL_DELTA && ++changed > maxChanged) return false;
  return true;
}

/**
 * Whether two grey grids differ in at most MAX_CHANGED_CELLS cells outside the given boxes (each
 * grown by one cell): what moves inside them (a face talking) is not counted.
 */
export function isUnchangedOutside(a: Float32Array, b: Float32Array, boxes: readonly Box[]): boolean {
  const inside = new Uint8Array(GRID * GRID);
  for (const [x, y, w, h] of boxes) {
    const x0 = Math.max(0, Math.floor(x * GRID) - 1);
    const y0 = Math.max(0, Math.floor(y * GRID) - 1);
    const x1 = Math.min(GRID - 1, Math.ceil((x + w) * GRID));
    const y1 = Math.min(GRID - 1, Math.ceil((y + h) * GRID));
    for (let gy = y0; gy <= y1; gy++) for (let gx = x0; gx <= x1; gx++) inside[gy * GRID + gx] = 1;
  }
  let changed = 0;
  for (let i = 0; i < a.length; i++)
    if (!inside[i] && Math.abs(a[i]! - b[i]!) > CELL_DELTA && ++changed > MAX_CHANGED_CELLS) return false;
  return true;
}

/**
 * Keeps what is believable: labels other than person at `minScore`; persons from CenterNet at
 * `personScore`; when CenterNet has none, one person if MoveNet's body score reaches `bodyScore`
 * and no animal was detected where that body is.
 */
export function applyThresholds(
  r: RawFrame,
  o: Pick<ObjectsOptions, 'minScore' | 'personScore' | 'bodyScore'>,
): FrameObjects {
  const objects = r.objects.filter((d) => d.score >= (d.label === 'person' ? o.personScore : o.minScore));
  const body = r.body;
  if (body && body.score >= o.bodyScore && !objects.some((d) => d.label === 'person')) {
    const animal = r.objects.some(
      (d) => ANIMALS.has(d.label) && d.score >= ANIMAL_VETO_SCORE && overlap(d.box, body.box) >= 0.3,
    );
    if (!animal) objects.push({ label: 'person', score: body.score, box: body.box });
  }
  return { t: r.t, shot: r.shot, objects };
}

/** Whether a face may be in the frame: any person candidate, or a body MoveNet half sees. */
export function mayShowFace(r: Pick<RawFrame, 'objects' | 'body'>): boolean {
  return r.objects.some((d) => d.label === 'person') || (r.body?.score ?? 0) >= FACE_HINT_BODY_SCORE;
}

/** Intersection over the smaller box's area. */
export function overlap(a: Box, b: Box): number {
  const w = Math.min(a[0] + a[2], b[0] + b[2]) - Math.max(a[0], b[0]);
  const h = Math.min(a[1] + a[3], b[1] + b[3]) - Math.max(a[1], b[1]);
  const smaller = Math.min(a[2] * a[3], b[2] * b[3]);
  return w > 0 && h > 0 && smaller > 0 ? (w * h) / smaller : 0;
}

/**
 * Each run of a label over consecutive frames becomes one segment. A frame stands for the time
 * from halfway to its neighbours, or to its shot's edge for the first and last frame of a shot.
 */
export function mergeSpans(frames: FrameObjects[], shots: Map<number, ShotBound>, duration: number): NewSegment[] {
  const end = duration > 0 ? duration : Infinity;
  const spanOf = frames.map((f, i) => {
    const shot = shots.get(f.shot);
    const prev = frames[i - 1];
    const next = frames[i + 1];
    const a = prev && prev.shot === f.shot ? (prev.t + f.t) / 2 : (shot?.start ?? 0);
    const b = next && next.shot === f.shot ? (f.t + next.t) / 2 : (shot?.end ?? end);
    return { from: round3(Math.max(a, f.t - MAX_HOLD_SEC, 0)), to: round3(Math.min(b, f.t + MAX_HOLD_SEC, end)) };
  });
  const found = (i: number, label: string) => frames[i]!.objects.filter((o) => o.label === label);
  const segments: NewSegment[] = [];
  const emit = (label: string, run: number[]) => {
    let best = run[0]!;
    let sum = 0;
    let maxCount = 0;
    const counts: [number, number][] = [];
    for (const i of run) {
      const here = found(i, label);
      sum += Math.max(...here.map((o) => o.score));
      counts.push([frames[i]!.t, here.length]);
      maxCount = Math.max(maxCount, here.length);
      // The best frame shows the most of the label, then the most confidently.
      if (
        here.length > found(best, label).length ||
        (here.length === found(best, label).length && topScore(here) > topScore(found(best, label)))
      )
        best = i;
    }
    segments.push({
      kind: 'object',
      start: spanOf[run[0]!]!.from,
      end: spanOf[run[run.length - 1]!]!.to,
      text: label,
      confidence: round3(sum / run.length),
      extra: {
        label,
        max_count: maxCount,
        counts,
        best_t: frames[best]!.t,
        boxes: found(best, label).map((o) => ({ score: o.score, box: o.box })),
      },
    });
  };
  for (const label of new Set(frames.flatMap((f) => f.objects.map((o) => o.label)))) {
    let run: number[] = [];
    for (let i = 0; i < frames.length; i++) {
      if (found(i, label).length) run.push(i);
      else if (run.length) {
        emit(label, run);
        run = [];
      }
    }
    if (run.length) emit(label, run);
  }
  return segments.sort((x, y) => x.start - y.start || x.text.localeCompare(y.text));
}

const topScore = (ds: RawDetection[]) => Math.max(0, ...ds.map((d) => d.score));
const round3 = (x: number) => Math.round(x * 1000) / 1000;

/** Objects and people (COCO classes), with their colours. */
/** What each --analysis-effort sets (see effort.ts); thorough: the defaults, as before efforts. */
export const OBJECTS_EFFORT: Record<AnalysisEffort, Partial<ObjectsOptions>> = {
  thorough: { keepAliveSec: 0, ignoreInsidePeople: false, maxChangedCells: 8, inputLongSide: 512 },
  balanced: { keepAliveSec: 60, ignoreInsidePeople: false, maxChangedCells: 8, inputLongSide: 512 },
  fast: { keepAliveSec: 120, ignoreInsidePeople: true, maxChangedCells: 16, inputLongSide: 384 },
};

export const objectsDescriptor = defineAnalyzer({
  name: 'objects',
  options: EFFORT_OPTIONS,
  engines: {},
  listed: true,
  live: true,
  reanalyzable: true,
  create: (c, setup) =>
    new ObjectsAnalyzer({
      ...OBJECTS_EFFORT[c.analysisEffort],
      modelDir: setup.assets?.objects?.modelDir,
      wasmDir: setup.assets?.objects?.wasmDir,
    }),
});
