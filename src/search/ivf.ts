/**
 * The approximate nearest-neighbour index of one media index: an inverted file (IVF) over its int8
 * vectors. The vectors are grouped in lists around centroids (k-means on a sample); a question is
 * compared with every centroid, and only the vectors of its nearest lists are compared exactly.
 *
 * What a question costs grows slower than the index: there are about 2·√n lists of about √n / 2
 * vectors, and a question reads about PROBE_ROOT·√lists of them (at least MIN_READ vectors), so it
 * reads on the order of n^¾ vectors: ~4 % at 100 h of bench data, ~2 % at 1,000 h.
 *
 * Each list keeps its rows in one contiguous Int8Array (with their ids and 1/length beside them), so
 * that reading a list is one tight loop over memory, with no object per vector.
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
 * - A vector finds its list through a small HNSW graph over the centroids (usearch), many vectors
 *   per call: the centroids are few and spread out, which is what such a graph is good at.
 * - Held in memory (int8: one byte per dimension) and rebuilt from the database after a restart; a
 *   large build runs in the background in slices, and until it is complete search answers null and
 *   the caller searches exactly. `state` tells whether it is ready and how long the build took.
 * - With a `file`, the centroids and which list each vector joined are saved after each clustering,
 *   so a restart only reads the vectors back into their lists (choosing the lists and placing every
 *   vector was most of the build). The file is a hint: a vector it does not name (added since, or
 *   another database) joins its nearest list as usual, so a stale file costs recall, never answers.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { Index, MetricKind, ScalarKind } from 'usearch';
import type { Catalog } from '../storage/catalog';
import { vectorRanges, vectorSlice } from '../storage/repositories/vectors';
import type { Video } from '../storage/rows';
import { Dots, norm } from './int8';

/** The dot products of a search (one JavaScript thread answers: one is enough). */
const DOTS = new Dots();

/** Lists per vector: about 2·√n lists, so that a list holds about √n / 2 vectors. */
const LISTS_PER_ROOT = 2;
/** Lists read per question: PROBE_ROOT·√lists (so the share read falls as the index grows)… */
export const PROBE_ROOT = 1.25;
/** …and at least this many vectors of the scope (small indexes: enough lists for a good top k). */
export const MIN_READ = 4_096;
/** k-means runs on a sample of this many vectors per list (then every vector joins its nearest list). */
const SAMPLE_PER_LIST = 32;
/** k-means steps on the sample. */
const KMEANS_STEPS = 3;
/** Vectors read from the database (or assigned to lists) per slice; requests get in between slices. */
const SLICE = 5_000;
/** A search that would have to add more vectors than this first searches exactly and builds in the background. */
const INLINE_ADD_MAX = 10_000;

interface Range {
  first: number;
  last: number;
  count: number;
}

/** Vectors stored contiguously: ids, int8 rows, 1 / each row's length. */
class Rows {
  ids: Float64Array;
  rows: Int8Array;
  inv: Float32Array;
  n = 0;

  constructor(
    readonly dims: number,
    capacity = 16,
  ) {
    this.ids = new Float64Array(capacity);
    this.rows = new Int8Array(capacity * dims);
    this.inv = new Float32Array(capacity);
  }

  push(id: number, row: Int8Array, inv: number): void {
    if (this.n === this.ids.length) this.grow(Math.max(16, this.n * 2));
    this.ids[this.n] = id;
    this.rows.set(row, this.n * this.dims);
    this.inv[this.n] = inv;
    this.n++;
  }

  row(i: number): Int8Array {
    return this.rows.subarray(i * this.dims, (i + 1) * this.dims);
  }

  /** Drops the vectors whose id is in one of the (sorted, disjoint) ranges; keeps the others in order. */
  removeIn(ranges: [number, number][]): number {
    let w = 0;
    const d = this.dims;
    for (let r = 0; r < this.n; r++) {
      if (inRanges(ranges, this.ids[r]!)) continue;
      if (w !== r) {
        this.ids[w] = this.ids[r]!;
        this.inv[w] = this.inv[r]!;
        this.rows.copyWithin(w * d, r * d, (r + 1) * d);
      }
      w++;
    }
    const dropped = this.n - w;
    this.n = w;
    return dropped;
  }

