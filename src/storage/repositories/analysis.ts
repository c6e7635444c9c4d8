/**
 * What a video's analysis reads and writes (analysis/pipeline.ts, jobs/playback-step.ts): the
 * video to analyse, its sampled frames and segments, a stage's output stored in the transaction that
 * advances its job, and the notes kept in `videos.analysis` (one JSON object, a key per stage).
 * Both dialects (catalog.ts): JSON is patched with json_set on SQLite and jsonb on PostgreSQL.
 */
import { and, asc, eq, inArray, type SQL, sql } from 'drizzle-orm';
import { stripControls } from '../../util/text';
import { type Catalog, first } from '../catalog';
import type { Frame, Segment, SegmentKind, Video } from '../schema';
import type { SegmentInput } from './segments';

export function videoToAnalyse(c: Catalog, videoId: string): Promise<Video | undefined> {
  const { videos } = c.t;
  return c.run(
    async (db) => first(await db.select().from(videos).where(eq(videos.id, videoId)).limit(1)) as Video | undefined,
  );
}

/** The video's length in seconds (0 when unknown or gone). */
export async function videoDuration(c: Catalog, videoId: string): Promise<number> {
  const { videos } = c.t;
  const row = await c.run(async (db) =>
    first(await db.select({ d: videos.durationSec }).from(videos).where(eq(videos.id, videoId)).limit(1)),
  );
  return row?.d ?? 0;
}

/** The video's sampled frames in time order. */
export function framesOfVideo(c: Catalog, videoId: string): Promise<Frame[]> {
  const { frames } = c.t;
  return c.run(
    async (db) =>
      (await db
        .select({ id: frames.id, videoId: frames.videoId, t: frames.t, shot: frames.shot, file: frames.file })
        .from(frames)
        .where(eq(frames.videoId, videoId))
        .orderBy(asc(frames.t))) as Frame[],
  );
}

/** The video's segments (of `kinds`, or all) in time order. */
export function segmentsOfVideo(c: Catalog, videoId: string, kinds?: readonly SegmentKind[]): Promise<Segment[]> {
  const { segments: s } = c.t;
  return c.run(
    async (db) =>
      (await db
        .select({
          id: s.id,
          videoId: s.videoId,
          kind: s.kind,
          start: s.start,
          end: s.end,
          text: s.text,
          confidence: s.confidence,
          extra: s.extra,
          embedding: s.embedding,
          vectorId: s.vectorId,
        })
        .from(s)
        .where(kinds ? and(eq(s.videoId, videoId), inArray(s.kind, [...kinds])) : eq(s.videoId, videoId))
        .orderBy(asc(s.start))) as Segment[],
  );
}

/** `videos.analysis` with `key` set to `value` (or removed, for null), as an SQL expression. */
function analysisWith(c: Catalog, key: string, value: unknown): SQL {
  const { videos } = c.t;
  if (c.dialect === 'sqlite')
    return value === null
      ? sql`json_remove(coalesce(${videos.analysis}, '{}'), ${`$.${key}`})`
      : sql`json_set(coalesce(${videos.analysis}, '{}'), ${`$.${key}`}, json(${JSON.stringify(value)}))`;
  return value === null
    ? sql`(coalesce(${videos.analysis}::jsonb, '{}'::jsonb) - ${key}::text)::json`
    : sql`(coalesce(${videos.analysis}::jsonb, '{}'::jsonb) || jsonb_build_object(${key}::text, ${JSON.stringify(value)}::jsonb))::json`;
}

/** Sets one key of the video's analysis notes (null removes it). */
export function setAnalysisNote(c: Catalog, videoId: string, key: string, value: unknown): Promise<void> {
  const { videos } = c.t;
  return c.run(async (db) => {
    await db
      .update(videos)
      .set({ analysis: analysisWith(c, key, value) as unknown as Record<string, unknown> })
      .where(eq(videos.id, videoId));
  });
}

