/**
 * The analysis queue: one interface (`JobQueue`) for the server, the workers, /status and
 * reanalysis, with two implementations:
 * - `SqliteJobQueue` (here): the `jobs` table is the queue, one row per video; claiming the next
 *   job is one short BEGIN IMMEDIATE transaction, so several processes may share the database file;
 * - `PgBossJobQueue` (pg-boss-queue.ts): on PostgreSQL pg-boss hands out the work (leases with
 *   SKIP LOCKED, retries with back-off, dead jobs with their reason, priorities); the `jobs` rows
 *   stay each video's visible status.
 * The SQL of both is in storage/repositories/jobs.ts.
 */
import type { Catalog } from '../storage/catalog';
import {
  advanceJob,
  failJob,
  finishJob,
  insertQueuedJob,
  jobCounts,
  jobOf,
  markClaimed,
  processingWithoutJob,
  queueReanalysis,
  recentlyDone,
  reportProgress,
  requeueJob,
  resetRunningJobs,
  runningJobs,
  runningJobsOf,
  unfinishedJobIds,
  userTurns,
  type WaitingRow,
  waitingJobs,
} from '../storage/repositories/jobs';
import type { Job } from '../storage/rows';

export { QUEUED_STAGE } from '../storage/repositories/jobs';
export const FIRST_STAGE = 'analyzing:visual';

/** Which jobs a worker may take. */
export interface ClaimRules {
  /** Only videos at most this long (the short lane). */
  maxVideoSec?: number;
  /** Skip users who already have this many analyses running (0 = no cap). */
  perUserCap?: number;
}

/** Where a waiting video stands: 1 = next; the ETA counts the work ahead and its own. */
export interface PlaceInLine {
  position: number;
  etaSec: number | null;
}

/** The queue's size, as GET /health's cluster block shows it. */
export interface QueueCounts {
  waiting: number;
  active: number;
  failed: number;
}

export type ReanalyzeOutcome = 'queued' | 'busy' | 'not-ready' | 'full';

/** The analysis queue (see the file's header). Every `workerId` is a job slot's id (worker.ts). */
export interface JobQueue {
  readonly kind: 'sqlite' | 'pg-boss';
  /** Queues the analysis of a stored video (status becomes `processing`). */
  enqueue(videoId: string, now?: Date): Promise<void>;
  /** The same inside the caller's transaction: storing a video and queueing it are one commit. */
  enqueueIn(tx: Catalog, videoId: string, now?: Date): Promise<void>;
  /**
   * Queues a reanalysis of a ready video: only `stages` (in pipeline order) run; the other
   * segments stay. `maxQueued`: the owner's videos waiting may not reach this (0: no cap).
   */
  reanalyze(videoId: string, stages: string[], now?: Date, maxQueued?: number): Promise<ReanalyzeOutcome>;
  /** Queues videos marked `processing` that have no job (an old version's crash): their ids. */
  requeueUnqueued(now?: Date): Promise<string[]>;
  /** Takes the next job for `workerId` in turn order, or null. */
  claim(workerId: string, now?: Date, rules?: ClaimRules): Promise<Job | null>;
  /** Each waiting video's place in line and ETA (`workers` analyse at once). */
  placesInLine(workers: number, shortLaneSec?: number): Promise<Map<string, PlaceInLine>>;
  get(videoId: string): Promise<Job | undefined>;
  /**
   * Progress of a running job: `stage` is where a restart resumes, `shown` what the resource
   * shows. False when the job is gone or no longer this worker's (the worker stops).
   */
  report(
    videoId: string,
    workerId: string,
    stage: string,
    progress: number,
    etaSec: number | null,
    shown?: string,
    now?: Date,
  ): Promise<boolean>;
  /** Moves to the next stage; `write` stores that stage's output in the same transaction. */
  advance(
    videoId: string,
    workerId: string,
    nextStage: string,
    progress: number,
    write: (tx: Catalog) => Promise<void> | void,
    now?: Date,
  ): Promise<boolean>;
  /** The video is ready; false when the job is no longer this worker's (it is then not finished twice). */
  finish(videoId: string, workerId: string, now?: Date): Promise<boolean>;
  /** The video's analysis failed for `reason` (kept on the job and the video). */
  fail(videoId: string, reason: string, now?: Date): Promise<void>;
  /** Fails every job still waiting or running (no worker can start); their video ids. */
  failWaiting(reason: string, now?: Date): Promise<string[]>;
  /**
   * A worker process died: its running jobs go back to the queue (to resume at their stage), or
   * fail once tried `maxAttempts` times (the job itself is what kills workers).
   */
  releaseWorker(
    workerIdPrefix: string,
    maxAttempts: number,
    now?: Date,
  ): Promise<{ requeued: string[]; failed: string[] }>;
  /** At start-up of a single machine no worker is alive: running jobs resume. How many. */
  resetRunning(): Promise<number>;
  /** Jobs waiting or running. */
  pendingCount(): Promise<number>;
  /** Waiting, active and failed jobs (GET /health's cluster block). */
  counts(): Promise<QueueCounts>;
  /**
   * The slot is done with a job it claimed, whatever the outcome (after finish, fail, a removal or
   * a stop): on pg-boss the lease ends (a job still running goes back to the queue at once).
   */
  release(videoId: string, workerId: string): Promise<void>;
  /** Stops what the queue runs in the background (pg-boss's maintenance and connections). */
  close(): Promise<void>;
}

