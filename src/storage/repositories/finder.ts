/**
 * The evidence finder's reads (src/search/finder.ts), on either dialect (issue 33): segments of a
 * question's scope by kind, label, time and words, the sums kept per video, and the frame nearest
 * a time. Each read is one statement for the whole scope (all its videos at once, as one JSON
 * parameter), never one per video: a question's cost stays flat in the size of the index.
 *
 * Full-text search:
 * - SQLite: FTS5 (`segments_fts`, porter + unicode61 tokenizer), ranked by `bm25()`.
 * - PostgreSQL: the generated `segments.text_search` tsvector (english configuration, GIN index).
 *   A word list is OR-ed phrase queries (`phraseto_tsquery`), word starts are `to_tsquery('w:*')`.
 *   The rank is ts_rank with length normalisation 1 (BM25 favours short segments), weighted per
 *   word by its rarity when the caller knows it (`weights`: BM25's IDF, which ts_rank lacks).
 *   Ties in time are put in SQLite's index order (video, kind, id), which PostgreSQL does not keep
 *   by itself. With that, bench/answer-fake's twelve questions over 300 videos get the same answers
 *   and evidence on both catalogs, and so does test/answering-core.test.ts.
 *   Differences that remain: PostgreSQL's english configuration drops stop words ("the", "and")
 *   where FTS5 keeps them, and its ranking is near BM25, not equal, so over a large index which
 *   keyword candidates make the first `limit` may differ; the finder then scores every candidate
 *   itself (src/search/scoring.ts), so only which ones are read can differ, not how they rank.
 */
import { and, asc, desc, eq, gte, inArray, isNotNull, lte, type SQL, sql } from 'drizzle-orm';
import type { Catalog } from '../catalog';
import type { Segment, SegmentKind, Video } from '../schema';
import { SEGMENT_KINDS } from '../schema';
import { inJson } from './vectors';

export { SEGMENT_KINDS };

/** Which segments a read looks at: these videos, these kinds (absent: all), these texts, this time. */
export interface SegmentScope {
  videoIds: readonly string[];
  kinds?: readonly SegmentKind[];
  /** Only segments whose text is one of these (object labels). */
  labels?: readonly string[];
  /** Only segments overlapping this time (seconds; null: the whole videos). */
  window: { start: number; end: number } | null;
}

/** A segment row without its legacy embedding (null). */
export type SegmentRow = Segment;

/** Every column but the legacy embedding (and PostgreSQL's tsvector). */
function rowColumns(c: Catalog) {
  const s = c.t.segments;
  return {
    id: s.id,
    videoId: s.videoId,
    kind: s.kind,
    start: s.start,
    end: s.end,
    text: s.text,
    confidence: s.confidence,
    extra: s.extra,
    vectorId: s.vectorId,
  };
}

/** The builder's conditions for a scope. */
function conds(c: Catalog, scope: SegmentScope): SQL[] {
  const s = c.t.segments;
  // The ids as one JSON parameter: a whole index is thousands of videos, and as many
  // placeholders made building, preparing and binding the statement cost more than its search.
  const out: SQL[] = [inJson(c, sql`${s.videoId}`, scope.videoIds, 'text')];
  if (scope.kinds) out.push(inArray(s.kind, [...scope.kinds]));
  if (scope.labels?.length) out.push(inArray(s.text, [...scope.labels]));
  if (scope.window) out.push(gte(s.end, scope.window.start), lte(s.start, scope.window.end));
  return out;
}

/** The same conditions in raw SQL, on `s` (a segments alias). */
function scopeSql(c: Catalog, scope: SegmentScope): SQL {
  const win = scope.window ? sql` AND s."end" >= ${scope.window.start} AND s.start <= ${scope.window.end}` : sql``;
  const kinds = scope.kinds?.length ? sql` AND ${inJson(c, sql`s.kind`, scope.kinds, 'text')}` : sql``;
  return sql`${inJson(c, sql`s.video_id`, scope.videoIds, 'text')}${win}${kinds}`;
}

const ids = (rows: { id: unknown }[]) => rows.map((r) => Number(r.id));

/**
 * Ids of the scope's segments in time order (latest first with `last`), at most `limit`; `bound`
 * keeps only those starting at or before it (at or after it, with `last`). The ids first: the sort
 * and the limit work on the index alone (segments_video_kind_idx, or the label index), and only
 * the rows kept are read (segmentsById).
 */
