/**
 * Evidence retrieval: the segments of a question's scope (videos, time window, kinds) that bear on
 * it, of every kind, found by keyword search (FTS5, BM25) and by embedding similarity (the vector
 * store: exact for small scopes, HNSW for large ones), each scored by a relevance that means the same
 * across kinds (src/search/relevance.ts), then weighted by the kinds the question's wording needs.
 */
import type { Embedder } from '../analysis/engines/embedder';
import { splitRun } from '../analysis/word-spaces';
import type { Intent } from '../answering/intent';
import type { Catalog } from '../storage/catalog';
import * as reads from '../storage/repositories/finder';
import type { Segment, SegmentKind, Video } from '../storage/rows';
import { SEM_FLOOR, stem, wordWeight } from './relevance';
import { type Ranked, scoreCandidates } from './scoring';
import type { VectorStore } from './vectors';

export interface ScopeWindow {
  videos: Video[];
  /** Time window within each video (null: the whole video). */
  window: { start: number; end: number } | null;
  /** Only these segment kinds (absent: every kind). */
  kinds?: SegmentKind[];
}

/** Seconds a label spans in one video, how many spans, and the first and last of their starts. */
interface LabelSum {
  seconds: number;
  count: number;
  first: number;
  last: number;
}

/** The first and the last start of one kind's segments in one video. */
interface StartRange {
  first: number;
  last: number;
}

/** The most rows `byKind` reads unless told otherwise (the first by time). */
export const KIND_READ_LIMIT = 500;

/** Videos whose labels are read per statement. */
const LABEL_CHUNK = 500;

/** Keyword candidates per question (best BM25 first). */
const KEYWORD_CANDIDATES = 100;
/** Nearest distinct vectors per question, and the most segments they may stand for. */
const SEMANTIC_VECTORS = 60;
const SEMANTIC_SEGMENTS = 120;
/** Document frequencies are counted up to this (a word this common weighs about the same beyond). */
const DF_CAP = 2_000;
/** Words whose document frequency is kept (until a video changes: see docFreqs). */
const DF_KEPT = 20_000;
/** Scopes of at most this many videos bound their keyword search by segment id (see rowidBounds). */
const BOUNDED_VIDEOS = 16;
/** Matches of the common words (DF_CAP or more) ranked by BM25 per question (see keyword()). */
const COMMON_SCAN = 4_000;

export class EvidenceFinder {
  /** Per kind, per video: seconds per label and its first start (see labelsOf). */
  private readonly labelCache = new Map<SegmentKind, Map<string, Map<string, LabelSum>>>();
  /** Per video: the kinds of segment it holds, each with its first and last start (see kindsOf). */
  private readonly kindCache = new Map<string, Map<SegmentKind, StartRange>>();
  /** Per word: its document frequency, while no video changed (`dfGeneration` counts the changes). */
  private readonly dfCache = new Map<string, number>();
  private dfGeneration = 0;

  constructor(
    private readonly c: Catalog,
    private readonly vectors: VectorStore,
    private readonly embedder: Embedder | null,
  ) {}

  /** Segments of the scope, by kind (and label for objects), in time order; without their embeddings (null). */
  async byKind(
    scope: ScopeWindow,
    kinds: SegmentKind[],
    opts: { labels?: string[]; limit?: number; last?: boolean } = {},
  ): Promise<Segment[]> {
    const limit = opts.limit ?? KIND_READ_LIMIT;
    const bound = await this.startBound(scope, kinds, opts.labels, limit, opts.last ?? false);
    const where = bound
      ? this.inScope({ ...scope, videos: bound.videos }, kinds, opts.labels)
      : await this.kindScope(scope, kinds, opts.labels);
    if (!where) return [];
    // The ids first: the sort and the limit work on the index alone (segments_video_kind_idx, or
    // segments_video_kind_text_idx for labels), and only the rows kept are read. `last` reads the
    // latest ones (still returned in time order): the last of 20,000 spans is not among the first 500.
    const ids = await reads.segmentIdsByTime(this.c, where, {
      limit,
      last: opts.last ?? false,
      ...(bound && { bound: bound.start }),
    });
    if (opts.last) ids.reverse();
    return this.inOrder(ids);
  }

