/**
 * Standing questions of live streams (`live_alerts`), the events they fired (`live_alert_events`)
 * and the webhook outbox row of a fired alert. No access check here: the alert service resolved
 * the user's index or stream first.
 *
 * The records (insert, list, delete, what fired) are on the catalog (either dialect, catalog.ts).
 * What a live window does in its transaction (alertsWatching … queueAlertWebhook) is still on the
 * embedded SQLite database (`Db`), synchronous, inside the catalog's write of the window (which
 * also awaits the analysis stages' own writes, StageResult.apply, on the catalog).
 */
import { and, asc, desc, eq, inArray, isNull, or, sql } from 'drizzle-orm';
import type { Catalog } from '../catalog';
import type { Db } from '../db';
export { ALERT_KINDS } from '../schema';

import {
  liveAlertEvents,
  liveAlerts,
  people,
  personAppearances,
  webhookEvents,
  type LiveAlert,
  type LiveAlertEvent,
  type LiveStream,
} from '../schema';

export function insertAlert(c: Catalog, a: LiveAlert): Promise<void> {
  return c.run(async (db) => {
    await db.insert(c.t.liveAlerts).values(a);
  });
}

export function alertsOfUser(c: Catalog, userId: string, indexId?: string): Promise<LiveAlert[]> {
  const { liveAlerts } = c.t;
  return c.run((db) =>
    db
      .select()
      .from(liveAlerts)
      .where(
        indexId ? and(eq(liveAlerts.userId, userId), eq(liveAlerts.indexId, indexId)) : eq(liveAlerts.userId, userId),
      )
      .orderBy(asc(liveAlerts.createdAt)),
  );
}

/** Deletes the user's alert: whether there was one. */
export async function deleteAlertOf(c: Catalog, userId: string, alertId: string): Promise<boolean> {
  const { liveAlerts } = c.t;
  const gone = await c.run((db) =>
    db
      .delete(liveAlerts)
      .where(and(eq(liveAlerts.id, alertId), eq(liveAlerts.userId, userId)))
      .returning({ id: liveAlerts.id }),
  );
  return gone.length > 0;
}

/** The alerts that watch a stream: its own and its index's. */
export function alertsWatching(tx: Db, row: LiveStream): LiveAlert[] {
  return tx
    .select()
    .from(liveAlerts)
    .where(and(eq(liveAlerts.indexId, row.indexId), or(isNull(liveAlerts.streamId), eq(liveAlerts.streamId, row.id))))
    .all();
}

/** An alert's newest event on a stream (the episode a new match may continue). */
export function lastAlertEvent(tx: Db, alertId: string, streamId: string): LiveAlertEvent | undefined {
  return tx
    .select()
    .from(liveAlertEvents)
    .where(and(eq(liveAlertEvents.alertId, alertId), eq(liveAlertEvents.streamId, streamId)))
    .orderBy(desc(liveAlertEvents.lastT))
    .get();
}

export function extendAlertEvent(tx: Db, eventId: number, lastT: number): void {
  tx.update(liveAlertEvents).set({ lastT }).where(eq(liveAlertEvents.id, eventId)).run();
}

/** A new event: its id, or undefined when the same one was recorded already. */
export function insertAlertEvent(
  tx: Db,
  e: { alertId: string; streamId: string; t: number; lastT: number; frame: string | null; evidence: string },
): number | undefined {
  return tx
    .insert(liveAlertEvents)
    .values({ ...e, createdAt: new Date() })
    .onConflictDoNothing()
    .returning({ id: liveAlertEvents.id })
    .get()?.id;
}

/** The user's fired events (newest first), optionally of one alert, with their alert and stream. */
export function firedEventsOfUser(
  c: Catalog,
  userId: string,
  alertId: string | undefined,
  limit: number,
): Promise<{ e: LiveAlertEvent; a: LiveAlert; s: LiveStream }[]> {
  const { liveAlertEvents, liveAlerts, liveStreams } = c.t;
  return c.run((db) =>
    db
      .select({ e: liveAlertEvents, a: liveAlerts, s: liveStreams })
      .from(liveAlertEvents)
      .innerJoin(liveAlerts, eq(liveAlerts.id, liveAlertEvents.alertId))
      .innerJoin(liveStreams, eq(liveStreams.id, liveAlertEvents.streamId))
      .where(alertId ? and(eq(liveAlerts.userId, userId), eq(liveAlerts.id, alertId)) : eq(liveAlerts.userId, userId))
      .orderBy(desc(liveAlertEvents.id))
      .limit(limit),
  );
}

/** The person each face segment was grouped into (for alerts on a named person). */
export function peopleOfFaceSegments(
  tx: Db,
  segmentIds: number[],
): Map<number, { personId: string; name: string | null }> {
  if (!segmentIds.length) return new Map();
  return new Map(
    tx
      .select({ segmentId: personAppearances.segmentId, personId: people.id, name: people.name })
      .from(personAppearances)
      .innerJoin(people, eq(people.id, personAppearances.personId))
      .where(inArray(personAppearances.segmentId, segmentIds))
      .all()
      .map((r) => [r.segmentId, { personId: r.personId, name: r.name }]),
  );
}

/** Queues the signed webhook of a fired alert when the index or the server has a webhook URL. */
export function queueAlertWebhook(tx: Db, row: LiveStream, data: unknown): void {
  const url = tx.get<{ url: string | null }>(
    sql`SELECT COALESCE((SELECT url FROM index_webhooks WHERE index_id = ${row.indexId}), (SELECT default_url FROM webhook_settings WHERE id = 1)) AS url`,
  );
  if (!url?.url) return;
  const now = new Date();
  tx.insert(webhookEvents)
    .values({
      userId: row.userId,
      indexId: row.indexId,
      videoId: row.videoId,
      event: 'alert.fired',
      fileName: row.name,
      status: 'fired',
      url: url.url,
      createdAt: now,
      nextAttemptAt: now,
      data: JSON.stringify(data),
    })
    .run();
}
