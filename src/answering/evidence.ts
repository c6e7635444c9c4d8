/**
 * Evidence retrieval: the segments of the question's scope (videos, time window) that can answer
 * it, found by keyword search (FTS5, BM25), by embedding similarity, by the object classes the
 * question names, and by the kinds its wording needs; fused by reciprocal rank with per-kind weights.
 */
import { and, asc, desc, eq, gte, inArray, lte, sql, type SQL } from 'drizzle-orm';
import type { Embedder } from '../analysis/embedder';
import { splitRun } from '../analysis/word-spaces';
import type { Db } from '../storage/db';
import { frames, segments, type Segment, type SegmentKind, type Video } from '../storage/schema';
import type { Intent } from './intent';
import type { TimeTarget } from './target';

export interface Evidence {
  video_id: string;
  file_name: string;
  start: number;
  end: number;
  kind: SegmentKind;
  text: string;
  score: number;
  /** Path (signed) of the sampled frame nearest the middle of the span, or null. */
  frame_url: string | null;
}

export interface ScopeWindow {
  videos: Video[];
  /** Time window within each video (null: the whole video). */
  window: { start: number; end: number } | null;
}

/** How far around a point `target` the answer looks, in seconds. @default 2 */
export const POINT_WINDOW_SEC = 2;

export function windowOf(
  target: TimeTarget | null,
  halfWidth = POINT_WINDOW_SEC,
): { start: number; end: number } | null {
  if (!target) return null;
  return target.point
    ? { start: Math.max(0, target.start - halfWidth), end: target.start + halfWidth }
    : { start: target.start, end: target.end };
}

/**
 * One video's embeddings as a matrix: each distinct vector once (many segments share one: every
 * "one person (people) in view", every speech span), one after another in one Float32Array.
 */
export interface VideoVectors {
  /** Segment ids, in scan order (kind, start, id). */
  ids: Float64Array;
  /** The row of `matrix` that holds each segment's vector. */
  rows: Uint32Array;
  /** The distinct vectors, `dims` floats each. */
  matrix: Float32Array;
  dims: number;
}

/** Embedding matrices per video, loaded once and dropped when the video changes. */
export class EmbeddingCache {
  private readonly byVideo = new Map<string, VideoVectors>();
  constructor(private readonly db: Db) {}

  get(videoId: string): VideoVectors {
    let entry = this.byVideo.get(videoId);
    if (!entry) {
      entry = this.load(videoId);
      this.byVideo.set(videoId, entry);
    }
    return entry;
  }

  invalidate(videoId: string): void {
    this.byVideo.delete(videoId);
  }

  private load(videoId: string): VideoVectors {
    const found = this.db
      .select({ id: segments.id, e: segments.embedding })
      .from(segments)
      .where(and(eq(segments.videoId, videoId), sql`${segments.embedding} IS NOT NULL`))
      .orderBy(asc(segments.kind), asc(segments.start), asc(segments.id))
      .all();
    const dims = found.length ? (found[0]!.e as Buffer).byteLength / 4 : 0;
    const ids = new Float64Array(found.length);
    const rows = new Uint32Array(found.length);
    const matrix = new Float32Array(found.length * dims);
    const bytes = new Uint8Array(matrix.buffer);
    const rowOf = new Map<bigint, number>();
    let distinct = 0;
    found.forEach((r, i) => {
      const blob = r.e as Buffer;
      if (blob.byteLength !== dims * 4)
        throw new Error(`vectors of different sizes: ${dims} and ${blob.byteLength / 4}`);
      const key = Bun.hash.wyhash(blob);
      let row = rowOf.get(key);
      // Same hash, different bytes: keep it as a vector of its own.
      if (row !== undefined && !sameBytes(blob, bytes, row * dims * 4)) row = undefined;
      if (row === undefined) {
        row = distinct++;
        bytes.set(blob, row * dims * 4);
        if (!rowOf.has(key)) rowOf.set(key, row);
      }
      ids[i] = r.id;
      rows[i] = row;
    });
    return { ids, rows, matrix: matrix.slice(0, distinct * dims), dims };
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array, at: number): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[at + i]) return false;
  return true;
}

/** q · each row of `matrix` (dot products of L2-normalised vectors: their cosines), into `out`. */
function dotRows(q: Float32Array, matrix: Float32Array, dims: number, out: Float64Array): void {
  const n = matrix.length / dims;
  for (let r = 0, o = 0; r < n; r++, o += dims) {
    // Four sums: about twice as fast as one in JavaScriptCore.
    let a = 0;
    let b = 0;
    let c = 0;
    let d = 0;
    let i = 0;
    for (; i + 3 < dims; i += 4) {
      a += q[i]! * matrix[o + i]!;
      b += q[i + 1]! * matrix[o + i + 1]!;
      c += q[i + 2]! * matrix[o + i + 2]!;
      d += q[i + 3]! * matrix[o + i + 3]!;
    }
    for (; i < dims; i++) a += q[i]! * matrix[o + i]!;
    out[r] = a + b + c + d;
  }
}

