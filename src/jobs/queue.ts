/**
 * The persistent analysis queue (table `jobs`, one row per video). bun:sqlite is synchronous, so
 * claiming the next job is one short transaction; several processes may share the database.
 */
import { and, desc, eq, inArray, like, sql } from 'drizzle-orm';
import { writeTx, type Db } from '../storage/db';
import { jobs, videos, type Job } from '../storage/schema';

export const FIRST_STAGE = 'analyzing:visual';
/** What a video shows while its job waits for a worker. */
export const QUEUED_STAGE = 'queued';

/** Which jobs a worker may take. */
export interface ClaimRules {
  /** Only videos at most this long (the short lane). */
  maxVideoSec?: number;
  /** Skip users who already have this many analyses running (0 = no cap). */
  perUserCap?: number;
}

/** A pending job with what the turn order needs. */
interface Waiting {
  videoId: string;
  userId: string;
  durationSec: number;
  createdAt: Date;
}

/** Where a waiting video stands: 1 = next; the ETA counts the work ahead and its own. */
export interface PlaceInLine {
  position: number;
  etaSec: number | null;
}

/**
 * Seconds of analysis per second of video when nothing has been measured yet (the ingest bench
 * target is 20× real time).
 */
const DEFAULT_RATE = 0.05;
/** Within one user's turn, videos up to this long go before longer ones. */
const SHORT_FIRST_SEC = 120;
/** Places in line are counted this far (a longer line shows no position beyond it). */
const MAX_LINE = 500;

export class JobQueue {
  constructor(private readonly db: Db) {}

  /** Queues the analysis of a stored video (status becomes `processing`). */
  enqueue(videoId: string, now = new Date()): void {
    writeTx(this.db, (tx) => this.enqueueIn(tx, videoId, now));
  }

  /** The same inside the caller's transaction (storing a video and queueing it are one commit). */
  enqueueIn(tx: Db, videoId: string, now = new Date()): void {
    tx.insert(jobs)
      .values({ videoId, state: 'pending', stage: FIRST_STAGE, progress: 0, createdAt: now, updatedAt: now })
      .onConflictDoNothing()
      .run();
    tx.update(videos)
      .set({ status: 'processing', stage: QUEUED_STAGE, progress: 0, updatedAt: now })
      .where(eq(videos.id, videoId))
      .run();
  }

  /**
   * Queues a reanalysis of a ready video: only `stages` (stage names, in pipeline order) run; the
   * other segments stay. 'busy' when an analysis of it is already waiting or running, 'not-ready'
   * when the video has no finished analysis to add to.
   */
  reanalyze(
    videoId: string,
    stages: string[],
    now = new Date(),
    /** The owner's videos downloading or waiting for analysis may not reach this (0: no cap). */
    maxQueued = 0,
  ): 'queued' | 'busy' | 'not-ready' | 'full' {
    return writeTx(this.db, (tx) => {
      const job = tx.select({ state: jobs.state }).from(jobs).where(eq(jobs.videoId, videoId)).get();
      if (job && (job.state === 'pending' || job.state === 'running')) return 'busy';
      const v = tx
        .select({ status: videos.status, userId: videos.userId })
        .from(videos)
        .where(eq(videos.id, videoId))
        .get();
      if (v?.status !== 'ready') return 'not-ready';
      // Counted in the same transaction as the queuing: parallel requests cannot all pass the check.
      if (maxQueued > 0) {
        const waiting = tx
          .select({ n: sql<number>`count(*)` })
          .from(videos)
          .where(and(eq(videos.userId, v.userId), inArray(videos.status, ['downloading', 'processing'])))
          .get()!.n;
        if (waiting >= maxQueued) return 'full';
      }
      const stage = stages[0]!;
      const fresh = {
        state: 'pending' as const,
        stage,
        progress: 0,
        etaSec: null,
        attempts: 0,
        workerId: null,
        error: null,
        only: stages,
        updatedAt: now,
      };
      tx.insert(jobs)
        .values({ videoId, ...fresh, createdAt: now })
        .onConflictDoUpdate({ target: jobs.videoId, set: { ...fresh, createdAt: now } })
        .run();
      tx.update(videos)
        .set({ status: 'processing', stage, progress: 0, error: null, updatedAt: now })
        .where(eq(videos.id, videoId))
        .run();
      return 'queued';
    });
  }

  /**
   * Videos marked `processing` without a job (stored by a version that queued in a second step and
   * crashed in between) would wait forever: queue them. Returns their ids.
   */
  requeueUnqueued(now = new Date()): string[] {
    const lost = this.db
      .select({ id: videos.id })
      .from(videos)
      .where(and(eq(videos.status, 'processing'), sql`${videos.id} NOT IN (SELECT ${jobs.videoId} FROM ${jobs})`))
      .all()
      .map((r) => r.id);
    for (const id of lost) this.enqueue(id, now);
    return lost;
  }

