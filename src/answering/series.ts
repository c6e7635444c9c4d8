/**
 * Counting series and time arithmetic over segments, shared by the composer and the fact
 * plug-ins: the points of a label's count over time, its appearances (spans with short gaps
 * merged), runs of points that hold a count, and seconds covered, shared or apart.
 */
import type { Segment, Video } from '../storage/rows';
import { POSSIBLY_BELOW } from './wording';

/** One point of a label's counting series: how many are seen in one sampled frame. */
export interface Counted {
  video: Video;
  t: number;
  n: number;
  segment: Segment | null;
}

/** Half the width of the window around a point time (as evidence.ts widens a point `target`). */
export const POINT_HALF = 2;

/**
 * Seconds between the frames the analysis sampled from a video: its length over the frames its
 * objects (or shots) analysis read. Null when the analysis does not say.
 */
export function samplingInterval(v: Video): number | null {
  const a = v.analysis as Record<string, { frames?: unknown } | undefined> | null;
  const frames = [a?.objects?.frames, a?.shots?.frames].find((n): n is number => typeof n === 'number' && n > 0);
  return frames && v.durationSec ? v.durationSec / frames : null;
}

/**
 * The window a moment is judged in ("is anybody there at 0:45", "how many bottles at 0:20", a
 * point `target`): what is present AT the moment, not what was near it. A detection span already
 * stands for the time halfway to its neighbouring sampled frames, so a span that covers the moment
 * is what the nearest sampled frame saw; the slack (a quarter of the sampling interval, the
 * smallest of the scope's videos) only absorbs a moment said to the whole second, and never reaches
 * a span that ended a sampled frame earlier. Unknown sampling: one second.
 */
export function momentWindow(t: number, videos: Video[]): { start: number; end: number } {
  const intervals = videos.map(samplingInterval).filter((x): x is number => x !== null);
  const slack = intervals.length ? Math.min(POINT_HALF, Math.max(0.25, Math.min(...intervals) / 4)) : 1;
  return { start: Math.max(0, t - slack), end: t + slack };
}

/** One appearance of a label: its spans with gaps under a second and a half merged (a missed frame is not a new arrival). */
export interface Appearance {
  videoId: string;
  start: number;
  end: number;
  most: number;
  segments: Segment[];
}

export function appearances(spans: Segment[]): Appearance[] {
  const out: Appearance[] = [];
  const sorted = [...spans].sort((a, b) =>
    a.videoId === b.videoId ? a.start - b.start : a.videoId < b.videoId ? -1 : 1,
  );
  for (const s of sorted) {
    const most = countsOf(s).most;
    const last = out.at(-1);
    if (last && last.videoId === s.videoId && s.start - last.end <= 1.5) {
      last.end = Math.max(last.end, s.end);
      last.most = Math.max(last.most, most);
      last.segments.push(s);
    } else out.push({ videoId: s.videoId, start: s.start, end: s.end, most, segments: [s] });
  }
  return out;
}

/**
 * A detection span's counts per frame, without its weak detections (issue 34, class 8: "four
 * people at once" where two men stand and two faint boxes score 0.37). The analysis keeps the
 * boxes of the span's fullest frame: the distinct ones (a box that overlaps a better one by half
 * is the same thing found twice) scoring POSSIBLY_BELOW or more are what it surely holds, the
 * rest are `weak`; each frame's count loses at most as many as the fullest frame lost. A span
 * with only weak boxes keeps its counts (its answers hedge it by its confidence).
 */
export function countsOf(s: Segment): { counts: [number, number][]; most: number; weak: number } {
  const x = s.extra as {
    counts?: [number, number][];
    max_count?: number;
    boxes?: { score: number; box: number[] }[];
  } | null;
  const counts = x?.counts ?? [[s.start, 1]];
  const most = x?.max_count ?? Math.max(1, ...counts.map((c) => c[1]));
  const boxes = x?.boxes;
  if (!boxes?.length || boxes.length !== most) return { counts, most, weak: 0 };
  const kept: { score: number; box: number[] }[] = [];
  for (const b of [...boxes].sort((p, q) => q.score - p.score))
    if (!kept.some((k) => iou(k.box, b.box) >= 0.5)) kept.push(b);
  const sure = kept.filter((b) => b.score >= POSSIBLY_BELOW).length;
  if (sure === 0 || sure === most) return { counts, most, weak: 0 };
  const cut = most - sure;
  return {
    counts: counts.map(([t, n]) => [t, Math.max(Math.min(n, sure), n - cut)]),
    most: sure,
    weak: kept.length - sure,
  };
}

