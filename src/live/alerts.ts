/**
 * Standing questions (alerts) of live streams: their records (create, list, delete, what fired),
 * their evaluation on each analysed window (which new segments match, an episode within the
 * cooldown being one event, the webhook outbox), and the server-sent-event hub that hands fired
 * alerts to listeners as they happen.
 */
import type { NewSegment } from '../analysis/contracts';
import type { SampledFrame } from '../analysis/frame-stream';
import { badRequest, notFound } from '../errors';
import { randomId } from '../ids';
import type { IndexService } from '../indexes/service';
import {
  ALERT_KINDS,
  alertsOfUser,
  alertsWatching,
  deleteAlertOf,
  extendAlertEvent,
  firedEventsOfUser,
  insertAlert,
  insertAlertEvent,
  lastAlertEvent,
  peopleOfFaceSegments,
  queueAlertWebhook,
} from '../storage/repositories/alerts';
import type { Catalog } from '../storage/catalog';
import { findStream } from '../storage/repositories/streams';
import type { AlertKind, LiveAlert, LiveStream, User } from '../storage/rows';

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

export interface AlertView {
  alert_id: string;
  index_id: string;
  stream_id: string | null;
  kind: AlertKind;
  query: string;
  count: number;
  colour: string | null;
  person: string | null;
  cooldown_sec: number;
  created_at: string;
}

/** The records of alerts and what they fired (the routes' side); the evaluation is evaluateAlerts. */
export class AlertService {
  readonly hub = new AlertHub();

  constructor(private readonly d: { catalog: Catalog; indexes: IndexService }) {}

  async create(
    user: User,
    body: {
      index: string;
      stream_id?: string;
      kind: string;
      query: string;
      count?: number;
      colour?: string;
      person?: string;
      cooldown_sec?: number;
    },
  ): Promise<AlertView> {
    const index = await this.d.indexes.resolve(user, body.index, { byName: true });
    if (!(ALERT_KINDS as readonly string[]).includes(body.kind))
      throw badRequest(`kind must be one of ${ALERT_KINDS.join(', ')}`);
    const query = (body.query ?? '').trim();
    if (!query || query.length > 300) throw badRequest('query must be 1 to 300 characters');
    if (body.stream_id !== undefined) {
      const s =
        typeof body.stream_id === 'string' && body.stream_id.length <= 100
          ? await findStream(this.d.catalog, body.stream_id)
          : undefined;
      if (!s || s.userId !== user.id || s.indexId !== index.id)
        throw notFound('no such stream in this index (stream_id)');
    }
    const count = body.count ?? 1;
    if (!(Number.isInteger(count) && count >= 1 && count <= 1000))
      throw badRequest('count must be a whole number from 1');
    const cooldown = body.cooldown_sec ?? 30;
    if (!(Number.isInteger(cooldown) && cooldown >= 0 && cooldown <= 86400))
      throw badRequest('cooldown_sec must be a whole number of seconds from 0 to 86400');
    const row: LiveAlert = {
      id: `al_${randomId(24)}`,
      userId: user.id,
      indexId: index.id,
      streamId: body.stream_id ?? null,
      kind: body.kind as AlertKind,
      query,
      minCount: count,
      colour: body.colour?.trim() || null,
      person: body.person?.trim() || null,
      cooldownSec: cooldown,
      createdAt: new Date(),
    };
    await insertAlert(this.d.catalog, row);
    return alertView(row);
  }

  async list(user: User, indexId?: string): Promise<AlertView[]> {
    return (await alertsOfUser(this.d.catalog, user.id, indexId)).map(alertView);
  }

  async delete(user: User, alertId: string): Promise<void> {
    if (!(await deleteAlertOf(this.d.catalog, user.id, alertId))) throw notFound('no such alert (alert_id)');
  }

  /** Fired alerts of the user (newest first), optionally of one alert. */
  async fired(user: User, alertId?: string, limit = 100): Promise<FiredAlert[]> {
    return (await firedEventsOfUser(this.d.catalog, user.id, alertId, limit)).map(({ e, a, s }) =>
      firedOf(e.id, a, s, e.t, e.evidence, e.frame),
    );
  }
}

/**
 * The alerts of a stream checked on a window, in the window's transaction: a match within an
 * alert's cooldown of the last one is the same event (its end moves on). `stored`: the row id of
 * each found segment (faces name their person through it). Returns the alerts that fired.
 */
export async function evaluateAlerts(
  tx: Catalog,
  row: LiveStream,
  found: NewSegment[],
  stored: Map<NewSegment, number>,
  sampled: SampledFrame[],
): Promise<FiredAlert[]> {
  if (!found.length) return [];
  const alerts = await alertsWatching(tx, row);
  if (!alerts.length) return [];
  const segs = await withPeople(tx, found, stored);
  const out: FiredAlert[] = [];
  for (const alert of alerts) {
    const m = matchAlert(alert, segs);
    if (!m) continue;
    const lastT = Math.max(m.segment.end, m.t);
    const prev = await lastAlertEvent(tx, alert.id, row.id);
    if (prev && m.t <= prev.lastT + alert.cooldownSec) {
      if (lastT > prev.lastT) await extendAlertEvent(tx, prev.id, lastT);
      continue;
    }
    const frame = nearestFrame(sampled, Number(m.segment.extra?.best_t ?? m.t));
    const id = await insertAlertEvent(tx, {
      alertId: alert.id,
      streamId: row.id,
      t: m.t,
      lastT,
      frame,
      evidence: m.evidence,
    });
    if (id === undefined) continue;
    const fired = firedOf(id, alert, row, m.t, m.evidence, frame);
    out.push(fired);
    await queueAlertWebhook(tx, row, fired);
  }
  return out;
}

/** The window's faces with the person each was grouped into (for alerts on a named person). */
async function withPeople(tx: Catalog, found: NewSegment[], stored: Map<NewSegment, number>): Promise<NewSegment[]> {
  const faceIds = found.filter((s) => s.kind === 'face').map((s) => stored.get(s)!);
  if (!faceIds.length) return found;
  const who = await peopleOfFaceSegments(tx, faceIds);
  return found.map((s) => {
    const p = s.kind === 'face' ? who.get(stored.get(s)!) : undefined;
    if (!p) return s;
    const { descriptor: _, ...extra } = s.extra ?? {};
    return { ...s, extra: { ...extra, person_id: p.personId, ...(p.name && { person_name: p.name }) } };
  });
}

function nearestFrame(sampled: SampledFrame[], t: number): string | null {
  let best: SampledFrame | null = null;
  for (const f of sampled) if (!best || Math.abs(f.t - t) < Math.abs(best.t - t)) best = f;
  return best?.file ?? null;
}

function firedOf(
  eventId: number,
  a: LiveAlert,
  s: LiveStream,
  t: number,
  evidence: string,
  frame: string | null,
): FiredAlert {
  return {
    event_id: eventId,
    alert_id: a.id,
    stream_id: s.id,
    index_id: s.indexId,
    file_id: s.videoId,
    kind: a.kind,
    query: a.query,
    time: Math.round(t * 100) / 100,
    at: new Date((s.originMs ?? 0) + t * 1000).toISOString(),
    evidence,
    frame_path: frame ? `/media/${s.videoId}/frames/${frame}` : null,
  };
}

function alertView(a: LiveAlert): AlertView {
  return {
    alert_id: a.id,
    index_id: a.indexId,
    stream_id: a.streamId,
    kind: a.kind,
    query: a.query,
    count: a.minCount,
    colour: a.colour,
    person: a.person,
    cooldown_sec: a.cooldownSec,
    created_at: a.createdAt.toISOString(),
  };
}
