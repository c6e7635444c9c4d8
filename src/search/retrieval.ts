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
import { join } from 'node:path';
import type { Catalog } from '../storage/catalog';
import { searchableVideos } from '../storage/repositories/finder';
import { moveLegacyVectors, storedVectorLength } from '../storage/repositories/vectors';
import type { Segment, SegmentKind, Video } from '../storage/rows';
import { embeddedBy, EvidenceFinder, type ScopeWindow } from './finder';
import type { Ranked } from './scoring';
import { VectorStore } from './vectors';

export type { Ranked, ScopeWindow };

export class RetrievalCore {
  readonly vectors: VectorStore;
  private warming: Promise<void> | null = null;
  /** The move of an earlier version's vectors (see the constructor): its error, if it failed. */
  private readonly legacyMoved: Promise<Error | null>;
  private warmed = false;
  private warmedInMs: number | null = null;
  /** The underlying finder, for callers not yet moved onto the methods below. */
  readonly finder: EvidenceFinder;

  constructor(
    private readonly d: {
      catalog: Catalog;
      embedder: Embedder | null;
      /** The data directory: the ANN indexes' lists are saved in its search-index/ folder. */
      dataDir?: string;
      /** Scopes up to this many vectors are searched exactly (see vectors.ts EXACT_MAX). */
      exactMax?: number;
    },
  ) {
    // Vectors an earlier version kept in the segment rows move into the compact store, once. On
    // SQLite this runs now, before the constructor returns (the catalog is idle at start, so its
    // body starts at once and never awaits); PostgreSQL catalogs never held such vectors.
    // A failure is reported by warmUp (start-up logs it), never as an unhandled rejection.
    this.legacyMoved = moveLegacyVectors(d.catalog).then(
      () => null,
      (e: Error) => e,
    );
    this.vectors = new VectorStore({
      catalog: d.catalog,
      ...(d.exactMax !== undefined && { exactMax: d.exactMax }),
      ...(d.dataDir !== undefined && { dir: join(d.dataDir, 'search-index') }),
    });
    this.finder = new EvidenceFinder(d.catalog, this.vectors, d.embedder);
  }

  get embedder(): Embedder | null {
    return this.d.embedder;
  }

  /** A video's segments changed (analysis progressed, or it was removed). */
  invalidate(videoId: string): void {
    this.vectors.invalidate(videoId);
    this.finder.invalidate(videoId);
  }

  /** A media index was purged (its videos were invalidated one by one before). */
  forgetIndex(indexId: string): void {
    this.vectors.forgetIndex(indexId);
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
  byKind(
    scope: ScopeWindow,
    kinds: SegmentKind[],
    opts: { labels?: string[]; limit?: number } = {},
  ): Promise<Segment[]> {
    return this.finder.byKind(scope, kinds, opts);
  }

  /** The sampled frame nearest a time, as a file name. */
  frameNear(videoId: string, t: number): Promise<string | null> {
    return this.finder.frameNear(videoId, t);
  }

  /** Builds the ANN indexes these videos need ahead of the first question (bench, start-up warm-up). */
  prepare(videos: Video[]): Promise<void> {
    return this.d.embedder ? this.vectors.prepare(videos, this.d.embedder.dims) : Promise.resolve();
  }

  /**
   * Builds, in the background, the ANN index of every media index large enough to need one, so that
   * the first questions after a start do not search every vector exactly while it builds (start-up).
   */
  warmUp(): Promise<void> {
    this.warming ??= (async () => {
      const t0 = performance.now();
      const moveFailed = await this.legacyMoved;
      if (moveFailed) throw new Error(`the vectors of an earlier version were not moved: ${moveFailed.message}`);
      const name = this.d.embedder?.info.name;
      if (!name) return;
      const all = (await searchableVideos(this.d.catalog)).filter((v) => embeddedBy(v) === name);
      const dims = await storedVectorLength(this.d.catalog);
      if (all.length && dims) await this.vectors.prepare(all, dims);
      this.warmedInMs = performance.now() - t0;
    })().finally(() => {
      this.warmed = true;
    });
    return this.warming;
  }

  /**
   * Whether searches use their ANN indexes (true) or some still search exactly while one builds,
   * and how long the start-up build took (null: not done yet). Shown by GET /health, unauthenticated,
   * so it says nothing about what is indexed.
   */
  annState(): { ready: boolean; build_ms: number | null } {
    const s = this.vectors.annState();
    return {
      ready: (this.warming === null || this.warmed) && !s.building,
      build_ms: this.warmedInMs === null ? null : Math.round(this.warmedInMs),
    };
  }

  /** Saves what is not saved yet (the ANN indexes); call on shutdown. */
  flush(): void {
    this.vectors.flush();
  }
}