/**
 * Seconds of analysis per second of video when nothing has been measured yet (the ingest bench
 * target is 20× real time).
 */
const DEFAULT_RATE = 0.05;
/** Within one user's turn, videos up to this long go before longer ones. */
export const SHORT_FIRST_SEC = 120;
/** Places in line are counted this far (a longer line shows no position beyond it). */
const MAX_LINE = 500;

/**
 * The pending jobs in the order workers take them. Users take turns: first those with the fewest
 * analyses running, then the one whose last turn is oldest (so one user's backlog never starves
 * another's); within a user, short videos before long ones (a 10-second clip should not wait
 * for an hour-long one), then the oldest.
 */
export async function turnOrder(c: Catalog, rules: ClaimRules = {}, limit = MAX_LINE): Promise<WaitingRow[]> {
  const pending = await waitingJobs(c);
  if (pending.length === 0) return [];
  const users = await userTurns(c);
  return lineOf(pending, users, rules, limit);
}

/** The turn order of `pending` (see turnOrder), pure. */
export function lineOf(
  pending: WaitingRow[],
  users: { userId: string; running: number; lastTurn: number }[],
  rules: ClaimRules = {},
  limit = MAX_LINE,
): WaitingRow[] {
  const byUser = new Map(users.map((u) => [u.userId, { running: u.running, lastTurn: u.lastTurn }]));
  for (const w of pending) if (!byUser.has(w.userId)) byUser.set(w.userId, { running: 0, lastTurn: 0 });
  const cap = rules.perUserCap ?? 0;
  const short = (w: WaitingRow) => (w.durationSec <= SHORT_FIRST_SEC ? 0 : 1);
  const left = pending
    .filter((w) => rules.maxVideoSec === undefined || w.durationSec <= rules.maxVideoSec)
    .filter((w) => cap <= 0 || (byUser.get(w.userId)?.running ?? 0) < cap);
  // Each user's own line: short ones first, then the oldest.
  const perUser = new Map<string, WaitingRow[]>();
  for (const w of left) {
    const own = perUser.get(w.userId);
    if (own) own.push(w);
    else perUser.set(w.userId, [w]);
  }
  for (const own of perUser.values())
    own.sort((a, b) => short(a) - short(b) || a.createdAt.getTime() - b.createdAt.getTime());
  // Then the users' turns as they will go: after each pick its user's last turn is the latest.
  const line: WaitingRow[] = [];
  let turn = Number.MAX_SAFE_INTEGER / 2;
  while (line.length < limit) {
    let best: string | null = null;
    for (const [user, own] of perUser) {
      if (best === null) {
        best = user;
        continue;
      }
      const [u, b] = [byUser.get(user)!, byUser.get(best)!];
      const [x, y] = [own[0]!, perUser.get(best)![0]!];
      if (
        (u.running - b.running ||
          u.lastTurn - b.lastTurn ||
          short(x) - short(y) ||
          x.createdAt.getTime() - y.createdAt.getTime()) < 0
      )
        best = user;
    }
    if (best === null) break;
    const own = perUser.get(best)!;
    line.push(own.shift()!);
    if (own.length === 0) perUser.delete(best);
    byUser.set(best, { running: byUser.get(best)!.running, lastTurn: turn++ });
  }
  return line;
}

/**
 * Each waiting video's place in `order` and an estimate of when it is ready: the remaining work of
 * the running jobs and of the jobs ahead, shared by `workers`, plus its own, at the speed measured
 * on the finished videos. While every worker's first slot is busy, a video the short lane takes
 * waits only for the short ones ahead of it (each worker's second slot, see worker.ts).
 */
export async function placesOf(
  c: Catalog,
  order: WaitingRow[],
  workers: number,
  shortLaneSec = 0,
): Promise<Map<string, PlaceInLine>> {
  const out = new Map<string, PlaceInLine>();
  if (order.length === 0) return out;
  const rate = await secondsPerVideoSecond(c);
  const running = await runningJobs(c);
  // A job that just started has no ETA of its own yet: its length at the measured speed.
  const busy = running.reduce((s, r) => s + (r.eta ?? (r.durationSec ?? 0) * rate * (1 - r.progress / 100)), 0);
  let ahead = busy;
  let laneAhead = 0;
  order.forEach((w, i) => {
    const own = w.durationSec * rate;
    const lane = shortLaneSec > 0 && w.durationSec <= shortLaneSec && running.length >= workers;
    const eta = lane ? laneAhead / Math.max(1, workers) + own : ahead / Math.max(1, workers) + own;
    out.set(w.videoId, { position: i + 1, etaSec: rate > 0 ? Math.max(1, Math.round(eta)) : null });
    ahead += own;
    if (lane) laneAhead += own;
  });
  return out;
}

