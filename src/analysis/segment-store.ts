/**
 * The one writer of analysed segments, used by the pipeline for a file (a stage's whole output at
 * once) and for a live stream's windows (each window's output continuing what the window before it
 * stored). Text read out of media (OCR, speech, captions) never carries terminal controls (issue 25).
 */
import { and, desc, eq, gte, lte } from 'drizzle-orm';
import { cosine, descriptorOf, JOIN_SIMILARITY } from '../people/group';
import type { Db } from '../storage/db';
import { personAppearances, segments } from '../storage/schema';
import { stripControls } from '../util/text';
import type { NewSegment } from './contracts';

const rowOf = (videoId: string, s: NewSegment) => ({
  videoId,
  kind: s.kind,
  start: s.start,
  end: s.end,
  text: stripControls(s.text),
  confidence: s.confidence ?? null,
  extra: s.extra ?? null,
});

/** Inserts a stage's segments as they are. */
export function insertSegments(tx: Db, videoId: string, segs: readonly NewSegment[]): void {
  // Chunked: SQLite limits the number of bound parameters per statement.
  for (let k = 0; k < segs.length; k += 200)
    tx.insert(segments)
      .values(segs.slice(k, k + 200).map((s) => rowOf(videoId, s)))
      .run();
}

function insertOne(tx: Db, videoId: string, s: NewSegment): number {
  return tx.insert(segments).values(rowOf(videoId, s)).returning({ id: segments.id }).get()!.id;
}

/**
 * The segments of a live window, each continuing the same label's (or text's, or person's) segment
 * that ended just before it, so that an object seen for minutes is one span, not one per window.
 * `step`: seconds between the window's frames. Returns each segment's row id (new or continued).
 */
export function storeWindowSegments(
  tx: Db,
  videoId: string,
  segs: readonly NewSegment[],
  step: number,
): Map<NewSegment, number> {
  const gap = step * 1.5 + 0.5;
  const ids = new Map<NewSegment, number>();
  for (const s of segs) ids.set(s, s.kind === 'face' ? storeFace(tx, videoId, s, gap) : storeSpan(tx, videoId, s, gap));
  return ids;
}

function storeSpan(tx: Db, videoId: string, s: NewSegment, gap: number): number {
  // Two sentences are two transcripts, even when they read the same.
  const prev =
    s.kind === 'transcript'
      ? undefined
      : tx
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
          .orderBy(desc(segments.end))
          .get();
  if (!prev) return insertOne(tx, videoId, s);
  const maxCount = Math.max(Number(prev.extra?.max_count ?? 0), Number(s.extra?.max_count ?? 0));
  tx.update(segments)
    .set({
      end: Math.max(prev.end, s.end),
      ...(prev.extra && maxCount > 0 && { extra: { ...prev.extra, max_count: maxCount } }),
    })
    .where(eq(segments.id, prev.id))
    .run();
  return prev.id;
}

/**
 * A face continues the appearance that ended just before it when their descriptors are as alike as
 * one person's (the people grouping's threshold); otherwise it is a new appearance, grouped into
 * the index's people by the faces stage's own write.
 */
function storeFace(tx: Db, videoId: string, s: NewSegment, gap: number): number {
  const raw = s.extra?.descriptor;
  if (Array.isArray(raw) && raw.length) {
    const near = tx
      .select({ id: segments.id, end: segments.end, descriptor: personAppearances.descriptor })
      .from(segments)
      .innerJoin(personAppearances, eq(personAppearances.segmentId, segments.id))
      .where(
        and(
          eq(segments.videoId, videoId),
          eq(segments.kind, 'face'),
          gte(segments.end, s.start - gap),
          lte(segments.start, s.start),
        ),
      )
      .all();
    let best: (typeof near)[number] | null = null;
    let bestSim = JOIN_SIMILARITY;
    for (const n of near) {
      const sim = cosine(descriptorOf(n.descriptor), raw as number[]);
      if (sim >= bestSim) [best, bestSim] = [n, sim];
    }
    if (best) {
      tx.update(segments)
        .set({ end: Math.max(best.end, s.end) })
        .where(eq(segments.id, best.id))
        .run();
      return best.id;
    }
  }
  return insertOne(tx, videoId, s);
}