/** Ready videos whose note `key` has `state` (e.g. a playback copy still "making"). */
export function readyVideosWithNoteState(c: Catalog, key: string, state: string): Promise<string[]> {
  const { videos } = c.t;
  const noteState =
    c.dialect === 'sqlite'
      ? sql`json_extract(${videos.analysis}, ${`$.${key}.state`})`
      : sql`(${videos.analysis}::jsonb -> ${key}::text ->> 'state')`;
  return c.run(async (db) =>
    (
      await db
        .select({ id: videos.id })
        .from(videos)
        .where(and(eq(videos.status, 'ready'), sql`${noteState} = ${state}`))
    ).map((r) => r.id),
  );
}

/** A stage's output as the pipeline stores it. */
export interface StageOutput {
  /** The segment kinds the stage makes: what an earlier run of it stored is replaced. */
  kinds: readonly SegmentKind[];
  segments: readonly SegmentInput[];
  /** The sampled frames, when the stage picks them (they replace the earlier ones). */
  frames?: readonly { t: number; shot: number; file: string }[];
  /** The stage's key in `videos.analysis` (its kind) and what it records there. */
  key: string;
  summary: Record<string, unknown>;
}

/**
 * Stores a stage's output in `tx` (the transaction that advances the job): its segments and frames
 * replace whatever an interrupted earlier run of the stage stored, so a retry on another worker
 * neither duplicates nor loses them. Transcripts read from subtitles are the subtitles stage's
 * (replaceSubtitleTranscripts): speech's output leaves them, or a reanalysis of speech alone,
 * which does not read the subtitles again, would lose them.
 */
export async function storeStageOutput(tx: Catalog, videoId: string, o: StageOutput): Promise<void> {
  const { segments, frames, videos } = tx.t;
  await tx.run(async (db) => {
    if (o.kinds.length)
      await db
        .delete(segments)
        .where(
          and(
            eq(segments.videoId, videoId),
            inArray(segments.kind, [...o.kinds]),
            sql`NOT (${segments.kind} = 'transcript' AND coalesce(${sourceOf(tx)}, '') = 'subtitles')`,
          ),
        );
    await insertSegmentRows(tx, db, videoId, o.segments);
    if (o.frames) {
      await db.delete(frames).where(eq(frames.videoId, videoId));
      for (let k = 0; k < o.frames.length; k += 200)
        await db.insert(frames).values(o.frames.slice(k, k + 200).map((f) => ({ videoId, ...f })));
    }
    await db
      .update(videos)
      .set({ analysis: analysisWith(tx, o.key, o.summary) as unknown as Record<string, unknown> })
      .where(eq(videos.id, videoId));
  });
}

/** Inserts segments as they are, in `db` (a write's database). */
async function insertSegmentRows(
  c: Catalog,
  db: Parameters<Parameters<Catalog['run']>[0]>[0],
  videoId: string,
  segs: readonly SegmentInput[],
): Promise<void> {
  const { segments } = c.t;
  // Chunked: SQLite limits the number of bound parameters per statement.
  for (let k = 0; k < segs.length; k += 200)
    await db.insert(segments).values(
      segs.slice(k, k + 200).map((s) => ({
        videoId,
        kind: s.kind,
        start: s.start,
        end: s.end,
        text: stripControls(s.text),
        confidence: s.confidence ?? null,
        extra: s.extra ?? null,
      })),
    );
}

/**
 * The transcript segments read from a video's subtitle tracks replace those of an earlier run (the
 * subtitles stage's own write, its `apply`, in the transaction that advances the job).
 */
export async function replaceSubtitleTranscripts(
  tx: Catalog,
  videoId: string,
  segs: readonly SegmentInput[],
): Promise<void> {
  const { segments } = tx.t;
  await tx.run(async (db) => {
    await db
      .delete(segments)
      .where(and(eq(segments.videoId, videoId), eq(segments.kind, 'transcript'), sql`${sourceOf(tx)} = 'subtitles'`));
    await insertSegmentRows(tx, db, videoId, segs);
  });
}

/** A segment's `extra.source` (subtitle transcripts say "subtitles"). */
function sourceOf(c: Catalog): SQL {
  const { segments } = c.t;
  return c.dialect === 'sqlite'
    ? sql`json_extract(${segments.extra}, '$.source')`
    : sql`(${segments.extra}::jsonb ->> 'source')`;
}
