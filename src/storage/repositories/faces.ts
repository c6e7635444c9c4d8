/**
 * The reads of the faces fact plug-in (src/answering/facts/faces.ts), on either dialect (issue 33):
 * face appearances of people in a scope, the person detections no face overlaps (counted in SQL: a
 * whole index holds a hundred thousand person spans), and whether a phrase is mentioned at all.
 * Each read covers every video of the scope at once.
 */
import { and, asc, eq, type SQL, sql } from 'drizzle-orm';
import type { Catalog } from '../catalog';
import { inJson } from './vectors';

/** A face appearance: its person (and name) and its time. */
export interface FaceAppearance {
  personId: string;
  name: string | null;
  videoId: string;
  start: number;
  end: number;
}

/** A span to cite. */
export interface Spot {
  videoId: string;
  start: number;
  end: number;
}

type Window = { start: number; end: number } | null;

/** The face appearances of these videos (of these people, when given), in time order. */
export function faceAppearances(
  c: Catalog,
  videoIds: readonly string[],
  personIds?: readonly string[],
): Promise<FaceAppearance[]> {
  if (videoIds.length === 0) return Promise.resolve([]);
  const { personAppearances: pa, segments: s, people: p } = c.t;
  return c.run((db) =>
    db
      .select({ personId: pa.personId, name: p.name, videoId: s.videoId, start: s.start, end: s.end })
      .from(pa)
      .innerJoin(s, eq(s.id, pa.segmentId))
      .innerJoin(p, eq(p.id, pa.personId))
      .where(
        and(
          inJson(c, sql`${pa.videoId}`, videoIds, 'text'),
          personIds ? inJson(c, sql`${pa.personId}`, personIds, 'text') : undefined,
        ),
      )
      .orderBy(asc(s.start)),
  );
}

/** Person spans of these videos (in the window) that no face appearance (in the window) overlaps. */
function faceless(c: Catalog, videoIds: readonly string[], w: Window): SQL {
  const inWindow = (a: string) =>
    w ? sql` AND ${sql.raw(a)}.start <= ${w.end} AND ${sql.raw(a)}."end" >= ${w.start}` : sql``;
  return sql`${inJson(c, sql`s.video_id`, videoIds, 'text')} AND s.kind = 'object' AND s.text = 'person'${inWindow('s')}
    AND NOT EXISTS (SELECT 1 FROM person_appearances pa JOIN segments f ON f.id = pa.segment_id JOIN people p ON p.id = pa.person_id
      WHERE pa.video_id = s.video_id AND f.start < s."end" AND f."end" > s.start${inWindow('f')})`;
}

/** How many person spans of these videos no face overlaps. */
export async function facelessCount(c: Catalog, videoIds: readonly string[], w: Window): Promise<number> {
  if (videoIds.length === 0) return 0;
  const [r] = await c.rows<{ n: number }>(sql`SELECT count(*) AS n FROM segments s WHERE ${faceless(c, videoIds, w)}`);
  return Number(r?.n ?? 0);
}

/** The first `limit` person spans (by start) no face overlaps; `bound`: only those starting by then. */
export async function facelessFirst(
  c: Catalog,
  videoIds: readonly string[],
  w: Window,
  limit: number,
  bound?: number,
): Promise<Spot[]> {
  if (videoIds.length === 0) return [];
  const by = bound !== undefined ? sql` AND s.start <= ${bound}` : sql``;
  const rows = await c.rows<{ video_id: string; start: number; end: number }>(
    sql`SELECT s.video_id AS video_id, s.start AS start, s."end" AS "end" FROM segments s
        WHERE ${faceless(c, videoIds, w)}${by} ORDER BY s.start LIMIT ${limit}`,
  );
  return rows.map((r) => ({ videoId: r.video_id, start: Number(r.start), end: Number(r.end) }));
}

/** Which of these videos hold a face appearance of a person. */
export async function videosWithFaces(c: Catalog, videoIds: readonly string[]): Promise<Set<string>> {
  if (videoIds.length === 0) return new Set();
  const rows = await c.rows<{ v: string }>(
    sql`SELECT DISTINCT pa.video_id AS v FROM person_appearances pa JOIN segments f ON f.id = pa.segment_id JOIN people p ON p.id = pa.person_id
        WHERE ${inJson(c, sql`pa.video_id`, videoIds, 'text')}`,
  );
  return new Set(rows.map((r) => r.v));
}

/**
 * Whether any segment of the videos mentions the phrase (a label, words said or written), as words:
 * the full-text index finds the segments holding its words (a name inside another word, "Ann" in
 * "Annual", is not a mention), and of those one that holds the phrase itself.
 */
export async function mentioned(c: Catalog, videoIds: readonly string[], phrase: string): Promise<boolean> {
  if (videoIds.length === 0) return false;
  const holds =
    c.dialect === 'sqlite'
      ? sql`instr(lower(s.text), ${phrase.toLowerCase()}) > 0`
      : sql`strpos(lower(s.text), ${phrase.toLowerCase()}) > 0`;
  const rows = await c.rows<{ id: number }>(
    c.dialect === 'sqlite'
      ? sql`SELECT s.id AS id FROM segments_fts f JOIN segments s ON s.id = f.rowid
            WHERE segments_fts MATCH ${`"${phrase.replace(/"/g, '""')}"`}
              AND ${inJson(c, sql`s.video_id`, videoIds, 'text')} AND ${holds}
            LIMIT 1`
      : sql`SELECT s.id AS id FROM segments s
            WHERE s.text_search @@ phraseto_tsquery('english', ${phrase})
              AND ${inJson(c, sql`s.video_id`, videoIds, 'text')} AND ${holds}
            LIMIT 1`,
  );
  return rows.length > 0;
}
