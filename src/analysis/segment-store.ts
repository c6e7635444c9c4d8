/**
 * A live stream's windows' segments, each continuing what the window before it stored (a file's
 * stages store their whole output at once: repositories/analysis.ts). The SQL is in
 * storage/repositories/segments.ts.
 */
import { cosine, descriptorOf, JOIN_SIMILARITY } from '../people/group';
import { extendSegment, facesBefore, insertSegment, spanBefore } from '../storage/repositories/segments';
import type { Catalog } from '../storage/catalog';
import type { NewSegment } from './contracts';

/**
 * The segments of a live window, each continuing the same label's (or text's, or person's) segment
 * that ended just before it, so that an object seen for minutes is one span, not one per window.
 * `step`: seconds between the window's frames. Returns each segment's row id (new or continued).
 * `tx`: the window's write (each segment sees the ones stored before it).
 */
export async function storeWindowSegments(
  tx: Catalog,
  videoId: string,
  segs: readonly NewSegment[],
  step: number,
): Promise<Map<NewSegment, number>> {
  const gap = step * 1.5 + 0.5;
  const ids = new Map<NewSegment, number>();
  for (const s of segs)
    ids.set(s, s.kind === 'face' ? await storeFace(tx, videoId, s, gap) : await storeSpan(tx, videoId, s, gap));
  return ids;
}

async function storeSpan(tx: Catalog, videoId: string, s: NewSegment, gap: number): Promise<number> {
  // Two sentences are two transcripts, even when they read the same.
  const prev = s.kind === 'transcript' ? undefined : await spanBefore(tx, videoId, s, gap);
  if (!prev) return insertSegment(tx, videoId, s);
  const maxCount = Math.max(Number(prev.extra?.max_count ?? 0), Number(s.extra?.max_count ?? 0));
  await extendSegment(
    tx,
    prev.id,
    Math.max(prev.end, s.end),
    prev.extra && maxCount > 0 ? { ...prev.extra, max_count: maxCount } : undefined,
  );
  return prev.id;
}

/**
 * A face continues the appearance that ended just before it when their descriptors are as alike as
 * one person's (the people grouping's threshold); otherwise it is a new appearance, grouped into
 * the index's people by the faces stage's own write.
 */
async function storeFace(tx: Catalog, videoId: string, s: NewSegment, gap: number): Promise<number> {
  const raw = s.extra?.descriptor;
  if (Array.isArray(raw) && raw.length) {
    let best: { id: number; end: number } | null = null;
    let bestSim = JOIN_SIMILARITY;
    for (const n of await facesBefore(tx, videoId, s.start, gap)) {
      const sim = cosine(descriptorOf(n.descriptor), raw as number[]);
      if (sim >= bestSim) [best, bestSim] = [n, sim];
    }
    if (best) {
      await extendSegment(tx, best.id, Math.max(best.end, s.end));
      return best.id;
    }
  }
  return insertSegment(tx, videoId, s);
}
