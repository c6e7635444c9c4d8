/**
 * The `jobs` rows: one per video, its analysis as the video's owner sees it (state, stage, progress,
 * ETA) and, on SQLite, the queue itself (jobs/queue.ts claims the next pending row in turn order).
 * On PostgreSQL pg-boss hands out the work (jobs/pg-boss-queue.ts) and these rows stay the
 * visible status. Both dialects (catalog.ts). Every write that a worker makes is conditional on
 * the job still being held by that worker (`held`): a job taken over by another worker after a
 * lost lease can no longer be advanced or finished by the first.
 */
import { and, desc, eq, inArray, like, type SQL, sql } from 'drizzle-orm';
import { type Catalog, changed, first } from '../catalog';
import type { Job } from '../schema';

/** What a video shows while its job waits for a worker. */
export const QUEUED_STAGE = 'queued';

/** A pending job with what the turn order needs. */
export interface WaitingRow {
  videoId: string;
  userId: string;
  durationSec: number;
  createdAt: Date;
}

/** Per user: analyses running now and when the user's last turn began (ms, 0: never). */
export interface UserTurn {
  userId: string;
  running: number;
  lastTurn: number;
}

const num = (x: unknown): number => (x === null || x === undefined ? 0 : Number(x));
const ms = (x: unknown): number =>
  x === null || x === undefined
    ? 0
    : x instanceof Date
      ? x.getTime()
      : typeof x === 'number'
        ? x
        : Date.parse(String(x));

/** Queues the analysis of a stored video in `tx` (the caller's transaction): the video is `processing`. False when it had a job row already. */
export async function insertQueuedJob(tx: Catalog, videoId: string, stage: string, now: Date): Promise<boolean> {
  const { jobs, videos } = tx.t;
  return tx.run(async (db) => {
    const added = await db
      .insert(jobs)
      .values({ videoId, state: 'pending', stage, progress: 0, createdAt: now, updatedAt: now })
      .onConflictDoNothing()
      .returning({ v: jobs.videoId });
    await db
      .update(videos)
      .set({ status: 'processing', stage: QUEUED_STAGE, progress: 0, updatedAt: now })
      .where(eq(videos.id, videoId));
    return added.length > 0;
  });
}

/**
 * A reanalysis of a ready video: only `stages` run. 'busy' when an analysis of it waits or runs,
 * 'not-ready' without a finished analysis, 'full' when the owner has `maxQueued` videos waiting.
 * One transaction, so parallel requests cannot all pass the checks.
 */
export function queueReanalysis(
  c: Catalog,
  videoId: string,
  stages: string[],
  now: Date,
  maxQueued: number,
  /** Inside the transaction once the job row is queued (pg-boss sends its job there). */
  alsoIn?: (tx: Catalog) => Promise<void>,
): Promise<'queued' | 'busy' | 'not-ready' | 'full'> {
  return c.write(async (tx) => {
    const { jobs, videos } = tx.t;
    return tx.run(async (db) => {
      const job = first(await db.select({ state: jobs.state }).from(jobs).where(eq(jobs.videoId, videoId)).limit(1));
      if (job && (job.state === 'pending' || job.state === 'running')) return 'busy';
      const v = first(
        await db
          .select({ status: videos.status, userId: videos.userId })
          .from(videos)
          .where(eq(videos.id, videoId))
          .limit(1),
      );
      if (v?.status !== 'ready') return 'not-ready';
      if (maxQueued > 0) {
        const waiting = num(
          first(
            await db
              .select({ n: sql<number>`count(*)` })
              .from(videos)
              .where(and(eq(videos.userId, v.userId), inArray(videos.status, ['downloading', 'processing']))),
          )?.n,
        );
        if (waiting >= maxQueued) return 'full';
      }
      const fresh = {
        state: 'pending' as const,
        stage: stages[0]!,
        progress: 0,
        etaSec: null,
        attempts: 0,
        workerId: null,
        error: null,
        only: stages,
        updatedAt: now,
      };
      await db
        .insert(jobs)
        .values({ videoId, ...fresh, createdAt: now })
        .onConflictDoUpdate({ target: jobs.videoId, set: { ...fresh, createdAt: now } });
      await db
        .update(videos)
        .set({ status: 'processing', stage: stages[0]!, progress: 0, error: null, updatedAt: now })
        .where(eq(videos.id, videoId));
      await alsoIn?.(tx);
      return 'queued';
    });
  });
}

