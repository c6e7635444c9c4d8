/**
 * Webhook deliveries on PostgreSQL (issue 33): the outbox stays the transactional record (the
 * triggers write `webhook_events` in the transaction that changes a video, so a rollback sends
 * nothing), and pg-boss schedules the deliveries, so that several API nodes on one database deliver
 * each event once, with no node polling the outbox for work.
 *
 * - Hand-over: a node moves pending outbox rows not yet handed over into pg-boss jobs, in one
 *   transaction (rows locked with SKIP LOCKED, jobs sent through pg-boss's `db` option, rows marked
 *   `queued_at`): a row is handed over once, whichever node moves it. A node moves when a new row is
 *   committed (the outbox's trigger NOTIFYs `vidq_webhook_events`), at start, after its listening
 *   connection comes back, and every `sweepMs` (a safety net for a lost notice, not the way work
 *   is found).
 * - Order per video: only a video's oldest pending event is handed over; the transaction that ends
 *   it (delivered or given up) hands over the next. A video never has two jobs at once.
 * - Retries: a refused delivery fails its job; pg-boss retries it from `--webhook-retry-ms`
 *   (rounded to whole seconds, at least 1 s), doubling (with pg-boss's jitter of up to 2×), at most
 *   an hour apart. The attempt that would start more than a day after the event gives up instead:
 *   the row is marked failed and the job goes to the dead-letter queue with its reason. A job whose
 *   node died mid-delivery comes back after its heartbeat lapses (at least once: receivers
 *   deduplicate by `delivery_id`).
 * - Fairness: a receiver (origin) has at most MAX_PER_TARGET deliveries in flight per node, as on
 *   one server (so N nodes may send it N times as many); users take turns by priority (a user's
 *   k-th event waiting gets a lower priority), fixed when the event is handed over.
 */
import { PgBoss, type Job, type JobResult } from 'pg-boss';
import type { Logger } from '../log';
import type { Catalog } from '../storage/catalog';
import { listenChannel, type ChannelListener } from '../storage/listen';
import { queueStatementsIn } from '../storage/repositories/jobs';
import {
  markWebhookDelivered,
  markWebhookEventsQueued,
  markWebhookFailed,
  webhookEvent,
  webhookEventsToQueue,
} from '../storage/repositories/webhooks';
import type { WebhookEvent } from '../storage/rows';
import { backoffMs, MAX_IN_FLIGHT, MAX_PER_TARGET, originOf, RETRY_FOR_MS } from './policy';

export const WEBHOOK_QUEUE = 'vidq-webhooks';
export const WEBHOOK_DEAD_QUEUE = 'vidq-webhooks-dead';
/** The outbox's trigger NOTIFYs this channel on each new row (drizzle/pg/0005_webhook_notify.sql). */
export const WEBHOOK_CHANNEL = 'vidq_webhook_events';
/** pg-boss's schema, the analysis queue's (pg-boss-queue.ts). */
const SCHEMA = 'pgboss';
/** Rows moved per transaction. */
const MOVE_BATCH = 500;
/** Priorities: a user's k-th event waiting gets TURNS - k. */
const TURNS = 100_000;
/** Jobs a worker takes at once, delivered together; workers per node. */
const BATCH = 8;
const LOCAL_WORKERS = Math.max(1, Math.floor(MAX_IN_FLIGHT / BATCH));
/**
 * pg-boss's own limit on retries, above what the day allows (about 35 from 1 s): the day decides.
 * It is reached only by a job whose nodes keep dying mid-delivery; it then goes to the dead letter.
 */
const RETRY_LIMIT = 100;

interface Payload {
  eventId: number;
}

export interface PgDispatchDeps {
  catalog: Catalog;
  /** The PostgreSQL URL: the listening connection, and pg-boss when none is given. */
  url: string;
  /** The node's pg-boss (shared with its analysis queue); without it, one of its own is opened and closed. */
  boss?: PgBoss;
  /** The first retry delay (--webhook-retry-ms). */
  retryMs: number;
  /** One attempt: null when the receiver accepted it, else why not. */
  deliver: (e: WebhookEvent) => Promise<string | null>;
  /** The node is stopping: an attempt cut short is not counted. */
  stopped: () => boolean;
  log: Logger;
  /** How often rows a lost notice left behind are moved. @default 30000 */
  sweepMs?: number;
  /**
   * pg-boss's fetch interval, in seconds. A new job wakes the workers at once (NOTIFY); a retry
   * coming due, or a receiver's slot freed on another node, waits for this. @default 2
   */
  pollSec?: number;
}

