/**
 * The `target` of /inquire: a moment or a range of a video.
 * Accepted: seconds (`75`, `75.5`), `mm:ss`, `hh:mm:ss(.mmm)`, and a range `a-b` of any of these.
 */
import { badRequest } from '../errors';

export interface TimeTarget {
  start: number;
  end: number;
  /** A single moment (the answering widens it to a window) rather than a range. */
  point: boolean;
}

export const TARGET_FORMATS =
  'seconds (75 or 75.5), mm:ss (1:15), hh:mm:ss(.mmm) (00:01:15.500), or a range a-b of these (1:00-1:30)';

function parseMoment(s: string): number | null {
  const t = s.trim();
  if (/^\d{1,9}(\.\d{1,6})?$/.test(t)) return Number(t);
  let m = /^(\d{1,4}):([0-5]?\d)(\.\d{1,6})?$/.exec(t);
  if (m) return Number(m[1]) * 60 + Number(m[2]) + Number(m[3] ?? 0);
  m = /^(\d{1,3}):([0-5]\d):([0-5]\d)(\.\d{1,6})?$/.exec(t);
  if (m) return Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]) + Number(m[4] ?? 0);
  return null;
}

export function parseTarget(raw: string): TimeTarget {
  const s = raw.trim();
  if (s === '') throw badRequest(`target is empty; expected ${TARGET_FORMATS}`);
  const dash = s.indexOf('-');
  if (dash > 0) {
    const a = parseMoment(s.slice(0, dash));
    const b = parseMoment(s.slice(dash + 1));
    if (a === null || b === null)
      throw badRequest(`target ${JSON.stringify(raw.slice(0, 40))} is not a valid time; expected ${TARGET_FORMATS}`);
    if (b < a) throw badRequest(`target range ends (${b} s) before it starts (${a} s)`);
    return { start: a, end: b, point: false };
  }
  const t = parseMoment(s);
  if (t === null)
    throw badRequest(`target ${JSON.stringify(raw.slice(0, 40))} is not a valid time; expected ${TARGET_FORMATS}`);
  return { start: t, end: t, point: true };
}

/** 75.5 → "1:15", 3725 → "1:02:05". */
export function formatTime(sec: number): string {
  const s = Math.max(0, Math.floor(sec));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const r = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${r}` : `${m}:${r}`;
}
