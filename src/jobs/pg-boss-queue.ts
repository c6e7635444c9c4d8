/**
 * The analysis queue on PostgreSQL (issue 33): pg-boss hands out the work; the `jobs` rows stay each
 * video's visible status (stage, progress, ETA for /status and the resources). No polling of a
 * table of ours: claiming is pg-boss's fetch (SKIP LOCKED), and pg-boss gives the rest:
 * - leases: a claimed job carries a heartbeat (touched every `heartbeatSec / 2` while its slot holds
 *   it); a worker killed with -9 or cut off stops touching it, and pg-boss's monitor (every
 *   `monitorSec`) puts it back after `heartbeatSec`: another worker resumes it at its stage;
 * - retries with back-off (`retryDelaySec`, doubling, at most a minute), `retryLimit` of them;
 * - dead jobs: a job out of retries fails in pg-boss with its reason and is copied to the dead
 *   letter queue; the next claim marks its video failed with a reason a user can read;
 * - priorities, computed when the job is sent (see `priorityOf`), and a per-user cap across every
 *   worker (pg-boss groups, one per user, with `groupConcurrency`).
 * Sending is part of the caller's transaction (pg-boss's `db` option over the catalog's
 * transaction): a video is stored and queued in one commit.
 *
 * Exactly once: every write of a worker is conditional on the job row naming that worker's slot
 * (repositories/jobs.ts), a retry's claim renames it, and the completing transaction also completes
 * pg-boss's job fenced to the attempt the slot fetched; when that attempt is no longer the live one
 * the transaction rolls back. A stage's output replaces what an earlier attempt of that stage
 * stored (analysis/pipeline.ts), so a retry neither loses nor duplicates segments.
 */
import { PgBoss } from 'pg-boss';
import type { Logger } from '../log';
import type { Catalog } from '../storage/catalog';
import {
  failJob,
  finishJob,
  insertQueuedJob,
  jobOf,
  markClaimed,
  queueReanalysis,
  queueStatementsIn,
  requeueJob,
  runningJobsOf,
  sendFacts,
} from '../storage/repositories/jobs';
import type { Job } from '../storage/rows';
import { type ClaimRules, FIRST_STAGE, JobRows, type JobQueue, type ReanalyzeOutcome, SHORT_FIRST_SEC } from './queue';

/** pg-boss's queue of analyses, and where its dead jobs are copied. */
export const ANALYSIS_QUEUE = 'vidq-analysis';
export const DEAD_QUEUE = 'vidq-analysis-dead';
/** pg-boss's tables live in a schema of their own. */
const SCHEMA = 'pgboss';

/** Priorities: every short video is in a band above the long ones (the short lane fetches that band). */
export const SHORT_BAND = 1_000_000;
const TURNS = 100_000;

/**
 * A job's priority when it is sent (pg-boss fetches the highest first, then the oldest):
 * - a short video (at most `shortSec`) is in the short band, above every long one: a clip is never
 *   stuck behind hour-long videos, and the short lane takes only that band;
 * - within a band, users take turns: the k-th video a user has waiting gets TURNS - k, so a
 *   user's backlog interleaves with the other users' first videos instead of going before them.
 */
export function priorityOf(short: boolean, waitingAhead: number): number {
  return (short ? SHORT_BAND : 0) + TURNS - Math.min(waitingAhead, TURNS - 1);
}

export interface PgBossQueueOptions {
  /** Seconds without a heartbeat before a claimed job goes back to the queue (pg-boss: at least 10). */
  heartbeatSec?: number;
  /** How often pg-boss's monitor looks for lapsed jobs, in seconds. */
  monitorSec?: number;
  /** Retries of a job whose worker died, before it is dead. */
  retryLimit?: number;
  /** First delay before a retry, in seconds (doubling after each). */
  retryDelaySec?: number;
  /** Videos at most this long are in the short band (--short-lane-sec, at least 120 s). */
  shortSec?: number;
  log?: Logger;
}

interface Held {
  attempt: { id: string; retryCount: number };
  workerId: string;
  touch: ReturnType<typeof setInterval>;
}

