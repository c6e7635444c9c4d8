/**
 * The retrieval core: the one place that finds the moments of an index that bear on a question or a
 * query. `/search`, `/inquire`, `/inquire-stream` and every later caller (flows, search by image,
 * agent tools) use this one instance, built once by the composition root, so the vectors are held
 * once and one invalidation reaches every reader.
 *
 * Today it wraps the answering's EvidenceFinder (FTS5 keywords + embedding similarity, fused by
 * rank); its internals are to be replaced (issue 19) without changing this surface.
 */
import type { Embedder } from '../analysis/embedder';
import { EmbeddingCache, EvidenceFinder, type Ranked, type ScopeWindow } from '../answering/evidence';
import type { Intent } from '../answering/intent';
import type { Db } from '../storage/db';
import type { Segment, SegmentKind } from '../storage/schema';

export type { Ranked, ScopeWindow };

export class RetrievalCore {
  private readonly embeddings: EmbeddingCache;
  /** The underlying finder, for callers not yet moved onto the methods below. */
  readonly finder: EvidenceFinder;

  constructor(
    private readonly d: {
      db: Db;
      embedder: Embedder | null;
    },
  ) {
    this.embeddings = new EmbeddingCache(d.db);
    this.finder = new EvidenceFinder(d.db, this.embeddings, d.embedder);
  }

  get embedder(): Embedder | null {
    return this.d.embedder;
  }

  /** A video's segments changed (analysis progressed, or it was removed). */
  invalidate(videoId: string): void {
    this.embeddings.invalidate(videoId);
  }

  /** Scored moments of every kind for a text, best first. */
  retrieve(scope: ScopeWindow, text: string, intent: Intent, limit: number): Promise<Ranked[]> {
    return this.finder.ranked(scope, text, intent, limit);
  }

  /** Segments of the scope by kind (and label), in time order. */
  byKind(scope: ScopeWindow, kinds: SegmentKind[], opts: { labels?: string[]; limit?: number } = {}): Segment[] {
    return this.finder.byKind(scope, kinds, opts);
  }

  /** The sampled frame nearest a time, as a file name. */
  frameNear(videoId: string, t: number): string | null {
    return this.finder.frameNear(videoId, t);
  }
}