/** Intersection over union of two boxes [x, y, w, h]. */
function iou(a: number[], b: number[]): number {
  const w = Math.min(a[0]! + a[2]!, b[0]! + b[2]!) - Math.max(a[0]!, b[0]!);
  const h = Math.min(a[1]! + a[3]!, b[1]! + b[3]!) - Math.max(a[1]!, b[1]!);
  if (w <= 0 || h <= 0) return 0;
  const inter = w * h;
  return inter / (a[2]! * a[3]! + b[2]! * b[3]! - inter);
}

/** Runs of consecutive points (per video) that satisfy `ok`, as spans. */
export function runsOf(pts: Counted[], ok: (p: Counted) => boolean): { video: Video; start: number; end: number }[] {
  const runs: { video: Video; start: number; end: number; segment: Segment | null }[] = [];
  let cur: { video: Video; start: number; end: number; segment: Segment | null } | null = null;
  for (const p of pts) {
    if (ok(p)) {
      // A new span of the label (it was out of sight in between) starts a new run.
      if (cur && cur.video.id === p.video.id && cur.segment === p.segment) cur.end = p.t;
      else {
        if (cur) runs.push(cur);
        cur = { video: p.video, start: p.t, end: p.t, segment: p.segment };
      }
    } else if (cur) {
      runs.push(cur);
      cur = null;
    }
  }
  if (cur) runs.push(cur);
  return runs;
}

/** The most common of the numbers (the larger on a tie). */
export function mode(ns: number[]): number {
  const c = new Map<number, number>();
  for (const n of ns) c.set(n, (c.get(n) ?? 0) + 1);
  return [...c.entries()].sort((a, b) => b[1] - a[1] || b[0] - a[0])[0]![0];
}

/** Seconds covered by the segments; seconds two segments share; seconds from a segment to a time. */
export const total = (ss: Segment[]) => ss.reduce((a, s) => a + (s.end - s.start), 0);
export const overlap = (a: Segment, b: Segment) => Math.max(0, Math.min(a.end, b.end) - Math.max(a.start, b.start));
export const distance = (s: Segment, t: number) => (t < s.start ? s.start - t : t > s.end ? t - s.end : 0);

/** The count points inside a window; when the sampling left none inside, the one nearest its middle. */
export function inWindow(pts: [number, number][], win: { start: number; end: number }): [number, number][] {
  const inside = pts.filter(([t]) => t >= win.start && t <= win.end);
  if (inside.length || !pts.length) return inside;
  const mid = (win.start + win.end) / 2;
  return [pts.reduce((a, b) => (Math.abs(b[0] - mid) < Math.abs(a[0] - mid) ? b : a))];
}

/** A change in how many of a label are seen: from `from` to `to` between `before` and `at`. */
export interface Change {
  video: Video;
  from: number;
  to: number;
  /** The last sampled time with the old count. */
  before: number;
  /** The first sampled time with the new count. */
  at: number;
}

/**
 * The changes in a label's count over time, per video (issue 34, class 4: "when is a cup taken
 * away" reads the drop from three cups to two, not the span of cups). A gap in the detections
 * longer than two sampling intervals counts as none seen; a new count must hold for two sampled
 * frames (or to the end of what was seen) so that one missed detection is not a change.
 */
export function changesOf(points: Counted[]): Change[] {
  const out: Change[] = [];
  const byVideo = new Map<Video, Counted[]>();
  for (const p of points) byVideo.set(p.video, [...(byVideo.get(p.video) ?? []), p]);
  for (const [video, pts] of byVideo) {
    const step = samplingInterval(video) ?? 1;
    const seq: { t: number; n: number }[] = [];
    const sorted = [...pts].sort((a, b) => a.t - b.t);
    if (sorted[0]!.t > 2 * step) seq.push({ t: sorted[0]!.t - step, n: 0 });
    for (const [i, p] of sorted.entries()) {
      const prev = sorted[i - 1];
      if (prev && p.t - prev.t > 2 * step) seq.push({ t: prev.t + step, n: 0 });
      seq.push({ t: p.t, n: p.n });
    }
    const last = sorted.at(-1)!;
    if (video.durationSec !== null && video.durationSec - last.t > 2 * step) seq.push({ t: last.t + step, n: 0 });
    let held = seq[0]!;
    for (let i = 1; i < seq.length; i++) {
      const p = seq[i]!;
      if (p.n === held.n) {
        held = p;
        continue;
      }
      const next = seq[i + 1];
      if (next && next.n !== p.n && i + 1 < seq.length - 1) continue; // one frame: a missed or a spurious detection
      out.push({ video, from: held.n, to: p.n, before: held.t, at: p.t });
      held = p;
    }
  }
  return out;
}
