/**
 * The one vector store (issue 27): each video's distinct sentence embeddings as int8 rows of
 * `segment_vectors`, apart from the segments (which point at them by `vector_id`), and the nearest
 * vectors to a question found either exactly (small scopes) or through an inverted-file index per
 * media index (src/search/ivf.ts) that reads only the lists nearest the question.
 *
 * int8 keeps each component as round(x · 127 / max|x|): a 512-dimension vector takes 512 bytes
 * instead of 2,048, and its cosine to a question stays within ~0.005 of the float32 one (recall@10
 * against exact float32 search is measured by bench/inquire).
 */
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Catalog } from '../storage/catalog';
import { vectorCounts, vectorsById, videoVectors } from '../storage/repositories/vectors';
import type { Video } from '../storage/rows';
import { dot, norm } from './int8';

export { quantize } from './int8';
import { IvfIndex, type IvfState } from './ivf';

/** One video's distinct vectors, for exact search: ids, int8 rows, and each row's length. */
interface VideoMatrix {
  ids: Float64Array;
  rows: Int8Array;
  norms: Float32Array;
  dims: number;
}

/** Scopes with at most this many vectors are searched exactly (a few ms); larger ones through the ANN index. */
export const EXACT_MAX = 20_000;
/** Bytes of int8 rows kept in memory for exact search (least recently used dropped first). */
const EXACT_CACHE_BYTES = 128 * 1024 * 1024;

export interface VectorStoreOptions {
  catalog: Catalog;
  /** See EXACT_MAX (tests lower it to exercise the ANN path on a few vectors). */
  exactMax?: number;
  /** Where each media index's ANN lists are saved (see ivf.ts); absent: rebuilt after every start. */
  dir?: string;
}

export class VectorStore {
  private readonly matrices = new Map<string, VideoMatrix>();
  private cachedBytes = 0;
  private readonly counts = new Map<string, number>();
  private readonly anns = new Map<string, IvfIndex>();
  readonly exactMax: number;

  constructor(private readonly o: VectorStoreOptions) {
    this.exactMax = o.exactMax ?? EXACT_MAX;
  }

  /** A video's vectors changed or went away. */
  invalidate(videoId: string): void {
    const m = this.matrices.get(videoId);
    if (m) {
      this.cachedBytes -= m.rows.byteLength;
      this.matrices.delete(videoId);
    }
    this.counts.delete(videoId);
    for (const ann of this.anns.values()) ann.invalidate(videoId);
  }

  /** A media index was purged: its ANN index and its saved lists go too. */
  forgetIndex(indexId: string): void {
    this.anns.delete(indexId);
    if (!this.o.dir || !/^[\w-]+$/.test(indexId) || !existsSync(this.o.dir)) return;
    for (const name of readdirSync(this.o.dir)) {
      if (name.startsWith(`${indexId}-`) && name.endsWith('.ivf')) rmSync(join(this.o.dir, name), { force: true });
    }
  }

