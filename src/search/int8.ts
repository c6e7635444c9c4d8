/** Arithmetic on the int8 rows of the vector store (vectors.ts) and its IVF lists (ivf.ts). */

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
