/**
 * Standing questions of live streams (`live_alerts`), the events they fired (`live_alert_events`)
 * and the webhook outbox row of a fired alert. No access check here: the alert service resolved
 * the user's index or stream first.
 * All on the catalog (either dialect, catalog.ts); what a live window does is given the window's
 * write transaction (`tx`).
 */
import { and, asc, desc, eq, inArray, isNull, or, sql } from 'drizzle-orm';
import { type Catalog, first } from '../catalog';
export { ALERT_KINDS } from '../schema';

import type { LiveAlert, LiveAlertEvent, LiveStream } from '../schema';

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
export function alertsWatching(tx: Catalog, row: LiveStream): Promise<LiveAlert[]> {
  const { liveAlerts } = tx.t;
  return tx.run((db) =>
    db
      .select()
      .from(liveAlerts)
      .where(
        and(eq(liveAlerts.indexId, row.indexId), or(isNull(liveAlerts.streamId), eq(liveAlerts.streamId, row.id))),
      ),
  );
}

/** An alert's newest event on a stream (the episode a new match may continue). */
export function lastAlertEvent(tx: Catalog, alertId: string, streamId: string): Promise<LiveAlertEvent | undefined> {
  const { liveAlertEvents } = tx.t;
  return tx.run(async (db) =>
    first(
      await db
        .select()
        .from(liveAlertEvents)
        .where(and(eq(liveAlertEvents.alertId, alertId), eq(liveAlertEvents.streamId, streamId)))
        .orderBy(desc(liveAlertEvents.lastT))
        .limit(1),
    ),
  );
}

export function extendAlertEvent(tx: Catalog, eventId: number, lastT: number): Promise<void> {
  const { liveAlertEvents } = tx.t;
  return tx.run(async (db) => {
    await db.update(liveAlertEvents).set({ lastT }).where(eq(liveAlertEvents.id, eventId));
  });
}

/** A new event: its id, or undefined when the same one was recorded already. */
export async function insertAlertEvent(
  tx: Catalog,
  e: { alertId: string; streamId: string; t: number; lastT: number; frame: string | null; evidence: string },
): Promise<number | undefined> {
  const { liveAlertEvents } = tx.t;
  const rows = await tx.run((db) =>
    db
      .insert(liveAlertEvents)
      .values({ ...e, createdAt: new Date() })
      .onConflictDoNothing()
      .returning({ id: liveAlertEvents.id }),
  );
  return rows[0]?.id;
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
export async function peopleOfFaceSegments(
  tx: Catalog,
  segmentIds: number[],
): Promise<Map<number, { personId: string; name: string | null }>> {
  if (!segmentIds.length) return new Map();
  const { personAppearances, people } = tx.t;
  const rows = await tx.run((db) =>
    db
      .select({ segmentId: personAppearances.segmentId, personId: people.id, name: people.name })
      .from(personAppearances)
      .innerJoin(people, eq(people.id, personAppearances.personId))
      .where(inArray(personAppearances.segmentId, segmentIds)),
  );
  return new Map(rows.map((r) => [r.segmentId, { personId: r.personId, name: r.name }]));
}

/** Queues the signed webhook of a fired alert when the index or the server has a webhook URL. */
export async function queueAlertWebhook(tx: Catalog, row: LiveStream, data: unknown): Promise<void> {
  const url = first(
    await tx.rows<{ url: string | null }>(
      sql`SELECT COALESCE((SELECT url FROM index_webhooks WHERE index_id = ${row.indexId}), (SELECT default_url FROM webhook_settings WHERE id = 1)) AS url`,
    ),
  );
  const to = url?.url;
  if (!to) return;
  const now = new Date();
  await tx.run(async (db) => {
    await db.insert(tx.t.webhookEvents).values({
      userId: row.userId,
      indexId: row.indexId,
      videoId: row.videoId,
      event: 'alert.fired',
      fileName: row.name,
      status: 'fired',
      url: to,
      createdAt: now,
      nextAttemptAt: now,
      data: JSON.stringify(data),
    });
  });
}
