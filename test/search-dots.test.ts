/**
 * The IVF search's dot products in WebAssembly (src/search/dots.wat, embedded in dots-wasm.ts): the
 * embedded module is the compiled source, and its scores are the JavaScript `dot` bit for bit, for
 * any number of dimensions and rows, as its memory grows.
 */
import { describe, expect, test } from 'bun:test';
import { compileDots } from '../scripts/embed-wasm';
import { DOTS_WASM } from '../src/search/dots-wasm';
import { Dots, dot } from '../src/search/int8';

let seed = 5;
const rand = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
};

function rowsOf(n: number, dims: number): Int8Array {
  const rows = new Int8Array(n * dims);
  for (let i = 0; i < rows.length; i++) rows[i] = Math.floor(rand() * 256) - 128;
  return rows;
}

function queryOf(dims: number): Float32Array {
  const q = Float32Array.from({ length: dims }, () => (rand() - 0.5) / 5);
  let n = 0;
  for (const x of q) n += x * x;
  return q.map((x) => x / Math.sqrt(n));
}

describe('the dot products of the IVF search', () => {
  test('the embedded module is dots.wat compiled (npm run wasm:build after changing it)', async () => {
    expect(Buffer.from(await compileDots()).toString('base64')).toBe(DOTS_WASM);
  });

  test('are the JavaScript dot products bit for bit, for any size, as the memory grows', () => {
    const dots = new Dots();
    // 512 (the embedder's), sizes that are not a multiple of 16 or 4, and lists from 1 to 9,000 rows
    // (more than one page of memory: it grows between calls).
    for (const [dims, sizes] of [
      [512, [1, 2, 7, 300, 9_000, 40]],
      [100, [3, 17]],
      [67, [5, 1_000]],
      [3, [4]],
    ] as [number, number[]][]) {
      const q = queryOf(dims);
      dots.setQuery(q);
      for (const n of sizes) {
        // A list holds more room than rows: only the first n count.
        const rows = rowsOf(n + 3, dims);
        const got = [...dots.scores(rows, n)];
        const want = Array.from({ length: n }, (_, r) => dot(q, rows, r * dims, dims));
        expect(got).toEqual(want);
        expect(got.every((s, r) => Object.is(s, want[r]))).toBe(true);
      }
    }
  });
});