  private grow(capacity: number): void {
    const ids = new Float64Array(capacity);
    ids.set(this.ids.subarray(0, this.n));
    const rows = new Int8Array(capacity * this.dims);
    rows.set(this.rows.subarray(0, this.n * this.dims));
    const inv = new Float32Array(capacity);
    inv.set(this.inv.subarray(0, this.n));
    [this.ids, this.rows, this.inv] = [ids, rows, inv];
  }
}

export interface IvfState {
  /** Vectors held. */
  vectors: number;
  lists: number;
  /** A background build (or rebuild) is running: searches meanwhile answer null (exact search). */
  building: boolean;
  /** How long the last build that had to cluster took, in ms (null: none yet). */
  lastBuildMs: number | null;
}

export class IvfIndex {
  readonly dims: number;
  /** Vectors not in a list yet (before the first clustering). */
  private loose: Rows;
  private lists: Rows[] = [];
  /** The centroids, one after another (unit length). */
  private centroids = new Float32Array(0);
  private centroidGraph: Index | null = null;
  private count = 0;
  /** Vectors when the centroids were chosen. */
  private clusteredAt = 0;
  private readonly videos = new Map<string, Range>();
  private readonly unverified = new Set<string>();
  private building: Promise<void> | null = null;
  private lastBuildMs: number | null = null;
  private readonly probeRoot: number;
  private readonly minRead: number;

  /** The saved list of each vector id (sorted ids, their lists), while a restart reads the vectors. */
  private hint: { ids: Float64Array; lists: Uint32Array } | null = null;

  constructor(
    private readonly o: { catalog: Catalog; dims: number; probeRoot?: number; minRead?: number; file?: string },
  ) {
    this.dims = o.dims;
    this.loose = new Rows(o.dims);
    this.probeRoot = o.probeRoot ?? PROBE_ROOT;
    this.minRead = o.minRead ?? MIN_READ;
  }

  invalidate(videoId: string): void {
    if (this.videos.has(videoId)) this.unverified.add(videoId);
  }

  get size(): number {
    return this.count;
  }

  get state(): IvfState {
    return {
      vectors: this.count,
      lists: this.lists.length,
      building: this.building !== null,
      lastBuildMs: this.lastBuildMs,
    };
  }

  /** Lists a question reads (at least; more while fewer than MIN_READ vectors of the scope were read). */
  get probeLists(): number {
    return Math.min(this.lists.length, Math.ceil(this.probeRoot * Math.sqrt(this.lists.length)));
  }

  /**
   * The `k` nearest vectors of `videos` (all of this media index) to the normalised query, as
   * [vector id, cosine], best first; null when the index is not ready for them (search exactly).
   */
  async search(videos: Video[], q: Float32Array, k: number): Promise<[number, number][] | null> {
    if (this.building) return null;
    const pending = await this.pendingWork(videos);
    if (this.building) return null;
    if (pending > INLINE_ADD_MAX) {
      this.build(videos);
      return null;
    }
    // A few vectors to add: added now (as a build, so that a search meanwhile does not add them too).
    if (pending > 0) await this.build(videos);
    if (this.count === 0) return [];
    return this.probe(this.inScope(videos), q, k).items;
  }

  /** The search itself, with what it read (for tests and the bench). */
  probe(
    inScope: ((id: number) => boolean) | null,
    q: Float32Array,
    k: number,
  ): { items: [number, number][]; read: number } {
    const dims = this.dims;
    const L = this.lists.length;
    // The lists by their centroid's similarity to the question.
    const byCentroid = new Float32Array(L);
    for (let c = 0; c < L; c++) byCentroid[c] = dotCentroid(q, this.centroids, c * dims, dims);
    const order = Array.from({ length: L }, (_, i) => i).sort((a, b) => byCentroid[b]! - byCentroid[a]!);
    const want = this.probeLists;
    const top = new Top(k);
    let read = 0;
    let scoped = 0;
    DOTS.setQuery(q);
    // The loose vectors (none once clustered) first, then the nearest lists.
    for (let p = -1; p < L && (p < want || scoped < this.minRead); p++) {
      const list = p < 0 ? this.loose : this.lists[order[p]!]!;
      const { ids, rows, inv } = list;
      read += list.n;
      if (list.n === 0) continue;
      const dots = DOTS.scores(rows, list.n);
      for (let r = 0; r < list.n; r++) {
        if (inScope && !inScope(ids[r]!)) continue;
        scoped++;
        top.offer(ids[r]!, dots[r]! * inv[r]!);
      }
    }
    return { items: top.sorted(), read };
  }