/** The `limit` best [id, score] pairs offered, best first; of equal scores the one offered first. */
class TopK {
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

/** Every column but the embedding, which answers never read (it is the bulk of a row). */
const ROW = {
  id: segments.id,
  videoId: segments.videoId,
  kind: segments.kind,
  start: segments.start,
  end: segments.end,
  text: segments.text,
  confidence: segments.confidence,
  extra: segments.extra,
};

/** Kind weights by what the question needs (multiplied into the fused score). */
function kindWeights(intent: Intent): Record<SegmentKind, number> {
  const w: Record<SegmentKind, number> = {
    shot: 0.3,
    ocr: 1,
    object: 1,
    speech: 0.5,
    transcript: 1,
    caption: 1,
    audio: 0.5,
    face: 0.3,
  };
  if (intent.needs.has('said')) {
    w.transcript = 3;
    w.speech = 1.5;
    w.ocr = 0.7;
  }
  if (intent.needs.has('written')) {
    w.ocr = 3;
    w.transcript = 0.8;
  }
  if (intent.needs.has('count') || intent.needs.has('presence') || intent.labels.length) w.object = 2.5;
  if (intent.needs.has('summary')) w.shot = 1.5;
  return w;
}

/** A ranked segment: its fused score (by rank), and the raw signals that say how relevant it is. */
export interface Ranked {
  segment: Segment;
  score: number;
  /** It contains a word of the question. */
  keyword: boolean;
  /** Cosine similarity to the question, when it was among the semantic candidates. */
  cosine: number | null;
}

export class EvidenceFinder {
  constructor(
    private readonly db: Db,
    private readonly embeddings: EmbeddingCache,
    private readonly embedder: Embedder | null,
  ) {}

  /** Segments of the scope, by kind (and label for objects), in time order; without their embeddings (null). */
  byKind(scope: ScopeWindow, kinds: SegmentKind[], opts: { labels?: string[]; limit?: number } = {}): Segment[] {
    if (scope.videos.length === 0) return [];
    const conds = this.inScope(scope, kinds, opts.labels);
    // The ids first: the sort and the limit work on the index alone (segments_video_kind_idx, or
    // segments_video_kind_text_idx for labels), and only the rows kept are read.
    const ids = this.db
      .select({ id: segments.id })
      .from(segments)
      .where(and(...conds))
      .orderBy(asc(segments.start))
      .limit(opts.limit ?? 500)
      .all()
      .map((r) => r.id);
    const byId = new Map(this.rows(ids).map((s) => [s.id, s]));
    return ids.map((id) => byId.get(id)!);
  }

  /**
   * Seconds each label of `kind` spans in the scope (spans summed whole), longest first, of equal
   * ones the first seen first. Summed in SQL: object rows carry per-frame boxes, and reading them
   * all to add up durations was the bulk of a "not found" answer's time on the server's thread.
   */
  labelSeconds(scope: ScopeWindow, kind: SegmentKind, limit: number): { label: string; seconds: number }[] {
    if (scope.videos.length === 0) return [];
    const seconds = sql<number>`sum(${segments.end} - ${segments.start})`;
    return this.db
      .select({ label: segments.text, seconds })
      .from(segments)
      .where(and(...this.inScope(scope, [kind])))
      .groupBy(segments.text)
      .orderBy(desc(seconds), asc(sql`min(${segments.start})`))
      .limit(limit)
      .all();
  }

  /** Whether the scope has any segment of these kinds. */
  has(scope: ScopeWindow, kinds: SegmentKind[]): boolean {
    if (scope.videos.length === 0) return false;
    return !!this.db
      .select({ id: segments.id })
      .from(segments)
      .where(and(...this.inScope(scope, kinds)))
      .limit(1)
      .get();
  }

  private inScope(scope: ScopeWindow, kinds: SegmentKind[], labels?: string[]): SQL[] {
    const conds: SQL[] = [
      inArray(
        segments.videoId,
        scope.videos.map((v) => v.id),
      ),
      inArray(segments.kind, kinds),
    ];
    if (labels?.length) conds.push(inArray(segments.text, labels));
    if (scope.window) conds.push(gte(segments.end, scope.window.start), lte(segments.start, scope.window.end));
    return conds;
  }

  /**
   * Segments by id (in id order), without their embeddings. The ids go in as one JSON parameter:
   * as `IN (?, ?, …)` up to 500 placeholders made building and preparing the statement the
   * costliest step of a question (~8 ms of the server's thread each time).
   */
  private rows(ids: number[]): Segment[] {
    if (ids.length === 0) return [];
    return this.db
      .select(ROW)
      .from(segments)
      .where(sql`${segments.id} IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`)
      .orderBy(asc(segments.id))
      .all()
      .map((r) => ({ ...r, embedding: null }));
  }

