/**
 * Segment rows written by the analysis: a stage's output inserted as it is, and the lookups a live
 * window needs to continue the spans of the window before it (src/analysis/segment-store.ts).
 * Text read out of media (OCR, speech, captions) never carries terminal controls (issue 25).
 */
import { and, asc, desc, eq, gte, lte } from 'drizzle-orm';
import { stripControls } from '../../util/text';
import { type Catalog, first } from '../catalog';
import type { SegmentKind } from '../schema';

/** A segment as a stage gives it (analysis/contracts.ts's NewSegment). */
export interface SegmentInput {
  kind: SegmentKind;
  start: number;
  end: number;
  text: string;
  confidence?: number | null;
  extra?: Record<string, unknown> | null;
}

const rowOf = (videoId: string, s: SegmentInput) => ({
  videoId,
  kind: s.kind,
  start: s.start,
  end: s.end,
  text: stripControls(s.text),
  confidence: s.confidence ?? null,
  extra: s.extra ?? null,
});

/** Inserts segments as they are. */
export function insertSegments(c: Catalog, videoId: string, segs: readonly SegmentInput[]): Promise<void> {
  return c.run(async (db) => {
    // Chunked: SQLite limits the number of bound parameters per statement.
    for (let k = 0; k < segs.length; k += 200)
      await db.insert(c.t.segments).values(segs.slice(k, k + 200).map((s) => rowOf(videoId, s)));
  });
}

/** Inserts one segment: its row id. */
export async function insertSegment(c: Catalog, videoId: string, s: SegmentInput): Promise<number> {
  const { segments } = c.t;
  const [row] = await c.run((db) => db.insert(segments).values(rowOf(videoId, s)).returning({ id: segments.id }));
  return row!.id;
}

/** The latest segment of the same kind and text that ends within `gap` s before `s` starts. */
export function spanBefore(
  c: Catalog,
  videoId: string,
  s: SegmentInput,
  gap: number,
): Promise<{ id: number; end: number; extra: Record<string, unknown> | null } | undefined> {
  const { segments } = c.t;
  return c.run(async (db) =>
    first(
      await db
        .select({ id: segments.id, end: segments.end, extra: segments.extra })
        .from(segments)
        .where(
          and(
            eq(segments.videoId, videoId),
            eq(segments.kind, s.kind),
            eq(segments.text, stripControls(s.text)),
            gte(segments.end, s.start - gap),
            lte(segments.start, s.start),
          ),
        )
        .orderBy(desc(segments.end), desc(segments.id))
        .limit(1),
    ),
  );
}

/** The face appearances (with their descriptors) that end within `gap` s before `start`. */
export function facesBefore(
  c: Catalog,
  videoId: string,
  start: number,
  gap: number,
): Promise<{ id: number; end: number; descriptor: Uint8Array }[]> {
  const { segments, personAppearances } = c.t;
  return c.run((db) =>
    db
      .select({ id: segments.id, end: segments.end, descriptor: personAppearances.descriptor })
      .from(segments)
      .innerJoin(personAppearances, eq(personAppearances.segmentId, segments.id))
      .where(
        and(
          eq(segments.videoId, videoId),
          eq(segments.kind, 'face'),
          gte(segments.end, start - gap),
          lte(segments.start, start),
        ),
      )
      .orderBy(asc(segments.id)),
  );
}

/** A segment continued: its new end (and extra, when given). */
export function extendSegment(c: Catalog, id: number, end: number, extra?: Record<string, unknown>): Promise<void> {
  const { segments } = c.t;
  return c.run(async (db) => {
    await db
      .update(segments)
      .set({ end, ...(extra && { extra }) })
      .where(eq(segments.id, id));
  });
}