  /** Completes the index for these videos (waits for a build running now, or builds). */
  async ready(videos: Video[]): Promise<void> {
    for (;;) {
      while (this.building) await this.building;
      const pending = await this.pendingWork(videos);
      if (this.building) continue; // one started while the ranges were read
      if (pending > 0) await this.build(videos);
      return;
    }
  }

  /** A filter for the vector ids of the scope, or null when the scope is the whole index. */
  inScope(videos: Video[]): ((id: number) => boolean) | null {
    const ids = new Set(videos.map((v) => v.id));
    let all = true;
    for (const id of this.videos.keys())
      if (!ids.has(id)) {
        all = false;
        break;
      }
    if (all) return null;
    const ranges = [...this.videos]
      .filter(([id, r]) => ids.has(id) && r.count > 0)
      .map(([, r]): [number, number] => [r.first, r.last])
      .sort((a, b) => a[0] - b[0]);
    return (id) => inRanges(ranges, id);
  }

  /** Starts (or joins) the background build that brings the index up to date for these videos. */
  private build(videos: Video[]): Promise<void> {
    this.building ??= this.bringUpToDate(videos).finally(() => {
      this.building = null;
    });
    return this.building;
  }

  /** Vectors to add before `videos` are all searchable (0 when up to date); settles unchanged videos. */
  private async pendingWork(videos: Video[]): Promise<number> {
    const check = videos.filter((v) => !this.videos.has(v.id) || this.unverified.has(v.id)).map((v) => v.id);
    // Videos gone from the index (deleted) are only ever unverified: check them too, to drop their vectors.
    for (const id of this.unverified) if (!check.includes(id)) check.push(id);
    if (check.length === 0) return 0;
    const now = await vectorRanges(this.o.catalog, check);
    // A build that started meanwhile settles these videos itself.
    if (this.building) return 0;
    const gone: [number, number][] = [];
    let pending = 0;
    for (const id of check) {
      const have = this.videos.get(id);
      const db = now.get(id);
      if (have && db && same(have, db)) this.unverified.delete(id);
      else if (have && !db) {
        if (have.count > 0) gone.push([have.first, have.last]);
        this.videos.delete(id);
        this.unverified.delete(id);
      } else if (db) pending += db.count;
      else if (!have) this.videos.set(id, { first: 0, last: -1, count: 0 });
    }
    this.remove(gone);
    return pending;
  }

  private async bringUpToDate(videos: Video[]): Promise<void> {
    const t0 = performance.now();
    const check = [...new Set([...videos.map((v) => v.id), ...this.unverified])];
    const now = await vectorRanges(this.o.catalog, check);
    const load: [string, Range][] = [];
    const gone: [number, number][] = [];
    for (const id of check) {
      const have = this.videos.get(id);
      const db = now.get(id);
      if (have && db && same(have, db)) {
        this.unverified.delete(id);
        continue;
      }
      if (have && have.count > 0) gone.push([have.first, have.last]);
      this.videos.delete(id);
      if (db) load.push([id, db]);
      else this.videos.set(id, { first: 0, last: -1, count: 0 });
      this.unverified.delete(id);
    }
    this.remove(gone);
    if (this.lists.length === 0 && load.length) this.readSaved();
    const hinted = this.hint !== null;
    let added = 0;
    for (const [id, range] of load) added += await this.load(id, range);
    this.hint = null;
    if (added > 0 && (this.lists.length === 0 || this.count > this.clusteredAt * 4)) {
      await this.cluster();
      this.save();
      this.lastBuildMs = performance.now() - t0;
    } else if (hinted) this.lastBuildMs = performance.now() - t0;
  }

