/**
 * Webhooks: `video.ready`, `video.failed` and `video.removed` POSTed as JSON to the index's URL (or
 * the service's --webhook-url), signed with HMAC-SHA256 over the body with the user's secret.
 *
 * Events are written to an outbox table by SQLite triggers, inside the very transaction that
 * changes the video (whichever process commits it: server, analysis worker, CLI), so none is lost
 * and none is invented by a rollback. The triggers are made by a migration
 * (drizzle/0012_webhook_triggers.sql); a changed trigger is a new migration that drops and
 * recreates it. A dispatcher in the server delivers them in id order per
 * video, retrying with a doubling delay for a day; a delivery cut off by a crash is sent again
 * after the restart (at least once: receivers deduplicate by `delivery_id`).
 *
 * Scheduling differs by dialect, the delivery (payload, signature, address checks) does not:
 * SQLite polls the outbox (one server); PostgreSQL hands the events to pg-boss so that the API
 * nodes of a cluster deliver each once (pg-dispatch.ts).
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { PgBoss } from 'pg-boss';
import type { Config } from '../config';
import { badRequest } from '../errors';
import { checkHost, parseSourceUrl, pinnedFetch } from '../ingest/url-guard';
import type { IndexService } from '../indexes/service';
import type { Logger } from '../log';
import type { Catalog } from '../storage/catalog';
import {
  addWebhookSecret,
  dueWebhookEventIds,
  indexWebhookUrl,
  markWebhookDelivered,
  markWebhookFailed,
  putWebhookSecret,
  setDefaultWebhookUrl,
  setIndexWebhookUrl,
  webhookEvent,
  webhookSecretOf,
} from '../storage/repositories/webhooks';
import type { User, WebhookEvent } from '../storage/rows';
import { PgWebhookDispatch } from './pg-dispatch';
import { backoffMs, MAX_IN_FLIGHT, MAX_PER_TARGET, originOf, RETRY_FOR_MS } from './policy';

export { backoffMs, RETRY_FOR_MS } from './policy';

/** A receiver must answer within this. */
const DELIVERY_TIMEOUT_MS = 10_000;
/** Due events read per round, in turn order, to fill the free slots from. */
const CANDIDATES = 200;
export const SIGNATURE_HEADER = 'x-vidq-signature';

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

/** Every URL in a message, cut to its origin (no path, query or credentials). */
export function redactUrls(message: string): string {
  return message.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi, (u) => {
    try {
      const origin = new URL(u).origin;
      return origin === 'null' ? '<url>' : origin;
    } catch {
      return '<url>';
    }
  });
}

/** `sha256=<hex>` of the body with the secret: what the receiver recomputes to trust a delivery. */
export function signatureOf(secret: string, body: string): string {
  return 'sha256=' + createHmac('sha256', secret).update(body).digest('hex');
}

export class WebhookService {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private stopped = false;
  /** Aborts the deliveries in flight when the service stops (they stay pending: sent again after a restart). */
  private stopping = new AbortController();
  /** Deliveries in flight: event id → the receiver's origin. */
  private readonly inFlight = new Map<number, string>();
  private pending: Promise<void> = Promise.resolve();
  /** PostgreSQL: pg-boss schedules the deliveries (null on SQLite, and before start). */
  private pg: PgWebhookDispatch | null = null;

