/**
 * Evidence retrieval: the segments of a question's scope (videos, time window, kinds) that bear on
 * it, of every kind, found by keyword search (FTS5, BM25) and by embedding similarity (the vector
 * store: exact for small scopes, HNSW for large ones), each scored by a relevance that means the same
 * across kinds (src/search/relevance.ts), then weighted by the kinds the question's wording needs.
 */
import { and, asc, desc, gte, inArray, lte, sql, type SQL } from 'drizzle-orm';
import type { Embedder } from '../analysis/engines/embedder';
import { splitRun } from '../analysis/word-spaces';
import type { Intent } from '../answering/intent';
import type { Db } from '../storage/db';
import { SEGMENT_KINDS, segments, type Segment, type SegmentKind, type Video } from '../storage/schema';
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
/** Scopes of at most this many videos bound their keyword search by segment id (see rowidBounds). */
const BOUNDED_VIDEOS = 16;
/** Matches of the common words (DF_CAP or more) ranked by BM25 per question (see keyword()). */
const COMMON_SCAN = 4_000;

/** Every column but the legacy embedding (segment rows are read without it). */
const ROW = {
  id: segments.id,
  videoId: segments.videoId,
  kind: segments.kind,
  start: segments.start,
  end: segments.end,
  text: segments.text,
  confidence: segments.confidence,
  extra: segments.extra,
  vectorId: segments.vectorId,
};

export class EvidenceFinder {
  /** Per kind, per video: seconds per label and its first start (see labelsOf). */
  private readonly labelCache = new Map<SegmentKind, Map<string, Map<string, LabelSum>>>();
  /** Per video: the kinds of segment it holds, each with its first and last start (see kindsOf). */
  private readonly kindCache = new Map<string, Map<SegmentKind, StartRange>>();

  constructor(
    private readonly db: Db,
    private readonly vectors: VectorStore,
    private readonly embedder: Embedder | null,
  ) {}