/** Starts pg-boss on `url` (installing or migrating its schema) and makes the queues. */
export async function openPgBossQueue(url: string, c: Catalog, opts: PgBossQueueOptions = {}): Promise<PgBossJobQueue> {
  const heartbeatSec = Math.max(10, opts.heartbeatSec ?? 10);
  const monitorSec = Math.max(1, opts.monitorSec ?? 5);
  const boss = new PgBoss({
    connectionString: url,
    schema: SCHEMA,
    max: 4,
    application_name: 'vidq-queue',
    // The node's webhook deliveries are jobs of this pg-boss too (webhooks/pg-dispatch.ts): a new
    // one wakes its workers at once.
    useListenNotify: true,
    monitorIntervalSeconds: monitorSec,
    superviseIntervalSeconds: monitorSec,
  });
  boss.on('error', (e: Error) => opts.log?.warn('job queue', { reason: e.message }));
  await boss.start();
  await boss.createQueue(DEAD_QUEUE, { retentionSeconds: 30 * 86400, deleteAfterSeconds: 30 * 86400 });
  await boss.createQueue(ANALYSIS_QUEUE, {
    deadLetter: DEAD_QUEUE,
    retryLimit: opts.retryLimit ?? 3,
    retryDelay: opts.retryDelaySec ?? 2,
    retryBackoff: true,
    retryDelayMax: 60,
    heartbeatSeconds: heartbeatSec,
    // The heartbeat is the lease; this only bounds a job whose worker touches it forever.
    expireInSeconds: 24 * 3600,
    retentionSeconds: 30 * 86400,
    deleteAfterSeconds: 7 * 86400,
  });
  return new PgBossJobQueue(boss, c, { ...opts, heartbeatSec });
}

export class PgBossJobQueue extends JobRows implements JobQueue {
  readonly kind = 'pg-boss' as const;
  private readonly held = new Map<string, Held>();
  private readonly shortSec: number;
  private readonly retryLimit: number;

  constructor(
    readonly boss: PgBoss,
    c: Catalog,
    private readonly opts: PgBossQueueOptions & { heartbeatSec: number },
  ) {
    super(c);
    this.shortSec = Math.max(SHORT_FIRST_SEC, opts.shortSec ?? 0);
    this.retryLimit = opts.retryLimit ?? 3;
  }

  /** Sends the video's job in `tx`, with its priority and its owner's group. */
  private async send(tx: Catalog, videoId: string): Promise<void> {
    const f = await sendFacts(tx, videoId, this.shortSec);
    if (!f) return;
    const short = f.durationSec <= this.shortSec;
    await this.boss.send(
      ANALYSIS_QUEUE,
      { videoId },
      {
        priority: priorityOf(short, short ? f.waitingShort : f.waiting - f.waitingShort),
        group: { id: f.userId },
        db: queueStatementsIn(tx),
      },
    );
  }

  enqueue(videoId: string, now = new Date()): Promise<void> {
    return this.c.write((tx) => this.enqueueIn(tx, videoId, now));
  }

  async enqueueIn(tx: Catalog, videoId: string, now = new Date()): Promise<void> {
    if (await insertQueuedJob(tx, videoId, FIRST_STAGE, now)) await this.send(tx, videoId);
  }

  reanalyze(videoId: string, stages: string[], now = new Date(), maxQueued = 0): Promise<ReanalyzeOutcome> {
    return queueReanalysis(this.c, videoId, stages, now, maxQueued, (tx) => this.send(tx, videoId));
  }

  async claim(workerId: string, now = new Date(), rules: ClaimRules = {}): Promise<Job | null> {
    await this.buryDead(now);
    for (;;) {
      const [job] = await this.boss.fetch<{ videoId: string }>(ANALYSIS_QUEUE, {
        batchSize: 1,
        ...(rules.maxVideoSec !== undefined && { minPriority: SHORT_BAND }),
        ...((rules.perUserCap ?? 0) > 0 && { groupConcurrency: rules.perUserCap }),
      });
      if (!job) return null;
      const attempt = { id: job.id, retryCount: job.retryCount };
      // A retry takes the row over from the worker that lost it (that one's writes stop matching).
      const row = await this.c.write((tx) => markClaimed(tx, job.data.videoId, workerId, now, ['pending', 'running']));
      if (!row) {
        // Removed, finished or failed meanwhile: nothing to analyse.
        await this.boss.complete(ANALYSIS_QUEUE, attempt, { skipped: 'the video has no analysis waiting' });
        continue;
      }
      const touch = setInterval(
        () =>
          void this.boss.touch(ANALYSIS_QUEUE, attempt).catch((e) =>
            this.opts.log?.warn('job heartbeat not recorded', {
              video_id: row.videoId,
              reason: (e as Error).message,
            }),
          ),
        (this.opts.heartbeatSec * 1000) / 2,
      );
      touch.unref?.();
      const before = this.held.get(row.videoId);
      if (before) clearInterval(before.touch);
      this.held.set(row.videoId, { attempt, workerId, touch });
      return row;
    }
  }

  /** Dead jobs (out of retries): their videos fail with the reason, once. */
  private async buryDead(now: Date): Promise<void> {
    const dead = await this.boss.fetch<{ videoId: string }>(DEAD_QUEUE, { batchSize: 20 });
    for (const d of dead) {
      const reason = `the analysis was interrupted ${this.retryLimit + 1} times (its worker was stopped, killed or cut off from the database); the video was not analysed`;
      const row = await jobOf(this.c, d.data.videoId);
      if (row && (row.state === 'pending' || row.state === 'running')) await failJob(this.c, row.videoId, reason, now);
      await this.boss.complete(DEAD_QUEUE, d, { reason });
      this.opts.log?.warn('analysis job dead', { video_id: d.data.videoId, reason });
    }
  }