  /** The segments of these ids, in this order. */
  private async inOrder(ids: number[]): Promise<Segment[]> {
    const byId = new Map((await this.rows(ids)).map((s) => [s.id, s]));
    return ids.map((id) => byId.get(id)!);
  }

  /**
   * Segments of these kinds in the scope whose text holds one of `phrases`, each as its words or the
   * starts of words (FTS5: the whole scope is searched), in time order, at most `limit`. For a caller
   * that then matches the text its own way where `byKind` was cut at its limit: over a large index
   * the lines with the words asked about lie beyond the first rows by time. It may miss text whose
   * words are not words to FTS5 (letters spaced out), never what `byKind` would have read in full.
   * `last`: the latest ones (still in time order).
   */
  async containing(
    scope: ScopeWindow,
    kinds: SegmentKind[],
    phrases: string[],
    opts: { limit?: number; last?: boolean } = {},
  ): Promise<Segment[]> {
    const groups = phrases.map((p) => p.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((g) => g.length > 0);
    if (groups.length === 0) return [];
    const videos = await this.holding(scope, kinds);
    if (videos.length === 0) return [];
    const ids = await reads.matchingIds(
      this.c,
      this.scopeOf({ ...scope, videos, kinds }),
      { prefixes: groups },
      { order: 'time', last: opts.last ?? false, limit: opts.limit ?? KIND_READ_LIMIT },
    );
    if (opts.last) ids.reverse();
    return this.inOrder(ids);
  }

  /** How many segments `byKind` would find without its limit (an answer's "and N more times"). */
  async countByKind(scope: ScopeWindow, kinds: SegmentKind[], labels?: string[]): Promise<number> {
    // Whole videos, object labels: the kept count of each label in each video (a common label is
    // tens of thousands of spans to count in an index of thousands of videos).
    if (!scope.window && labels?.length && kinds.length === 1 && kinds[0] === 'object') {
      const wanted = [...new Set(labels)];
      const videos = [...new Map(scope.videos.map((v) => [v.id, v])).values()];
      let n = 0;
      for (const byLabel of await this.labelsOf(videos, 'object'))
        for (const l of wanted) n += byLabel.get(l)?.count ?? 0;
      return n;
    }
    const where = await this.kindScope(scope, kinds, labels);
    return where ? reads.countSegments(this.c, where) : 0;
  }

  /**
   * Per video of the scope holding these kinds: how many segments, the seconds they span (summed
   * whole) and the first start; most seconds first (of equal ones, the earlier first). The whole
   * scope in one grouped read, where `byKind` would stop at its first rows by time.
   */
  async perVideo(
    scope: ScopeWindow,
    kinds: SegmentKind[],
  ): Promise<{ videoId: string; count: number; seconds: number; first: number }[]> {
    const where = await this.kindScope(scope, kinds);
    return where ? reads.perVideo(this.c, where) : [];
  }

  /** How many different texts (case aside) the segments of these kinds in the scope hold. */
  async distinctTexts(scope: ScopeWindow, kinds: SegmentKind[]): Promise<number> {
    const where = await this.kindScope(scope, kinds);
    return where ? reads.countDistinctTexts(this.c, where) : 0;
  }

  /**
   * A start that the first `limit` segments by time (the last ones, with `last`) of a whole-scope
   * read cannot lie beyond, and the videos with a segment on its side, from what is kept per video:
   * the first and last start of each kind, and of each object label with its count; null when none
   * is known (a time window, or fewer than `limit` segments known). A video's segments of a label
   * start at its first start (one) and by its last (all of them): the smallest start by which
   * `limit` segments have started bounds the read, which then looks into the videos with a segment
   * by then and sorts those segments, instead of every segment of the kind in the index (a hundred
   * thousand person spans, thousands of videos). The rows it keeps are the same, ties included: it
   * only leaves out rows that sort after all of them, and walks the same index in the same order
   * (tested against the unbounded read).
   */
  private async startBound(
    scope: ScopeWindow,
    kinds: SegmentKind[],
    labels: string[] | undefined,
    limit: number,
    last: boolean,
  ): Promise<{ start: number; videos: Video[] } | null> {
    if (scope.window || limit <= 0) return null;
    // [start, segments known to have started by then] (by then: at or before it; with `last`, at or after).
    const events: [number, number][] = [];
    // Per video, the start of its earliest (latest) segment read: NaN, none.
    const edge = new Float64Array(scope.videos.length).fill(Number.NaN);
    const add = (i: number, first: number, lastStart: number, count: number) => {
      const [near, far] = last ? [lastStart, first] : [first, lastStart];
      events.push([near, 1]);
      if (count > 1) events.push([far, count - 1]);
      const had = edge[i]!;
      edge[i] = Number.isNaN(had) ? near : last ? Math.max(had, near) : Math.min(had, near);
    };
    if (labels?.length) {
      // Labels are kept per video for object detections only (a transcript's lines are no labels).
      if (!kinds.every((k) => k === 'object')) return null;
      const wanted = [...new Set(labels)];
      const byVideo = await this.labelsOf(scope.videos, 'object');
      for (let i = 0; i < scope.videos.length; i++)
        for (const l of wanted) {
          const sum = byVideo[i]!.get(l);
          if (sum) add(i, sum.first, sum.last, sum.count);
        }
    } else {
      const have = await this.kindsOf(scope.videos);
      const wanted = [...new Set(kinds)];
      for (let i = 0; i < scope.videos.length; i++)
        for (const k of wanted) {
          const r = have[i]!.get(k);
          // Not counted per kind: one segment starts at the first start, another at the last (when later).
          if (r) add(i, r.first, r.last, r.last !== r.first ? 2 : 1);
        }
    }
    events.sort((a, b) => (last ? b[0] - a[0] : a[0] - b[0]));
    let started = 0;
    let start: number | null = null;
    for (const [at, n] of events) {
      started += n;
      if (started >= limit) {
        start = at;
        break;
      }
    }
    if (start === null) return null;
    const by = start;
    // NaN (no segment of these kinds) compares false: such a video is left out too.
    return { start: by, videos: scope.videos.filter((_, i) => (last ? edge[i]! >= by : edge[i]! <= by)) };
  }

  /** The read of these kinds in the scope, or null when no video holds one of them. */
  private async kindScope(
    scope: ScopeWindow,
    kinds: SegmentKind[],
    labels?: string[],
  ): Promise<reads.SegmentScope | null> {
    // Only the videos that hold one of the kinds (a default install has no captions at all: asking
    // for them read nothing, but probed every video of the index).
    const videos = await this.holding(scope, kinds);
    if (videos.length === 0) return null;
    return this.inScope({ ...scope, videos }, kinds, labels);
  }

  /** The scope's videos that hold one of these kinds. */
  private async holding(scope: ScopeWindow, kinds: SegmentKind[]): Promise<Video[]> {
    const have = await this.kindsOf(scope.videos);
    return scope.videos.filter((_, i) => kinds.some((k) => have[i]!.has(k)));
  }

  /**
   * Seconds each label of `kind` spans in the scope (spans summed whole), longest first, of equal
   * ones the first seen first. Summed in SQL: object rows carry per-frame boxes, and reading them
   * all to add up durations was the bulk of a "not found" answer's time on the server's thread.
   * Without a time window, each video's sums are kept (see labelsOf).
   */
  async labelSeconds(
    scope: ScopeWindow,
    kind: SegmentKind,
    limit: number,
  ): Promise<{ label: string; seconds: number }[]> {
    if (scope.videos.length === 0) return [];
    if (scope.window) return reads.labelSecondsOf(this.c, this.inScope(scope, [kind]), limit);
    const sum = new Map<string, { seconds: number; first: number }>();
    for (const v of await this.labelsOf(scope.videos, kind))
      for (const [label, l] of v) {
        const had = sum.get(label);
        if (had) {
          had.seconds += l.seconds;
          had.first = Math.min(had.first, l.first);
        } else sum.set(label, { seconds: l.seconds, first: l.first });
      }
    return [...sum]
      .sort((a, b) => b[1].seconds - a[1].seconds || a[1].first - b[1].first)
      .slice(0, limit)
      .map(([label, { seconds }]) => ({ label, seconds }));
  }

  /**
   * The videos among these whose detections of `kind` (default: objects) include `label`: a question
   * about a label over a whole index reads only those (and none for a label no video has).
   */
  async withLabel(videos: Video[], label: string, kind: SegmentKind = 'object'): Promise<Video[]> {
    const labels = await this.labelsOf(videos, kind);
    return videos.filter((_, i) => labels[i]!.has(label));
  }

  /**
   * How many spans of `label` (of `kind`, default objects) each of these videos holds and their first
   * start, in the order of `videos` (undefined: none), from the kept labels.
   */
  async labelSpans(
    videos: Video[],
    label: string,
    kind: SegmentKind = 'object',
  ): Promise<({ count: number; first: number } | undefined)[]> {
    return (await this.labelsOf(videos, kind)).map((byLabel) => byLabel.get(label));
  }

  /**
   * Each video's labels of `kind` with the seconds they span and their first start, in the order of
   * `videos`. Kept in memory per video (the one per-video label cache: which labels a video holds
   * and for how long), computed on first use and dropped when the video changes (invalidate).
   */
  private async labelsOf(videos: Video[], kind: SegmentKind): Promise<Map<string, LabelSum>[]> {
    let byVideo = this.labelCache.get(kind);
    if (!byVideo) this.labelCache.set(kind, (byVideo = new Map()));
    // One lookup per video (a whole index is thousands: building a key string for each, twice, was
    // a few ms of every question).
    const out = new Array<Map<string, LabelSum>>(videos.length);
    const missing: string[] = [];
    for (let i = 0; i < videos.length; i++) {
      const had = byVideo.get(videos[i]!.id);
      if (had) out[i] = had;
      else missing.push(videos[i]!.id);
    }
    if (missing.length === 0) return out;
    for (let i = 0; i < missing.length; i += LABEL_CHUNK) {
      const ids = missing.slice(i, i + LABEL_CHUNK);
      const rows = await reads.labelSums(this.c, ids, kind);
      for (const id of ids) byVideo.set(id, new Map());
      for (const r of rows)
        byVideo.get(r.v)!.set(r.label, { seconds: r.seconds, count: r.count, first: r.first, last: r.last });
    }
    for (let i = 0; i < videos.length; i++) out[i] ??= byVideo.get(videos[i]!.id)!;
    return out;
  }

  /**
   * The kinds of segment each video holds, in the order of `videos`: kept per video like its labels
   * (a question over a whole index asks "are there captions at all?" without probing every video).
   */
  private async kindsOf(videos: Video[]): Promise<Map<SegmentKind, StartRange>[]> {
    const out = new Array<Map<SegmentKind, StartRange>>(videos.length);
    const missing: string[] = [];
    for (let i = 0; i < videos.length; i++) {
      const had = this.kindCache.get(videos[i]!.id);
      if (had) out[i] = had;
      else missing.push(videos[i]!.id);
    }
    if (missing.length === 0) return out;
    for (let i = 0; i < missing.length; i += LABEL_CHUNK) {
      const ids = missing.slice(i, i + LABEL_CHUNK);
      const rows = await reads.kindRanges(this.c, ids);
      for (const id of ids) this.kindCache.set(id, new Map());
      for (const r of rows) this.kindCache.get(r.v)!.set(r.kind, { first: r.first, last: r.last });
    }
    for (let i = 0; i < videos.length; i++) out[i] ??= this.kindCache.get(videos[i]!.id)!;
    return out;
  }

  /** A video's segments changed: its kept labels and kinds are dropped. */
  invalidate(videoId: string): void {
    for (const byVideo of this.labelCache.values()) byVideo.delete(videoId);
    this.kindCache.delete(videoId);
    // Any video's segments count in every word's frequency.
    this.dfCache.clear();
    this.dfGeneration++;
  }

  /**
   * Segments of `kind` that overlap one of `spans` in time, in the same video, other than the labels
   * of `except` (and inside `window`, when given); in time order, at most `limit`. Read from the spans' own videos and times (through
   * segments_video_kind_idx), whatever the size of the index around them.
   */
  async overlapping(
    spans: Segment[],
    kind: SegmentKind,
    except: string[],
    window: ScopeWindow['window'] = null,
    limit = 500,
  ): Promise<Segment[]> {
    if (spans.length === 0) return [];
    const at = spans.map((s): [string, number, number] => [s.videoId, s.start, s.end]);
    return this.inOrder(await reads.overlappingIds(this.c, at, kind, except, window, limit));
  }

  /**
   * Whether the scope has any segment of these kinds (of these labels, when given). With a window,
   * one indexed probe that stops at the first match (not the first by time, which sorts them all).
   */
  async has(scope: ScopeWindow, kinds: SegmentKind[], labels?: string[]): Promise<boolean> {
    if (scope.videos.length === 0) return false;
    if (!scope.window && !labels?.length)
      return (await this.kindsOf(scope.videos)).some((have) => kinds.some((k) => have.has(k)));
    return reads.anySegment(this.c, this.inScope(scope, kinds, labels));
  }

  /** The read of these kinds (and labels) in the scope. */
  private inScope(scope: ScopeWindow, kinds: SegmentKind[], labels?: string[]): reads.SegmentScope {
    return {
      videoIds: scope.videos.map((v) => v.id),
      kinds,
      ...(labels?.length && { labels }),
      window: scope.window,
    };
  }

  /** The read of the scope as it is (its kinds, when it has some). */
  private scopeOf(scope: ScopeWindow): reads.SegmentScope {
    return {
      videoIds: scope.videos.map((v) => v.id),
      ...(scope.kinds?.length && { kinds: scope.kinds }),
      window: scope.window,
    };
  }

  /** Segments by id (in id order). */
  private rows(ids: number[]): Promise<Segment[]> {
    return reads.segmentsById(this.c, ids);
  }

  /** The full-text terms for words, OR-ed: a run-together word also as the words it is made of. */
  private termsOf(keywords: string[]): string[] {
    // The index holds text with its word spaces put back (see word-spaces.ts).
    return keywords.flatMap((k) => {
      const words = /^\p{Script=Latin}{6,}$/u.test(k) ? splitRun(k) : k;
      return words !== k ? [k, words] : [k];
    });
  }

  /**
   * Keyword search (BM25) over the scope; returns segment ids best first. The ranking by BM25 reads
   * every match, so words common in the index (in DF_CAP segments or more) are ranked only over
   * their first COMMON_SCAN matches in the scope, after the matches of the rarer words: without
   * that, a question with a common word ("people", "car") cost time in proportion to the index.
   */
  async keyword(scope: ScopeWindow, keywords: string[], limit = 40, df?: Map<string, number>): Promise<number[]> {
    if (keywords.length === 0 || scope.videos.length === 0) return [];
    const freq = df ?? (await this.docFreqs(keywords));
    const rare = keywords.filter((k) => (freq.get(k) ?? 0) < DF_CAP);
    const bounds = await this.rowidBounds(scope);
    if (bounds === 'empty') return [];
    const where = this.scopeOf(scope);
    const query = (words: string[]) => {
      const terms = this.termsOf(words);
      // Each term weighed by its rarity as BM25 weighs a word (its IDF, with the DF_CAP as the
      // document count): only PostgreSQL's ts_rank needs it, FTS5's bm25() has its own.
      const weights = terms.map((t) => Math.log(1 + DF_CAP / ((freq.get(t) ?? 0) + 0.5)));
      return { q: { terms }, weights };
    };
    const out: number[] = [];
    if (rare.length) {
      const { q, weights } = query(rare);
      out.push(
        ...(await reads.matchingIds(this.c, where, q, {
          order: 'rank',
          limit,
          weights,
          ...(bounds && { idRange: bounds }),
        })),
      );
    }
    if (out.length < limit && rare.length < keywords.length) {
      const seen = new Set(out);
      const { q, weights } = query(keywords);
      const rows = await reads.matchingIds(this.c, where, q, {
        order: 'rank',
        limit,
        scan: COMMON_SCAN,
        weights,
        ...(bounds && { idRange: bounds }),
      });
      for (const id of rows) {
        if (out.length >= limit) break;
        if (!seen.has(id)) out.push(id);
      }
    }
    return out;
  }

  /**
   * For a scope of a few videos, the range of their segment ids as a bound on the full-text rows:
   * FTS5 then reads only that stretch of each word's matches instead of every match in the index
   * (a common word in one video's window went from ~300 ms to ~30 ms at 1,000 h). The other
   * conditions stay, so it only skips rows that could not be in the scope. 'empty': no segments;
   * null: no bound (a larger scope).
   */
  private async rowidBounds(scope: ScopeWindow): Promise<{ lo: number; hi: number } | null | 'empty'> {
    if (scope.videos.length > BOUNDED_VIDEOS) return null;
    return (
      (await reads.segmentIdRange(
        this.c,
        scope.videos.map((v) => v.id),
      )) ?? 'empty'
    );
  }

  /**
   * How many segments of the whole index hold each word (counted up to DF_CAP): one statement for
   * the words not counted since the last change of a video (a count of a frequent word reads up to
   * DF_CAP rows: on PostgreSQL a phrase match rechecks each one).
   */
  async docFreqs(terms: string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (const t of terms) if (this.dfCache.has(t)) out.set(t, this.dfCache.get(t)!);
    const missing = [...new Set(terms.filter((t) => !out.has(t)))];
    if (missing.length === 0) return out;
    const generation = this.dfGeneration;
    const counts = await reads.documentFrequencies(
      this.c,
      missing.map((t) => this.termsOf([t])),
      DF_CAP,
    );
    missing.forEach((t, i) => out.set(t, counts[i]!));
    // Counted while a video changed: used for this question only.
    if (generation === this.dfGeneration) {
      if (this.dfCache.size + missing.length > DF_KEPT) this.dfCache.clear();
      for (const t of missing) this.dfCache.set(t, out.get(t)!);
    }
    return out;
  }

  /** The question's embedding (normalised), or null without an embedding model. */
  private async queryVector(question: string, vector: Float32Array | null): Promise<Float32Array | null> {
    if (!this.embedder) return null;
    let q: Float32Array;
    try {
      q = vector ?? ((await this.embedder.embed([question])) as [Float32Array])[0];
    } catch {
      return null; // no embedding model here: keyword search still answers
    }
    let n = 0;
    for (let i = 0; i < q.length; i++) n += q[i]! * q[i]!;
    n = Math.sqrt(n);
    return n > 0 && Math.abs(n - 1) > 1e-3 ? q.map((x) => x / n) : q;
  }

  /** Videos whose vectors can be compared with the question's (those of the configured model). */
  private comparable(scope: ScopeWindow): Video[] {
    // Never compare vectors of two models (issue 11): a video embedded by another model (its
    // re-embedding not done yet) is left to keyword search.
    return this.embedder ? scope.videos.filter((v) => embeddedBy(v) === this.embedder!.info.name) : [];
  }

  /** Embedding similarity over the scope; returns [segment id, cosine] best first. */
  async semantic(
    scope: ScopeWindow,
    question: string,
    limit = 40,
    vector: Float32Array | null = null,
  ): Promise<[number, number][]> {
    const q = await this.queryVector(question, vector);
    if (!q) return [];
    return (await this.semanticRows(scope, q, limit)).map(([s, c]) => [s.id, c]);
  }

  /** Segments nearest in meaning, best first (of equal cosines, in time order), up to `limit`. */
  private async semanticRows(scope: ScopeWindow, q: Float32Array, limit: number): Promise<[Segment, number][]> {
    const videos = this.comparable(scope);
    if (videos.length === 0) return [];
    const narrowed = scope.window !== null || (scope.kinds?.length ?? 0) > 0;
    let cos: Map<number, number>;
    if (scope.window) {
      // A moment: every vector of the segments in the window, exactly (few).
      const ids = await reads.vectorIdsInScope(this.c, this.scopeOf({ ...scope, videos }), 20_000);
      cos = await this.vectors.cosinesById(ids, q);
    } else {
      const near = await this.vectors.nearest(videos, q, narrowed ? SEMANTIC_VECTORS * 4 : SEMANTIC_VECTORS);
      cos = new Map(near);
    }
    const best = [...cos].filter(([, c]) => c > SEM_FLOOR).sort((a, b) => b[1] - a[1] || a[0] - b[0]);
    if (best.length === 0) return [];
    const rows = await reads.segmentsOfVectors(
      this.c,
      best.slice(0, SEMANTIC_VECTORS).map(([id]) => id),
      { ...(scope.kinds?.length && { kinds: scope.kinds }), window: scope.window },
    );
    const byVector = new Map<number, Segment[]>();
    for (const r of rows) {
      const list = byVector.get(r.vectorId!) ?? [];
      list.push(r);
      byVector.set(r.vectorId!, list);
    }
    const out: [Segment, number][] = [];
    for (const [v, c] of best) {
      for (const s of byVector.get(v) ?? []) {
        if (out.length >= Math.min(limit, SEMANTIC_SEGMENTS)) return out;
        out.push([s, c]);
      }
    }
    return out;
  }

  /**
   * The hybrid ranking: keyword candidates (BM25) and meaning candidates (nearest vectors), each
   * given its relevance from both signals; ordered by relevance × the kind weight of the question.
   */
  async ranked(
    scope: ScopeWindow,
    question: string,
    intent: Intent,
    limit = 12,
    vector: Float32Array | null = null,
  ): Promise<Ranked[]> {
    if (scope.videos.length === 0) return [];
    const terms = [...new Set([...intent.keywords, ...intent.labels].map((t) => t.toLowerCase()))];
    const df = await this.docFreqs(terms);
    const kwIds = terms.length ? await this.keyword(scope, terms, KEYWORD_CANDIDATES, df) : [];
    const q = await this.queryVector(question, vector);
    const sem = q ? await this.semanticRows(scope, q, SEMANTIC_SEGMENTS) : [];
    const bySeg = new Map<number, Segment>(sem.map(([s]) => [s.id, s]));
    const cosOf = new Map<number, number>(sem.map(([s, c]) => [s.id, c]));
    const kwOnly = kwIds.filter((id) => !bySeg.has(id));
    for (const s of await this.rows(kwOnly)) bySeg.set(s.id, s);
    if (bySeg.size === 0) return [];
    // The cosine of the keyword candidates too, so that both signals count for every candidate.
    if (q) {
      const comparable = new Set(this.comparable(scope).map((v) => v.id));
      const need = kwOnly
        .map((id) => bySeg.get(id))
        .filter((s): s is Segment => !!s && s.vectorId !== null && comparable.has(s.videoId));
      const cos = await this.vectors.cosinesById([...new Set(need.map((s) => s.vectorId!))], q);
      for (const s of need) if (cos.has(s.vectorId!)) cosOf.set(s.id, cos.get(s.vectorId!)!);
    }
    return (await this.scored(bySeg, cosOf, new Set(kwIds), intent, df))
      .sort((a, b) => b.score - a.score || a.segment.id - b.segment.id)
      .slice(0, limit);
  }

  /**
   * The same relevance for segments a caller already holds (every caption of a scope, say), so
   * that they compete with the retrieved ones on one scale. Segments with no relevance are left out.
   */
  async relevanceOf(
    scope: ScopeWindow,
    question: string,
    intent: Intent,
    segs: Segment[],
    vector: Float32Array | null = null,
  ): Promise<Ranked[]> {
    if (!segs.length) return [];
    const bySeg = new Map<number, Segment>(segs.map((s) => [s.id, s]));
    const cosOf = new Map<number, number>();
    const q = await this.queryVector(question, vector);
    if (q) {
      const comparable = new Set(this.comparable(scope).map((v) => v.id));
      const need = segs.filter((s) => s.vectorId !== null && comparable.has(s.videoId));
      const cos = await this.vectors.cosinesById([...new Set(need.map((s) => s.vectorId!))], q);
      for (const s of need) if (cos.has(s.vectorId!)) cosOf.set(s.id, cos.get(s.vectorId!)!);
    }
    return this.scored(bySeg, cosOf, new Set(), intent);
  }

  /** Relevance (and the kind-weighted score) of each candidate from its words and its cosine. */
  private async scored(
    bySeg: Map<number, Segment>,
    cosOf: Map<number, number>,
    kwSet: Set<number>,
    intent: Intent,
    df?: Map<string, number>,
  ): Promise<Ranked[]> {
    // Relevance weighs the words the query says; the detector labels read from them ("puppy" →
    // dog) only find candidates, and a segment of such a label counts as one word matched.
    const said = [...new Set(intent.keywords.map((t) => t.toLowerCase()))];
    return scoreCandidates({
      bySeg,
      cosOf,
      kwSet,
      intent,
      said,
      weigh: await this.wordWeights(said, df),
      segmentCount: await this.segmentCount(),
    });
  }

  /**
   * The weight of each query word: its inverse document frequency over the index. Words the index
   * never holds (as FTS5 sees it) are left out: they cannot tell one segment from another.
   */
  private async wordWeights(terms: string[], known?: Map<string, number>): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    if (terms.length === 0) return out;
    const n = await this.segmentCount();
    const missing = terms.filter((t) => !known?.has(t));
    const df = new Map([...(known ?? []), ...(await this.docFreqs(missing))]);
    for (const t of terms) {
      const d = df.get(t) ?? 0;
      if (d > 0) out.set(stem(t), wordWeight(d, n));
    }
    return out;
  }

