/**
 * The analysis queue's contract (jobs/queue.ts's JobQueue), on both implementations: the SQLite
 * queue on the catalog's file and pg-boss on a real PostgreSQL (test/pg.ts, never skipped).
 * Fairness (short first, users take turns, a per-user cap, the short lane), claims, retries (with
 * back-off on pg-boss), dead jobs with their reason, and a completion that happens once.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { type JobQueue, SqliteJobQueue } from '../../src/jobs/queue';
import { ANALYSIS_QUEUE, openPgBossQueue, type PgBossJobQueue } from '../../src/jobs/pg-boss-queue';
import type { Catalog } from '../../src/storage/catalog';
import { CATALOGS } from '../dialects';
import { addUser, addVideo } from './queue-fixtures';

interface Opened {
  catalog: Catalog;
  queue: JobQueue;
  close(): Promise<void>;
}

/** pg-boss settings that make the lease and the back-off short enough for a test. */
export const FAST = { heartbeatSec: 10, monitorSec: 1, retryLimit: 1, retryDelaySec: 2 };

const [SQLITE, POSTGRES] = CATALOGS;
const DIALECTS: { name: string; open(): Promise<Opened> }[] = [
  {
    name: 'SQLite',
    async open() {
      const o = await SQLITE!.open();
      return { ...o, queue: new SqliteJobQueue(o.catalog) };
    },
  },
  {
    name: 'PostgreSQL (pg-boss)',
    async open() {
      const o = await POSTGRES!.open();
      const queue = await openPgBossQueue(o.url!, o.catalog, FAST);
      return {
        ...o,
        queue,
        close: async () => {
          await queue.close();
          await o.close();
        },
      };
    },
  },
];

const t0 = 1_700_000_000_000;
const at = (s: number) => new Date(t0 + s * 1000);

