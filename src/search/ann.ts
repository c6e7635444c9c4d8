/**
 * The approximate nearest-neighbour index of one media index: an HNSW graph (usearch, int8, cosine)
 * over the distinct vectors of its videos, keyed by `segment_vectors.id`.
 *
 * - Kept up to date incrementally: a video whose vectors changed (invalidate) has its keys removed
 *   and its new vectors added at the next search. A video's ids are consecutive (they are written in
 *   one transaction), so a video is one key range.
 * - Persisted in DATA_DIR/vectors/<index id>.usearch with a manifest of the ranges; at start-up each
 *   range is checked against the database in one query and only videos that differ are redone. A
 *   manifest that does not match its index file (a crash between the two writes) means a rebuild.
 *   Vector ids are never reused (AUTOINCREMENT), so a stale key can only point at nothing.
 * - Large first builds run in the background in slices (the event loop keeps serving); until the
 *   index is complete, search answers null and the caller searches exactly.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { Index, MetricKind, ScalarKind } from 'usearch';
import type { Db } from '../storage/db';
import type { Video } from '../storage/schema';

/** HNSW parameters: 16 links per node; the search and build breadths give recall@10 ≥ 0.98 on bench data. */
const CONNECTIVITY = 16;
const EXPANSION_ADD = 64;
const EXPANSION_SEARCH = 128;
/** Vectors added in one call: each slice blocks the thread for well under a second. */
const SLICE = 2_000;
/** A search that would have to add more vectors than this first searches exactly and builds in the background. */
const INLINE_ADD_MAX = 10_000;
/** The most keys asked of the graph per search (scopes that are a small part of the index search exactly instead). */
const MAX_FETCH = 4_096;

interface Range {
  first: number;
  last: number;
  count: number;
}

interface Manifest {
  version: 1;
  dims: number;
  size: number;
  videos: Record<string, Range>;
}

const threads = () => Math.max(1, availableParallelism() - 1);