/** Videos marked `processing` without a job row (a crash between storing and queueing, by an old version). */
export function processingWithoutJob(c: Catalog): Promise<string[]> {
  const { jobs, videos } = c.t;
  return c.run(async (db) =>
    (
      await db
        .select({ id: videos.id })
        .from(videos)
        .where(and(eq(videos.status, 'processing'), sql`${videos.id} NOT IN (SELECT ${jobs.videoId} FROM ${jobs})`))
    ).map((r) => r.id),
  );
}

/** The pending jobs with their owner and length. */
export function waitingJobs(c: Catalog): Promise<WaitingRow[]> {
  const { jobs, videos } = c.t;
  return c.run(async (db) =>
    (
      await db
        .select({
          videoId: jobs.videoId,
          userId: videos.userId,
          durationSec: videos.durationSec,
          createdAt: jobs.createdAt,
        })
        .from(jobs)
        .innerJoin(videos, eq(videos.id, jobs.videoId))
        .where(eq(jobs.state, 'pending'))
    ).map((r) => ({ ...r, durationSec: r.durationSec ?? 0 })),
  );
}

/** Each user with a job: how many of theirs run, and when their last turn was. */
export function userTurns(c: Catalog): Promise<UserTurn[]> {
  const { jobs, videos } = c.t;
  return c.run(async (db) =>
    (
      await db
        .select({
          userId: videos.userId,
          running: sql<number>`sum(CASE WHEN ${jobs.state} = 'running' THEN 1 ELSE 0 END)`,
          lastTurn: sql<unknown>`max(CASE WHEN ${jobs.state} != 'pending' THEN ${jobs.updatedAt} END)`,
        })
        .from(jobs)
        .innerJoin(videos, eq(videos.id, jobs.videoId))
        .groupBy(videos.userId)
    ).map((u) => ({ userId: u.userId, running: num(u.running), lastTurn: ms(u.lastTurn) })),
  );
}

/** Marks a pending job running for `workerId` (one more attempt): the job, or undefined when it was taken. */
export async function markClaimed(
  tx: Catalog,
  videoId: string,
  workerId: string,
  now: Date,
  /** Only when the row is in one of these states (default: pending). */
  from: Job['state'][] = ['pending'],
): Promise<Job | undefined> {
  const { jobs, videos } = tx.t;
  return tx.run(async (db) => {
    const claimed = first(
      await db
        .update(jobs)
        .set({ state: 'running', workerId, attempts: sql`${jobs.attempts} + 1`, updatedAt: now })
        .where(and(eq(jobs.videoId, videoId), inArray(jobs.state, from)))
        .returning(),
    );
    // No longer waiting: the video shows the stage its analysis starts at.
    if (claimed) await db.update(videos).set({ stage: claimed.stage, updatedAt: now }).where(eq(videos.id, videoId));
    return claimed as Job | undefined;
  });
}

/** The running jobs' progress and ETA, with their videos' lengths. */
export function runningJobs(
  c: Catalog,
): Promise<{ eta: number | null; progress: number; durationSec: number | null }[]> {
  const { jobs, videos } = c.t;
  return c.run((db) =>
    db
      .select({ eta: jobs.etaSec, progress: jobs.progress, durationSec: videos.durationSec })
      .from(jobs)
      .innerJoin(videos, eq(videos.id, jobs.videoId))
      .where(eq(jobs.state, 'running')),
  );
}

/** The last `limit` finished videos: their stage timings and lengths (the measured speed). */
export function recentlyDone(
  c: Catalog,
  limit: number,
): Promise<{ analysis: Record<string, unknown> | null; durationSec: number | null }[]> {
  const { jobs, videos } = c.t;
  return c.run(
    async (db) =>
      (await db
        .select({ analysis: videos.analysis, durationSec: videos.durationSec })
        .from(jobs)
        .innerJoin(videos, eq(videos.id, jobs.videoId))
        .where(eq(jobs.state, 'done'))
        .orderBy(desc(jobs.updatedAt))
        .limit(limit)) as { analysis: Record<string, unknown> | null; durationSec: number | null }[],
  );
}

