/**
 * The hosted API's ways of writing moments, which its SDK parses: a search match is
 * `[file_id, start_frame, end_frame, "m min, s sec", "m min, s sec"]`, flows write "MM:SS" or
 * "HH:MM:SS". Frames are counted from 0 at the video's own frame rate.
 */
import type { SegmentKind } from '../storage/rows';

export type SdkMatch = [string, number, number, string, string];

/** "0 min, 22 sec": whole minutes and the whole seconds after them (rounded down). */
export function minSec(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  return `${Math.floor(s / 60)} min, ${s % 60} sec`;
}

/** The frame shown at `seconds`: frames are numbered from 0 at `fps` (unknown fps: one per second). */
export function frameAt(seconds: number, fps: number | null): number {
  const rate = fps && fps > 0 ? fps : 1;
  return Math.max(0, Math.floor(seconds * rate + 1e-6));
}

export function sdkMatch(fileId: string, start: number, end: number, fps: number | null): SdkMatch {
  return [fileId, frameAt(start, fps), frameAt(end, fps), minSec(start), minSec(end)];
}

/** "01:05" (clipping), or "00:01:05" with `hours` (scene detection). */
export function clock(seconds: number, hours = false): string {
  const s = Math.max(0, Math.round(seconds));
  const two = (n: number) => String(n).padStart(2, '0');
  if (hours) return `${two(Math.floor(s / 3600))}:${two(Math.floor(s / 60) % 60)}:${two(s % 60)}`;
  return `${two(Math.floor(s / 60))}:${two(s % 60)}`;
}

/** Which list of the answer a segment kind goes to: what was said, what was written, what was seen. */
export function bucketOf(kind: SegmentKind): 'embeddings' | 'transcript' | 'ocr' {
  if (kind === 'ocr') return 'ocr';
  if (kind === 'speech' || kind === 'transcript') return 'transcript';
  return 'embeddings';
}
