/**
 * The approximate nearest-neighbour index of one media index: an inverted file (IVF) over its int8
 * vectors. The vectors are grouped in lists around centroids (a sample of the vectors, refined by
 * one k-means step); a question is compared with every centroid, and only the vectors of its
 * nearest lists are compared exactly. At 100 h of bench data that reads ~5 % of the vectors.
 *
 * Why not HNSW: usearch's HNSW graph (int8 or float32, 16 links) found only 57-77 % of the exact
 * top 10 on bench/inquire's data, whose sentences form tight clusters of near-duplicates (every
 * "scene change" sentence of a kind, transcript lines sharing a clause): the graph's links stay
 * inside a cluster and its greedy search cannot leave it. Lists around centroids are what such
 * clusters are good for, and their search is exact inside the lists it reads.
 *
 * - Kept up to date incrementally: a video whose vectors changed (invalidate) has its ids removed
 *   from their lists and its new vectors added at the next search (to the nearest centroid). When
 *   the index has grown fourfold since its centroids were chosen, they are chosen again.
 * - A vector finds its list through a small HNSW graph over the centroids (usearch): they are few
 *   and spread out, which is what such a graph is good at.
 * - Held in memory (int8: one byte per dimension) and rebuilt from the database after a restart; a
 *   large first build runs in the background in slices, and until it is complete search answers
 *   null and the caller searches exactly.
 */
import { sql } from 'drizzle-orm';
import { Index, MetricKind, ScalarKind } from 'usearch';
import type { Db } from '../storage/db';
import type { Video } from '../storage/schema';

/** Lists per vector: about 2·√n lists, so that a list holds about √n / 2 vectors. */
const LISTS_PER_ROOT = 2;
/** Lists read per question: this share of them, and at least MIN_PROBE. */
const PROBE_SHARE = 0.06;
const MIN_PROBE = 24;
/** Vectors read from the database per slice (each slice is a short block of the thread). */
const SLICE = 5_000;
/** A search that would have to add more vectors than this first searches exactly and builds in the background. */
const INLINE_ADD_MAX = 10_000;

interface Range {
  first: number;
  last: number;
  count: number;
}

interface Entry {
  row: Int8Array;
  norm: number;
  list: number;
}

export class IvfIndex {
  readonly dims: number;
  private readonly vectors = new Map<number, Entry>();
  private centroids: Float32Array[] = [];
  private centroidGraph: Index | null = null;
  private lists: number[][] = [];
  /** Vectors when the centroids were chosen. */
  private clusteredAt = 0;
  private readonly videos = new Map<string, Range>();
  private readonly unverified = new Set<string>();
  private building: Promise<void> | null = null;

  constructor(private readonly o: { db: Db; dims: number }) {
    this.dims = o.dims;
  }

  invalidate(videoId: string): void {
    if (this.videos.has(videoId)) this.unverified.add(videoId);
  }

  get size(): number {
    return this.vectors.size;
  }

