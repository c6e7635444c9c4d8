/**
 * The pixel and tensor geometry of the OCR engine (engines/paddle-ocr.ts): rotated boxes as quads,
 * box scores on the detector's probability map, bilinear sampling into model tensors, and the small
 * grey thumbnails the OCR stage compares to skip near-duplicate frames. Pure functions.
 */
const THUMB_WIDTH = 320;
const THUMB_CELL = 8;

/** Per channel (B, G, R) `value / 255` normalised as `(v - mean) / std`. */
export interface Norm {
  mean: [number, number, number];
  std: [number, number, number];
}

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
export function rectScore(
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

export const clamp = (x: number, lo: number, hi: number) => Math.max(lo, Math.min(hi, x));