export class PgWebhookDispatch {
  private boss: PgBoss | null = null;
  private ownBoss = false;
  private listener: ChannelListener | null = null;
  private sweep: ReturnType<typeof setInterval> | null = null;
  private moving: Promise<void> | null = null;
  private moveAgain = false;
  private closed = false;
  /** pg-boss's retry delay: whole seconds, at least one. */
  private readonly retrySec: number;

  constructor(private readonly d: PgDispatchDeps) {
    this.retrySec = Math.max(1, Math.round(d.retryMs / 1000));
  }

  async start(): Promise<void> {
    const { log } = this.d;
    if (this.d.boss) this.boss = this.d.boss;
    else {
      this.boss = new PgBoss({
        connectionString: this.d.url,
        schema: SCHEMA,
        max: 3,
        application_name: 'vidq-webhooks',
        useListenNotify: true,
        // How soon a dead node's lapsed jobs are seen (the analysis queue's, pg-boss-queue.ts).
        monitorIntervalSeconds: 5,
        superviseIntervalSeconds: 5,
      });
      this.boss.on('error', (e: Error) => log.warn('webhook queue', { reason: e.message }));
      this.ownBoss = true;
      await this.boss.start();
    }
    const boss = this.boss;
    await boss.createQueue(WEBHOOK_DEAD_QUEUE, { retentionSeconds: 30 * 86400, deleteAfterSeconds: 30 * 86400 });
    await boss.createQueue(WEBHOOK_QUEUE, {
      deadLetter: WEBHOOK_DEAD_QUEUE,
      retryLimit: RETRY_LIMIT,
      retryDelay: this.retrySec,
      retryBackoff: true,
      retryDelayMax: 3600,
      // A delivery takes at most DELIVERY_TIMEOUT_MS; a dead node's job comes back after this.
      heartbeatSeconds: 20,
      expireInSeconds: 120,
      retentionSeconds: 7 * 86400,
      deleteAfterSeconds: 7 * 86400,
      notify: true,
    });
    this.listener = await listenChannel(this.d.url, WEBHOOK_CHANNEL, {
      // A reconnect may have missed notices: the outbox is read again.
      onNotice: () => this.wake(),
      onReconnect: () => this.wake(),
      onError: (e) => log.warn('webhook notices: connection lost', { reason: e.message }),
    });
    await this.moveWaiting();
    this.sweep = setInterval(() => this.wake(), this.d.sweepMs ?? 30_000);
    this.sweep.unref?.();
    const pollSec = this.d.pollSec ?? 2;
    await boss.work<Payload>(
      WEBHOOK_QUEUE,
      {
        batchSize: BATCH,
        localConcurrency: LOCAL_WORKERS,
        // Per node, counted exactly in memory. pg-boss's cluster-wide `groupConcurrency` reads its
        // count without a lock: with several fetchers at once the test saw 10 in flight on two nodes.
        localGroupConcurrency: MAX_PER_TARGET,
        perJobResults: true,
        pollingIntervalSeconds: pollSec,
        notifyPollingIntervalSeconds: pollSec,
      },
      (jobs: Job<Payload>[]) => Promise.all(jobs.map((j) => this.handle(j))),
    );
    await boss.work<Payload>(WEBHOOK_DEAD_QUEUE, { batchSize: 20, pollingIntervalSeconds: 30 }, (jobs) =>
      this.bury(jobs),
    );
  }

  /** Moves what waits now, or once more after the move under way (notices come in bursts). */
  wake(): void {
    if (this.closed) return;
    if (this.moving) {
      this.moveAgain = true;
      return;
    }
    this.moving = this.moveWaiting()
      .then(() => {})
      .catch((e) => this.d.log.error('webhook events not handed to the queue', { reason: (e as Error).message }))
      .finally(() => {
        this.moving = null;
        if (this.moveAgain) {
          this.moveAgain = false;
          this.wake();
        }
      });
  }

  /** Hands every waiting event over (the oldest pending of each video), batch by batch. */
  async moveWaiting(): Promise<number> {
    let moved = 0;
    for (;;) {
      const n = await this.d.catalog.write((tx) => this.moveIn(tx));
      moved += n;
      if (n < MOVE_BATCH || this.closed) return moved;
    }
  }