  /**
   * The `k` nearest vectors of `videos` (all of this media index) to the normalised query, as
   * [vector id, cosine], best first; null when the index is not ready for them (search exactly).
   */
  async search(videos: Video[], q: Float32Array, k: number): Promise<[number, number][] | null> {
    if (this.building) return null;
    const pending = this.pendingWork(videos);
    if (pending > INLINE_ADD_MAX) {
      this.building = this.bringUpToDate(videos).finally(() => {
        this.building = null;
      });
      return null;
    }
    if (pending > 0) await this.bringUpToDate(videos);
    if (this.vectors.size === 0) return [];
    const inScope = this.inScope(videos);
    // The nearest lists, by their centroids.
    const probe = Math.min(this.centroids.length, Math.max(MIN_PROBE, Math.ceil(this.centroids.length * PROBE_SHARE)));
    const byCentroid = this.centroids.map((c, i): [number, number] => [i, dotF(q, c)]);
    byCentroid.sort((a, b) => b[1] - a[1]);
    const top: [number, number][] = [];
    let worst = -Infinity;
    for (let p = 0; p < probe; p++) {
      for (const id of this.lists[byCentroid[p]![0]]!) {
        if (inScope && !inScope(id)) continue;
        const e = this.vectors.get(id)!;
        const c = dotRow(q, e.row) / e.norm;
        if (top.length >= k && c <= worst) continue;
        top.push([id, c]);
        if (top.length > k * 2) {
          top.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
          top.length = k;
          worst = top[k - 1]![1];
        }
      }
    }
    return top.sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, k);
  }

  /** Completes the index for these videos. */
  async ready(videos: Video[]): Promise<void> {
    while (this.building) await this.building;
    await this.bringUpToDate(videos);
  }

  /** A filter for the vector ids of the scope, or null when the scope is the whole index. */
  private inScope(videos: Video[]): ((id: number) => boolean) | null {
    const ids = new Set(videos.map((v) => v.id));
    if ([...this.videos.keys()].every((id) => ids.has(id))) return null;
    const ranges = [...this.videos]
      .filter(([id, r]) => ids.has(id) && r.count > 0)
      .map(([, r]): [number, number] => [r.first, r.last])
      .sort((a, b) => a[0] - b[0]);
    return (id) => inRanges(ranges, id);
  }

  /** Vectors to add before `videos` are all searchable (0 when up to date); settles unchanged videos. */
  private pendingWork(videos: Video[]): number {
    const check = videos.filter((v) => !this.videos.has(v.id) || this.unverified.has(v.id)).map((v) => v.id);
    // Videos gone from the index (deleted) are only ever unverified: check them too, to drop their vectors.
    for (const id of this.unverified) if (!check.includes(id)) check.push(id);
    if (check.length === 0) return 0;
    const now = this.rangesInDb(check);
    let pending = 0;
    for (const id of check) {
      const have = this.videos.get(id);
      const db = now.get(id);
      if (have && db && same(have, db)) this.unverified.delete(id);
      else if (have && !db) {
        this.remove(id, have);
        this.unverified.delete(id);
      } else if (db) pending += db.count;
      else if (!have) this.videos.set(id, { first: 0, last: -1, count: 0 });
    }
    return pending;
  }

  private async bringUpToDate(videos: Video[]): Promise<void> {
    const check = [...new Set([...videos.map((v) => v.id), ...this.unverified])];
    const now = this.rangesInDb(check);
    let added = 0;
    for (const id of check) {
      const have = this.videos.get(id);
      const db = now.get(id);
      if (have && db && same(have, db)) {
        this.unverified.delete(id);
        continue;
      }
      if (have) this.remove(id, have);
      if (db) added += await this.load(id, db);
      else this.videos.set(id, { first: 0, last: -1, count: 0 });
      this.unverified.delete(id);
    }
    if (added > 0 && (this.centroids.length === 0 || this.vectors.size > this.clusteredAt * 4)) await this.cluster();
  }

  /** Reads a video's vectors; they join the nearest list (or wait for the first clustering). */
  private async load(videoId: string, range: Range): Promise<number> {
    let after = range.first - 1;
    let n = 0;
    for (;;) {
      const rows = this.o.db.all<{ id: number; vector: Uint8Array }>(
        sql`SELECT id, vector FROM segment_vectors WHERE video_id = ${videoId} AND id > ${after} ORDER BY id LIMIT ${SLICE}`,
      );
      if (rows.length === 0) break;
      for (const r of rows) {
        const row = new Int8Array(r.vector.byteLength);
        row.set(new Int8Array(r.vector.buffer, r.vector.byteOffset, r.vector.byteLength));
        const e: Entry = { row, norm: norm(row), list: -1 };
        if (this.centroids.length) {
          e.list = this.nearestList(row, e.norm);
          this.lists[e.list]!.push(r.id);
        }
        this.vectors.set(r.id, e);
      }
      n += rows.length;
      after = rows.at(-1)!.id;
      if (rows.length === SLICE) await Bun.sleep(0); // let requests in between slices
    }
    this.videos.set(videoId, range);
    return n;
  }

  private remove(videoId: string, r: Range): void {
    const gone = new Set<number>();
    for (let id = r.first; id <= r.last && r.count > 0; id++) {
      const e = this.vectors.get(id);
      if (!e) continue;
      this.vectors.delete(id);
      gone.add(e.list);
    }
    for (const l of gone) if (l >= 0) this.lists[l] = this.lists[l]!.filter((id) => this.vectors.has(id));
    this.videos.delete(videoId);
  }

  /**
   * Chooses the centroids: an even sample of the vectors, moved once to the mean of the vectors
   * nearest each (one k-means step), then every vector joins its nearest list.
   */
  private async cluster(): Promise<void> {
    const ids = [...this.vectors.keys()];
    const want = Math.max(1, Math.round(LISTS_PER_ROOT * Math.sqrt(ids.length)));
    const step = ids.length / want;
    this.centroids = Array.from({ length: want }, (_, i) => unit(this.vectors.get(ids[Math.floor(i * step)]!)!.row));
    this.indexCentroids();
    for (let pass = 0; pass < 2; pass++) {
      this.lists = this.centroids.map(() => []);
      let i = 0;
      for (const [id, e] of this.vectors) {
        e.list = this.nearestList(e.row, e.norm);
        this.lists[e.list]!.push(id);
        if (++i % SLICE === 0) await Bun.sleep(0);
      }
      if (pass === 1) break;
      // One k-means step: each centroid to the (normalised) mean of its list.
      this.centroids = this.lists.map((list, c) => {
        if (list.length === 0) return this.centroids[c]!;
        const sum = new Float32Array(this.dims);
        for (const id of list) {
          const e = this.vectors.get(id)!;
          for (let d = 0; d < this.dims; d++) sum[d]! += e.row[d]! / e.norm;
        }
        return unit(sum);
      });
      this.indexCentroids();
    }
    this.clusteredAt = this.vectors.size;
  }

  private indexCentroids(): void {
    this.centroidGraph = null;
    if (this.centroids.length < 64) return; // few: compared one by one
    const g = new Index({
      dimensions: this.dims,
      metric: MetricKind.Cos,
      quantization: ScalarKind.F32,
      connectivity: 16,
      expansion_add: 128,
      expansion_search: 64,
      multi: false,
    });
    const all = new Float32Array(this.centroids.length * this.dims);
    this.centroids.forEach((c, i) => all.set(c, i * this.dims));
    g.add(
      BigUint64Array.from(this.centroids, (_, i) => BigInt(i)),
      all,
      1,
    );
    this.centroidGraph = g;
  }

  private nearestList(row: Int8Array, rowNorm: number): number {
    if (this.centroidGraph) return Number(this.centroidGraph.search(Float32Array.from(row), 1, 1).keys[0]!);
    let best = 0;
    let bestScore = -Infinity;
    for (let c = 0; c < this.centroids.length; c++) {
      const s = dotRow(this.centroids[c]!, row) / rowNorm;
      if (s > bestScore) [best, bestScore] = [c, s];
    }
    return best;
  }

  private rangesInDb(videoIds: string[]): Map<string, Range> {
    const rows = this.o.db.all<{ video_id: string; first: number; last: number; n: number }>(
      sql`SELECT video_id, min(id) AS first, max(id) AS last, count(*) AS n FROM segment_vectors
          WHERE video_id IN (SELECT value FROM json_each(${JSON.stringify(videoIds)})) GROUP BY video_id`,
    );
    return new Map(rows.map((r) => [r.video_id, { first: r.first, last: r.last, count: r.n }]));
  }
}