  /** Settles pg-boss's job in `tx`, fenced to the held attempt; throws (rolling back) when it lapsed. */
  private settleIn(videoId: string, workerId: string, output: object) {
    const h = this.held.get(videoId);
    return async (tx: Catalog) => {
      if (!h || h.workerId !== workerId) throw new LeaseLost();
      const r = (await this.boss.complete(ANALYSIS_QUEUE, h.attempt, output, {
        db: queueStatementsIn(tx),
      })) as { affected?: number };
      if (!r.affected) throw new LeaseLost();
    };
  }

  async finish(videoId: string, workerId: string, now = new Date()): Promise<boolean> {
    try {
      return await finishJob(this.c, videoId, workerId, now, this.settleIn(videoId, workerId, { ready: true }));
    } catch (e) {
      if (e instanceof LeaseLost) return false;
      throw e;
    }
  }

  async fail(videoId: string, reason: string, now = new Date()): Promise<void> {
    const h = this.held.get(videoId);
    if (h) {
      try {
        return await failJob(this.c, videoId, reason, now, this.settleIn(videoId, h.workerId, { failed: reason }));
      } catch (e) {
        if (!(e instanceof LeaseLost)) throw e;
      }
    }
    await failJob(this.c, videoId, reason, now);
    await this.cancelWaiting(videoId);
  }

  /** pg-boss's jobs of a video that wait (a worker holding one sees the row failed and lets it go). */
  private async cancelWaiting(videoId: string): Promise<void> {
    const waiting = await this.boss.findJobs<{ videoId: string }>(ANALYSIS_QUEUE, { data: { videoId }, queued: true });
    if (waiting.length)
      await this.boss.cancel(
        ANALYSIS_QUEUE,
        waiting.map((j) => j.id),
      );
  }

  async releaseWorker(
    workerIdPrefix: string,
    _maxAttempts: number,
    now = new Date(),
  ): Promise<{ requeued: string[]; failed: string[] }> {
    // A local worker process died: fail its pg-boss jobs now (retried with back-off, or dead after
    // the retry limit) rather than wait for their heartbeats to lapse.
    const out = { requeued: [] as string[], failed: [] as string[] };
    for (const j of await runningJobsOf(this.c, workerIdPrefix)) {
      const active = (
        await this.boss.findJobs<{ videoId: string }>(ANALYSIS_QUEUE, { data: { videoId: j.videoId } })
      ).filter((b) => b.state === 'active');
      for (const b of active)
        await this.boss.fail(
          ANALYSIS_QUEUE,
          { id: b.id, retryCount: b.retryCount },
          { reason: 'the worker process exited' },
        );
      await requeueJob(this.c, j.videoId, now);
      out.requeued.push(j.videoId);
    }
    return out;
  }

  /** Nothing to do: with several nodes, a start-up cannot tell that no worker is alive (leases lapse instead). */
  async resetRunning(): Promise<number> {
    return 0;
  }

  async release(videoId: string, workerId: string): Promise<void> {
    const h = this.held.get(videoId);
    if (!h || h.workerId !== workerId) return;
    clearInterval(h.touch);
    this.held.delete(videoId);
    const row = await jobOf(this.c, videoId);
    if (row?.state === 'running' && row.workerId === workerId) {
      // Stopped half-way (the worker is stopping): back to the queue now, to resume at its stage on
      // another worker, as a new job so that a stop does not use up a retry (those are for crashes).
      // One transaction, fenced to the held attempt: nothing changes if the lease lapsed meanwhile.
      await this.c
        .write(async (tx) => {
          await requeueJob(tx, videoId, new Date());
          const r = (await this.boss.complete(
            ANALYSIS_QUEUE,
            h.attempt,
            { stopped: true },
            { db: queueStatementsIn(tx) },
          )) as {
            affected?: number;
          };
          if (!r.affected) throw new LeaseLost();
          await this.send(tx, videoId);
        })
        .catch((e) => {
          if (!(e instanceof LeaseLost)) throw e;
        });
    } else {
      // Removed, or taken over after a lapsed lease: fenced to this attempt, so a live one is left alone.
      await this.boss.complete(ANALYSIS_QUEUE, h.attempt, { released: row?.state ?? 'removed' });
    }
  }

  async close(): Promise<void> {
    for (const h of this.held.values()) clearInterval(h.touch);
    this.held.clear();
    await this.boss.stop({ graceful: false, close: true, timeout: 2000 });
  }
}

/** The attempt this slot holds is no longer pg-boss's live one (its lease lapsed). */
class LeaseLost extends Error {
  constructor() {
    super('the job lease lapsed');
  }
}
