/** Wording shared by the composer and the fact plug-ins: times, quotes, lists, articles. */
import { formatTime } from './target';

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
