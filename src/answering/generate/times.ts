/**
 * The rule that every time in an answer comes from the evidence list, enforced on generated text.
 *
 * A time expression is a clock time (`0:42`, `1:02:05`, `0:42.5`), a number with a time unit
 * (`12 s`, `12 seconds`, `1 min 5 s`, `1m05s`, `2 minutes`, `1 h`), or `second 12` / `minute 3`.
 * One is accepted when it matches the start or end of an evidence item within ±0.5 s (or is that
 * time truncated to whole seconds, the way the evidence list writes it), when it follows "for" /
 * "lasting" and matches an item's duration, or when it appears word for word inside an item's text
 * (a clock read off the screen, a time someone says). Anything else makes the whole generated
 * answer unusable: the caller falls back to the composed answer. Deleting just the time would leave
 * a sentence that claims something at no time ("the dog appears at ."), and a model that invents
 * one time has shown it is not sticking to the evidence; the composed answer is always grounded.
 *
 * Not caught: times written in words ("twelve seconds in"), relative phrases ("shortly after").
 */
import type { Evidence } from '../evidence';

export interface TimeExpression {
  text: string;
  index: number;
  seconds: number;
  /** Whole seconds (a clock time without a fraction, or an integer with a unit). */
  whole: boolean;
  /** Introduced by "for" / "lasting": a length of time, not a moment. */
  duration: boolean;
}

const CLOCK = /(?<![\w.:])(?:(\d{1,3}):)?(\d{1,4}):([0-5]\d)(?:\.(\d{1,3}))?(?![\w:]|\.\d)/g;
const NUM = String.raw`(\d+(?:\.\d+)?)`;
const SEP = String.raw`[\s,]*(?:and\s+)?`;
const UNITS = new RegExp(
  String.raw`(?<![\w.:])(?:${NUM}\s*(?:hours?|hrs?|h)(?![a-z])${SEP})?(?:${NUM}\s*(?:minutes?|mins?|m)(?![a-z])${SEP})?(?:${NUM}\s*(?:seconds?|secs?|s)(?![a-z]))?`,
  'gi',
);
const ORDINAL = /\b(second|minute)\s+(\d+(?:\.\d+)?)(?![\w:]|\.\d)/gi;
const DURATION_CUE =
  /\b(?:for|lasting|lasts|lasted|last|long)\s+(?:about\s+|around\s+|roughly\s+|nearly\s+|almost\s+|over\s+|under\s+|just\s+)?$/i;

export function timeExpressions(text: string): TimeExpression[] {
  const found: TimeExpression[] = [];
  const covered: [number, number][] = [];
  const add = (index: number, raw: string, seconds: number, whole: boolean) => {
    const t = raw.replace(/[\s,]*(?:and)?\s*$/i, '');
    if (!t) return;
    if (covered.some(([a, b]) => index < b && index + t.length > a)) return;
    covered.push([index, index + t.length]);
    found.push({
      text: t,
      index,
      seconds,
      whole,
      duration: DURATION_CUE.test(text.slice(Math.max(0, index - 40), index)),
    });
  };
  for (const m of text.matchAll(CLOCK)) {
    const [h, mm, ss, frac] = [m[1], m[2]!, m[3]!, m[4]];
    const seconds = Number(h ?? 0) * 3600 + Number(mm) * 60 + Number(ss) + (frac ? Number(`0.${frac}`) : 0);
    add(m.index!, m[0], seconds, !frac);
  }
  for (const m of text.matchAll(UNITS)) {
    if (!m[0] || !(m[1] || m[2] || m[3])) continue;
    const [h, mm, s] = [m[1], m[2], m[3]];
    const seconds = Number(h ?? 0) * 3600 + Number(mm ?? 0) * 60 + Number(s ?? 0);
    add(m.index!, m[0], seconds, ![h, mm, s].some((x) => x?.includes('.')));
  }
  for (const m of text.matchAll(ORDINAL)) {
    const n = Number(m[2]);
    add(m.index!, m[0], m[1]!.toLowerCase() === 'minute' ? n * 60 : n, !m[2]!.includes('.'));
  }
  return found.sort((a, b) => a.index - b.index);
}

