/**
 * Faces on the sampled frames (`face` segments): BlazeFace + FaceMesh alignment + FaceRes
 * descriptors, shipped inside `@vladmandic/human` and run on the tfjs wasm backend in a Worker.
 *
 * Faces too small or too blurred to identify are dropped; the rest are tracked through their shot
 * (a face in the next frame of the shot whose descriptor is close enough continues the track), so
 * one appearance is one segment whose extra holds the mean descriptor, the best frame and its box.
 * Grouping appearances into people happens per index when the stage is stored (people/).
 */
import { framesOf, type Analyzer, type NewSegment, type StageContext, type StageResult } from '../contracts';
import { defineAnalyzer } from '../descriptor';
import { EFFORT_OPTIONS, type AnalysisEffort } from '../effort';
import { ModelWorker } from '../engines/model-worker';
import { cosine, groupVideoFaces, normalise } from '../../people/group';
import { decodeSampledFrames, jpegSize, shotBounds, type ShotBound } from './frames';
import { greyGrid, isUnchangedOutside, objectModelPaths, type Box } from './objects';
import { FACES_WORKER } from '../workers/entries';

/** The face pipeline's model files (with the weight shards each names), in Human's models folder. */
export const FACE_MODELS = ['blazeface.json', 'facemesh.json', 'faceres.json'];

export interface RawFace {
  score: number;
  box: Box;
  descriptor: number[];
  /** Set by the analyzer: see sharpness(). */
  sharpness?: number;
}

export type FaceRequest =
  | { type: 'init'; modelDir: string; wasmDir: string }
  | { type: 'detect'; id: number; rgb: ArrayBuffer; width: number; height: number };
export type FaceResponse =
  | { type: 'ready'; backend: string }
  | { type: 'result'; id: number; faces: RawFace[] }
  | { type: 'error'; id?: number; message: string };

export interface FacesOptions {
  /** Folder with blazeface/facemesh/faceres .json+.bin (default: the `@vladmandic/human` package's). */
  modelDir?: string;
  /** Folder with the tfjs-backend-wasm .wasm files. */
  wasmDir?: string;
  /**
   * Smallest face kept, as its box's shorter side in frame pixels. Measured on GRID scaled down:
   * at 64–71 px a face still matches its full-size self (cosine 0.87–0.93, others ≤ 0.43); smaller
   * ones were not measurable here (BlazeFace rarely finds them), so 40 px keeps a margin.
   * @default 40
   */
  minFacePx: number;
  /**
   * Sharpness a face needs: variance of the Laplacian over its box sampled on a 64×64 grid.
   * Measured on GRID blurred with ffmpeg gblur: sharp faces 880–9100; sigma 2 → 210–340 (still
   * cosine 0.92–0.94 to itself); sigma 4 → 67–104 (0.63–0.78: no longer reliably the same person);
   * sigma 8 → 23 (0.22). 150 keeps the first and drops the rest.
   * @default 150
   */
  minSharpness: number;
  /** BlazeFace score a face needs (its own default is 0.5; below that hands and ears appear). @default 0.6 */
  minScore: number;
  /**
   * A frame of the same shot whose picture changed only inside the last read frame's faces (a face
   * talking), or nowhere, keeps that frame's faces without running the models. @default false
   */
  skipUnchanged: boolean;
  /**
   * No face is looked for in a frame where the objects stage of the same run sees no person
   * (ctx.hints), unless the last read frame of the shot had a face. @default false
   */
  personGate: boolean;
  /** With skipUnchanged: the models read a frame again once the last read one is this old (s); 0: never. @default 0 */
  keepAliveSec: number;
}

/** Thorough: every sampled frame is read; --analysis-effort sets the rest (effort.ts). */
export const DEFAULT_FACES: FacesOptions = {
  minFacePx: 40,
  minSharpness: 150,
  minScore: 0.6,
  skipUnchanged: false,
  personGate: false,
  keepAliveSec: 0,
};

/**
 * When a face in the next frame of a shot continues a track: its descriptor is at least
 * TRACK_NEAR_SIMILARITY (cosine) from the track's last one and its box overlaps the last box, or
 * at least TRACK_SIMILARITY wherever it is. Measured per frame at 1 fps: one laughing, moving
 * person within a shot (birthday) 0.57–0.97; different people (GRID, across clips) at most 0.64.
 */