export function jobOf(c: Catalog, videoId: string): Promise<Job | undefined> {
  const { jobs } = c.t;
  return c.run(
    async (db) => first(await db.select().from(jobs).where(eq(jobs.videoId, videoId)).limit(1)) as Job | undefined,
  );
}

/** The job is running and held by `workerId`. */
const held = (c: Catalog, videoId: string, workerId: string): SQL =>
  and(eq(c.t.jobs.videoId, videoId), eq(c.t.jobs.workerId, workerId), eq(c.t.jobs.state, 'running'))!;

/** Progress of a running job; false when it is gone or no longer this worker's. */
export function reportProgress(
  c: Catalog,
  videoId: string,
  workerId: string,
  stage: string,
  progress: number,
  etaSec: number | null,
  shown: string,
  now: Date,
): Promise<boolean> {
  return c.write(async (tx) => {
    const { jobs, videos } = tx.t;
    return tx.run(async (db) => {
      const res = await db
        .update(jobs)
        .set({ stage, progress, etaSec, updatedAt: now })
        .where(held(tx, videoId, workerId))
        .returning({ v: jobs.videoId });
      if (res.length === 0) return false;
      await db.update(videos).set({ stage: shown, progress, updatedAt: now }).where(eq(videos.id, videoId));
      return true;
    });
  });
}

/**
 * Moves a held job to its next stage; `write` stores the finished stage's output in the same
 * transaction (so a stage's output is stored once: by the worker that holds the job).
 */
export function advanceJob(
  c: Catalog,
  videoId: string,
  workerId: string,
  nextStage: string,
  progress: number,
  write: (tx: Catalog) => Promise<void> | void,
  now: Date,
): Promise<boolean> {
  return c.write(async (tx) => {
    const { jobs, videos } = tx.t;
    const res = await tx.run((db) =>
      db
        .update(jobs)
        .set({ stage: nextStage, progress, updatedAt: now })
        .where(held(tx, videoId, workerId))
        .returning({ v: jobs.videoId }),
    );
    if (res.length === 0) return false;
    await write(tx);
    await tx.run((db) =>
      db.update(videos).set({ stage: nextStage, progress, updatedAt: now }).where(eq(videos.id, videoId)),
    );
    return true;
  });
}

/**
 * Ends a held job: the video is ready. False when the job is not (or no longer) this worker's, or
 * already done: a video is analysed to completion once. `alsoIn` runs in the same transaction
 * (pg-boss completes its job there).
 */
export function finishJob(
  c: Catalog,
  videoId: string,
  workerId: string,
  now: Date,
  alsoIn?: (tx: Catalog) => Promise<void>,
): Promise<boolean> {
  return c.write(async (tx) => {
    const { jobs, videos } = tx.t;
    const res = await tx.run((db) =>
      db
        .update(jobs)
        .set({ state: 'done', stage: 'ready', progress: 100, etaSec: 0, updatedAt: now })
        .where(held(tx, videoId, workerId))
        .returning({ v: jobs.videoId }),
    );
    if (res.length === 0) return false;
    await tx.run((db) =>
      db
        .update(videos)
        .set({ status: 'ready', stage: 'ready', progress: 100, error: null, updatedAt: now })
        .where(eq(videos.id, videoId)),
    );
    await alsoIn?.(tx);
    return true;
  });
}

/** The job and its video end as failed with the reason a user reads. */
export function failJob(
  c: Catalog,
  videoId: string,
  reason: string,
  now: Date,
  alsoIn?: (tx: Catalog) => Promise<void>,
): Promise<void> {
  return c.write(async (tx) => {
    const { jobs, videos } = tx.t;
    await tx.run(async (db) => {
      await db.update(jobs).set({ state: 'failed', error: reason, updatedAt: now }).where(eq(jobs.videoId, videoId));
      await db
        .update(videos)
        .set({ status: 'failed', stage: 'failed', error: reason, updatedAt: now })
        .where(eq(videos.id, videoId));
    });
    await alsoIn?.(tx);
  });
}

