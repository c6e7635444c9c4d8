/**
 * Webhook rows: each index's URL, each user's signing secret, the --webhook-url the triggers read,
 * and the outbox the triggers fill (events waiting, delivered or given up). No access check here:
 * the webhook service resolved the user's index first.
 */
import { eq } from 'drizzle-orm';
import type { Db } from '../db';
import { indexWebhooks, type WebhookEvent, webhookEvents, webhookSecrets, webhookSettings } from '../schema';

/** Sets (or with null removes) an index's webhook URL. */
export function setIndexWebhookUrl(db: Db, indexId: string, url: string | null): void {
  if (url === null) db.delete(indexWebhooks).where(eq(indexWebhooks.indexId, indexId)).run();
  else
    db.insert(indexWebhooks)
      .values({ indexId, url, updatedAt: new Date() })
      .onConflictDoUpdate({ target: indexWebhooks.indexId, set: { url, updatedAt: new Date() } })
      .run();
}

export function indexWebhookUrl(db: Db, indexId: string): string | null {
  return (
    db.select({ url: indexWebhooks.url }).from(indexWebhooks).where(eq(indexWebhooks.indexId, indexId)).get()?.url ??
    null
  );
}

export function webhookSecretOf(db: Db, userId: string): string | undefined {
  return db.select().from(webhookSecrets).where(eq(webhookSecrets.userId, userId)).get()?.secret;
}

/** Stores the user's secret, replacing one there was. */
export function putWebhookSecret(db: Db, userId: string, secret: string): void {
  db.insert(webhookSecrets)
    .values({ userId, secret, createdAt: new Date() })
    .onConflictDoUpdate({ target: webhookSecrets.userId, set: { secret, createdAt: new Date() } })
    .run();
}

/** Records the --webhook-url (or null) where the triggers read it. */
export function setDefaultWebhookUrl(db: Db, defaultUrl: string | null): void {
  db.insert(webhookSettings)
    .values({ id: 1, defaultUrl })
    .onConflictDoUpdate({ target: webhookSettings.id, set: { defaultUrl } })
    .run();
}

/**
 * Ids of due events, at most `limit`, in turns: each video's oldest pending event only (in order
 * per video), and each user's and each target URL's first event before anyone's second.
 */
export function dueWebhookEventIds(db: Db, now: number, limit: number): { id: number }[] {
  return db.$client
    .query(
      `SELECT id FROM (
         SELECT e.id, e.url,
           ROW_NUMBER() OVER (PARTITION BY e.user_id ORDER BY e.id) AS user_turn,
           ROW_NUMBER() OVER (PARTITION BY e.url ORDER BY e.id) AS url_turn
         FROM webhook_events e
         WHERE e.state = 'pending' AND e.next_attempt_at <= ?
           AND NOT EXISTS (SELECT 1 FROM webhook_events p
                           WHERE p.video_id = e.video_id AND p.state = 'pending' AND p.id < e.id)
       )
       ORDER BY max(user_turn, url_turn), id
       LIMIT ?`,
    )
    .all(now, limit) as { id: number }[];
}

export function webhookEvent(db: Db, id: number): WebhookEvent | undefined {
  return db.select().from(webhookEvents).where(eq(webhookEvents.id, id)).get();
}

export function markWebhookDelivered(db: Db, id: number, attempts: number, at: Date): void {
  db.update(webhookEvents)
    .set({ state: 'delivered', attempts, deliveredAt: at, lastError: null })
    .where(eq(webhookEvents.id, id))
    .run();
}

/** A failed attempt: the event waits for `nextAttemptAt`, or with `giveUp` ends failed. */
export function markWebhookFailed(
  db: Db,
  id: number,
  r: { giveUp: boolean; attempts: number; lastError: string; nextAttemptAt: Date },
): void {
  db.update(webhookEvents)
    .set({
      state: r.giveUp ? 'failed' : 'pending',
      attempts: r.attempts,
      lastError: r.lastError,
      nextAttemptAt: r.nextAttemptAt,
    })
    .where(eq(webhookEvents.id, id))
    .run();
}
