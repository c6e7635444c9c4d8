/**
 * Webhooks: `video.ready`, `video.failed` and `video.removed` POSTed as JSON to the index's URL (or
 * the service's --webhook-url), signed with HMAC-SHA256 over the body with the user's secret.
 *
 * Events are written to an outbox table by SQLite triggers, inside the very transaction that
 * changes the video (whichever process commits it: server, analysis worker, CLI), so none is lost
 * and none is invented by a rollback. A dispatcher in the server delivers them in id order per
 * video, retrying with a doubling delay for a day; a delivery cut off by a crash is sent again
 * after the restart (at least once: receivers deduplicate by `delivery_id`).
 */
import { createHmac, randomBytes } from 'node:crypto';
import { and, asc, eq, inArray, lte, sql } from 'drizzle-orm';
import type { Config } from '../config';
import { badRequest } from '../errors';
import { checkHost, parseSourceUrl, pinnedFetch } from '../ingest/url-guard';
import type { IndexService } from '../indexes/service';
import type { Logger } from '../log';
import type { Db } from '../storage/db';
import {
  indexWebhooks,
  webhookEvents,
  webhookSecrets,
  webhookSettings,
  type User,
  type WebhookEvent,
} from '../storage/schema';

/** Deliveries are retried for this long after the event, then given up (state failed). */
export const RETRY_FOR_MS = 24 * 3600 * 1000;
/** The longest wait between two attempts. */
const MAX_BACKOFF_MS = 3600 * 1000;
/** A receiver must answer within this. */
const DELIVERY_TIMEOUT_MS = 10_000;
/** Events delivered per round (each video's oldest pending one). */
const BATCH = 20;
export const SIGNATURE_HEADER = 'x-vidq-signature';

/**
 * The outbox triggers. Created at start-up (IF NOT EXISTS) rather than in a generated migration,
 * so regenerating migrations cannot drop them. An event is recorded only when someone listens (the
 * index's URL, else the server's --webhook-url from webhook_settings), and a removal only for a
 * stored video (an upload that failed before storing its file was never announced).
 */
export function ensureWebhookTriggers(db: Db): void {
  const url = (ref: string) =>
    `COALESCE((SELECT url FROM index_webhooks WHERE index_id = ${ref}.index_id), (SELECT default_url FROM webhook_settings WHERE id = 1))`;
  const ms = "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)";
  db.$client.exec(`
    CREATE TRIGGER IF NOT EXISTS webhook_video_status AFTER UPDATE OF status ON videos
    WHEN NEW.status IN ('ready', 'failed') AND OLD.status IS NOT NEW.status AND ${url('NEW')} IS NOT NULL
    BEGIN
      INSERT INTO webhook_events (user_id, index_id, video_id, event, file_name, status, error, url, created_at, next_attempt_at)
      VALUES (NEW.user_id, NEW.index_id, NEW.id, 'video.' || NEW.status, NEW.file_name, NEW.status, NEW.error, ${url('NEW')}, ${ms}, ${ms});
    END;
    CREATE TRIGGER IF NOT EXISTS webhook_video_removed AFTER DELETE ON videos
    WHEN OLD.storage_path IS NOT NULL AND ${url('OLD')} IS NOT NULL
    BEGIN
      INSERT INTO webhook_events (user_id, index_id, video_id, event, file_name, status, error, url, created_at, next_attempt_at)
      VALUES (OLD.user_id, OLD.index_id, OLD.id, 'video.removed', OLD.file_name, 'removed', NULL, ${url('OLD')}, ${ms}, ${ms});
    END;
  `);
}

/** The JSON body of a delivery. */
export function payloadOf(e: WebhookEvent): string {
  return JSON.stringify({
    type: e.event,
    delivery_id: e.id,
    created: e.createdAt.toISOString(),
    index_id: e.indexId,
    video_id: e.videoId,
    file_id: e.videoId,
    file_name: e.fileName,
    status: e.status,
    error: e.error,
    ...(e.data && { alert: JSON.parse(e.data) as unknown }),
  });
}

/** `sha256=<hex>` of the body with the secret: what the receiver recomputes to trust a delivery. */
export function signatureOf(secret: string, body: string): string {
  return 'sha256=' + createHmac('sha256', secret).update(body).digest('hex');
}

/** Wait before attempt n+1 (n ≥ 1 attempts made): base, 2·base, 4·base… at most an hour. */
export function backoffMs(attempts: number, baseMs: number): number {
  return Math.min(MAX_BACKOFF_MS, baseMs * 2 ** Math.max(0, attempts - 1));
}

export class WebhookService {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private running = false;
  private stopped = false;

  constructor(private readonly d: { db: Db; config: Config; indexes: IndexService; log: Logger }) {}

  /** Checks a webhook URL like a download URL: shape, then the private-address policy (400/403). */
  async checkUrl(raw: string): Promise<string> {
    if (raw.length > 2048) throw badRequest('url is longer than 2048 characters');
    let url: URL;
    try {
      url = parseSourceUrl(raw);
    } catch (e) {
      throw badRequest(`webhook ${(e as Error).message}`);
    }
    await checkHost(url, { allowPrivate: this.d.config.allowPrivateUrls });
    return url.toString();
  }

