/** Wording shared by the composer and the fact plug-ins: times, quotes, lists, articles. */
import type { Segment } from '../storage/rows';
import { formatTime } from './target';
import { labelNoun, numberWord } from './vocabulary';

export const span = (start: number, end: number) =>
  end - start < 1.5 ? `at ${formatTime(start)}` : `from ${formatTime(start)} to ${formatTime(end)}`;
// The lines of one text block are one phrase (a title set over two lines reads "Big Buck Bunny", as a person would quote it).
export const quote = (text: string) => `"${text.replace(/\s*\n\s*/g, ' ').trim()}"`;
export const article = (noun: string) =>
  /^[aeiou]/i.test(noun) && !/^(one|uni|eu)/i.test(noun) ? `an ${noun}` : `a ${noun}`;

/** Seconds as words: "12.3 seconds", "2 minutes 5 seconds". */
export function secs(n: number): string {
  if (n < 60) return `${Math.round(n * 10) / 10} second${Math.round(n * 10) / 10 === 1 ? '' : 's'}`;
  const m = Math.floor(n / 60);
  const r = Math.round(n - m * 60);
  return `${m} minute${m === 1 ? '' : 's'}${r ? ` ${r} second${r === 1 ? '' : 's'}` : ''} (${Math.round(n * 10) / 10} seconds)`;
}

export function joinList(parts: string[]): string {
  if (parts.length <= 1) return parts[0] ?? '';
  return `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}`;
}

export function capital(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** A yes/no question ("is there…", "does…"): its answer may start with "Yes". */
export const YES_NO = /^\s*(is|are|was|were|does|do|did|can|could|has|have|had|will|would|any)\b/i;

/** Which audio track a speech segment is on, for videos with several (the speech stage sets it only then). */
export function onTrack(s: Segment): string {
  const x = s.extra as { track?: unknown; language?: unknown } | null;
  if (typeof x?.track !== 'number') return '';
  return ` on audio track ${x.track}${typeof x.language === 'string' ? ` (${x.language})` : ''}`;
}

/** Detections under this confidence are said with "possibly": on the shared clips most wrong labels (sheep in a meadow, a remote, a TV) scored 0.31–0.41, the right ones mostly 0.53–0.74 (see docs/answering.md). */
export const POSSIBLY_BELOW = 0.5;

/** "a dog", or "possibly a dog" for a detection under POSSIBLY_BELOW. */
export function detected(label: string, confidence: number | null, n = 1): string {
  const noun = n === 1 ? article(labelNoun(label)) : `${numberWord(n)} ${labelNoun(label, n)}`;
  return (confidence ?? 1) < POSSIBLY_BELOW ? `possibly ${noun}` : noun;
}