export function segmentIdsByTime(
  c: Catalog,
  scope: SegmentScope,
  opts: { limit: number; last: boolean; bound?: number },
): Promise<number[]> {
  const s = c.t.segments;
  const where = conds(c, scope);
  if (opts.bound !== undefined) where.push(opts.last ? gte(s.start, opts.bound) : lte(s.start, opts.bound));
  // Ties in time: SQLite keeps the order of the index it walks (segments_video_kind_idx, or the
  // label index: video, kind, [label,] id); PostgreSQL promises none, so it is told that order.
  const ties = c.dialect === 'postgres' ? [s.videoId, s.kind, ...(scope.labels?.length ? [s.text] : []), s.id] : [];
  const order = opts.last ? [desc(s.start), ...ties.map((x) => desc(x))] : [asc(s.start), ...ties.map((x) => asc(x))];
  return c.run(async (db) =>
    ids(
      await db
        .select({ id: s.id })
        .from(s)
        .where(and(...where))
        .orderBy(...order)
        .limit(opts.limit),
    ),
  );
}

/** Segments by id, in id order (without their legacy embedding: null). */
export function segmentsById(c: Catalog, segmentIds: readonly number[]): Promise<SegmentRow[]> {
  if (segmentIds.length === 0) return Promise.resolve([]);
  const s = c.t.segments;
  return c.run(async (db) =>
    (
      await db
        .select(rowColumns(c))
        .from(s)
        .where(inJson(c, sql`${s.id}`, segmentIds, 'int'))
        .orderBy(asc(s.id))
    ).map((r) => ({ ...r, embedding: null })),
  );
}

/** Segments of these vectors (in the scope's kinds and window, when given), in time order. */
export function segmentsOfVectors(
  c: Catalog,
  vectorIds: readonly number[],
  scope: Pick<SegmentScope, 'kinds' | 'window'>,
): Promise<SegmentRow[]> {
  if (vectorIds.length === 0) return Promise.resolve([]);
  const s = c.t.segments;
  return c.run(async (db) =>
    (
      await db
        .select(rowColumns(c))
        .from(s)
        .where(
          and(
            inJson(c, sql`${s.vectorId}`, vectorIds, 'int'),
            ...(scope.kinds?.length ? [inArray(s.kind, [...scope.kinds])] : []),
            ...(scope.window ? [gte(s.end, scope.window.start), lte(s.start, scope.window.end)] : []),
          ),
        )
        .orderBy(asc(s.start), asc(s.id))
    ).map((r) => ({ ...r, embedding: null })),
  );
}

/** The distinct vectors of the scope's segments (at most `limit`). */
export async function vectorIdsInScope(c: Catalog, scope: SegmentScope, limit: number): Promise<number[]> {
  const rows = await c.rows<{ v: number }>(
    sql`SELECT DISTINCT s.vector_id AS v FROM segments s WHERE ${scopeSql(c, scope)} AND s.vector_id IS NOT NULL LIMIT ${limit}`,
  );
  return rows.map((r) => Number(r.v));
}

/** How many segments the scope holds. */
export function countSegments(c: Catalog, scope: SegmentScope): Promise<number> {
  const s = c.t.segments;
  return c.run(
    async (db) =>
      (
        await db
          .select({ n: sql<number>`count(*)`.mapWith(Number) })
          .from(s)
          .where(and(...conds(c, scope)))
      )[0]?.n ?? 0,
  );
}

/** How many different texts (case aside) the scope's segments hold. */
export function countDistinctTexts(c: Catalog, scope: SegmentScope): Promise<number> {
  const s = c.t.segments;
  return c.run(
    async (db) =>
      (
        await db
          .select({ n: sql<number>`count(DISTINCT lower(${s.text}))`.mapWith(Number) })
          .from(s)
          .where(and(...conds(c, scope)))
      )[0]?.n ?? 0,
  );
}

/** Whether the scope holds any segment (one indexed probe that stops at the first match). */
export function anySegment(c: Catalog, scope: SegmentScope): Promise<boolean> {
  const s = c.t.segments;
  return c.run(
    async (db) =>
      (
        await db
          .select({ id: s.id })
          .from(s)
          .where(and(...conds(c, scope)))
          .limit(1)
      ).length > 0,
  );
}