  /** The saved centroids and lists (see the file comment); ignored when missing or of other vectors. */
  private readSaved(): void {
    if (!this.o.file) return;
    let buf: Buffer;
    try {
      buf = readFileSync(this.o.file);
    } catch {
      return;
    }
    try {
      const headLen = buf.readUInt32LE(0);
      const head = JSON.parse(buf.subarray(4, 4 + headLen).toString('utf8')) as {
        v: number;
        dims: number;
        lists: number;
        vectors: number;
        clusteredAt: number;
      };
      if (head.v !== 1 || head.dims !== this.dims || head.lists < 1) return;
      // Typed arrays need aligned offsets: copy each part out.
      let at = 4 + headLen;
      const take = (bytes: number) => {
        const part = new Uint8Array(bytes);
        part.set(buf.subarray(at, at + bytes));
        at += bytes;
        if (part.byteLength !== bytes || at > buf.byteLength) throw new Error('short file');
        return part.buffer;
      };
      const centroids = new Float32Array(take(head.lists * this.dims * 4));
      const ids = new Float64Array(take(head.vectors * 8));
      const lists = new Uint32Array(take(head.vectors * 4));
      this.centroids = centroids;
      this.lists = Array.from({ length: head.lists }, () => new Rows(this.dims));
      this.clusteredAt = head.clusteredAt;
      this.indexCentroids();
      this.hint = { ids, lists };
    } catch {
      this.hint = null;
    }
  }

  /** Saves the centroids and each vector's list (written aside, then renamed into place). */
  private save(): void {
    if (!this.o.file) return;
    const vectors = this.lists.reduce((n, l) => n + l.n, 0);
    const pairs = new Float64Array(vectors);
    const listOf = new Map<number, number>();
    let i = 0;
    this.lists.forEach((l, c) => {
      for (let r = 0; r < l.n; r++) {
        pairs[i++] = l.ids[r]!;
        listOf.set(l.ids[r]!, c);
      }
    });
    pairs.sort();
    const lists = Uint32Array.from(pairs, (id) => listOf.get(id)!);
    const head = Buffer.from(
      JSON.stringify({ v: 1, dims: this.dims, lists: this.lists.length, vectors, clusteredAt: this.clusteredAt }),
    );
    const len = Buffer.alloc(4);
    len.writeUInt32LE(head.byteLength);
    const tmp = `${this.o.file}.tmp`;
    try {
      writeFileSync(
        tmp,
        Buffer.concat([
          len,
          head,
          Buffer.from(this.centroids.buffer, this.centroids.byteOffset, this.centroids.byteLength),
          Buffer.from(pairs.buffer),
          Buffer.from(lists.buffer),
        ]),
        { mode: 0o600 },
      );
      renameSync(tmp, this.o.file);
    } catch {
      // Not saved: the next start chooses the lists again.
    }
  }

  /** Reads a video's vectors; they join the nearest list (or wait for the first clustering). */
  private async load(videoId: string, range: Range): Promise<number> {
    let after = range.first - 1;
    let n = 0;
    const batch = new Rows(this.dims, SLICE);
    for (;;) {
      const rows = await vectorSlice(this.o.catalog, videoId, after, SLICE);
      if (rows.length === 0) break;
      batch.n = 0;
      for (const r of rows) {
        const row = new Int8Array(r.vector.buffer, r.vector.byteOffset, r.vector.byteLength);
        if (row.length !== this.dims) throw new Error(`vectors of different sizes: ${this.dims} and ${row.length}`);
        batch.push(r.id, row, 1 / norm(row));
      }
      this.place(batch);
      n += rows.length;
      after = rows.at(-1)!.id;
      if (rows.length === SLICE) await Bun.sleep(0); // let requests in between slices
    }
    this.videos.set(videoId, range);
    return n;
  }

  /** Adds vectors to their nearest lists (or to the loose ones before the first clustering). */
  private place(batch: Rows): void {
    this.count += batch.n;
    if (this.lists.length === 0) {
      for (let i = 0; i < batch.n; i++) this.loose.push(batch.ids[i]!, batch.row(i), batch.inv[i]!);
      return;
    }
    let rest = batch;
    const hint = this.hint;
    if (hint) {
      rest = new Rows(this.dims, batch.n);
      for (let i = 0; i < batch.n; i++) {
        const at = sortedIndexOf(hint.ids, batch.ids[i]!);
        if (at >= 0 && hint.lists[at]! < this.lists.length)
          this.lists[hint.lists[at]!]!.push(batch.ids[i]!, batch.row(i), batch.inv[i]!);
        else rest.push(batch.ids[i]!, batch.row(i), batch.inv[i]!);
      }
      if (rest.n === 0) return;
    }
    const near = this.nearestLists(rest.rows.subarray(0, rest.n * this.dims), rest.n);
    for (let i = 0; i < rest.n; i++) this.lists[near[i]!]!.push(rest.ids[i]!, rest.row(i), rest.inv[i]!);
  }

