/** Arithmetic on the int8 rows of the vector store (vectors.ts) and its IVF lists (ivf.ts). */
import { DOTS_WASM } from './dots-wasm';

/** The length of an int8 row (1 for an all-zero row, so dividing by it is safe). */
export function norm(row: Int8Array): number {
  let s = 0;
  for (let j = 0; j < row.length; j++) s += row[j]! * row[j]!;
  return Math.sqrt(s) || 1;
}

/** q · rows[o .. o + dims): four sums, about twice as fast as one in JavaScriptCore. */
export function dot(q: Float32Array, rows: Int8Array, o: number, dims: number): number {
  let a = 0;
  let b = 0;
  let c = 0;
  let d = 0;
  let i = 0;
  for (; i + 3 < dims; i += 4) {
    a += q[i]! * rows[o + i]!;
    b += q[i + 1]! * rows[o + i + 1]!;
    c += q[i + 2]! * rows[o + i + 2]!;
    d += q[i + 3]! * rows[o + i + 3]!;
  }
  for (; i < dims; i++) a += q[i]! * rows[o + i]!;
  return a + b + c + d;
}

/**
 * `dot` of one query with many rows at once, in WebAssembly SIMD (src/search/dots.wat): the same
 * sums in the same order, so the same scores bit for bit, about twice as fast. The rows are copied
 * into the module's memory per call (a list of the IVF index at a time). Where WebAssembly SIMD is
 * not available, the JavaScript loop computes them.
 */
export class Dots {
  private readonly wasm: { memory: WebAssembly.Memory; dots: (...a: number[]) => void } | null;
  private dims = 0;
  private q: Float32Array = new Float32Array(0);
  private out = new Float64Array(0);

  constructor() {
    let wasm: typeof this.wasm = null;
    try {
      const inst = new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(DOTS_WASM, 'base64')), {});
      wasm = inst.exports as unknown as NonNullable<typeof this.wasm>;
    } catch {
      wasm = null; // no SIMD here: the JavaScript loop
    }
    this.wasm = wasm;
  }

  /** The query of the following calls. */
  setQuery(q: Float32Array): void {
    this.q = q;
    this.dims = q.length;
    if (this.wasm) {
      this.reserve(0);
      new Float64Array(this.wasm.memory.buffer, 0, this.dims).set(q);
    }
  }

  /** q · each of the first `n` rows of `rows`; valid until the next call. */
  scores(rows: Int8Array, n: number): Float64Array {
    const dims = this.dims;
    if (!this.wasm) {
      if (this.out.length < n) this.out = new Float64Array(Math.max(n, this.out.length * 2));
      for (let r = 0; r < n; r++) this.out[r] = dot(this.q, rows, r * dims, dims);
      return this.out;
    }
    const at = align(dims * 8);
    const outAt = align(at + n * dims);
    this.reserve(outAt + n * 8);
    const mem = this.wasm.memory.buffer;
    new Int8Array(mem, at, n * dims).set(rows.subarray(0, n * dims));
    this.wasm.dots(0, at, n, dims, outAt);
    return new Float64Array(mem, outAt, n);
  }

  /** Grows the module's memory to hold `bytes` (the query stays where it is). */
  private reserve(bytes: number): void {
    const mem = this.wasm!.memory;
    const need = Math.max(bytes, align(this.dims * 8));
    if (mem.buffer.byteLength < need) mem.grow(Math.ceil((need - mem.buffer.byteLength) / 65_536));
  }
}

const align = (n: number) => Math.ceil(n / 16) * 16;

/** int8 components of `v` (scaled so that its largest magnitude is 127), as stored. */
export function quantize(v: Float32Array): Int8Array {
  let max = 0;
  for (let i = 0; i < v.length; i++) max = Math.max(max, Math.abs(v[i]!));
  const out = new Int8Array(v.length);
  if (max === 0) return out;
  const s = 127 / max;
  for (let i = 0; i < v.length; i++) out[i] = Math.round(v[i]! * s);
  return out;
}