/**
 * Per video of the scope: how many segments, the seconds they span (summed whole) and the first
 * start; most seconds first (of equal ones, the earlier first).
 */
export function perVideo(
  c: Catalog,
  scope: SegmentScope,
): Promise<{ videoId: string; count: number; seconds: number; first: number }[]> {
  const s = c.t.segments;
  const seconds = sql<number>`sum(${s.end} - ${s.start})`.mapWith(Number);
  return c.run((db) =>
    db
      .select({
        videoId: s.videoId,
        count: sql<number>`count(*)`.mapWith(Number),
        seconds,
        first: sql<number>`min(${s.start})`.mapWith(Number),
      })
      .from(s)
      .where(and(...conds(c, scope)))
      .groupBy(s.videoId)
      .orderBy(desc(sql`sum(${s.end} - ${s.start})`), asc(sql`min(${s.start})`)),
  );
}

/** Seconds each text (label) of the scope spans, longest first (of equal ones, the first seen first). */
export function labelSecondsOf(
  c: Catalog,
  scope: SegmentScope,
  limit: number,
): Promise<{ label: string; seconds: number }[]> {
  const s = c.t.segments;
  return c.run((db) =>
    db
      .select({ label: s.text, seconds: sql<number>`sum(${s.end} - ${s.start})`.mapWith(Number) })
      .from(s)
      .where(and(...conds(c, scope)))
      .groupBy(s.text)
      .orderBy(desc(sql`sum(${s.end} - ${s.start})`), asc(sql`min(${s.start})`))
      .limit(limit),
  );
}

/** Per video and text of `kind`: seconds spanned, how many spans, and the first and last start. */
export async function labelSums(
  c: Catalog,
  videoIds: readonly string[],
  kind: SegmentKind,
): Promise<{ v: string; label: string; seconds: number; count: number; first: number; last: number }[]> {
  const rows = await c.rows<{ v: string; label: string; seconds: number; count: number; first: number; last: number }>(
    sql`SELECT video_id AS v, text AS label, sum("end" - start) AS seconds, count(*) AS count, min(start) AS first, max(start) AS last
        FROM segments WHERE ${inJson(c, sql`video_id`, videoIds, 'text')} AND kind = ${kind}
        GROUP BY video_id, text`,
  );
  return rows.map((r) => ({
    v: r.v,
    label: r.label,
    seconds: Number(r.seconds),
    count: Number(r.count),
    first: Number(r.first),
    last: Number(r.last),
  }));
}

/**
 * Per video, the kinds of segment it holds with the first and last start of each: two steps of
 * segments_video_kind_idx per video and kind (its first and its last entry), not a read of every row.
 */
export async function kindRanges(
  c: Catalog,
  videoIds: readonly string[],
): Promise<{ v: string; kind: SegmentKind; first: number; last: number }[]> {
  const vs = JSON.stringify(videoIds);
  const ks = JSON.stringify(SEGMENT_KINDS);
  const rows = await c.rows<{ v: string; kind: SegmentKind; first: number; last: number }>(
    c.dialect === 'sqlite'
      ? sql`SELECT v, kind, first, (SELECT max(start) FROM segments WHERE video_id = v AND kind = t.kind) AS last
            FROM (SELECT j.value AS v, k.value AS kind, (SELECT min(start) FROM segments WHERE video_id = j.value AND kind = k.value) AS first
                  FROM json_each(${vs}) j, json_each(${ks}) k) t
            WHERE first IS NOT NULL`
      : sql`SELECT v, kind, first, (SELECT max(start) FROM segments WHERE video_id = t.v AND kind = t.kind) AS last
            FROM (SELECT j.v, k.kind, (SELECT min(start) FROM segments WHERE video_id = j.v AND kind = k.kind) AS first
                  FROM jsonb_array_elements_text(${vs}::jsonb) j(v), jsonb_array_elements_text(${ks}::jsonb) k(kind)) t
            WHERE first IS NOT NULL`,
  );
  return rows.map((r) => ({ v: r.v, kind: r.kind, first: Number(r.first), last: Number(r.last) }));
}

/**
 * Ids of segments of `kind` overlapping one of `spans` (each [video id, start, end]) in time, other
 * than the texts `except` (inside `window`, when given), in time order, at most `limit`.
 */
