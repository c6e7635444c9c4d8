/**
 * Webhook rows: each index's URL, each user's signing secret, the --webhook-url the triggers read,
 * and the outbox the triggers fill (events waiting, delivered or given up). No access check here:
 * the webhook service resolved the user's index first. Both dialects (catalog.ts).
 */
import { eq, inArray, sql } from 'drizzle-orm';
import { type Catalog, first } from '../catalog';
import type { WebhookEvent } from '../schema';

/** Sets (or with null removes) an index's webhook URL. */
export function setIndexWebhookUrl(c: Catalog, indexId: string, url: string | null): Promise<void> {
  const { indexWebhooks } = c.t;
  return c.run(async (db) => {
    if (url === null) await db.delete(indexWebhooks).where(eq(indexWebhooks.indexId, indexId));
    else
      await db
        .insert(indexWebhooks)
        .values({ indexId, url, updatedAt: new Date() })
        .onConflictDoUpdate({ target: indexWebhooks.indexId, set: { url, updatedAt: new Date() } });
  });
}

export function indexWebhookUrl(c: Catalog, indexId: string): Promise<string | null> {
  const { indexWebhooks } = c.t;
  return c.run(
    async (db) =>
      first(
        await db
          .select({ url: indexWebhooks.url })
          .from(indexWebhooks)
          .where(eq(indexWebhooks.indexId, indexId))
          .limit(1),
      )?.url ?? null,
  );
}

export function webhookSecretOf(c: Catalog, userId: string): Promise<string | undefined> {
  const { webhookSecrets } = c.t;
  return c.run(
    async (db) =>
      first(await db.select().from(webhookSecrets).where(eq(webhookSecrets.userId, userId)).limit(1))?.secret,
  );
}

/** Stores the user's secret, replacing one there was. */
export function putWebhookSecret(c: Catalog, userId: string, secret: string): Promise<void> {
  const { webhookSecrets } = c.t;
  return c.run(async (db) => {
    await db
      .insert(webhookSecrets)
      .values({ userId, secret, createdAt: new Date() })
      .onConflictDoUpdate({ target: webhookSecrets.userId, set: { secret, createdAt: new Date() } });
  });
}

/** Stores the user's secret unless they have one (two nodes making one at once keep the first). */
export function addWebhookSecret(c: Catalog, userId: string, secret: string): Promise<boolean> {
  const { webhookSecrets } = c.t;
  return c.run(
    async (db) =>
      (
        await db
          .insert(webhookSecrets)
          .values({ userId, secret, createdAt: new Date() })
          .onConflictDoNothing({ target: webhookSecrets.userId })
          .returning({ userId: webhookSecrets.userId })
      ).length > 0,
  );
}

/** Records the --webhook-url (or null) where the triggers read it. */
export function setDefaultWebhookUrl(c: Catalog, defaultUrl: string | null): Promise<void> {
  const { webhookSettings } = c.t;
  return c.run(async (db) => {
    await db
      .insert(webhookSettings)
      .values({ id: 1, defaultUrl })
      .onConflictDoUpdate({ target: webhookSettings.id, set: { defaultUrl } });
  });
}

/**
 * Ids of due events, at most `limit`, in turns: each video's oldest pending event only (in order
 * per video), and each user's and each target URL's first event before anyone's second.
 */
export async function dueWebhookEventIds(c: Catalog, now: number, limit: number): Promise<{ id: number }[]> {
  // SQLite keeps times as Unix ms and spells the larger of two values max(); PostgreSQL greatest().
  const sqlite = c.dialect === 'sqlite';
  const rows = await c.rows<{ id: number | string }>(sql`
    SELECT id FROM (
      SELECT e.id, e.url,
        ROW_NUMBER() OVER (PARTITION BY e.user_id ORDER BY e.id) AS user_turn,
        ROW_NUMBER() OVER (PARTITION BY e.url ORDER BY e.id) AS url_turn
      FROM webhook_events e
      WHERE e.state = 'pending' AND e.next_attempt_at <= ${sqlite ? now : new Date(now)}
        AND NOT EXISTS (SELECT 1 FROM webhook_events p
                        WHERE p.video_id = e.video_id AND p.state = 'pending' AND p.id < e.id)
    ) AS due
    ORDER BY ${sqlite ? sql`max(user_turn, url_turn)` : sql`greatest(user_turn, url_turn)`}, id
    LIMIT ${limit}`);
  return rows.map((r) => ({ id: Number(r.id) }));
}