/** Whether one time expression is backed by the evidence (see the file comment). */
export function isGrounded(t: TimeExpression, evidence: Evidence[]): boolean {
  const near = (b: number) => Math.abs(t.seconds - b) <= 0.5 || (t.whole && Math.floor(b + 1e-6) === t.seconds);
  for (const e of evidence) {
    if (near(e.start) || near(e.end)) return true;
    if (t.duration && near(e.end - e.start)) return true;
    if (quoted(e.text, t.text)) return true;
  }
  return false;
}

/** `time` appears in `text` as a whole expression ("10:30" in "opens at 10:30", not "0:30" in it). */
function quoted(text: string, time: string): boolean {
  const esc = time.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(?<![\\w:.])${esc}(?![\\w:]|\\.\\d)`, 'i').test(text);
}

/** The time expressions of `text` that no evidence item backs (empty: the text may be used). */
export function ungroundedTimes(text: string, evidence: Evidence[]): string[] {
  return timeExpressions(text)
    .filter((t) => !isGrounded(t, evidence))
    .map((t) => t.text);
}

/** Drops a reasoning model's leading <think>…</think> block; null while that block is still open. */
export function visibleText(text: string): string | null {
  const m = /^\s*<think>/i.exec(text);
  if (!m) return text;
  const close = text.toLowerCase().indexOf('</think>', m[0].length);
  return close < 0 ? null : text.slice(close + '</think>'.length);
}

/** Words that can be part of a time expression, or the start of one still being written. */
const UNIT_WORDS = [
  'hours',
  'hour',
  'hrs',
  'hr',
  'h',
  'minutes',
  'minute',
  'mins',
  'min',
  'm',
  'seconds',
  'second',
  'secs',
  'sec',
  's',
  'and',
];
function timeish(word: string, complete: boolean): boolean {
  const w = word
    .replace(/^[("'[]+/, '')
    .replace(/[,.;:!?)"'\]]+$/, '')
    .toLowerCase();
  if (/^\d/.test(w)) return true;
  return complete ? UNIT_WORDS.includes(w) : UNIT_WORDS.some((u) => u.startsWith(w));
}

/**
 * Checks generated text while it streams: `push` returns the part that is safe to pass on (every
 * time expression in it checked), holding back a tail that might still grow into a time expression
 * ("at 0:4", "12 se") and trailing white space; `end` checks the rest. The concatenation of what
 * it lets through is the final answer, trimmed.
 */
export class TimeGuard {
  private full = '';
  private sent = 0;

  constructor(private readonly evidence: Evidence[]) {}

  /** Text released so far. */
  get released(): number {
    return this.sent;
  }

  push(chunk: string): { ok: true; text: string } | { ok: false; bad: string } {
    this.full += chunk;
    const visible = visibleText(this.full);
    if (visible === null) return { ok: true, text: '' };
    const text = visible.replace(/^\s+/, '');
    const safe = safeEnd(text);
    if (safe <= this.sent) return { ok: true, text: '' };
    const bad = ungroundedTimes(text.slice(0, safe), this.evidence);
    if (bad.length) return { ok: false, bad: bad[0]! };
    const out = text.slice(this.sent, safe);
    this.sent = safe;
    return { ok: true, text: out };
  }

  /** The rest of the answer once the model has finished, and the whole answer. */
  end(): { ok: true; text: string; output: string } | { ok: false; bad: string } {
    const visible = visibleText(this.full);
    if (visible === null) return { ok: false, bad: 'an unfinished <think> block' };
    const output = visible.trim();
    const bad = ungroundedTimes(output, this.evidence);
    if (bad.length) return { ok: false, bad: bad[0]! };
    const out = output.slice(this.sent);
    this.sent = output.length;
    return { ok: true, text: out, output };
  }
}

/**
 * How much of `text` can be released: never trailing white space, and never a trailing run of
 * time-ish words that holds a number ("at 0:4", "1 minute 5 se"), which may still grow.
 */
function safeEnd(text: string): number {
  const trimmed = text.replace(/\s+$/, '');
  const words = [...trimmed.matchAll(/\S+/g)];
  const lastComplete = trimmed.length < text.length;
  let holdFrom = trimmed.length;
  let sawDigit = false;
  for (let k = words.length - 1; k >= 0; k--) {
    const w = words[k]!;
    if (!timeish(w[0], k < words.length - 1 || lastComplete)) break;
    if (/\d/.test(w[0])) sawDigit = true;
    holdFrom = w.index!;
  }
  return sawDigit ? holdFrom : trimmed.length;
}