export async function overlappingIds(
  c: Catalog,
  spans: readonly [string, number, number][],
  kind: SegmentKind,
  except: readonly string[],
  window: SegmentScope['window'],
  limit: number,
): Promise<number[]> {
  const win = window ? sql` AND s."end" >= ${window.start} AND s.start <= ${window.end}` : sql``;
  const at = JSON.stringify(spans);
  const not = JSON.stringify(except);
  const rows = await c.rows<{ id: number }>(
    c.dialect === 'sqlite'
      ? sql`SELECT DISTINCT s.id AS id, s.start AS start FROM json_each(${at}) m
            JOIN segments s ON s.video_id = m.value ->> 0 AND s.kind = ${kind}
              AND s.start < m.value ->> 2 AND s."end" > m.value ->> 1
            WHERE s.text NOT IN (SELECT value FROM json_each(${not}))${win}
            ORDER BY s.start, s.id LIMIT ${limit}`
      : // Each span looked up through the index (OFFSET 0 keeps the subquery per span): joined as a
        // whole, the planner read every segment of the kind for a few hundred spans (63 → 14 ms).
        sql`SELECT DISTINCT s.id AS id, s.start AS start FROM jsonb_array_elements(${at}::jsonb) m(value)
            CROSS JOIN LATERAL (SELECT s.id, s.start, s.text FROM segments s
              WHERE s.video_id = m.value ->> 0 AND s.kind = ${kind}
                AND s.start < (m.value ->> 2)::float8 AND s."end" > (m.value ->> 1)::float8${win} OFFSET 0) s
            WHERE s.text NOT IN (SELECT jsonb_array_elements_text(${not}::jsonb))
            ORDER BY s.start, s.id LIMIT ${limit}`,
  );
  return ids(rows);
}

/** The smallest and largest segment id of these videos, or null when they have none. */
export async function segmentIdRange(
  c: Catalog,
  videoIds: readonly string[],
): Promise<{ lo: number; hi: number } | null> {
  const [r] = await c.rows<{ lo: number | null; hi: number | null }>(
    sql`SELECT min(id) AS lo, max(id) AS hi FROM segments WHERE ${inJson(c, sql`video_id`, videoIds, 'text')}`,
  );
  return r?.lo == null || r.hi == null ? null : { lo: Number(r.lo), hi: Number(r.hi) };
}

/** About how many segments there are (the largest id: exact enough for word weights, and free). */
export async function maxSegmentId(c: Catalog): Promise<number> {
  const [r] = await c.rows<{ n: number | null }>(sql`SELECT max(id) AS n FROM segments`);
  return Number(r?.n ?? 0);
}

/**
 * For each [video id, time] point, the sampled frames just before (at or before it) and just after
 * it: each one step of frames_video_t_idx (ordering every frame of the video by its distance read
 * them all), all points in one statement.
 */
export async function framesAround(
  c: Catalog,
  points: readonly [string, number][],
): Promise<{ before?: { file: string; t: number }; after?: { file: string; t: number } }[]> {
  const at = JSON.stringify(points);
  const step = (v: SQL, t: SQL, col: 'file' | 't', after: boolean) =>
    after
      ? sql`(SELECT ${sql.raw(col)} FROM frames WHERE video_id = ${v} AND t > ${t} ORDER BY t, id LIMIT 1)`
      : sql`(SELECT ${sql.raw(col)} FROM frames WHERE video_id = ${v} AND t <= ${t} ORDER BY t DESC, id LIMIT 1)`;
  const [from, v, t, i] =
    c.dialect === 'sqlite'
      ? [sql`json_each(${at}) m`, sql`m.value ->> 0`, sql`m.value ->> 1`, sql`m.key`]
      : [
          sql`jsonb_array_elements(${at}::jsonb) WITH ORDINALITY m(value, i)`,
          sql`(m.value ->> 0)`,
          sql`(m.value ->> 1)::float8`,
          sql`m.i - 1`,
        ];
  const rows = await c.rows<{ i: number; bf: string | null; bt: number | null; af: string | null; at: number | null }>(
    sql`SELECT ${i} AS i, ${step(v, t, 'file', false)} AS bf, ${step(v, t, 't', false)} AS bt,
               ${step(v, t, 'file', true)} AS af, ${step(v, t, 't', true)} AS at
        FROM ${from}`,
  );
  const out: { before?: { file: string; t: number }; after?: { file: string; t: number } }[] = points.map(() => ({}));
  for (const r of rows) {
    const o = out[Number(r.i)]!;
    if (r.bf !== null) o.before = { file: r.bf, t: Number(r.bt) };
    if (r.af !== null) o.after = { file: r.af, t: Number(r.at) };
  }
  return out;
}