  /** Segments of the scope, by kind (and label for objects), in time order; without their embeddings (null). */
  byKind(
    scope: ScopeWindow,
    kinds: SegmentKind[],
    opts: { labels?: string[]; limit?: number; last?: boolean } = {},
  ): Segment[] {
    const limit = opts.limit ?? KIND_READ_LIMIT;
    const bound = this.startBound(scope, kinds, opts.labels, limit, opts.last ?? false);
    const conds = bound
      ? this.inScope({ ...scope, videos: bound.videos }, kinds, opts.labels)
      : this.kindConds(scope, kinds, opts.labels);
    if (!conds) return [];
    if (bound) conds.push(opts.last ? gte(segments.start, bound.start) : lte(segments.start, bound.start));
    // The ids first: the sort and the limit work on the index alone (segments_video_kind_idx, or
    // segments_video_kind_text_idx for labels), and only the rows kept are read. `last` reads the
    // latest ones (still returned in time order): the last of 20,000 spans is not among the first 500.
    const ids = this.db
      .select({ id: segments.id })
      .from(segments)
      .where(and(...conds))
      .orderBy(opts.last ? desc(segments.start) : asc(segments.start))
      .limit(limit)
      .all()
      .map((r) => r.id);
    if (opts.last) ids.reverse();
    const byId = new Map(this.rows(ids).map((s) => [s.id, s]));
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
  containing(
    scope: ScopeWindow,
    kinds: SegmentKind[],
    phrases: string[],
    opts: { limit?: number; last?: boolean } = {},
  ): Segment[] {
    const groups = phrases
      .map((p) => (p.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).map((w) => `"${w}"*`).join(' AND '))
      .filter((g) => g.length > 0);
    if (groups.length === 0) return [];
    const videos = this.holding(scope, kinds);
    if (videos.length === 0) return [];
    const ids = this.db
      .all<{ id: number }>(
        sql`SELECT s.id AS id FROM segments_fts f JOIN segments s ON s.id = f.rowid
            WHERE segments_fts MATCH ${groups.map((g) => `(${g})`).join(' OR ')} AND ${this.scopeSql({ ...scope, videos, kinds })}
            ORDER BY ${opts.last ? sql`s.start DESC, s.id DESC` : sql`s.start, s.id`} LIMIT ${opts.limit ?? KIND_READ_LIMIT}`,
      )
      .map((r) => r.id);
    if (opts.last) ids.reverse();
    const byId = new Map(this.rows(ids).map((s) => [s.id, s]));
    return ids.map((id) => byId.get(id)!);
  }

  /** How many segments `byKind` would find without its limit (an answer's "and N more times"). */
  countByKind(scope: ScopeWindow, kinds: SegmentKind[], labels?: string[]): number {
    // Whole videos, object labels: the kept count of each label in each video (a common label is
    // tens of thousands of spans to count in an index of thousands of videos).
    if (!scope.window && labels?.length && kinds.length === 1 && kinds[0] === 'object') {
      const wanted = [...new Set(labels)];
      const videos = [...new Map(scope.videos.map((v) => [v.id, v])).values()];
      let n = 0;
      for (const byLabel of this.labelsOf(videos, 'object')) for (const l of wanted) n += byLabel.get(l)?.count ?? 0;
      return n;
    }
    const conds = this.kindConds(scope, kinds, labels);
    if (!conds) return 0;
    return this.db
      .select({ n: sql<number>`count(*)` })
      .from(segments)
      .where(and(...conds))
      .get()!.n;
  }

  /**
   * Per video of the scope holding these kinds: how many segments, the seconds they span (summed
   * whole) and the first start; most seconds first (of equal ones, the earlier first). The whole
   * scope in one grouped read, where `byKind` would stop at its first rows by time.
   */
  perVideo(
    scope: ScopeWindow,
    kinds: SegmentKind[],
  ): { videoId: string; count: number; seconds: number; first: number }[] {
    const conds = this.kindConds(scope, kinds);
    if (!conds) return [];
    const seconds = sql<number>`sum(${segments.end} - ${segments.start})`;
    return this.db
      .select({
        videoId: segments.videoId,
        count: sql<number>`count(*)`,
        seconds,
        first: sql<number>`min(${segments.start})`,
      })
      .from(segments)
      .where(and(...conds))
      .groupBy(segments.videoId)
      .orderBy(desc(seconds), asc(sql`min(${segments.start})`))
      .all();
  }

  /** How many different texts (case aside) the segments of these kinds in the scope hold. */
  distinctTexts(scope: ScopeWindow, kinds: SegmentKind[]): number {
    const conds = this.kindConds(scope, kinds);
    if (!conds) return 0;
    return this.db
      .select({ n: sql<number>`count(DISTINCT lower(${segments.text}))` })
      .from(segments)
      .where(and(...conds))
      .get()!.n;
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
  private startBound(
    scope: ScopeWindow,
    kinds: SegmentKind[],
    labels: string[] | undefined,
    limit: number,
    last: boolean,
  ): { start: number; videos: Video[] } | null {
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
      const byVideo = this.labelsOf(scope.videos, 'object');
      for (let i = 0; i < scope.videos.length; i++)
        for (const l of wanted) {
          const sum = byVideo[i]!.get(l);
          if (sum) add(i, sum.first, sum.last, sum.count);
        }
    } else {
      const have = this.kindsOf(scope.videos);
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

  /** The conditions of a read of these kinds in the scope, or null when no video holds one of them. */
  private kindConds(scope: ScopeWindow, kinds: SegmentKind[], labels?: string[]): SQL[] | null {
    // Only the videos that hold one of the kinds (a default install has no captions at all: asking
    // for them read nothing, but probed every video of the index).
    const videos = this.holding(scope, kinds);
    if (videos.length === 0) return null;
    return this.inScope({ ...scope, videos }, kinds, labels);
  }

  /** The scope's videos that hold one of these kinds. */
  private holding(scope: ScopeWindow, kinds: SegmentKind[]): Video[] {
    const have = this.kindsOf(scope.videos);
    return scope.videos.filter((_, i) => kinds.some((k) => have[i]!.has(k)));
  }

  /**
   * Seconds each label of `kind` spans in the scope (spans summed whole), longest first, of equal
   * ones the first seen first. Summed in SQL: object rows carry per-frame boxes, and reading them
   * all to add up durations was the bulk of a "not found" answer's time on the server's thread.
   * Without a time window, each video's sums are kept (see labelsOf).
   */
  labelSeconds(scope: ScopeWindow, kind: SegmentKind, limit: number): { label: string; seconds: number }[] {
    if (scope.videos.length === 0) return [];
    if (scope.window) {
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
    const sum = new Map<string, { seconds: number; first: number }>();
    for (const v of this.labelsOf(scope.videos, kind))
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
  withLabel(videos: Video[], label: string, kind: SegmentKind = 'object'): Video[] {
    const labels = this.labelsOf(videos, kind);
    return videos.filter((_, i) => labels[i]!.has(label));
  }

  /**
   * How many spans of `label` (of `kind`, default objects) each of these videos holds and their first
   * start, in the order of `videos` (undefined: none), from the kept labels.
   */
  labelSpans(
    videos: Video[],
    label: string,
    kind: SegmentKind = 'object',
  ): ({ count: number; first: number } | undefined)[] {
    return this.labelsOf(videos, kind).map((byLabel) => byLabel.get(label));
  }

  /**
   * Each video's labels of `kind` with the seconds they span and their first start, in the order of
   * `videos`. Kept in memory per video (the one per-video label cache: which labels a video holds
   * and for how long), computed on first use and dropped when the video changes (invalidate).
   */
  private labelsOf(videos: Video[], kind: SegmentKind): Map<string, LabelSum>[] {
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
      const rows = this.db.all<{
        v: string;
        label: string;
        seconds: number;
        count: number;
        first: number;
        last: number;
      }>(
        sql`SELECT video_id AS v, text AS label, sum("end" - start) AS seconds, count(*) AS count, min(start) AS first, max(start) AS last
            FROM segments WHERE video_id IN (SELECT value FROM json_each(${JSON.stringify(ids)})) AND kind = ${kind}
            GROUP BY video_id, text`,
      );
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
  private kindsOf(videos: Video[]): Map<SegmentKind, StartRange>[] {
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
      // Two steps of segments_video_kind_idx per video and kind, its first and its last entry (not a
      // read of every row).
      const rows = this.db.all<{ v: string; kind: SegmentKind; first: number; last: number }>(
        sql`SELECT v, kind, first, (SELECT max(start) FROM segments WHERE video_id = v AND kind = t.kind) AS last
            FROM (SELECT j.value AS v, k.value AS kind, (SELECT min(start) FROM segments WHERE video_id = j.value AND kind = k.value) AS first
                  FROM json_each(${JSON.stringify(ids)}) j, json_each(${JSON.stringify(SEGMENT_KINDS)}) k) t
            WHERE first IS NOT NULL`,
      );
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
  }

  /**
   * Segments of `kind` that overlap one of `spans` in time, in the same video, other than the labels
   * of `except` (and inside `window`, when given); in time order, at most `limit`. Read from the spans' own videos and times (through
   * segments_video_kind_idx), whatever the size of the index around them.
   */
  overlapping(
    spans: Segment[],
    kind: SegmentKind,
    except: string[],
    window: ScopeWindow['window'] = null,
    limit = 500,
  ): Segment[] {
    if (spans.length === 0) return [];
    const win = window ? sql` AND s."end" >= ${window.start} AND s.start <= ${window.end}` : sql``;
    const at = JSON.stringify(spans.map((s) => [s.videoId, s.start, s.end]));
    const ids = this.db
      .all<{ id: number }>(
        sql`SELECT DISTINCT s.id AS id, s.start AS start FROM json_each(${at}) m
            JOIN segments s ON s.video_id = m.value ->> 0 AND s.kind = ${kind}
              AND s.start < m.value ->> 2 AND s."end" > m.value ->> 1
            WHERE s.text NOT IN (SELECT value FROM json_each(${JSON.stringify(except)}))${win}
            ORDER BY s.start, s.id LIMIT ${limit}`,
      )
      .map((r) => r.id);
    const byId = new Map(this.rows(ids).map((s) => [s.id, s]));
    return ids.map((id) => byId.get(id)!);
  }

  /**
   * Whether the scope has any segment of these kinds (of these labels, when given). With a window,
   * one indexed probe that stops at the first match (not the first by time, which sorts them all).
   */
  has(scope: ScopeWindow, kinds: SegmentKind[], labels?: string[]): boolean {
    if (scope.videos.length === 0) return false;
    if (!scope.window && !labels?.length)
      return this.kindsOf(scope.videos).some((have) => kinds.some((k) => have.has(k)));
    return !!this.db
      .select({ id: segments.id })
      .from(segments)
      .where(and(...this.inScope(scope, kinds, labels)))
      .limit(1)
      .get();
  }

  private inScope(scope: ScopeWindow, kinds: SegmentKind[], labels?: string[]): SQL[] {
    const conds: SQL[] = [
      // The ids as one JSON parameter: a whole index is thousands of videos, and as many
      // placeholders made building, preparing and binding the statement cost more than its search.
      sql`${segments.videoId} IN (SELECT value FROM json_each(${JSON.stringify(scope.videos.map((v) => v.id))}))`,
      inArray(segments.kind, kinds),
    ];
    if (labels?.length) conds.push(inArray(segments.text, labels));
    if (scope.window) conds.push(gte(segments.end, scope.window.start), lte(segments.start, scope.window.end));
    return conds;
  }

  /**
   * Segments by id (in id order). The ids go in as one JSON parameter: as `IN (?, ?, …)` up to 500
   * placeholders made building and preparing the statement the costliest step of a question.
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

  /** SQL conditions on `s` (a segments alias) for the scope's videos, window and kinds. */
  private scopeSql(scope: ScopeWindow): SQL {
    const ids = JSON.stringify(scope.videos.map((v) => v.id));
    const win = scope.window ? sql` AND s.end >= ${scope.window.start} AND s.start <= ${scope.window.end}` : sql``;
    const kinds = scope.kinds?.length
      ? sql` AND s.kind IN (SELECT value FROM json_each(${JSON.stringify(scope.kinds)}))`
      : sql``;
    return sql`s.video_id IN (SELECT value FROM json_each(${ids}))${win}${kinds}`;
  }

  /** The FTS5 query for words: each quoted, OR-ed; a run-together word also as the words it is made of. */
  private matchOf(keywords: string[]): string {
    // The index holds text with its word spaces put back (see word-spaces.ts).
    const terms = keywords.flatMap((k) => {
      const words = /^\p{Script=Latin}{6,}$/u.test(k) ? splitRun(k) : k;
      return words !== k ? [k, words] : [k];
    });
    return terms.map((k) => `"${k.replace(/"/g, '""')}"`).join(' OR ');
  }

  /**
   * Keyword search (BM25) over the scope; returns segment ids best first. The ranking by BM25 reads
   * every match, so words common in the index (in DF_CAP segments or more) are ranked only over
   * their first COMMON_SCAN matches in the scope, after the matches of the rarer words: without
   * that, a question with a common word ("people", "car") cost time in proportion to the index.
   */
  keyword(scope: ScopeWindow, keywords: string[], limit = 40, df?: Map<string, number>): number[] {
    if (keywords.length === 0 || scope.videos.length === 0) return [];
    const freq = df ?? this.docFreqs(keywords);
    const rare = keywords.filter((k) => (freq.get(k) ?? 0) < DF_CAP);
    const bounds = this.rowidBounds(scope);
    if (bounds === 'empty') return [];
    const out: number[] = [];
    if (rare.length)
      for (const r of this.db.all<{ id: number }>(
        sql`SELECT s.id AS id FROM segments_fts f JOIN segments s ON s.id = f.rowid
            WHERE segments_fts MATCH ${this.matchOf(rare)}${bounds} AND ${this.scopeSql(scope)}
            ORDER BY bm25(segments_fts) LIMIT ${limit}`,
      ))
        out.push(r.id);
    if (out.length < limit && rare.length < keywords.length) {
      const seen = new Set(out);
      const rows = this.db.all<{ id: number }>(
        sql`SELECT id FROM (SELECT s.id AS id, bm25(segments_fts) AS r FROM segments_fts f JOIN segments s ON s.id = f.rowid
            WHERE segments_fts MATCH ${this.matchOf(keywords)}${bounds} AND ${this.scopeSql(scope)} LIMIT ${COMMON_SCAN})
            ORDER BY r LIMIT ${limit}`,
      );
      for (const r of rows) {
        if (out.length >= limit) break;
        if (!seen.has(r.id)) out.push(r.id);
      }
    }
    return out;
  }

  /**
   * For a scope of a few videos, the range of their segment ids as a condition on the FTS rowid:
   * FTS5 then reads only that stretch of each word's matches instead of every match in the index
   * (a common word in one video's window went from ~300 ms to ~30 ms at 1,000 h). The other
   * conditions stay, so it only skips rows that could not be in the scope. 'empty': no segments.
   */
  private rowidBounds(scope: ScopeWindow): SQL | 'empty' {
    if (scope.videos.length > BOUNDED_VIDEOS) return sql``;
    const r = this.db.all<{ lo: number | null; hi: number | null }>(
      sql`SELECT min(id) AS lo, max(id) AS hi FROM segments WHERE video_id IN (SELECT value FROM json_each(${JSON.stringify(scope.videos.map((v) => v.id))}))`,
    )[0];
    if (r?.lo == null || r.hi == null) return 'empty';
    return sql` AND f.rowid >= ${r.lo} AND f.rowid <= ${r.hi}`;
  }

  /** How many segments of the whole index hold each word (counted up to DF_CAP). */
  docFreqs(terms: string[]): Map<string, number> {
    const out = new Map<string, number>();
    for (const t of terms)
      out.set(
        t,
        this.db.all<{ c: number }>(
          sql`SELECT count(*) AS c FROM (SELECT 1 FROM segments_fts WHERE segments_fts MATCH ${this.matchOf([t])} LIMIT ${DF_CAP})`,
        )[0]?.c ?? 0,
      );
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
      const ids = this.db
        .all<{ v: number }>(
          sql`SELECT DISTINCT s.vector_id AS v FROM segments s WHERE ${this.scopeSql({ ...scope, videos })} AND s.vector_id IS NOT NULL LIMIT 20000`,
        )
        .map((r) => r.v);
      cos = this.vectors.cosinesById(ids, q);
    } else {
      const near = await this.vectors.nearest(videos, q, narrowed ? SEMANTIC_VECTORS * 4 : SEMANTIC_VECTORS);
      cos = new Map(near);
    }
    const best = [...cos].filter(([, c]) => c > SEM_FLOOR).sort((a, b) => b[1] - a[1] || a[0] - b[0]);
    if (best.length === 0) return [];
    const rows = this.db
      .select(ROW)
      .from(segments)
      .where(
        and(
          sql`${segments.vectorId} IN (SELECT value FROM json_each(${JSON.stringify(best.slice(0, SEMANTIC_VECTORS).map(([id]) => id))}))`,
          ...(scope.kinds?.length ? [inArray(segments.kind, scope.kinds)] : []),
          ...(scope.window ? [gte(segments.end, scope.window.start), lte(segments.start, scope.window.end)] : []),
        ),
      )
      .orderBy(asc(segments.start), asc(segments.id))
      .all();
    const byVector = new Map<number, Segment[]>();
    for (const r of rows) {
      const list = byVector.get(r.vectorId!) ?? [];
      list.push({ ...r, embedding: null });
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
    const df = this.docFreqs(terms);
    const kwIds = terms.length ? this.keyword(scope, terms, KEYWORD_CANDIDATES, df) : [];
    const q = await this.queryVector(question, vector);
    const sem = q ? await this.semanticRows(scope, q, SEMANTIC_SEGMENTS) : [];
    const bySeg = new Map<number, Segment>(sem.map(([s]) => [s.id, s]));
    const cosOf = new Map<number, number>(sem.map(([s, c]) => [s.id, c]));
    const kwOnly = kwIds.filter((id) => !bySeg.has(id));
    for (const s of this.rows(kwOnly)) bySeg.set(s.id, s);
    if (bySeg.size === 0) return [];
    // The cosine of the keyword candidates too, so that both signals count for every candidate.
    if (q) {
      const comparable = new Set(this.comparable(scope).map((v) => v.id));
      const need = kwOnly
        .map((id) => bySeg.get(id))
        .filter((s): s is Segment => !!s && s.vectorId !== null && comparable.has(s.videoId));
      const cos = this.vectors.cosinesById([...new Set(need.map((s) => s.vectorId!))], q);
      for (const s of need) if (cos.has(s.vectorId!)) cosOf.set(s.id, cos.get(s.vectorId!)!);
    }
    return this.scored(bySeg, cosOf, new Set(kwIds), intent, df)
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
      const cos = this.vectors.cosinesById([...new Set(need.map((s) => s.vectorId!))], q);
      for (const s of need) if (cos.has(s.vectorId!)) cosOf.set(s.id, cos.get(s.vectorId!)!);
    }
    return this.scored(bySeg, cosOf, new Set(), intent);
  }

  /** Relevance (and the kind-weighted score) of each candidate from its words and its cosine. */
  private scored(
    bySeg: Map<number, Segment>,
    cosOf: Map<number, number>,
    kwSet: Set<number>,
    intent: Intent,
    df?: Map<string, number>,
  ): Ranked[] {
    // Relevance weighs the words the query says; the detector labels read from them ("puppy" →
    // dog) only find candidates, and a segment of such a label counts as one word matched.
    const said = [...new Set(intent.keywords.map((t) => t.toLowerCase()))];
    return scoreCandidates({
      bySeg,
      cosOf,
      kwSet,
      intent,
      said,
      weigh: this.wordWeights(said, df),
      segmentCount: this.segmentCount(),
    });
  }

  /**
   * The weight of each query word: its inverse document frequency over the index. Words the index
   * never holds (as FTS5 sees it) are left out: they cannot tell one segment from another.
   */
  private wordWeights(terms: string[], known?: Map<string, number>): Map<string, number> {
    const out = new Map<string, number>();
    if (terms.length === 0) return out;
    const n = this.segmentCount();
    const missing = terms.filter((t) => !known?.has(t));
    const df = new Map([...(known ?? []), ...this.docFreqs(missing)]);
    for (const t of terms) {
      const d = df.get(t) ?? 0;
      if (d > 0) out.set(stem(t), wordWeight(d, n));
    }
    return out;
  }

  /** About how many segments there are (the largest id: exact enough for word weights, and free). */
  private segmentCount(): number {
    return this.db.all<{ n: number | null }>(sql`SELECT max(id) AS n FROM segments`)[0]?.n ?? 0;
  }

  /**
   * The sampled frame nearest a time, as a file name (of two as near, the earlier). The frame just
   * before and the one just after, each one step of frames_video_t_idx: ordering every frame of the
   * video by its distance read them all, a few dozen times per answer.
   */
  frameNear(videoId: string, t: number): string | null {
    const [before, after] = this.db.all<{ file: string; t: number; after: number }>(
      sql`SELECT * FROM (SELECT file, t, 0 AS after FROM frames WHERE video_id = ${videoId} AND t <= ${t} ORDER BY t DESC, id LIMIT 1)
          UNION ALL
          SELECT * FROM (SELECT file, t, 1 AS after FROM frames WHERE video_id = ${videoId} AND t > ${t} ORDER BY t, id LIMIT 1)
          ORDER BY after`,
    ) as [{ file: string; t: number; after: number }?, { file: string; t: number; after: number }?];
    if (!before || before.after) return before?.file ?? null;
    if (!after) return before.file;
    return t - before.t <= after.t - t ? before.file : after.file;
  }
}

/** The embedding model a video's vectors came from, as the pipeline recorded it (older videos: the engine). */
export function embeddedBy(v: Video): string | undefined {
  const e = (v.analysis as { embeddings?: { producer?: unknown; engine?: unknown } } | null)?.embeddings;
  const name = e?.producer ?? e?.engine;
  return typeof name === 'string' ? name : undefined;
}
