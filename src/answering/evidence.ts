/**
 * Evidence retrieval: the segments of the question's scope (videos, time window) that can answer
 * it, found by keyword search (FTS5, BM25), by embedding similarity, by the object classes the
 * question names, and by the kinds its wording needs; fused by reciprocal rank with per-kind weights.
 */
import { and, asc, eq, gte, inArray, lte, sql, type SQL } from 'drizzle-orm';
import { cosine, fromBlob, type Embedder } from '../analysis/embedder';
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

export function windowOf(target: TimeTarget | null, halfWidth = POINT_WINDOW_SEC): { start: number; end: number } | null {
  if (!target) return null;
  return target.point ? { start: Math.max(0, target.start - halfWidth), end: target.start + halfWidth } : { start: target.start, end: target.end };
}

/** Embedding matrices per video, loaded once and dropped when the video changes. */
export class EmbeddingCache {
  private readonly byVideo = new Map<string, { ids: number[]; vectors: Float32Array[] }>();
  constructor(private readonly db: Db) {}

  get(videoId: string): { ids: number[]; vectors: Float32Array[] } {
    let entry = this.byVideo.get(videoId);
    if (!entry) {
      const rows = this.db
        .select({ id: segments.id, e: segments.embedding })
        .from(segments)
        .where(and(eq(segments.videoId, videoId), sql`${segments.embedding} IS NOT NULL`))
        .all();
      entry = { ids: rows.map((r) => r.id), vectors: rows.map((r) => fromBlob(r.e as Buffer)) };
      this.byVideo.set(videoId, entry);
    }
    return entry;
  }

  invalidate(videoId: string): void {
    this.byVideo.delete(videoId);
  }
}

/** Kind weights by what the question needs (multiplied into the fused score). */
function kindWeights(intent: Intent): Record<SegmentKind, number> {
  const w: Record<SegmentKind, number> = { shot: 0.3, ocr: 1, object: 1, speech: 0.5, transcript: 1, caption: 1, audio: 0.5 };
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

export class EvidenceFinder {
  constructor(
    private readonly db: Db,
    private readonly embeddings: EmbeddingCache,
    private readonly embedder: Embedder | null,
  ) {}

  /** Segments of the scope, by kind (and label for objects), in time order. */
  byKind(scope: ScopeWindow, kinds: SegmentKind[], opts: { labels?: string[]; limit?: number } = {}): Segment[] {
    if (scope.videos.length === 0) return [];
    const conds: SQL[] = [inArray(segments.videoId, scope.videos.map((v) => v.id)), inArray(segments.kind, kinds)];
    if (opts.labels?.length) conds.push(inArray(segments.text, opts.labels));
    if (scope.window) conds.push(gte(segments.end, scope.window.start), lte(segments.start, scope.window.end));
    return this.db
      .select()
      .from(segments)
      .where(and(...conds))
      .orderBy(asc(segments.start))
      .limit(opts.limit ?? 500)
      .all();
  }

  /** Keyword search (BM25) over the scope; returns segment ids best first. */
  keyword(scope: ScopeWindow, keywords: string[], limit = 40): number[] {
    if (keywords.length === 0 || scope.videos.length === 0) return [];
    const match = keywords.map((k) => `"${k.replace(/"/g, '""')}"`).join(' OR ');
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
  async semantic(scope: ScopeWindow, question: string, limit = 40): Promise<[number, number][]> {
    if (!this.embedder || scope.videos.length === 0) return [];
    let q: Float32Array;
    try {
      [q] = (await this.embedder.embed([question])) as [Float32Array];
    } catch {
      return []; // no embedding model here: keyword search still answers
    }
    const scored: [number, number][] = [];
    for (const v of scope.videos) {
      const { ids, vectors } = this.embeddings.get(v.id);
      for (let i = 0; i < ids.length; i++) scored.push([ids[i]!, cosine(q, vectors[i]!)]);
    }
    scored.sort((a, b) => b[1] - a[1]);
    return scored.slice(0, limit);
  }

  /**
   * The fused ranking: reciprocal-rank fusion of keyword and embedding ranks, times the kind weight,
   * restricted to the time window when there is one.
   */
  async ranked(scope: ScopeWindow, question: string, intent: Intent, limit = 12): Promise<{ segment: Segment; score: number }[]> {
    const K = 60;
    const fused = new Map<number, number>();
    this.keyword(scope, [...intent.keywords, ...intent.labels]).forEach((id, rank) => fused.set(id, (fused.get(id) ?? 0) + 1 / (K + rank)));
    const sem = await this.semantic(scope, question);
    // Weak semantic matches are noise: USE-lite cosines under ~0.25 relate to almost anything.
    sem.filter(([, c]) => c >= 0.25).forEach(([id], rank) => fused.set(id, (fused.get(id) ?? 0) + 1 / (K + rank)));
    if (fused.size === 0) return [];
    const rows = this.db.select().from(segments).where(inArray(segments.id, [...fused.keys()])).all();
    const weights = kindWeights(intent);
    const win = scope.window;
    return rows
      .filter((s) => !win || (s.end >= win.start && s.start <= win.end))
      .map((s) => ({ segment: s, score: (fused.get(s.id) ?? 0) * weights[s.kind] * 60 }))
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
