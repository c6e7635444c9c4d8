// Small helpers shared by the views: element creation, formatting, announcements.
import { S } from './state';
export type Kid = Node | string | number | false | null | undefined | Kid[];
type Props = Record<string, unknown> | null | undefined;

/** Creates an element. Props: `on*` listeners, `class`, `style` (object), DOM properties or attributes. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props?: Props,
  ...kids: Kid[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props ?? {})) {
    if (v == null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v as EventListener);
    else if (k === 'class') el.className = v as string;
    else if (k === 'style') Object.assign(el.style, v);
    else if (typeof v !== 'string' && k in el) (el as any)[k] = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const kid of (kids as unknown[]).flat(Infinity) as (Node | string | number | false | null | undefined)[])
    if (kid != null && kid !== false) el.append(kid instanceof Node ? kid : String(kid));
  return el;
}

/** 75.4 → "1:15"; with `tenths`, "1:15.4". */
export function fmtTime(sec: number, tenths = false): string {
  if (!Number.isFinite(sec)) return '–';
  const s = Math.max(0, sec);
  const hh = Math.floor(s / 3600);
  const mm = Math.floor((s % 3600) / 60);
  const ss = tenths ? (s % 60).toFixed(1).padStart(4, '0') : String(Math.floor(s % 60)).padStart(2, '0');
  return hh ? `${hh}:${String(mm).padStart(2, '0')}:${ss}` : `${mm}:${ss}`;
}
export const fmtSpan = (a: number, b: number) => (Math.abs(b - a) < 0.5 ? fmtTime(a) : `${fmtTime(a)}–${fmtTime(b)}`);
export function fmtBytes(n: number) {
  if (!Number.isFinite(n)) return '';
  const u = ['B', 'kB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (n >= 1000 && i < u.length - 1) (n /= 1000), i++;
  return `${n < 10 && i ? n.toFixed(1) : Math.round(n)} ${u[i]}`;
}
export function fmtEta(sec: number | null | undefined) {
  if (sec == null || !Number.isFinite(sec)) return '';
  return sec < 60 ? `about ${Math.max(1, Math.round(sec))} s left` : `about ${Math.round(sec / 60)} min left`;
}
export const plural = (n: number, one: string, many = one + 's') => `${n} ${n === 1 ? one : many}`;

export const STAGES: Record<string, string> = {
  connecting: 'Connecting',
  downloading: 'Downloading',
  uploading: 'Uploading',
  probing: 'Checking the file',
  stored: 'Stored',
  queued: 'Waiting for analysis',
  'analyzing:visual': 'Analysing: shots and frames',
  'analyzing:ocr': 'Analysing: on-screen text',
  'analyzing:objects': 'Analysing: objects',
  'analyzing:speech': 'Analysing: speech',
  'analyzing:subtitles': 'Analysing: subtitles',
  'analyzing:embeddings': 'Analysing: indexing for search',
  finalizing: 'Finishing',
  ready: 'Ready',
  failed: 'Failed',
};
export const stageLabel = (s: string | null | undefined) =>
  (s ? STAGES[s] : undefined) ?? (s ? s.replace(/^analyzing:/, 'Analysing: ') : '');
/** A queued video: its place in line and when it should be ready. */
export const waitingLabel = (r: { queue_position: number; eta_sec?: number | null }) =>
  `Waiting for analysis — ${r.queue_position === 1 ? 'next' : `number ${r.queue_position}`} in line${r.eta_sec != null ? `, ready in about ${r.eta_sec < 90 ? plural(Math.max(1, r.eta_sec), 'second') : plural(Math.round(r.eta_sec / 60), 'minute')}` : ''}`;

export const KINDS: Record<string, string> = {
  shot: 'Shot',
  speech: 'Speech',
  transcript: 'Speech',
  ocr: 'On-screen text',
  object: 'Object',
  caption: 'Caption',
  audio: 'Sound',
  face: 'Person',
};

/** Says something to screen readers. */
export function announce(msg: string) {
  const live = document.getElementById('live')!;
  live.textContent = '';
  setTimeout(() => (live.textContent = msg), 30);
}

let toastTimer: ReturnType<typeof setTimeout> | undefined;

/** A message under the header for a few seconds, optionally with an action button. */
export function toast(msg: string, action?: { label: string; run: () => void }) {
  const box = document.getElementById('toast')!;
  const btn =
    action &&
    h('button', { type: 'button', class: 'link', onclick: () => ((box.hidden = true), action.run()) }, action.label);
  box.replaceChildren(h('span', null, msg), btn ?? '');
  box.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (box.hidden = true), action ? 10000 : 5000);
}

/** Puts the heading in focus after a view change (keyboard and screen-reader users start there). */
export function focusHeading(main: HTMLElement) {
  const h1 = main.querySelector('h1');
  if (h1 && S.routeChanged) h1.focus({ preventScroll: false });
}