// ---- full-text search ----

/**
 * A full-text query: `terms` OR-ed, each a word or a phrase (words in a row); or `prefixes`: groups
 * OR-ed, the word starts of a group AND-ed.
 */
export type TextQuery = { terms: readonly string[] } | { prefixes: readonly (readonly string[])[] };

/**
 * ts_rank's length normalisation: 1 divides the rank by 1 + log(length), as BM25 favours short
 * segments that hold the word (a line of on-screen text over a long caption) while still counting
 * a word said twice. Chosen on bench/answer-fake's index: with it the twelve answers over 300
 * videos are the same on both catalogs (5 of 12 with plain ts_rank and no tie order, 11 with 2).
 */
const RANK_NORMALIZATION = 1;

/** The FROM, the match condition and the rank (smaller first) of a full-text query, per dialect. */
function fts(c: Catalog, q: TextQuery, weights?: readonly number[]): { from: SQL; match: SQL; rank: SQL; rowid: SQL } {
  if (c.dialect === 'sqlite') {
    const text =
      'terms' in q
        ? q.terms.map((k) => `"${k.replace(/"/g, '""')}"`).join(' OR ')
        : q.prefixes.map((g) => `(${g.map((w) => `"${w.replace(/"/g, '""')}"*`).join(' AND ')})`).join(' OR ');
    return {
      from: sql`segments_fts f JOIN segments s ON s.id = f.rowid`,
      match: sql`segments_fts MATCH ${text}`,
      rank: sql`bm25(segments_fts)`,
      rowid: sql`f.rowid`,
    };
  }
  if ('prefixes' in q) {
    // Word starts: letters and digits only (the caller splits on anything else), so no escaping.
    const text = q.prefixes
      .map((g) => `(${g.map((w) => `${w.replace(/[^\p{L}\p{N}]/gu, '')}:*`).join(' & ')})`)
      .join(' | ');
    const tq = sql`to_tsquery('english', ${text})`;
    return {
      from: sql`segments s`,
      match: sql`s.text_search @@ ${tq}`,
      rank: sql`-ts_rank(s.text_search, ${tq}, ${RANK_NORMALIZATION})`,
      rowid: sql`s.id`,
    };
  }
  const one = (k: string) => sql`phraseto_tsquery('english', ${k})`;
  const all = sql.join(
    q.terms.map((k) => one(k)),
    sql` || `,
  );
  // BM25 weighs each word by its rarity; ts_rank does not, so each word's rank is weighted by it.
  const rank = weights
    ? sql.join(
        q.terms.map(
          (k, i) => sql`${weights[i] ?? 1}::float8 * ts_rank(s.text_search, ${one(k)}, ${RANK_NORMALIZATION})`,
        ),
        sql` + `,
      )
    : sql`ts_rank(s.text_search, (${all}), ${RANK_NORMALIZATION})`;
  return { from: sql`segments s`, match: sql`s.text_search @@ (${all})`, rank: sql`-(${rank})`, rowid: sql`s.id` };
}

/**
 * Ids of the scope's segments matching the query. `order`: 'rank' (best first; ties by id on
 * PostgreSQL), or 'time' (`last`: latest first). `idRange` bounds the full-text rows read (a scope of
 * a few videos: FTS5 then reads only that stretch of each word's matches). `scan`: rank only the
 * first `scan` matches (a common word in a large index).
 */