  constructor(
    private readonly d: {
      catalog: Catalog;
      config: Config;
      indexes: IndexService;
      log: Logger;
      /** PostgreSQL: the node's pg-boss (its analysis queue's); without it the deliveries open their own. */
      boss?: PgBoss;
      /** PostgreSQL: how often events a lost notice left behind are handed over (ms; tests). */
      sweepMs?: number;
    },
  ) {}

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
    const index = await this.d.indexes.resolve(user, indexRef, { byName: false });
    const url = rawUrl === null || rawUrl === '' ? null : await this.checkUrl(rawUrl);
    await setIndexWebhookUrl(this.d.catalog, index.id, url);
    const secret = await this.ensureSecret(user.id, rotate);
    return { index_id: index.id, url, ...(secret.created && { secret: secret.secret }) };
  }

  /** An index's webhook URL, or null. */
  indexWebhook(indexId: string): Promise<string | null> {
    return indexWebhookUrl(this.d.catalog, indexId);
  }

  /** The user's secret, made (or replaced, with `rotate`) when needed. */
  async ensureSecret(userId: string, rotate = false): Promise<{ secret: string; created: boolean }> {
    const found = await webhookSecretOf(this.d.catalog, userId);
    if (found !== undefined && !rotate) return { secret: found, created: false };
    const secret = randomBytes(32).toString('hex');
    if (rotate) await putWebhookSecret(this.d.catalog, userId, secret);
    // Another node may have made one meanwhile (its first delivery to this user): that one stays.
    else if (!(await addWebhookSecret(this.d.catalog, userId, secret)))
      return { secret: (await webhookSecretOf(this.d.catalog, userId)) ?? secret, created: false };
    return { secret, created: true };
  }

  /**
   * Starts delivering (the server calls this once): records the --webhook-url for the triggers,
   * then, on SQLite, polls the outbox every `pollMs`; on PostgreSQL, starts pg-boss's workers.
   */
  async start(pollMs = 1000): Promise<void> {
    const defaultUrl = this.d.config.webhookUrl || null;
    await setDefaultWebhookUrl(this.d.catalog, defaultUrl);
    this.stopped = false;
    this.stopping = new AbortController();
    if (this.d.catalog.dialect === 'postgres') {
      if (!this.d.config.database) throw new Error('webhooks on PostgreSQL need the database URL');
      const pg = new PgWebhookDispatch({
        catalog: this.d.catalog,
        url: this.d.config.database,
        ...(this.d.boss && { boss: this.d.boss }),
        retryMs: this.d.config.webhookRetryMs,
        deliver: (e) => this.send(e),
        stopped: () => this.stopped,
        log: this.d.log,
        ...(this.d.sweepMs && { sweepMs: this.d.sweepMs }),
      });
      this.pg = pg;
      await pg.start();
      return;
    }
    const tick = async () => {
      if (this.stopped) return;
      await this.deliverDue().catch((e) => this.d.log.error('webhook round failed', { reason: (e as Error).message }));
      if (!this.stopped) this.timer = setTimeout(tick, pollMs);
    };
    this.timer = setTimeout(tick, 0);
  }

  /**
   * Stops delivering (the deliveries in flight are cut off and stay pending). Resolves once they
   * have ended and, on PostgreSQL, pg-boss's workers have stopped: await it before closing the catalog.
   */
  stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    if (this.timer) clearTimeout(this.timer);
    const pg = this.pg;
    this.pg = null;
    if (pg)
      this.pending = Promise.all([
        this.pending,
        pg.close().catch((e) => this.d.log.warn('webhook queue not stopped cleanly', { reason: (e as Error).message })),
      ]).then(() => {});
    return this.settle();
  }

  /**
   * One round: starts deliveries of due events into the free slots, without waiting for them.
   * Each video's oldest pending event only (a later event of the same video waits for it: in order
   * per video). Due events are picked in SQL before the limit, in turns: each user's and each
   * target URL's first event before anyone's second, so one user with thousands of events (or a
   * dead receiver) delays another's by a round at most. Returns how many were started.
   */
  async deliverDue(): Promise<number> {
    const free = MAX_IN_FLIGHT - this.inFlight.size;
    if (free <= 0) return 0;
    const due = await dueWebhookEventIds(this.d.catalog, Date.now(), CANDIDATES + this.inFlight.size);
    const perTarget = new Map<string, number>();
    for (const t of this.inFlight.values()) perTarget.set(t, (perTarget.get(t) ?? 0) + 1);
    const started: Promise<void>[] = [];
    for (const { id } of due) {
      if (started.length >= free) break;
      if (this.inFlight.has(id)) continue;
      const e = await webhookEvent(this.d.catalog, id);
      // Another round may have started it while the row was read.
      if (e?.state !== 'pending' || this.inFlight.has(id)) continue;
      const target = originOf(e.url);
      if ((perTarget.get(target) ?? 0) >= MAX_PER_TARGET) continue;
      perTarget.set(target, (perTarget.get(target) ?? 0) + 1);
      this.inFlight.set(id, target);
      started.push(
        this.attempt(e)
          .catch((err) => this.d.log.error('webhook delivery failed', { reason: (err as Error).message }))
          .finally(() => this.inFlight.delete(id)),
      );
    }
    this.pending = Promise.all([this.pending, ...started]).then(() => {});
    return started.length;
  }

  /** Resolves when every delivery started so far has ended (tests, shutdown). */
  async settle(): Promise<void> {
    await this.pending;
  }

  /** SQLite: one attempt, and its outcome recorded on the row (the next attempt's time, or given up). */
  private async attempt(e: WebhookEvent): Promise<void> {
    const { catalog, config, log } = this.d;
    const attempts = e.attempts + 1;
    const failure = await this.send(e);
    // Stopped meanwhile (the database may be closed): the event stays pending for the next start.
    if (this.stopped) return;
    const at = new Date();
    if (failure === null) {
      await markWebhookDelivered(catalog, e.id, attempts, at);
      log.debug('webhook delivered', { delivery_id: e.id, event: e.event, attempts });
      return;
    }
    const next = at.getTime() + backoffMs(attempts, config.webhookRetryMs);
    const giveUp = next > e.createdAt.getTime() + RETRY_FOR_MS;
    await markWebhookFailed(catalog, e.id, {
      giveUp,
      attempts,
      lastError: failure.slice(0, 500),
      nextAttemptAt: new Date(next),
    });
    log.warn(giveUp ? 'webhook given up' : 'webhook failed; will retry', {
      delivery_id: e.id,
      event: e.event,
      attempts,
      reason: failure.slice(0, 200),
    });
  }

  /** POSTs the event, signed, to its URL (checked against the address policy): null when accepted, else why not. */
  private async send(e: WebhookEvent): Promise<string | null> {
    const { config } = this.d;
    const target = e.url;
    const body = payloadOf(e);
    const { secret } = await this.ensureSecret(e.userId);
    let failure: string | null = null;
    try {
      const url = new URL(target);
      const address = await checkHost(url, { allowPrivate: config.allowPrivateUrls });
      const res = await pinnedFetch(url, address, {
        method: 'POST',
        redirect: 'manual',
        signal: AbortSignal.any([AbortSignal.timeout(DELIVERY_TIMEOUT_MS), this.stopping.signal]),
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
      // Bun's messages name the whole URL (a TLS name mismatch: "fetching https://…?api_key=…"):
      // the receiver's query may carry its own secret, so only its origin goes to logs and last_error.
      failure = redactUrls((err as Error).message || 'network error');
    }
    return failure;
  }
}
