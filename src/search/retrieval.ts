/**
 * The retrieval core: the one place that finds the moments of an index that bear on a question or a
 * query. `/search`, `/inquire`, `/inquire-stream` and every later caller (flows, search by image,
 * agent tools) use this one instance, built once by the composition root, so the vectors are held
 * once (one vector store: src/search/vectors.ts) and one invalidation reaches every reader.
 *
 * What it returns is scored by a relevance that means the same across segment kinds
 * (src/search/relevance.ts): ≥ 0.5 clearly bears on the text, < 0.2 noise.
 */
import type { Embedder } from '../analysis/engines/embedder';
import type { Intent } from '../answering/intent';
import type { Db } from '../storage/db';
import type { Segment, SegmentKind, Video } from '../storage/schema';
import { EvidenceFinder, type Ranked, type ScopeWindow } from './finder';
import { moveLegacyVectors, VectorStore } from './vectors';

export type { Ranked, ScopeWindow };

export class RetrievalCore {
  readonly vectors: VectorStore;
  /** The underlying finder, for callers not yet moved onto the methods below. */
  readonly finder: EvidenceFinder;

  constructor(
    private readonly d: {
      db: Db;
      embedder: Embedder | null;
      /** The data directory (kept for later use: the ANN indexes are rebuilt in memory today). */
      dataDir?: string;
      /** Scopes up to this many vectors are searched exactly (see vectors.ts EXACT_MAX). */
      exactMax?: number;
    },
  ) {
    // Vectors an earlier version kept in the segment rows move into the compact store, once.
    moveLegacyVectors(d.db);
    this.vectors = new VectorStore({ db: d.db, ...(d.exactMax !== undefined && { exactMax: d.exactMax }) });
    this.finder = new EvidenceFinder(d.db, this.vectors, d.embedder);
  }

  get embedder(): Embedder | null {
    return this.d.embedder;
  }

  /** A video's segments changed (analysis progressed, or it was removed). */
  invalidate(videoId: string): void {
    this.vectors.invalidate(videoId);
  }

  /**
   * Scored moments of every kind (or of `scope.kinds`) for a text, best first: each with its
   * `relevance` (comparable across kinds) and its `score` (relevance weighted by what `intent` needs).
   */
  retrieve(scope: ScopeWindow, text: string, intent: Intent, limit: number): Promise<Ranked[]> {
    return this.finder.ranked(scope, text, intent, limit);
  }

  /** The relevance of segments the caller holds, on the same scale as `retrieve`'s. */
  relevanceOf(scope: ScopeWindow, text: string, intent: Intent, segs: Segment[]): Promise<Ranked[]> {
    return this.finder.relevanceOf(scope, text, intent, segs);
  }

  /** Segments of the scope by kind (and label), in time order. */
  byKind(scope: ScopeWindow, kinds: SegmentKind[], opts: { labels?: string[]; limit?: number } = {}): Segment[] {
    return this.finder.byKind(scope, kinds, opts);
  }

  /** The sampled frame nearest a time, as a file name. */
  frameNear(videoId: string, t: number): string | null {
    return this.finder.frameNear(videoId, t);
  }

  /** Builds the ANN indexes these videos need ahead of the first question (bench, start-up warm-up). */
  prepare(videos: Video[]): Promise<void> {
    return this.d.embedder ? this.vectors.prepare(videos, this.d.embedder.dims) : Promise.resolve();
  }

  /** Saves what is not saved yet (the ANN indexes); call on shutdown. */
  flush(): void {
    this.vectors.flush();
  }
}