  /** Keyword search (BM25) over the scope; returns segment ids best first. */
  keyword(scope: ScopeWindow, keywords: string[], limit = 40): number[] {
    if (keywords.length === 0 || scope.videos.length === 0) return [];
    // A run-together word of the question ("springsale") also matches the words it is made of,
    // as the index holds text with its word spaces put back (see word-spaces.ts).
    const terms = keywords.flatMap((k) => {
      const words = /^\p{Script=Latin}{6,}$/u.test(k) ? splitRun(k) : k;
      return words !== k ? [k, words] : [k];
    });
    const match = terms.map((k) => `"${k.replace(/"/g, '""')}"`).join(' OR ');
    const ids = scope.videos.map((v) => v.id);
    const win = scope.window ? sql` AND s.end >= ${scope.window.start} AND s.start <= ${scope.window.end}` : sql``;
    const rows = this.db.all<{ id: number }>(
      sql`SELECT s.id AS id FROM segments_fts f JOIN segments s ON s.id = f.rowid
          WHERE segments_fts MATCH ${match} AND s.video_id IN (${sql.join(
            ids.map((i) => sql`${i}`),
            sql`, `,
          )})${win}
          ORDER BY bm25(segments_fts) LIMIT ${limit}`,
    );
    return rows.map((r) => r.id);
  }

  /** Embedding similarity over the scope; returns [id, cosine] best first. */
  async semantic(
    scope: ScopeWindow,
    question: string,
    limit = 40,
    vector: Float32Array | null = null,
  ): Promise<[number, number][]> {
    if (!this.embedder || scope.videos.length === 0) return [];
    let q: Float32Array;
    try {
      q = vector ?? ((await this.embedder.embed([question])) as [Float32Array])[0];
    } catch {
      return []; // no embedding model here: keyword search still answers
    }
    const top = new TopK(limit);
    let scores = new Float64Array(0);
    for (const v of scope.videos) {
      // Never compare vectors of two models (issue 11): a video embedded by another model (its
      // re-embedding not done yet) is left to keyword search.
      if (embeddedBy(v) !== this.embedder.info.name) continue;
      const { ids, rows, matrix, dims } = this.embeddings.get(v.id);
      if (ids.length === 0) continue;
      if (dims !== q.length) throw new Error(`vectors of different sizes: ${q.length} and ${dims}`);
      if (scores.length < matrix.length / dims) scores = new Float64Array(matrix.length / dims);
      // Each distinct vector once; its segments share the score. Offered in scan order, so that
      // equal scores keep it (as the stable sort of every [id, score] did).
      dotRows(q, matrix, dims, scores);
      for (let i = 0; i < ids.length; i++) top.offer(ids[i]!, scores[rows[i]!]!);
    }
    return top.items;
  }

  /**
   * The fused ranking: reciprocal-rank fusion of keyword and embedding ranks, times the kind weight,
   * restricted to the time window when there is one.
   */
  async ranked(
    scope: ScopeWindow,
    question: string,
    intent: Intent,
    limit = 12,
    vector: Float32Array | null = null,
  ): Promise<Ranked[]> {
    const K = 60;
    const fused = new Map<number, number>();
    const byKeyword = new Set(this.keyword(scope, [...intent.keywords, ...intent.labels]));
    [...byKeyword].forEach((id, rank) => fused.set(id, (fused.get(id) ?? 0) + 1 / (K + rank)));
    const sem = await this.semantic(scope, question, 40, vector);
    const cosines = new Map(sem);
    // Weak semantic matches are noise: USE-lite cosines under ~0.25 relate to almost anything.
    sem.filter(([, c]) => c >= 0.25).forEach(([id], rank) => fused.set(id, (fused.get(id) ?? 0) + 1 / (K + rank)));
    if (fused.size === 0) return [];
    const rows = this.rows([...fused.keys()]);
    const weights = kindWeights(intent);
    const win = scope.window;
    return rows
      .filter((s) => !win || (s.end >= win.start && s.start <= win.end))
      .map((s) => ({
        segment: s,
        score: (fused.get(s.id) ?? 0) * weights[s.kind] * 60,
        keyword: byKeyword.has(s.id),
        cosine: cosines.get(s.id) ?? null,
      }))
      .sort((a, b) => b.score - a.score)
      .slice(0, limit);
  }

  /** The sampled frame nearest a time, as a file name. */
  frameNear(videoId: string, t: number): string | null {
    const row = this.db
      .select({ file: frames.file })
      .from(frames)
      .where(eq(frames.videoId, videoId))
      .orderBy(sql`abs(${frames.t} - ${t})`)
      .limit(1)
      .get();
    return row?.file ?? null;
  }
}

/** The embedding model a video's vectors came from, as the pipeline recorded it (older videos: the engine). */
function embeddedBy(v: Video): string | undefined {
  const e = (v.analysis as { embeddings?: { producer?: unknown; engine?: unknown } } | null)?.embeddings;
  const name = e?.producer ?? e?.engine;
  return typeof name === 'string' ? name : undefined;
}
