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
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../storage/db';
import { segments, segmentVectors, type Video } from '../storage/schema';
import { dot, norm } from './int8';
import { IvfIndex, type IvfState } from './ivf';

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

const asBlob = (q: Int8Array) => Buffer.from(q.buffer, q.byteOffset, q.byteLength);

/**
 * Replaces a video's vectors: `vectors[which[j]]` is the embedding of `segmentIds[j]`. Each distinct
 * vector is stored once, so the ids of one video are consecutive (one transaction, AUTOINCREMENT),
 * which the ANN index relies on to drop a video's keys. Run it inside the caller's transaction.
 */
export function storeVideoVectors(
  tx: Db,
  videoId: string,
  segmentIds: readonly number[],
  which: readonly number[],
  vectors: readonly Float32Array[],
): void {
  clearVideoVectors(tx, videoId);
  const members: number[][] = vectors.map(() => []);
  segmentIds.forEach((id, j) => members[which[j]!]!.push(id));
  vectors.forEach((v, k) => {
    if (members[k]!.length === 0) return;
    const row = tx
      .insert(segmentVectors)
      .values({ videoId, vector: asBlob(quantize(v)) })
      .returning({ id: segmentVectors.id })
      .get();
    tx.run(
      sql`UPDATE segments SET vector_id = ${row.id} WHERE id IN (SELECT value FROM json_each(${JSON.stringify(members[k])}))`,
    );
  });
}

/** Drops a video's vectors (its segments keep no vector: questions match them by keyword only). */
export function clearVideoVectors(tx: Db, videoId: string): void {
  tx.update(segments).set({ vectorId: null }).where(eq(segments.videoId, videoId)).run();
  tx.delete(segmentVectors).where(eq(segmentVectors.videoId, videoId)).run();
}

/**
 * Moves float32 vectors left in `segments.embedding` by an earlier version into the store, a video
 * at a time (each in its own transaction, so an interrupted start resumes). Returns the videos moved.
 */
export function moveLegacyVectors(db: Db): number {
  let moved = 0;
  for (;;) {
    const [next] = db.all<{ video_id: string }>(
      sql`SELECT video_id FROM segments INDEXED BY segments_legacy_embedding_idx WHERE embedding IS NOT NULL LIMIT 1`,
    );
    if (!next) return moved;
    const videoId = next.video_id;
    db.transaction((tx) => {
      const rows = tx
        .select({ id: segments.id, e: segments.embedding })
        .from(segments)
        .where(and(eq(segments.videoId, videoId), sql`${segments.embedding} IS NOT NULL`))
        .all();
      const byBytes = new Map<string, number>();
      const vectors: Float32Array[] = [];
      const which = rows.map((r) => {
        const key = (r.e as Buffer).toString('base64');
        let k = byBytes.get(key);
        if (k === undefined) {
          byBytes.set(key, (k = vectors.length));
          const b = r.e as Buffer;
          const f = new Float32Array(b.byteLength / 4);
          new Uint8Array(f.buffer).set(b);
          vectors.push(f);
        }
        return k;
      });
      storeVideoVectors(
        tx as unknown as Db,
        videoId,
        rows.map((r) => r.id),
        which,
        vectors,
      );
      tx.run(sql`UPDATE segments SET embedding = NULL WHERE video_id = ${videoId} AND embedding IS NOT NULL`);
    });
    moved++;
  }
}

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
  db: Db;
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
      const n = this.countOf(vids);
      if (n === 0) continue;
      let found: [number, number][] | null = null;
      if (n > this.exactMax) {
        const ann = this.annOf(indexId, q.length);
        found = await ann.search(vids, q, k);
      }
      out.push(...(found ?? this.exact(vids, q, k)));
    }
    return out.sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, k);
  }

  /** Exact cosines of `q` with these vectors (read by id: for a few candidates). */
  cosinesById(vectorIds: number[], q: Float32Array): Map<number, number> {
    const out = new Map<number, number>();
    if (vectorIds.length === 0) return out;
    const rows = this.o.db.all<{ id: number; vector: Uint8Array }>(
      sql`SELECT id, vector FROM segment_vectors WHERE id IN (SELECT value FROM json_each(${JSON.stringify(vectorIds)}))`,
    );
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
  exact(videos: Video[], q: Float32Array, k: number): [number, number][] {
    const top = new TopK(k);
    for (const v of videos) {
      const m = this.matrix(v.id);
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
      if (this.countOf(vids) <= this.exactMax) continue;
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
      ann = new IvfIndex({ db: this.o.db, dims, ...(file && { file }) });
      this.anns.set(indexId, ann);
    }
    return ann;
  }

  private countOf(videos: Video[]): number {
    const missing = videos.filter((v) => !this.counts.has(v.id)).map((v) => v.id);
    if (missing.length) {
      const rows = this.o.db.all<{ video_id: string; n: number }>(
        sql`SELECT video_id, count(*) AS n FROM segment_vectors WHERE video_id IN (SELECT value FROM json_each(${JSON.stringify(missing)})) GROUP BY video_id`,
      );
      for (const id of missing) this.counts.set(id, 0);
      for (const r of rows) this.counts.set(r.video_id, r.n);
    }
    return videos.reduce((n, v) => n + this.counts.get(v.id)!, 0);
  }

  private matrix(videoId: string): VideoMatrix {
    let m = this.matrices.get(videoId);
    if (m) {
      // Most recently used last.
      this.matrices.delete(videoId);
      this.matrices.set(videoId, m);
      return m;
    }
    const found = this.o.db
      .select({ id: segmentVectors.id, v: segmentVectors.vector })
      .from(segmentVectors)
      .where(eq(segmentVectors.videoId, videoId))
      .orderBy(segmentVectors.id)
      .all();
    const dims = found.length ? (found[0]!.v as Buffer).byteLength : 0;
    m = {
      ids: new Float64Array(found.length),
      rows: new Int8Array(found.length * dims),
      norms: new Float32Array(found.length),
      dims,
    };
    const mm = m;
    found.forEach((r, i) => {
      const b = r.v as Buffer;
      if (b.byteLength !== dims) throw new Error(`vectors of different sizes: ${dims} and ${b.byteLength}`);
      mm.ids[i] = r.id;
      const row = new Int8Array(b.buffer, b.byteOffset, b.byteLength);
      mm.rows.set(row, i * dims);
      mm.norms[i] = norm(row);
    });
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