  private remove(ranges: [number, number][]): void {
    if (ranges.length === 0) return;
    ranges.sort((a, b) => a[0] - b[0]);
    for (const l of [this.loose, ...this.lists]) this.count -= l.removeIn(ranges);
  }

  /**
   * Chooses the centroids: k-means (KMEANS_STEPS steps) on an even sample of the vectors, starting
   * from an even sample of that; then every vector joins its nearest list.
   */
  private async cluster(): Promise<void> {
    const all = new Rows(this.dims, Math.max(1, this.count));
    for (const l of [this.loose, ...this.lists]) {
      all.ids.set(l.ids.subarray(0, l.n), all.n);
      all.rows.set(l.rows.subarray(0, l.n * this.dims), all.n * this.dims);
      all.inv.set(l.inv.subarray(0, l.n), all.n);
      all.n += l.n;
    }
    this.loose = new Rows(this.dims);
    this.lists = [];
    const n = all.n;
    const dims = this.dims;
    const want = Math.max(1, Math.round(LISTS_PER_ROOT * Math.sqrt(n)));
    const sampleN = Math.min(n, want * SAMPLE_PER_LIST);
    const sample = new Int8Array(sampleN * dims);
    for (let i = 0; i < sampleN; i++) sample.set(all.row(Math.floor((i * n) / sampleN)), i * dims);
    this.centroids = new Float32Array(want * dims);
    for (let c = 0; c < want; c++) unitInto(this.centroids, c, sample, Math.floor((c * sampleN) / want), dims);
    this.indexCentroids();
    for (let step = 0; step < KMEANS_STEPS; step++) {
      const near = await this.assign(sample, sampleN);
      // Each centroid to the (normalised) mean of its members; a centroid with none stays.
      const sums = new Float64Array(want * dims);
      const members = new Uint32Array(want);
      for (let i = 0; i < sampleN; i++) {
        const c = near[i]!;
        members[c]!++;
        const o = i * dims;
        const s = c * dims;
        let len = 0;
        for (let d = 0; d < dims; d++) len += sample[o + d]! * sample[o + d]!;
        const inv = 1 / (Math.sqrt(len) || 1);
        for (let d = 0; d < dims; d++) sums[s + d]! += sample[o + d]! * inv;
      }
      for (let c = 0; c < want; c++) if (members[c]) unitInto(this.centroids, c, sums, c, dims);
      this.indexCentroids();
      await Bun.sleep(0);
    }
    const near = await this.assign(all.rows, n);
    const sizes = new Uint32Array(want);
    for (let i = 0; i < n; i++) sizes[near[i]!]!++;
    this.lists = Array.from(sizes, (s) => new Rows(dims, Math.max(4, s)));
    for (let i = 0; i < n; i++) this.lists[near[i]!]!.push(all.ids[i]!, all.row(i), all.inv[i]!);
    this.clusteredAt = n;
  }

  /** The nearest centroid of each of `n` rows, a slice at a time. */
  private async assign(rows: Int8Array, n: number): Promise<Uint32Array> {
    const out = new Uint32Array(n);
    for (let i = 0; i < n; i += SLICE) {
      const m = Math.min(SLICE, n - i);
      out.set(this.nearestLists(rows.subarray(i * this.dims, (i + m) * this.dims), m), i);
      if (i + SLICE < n) await Bun.sleep(0);
    }
    return out;
  }

  private indexCentroids(): void {
    this.centroidGraph = null;
    const count = this.centroids.length / this.dims;
    if (count < 64) return; // few: compared one by one
    const g = new Index({
      dimensions: this.dims,
      metric: MetricKind.Cos,
      quantization: ScalarKind.F32,
      connectivity: 16,
      expansion_add: 128,
      expansion_search: 32,
      multi: false,
    });
    g.add(
      BigUint64Array.from({ length: count }, (_, i) => BigInt(i)),
      this.centroids,
      1,
    );
    this.centroidGraph = g;
  }