  /**
   * Takes the next pending job for `workerId` in turn order (see `turnOrder`), or null.
   */
  claim(workerId: string, now = new Date(), rules: ClaimRules = {}): Job | null {
    return writeTx(this.db, (tx) => {
      const next = this.turnOrder(tx, rules, 1)[0];
      if (!next) return null;
      const claimed = tx
        .update(jobs)
        .set({ state: 'running', workerId, attempts: sql`${jobs.attempts} + 1`, updatedAt: now })
        .where(and(eq(jobs.videoId, next.videoId), eq(jobs.state, 'pending')))
        .returning()
        .get();
      // No longer waiting: the video shows the stage its analysis starts at (it has no place in line).
      if (claimed)
        tx.update(videos).set({ stage: claimed.stage, updatedAt: now }).where(eq(videos.id, claimed.videoId)).run();
      return claimed ?? null;
    });
  }

  /**
   * The pending jobs in the order workers take them. Users take turns: first those with the fewest
   * analyses running, then the one whose last turn is oldest (so one user's backlog never starves
   * another's); within a user, short videos before long ones (a 10-second clip should not wait
   * for an hour-long one), then the oldest.
   */
  private turnOrder(db: Db, rules: ClaimRules = {}, limit = MAX_LINE): Waiting[] {
    const pending: Waiting[] = db
      .select({
        videoId: jobs.videoId,
        userId: videos.userId,
        durationSec: videos.durationSec,
        createdAt: jobs.createdAt,
      })
      .from(jobs)
      .innerJoin(videos, eq(videos.id, jobs.videoId))
      .where(eq(jobs.state, 'pending'))
      .all()
      .map((r) => ({ ...r, durationSec: r.durationSec ?? 0 }));
    if (pending.length === 0) return [];
    const users = db
      .select({
        userId: videos.userId,
        running: sql<number>`sum(${jobs.state} = 'running')`,
        lastTurn: sql<number | null>`max(CASE WHEN ${jobs.state} != 'pending' THEN ${jobs.updatedAt} END)`,
      })
      .from(jobs)
      .innerJoin(videos, eq(videos.id, jobs.videoId))
      .groupBy(videos.userId)
      .all();
    const byUser = new Map(users.map((u) => [u.userId, { running: u.running ?? 0, lastTurn: u.lastTurn ?? 0 }]));
    const cap = rules.perUserCap ?? 0;
    const short = (w: Waiting) => (w.durationSec <= SHORT_FIRST_SEC ? 0 : 1);
    const left = pending
      .filter((w) => rules.maxVideoSec === undefined || w.durationSec <= rules.maxVideoSec)
      .filter((w) => cap <= 0 || (byUser.get(w.userId)?.running ?? 0) < cap);
    // Each user's own line: short ones first, then the oldest.
    const perUser = new Map<string, Waiting[]>();
    for (const w of left) {
      const own = perUser.get(w.userId);
      if (own) own.push(w);
      else perUser.set(w.userId, [w]);
    }
    for (const own of perUser.values())
      own.sort((a, b) => short(a) - short(b) || a.createdAt.getTime() - b.createdAt.getTime());
    // Then the users' turns as they will go: after each pick its user's last turn is the latest.
    const line: Waiting[] = [];
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
   * Each waiting video's place in line and an estimate of when it is ready: the remaining work of
   * the running jobs and of the jobs ahead, shared by `workers`, plus its own, at the speed measured
   * on this server's finished videos. While every worker's first slot is busy, a video the short
   * lane takes waits only for the short ones ahead of it (each worker's second slot, see worker.ts).
   */
  placesInLine(workers: number, shortLaneSec = 0): Map<string, PlaceInLine> {
    const order = this.turnOrder(this.db);
    const out = new Map<string, PlaceInLine>();
    if (order.length === 0) return out;
    const rate = this.secondsPerVideoSecond();
    const running = this.db
      .select({ eta: jobs.etaSec, progress: jobs.progress, durationSec: videos.durationSec })
      .from(jobs)
      .innerJoin(videos, eq(videos.id, jobs.videoId))
      .where(eq(jobs.state, 'running'))
      .all();
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
  private secondsPerVideoSecond(): number {
    const done = this.db
      .select({ analysis: videos.analysis, durationSec: videos.durationSec })
      .from(jobs)
      .innerJoin(videos, eq(videos.id, jobs.videoId))
      .where(eq(jobs.state, 'done'))
      .orderBy(desc(jobs.updatedAt))
      .limit(20)
      .all();
    let ms = 0;
    let sec = 0;
    for (const d of done) {
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

  get(videoId: string): Job | undefined {
    return this.db.select().from(jobs).where(eq(jobs.videoId, videoId)).get();
  }

  /**
   * Records progress; returns false when the job is gone or no longer this worker's (the video
   * was removed or its index purged), which tells the worker to stop.
   */
  /**
   * Progress of a running job. `stage` is where a restart resumes; the resource shows `shown` (the
   * stage being waited on, when several run at once).
   */
  report(
    videoId: string,
    workerId: string,
    stage: string,
    progress: number,
    etaSec: number | null,
    shown = stage,
    now = new Date(),
  ): boolean {
    return writeTx(this.db, (tx) => {
      const res = tx
        .update(jobs)
        .set({ stage, progress, etaSec, updatedAt: now })
        .where(and(eq(jobs.videoId, videoId), eq(jobs.workerId, workerId), eq(jobs.state, 'running')))
        .returning({ v: jobs.videoId })
        .all();
      if (res.length === 0) return false;
      tx.update(videos).set({ stage: shown, progress, updatedAt: now }).where(eq(videos.id, videoId)).run();
      return true;
    });
  }

  /** Moves to the next stage; `write` stores that stage's output in the same transaction. */
  advance(
    videoId: string,
    workerId: string,
    nextStage: string,
    progress: number,
    write: (tx: Db) => void,
    now = new Date(),
  ): boolean {
    return writeTx(this.db, (tx) => {
      const res = tx
        .update(jobs)
        .set({ stage: nextStage, progress, updatedAt: now })
        .where(and(eq(jobs.videoId, videoId), eq(jobs.workerId, workerId), eq(jobs.state, 'running')))
        .returning({ v: jobs.videoId })
        .all();
      if (res.length === 0) return false;
      write(tx as unknown as Db);
      tx.update(videos).set({ stage: nextStage, progress, updatedAt: now }).where(eq(videos.id, videoId)).run();
      return true;
    });
  }

  finish(videoId: string, workerId: string, now = new Date()): boolean {
    return writeTx(this.db, (tx) => {
      const res = tx
        .update(jobs)
        .set({ state: 'done', stage: 'ready', progress: 100, etaSec: 0, updatedAt: now })
        .where(and(eq(jobs.videoId, videoId), eq(jobs.workerId, workerId)))
        .returning({ v: jobs.videoId })
        .all();
      if (res.length === 0) return false;
      tx.update(videos)
        .set({ status: 'ready', stage: 'ready', progress: 100, error: null, updatedAt: now })
        .where(eq(videos.id, videoId))
        .run();
      return true;
    });
  }

  fail(videoId: string, reason: string, now = new Date()): void {
    writeTx(this.db, (tx) => {
      tx.update(jobs).set({ state: 'failed', error: reason, updatedAt: now }).where(eq(jobs.videoId, videoId)).run();
      tx.update(videos)
        .set({ status: 'failed', stage: 'failed', error: reason, updatedAt: now })
        .where(eq(videos.id, videoId))
        .run();
    });
  }

  /** Fails every job still waiting or running (no worker can start); returns their video ids. */
  failWaiting(reason: string, now = new Date()): string[] {
    const waiting = this.db
      .select({ id: jobs.videoId })
      .from(jobs)
      .where(inArray(jobs.state, ['pending', 'running']))
      .all();
    for (const j of waiting) this.fail(j.id, reason, now);
    return waiting.map((j) => j.id);
  }

  /**
   * A worker died: its running jobs go back to pending (to resume at their stage), or fail once
   * they have been tried `maxAttempts` times (the job itself is what kills workers).
   */
  releaseWorker(
    workerIdPrefix: string,
    maxAttempts: number,
    now = new Date(),
  ): { requeued: string[]; failed: string[] } {
    const held = this.db
      .select()
      .from(jobs)
      .where(and(eq(jobs.state, 'running'), like(jobs.workerId, `${workerIdPrefix}%`)))
      .all();
    const out = { requeued: [] as string[], failed: [] as string[] };
    for (const j of held) {
      if (j.attempts >= maxAttempts) {
        this.fail(j.videoId, `the analysis crashed ${j.attempts} times at stage ${j.stage}`, now);
        out.failed.push(j.videoId);
      } else {
        this.db
          .update(jobs)
          .set({ state: 'pending', workerId: null, updatedAt: now })
          .where(eq(jobs.videoId, j.videoId))
          .run();
        this.db.update(videos).set({ stage: QUEUED_STAGE, updatedAt: now }).where(eq(videos.id, j.videoId)).run();
        out.requeued.push(j.videoId);
      }
    }
    return out;
  }

  /** At start-up no worker is alive: running jobs go back to pending and resume at their stage. */
  resetRunning(): number {
    return this.db
      .update(jobs)
      .set({ state: 'pending', workerId: null })
      .where(eq(jobs.state, 'running'))
      .returning({ v: jobs.videoId })
      .all().length;
  }

  pendingCount(): number {
    return (
      this.db
        .select({ n: sql<number>`count(*)` })
        .from(jobs)
        .where(inArray(jobs.state, ['pending', 'running']))
        .get()?.n ?? 0
    );
  }
}
