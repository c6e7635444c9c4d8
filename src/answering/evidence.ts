/**
 * Evidence for answers. The retrieval itself (keyword + embedding search over every segment kind,
 * with a relevance that means the same across kinds) lives in src/search/ (the one retrieval core);
 * this module keeps the answer-side shapes and re-exports what the answering code uses.
 */
import type { SegmentKind } from '../storage/rows';
import type { TimeTarget } from './target';

export { EvidenceFinder, KIND_READ_LIMIT, type ScopeWindow } from '../search/finder';
export { kindWeights, type Ranked } from '../search/scoring';

export interface Evidence {
  video_id: string;
  file_name: string;
  start: number;
  end: number;
  kind: SegmentKind;
  text: string;
  score: number;
  /** Path (signed) of the sampled frame nearest the middle of the span, or null. */
  frame_url: string | null;
}

/** How far around a point `target` the answer looks, in seconds. @default 2 */
export const POINT_WINDOW_SEC = 2;

export function windowOf(
  target: TimeTarget | null,
  halfWidth = POINT_WINDOW_SEC,
): { start: number; end: number } | null {
  if (!target) return null;
  return target.point
    ? { start: Math.max(0, target.start - halfWidth), end: target.start + halfWidth }
    : { start: target.start, end: target.end };
}
