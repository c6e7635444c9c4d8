/**
 * Time said relative to now ("what happened in the last 10 minutes", "in the past hour", "is
 * anyone there now", "right now") read as a window or a moment of the question's videos.
 *
 * On a live stream "now" is the stream's clock: the wall clock in stream seconds, given by the
 * caller as a function (the answering does not import the live module). Its moment is the latest
 * analysed second while that is recent (frames arrive with some delay), else the wall clock, so a
 * stalled camera is not described from an old frame as if it were now. On a finished file "now"
 * means its end.
 */
import type { Video } from '../storage/rows';
import type { TimeTarget } from './target';
import { NUMBER_WORDS } from './vocabulary';

/** A live video's clock, in stream seconds; null for a video that is not a live stream. */
export type StreamClock = (videoId: string) => Promise<{ nowT: number; latestT: number } | null>;

/** What relative time a question says. */
export type RelativeTime = { last: number } | { now: true };

/** A latest analysed second older than this (behind the wall clock) is not "now". */
export const STALE_SEC = 60;

const UNITS: [RegExp, number][] = [
  [/^(h|hrs?|hours?)$/, 3600],
  [/^(m|mins?|minutes?)$/, 60],
  [/^(s|secs?|seconds?)$/, 1],
];

function unitSeconds(unit: string): number | null {
  return UNITS.find(([re]) => re.test(unit))?.[1] ?? null;
}

/** The relative time a question says, or null. Quoted words are text to look for, not time. */
export function readRelativeTime(question: string): RelativeTime | null {
  const q = ` ${question
    .toLowerCase()
    .replace(/"[^"]*"/g, ' ')
    .replace(/\s+/g, ' ')} `;
  const last =
    /\b(?:last|past|previous|recent)\s+(?:(\d+(?:\.\d+)?|a|an|one|two|three|four|five|six|seven|eight|nine|ten|fifteen|twenty|thirty|forty|fifty|sixty|half an?|half|couple of|few)\s+)?(h|hrs?|hours?|m|mins?|minutes?|s|secs?|seconds?)\b/.exec(
      q,
    );
  if (last) {
    const n = last[1];
    const amount =
      n === undefined || n === 'a' || n === 'an' || n === 'one'
        ? 1
        : /^half/.test(n)
          ? 0.5
          : n === 'couple of'
            ? 2
            : n === 'few'
              ? 3
              : /^\d/.test(n)
                ? Number(n)
                : (NUMBER_WORDS[n] ?? null);
    const unit = unitSeconds(last[2]!);
    if (amount !== null && unit !== null) return { last: amount * unit };
  }
  if (/\bjust now\b|\ba moment ago\b/.test(q)) return { last: 60 };
  if (/\b(right now|now|currently|at the moment|at present|at this moment|presently|still)\b/.test(q))
    return { now: true };
  return null;
}

/**
 * The videos and time target a relative time gives: on live streams (the scope narrowed to them
 * when it holds any), else on a single finished file (its end is "now"). Null when the question
 * says no relative time, or when its videos have no common "now" (several finished files, or live
 * streams whose clocks differ: ask one with target_video).
 */
export async function relativeScope(
  question: string,
  videos: Video[],
  clock: StreamClock,
): Promise<{ videos: Video[]; target: TimeTarget } | null> {
  const rel = readRelativeTime(question);
  if (!rel || !videos.length) return null;
  const clocks = await Promise.all(videos.map((v) => clock(v.id)));
  const live = videos.flatMap((v, i) => {
    const c = clocks[i];
    return c ? [{ v, c }] : [];
  });
  let now: number;
  let scoped: Video[];
  if (live.length) {
    // A sender's clock may run ahead of ours: frames already analysed are never in the future.
    const nows = live.map(({ c }) =>
      'now' in rel && c.nowT - c.latestT <= STALE_SEC ? c.latestT : Math.max(c.nowT, c.latestT),
    );
    if (Math.max(...nows) - Math.min(...nows) > 1) return null;
    now = Math.max(...nows);
    scoped = live.map(({ v }) => v);
  } else {
    if (videos.length !== 1 || videos[0]!.durationSec === null) return null;
    now = videos[0]!.durationSec;
    scoped = videos;
  }
  now = Math.max(0, now);
  const target: TimeTarget =
    'now' in rel
      ? { start: now, end: now, point: true }
      : { start: Math.max(0, now - rel.last), end: now, point: false };
  return { videos: scoped, target };
}