  /** About how many segments there are (the largest id: exact enough for word weights, and free). */
  private segmentCount(): Promise<number> {
    return reads.maxSegmentId(this.c);
  }

  /**
   * The sampled frame nearest a time, as a file name (of two as near, the earlier). The frame just
   * before and the one just after, each one step of frames_video_t_idx: ordering every frame of the
   * video by its distance read them all, a few dozen times per answer.
   */
  async frameNear(videoId: string, t: number): Promise<string | null> {
    return (await this.framesNear([[videoId, t]]))[0]!;
  }

  /** frameNear for many [video id, time] points: one read for all of them. */
  async framesNear(points: [string, number][]): Promise<(string | null)[]> {
    if (points.length === 0) return [];
    return (await reads.framesAround(this.c, points)).map(({ before, after }, i) => {
      const t = points[i]![1];
      if (!before) return after?.file ?? null;
      if (!after) return before.file;
      return t - before.t <= after.t - t ? before.file : after.file;
    });
  }
}

/** The embedding model a video's vectors came from, as the pipeline recorded it (older videos: the engine). */
export function embeddedBy(v: Video): string | undefined {
  const e = (v.analysis as { embeddings?: { producer?: unknown; engine?: unknown } } | null)?.embeddings;
  const name = e?.producer ?? e?.engine;
  return typeof name === 'string' ? name : undefined;
}
