/**
 * The persistent analysis queue (table `jobs`, one row per video). bun:sqlite is synchronous, so
 * claiming the next job is one short transaction; several processes may share the database.
 */
import { and, asc, eq, inArray, like, sql } from 'drizzle-orm';
import { writeTx, type Db } from '../storage/db';
import { jobs, videos, type Job } from '../storage/schema';

export const FIRST_STAGE = 'analyzing:visual';

export class JobQueue {
  constructor(private readonly db: Db) {}

  /** Queues the analysis of a stored video (status becomes `processing`). */
  enqueue(videoId: string, now = new Date()): void {
    writeTx(this.db, (tx) => this.enqueueIn(tx, videoId, now));
  }

  /** The same inside the caller's transaction (storing a video and queueing it are one commit). */
  enqueueIn(tx: Db, videoId: string, now = new Date()): void {
    tx.insert(jobs).values({ videoId, state: 'pending', stage: FIRST_STAGE, progress: 0, createdAt: now, updatedAt: now }).onConflictDoNothing().run();
    tx.update(videos).set({ status: 'processing', stage: FIRST_STAGE, progress: 0, updatedAt: now }).where(eq(videos.id, videoId)).run();
  }

  /**
   * Queues a reanalysis of a ready video: only `stages` (stage names, in pipeline order) run; the
   * other segments stay. 'busy' when an analysis of it is already waiting or running, 'not-ready'
   * when the video has no finished analysis to add to.
   */
  reanalyze(videoId: string, stages: string[], now = new Date()): 'queued' | 'busy' | 'not-ready' {
    return writeTx(this.db, (tx) => {
      const job = tx.select({ state: jobs.state }).from(jobs).where(eq(jobs.videoId, videoId)).get();
      if (job && (job.state === 'pending' || job.state === 'running')) return 'busy';
      const v = tx.select({ status: videos.status }).from(videos).where(eq(videos.id, videoId)).get();
      if (v?.status !== 'ready') return 'not-ready';
      const stage = stages[0]!;
      const fresh = { state: 'pending' as const, stage, progress: 0, etaSec: null, attempts: 0, workerId: null, error: null, only: stages, updatedAt: now };
      tx.insert(jobs)
        .values({ videoId, ...fresh, createdAt: now })
        .onConflictDoUpdate({ target: jobs.videoId, set: { ...fresh, createdAt: now } })
        .run();
      tx.update(videos).set({ status: 'processing', stage, progress: 0, error: null, updatedAt: now }).where(eq(videos.id, videoId)).run();
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

  /** Takes the oldest pending job for `workerId`, or null. */
  claim(workerId: string, now = new Date()): Job | null {
    return writeTx(this.db, (tx) => {
      const next = tx.select().from(jobs).where(eq(jobs.state, 'pending')).orderBy(asc(jobs.createdAt)).limit(1).get();
      if (!next) return null;
      const claimed = tx
        .update(jobs)
        .set({ state: 'running', workerId, attempts: sql`${jobs.attempts} + 1`, updatedAt: now })
        .where(and(eq(jobs.videoId, next.videoId), eq(jobs.state, 'pending')))
        .returning()
        .get();
      return claimed ?? null;
    });
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
  report(videoId: string, workerId: string, stage: string, progress: number, etaSec: number | null, shown = stage, now = new Date()): boolean {
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
  advance(videoId: string, workerId: string, nextStage: string, progress: number, write: (tx: Db) => void, now = new Date()): boolean {
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
      tx.update(videos).set({ status: 'ready', stage: 'ready', progress: 100, error: null, updatedAt: now }).where(eq(videos.id, videoId)).run();
      return true;
    });
  }

  fail(videoId: string, reason: string, now = new Date()): void {
    writeTx(this.db, (tx) => {
      tx.update(jobs).set({ state: 'failed', error: reason, updatedAt: now }).where(eq(jobs.videoId, videoId)).run();
      tx.update(videos).set({ status: 'failed', stage: 'failed', error: reason, updatedAt: now }).where(eq(videos.id, videoId)).run();
    });
  }

  /** Fails every job still waiting or running (no worker can start); returns their video ids. */
  failWaiting(reason: string, now = new Date()): string[] {
    const waiting = this.db.select({ id: jobs.videoId }).from(jobs).where(inArray(jobs.state, ['pending', 'running'])).all();
    for (const j of waiting) this.fail(j.id, reason, now);
    return waiting.map((j) => j.id);
  }

  /**
   * A worker died: its running jobs go back to pending (to resume at their stage), or fail once
   * they have been tried `maxAttempts` times (the job itself is what kills workers).
   */
  releaseWorker(workerIdPrefix: string, maxAttempts: number, now = new Date()): { requeued: string[]; failed: string[] } {
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
        this.db.update(jobs).set({ state: 'pending', workerId: null, updatedAt: now }).where(eq(jobs.videoId, j.videoId)).run();
        out.requeued.push(j.videoId);
      }
    }
    return out;
  }

  /** At start-up no worker is alive: running jobs go back to pending and resume at their stage. */
  resetRunning(): number {
    return this.db.update(jobs).set({ state: 'pending', workerId: null }).where(eq(jobs.state, 'running')).returning({ v: jobs.videoId }).all().length;
  }

  pendingCount(): number {
    return this.db.select({ n: sql<number>`count(*)` }).from(jobs).where(inArray(jobs.state, ['pending', 'running'])).get()?.n ?? 0;
  }
}