const TRACK_NEAR_SIMILARITY = 0.45;
const TRACK_SIMILARITY = 0.7;
const TRACK_MIN_IOU = 0.2;
const MAX_HOLD_SEC = 3;
const BATCH_FRAMES = 32;
const INIT_TIMEOUT_MS = 60_000;

export class FacesAnalyzer implements Analyzer {
  readonly stage = 'analyzing:faces';
  readonly kinds = ['face'] as const;
  readonly info = { kind: 'faces', name: 'blazeface+faceres (tfjs-wasm, @vladmandic/human)' };
  /** About half the objects analyzer's core-seconds over the shared clips (bench/faces.ts: 6.4 vs 13.8). */
  readonly weight = 1;
  readonly concurrent = true;
  readonly readsFrames = true;

  private readonly opts: FacesOptions;
  private worker: FaceWorker | null = null;
  /** Videos being analysed now (the worker's job slots share this analyzer and its model thread). */
  private running = 0;

  constructor(opts: Partial<FacesOptions> = {}) {
    this.opts = { ...DEFAULT_FACES, ...opts };
  }

  async run(ctx: StageContext): Promise<StageResult> {
    this.running++;
    try {
      return await this.runOne(ctx);
    } finally {
      this.running--;
    }
  }

  private async runOne(ctx: StageContext): Promise<StageResult> {
    const started = performance.now();
    const stream = framesOf(ctx);
    const found: FrameFaces[] = [];
    let dropped = 0;
    let size: [number, number] | null = null;
    const o = this.opts;
    /** The last frame the models read, per shot: its picture (grey grid) and its faces. */
    let last: { shot: number; t: number; grid: Float32Array | null; faces: RawFace[] } | null = null;
    let analysed = 0;
    let reused = 0;
    let noPerson = 0;
    for await (const batch of stream.batches(BATCH_FRAMES)) {
      ctx.signal.throwIfAborted();
      const w = await this.ensureWorker(ctx.signal);
      size ??= jpegSize(batch[0]!.path);
      const [width, height] = size;
      let k = 0;
      for await (const rgb of decodeSampledFrames(ctx, batch, { width, height, stage: 'faces' })) {
        const f = batch[k++]!;
        const grid = o.skipUnchanged ? greyGrid(rgb, width, height) : null;
        const prev = last?.shot === f.shot ? last : null;
        let faces: RawFace[];
        if (
          grid &&
          prev?.grid &&
          (o.keepAliveSec <= 0 || f.t - prev.t < o.keepAliveSec) &&
          isUnchangedOutside(
            grid,
            prev.grid,
            prev.faces.map((face) => face.box),
          )
        ) {
          faces = prev.faces;
          reused++;
        } else if (o.personGate && !prev?.faces.length && (await ctx.hints?.person(f.t)) === false) {
          faces = [];
          noPerson++;
        } else {
          const grey = greyOf(rgb);
          faces = (await w.detect(rgb, width, height, ctx.signal, () => this.running <= 1)).filter((face) => {
            face.sharpness = Math.round(sharpness(grey, width, height, face.box));
            const keep =
              face.score >= o.minScore &&
              Math.min(face.box[2] * width, face.box[3] * height) >= o.minFacePx &&
              face.sharpness >= o.minSharpness;
            if (!keep) dropped++;
            return keep;
          });
          analysed++;
          last = { shot: f.shot, t: f.t, grid, faces };
        }
        found.push({ t: f.t, shot: f.shot, faces });
        ctx.progress(
          stream.ended ? found.length / stream.count : Math.min(0.99, f.t / Math.max(1, ctx.video.durationSec)),
        );
      }
    }
    const segments = trackFaces(
      found,
      shotBounds(ctx.segments(['shot']), ctx.video.durationSec),
      ctx.video.durationSec,
    );
    return {
      segments,
      // The index's people learn this video's faces in the transaction that stores them.
      apply: async (tx) => {
        await groupVideoFaces(tx, ctx.video.id);
      },
      summary: {
        engine: this.info.name,
        frames: found.length,
        /** Frames the models read; the others kept the faces of an unchanged frame, or showed no person. */
        analysed_frames: analysed,
        reused_frames: reused,
        no_person_frames: noPerson,
        faces: found.reduce((n, f) => n + f.faces.length, 0),
        dropped,
        appearances: segments.length,
        ms_per_frame: found.length ? Math.round((performance.now() - started) / found.length) : 0,
      },
    };
  }