/** Analysis seconds per second of video over the last finished videos (their stage timings). */
async function secondsPerVideoSecond(c: Catalog): Promise<number> {
  let ms = 0;
  let sec = 0;
  for (const d of await recentlyDone(c, 20)) {
    const stages = Object.values(d.analysis ?? {}) as { ms?: number }[];
    // Stages of a group overlap: the sum over-counts, so this estimate errs on the late side.
    const total = stages.reduce((s, st) => s + (typeof st?.ms === 'number' ? st.ms : 0), 0);
    if (total > 0 && (d.durationSec ?? 0) > 0) {
      ms += total;
      sec += d.durationSec!;
    }
  }
  return sec > 0 ? ms / 1000 / sec : DEFAULT_RATE;
}

/**
 * What both queues do alike: the `jobs` rows are each video's visible status (stage, progress,
 * place in line) and a worker's writes are fenced to its slot, whichever engine hands out the work.
 */
export abstract class JobRows {
  constructor(protected readonly c: Catalog) {}

  abstract enqueue(videoId: string, now?: Date): Promise<void>;
  abstract fail(videoId: string, reason: string, now?: Date): Promise<void>;

  /** Videos left `processing` with no job (a crash between the two writes) are queued again; their ids. */
  async requeueUnqueued(now = new Date()): Promise<string[]> {
    const lost = await processingWithoutJob(this.c);
    for (const id of lost) await this.enqueue(id, now);
    return lost;
  }

  /** In the rows' turn order (on pg-boss, what its priorities approximate: see priorityOf). */
  async placesInLine(workers: number, shortLaneSec = 0): Promise<Map<string, PlaceInLine>> {
    return placesOf(this.c, await turnOrder(this.c), workers, shortLaneSec);
  }

  get(videoId: string): Promise<Job | undefined> {
    return jobOf(this.c, videoId);
  }

  report(
    videoId: string,
    workerId: string,
    stage: string,
    progress: number,
    etaSec: number | null,
    shown = stage,
    now = new Date(),
  ): Promise<boolean> {
    return reportProgress(this.c, videoId, workerId, stage, progress, etaSec, shown, now);
  }

  advance(
    videoId: string,
    workerId: string,
    nextStage: string,
    progress: number,
    write: (tx: Catalog) => Promise<void> | void,
    now = new Date(),
  ): Promise<boolean> {
    return advanceJob(this.c, videoId, workerId, nextStage, progress, write, now);
  }

  async failWaiting(reason: string, now = new Date()): Promise<string[]> {
    const waiting = await unfinishedJobIds(this.c);
    for (const id of waiting) await this.fail(id, reason, now);
    return waiting;
  }

  async pendingCount(): Promise<number> {
    const n = await jobCounts(this.c);
    return n.waiting + n.active;
  }

  /** From the rows, which every node sees at once. */
  counts(): Promise<QueueCounts> {
    return jobCounts(this.c);
  }
}

/** The queue of a single machine: the `jobs` table on the catalog's SQLite file (see the header). */
export class SqliteJobQueue extends JobRows implements JobQueue {
  readonly kind = 'sqlite' as const;

  enqueue(videoId: string, now = new Date()): Promise<void> {
    return this.c.write((tx) => this.enqueueIn(tx, videoId, now));
  }

  async enqueueIn(tx: Catalog, videoId: string, now = new Date()): Promise<void> {
    await insertQueuedJob(tx, videoId, FIRST_STAGE, now);
  }

  reanalyze(videoId: string, stages: string[], now = new Date(), maxQueued = 0): Promise<ReanalyzeOutcome> {
    return queueReanalysis(this.c, videoId, stages, now, maxQueued);
  }

  claim(workerId: string, now = new Date(), rules: ClaimRules = {}): Promise<Job | null> {
    return this.c.write(async (tx) => {
      const next = (await turnOrder(tx, rules, 1))[0];
      if (!next) return null;
      return (await markClaimed(tx, next.videoId, workerId, now)) ?? null;
    });
  }

  finish(videoId: string, workerId: string, now = new Date()): Promise<boolean> {
    return finishJob(this.c, videoId, workerId, now);
  }

  fail(videoId: string, reason: string, now = new Date()): Promise<void> {
    return failJob(this.c, videoId, reason, now);
  }

  async releaseWorker(
    workerIdPrefix: string,
    maxAttempts: number,
    now = new Date(),
  ): Promise<{ requeued: string[]; failed: string[] }> {
    const out = { requeued: [] as string[], failed: [] as string[] };
    for (const j of await runningJobsOf(this.c, workerIdPrefix)) {
      if (j.attempts >= maxAttempts) {
        await this.fail(j.videoId, `the analysis crashed ${j.attempts} times at stage ${j.stage}`, now);
        out.failed.push(j.videoId);
      } else {
        await requeueJob(this.c, j.videoId, now);
        out.requeued.push(j.videoId);
      }
    }
    return out;
  }

  resetRunning(): Promise<number> {
    return resetRunningJobs(this.c);
  }

  /** Nothing held outside the row: a dead worker's jobs are put back by releaseWorker or resetRunning. */
  async release(_videoId: string, _workerId: string): Promise<void> {}

  async close(): Promise<void> {}
}