  /** The nearest centroid of each of `n` int8 rows (one after another). */
  private nearestLists(rows: Int8Array, n: number): Uint32Array {
    const out = new Uint32Array(n);
    const dims = this.dims;
    if (this.centroidGraph) {
      const found = this.centroidGraph.search(Float32Array.from(rows.subarray(0, n * dims)), 1, 1);
      if (n === 1) {
        const m = found as unknown as { keys: BigUint64Array };
        out[0] = Number(m.keys[0] ?? 0n);
      } else {
        const b = found as unknown as { keys: BigUint64Array; counts: BigUint64Array };
        for (let i = 0; i < n; i++) out[i] = b.counts[i]! > 0n ? Number(b.keys[i]!) : 0;
      }
      return out;
    }
    const count = this.centroids.length / dims;
    for (let i = 0; i < n; i++) {
      let best = 0;
      let bestScore = -Infinity;
      for (let c = 0; c < count; c++) {
        const s = dotRows(this.centroids, c * dims, rows, i * dims, dims);
        if (s > bestScore) [best, bestScore] = [c, s];
      }
      out[i] = best;
    }
    return out;
  }
}

/**
 * The `k` best [id, score] pairs offered, best first (of equal scores, the smaller id first). A
 * binary heap of the kept ones in typed arrays, the worst at its root: an offer that does not beat
 * the worst costs one comparison, one that does costs log k moves (sorting a buffer of tuples on
 * every overflow cost a semantic question more than its dot products).
 */
export class Top {
  private readonly ids: Float64Array;
  private readonly scores: Float64Array;
  private n = 0;
  constructor(private readonly k: number) {
    this.ids = new Float64Array(Math.max(0, k));
    this.scores = new Float64Array(Math.max(0, k));
  }

  offer(id: number, score: number): void {
    const { ids, scores } = this;
    if (this.n < this.k) {
      // Up from the new leaf while it is worse than its parent.
      let i = this.n++;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (!worse(score, id, scores[p]!, ids[p]!)) break;
        ids[i] = ids[p]!;
        scores[i] = scores[p]!;
        i = p;
      }
      ids[i] = id;
      scores[i] = score;
      return;
    }
    if (this.k <= 0 || !worse(scores[0]!, ids[0]!, score, id)) return;
    // It replaces the worst: down from the root while a child is worse than it.
    const n = this.n;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && worse(scores[r]!, ids[r]!, scores[l]!, ids[l]!) ? r : l;
      if (!worse(scores[c]!, ids[c]!, score, id)) break;
      ids[i] = ids[c]!;
      scores[i] = scores[c]!;
      i = c;
    }
    ids[i] = id;
    scores[i] = score;
  }

  sorted(): [number, number][] {
    const out: [number, number][] = [];
    for (let i = 0; i < this.n; i++) out.push([this.ids[i]!, this.scores[i]!]);
    return out.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  }
}

/** Whether (score a, id a) ranks below (score b, id b): a lower score, or of equal ones the larger id. */
function worse(sa: number, ia: number, sb: number, ib: number): boolean {
  return sa < sb || (sa === sb && ia > ib);
}

const same = (a: Range, b: Range) => a.first === b.first && a.last === b.last && a.count === b.count;

/** Writes row `i` of `from` as unit vector `c` of `into`. */
function unitInto(into: Float32Array, c: number, from: ArrayLike<number>, i: number, dims: number): void {
  let s = 0;
  for (let d = 0; d < dims; d++) s += from[i * dims + d]! * from[i * dims + d]!;
  const inv = 1 / (Math.sqrt(s) || 1);
  for (let d = 0; d < dims; d++) into[c * dims + d] = from[i * dims + d]! * inv;
}

/** q · centroids[o .. o + dims) (apart from `dot`, so that each stays monomorphic for the JIT). */
function dotCentroid(q: Float32Array, centroids: Float32Array, o: number, dims: number): number {
  let a = 0;
  for (let i = 0; i < dims; i++) a += q[i]! * centroids[o + i]!;
  return a;
}

function dotRows(a: Float32Array, ao: number, b: Int8Array, bo: number, dims: number): number {
  let s = 0;
  for (let d = 0; d < dims; d++) s += a[ao + d]! * b[bo + d]!;
  return s;
}

/** Where `key` is in the sorted `ids`, or -1. */
function sortedIndexOf(ids: Float64Array, key: number): number {
  let lo = 0;
  let hi = ids.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const v = ids[mid]!;
    if (v < key) lo = mid + 1;
    else if (v > key) hi = mid - 1;
    else return mid;
  }
  return -1;
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