export class AnnIndex {
  readonly dims: number;
  private index: Index;
  private readonly videos = new Map<string, Range>();
  /** Videos whose range must be checked against the database before the next search. */
  private readonly unverified = new Set<string>();
  private building: Promise<void> | null = null;
  private dirty = false;
  private saveTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly o: { db: Db; indexId: string; dims: number; dir: string | null }) {
    this.dims = o.dims;
    this.index = this.fresh();
    this.load();
  }

  invalidate(videoId: string): void {
    if (this.videos.has(videoId)) this.unverified.add(videoId);
  }

  /**
   * The `k` nearest vectors of `videos` (all of this media index) to the int8 query, as
   * [vector id, cosine]; null when the index is not ready for them (the caller searches exactly).
   */
  async search(videos: Video[], q: Int8Array, k: number, scopeCount: number): Promise<[number, number][] | null> {
    const pending = this.pendingWork(videos);
    if (pending > INLINE_ADD_MAX) {
      this.building ??= this.bringUpToDate(videos).finally(() => {
        this.building = null;
      });
      return null;
    }
    if (this.building) return null;
    if (pending > 0) await this.bringUpToDate(videos);
    const size = this.index.size();
    if (size === 0) return [];
    const inScope = new Set(videos.map((v) => v.id));
    // Ask for enough that the scope's share of the answer holds k (when the scope is most of it, ~2k).
    const fetch = Math.min(size, MAX_FETCH, Math.ceil(k * Math.max(2, (size / Math.max(1, scopeCount)) * 1.5)));
    const m = this.index.search(q, fetch, 1);
    const ranges = this.sortedRanges(inScope);
    const out: [number, number][] = [];
    for (let i = 0; i < m.keys.length && out.length < k; i++) {
      const key = Number(m.keys[i]!);
      if (ranges && !inRanges(ranges, key)) continue;
      out.push([key, 1 - m.distances[i]!]);
    }
    if (out.length < k && fetch < size && scopeCount >= k) return null; // the scope is too small a part: exact
    return out;
  }

  /** Completes the index for these videos (building in slices) and saves it. */
  async ready(videos: Video[]): Promise<void> {
    while (this.building) await this.building;
    await this.bringUpToDate(videos);
    this.save();
  }

  /** Writes the index and its manifest when they changed since the last save. */
  save(): void {
    if (this.saveTimer) clearTimeout(this.saveTimer);
    this.saveTimer = null;
    if (!this.dirty || !this.o.dir) return;
    mkdirSync(this.o.dir, { recursive: true });
    const file = this.file();
    this.index.save(`${file}.tmp`);
    renameSync(`${file}.tmp`, file);
    const manifest: Manifest = {
      version: 1,
      dims: this.dims,
      size: this.index.size(),
      videos: Object.fromEntries(this.videos),
    };
    writeFileSync(`${file}.json.tmp`, JSON.stringify(manifest));
    renameSync(`${file}.json.tmp`, `${file}.json`);
    this.dirty = false;
  }

  private file(): string {
    return join(this.o.dir!, `${this.o.indexId}.usearch`);
  }

  private fresh(): Index {
    return new Index({
      dimensions: this.dims,
      metric: MetricKind.Cos,
      quantization: ScalarKind.I8,
      connectivity: CONNECTIVITY,
      expansion_add: EXPANSION_ADD,
      expansion_search: EXPANSION_SEARCH,
      multi: false,
    });
  }

  private load(): void {
    if (!this.o.dir) return;
    const file = this.file();
    if (!existsSync(file) || !existsSync(`${file}.json`)) return;
    try {
      const m = JSON.parse(readFileSync(`${file}.json`, 'utf8')) as Manifest;
      if (m.version !== 1 || m.dims !== this.dims || statSync(file).size === 0) throw new Error('another layout');
      this.index.load(file);
      if (this.index.size() !== m.size) throw new Error('the index and its manifest differ');
      for (const [id, r] of Object.entries(m.videos)) {
        this.videos.set(id, r);
        this.unverified.add(id);
      }
    } catch {
      // Unreadable or out of step: start over (it is rebuilt from the database).
      this.index = this.fresh();
      this.videos.clear();
      this.unverified.clear();
      rmSync(file, { force: true });
      rmSync(`${file}.json`, { force: true });
    }
  }

  /** Vectors to add before `videos` are all searchable (0 when up to date); checks unverified ranges. */
  private pendingWork(videos: Video[]): number {
    const check = videos.filter((v) => !this.videos.has(v.id) || this.unverified.has(v.id)).map((v) => v.id);
    // Videos gone from the index (deleted) are only ever unverified: check them too, to drop their keys.
    for (const id of this.unverified) if (!check.includes(id)) check.push(id);
    if (check.length === 0) return 0;
    const now = this.rangesInDb(check);
    let pending = 0;
    for (const id of check) {
      const have = this.videos.get(id);
      const db = now.get(id);
      if (have && db && have.first === db.first && have.last === db.last && have.count === db.count) {
        this.unverified.delete(id);
        continue;
      }
      if (have && !db) {
        this.remove(id, have);
        this.unverified.delete(id);
        continue;
      }
      if (db) pending += db.count;
      else if (!have) {
        // No vectors (yet): nothing to search; an empty range marks it as seen.
        this.videos.set(id, { first: 0, last: -1, count: 0 });
        this.unverified.delete(id);
      }
    }
    return pending;
  }

  private async bringUpToDate(videos: Video[]): Promise<void> {
    const check = [...new Set([...videos.map((v) => v.id), ...this.unverified])];
    const now = this.rangesInDb(check);
    for (const id of check) {
      const have = this.videos.get(id);
      const db = now.get(id);
      if (have && db && have.first === db.first && have.last === db.last && have.count === db.count) {
        this.unverified.delete(id);
        continue;
      }
      if (have) this.remove(id, have);
      if (db) await this.add(id, db);
      else this.videos.set(id, { first: 0, last: -1, count: 0 });
      this.unverified.delete(id);
    }
    if (this.dirty && !this.saveTimer && this.o.dir) {
      // Saved a little later, so that a burst of changed videos is written once.
      this.saveTimer = setTimeout(() => this.save(), 10_000);
      this.saveTimer.unref?.();
    }
  }

  private async add(videoId: string, range: Range): Promise<void> {
    let after = range.first - 1;
    for (;;) {
      const rows = this.o.db.all<{ id: number; vector: Uint8Array }>(
        sql`SELECT id, vector FROM segment_vectors WHERE video_id = ${videoId} AND id > ${after} ORDER BY id LIMIT ${SLICE}`,
      );
      if (rows.length === 0) break;
      const keys = new BigUint64Array(rows.length);
      const data = new Int8Array(rows.length * this.dims);
      rows.forEach((r, i) => {
        keys[i] = BigInt(r.id);
        data.set(new Int8Array(r.vector.buffer, r.vector.byteOffset, r.vector.byteLength), i * this.dims);
      });
      this.index.add(keys, data, threads());
      after = rows.at(-1)!.id;
      this.dirty = true;
      if (rows.length === SLICE) await Bun.sleep(0); // let requests in between slices
    }
    this.videos.set(videoId, range);
  }

  private remove(videoId: string, r: Range): void {
    if (r.count > 0) {
      const keys = new BigUint64Array(r.last - r.first + 1);
      for (let i = 0; i < keys.length; i++) keys[i] = BigInt(r.first + i);
      this.index.remove(keys);
      this.dirty = true;
    }
    this.videos.delete(videoId);
  }

  private rangesInDb(videoIds: string[]): Map<string, Range> {
    const rows = this.o.db.all<{ video_id: string; first: number; last: number; n: number }>(
      sql`SELECT video_id, min(id) AS first, max(id) AS last, count(*) AS n FROM segment_vectors
          WHERE video_id IN (SELECT value FROM json_each(${JSON.stringify(videoIds)})) GROUP BY video_id`,
    );
    return new Map(rows.map((r) => [r.video_id, { first: r.first, last: r.last, count: r.n }]));
  }

  private sortedRanges(inScope: Set<string>): [number, number][] | null {
    if ([...this.videos.keys()].every((id) => inScope.has(id))) return null; // the whole index: no filter
    return [...this.videos]
      .filter(([id, r]) => inScope.has(id) && r.count > 0)
      .map(([, r]): [number, number] => [r.first, r.last])
      .sort((a, b) => a[0] - b[0]);
  }
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