for (const d of DIALECTS) {
  describe(`the job queue on ${d.name}`, () => {
    let o: Opened;
    beforeAll(async () => {
      o = await d.open();
      for (const u of ['a', 'b', 'c', 'd', 'e', 'f']) await addUser(o.catalog, u);
    });
    afterAll(() => o.close());

    test('short videos first, users take turns, a per-user cap across all workers, a short lane', async () => {
      const { catalog: c, queue: q } = o;
      // User a queued a backlog of long videos first, then a short one; b added one long video later.
      await addVideo(c, q, 'a1', 'a', 3600, at(0));
      await addVideo(c, q, 'a2', 'a', 3600, at(1));
      await addVideo(c, q, 'a3', 'a', 3600, at(2));
      await addVideo(c, q, 'a4', 'a', 10, at(3));
      await addVideo(c, q, 'b1', 'b', 3600, at(4));
      expect(await q.counts()).toEqual({ waiting: 5, active: 0, failed: 0 });
      const order: string[] = [];
      for (let i = 0; i < 5; i++) {
        const j = (await q.claim(`w_${i}`, at(100 + i)))!;
        expect(j.state).toBe('running');
        expect(j.attempts).toBe(1);
        order.push(j.videoId);
        expect(await q.finish(j.videoId, `w_${i}`, at(100.5 + i))).toBe(true);
        await q.release(j.videoId, `w_${i}`);
      }
      // The short one first; b's only video before a's second one (a's backlog does not starve b).
      expect(order[0]).toBe('a4');
      expect(order.indexOf('b1')).toBeLessThan(order.indexOf('a2'));
      expect(order.filter((v) => v.startsWith('a')).slice(1)).toEqual(['a1', 'a2', 'a3']);
      expect(await q.claim('w_none', at(200))).toBeNull();

      // A cap of one running analysis per user, whichever worker asks.
      await addVideo(c, q, 'c1', 'c', 600, at(300));
      await addVideo(c, q, 'c2', 'c', 600, at(301));
      await addVideo(c, q, 'd1', 'd', 600, at(302));
      const first = (await q.claim('w_c1', at(310), { perUserCap: 1 }))!;
      const second = (await q.claim('w_c2', at(311), { perUserCap: 1 }))!;
      expect([first.videoId, second.videoId].sort()).toEqual(['c1', 'd1']);
      expect(await q.claim('w_c3', at(312), { perUserCap: 1 })).toBeNull();
      expect((await q.counts()).active).toBe(2);
      // The short lane takes only short videos; a worker without a cap takes c2.
      await addVideo(c, q, 'e1', 'e', 3600, at(320));
      expect(await q.claim('w_lane', at(321), { maxVideoSec: 60 })).toBeNull();
      await addVideo(c, q, 'e2', 'e', 20, at(322));
      expect((await q.claim('w_lane', at(323), { maxVideoSec: 60 }))!.videoId).toBe('e2');
      const [x, y] = [(await q.claim('w_x', at(330)))!.videoId, (await q.claim('w_y', at(331)))!.videoId];
      expect([x, y].sort()).toEqual(['c2', 'e1']);
      for (const [v, w] of [
        [first.videoId, 'w_c1'],
        [second.videoId, 'w_c2'],
        ['e2', 'w_lane'],
        [x, 'w_x'],
        [y, 'w_y'],
      ] as const) {
        expect(await q.finish(v, w, at(400))).toBe(true);
        await q.release(v, w);
      }
      expect(await q.counts()).toEqual({ waiting: 0, active: 0, failed: 0 });
    });

    test('storing a video and queueing it are one commit: a rollback leaves no job', async () => {
      const { catalog: c, queue: q } = o;
      await expect(
        c.write(async (tx) => {
          await addVideo(tx, q, 'gone', 'f', 10);
          throw new Error('the store failed');
        }),
      ).rejects.toThrow('the store failed');
      expect(await q.get('gone')).toBeUndefined();
      expect(await q.claim('w_gone', new Date())).toBeNull();
    });

    test('a job whose worker died is retried by another, which alone can finish it; a second finish is refused', async () => {
      const { catalog: c, queue: q } = o;
      await addVideo(c, q, 'f1', 'f', 30);
      const j = (await q.claim('w_1234_a', new Date()))!;
      expect(j.videoId).toBe('f1');
      expect(await q.advance('f1', 'w_1234_a', 'analyzing:ocr', 40, () => {})).toBe(true);
      // The process of w_1234_ died (its supervisor saw it exit).
      expect(await q.releaseWorker('w_1234_', 3)).toEqual({ requeued: ['f1'], failed: [] });
      expect((await q.get('f1'))!.state).toBe('pending');
      let again: Awaited<ReturnType<JobQueue['claim']>> = null;
      const t = Date.now();
      if (q.kind === 'pg-boss') {
        // Back-off: not handed out again at once.
        expect(await q.claim('w_5678_a', new Date())).toBeNull();
      }
      while (!again && Date.now() - t < 20_000) {
        again = await q.claim('w_5678_a', new Date());
        if (!again) await Bun.sleep(250);
      }
      expect(again!.videoId).toBe('f1');
      // It resumes at the stage the first attempt reached.
      expect(again!.stage).toBe('analyzing:ocr');
      expect(again!.attempts).toBe(2);
      if (q.kind === 'pg-boss') expect(Date.now() - t).toBeGreaterThanOrEqual(1000);
      // The first worker, had it lived on, can no longer write or finish.
      expect(await q.report('f1', 'w_1234_a', 'analyzing:ocr', 50, null)).toBe(false);
      expect(await q.advance('f1', 'w_1234_a', 'finalizing', 90, () => {})).toBe(false);
      expect(await q.finish('f1', 'w_1234_a')).toBe(false);
      expect(await q.finish('f1', 'w_5678_a')).toBe(true);
      expect(await q.finish('f1', 'w_5678_a')).toBe(false);
      await q.release('f1', 'w_5678_a');
      expect((await q.get('f1'))!.state).toBe('done');
    });

    test('a worker that stops lets its job go at once: another resumes it at its stage', async () => {
      const { catalog: c, queue: q } = o;
      await addVideo(c, q, 'f3', 'f', 30);
      const j = (await q.claim('w_77_a', new Date()))!;
      expect(j.videoId).toBe('f3');
      expect(await q.advance('f3', 'w_77_a', 'analyzing:ocr', 40, () => {})).toBe(true);
      if (q.kind === 'sqlite') {
        // On one machine the server puts a stopped worker's jobs back (its supervisor, or the next start).
        await q.release('f3', 'w_77_a');
        expect((await q.get('f3'))!.state).toBe('running');
        await q.releaseWorker('w_77_', 3);
      } else {
        // On pg-boss the worker itself does, without waiting for its lease to lapse or using a retry.
        await q.release('f3', 'w_77_a');
      }
      const again = (await q.claim('w_88_a', new Date()))!;
      expect(again.videoId).toBe('f3');
      expect(again.stage).toBe('analyzing:ocr');
      expect(await q.finish('f3', 'w_88_a')).toBe(true);
      await q.release('f3', 'w_88_a');
    });

    test('a job that keeps losing its worker ends dead, with its reason on the video', async () => {
      const { catalog: c, queue: q } = o;
      await addVideo(c, q, 'f2', 'f', 30);
      let reason: string | null = null;
      for (let attempt = 1; attempt <= 4 && !reason; attempt++) {
        const t = Date.now();
        let j: Awaited<ReturnType<JobQueue['claim']>> = null;
        while (!j && Date.now() - t < 20_000) {
          j = await q.claim(`w_${attempt}00_a`, new Date());
          if (!j) {
            const row = (await q.get('f2'))!;
            if (row.state === 'failed') reason = row.error;
            if (reason) break;
            await Bun.sleep(250);
          }
        }
        if (j) await q.releaseWorker(`w_${attempt}00_`, 2);
      }
      const row = (await q.get('f2'))!;
      expect(row.state).toBe('failed');
      expect(row.error).toMatch(q.kind === 'pg-boss' ? /interrupted 2 times/ : /crashed 2 times/);
      const video = await c.run(async (db) => (await db.select().from(c.t.videos)).find((v) => v.id === 'f2'));
      expect(video!.status).toBe('failed');
      expect(video!.error).toBe(row.error);
      if (q.kind === 'pg-boss') {
        // pg-boss keeps the dead job, failed, with what its last attempt said.
        const boss = (q as PgBossJobQueue).boss;
        const jobs = await boss.findJobs<{ videoId: string }>(ANALYSIS_QUEUE, { data: { videoId: 'f2' } });
        expect(jobs.map((j) => j.state)).toEqual(['failed']);
        expect(jobs[0]!.output).toMatchObject({ reason: 'the worker process exited' });
      }
      expect((await q.counts()).failed).toBe(1);
    });
  });
}