export async function matchingIds(
  c: Catalog,
  scope: SegmentScope,
  q: TextQuery,
  opts: {
    order: 'rank' | 'time';
    last?: boolean;
    limit: number;
    idRange?: { lo: number; hi: number };
    scan?: number;
    weights?: readonly number[];
  },
): Promise<number[]> {
  const f = fts(c, q, opts.weights);
  const bounds = opts.idRange ? sql` AND ${f.rowid} >= ${opts.idRange.lo} AND ${f.rowid} <= ${opts.idRange.hi}` : sql``;
  const where = sql`${f.match}${bounds} AND ${scopeSql(c, scope)}`;
  const tie = c.dialect === 'postgres' ? sql`, s.id` : sql``;
  const query =
    opts.order === 'time'
      ? sql`SELECT s.id AS id FROM ${f.from} WHERE ${where}
            ORDER BY ${opts.last ? sql`s.start DESC, s.id DESC` : sql`s.start, s.id`} LIMIT ${opts.limit}`
      : opts.scan !== undefined
        ? sql`SELECT id FROM (SELECT s.id AS id, ${f.rank} AS r FROM ${f.from} WHERE ${where} LIMIT ${opts.scan}) m
              ORDER BY r${c.dialect === 'postgres' ? sql`, id` : sql``} LIMIT ${opts.limit}`
        : sql`SELECT s.id AS id FROM ${f.from} WHERE ${where} ORDER BY ${f.rank}${tie} LIMIT ${opts.limit}`;
  return ids(await c.rows<{ id: number }>(query));
}

/**
 * How many segments of the whole index match each query (counted up to `cap`): one statement for
 * all of them. Each query is OR-ed terms, as `matchingIds` takes them.
 */
export async function documentFrequencies(
  c: Catalog,
  queries: readonly (readonly string[])[],
  cap: number,
): Promise<number[]> {
  if (queries.length === 0) return [];
  if (c.dialect === 'sqlite') {
    const texts = queries.map((terms) => terms.map((k) => `"${k.replace(/"/g, '""')}"`).join(' OR '));
    const rows = await c.rows<{ i: number; c: number }>(
      sql`SELECT j.key AS i, (SELECT count(*) FROM (SELECT 1 FROM segments_fts WHERE segments_fts MATCH j.value LIMIT ${cap})) AS c
          FROM json_each(${JSON.stringify(texts)}) j`,
    );
    const out = new Array<number>(queries.length).fill(0);
    for (const r of rows) out[Number(r.i)] = Number(r.c);
    return out;
  }
  const rows = await c.rows<{ i: number; c: number }>(
    // Each query as one tsquery: its terms' phrase queries OR-ed (stop words alone give none: NULL, no match).
    sql`SELECT j.i, (SELECT count(*) FROM (SELECT 1 FROM segments s WHERE s.text_search @@ (
            SELECT string_agg('(' || p.q::text || ')', ' | ')::tsquery
              FROM (SELECT phraseto_tsquery('english', x) AS q FROM jsonb_array_elements_text(j.terms) x) p
              WHERE numnode(p.q) > 0) LIMIT ${cap}) m) AS c
        FROM jsonb_array_elements(${JSON.stringify(queries)}::jsonb) WITH ORDINALITY j(terms, i)`,
  );
  const out = new Array<number>(queries.length).fill(0);
  for (const r of rows) out[Number(r.i) - 1] = Number(r.c);
  return out;
}

/** Every object detection of these videos (its label and extra: boxes, colours), in time order. */
export function objectDetections(
  c: Catalog,
  videoIds: readonly string[],
): Promise<{ videoId: string; start: number; end: number; text: string; extra: Record<string, unknown> | null }[]> {
  if (videoIds.length === 0) return Promise.resolve([]);
  const s = c.t.segments;
  return c.run((db) =>
    db
      .select({ videoId: s.videoId, start: s.start, end: s.end, text: s.text, extra: s.extra })
      .from(s)
      .where(and(inJson(c, sql`${s.videoId}`, videoIds, 'text'), eq(s.kind, 'object')))
      .orderBy(asc(s.start)),
  );
}

/** The video `videoId` if it belongs to index `indexId`. */
export function videoInIndex(c: Catalog, videoId: string, indexId: string): Promise<Video | undefined> {
  const v = c.t.videos;
  return c.run(
    async (db) =>
      (
        await db
          .select()
          .from(v)
          .where(and(eq(v.id, videoId), eq(v.indexId, indexId)))
          .limit(1)
      )[0],
  );
}

/** Every stored video (a file on disk), of every index: what a node's search indexes are built for. */
export function searchableVideos(c: Catalog): Promise<Video[]> {
  const v = c.t.videos;
  return c.run((db) => db.select().from(v).where(isNotNull(v.storagePath)));
}