export function webhookEvent(c: Catalog, id: number): Promise<WebhookEvent | undefined> {
  const { webhookEvents } = c.t;
  return c.run(async (db) => first(await db.select().from(webhookEvents).where(eq(webhookEvents.id, id)).limit(1)));
}

export function markWebhookDelivered(c: Catalog, id: number, attempts: number, at: Date): Promise<void> {
  const { webhookEvents } = c.t;
  return c.run(async (db) => {
    await db
      .update(webhookEvents)
      .set({ state: 'delivered', attempts, deliveredAt: at, lastError: null })
      .where(eq(webhookEvents.id, id));
  });
}

/** A failed attempt: the event waits for `nextAttemptAt`, or with `giveUp` ends failed. */
export function markWebhookFailed(
  c: Catalog,
  id: number,
  r: { giveUp: boolean; attempts: number; lastError: string; nextAttemptAt: Date },
): Promise<void> {
  const { webhookEvents } = c.t;
  return c.run(async (db) => {
    await db
      .update(webhookEvents)
      .set({
        state: r.giveUp ? 'failed' : 'pending',
        attempts: r.attempts,
        lastError: r.lastError,
        nextAttemptAt: r.nextAttemptAt,
      })
      .where(eq(webhookEvents.id, id));
  });
}

/** An outbox event ready to be handed to pg-boss (PostgreSQL), with what its job's turn is computed from. */
export interface WebhookEventToQueue {
  id: number;
  userId: string;
  videoId: string;
  url: string;
  nextAttemptAt: Date;
  /** The user's events handed over and not yet delivered or given up: the user's place in line. */
  queuedAhead: number;
}

/**
 * PostgreSQL, inside a transaction: locks (SKIP LOCKED: another node moving them skips them) the
 * pending events not yet handed to pg-boss that are the oldest pending event of their video, so a
 * video has at most one event in pg-boss at a time (in order per video), oldest first. The caller
 * sends their jobs and marks them queued in the same transaction. `videoId`: that video's only.
 */
export async function webhookEventsToQueue(
  tx: Catalog,
  limit: number,
  videoId?: string,
): Promise<WebhookEventToQueue[]> {
  const rows = await tx.rows<{
    id: number | string;
    user_id: string;
    video_id: string;
    url: string;
    next_attempt_at: Date | string;
    queued_ahead: number | string;
  }>(sql`
    SELECT e.id, e.user_id, e.video_id, e.url, e.next_attempt_at,
      (SELECT count(*) FROM webhook_events q
       WHERE q.user_id = e.user_id AND q.state = 'pending' AND q.queued_at IS NOT NULL) AS queued_ahead
    FROM webhook_events e
    WHERE e.state = 'pending' AND e.queued_at IS NULL
      ${videoId === undefined ? sql`` : sql`AND e.video_id = ${videoId}`}
      AND NOT EXISTS (SELECT 1 FROM webhook_events p
                      WHERE p.video_id = e.video_id AND p.state = 'pending' AND p.id < e.id)
    ORDER BY e.id
    LIMIT ${limit}
    FOR UPDATE OF e SKIP LOCKED`);
  return rows.map((r) => ({
    id: Number(r.id),
    userId: r.user_id,
    videoId: r.video_id,
    url: r.url,
    nextAttemptAt: new Date(r.next_attempt_at),
    queuedAhead: Number(r.queued_ahead),
  }));
}

/** Records that these events were handed to pg-boss (same transaction as their jobs). */
export function markWebhookEventsQueued(tx: Catalog, ids: number[], at: Date): Promise<void> {
  const { webhookEvents } = tx.t;
  return tx.run(async (db) => {
    if (ids.length) await db.update(webhookEvents).set({ queuedAt: at }).where(inArray(webhookEvents.id, ids));
  });
}