/** The videos whose job waits or runs. */
export function unfinishedJobIds(c: Catalog): Promise<string[]> {
  const { jobs } = c.t;
  return c.run(async (db) =>
    (
      await db
        .select({ id: jobs.videoId })
        .from(jobs)
        .where(inArray(jobs.state, ['pending', 'running']))
    ).map((j) => j.id),
  );
}

/** The running jobs whose worker id starts with `prefix` (one worker process's slots). */
export function runningJobsOf(c: Catalog, prefix: string): Promise<Job[]> {
  const { jobs } = c.t;
  return c.run(
    async (db) =>
      (await db
        .select()
        .from(jobs)
        .where(and(eq(jobs.state, 'running'), like(jobs.workerId, `${prefix}%`)))) as Job[],
  );
}

/** A running job goes back to pending (it resumes at its stage); its video shows it queued. */
export function requeueJob(c: Catalog, videoId: string, now: Date): Promise<void> {
  return c.write(async (tx) => {
    const { jobs, videos } = tx.t;
    await tx.run(async (db) => {
      await db
        .update(jobs)
        .set({ state: 'pending', workerId: null, updatedAt: now })
        .where(and(eq(jobs.videoId, videoId), eq(jobs.state, 'running')));
      await db.update(videos).set({ stage: QUEUED_STAGE, updatedAt: now }).where(eq(videos.id, videoId));
    });
  });
}

/** Every running job back to pending (no worker is alive): how many. */
export function resetRunningJobs(c: Catalog): Promise<number> {
  const { jobs } = c.t;
  return c.run(async (db) =>
    changed(await db.update(jobs).set({ state: 'pending', workerId: null }).where(eq(jobs.state, 'running'))),
  );
}

/** Jobs by state: waiting (pending), active (running), failed. */
export function jobCounts(c: Catalog): Promise<{ waiting: number; active: number; failed: number }> {
  const { jobs } = c.t;
  return c.run(async (db) => {
    const rows = await db
      .select({ state: jobs.state, n: sql<number>`count(*)` })
      .from(jobs)
      .where(inArray(jobs.state, ['pending', 'running', 'failed']))
      .groupBy(jobs.state);
    const of = (s: string) => num(rows.find((r) => r.state === s)?.n);
    return { waiting: of('pending'), active: of('running'), failed: of('failed') };
  });
}

/**
 * pg-boss's database interface over a catalog (its `db` option): pg-boss's statements then run in
 * the caller's transaction, so sending a job commits with the rows that made it (PostgreSQL only).
 * Its `$n` placeholders become bound parameters of one statement.
 */
export function queueStatementsIn(tx: Catalog): {
  executeSql(text: string, values?: unknown[]): Promise<{ rows: any[] }>;
} {
  return {
    executeSql: async (text, values = []) => {
      const parts = text.split(/\$(\d+)/);
      const chunks = parts.map((p, i) => (i % 2 === 0 ? sql.raw(p) : sql`${sql.param(values[Number(p) - 1])}`));
      return { rows: await tx.rows(sql.join(chunks, sql.raw(''))) };
    },
  };
}

/** What a job's priority is computed from when it is sent: its owner, its length, the owner's line. */
export async function sendFacts(
  tx: Catalog,
  videoId: string,
  shortSec: number,
): Promise<{ userId: string; durationSec: number; waiting: number; waitingShort: number } | undefined> {
  const { jobs, videos } = tx.t;
  return tx.run(async (db) => {
    const v = first(
      await db
        .select({ userId: videos.userId, durationSec: videos.durationSec })
        .from(videos)
        .where(eq(videos.id, videoId))
        .limit(1),
    );
    if (!v) return undefined;
    const w = first(
      await db
        .select({
          all: sql<number>`count(*)`,
          short: sql<number>`sum(CASE WHEN coalesce(${videos.durationSec}, 0) <= ${shortSec} THEN 1 ELSE 0 END)`,
        })
        .from(jobs)
        .innerJoin(videos, eq(videos.id, jobs.videoId))
        .where(and(eq(videos.userId, v.userId), eq(jobs.state, 'pending'), sql`${jobs.videoId} <> ${videoId}`)),
    );
    return { userId: v.userId, durationSec: v.durationSec ?? 0, waiting: num(w?.all), waitingShort: num(w?.short) };
  });
}