const same = (a: Range, b: Range) => a.first === b.first && a.last === b.last && a.count === b.count;

function norm(row: Int8Array): number {
  let s = 0;
  for (let j = 0; j < row.length; j++) s += row[j]! * row[j]!;
  return Math.sqrt(s) || 1;
}

function unit(v: ArrayLike<number>): Float32Array {
  let s = 0;
  for (let j = 0; j < v.length; j++) s += v[j]! * v[j]!;
  const n = Math.sqrt(s) || 1;
  return Float32Array.from(v, (x) => x / n);
}

function dotRow(q: Float32Array, row: Int8Array): number {
  let a = 0;
  let b = 0;
  let c = 0;
  let d = 0;
  let i = 0;
  for (; i + 3 < q.length; i += 4) {
    a += q[i]! * row[i]!;
    b += q[i + 1]! * row[i + 1]!;
    c += q[i + 2]! * row[i + 2]!;
    d += q[i + 3]! * row[i + 3]!;
  }
  for (; i < q.length; i++) a += q[i]! * row[i]!;
  return a + b + c + d;
}

function dotF(q: Float32Array, c: Float32Array): number {
  let a = 0;
  for (let i = 0; i < q.length; i++) a += q[i]! * c[i]!;
  return a;
}

function inRanges(ranges: [number, number][], key: number): boolean {
  let lo = 0;
  let hi = ranges.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const [a, b] = ranges[mid]!;
    if (key < a) hi = mid - 1;
    else if (key > b) lo = mid + 1;
    else return true;
  }
  return false;
}