  /** In `tx`: sends the jobs of the events waiting (of `videoId` only, when given) and marks them queued. */
  private async moveIn(tx: Catalog, videoId?: string): Promise<number> {
    const rows = await webhookEventsToQueue(tx, MOVE_BATCH, videoId);
    if (!rows.length || !this.boss) return 0;
    const turns = new Map<string, number>();
    await this.boss.insert(
      WEBHOOK_QUEUE,
      rows.map((r) => {
        const ahead = r.queuedAhead + (turns.get(r.userId) ?? 0);
        turns.set(r.userId, (turns.get(r.userId) ?? 0) + 1);
        return {
          data: { eventId: r.id } satisfies Payload,
          priority: TURNS - Math.min(ahead, TURNS - 1),
          group: { id: originOf(r.url) },
          // An event retried before the hand-over (an upgrade) keeps its wait.
          startAfter: r.nextAttemptAt,
          retryDelay: this.retrySec,
        };
      }),
      { db: queueStatementsIn(tx) },
    );
    await markWebhookEventsQueued(
      tx,
      rows.map((r) => r.id),
      new Date(),
    );
    return rows.length;
  }

  /** One job: one attempt at its event, and what pg-boss makes of it. */
  private async handle(job: Job<Payload>): Promise<JobResult> {
    try {
      return { id: job.id, ...(await this.attempt(job)) };
    } catch (e) {
      return { id: job.id, status: 'failed', output: { reason: (e as Error).message } };
    }
  }

  private async attempt(job: Job<Payload>): Promise<Omit<JobResult, 'id'>> {
    const { catalog, log } = this.d;
    const e = await webhookEvent(catalog, job.data.eventId);
    if (e?.state !== 'pending') {
      // Delivered by an attempt whose end was not recorded in pg-boss, or stopped (the index's URL
      // removed or changed, the index deleted): the video's next event goes on.
      if (e) await catalog.write((tx) => this.moveIn(tx, e.videoId));
      return { status: 'completed', output: { skipped: e?.state ?? 'the event is gone' } };
    }
    const attempts = e.attempts + 1;
    const failure = await this.d.deliver(e);
    // Stopping: the attempt is not counted; pg-boss hands the job out again.
    if (this.d.stopped()) return { status: 'failed', output: { reason: 'the node stopped during the delivery' } };
    const at = new Date();
    if (failure === null) {
      await catalog.write(async (tx) => {
        await markWebhookDelivered(tx, e.id, attempts, at);
        await this.moveIn(tx, e.videoId);
      });
      log.debug('webhook delivered', { delivery_id: e.id, event: e.event, attempts });
      return { status: 'completed', output: { attempts } };
    }
    const next = at.getTime() + backoffMs(attempts, this.retrySec * 1000);
    const giveUp = next > e.createdAt.getTime() + RETRY_FOR_MS;
    const lastError = failure.slice(0, 500);
    await catalog.write(async (tx) => {
      await markWebhookFailed(tx, e.id, { giveUp, attempts, lastError, nextAttemptAt: new Date(next) });
      if (giveUp) await this.moveIn(tx, e.videoId);
    });
    log.warn(giveUp ? 'webhook given up' : 'webhook failed; will retry', {
      delivery_id: e.id,
      event: e.event,
      attempts,
      reason: failure.slice(0, 200),
    });
    return { status: giveUp ? 'deadletter' : 'failed', output: { reason: lastError, attempts } };
  }

  /**
   * Dead jobs: given up after the day (the row is failed already), or out of pg-boss's retries
   * because their nodes kept dying: the row is failed with that reason and the video's next event goes on.
   */
  private async bury(jobs: Job<Payload>[]): Promise<void> {
    for (const job of jobs) {
      const e = await webhookEvent(this.d.catalog, job.data.eventId);
      if (e?.state !== 'pending') continue;
      await this.d.catalog.write(async (tx) => {
        await markWebhookFailed(tx, e.id, {
          giveUp: true,
          attempts: e.attempts,
          lastError: `the delivery was interrupted ${RETRY_LIMIT + 1} times (its node stopped or died each time)`,
          nextAttemptAt: e.nextAttemptAt,
        });
        await this.moveIn(tx, e.videoId);
      });
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.sweep) clearInterval(this.sweep);
    await this.listener?.close();
    await this.moving;
    const boss = this.boss;
    if (!boss) return;
    // The deliveries in flight end first (the service aborted them), so that their rows are recorded.
    if (this.ownBoss) await boss.stop({ graceful: true, close: true, timeout: 15_000 });
    else {
      await boss.offWork(WEBHOOK_QUEUE, { wait: true }).catch(() => {});
      await boss.offWork(WEBHOOK_DEAD_QUEUE, { wait: true }).catch(() => {});
    }
    this.boss = null;
  }
}
