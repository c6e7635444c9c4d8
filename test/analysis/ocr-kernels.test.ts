/**
 * The OCR stage's per-frame pixel passes (issue 35): the faster detector-input and thumbnail code
 * must give exactly what the plain per-pixel code gave (the OCR findings depend on every value).
 * The reference implementations below are the code as it was before; the comparison is bit for bit
 * on random pictures of several shapes, crops and scales.
 */
import { describe, expect, test } from 'bun:test';
import {
  thumbnail,
  toTensor,
  toTensorAny,
  type Image,
  type Norm,
  type Quad,
} from '../../src/analysis/engines/ocr-geometry';

const DET: Norm = { mean: [0.485, 0.456, 0.406], std: [0.229, 0.224, 0.225] };
const REC: Norm = { mean: [0.5, 0.5, 0.5], std: [0.5, 0.5, 0.5] };

/** A deterministic noise picture (RGBA). */
function picture(width: number, height: number, seed: number): Image {
  const data = new Uint8Array(width * height * 4);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < data.length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    data[i] = (x >>> 0) & 255;
  }
  return { data, width, height };
}

/** The thumbnail as it was computed before: one typed-array update per source pixel. */
function thumbnailBefore(img: Image, maxWidth = 320) {
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
    for (let x = 0, p = y * img.width * 4; x < img.width; x++, p += 4)
      sums[row + col[x]!]! += 77 * d[p]! + 150 * d[p + 1]! + 29 * d[p + 2]!;
  }
  const data = new Uint8Array(width * height);
  for (let r = 0; r < height; r++)
    for (let c = 0; c < width; c++)
      data[r * width + c] = Math.round(sums[r * width + c]! / 256 / Math.max(1, perRow[r]! * perCol[c]!));
  return { data, width, height };
}

/** The first index where two arrays differ, -1 when they are the same (NaN never occurs here). */
function firstDifference(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) return 0;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i] || Object.is(a[i], -0) !== Object.is(b[i], -0)) return i;
  return -1;
}

describe('OCR pixel passes give the same values as before', () => {
  test("the detector's whole-frame input, at the sizes the stage uses, is bit for bit the per-pixel one", () => {
    const cases: [number, number, number, number][] = [
      // frame w, h → detector W, H: a 960×540 kept frame at 640 and at the probes' 320; portrait; small; upscaled.
      [960, 540, 640, 352],
      [960, 540, 320, 192],
      [304, 540, 352, 640],
      [204, 360, 192, 352],
      [426, 240, 640, 352],
      [17, 9, 32, 32],
    ];
    for (const [k, [w, h, W, H]] of cases.entries()) {
      const img = picture(w, h, 7 + k);
      const whole: Quad = { ox: 0, oy: 0, ux: w, uy: 0, vx: 0, vy: h };
      const fast = toTensor(img, W, H, DET);
      expect(fast.length).toBe(3 * W * H);
      expect(firstDifference(fast, toTensorAny(img, W, H, DET, whole))).toBe(-1);
    }
  });

  test('upright text crops (fractional corners, partly outside the frame) are bit for bit the per-pixel ones', () => {
    const img = picture(640, 360, 99);
    const crops: Quad[] = [
      { ox: 10.25, oy: 20.75, ux: 200.5, uy: 0, vx: 0, vy: 31.3 },
      { ox: -3.5, oy: 340.2, ux: 120, uy: 0, vx: 0, vy: 30 },
      { ox: 600.9, oy: -2.1, ux: 80.4, uy: 0, vx: 0, vy: 12.6 },
      { ox: 0, oy: 0, ux: 640, uy: -0, vx: -0, vy: 360 },
    ];
    for (const q of crops) {
      const W = Math.max(8, Math.round((q.ux / q.vy) * 48));
      expect(firstDifference(toTensor(img, W, 48, REC, q), toTensorAny(img, W, 48, REC, q))).toBe(-1);
    }
  });

  test('a rotated crop still takes the per-pixel path (and differs from an upright one)', () => {
    const img = picture(320, 180, 5);
    const rotated: Quad = { ox: 50, oy: 40, ux: 100, uy: 12, vx: -3, vy: 25 };
    expect(firstDifference(toTensor(img, 96, 48, REC, rotated), toTensorAny(img, 96, 48, REC, rotated))).toBe(-1);
    const upright: Quad = { ...rotated, uy: 0, vx: 0 };
    expect(firstDifference(toTensor(img, 96, 48, REC, upright), toTensor(img, 96, 48, REC, rotated))).not.toBe(-1);
  });

  test('the grey thumbnail is the same as the per-pixel one, for wide, narrow, odd and tiny frames', () => {
    for (const [k, [w, h, max]] of (
      [
        [960, 540, 320],
        [1920, 1080, 320],
        [641, 359, 320],
        [204, 360, 320],
        [333, 17, 320],
        [5, 3, 2],
      ] as const
    ).entries()) {
      const img = picture(w, h, 31 + k);
      const got = thumbnail(img, max);
      const want = thumbnailBefore(img, max);
      expect([got.width, got.height]).toEqual([want.width, want.height]);
      expect(firstDifference(got.data, want.data)).toBe(-1);
    }
  });
});