  close(): void {
    this.worker?.terminate(new Error('the faces analyzer was closed'));
    this.worker = null;
  }

  private async ensureWorker(signal: AbortSignal): Promise<FaceWorker> {
    if (this.worker?.alive) return this.worker;
    // In the executable both are given (extracted files); node_modules is looked up only without them.
    const defaults = this.opts.modelDir && this.opts.wasmDir ? null : objectModelPaths();
    const w = new FaceWorker({
      modelDir: this.opts.modelDir ?? defaults!.modelDir,
      wasmDir: this.opts.wasmDir ?? defaults!.wasmDir,
    });
    this.worker = w;
    // Another video waiting for the same thread keeps it.
    const onAbort = () => this.running <= 1 && w.terminate(new Error('face detection was cancelled'));
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      await w.ready;
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
    return w;
  }
}

export interface FrameFaces {
  t: number;
  shot: number;
  faces: RawFace[];
}

/**
 * Within each shot, a face continues the track whose last descriptor is most similar (at least
 * TRACK_SIMILARITY), each track taking at most one face per frame; each track becomes one segment.
 */
export function trackFaces(frames: FrameFaces[], shots: Map<number, ShotBound>, duration: number): NewSegment[] {
  const end = duration > 0 ? duration : Infinity;
  interface Track {
    shot: number;
    first: number;
    last: number;
    sum: Float64Array;
    lastDescriptor: number[];
    lastBox: Box;
    best: { t: number; score: number; box: Box; sharpness?: number };
    n: number;
  }
  const spanOf = (i: number) => {
    const f = frames[i]!;
    const shot = shots.get(f.shot);
    const prev = frames[i - 1];
    const next = frames[i + 1];
    const a = prev && prev.shot === f.shot ? (prev.t + f.t) / 2 : (shot?.start ?? 0);
    const b = next && next.shot === f.shot ? (f.t + next.t) / 2 : (shot?.end ?? end);
    return { from: round3(Math.max(a, f.t - MAX_HOLD_SEC, 0)), to: round3(Math.min(b, f.t + MAX_HOLD_SEC, end)) };
  };
  const done: Track[] = [];
  let open: Track[] = [];
  for (let i = 0; i < frames.length; i++) {
    const f = frames[i]!;
    // A track lives in one shot and only across consecutive frames.
    const alive = open.filter((tr) => tr.shot === f.shot && tr.last === i - 1);
    done.push(...open.filter((tr) => !alive.includes(tr)));
    open = alive;
    const taken = new Set<Track>();
    const faces = [...f.faces].sort((a, b) => b.score - a.score);
    for (const face of faces) {
      let best: Track | null = null;
      let bestSim = -1;
      for (const tr of open) {
        if (taken.has(tr)) continue;
        const s = cosine(tr.lastDescriptor, face.descriptor);
        const ok = s >= TRACK_SIMILARITY || (s >= TRACK_NEAR_SIMILARITY && iou(tr.lastBox, face.box) >= TRACK_MIN_IOU);
        if (ok && s > bestSim) [best, bestSim] = [tr, s];
      }
      if (!best) {
        best = {
          shot: f.shot,
          first: i,
          last: i,
          sum: new Float64Array(face.descriptor.length),
          lastDescriptor: face.descriptor,
          lastBox: face.box,
          best: { t: f.t, score: face.score, box: face.box, sharpness: face.sharpness },
          n: 0,
        };
        open.push(best);
      }
      taken.add(best);
      best.last = i;
      best.lastDescriptor = face.descriptor;
      best.lastBox = face.box;
      const unit = normalise(face.descriptor);
      for (let k = 0; k < unit.length; k++) best.sum[k]! += unit[k]!;
      best.n++;
      if (
        face.score > best.best.score ||
        (face.score === best.best.score && (face.sharpness ?? 0) > (best.best.sharpness ?? 0))
      )
        best.best = { t: f.t, score: face.score, box: face.box, sharpness: face.sharpness };
    }
  }
  done.push(...open);
  return done
    .map(
      (tr): NewSegment => ({
        kind: 'face',
        start: spanOf(tr.first).from,
        end: spanOf(tr.last).to,
        text: 'face',
        confidence: round3(tr.best.score),
        extra: {
          frames: tr.n,
          best_t: tr.best.t,
          box: tr.best.box,
          sharpness: tr.best.sharpness ?? null,
          descriptor: Array.from(normalise(Array.from(tr.sum)), (x) => Math.round(x * 1e5) / 1e5),
        },
      }),
    )
    .sort((a, b) => a.start - b.start);
}

