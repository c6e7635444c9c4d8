/**
 * Standing questions: which new segments of a window match an alert's condition, and the
 * server-sent-event hub that hands fired alerts to listeners as they happen.
 */
import type { NewSegment } from '../analysis/contracts';
import type { LiveAlert } from '../storage/schema';

export interface AlertMatch {
  /** Stream seconds of the first match in the window. */
  t: number;
  evidence: string;
  segment: NewSegment;
}

const norm = (s: string) => s.toLowerCase().replace(/\s+/g, ' ').trim();

/** Words of `query` all found in `text` (case and spacing ignored). */
function containsWords(text: string, query: string): boolean {
  const hay = norm(text);
  return norm(query)
    .split(' ')
    .filter(Boolean)
    .every((w) => hay.includes(w));
}

/** The first segment of a window that meets the alert's condition, or null. */
export function matchAlert(alert: LiveAlert, segs: readonly NewSegment[]): AlertMatch | null {
  for (const s of [...segs].sort((a, b) => a.start - b.start)) {
    switch (alert.kind) {
      case 'object': {
        if (s.kind === 'face' && alert.person) {
          const who = String(s.extra?.person_name ?? '');
          if (who && norm(who) === norm(alert.person)) return { t: s.start, evidence: `${who} is seen`, segment: s };
          continue;
        }
        if (s.kind !== 'object' || norm(s.text) !== norm(alert.query)) continue;
        const count = Number(s.extra?.max_count ?? 1);
        if (count < alert.minCount) continue;
        if (alert.colour) {
          const colours = JSON.stringify(s.extra?.colours ?? s.extra?.colour ?? '').toLowerCase();
          if (!colours.includes(alert.colour.toLowerCase())) continue;
        }
        return {
          t: s.start,
          evidence: `${count} ${s.text}${count > 1 ? 's' : ''} seen (confidence ${s.confidence ?? '?'})`,
          segment: s,
        };
      }
      case 'text':
        if (s.kind === 'ocr' && containsWords(s.text, alert.query))
          return { t: s.start, evidence: `text on screen: "${s.text.slice(0, 200)}"`, segment: s };
        continue;
      case 'speech':
        if ((s.kind === 'transcript' || s.kind === 'speech') && containsWords(s.text, alert.query))
          return { t: s.start, evidence: `said: "${s.text.slice(0, 200)}"`, segment: s };
        continue;
      case 'caption':
        if (s.kind === 'caption' && containsWords(s.text, alert.query))
          return { t: s.start, evidence: `caption: "${s.text.slice(0, 200)}"`, segment: s };
        continue;
    }
  }
  return null;
}

export interface FiredAlert {
  event_id: number;
  alert_id: string;
  stream_id: string;
  index_id: string;
  file_id: string;
  kind: string;
  query: string;
  /** Stream seconds. */
  time: number;
  /** Unix time (ms) of the moment. */
  at: string;
  evidence: string;
  /** Path (unsigned) of the frame; the HTTP layer signs it. */
  frame_path: string | null;
}

/** Listeners of fired alerts, per user (the SSE stream of GET /alerts/events). */
export class AlertHub {
  private readonly listeners = new Map<string, Set<(a: FiredAlert) => void>>();

  subscribe(userId: string, fn: (a: FiredAlert) => void): () => void {
    let set = this.listeners.get(userId);
    if (!set) this.listeners.set(userId, (set = new Set()));
    set.add(fn);
    return () => {
      set!.delete(fn);
      if (!set!.size) this.listeners.delete(userId);
    };
  }

  publish(userId: string, a: FiredAlert): void {
    for (const fn of this.listeners.get(userId) ?? []) {
      try {
        fn(a);
      } catch {
        /* a closed listener */
      }
    }
  }
}
