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
  return q.uy === 0 && q.vx === 0 ? toTensorAxisAligned(src, W, H, norm, q) : toTensorAny(src, W, H, norm, q);
}

/** toTensor for any quad (rotated crops): the sample position is worked out per pixel. */
export function toTensorAny(src: Image, W: number, H: number, norm: Norm, q: Quad): Float32Array {
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
 * toTensor for an upright quad (the detector's whole frame, level text crops): a column's sample
 * position does not depend on the row, nor a row's on the column, so both are worked out once, in
 * the same arithmetic as toTensorAny (`t * q.vx` and `s * q.uy` are exactly 0 here), and every
 * value comes out bit for bit the same at about a third of the cost (the detector's 640×352 input:
 * ~9 ms → ~3 ms a frame).
 */
function toTensorAxisAligned(src: Image, W: number, H: number, norm: Norm, q: Quad): Float32Array {
  const { data, width: w, height: h } = src;
  const plane = W * H;
  const out = new Float32Array(3 * plane);
  const a0 = 1 / (255 * norm.std[0]);
  const a1 = 1 / (255 * norm.std[1]);
  const a2 = 1 / (255 * norm.std[2]);
  const b0 = -norm.mean[0] / norm.std[0];
  const b1 = -norm.mean[1] / norm.std[1];
  const b2 = -norm.mean[2] / norm.std[2];
  const t0 = 0.5 / H;
  const s0 = 0.5 / W;
  const cx0 = new Int32Array(W);
  const cx1 = new Int32Array(W);
  const cwx = new Float64Array(W);
  for (let x = 0; x < W; x++) {
    const s = (x + 0.5) / W;
    const fx = clamp(q.ox + s * q.ux + t0 * q.vx - 0.5, 0, w - 1);
    const x0 = fx | 0;
    cx0[x] = x0 * 4;
    cx1[x] = Math.min(w - 1, x0 + 1) * 4;
    cwx[x] = fx - x0;
  }
  for (let y = 0; y < H; y++) {
    const t = (y + 0.5) / H;
    const fy = clamp(q.oy + s0 * q.uy + t * q.vy - 0.5, 0, h - 1);
    const y0 = fy | 0;
    const y1 = Math.min(h - 1, y0 + 1);
    const wy = fy - y0;
    const r0 = y0 * w * 4;
    const r1 = y1 * w * 4;
    for (let x = 0, o = y * W; x < W; x++, o++) {
      const wx = cwx[x]!;
      const p00 = r0 + cx0[x]!;
      const p01 = r0 + cx1[x]!;
      const p10 = r1 + cx0[x]!;
      const p11 = r1 + cx1[x]!;
      // Channel 0 is blue (RGBA offset 2), as in toTensorAny.
      const v0 =
        (data[p00 + 2]! * (1 - wx) + data[p01 + 2]! * wx) * (1 - wy) +
        (data[p10 + 2]! * (1 - wx) + data[p11 + 2]! * wx) * wy;
      const v1 =
        (data[p00 + 1]! * (1 - wx) + data[p01 + 1]! * wx) * (1 - wy) +
        (data[p10 + 1]! * (1 - wx) + data[p11 + 1]! * wx) * wy;
      const v2 = (data[p00]! * (1 - wx) + data[p01]! * wx) * (1 - wy) + (data[p10]! * (1 - wx) + data[p11]! * wx) * wy;
      out[o] = v0 * a0 + b0;
      out[plane + o] = v1 * a1 + b1;
      out[2 * plane + o] = v2 * a2 + b2;
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
  // The source columns of thumbnail column c are [start[c], start[c + 1]) (col[] never decreases).
  const start = new Uint32Array(width + 1);
  for (let c = 0, x = 0; c <= width; c++) {
    while (x < img.width && col[x]! < c) x++;
    start[c] = x;
  }
  const perRow = new Uint32Array(height);
  const sums = new Uint32Array(width * height);
  const d = img.data;
  for (let y = 0; y < img.height; y++) {
    const r = ((y * height) / img.height) | 0;
    perRow[r]!++;
    const row = r * width;
    const base = y * img.width * 4;
    // Integer luma, BT.601 weights × 256, summed over the columns' run (exact: integers).
    for (let c = 0; c < width; c++) {
      let sum = 0;
      for (let x = start[c]!, p = base + x * 4, end = start[c + 1]!; x < end; x++, p += 4)
        sum += 77 * d[p]! + 150 * d[p + 1]! + 29 * d[p + 2]!;
      sums[row + c]! += sum;
    }
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

/**
 * Largest mean absolute luma difference between two same-size pictures over square cells of half
 * the rectangle's height (about a character's width) inside [x0, y0, x1, y1]: one changed letter of
 * a line moves its cell by tens of grey levels, JPEG noise on unchanged text by a few.
 */
export function regionDifference(a: Image, b: Image, rect: [number, number, number, number]): number {
  if (a.width !== b.width || a.height !== b.height) return 255;
  const x0 = clamp(Math.floor(rect[0]), 0, a.width);
  const y0 = clamp(Math.floor(rect[1]), 0, a.height);
  const x1 = clamp(Math.ceil(rect[2]), 0, a.width);
  const y1 = clamp(Math.ceil(rect[3]), 0, a.height);
  if (x1 <= x0 || y1 <= y0) return 0;
  const cell = Math.max(4, Math.round((y1 - y0) / 2));
  const cols = Math.ceil((x1 - x0) / cell);
  const sums = new Float64Array(cols);
  const counts = new Uint32Array(cols);
  let max = 0;
  for (let cy = y0; cy < y1; cy += cell) {
    sums.fill(0);
    counts.fill(0);
    for (let y = cy; y < Math.min(y1, cy + cell); y++) {
      for (let x = x0, p = (y * a.width + x0) * 4; x < x1; x++, p += 4) {
        const la = 77 * a.data[p]! + 150 * a.data[p + 1]! + 29 * a.data[p + 2]!;
        const lb = 77 * b.data[p]! + 150 * b.data[p + 1]! + 29 * b.data[p + 2]!;
        const c = ((x - x0) / cell) | 0;
        sums[c]! += Math.abs(la - lb);
        counts[c]!++;
      }
    }
    for (let c = 0; c < cols; c++) if (counts[c]) max = Math.max(max, sums[c]! / counts[c]! / 256);
  }
  return max;
}

/** Intersection over union of two axis-aligned [x0, y0, x1, y1] rectangles. */
export function rectIou(a: [number, number, number, number], b: [number, number, number, number]): number {
  const w = Math.min(a[2], b[2]) - Math.max(a[0], b[0]);
  const h = Math.min(a[3], b[3]) - Math.max(a[1], b[1]);
  if (w <= 0 || h <= 0) return 0;
  const i = w * h;
  return i / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - i);
}