function iou(a: Box, b: Box): number {
  const w = Math.min(a[0] + a[2], b[0] + b[2]) - Math.max(a[0], b[0]);
  const h = Math.min(a[1] + a[3], b[1] + b[3]) - Math.max(a[1], b[1]);
  if (w <= 0 || h <= 0) return 0;
  const i = w * h;
  return i / (a[2] * a[3] + b[2] * b[3] - i);
}

function greyOf(rgb: Uint8Array): Uint8Array {
  const g = new Uint8Array(rgb.length / 3);
  for (let i = 0, p = 0; i < g.length; i++, p += 3) g[i] = (77 * rgb[p]! + 150 * rgb[p + 1]! + 29 * rgb[p + 2]!) >> 8;
  return g;
}

/** Variance of the 4-neighbour Laplacian over the face box, sampled on a 64×64 grid. */
export function sharpness(grey: Uint8Array, width: number, height: number, box: Box): number {
  const N = 64;
  const x0 = box[0] * width;
  const y0 = box[1] * height;
  const sx = (box[2] * width) / N;
  const sy = (box[3] * height) / N;
  const at = (gx: number, gy: number) => {
    const x = Math.min(width - 1, Math.max(0, Math.round(x0 + gx * sx)));
    const y = Math.min(height - 1, Math.max(0, Math.round(y0 + gy * sy)));
    return grey[y * width + x]!;
  };
  let sum = 0;
  let sum2 = 0;
  let n = 0;
  for (let gy = 1; gy < N - 1; gy++) {
    for (let gx = 1; gx < N - 1; gx++) {
      const l = at(gx - 1, gy) + at(gx + 1, gy) + at(gx, gy - 1) + at(gx, gy + 1) - 4 * at(gx, gy);
      sum += l;
      sum2 += l * l;
      n++;
    }
  }
  return n ? sum2 / n - (sum / n) ** 2 : 0;
}

/** The Worker that runs the face models, one request at a time. */
class FaceWorker extends ModelWorker<FaceResponse, RawFace[]> {
  constructor(paths: { modelDir: string; wasmDir: string }) {
    super(FACES_WORKER, {
      name: 'face detector',
      task: 'face detection',
      init: paths,
      startTimeoutMs: INIT_TIMEOUT_MS,
      result: (m) => m.faces,
    });
  }

  /**
   * A stop ends the thread (a detection cannot be interrupted inside wasm) when `alone` says no
   * other video uses it; otherwise the detection in flight finishes and its result is dropped.
   */
  detect(
    rgb: Uint8Array,
    width: number,
    height: number,
    signal: AbortSignal,
    alone: () => boolean = () => true,
  ): Promise<RawFace[]> {
    signal.throwIfAborted();
    const onAbort = () => alone() && this.terminate(new Error('face detection was cancelled'));
    signal.addEventListener('abort', onAbort, { once: true });
    return this.request((id) => {
      const copy = rgb.slice().buffer as ArrayBuffer;
      return { message: { type: 'detect', id, rgb: copy, width, height } satisfies FaceRequest, transfer: [copy] };
    }).finally(() => signal.removeEventListener('abort', onAbort));
  }
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

/** Faces, grouped into the people of an index. */
/** What each --analysis-effort sets (see effort.ts); thorough: the defaults, as before efforts. */
export const FACES_EFFORT: Record<AnalysisEffort, Partial<FacesOptions>> = {
  thorough: { skipUnchanged: false, personGate: false, keepAliveSec: 0 },
  balanced: { skipUnchanged: true, personGate: true, keepAliveSec: 30 },
  fast: { skipUnchanged: true, personGate: true, keepAliveSec: 120 },
};

export const facesDescriptor = defineAnalyzer({
  name: 'faces',
  options: EFFORT_OPTIONS,
  engines: {},
  listed: true,
  live: true,
  reanalyzable: false,
  create: (c, setup) =>
    new FacesAnalyzer({
      ...FACES_EFFORT[c.analysisEffort],
      modelDir: setup.assets?.objects?.modelDir,
      wasmDir: setup.assets?.objects?.wasmDir,
    }),
});