  /**
   * The `k` vectors of these videos nearest to `q` (an L2-normalised float query), as
   * [vector id, cosine], best first. Exact below `exactMax` vectors; otherwise through the media
   * index's ANN index once it is built (until then, exactly, while it builds in the background).
   */
  async nearest(videos: Video[], q: Float32Array, k: number): Promise<[number, number][]> {
    if (videos.length === 0 || k <= 0) return [];
    const byIndex = new Map<string, Video[]>();
    for (const v of videos) {
      const list = byIndex.get(v.indexId);
      if (list) list.push(v);
      else byIndex.set(v.indexId, [v]);
    }
    const out: [number, number][] = [];
    for (const [indexId, vids] of byIndex) {
      const n = await this.countOf(vids);
      if (n === 0) continue;
      let found: [number, number][] | null = null;
      if (n > this.exactMax) {
        const ann = this.annOf(indexId, q.length);
        found = await ann.search(vids, q, k);
      }
      out.push(...(found ?? (await this.exact(vids, q, k))));
    }
    return out.sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, k);
  }

  /** Exact cosines of `q` with these vectors (read by id: for a few candidates). */
  async cosinesById(vectorIds: number[], q: Float32Array): Promise<Map<number, number>> {
    const out = new Map<number, number>();
    if (vectorIds.length === 0) return out;
    const rows = await vectorsById(this.o.catalog, vectorIds);
    for (const r of rows) {
      if (r.vector.byteLength !== q.length)
        throw new Error(`vectors of different sizes: ${q.length} and ${r.vector.byteLength}`);
      const m: VideoMatrix = {
        ids: new Float64Array([r.id]),
        rows: new Int8Array(r.vector.buffer, r.vector.byteOffset, r.vector.byteLength),
        norms: new Float32Array([norm(new Int8Array(r.vector.buffer, r.vector.byteOffset, r.vector.byteLength))]),
        dims: q.length,
      };
      out.set(r.id, dotRow(q, m, 0));
    }
    return out;
  }

  /** Exact search over the videos' int8 rows. */
  async exact(videos: Video[], q: Float32Array, k: number): Promise<[number, number][]> {
    const top = new TopK(k);
    for (const v of videos) {
      // Read on first use (one statement per video not held; held ones cost no await).
      const m = this.matrices.has(v.id) ? this.matrix(v.id)! : await this.load(v.id);
      if (m.ids.length === 0) continue;
      if (m.dims !== q.length) throw new Error(`vectors of different sizes: ${q.length} and ${m.dims}`);
      for (let r = 0; r < m.ids.length; r++) top.offer(m.ids[r]!, dotRow(q, m, r));
    }
    return top.items;
  }

  /** Builds (or brings up to date) and saves the ANN index of each media index of these videos. */
  async prepare(videos: Video[], dims: number): Promise<void> {
    const byIndex = new Map<string, Video[]>();
    for (const v of videos) {
      const list = byIndex.get(v.indexId);
      if (list) list.push(v);
      else byIndex.set(v.indexId, [v]);
    }
    for (const [indexId, vids] of byIndex) {
      if ((await this.countOf(vids)) <= this.exactMax) continue;
      await this.annOf(indexId, dims).ready(vids);
    }
  }

  /** Nothing to save: each ANN index saves its lists when it chooses them (ivf.ts). */
  flush(): void {}

  /** The ANN indexes held: vectors, and whether any is building (searches meanwhile are exact). */
  annState(): { indexes: number; vectors: number; building: boolean; lastBuildMs: number | null } {
    const states: IvfState[] = [...this.anns.values()].map((a) => a.state);
    const builds = states.map((s) => s.lastBuildMs).filter((ms): ms is number => ms !== null);
    return {
      indexes: states.length,
      vectors: states.reduce((n, s) => n + s.vectors, 0),
      building: states.some((s) => s.building),
      lastBuildMs: builds.length ? Math.max(...builds) : null,
    };
  }

  private annOf(indexId: string, dims: number): IvfIndex {
    let ann = this.anns.get(indexId);
    if (!ann || ann.dims !== dims) {
      let file: string | undefined;
      if (this.o.dir && /^[\w-]+$/.test(indexId)) {
        mkdirSync(this.o.dir, { recursive: true, mode: 0o700 });
        file = join(this.o.dir, `${indexId}-${dims}.ivf`);
      }
      ann = new IvfIndex({ catalog: this.o.catalog, dims, ...(file && { file }) });
      this.anns.set(indexId, ann);
    }
    return ann;
  }

  private async countOf(videos: Video[]): Promise<number> {
    const missing = videos.filter((v) => !this.counts.has(v.id)).map((v) => v.id);
    if (missing.length) {
      const counts = await vectorCounts(this.o.catalog, missing);
      for (const id of missing) this.counts.set(id, counts.get(id) ?? 0);
    }
    return videos.reduce((n, v) => n + this.counts.get(v.id)!, 0);
  }

  /** A held matrix, now the most recently used. */
  private matrix(videoId: string): VideoMatrix | undefined {
    const m = this.matrices.get(videoId);
    if (!m) return undefined;
    // Most recently used last.
    this.matrices.delete(videoId);
    this.matrices.set(videoId, m);
    return m;
  }

  /** Reads a video's vectors into a matrix and holds it (the least recently used dropped beyond the budget). */
  private async load(videoId: string): Promise<VideoMatrix> {
    const found = await videoVectors(this.o.catalog, videoId);
    const dims = found.length ? found[0]!.vector.byteLength : 0;
    const m: VideoMatrix = {
      ids: new Float64Array(found.length),
      rows: new Int8Array(found.length * dims),
      norms: new Float32Array(found.length),
      dims,
    };
    const mm = m;
    found.forEach((r, i) => {
      const b = r.vector;
      if (b.byteLength !== dims) throw new Error(`vectors of different sizes: ${dims} and ${b.byteLength}`);
      mm.ids[i] = r.id;
      const row = new Int8Array(b.buffer, b.byteOffset, b.byteLength);
      mm.rows.set(row, i * dims);
      mm.norms[i] = norm(row);
    });
    const had = this.matrices.get(videoId);
    if (had) this.cachedBytes -= had.rows.byteLength;
    this.matrices.set(videoId, m);
    this.cachedBytes += m.rows.byteLength;
    for (const [id, old] of this.matrices) {
      if (this.cachedBytes <= EXACT_CACHE_BYTES || id === videoId) break;
      this.cachedBytes -= old.rows.byteLength;
      this.matrices.delete(id);
    }
    return m;
  }
}

/** Cosine of the normalised float query with int8 row `r`. */
function dotRow(q: Float32Array, m: VideoMatrix, r: number): number {
  return dot(q, m.rows, r * m.dims, m.dims) / m.norms[r]!;
}

/** The `limit` best [id, score] pairs offered, best first; of equal scores the one offered first. */
export class TopK {
  readonly items: [number, number][] = [];
  constructor(private readonly limit: number) {}

  offer(id: number, score: number): void {
    const items = this.items;
    if (this.limit <= 0) return;
    if (items.length >= this.limit && !(score > items[items.length - 1]![1])) return;
    let at = items.length;
    while (at > 0 && items[at - 1]![1] < score) at--;
    items.splice(at, 0, [id, score]);
    if (items.length > this.limit) items.pop();
  }
}
