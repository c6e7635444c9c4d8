/**
 * The cluster's maintenance on PostgreSQL (issue 33): two nodes (two pg-boss instances) on one real
 * database schedule it on the same cron; each tick runs on one node only, and a failed run is retried.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { PgBoss } from 'pg-boss';
import {
  type ClusterMaintenance,
  MAINTENANCE_QUEUE,
  startClusterMaintenance,
} from '../../src/jobs/cluster-maintenance';
import { createLogger } from '../../src/log';
import { spawnNode, stopAllNodes } from '../cluster/harness';
import { until } from '../factories';
import { freshPostgresDatabase, type TestDatabase } from '../pg';

describe('cluster maintenance on pg-boss', () => {
  let pg: TestDatabase;
  const bosses: PgBoss[] = [];
  const started: ClusterMaintenance[] = [];
  /** Runs per node. */
  const runs = [0, 0];
  let failNext = false;
  const log = createLogger('error', {}, () => {});

  beforeAll(async () => {
    pg = await freshPostgresDatabase();
    for (const node of [0, 1]) {
      const boss = new PgBoss({
        connectionString: pg.url,
        schema: 'pgboss',
        max: 2,
        cronMonitorIntervalSeconds: 1,
        cronWorkerIntervalSeconds: 1,
      });
      boss.on('error', () => {});
      await boss.start();
      bosses.push(boss);
      started.push(
        await startClusterMaintenance(
          boss,
          '* * * * *',
          async () => {
            runs[node]!++;
            if (failNext) {
              failNext = false;
              throw new Error('the purge failed');
            }
            return { purgedIndexes: 0 };
          },
          log,
          { pollSec: 1, tz: 'UTC' },
        ),
      );
    }
  }, 60_000);

  afterAll(async () => {
    for (const m of started) await m.close();
    for (const b of bosses) await b.stop({ graceful: false, close: true, timeout: 2000 });
    await pg?.drop();
  }, 60_000);

  const jobs = () =>
    bosses[0]!.findJobs(MAINTENANCE_QUEUE).then((all) => all.map((j) => ({ state: j.state, output: j.output })));

  test('both nodes schedule it; a minute tick runs once over the cluster, not once per node', async () => {
    expect((await bosses[0]!.getSchedules(MAINTENANCE_QUEUE)).length).toBe(1);
    // A tick (the current minute's, or the next one's), then time for a second node to run it too.
    await until(
      () => runs[0]! + runs[1]!,
      (n) => n >= 1,
      75_000,
      'the first tick',
    );
    await Bun.sleep(3000);
    // Every tick's job ran once: as many runs over both nodes as jobs the schedule made.
    const done = await until(jobs, (j) => j.every((x) => x.state === 'completed'), 10_000, 'the runs to end');
    expect(done.length).toBeGreaterThanOrEqual(1);
    expect(runs[0]! + runs[1]!).toBe(done.length);
    expect(done[0]!.output).toEqual({ purgedIndexes: 0 });
  }, 90_000);

  test('a failed run is retried', async () => {
    failNext = true;
    const before = runs[0]! + runs[1]!;
    const id = await bosses[1]!.send(MAINTENANCE_QUEUE, null, { retryDelay: 1 });
    await until(
      () => bosses[0]!.getJobById(MAINTENANCE_QUEUE, id!),
      (j) => j?.state === 'completed',
      30_000,
      'the retry',
    );
    expect(runs[0]! + runs[1]! - before).toBe(2);
    const job = await bosses[0]!.getJobById(MAINTENANCE_QUEUE, id!);
    expect(job!.retryCount).toBe(1);
  }, 60_000);
});

describe('serve on PostgreSQL', () => {
  let pg: TestDatabase;
  let work: string;
  beforeAll(async () => {
    pg = await freshPostgresDatabase();
    work = mkdtempSync(join(tmpdir(), 'vidq-maintenance-'));
  });
  afterAll(async () => {
    await stopAllNodes();
    await pg?.drop();
    if (work) rmSync(work, { recursive: true, force: true });
  }, 60_000);

  test('an API node schedules the maintenance on pg-boss and runs its ticks; no maintenance lease is taken', async () => {
    const node = ['--database', pg.url, '--media-dir', join(work, 'media'), '--workers', '0'];
    await spawnNode('serve', join(work, 'a'), [...node, '--maintenance-cron', '* * * * *']);
    const c = new Client({ connectionString: pg.url });
    await c.connect();
    try {
      const q = async (text: string) => (await c.query(text)).rows;
      expect(
        (await q(`SELECT cron FROM pgboss.schedule WHERE name = '${MAINTENANCE_QUEUE}'`)).map((r) => r.cron),
      ).toEqual(['* * * * *']);
      const done = await until(
        () => q(`SELECT output FROM pgboss.job WHERE name = '${MAINTENANCE_QUEUE}' AND state = 'completed'`),
        (r) => r.length >= 1,
        90_000,
        'a tick run',
      );
      expect(Object.keys(done[0]!.output).sort()).toEqual([
        'failedStuck',
        'live',
        'purgedIndexes',
        'refreshedListings',
      ]);
      expect(await q(`SELECT name FROM leases WHERE name = 'cron:maintenance'`)).toEqual([]);
    } finally {
      await c.end();
    }
  }, 120_000);
});