  /**
   * Sets (or with null clears) an index's webhook URL. Returns the user's signing secret when it
   * was created (or rotated) by this call: the only time it is shown.
   */
  async setIndexWebhook(
    user: User,
    indexRef: string,
    rawUrl: string | null,
    rotate = false,
  ): Promise<{ index_id: string; url: string | null; secret?: string }> {
    const index = this.d.indexes.resolve(user, indexRef, { byName: false });
    const url = rawUrl === null || rawUrl === '' ? null : await this.checkUrl(rawUrl);
    const { db } = this.d;
    if (url === null) db.delete(indexWebhooks).where(eq(indexWebhooks.indexId, index.id)).run();
    else
      db.insert(indexWebhooks)
        .values({ indexId: index.id, url, updatedAt: new Date() })
        .onConflictDoUpdate({ target: indexWebhooks.indexId, set: { url, updatedAt: new Date() } })
        .run();
    const secret = this.ensureSecret(user.id, rotate);
    return { index_id: index.id, url, ...(secret.created && { secret: secret.secret }) };
  }

  /** An index's webhook URL, or null. */
  indexWebhook(indexId: string): string | null {
    return (
      this.d.db.select({ url: indexWebhooks.url }).from(indexWebhooks).where(eq(indexWebhooks.indexId, indexId)).get()
        ?.url ?? null
    );
  }

  /** The user's secret, made (or replaced, with `rotate`) when needed. */
  ensureSecret(userId: string, rotate = false): { secret: string; created: boolean } {
    const { db } = this.d;
    const found = db.select().from(webhookSecrets).where(eq(webhookSecrets.userId, userId)).get();
    if (found && !rotate) return { secret: found.secret, created: false };
    const secret = randomBytes(32).toString('hex');
    db.insert(webhookSecrets)
      .values({ userId, secret, createdAt: new Date() })
      .onConflictDoUpdate({ target: webhookSecrets.userId, set: { secret, createdAt: new Date() } })
      .run();
    return { secret, created: true };
  }

  /**
   * Starts delivering (the server calls this once): records the --webhook-url for the triggers,
   * then polls the outbox every `pollMs`.
   */
  start(pollMs = 1000): void {
    const defaultUrl = this.d.config.webhookUrl || null;
    this.d.db
      .insert(webhookSettings)
      .values({ id: 1, defaultUrl })
      .onConflictDoUpdate({ target: webhookSettings.id, set: { defaultUrl } })
      .run();
    this.stopped = false;
    const tick = async () => {
      if (this.stopped) return;
      await this.deliverDue().catch((e) => this.d.log.error('webhook round failed', { reason: (e as Error).message }));
      if (!this.stopped) this.timer = setTimeout(tick, pollMs);
    };
    this.timer = setTimeout(tick, 0);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  /**
   * One round: each video's oldest pending event, when due, is attempted (a later event of the
   * same video waits for it: in order per video). Returns how many were attempted.
   */
  async deliverDue(): Promise<number> {
    if (this.running) return 0;
    this.running = true;
    try {
      const { db } = this.d;
      const heads = db
        .select({ id: sql<number>`min(${webhookEvents.id})` })
        .from(webhookEvents)
        .where(eq(webhookEvents.state, 'pending'))
        .groupBy(webhookEvents.videoId)
        .all()
        .map((r) => r.id);
      if (heads.length === 0) return 0;
      const due = db
        .select()
        .from(webhookEvents)
        .where(and(inArray(webhookEvents.id, heads.slice(0, 500)), lte(webhookEvents.nextAttemptAt, new Date())))
        .orderBy(asc(webhookEvents.id))
        .limit(BATCH)
        .all();
      await Promise.all(due.map((e) => this.attempt(e)));
      return due.length;
    } finally {
      this.running = false;
    }
  }

  private async attempt(e: WebhookEvent): Promise<void> {
    const { db, config, log } = this.d;
    const target = e.url;
    const body = payloadOf(e);
    const secret = this.ensureSecret(e.userId).secret;
    const attempts = e.attempts + 1;
    let failure: string | null = null;
    try {
      const url = new URL(target);
      const address = await checkHost(url, { allowPrivate: config.allowPrivateUrls });
      const res = await pinnedFetch(url, address, {
        method: 'POST',
        redirect: 'manual',
        signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
        headers: {
          'content-type': 'application/json',
          'user-agent': 'vidq-webhook/0.1',
          'x-vidq-event': e.event,
          'x-vidq-delivery': String(e.id),
          [SIGNATURE_HEADER]: signatureOf(secret, body),
        },
        body,
      });
      await res.body?.cancel().catch(() => {});
      if (res.status < 200 || res.status >= 300) failure = `the receiver answered HTTP ${res.status}`;
    } catch (err) {
      failure = (err as Error).message || 'network error';
    }
    const at = new Date();
    if (failure === null) {
      db.update(webhookEvents)
        .set({ state: 'delivered', attempts, deliveredAt: at, lastError: null })
        .where(eq(webhookEvents.id, e.id))
        .run();
      log.debug('webhook delivered', { delivery_id: e.id, event: e.event, attempts });
      return;
    }
    const next = at.getTime() + backoffMs(attempts, config.webhookRetryMs);
    const giveUp = next > e.createdAt.getTime() + RETRY_FOR_MS;
    db.update(webhookEvents)
      .set({
        state: giveUp ? 'failed' : 'pending',
        attempts,
        lastError: failure.slice(0, 500),
        nextAttemptAt: new Date(next),
      })
      .where(eq(webhookEvents.id, e.id))
      .run();
    log.warn(giveUp ? 'webhook given up' : 'webhook failed; will retry', {
      delivery_id: e.id,
      event: e.event,
      attempts,
      reason: failure.slice(0, 200),
    });
  }
}
