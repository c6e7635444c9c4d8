/**
 * The heartbeat (issue 33) on both dialects: nodes register and leave, a lease held by a node that
 * stops beating is taken over by another within the grace plus one beat (`gained` there, `lost`
 * on the old holder when it comes back), and a restarted process removes its dead predecessor on
 * the same host at once. The clock is the test's.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Heartbeat, MAINTENANCE_LEASE } from '../../src/cluster/heartbeat';
import { clusterHealth } from '../../src/cluster/health';
import { createLogger } from '../../src/log';
import { jobCounts } from '../../src/storage/repositories/jobs';
import { takeLease } from '../../src/storage/repositories/leases';
import { listNodes, registerNode } from '../../src/storage/repositories/nodes';
import { DIALECTS, type TwoNodes } from '../dialects';

const log = createLogger('error');
let clock = 1_800_000_000_000;
const now = () => new Date(clock);
/** Beats come only from the test (the timer's interval is an hour). */
const node = (catalog: TwoNodes['a'], host: string, role: 'api' | 'worker' | 'all' = 'all') =>
  new Heartbeat({ catalog, role, log, host, now, intervalMs: 3_600_000, graceMs: 15_000, jobs: () => 2 });

for (const dialect of DIALECTS)
  describe(`heartbeat on ${dialect.name}`, () => {
    let o: TwoNodes;
    beforeAll(async () => {
      o = await dialect.open();
    });
    afterAll(() => o?.close());

    test('nodes register, are listed while they beat, and leave on stop', async () => {
      const api = node(o.a, 'api-1', 'api');
      const worker = node(o.b, 'worker-1', 'worker');
      await api.start();
      await worker.start();
      let seen = await api.nodes();
      expect(seen.map((n) => [n.host, n.role, n.jobs]).sort()).toEqual([
        ['api-1', 'api', 2],
        ['worker-1', 'worker', 2],
      ]);
      // The worker stops beating: after the grace it is gone from the list (its row stays, for `vidq nodes`).
      clock += 16_000;
      await api.beat();
      seen = await api.nodes();
      expect(seen.map((n) => n.host)).toEqual(['api-1']);
      const health = await clusterHealth({ catalog: o.a, queue: { counts: () => jobCounts(o.a) }, heartbeat: api });
      expect(health).toMatchObject({
        database: dialect.name === 'SQLite' ? 'sqlite' : 'postgres',
        queue: { waiting: 0, active: 0, failed: 0 },
        node: api.id,
      });
      expect(health.nodes).toEqual([
        {
          id: api.id,
          host: 'api-1',
          role: 'api',
          version: expect.any(String),
          started_at: expect.any(String),
          last_seen: new Date(clock).toISOString(),
          jobs: 2,
        },
      ]);
      await worker.stop();
      await api.stop();
      expect(await listNodes(o.a)).toEqual([]);
    });

    test('a lease moves to another node within grace + one beat after its holder stops beating', async () => {
      const a = node(o.a, 'host-a');
      const b = node(o.b, 'host-b');
      await a.start();
      await b.start();
      const events: string[] = [];
      const handlers = (n: string) => ({
        gained: () => events.push(`${n} gained`),
        lost: () => events.push(`${n} lost`),
      });
      expect(await a.want('stream:s1', handlers('a'), true)).toBe(true);
      expect(await b.want('stream:s1', handlers('b'), true)).toBe(false);
      expect(events).toEqual(['a gained']);
      // Both beat for a while: a keeps it.
      for (let i = 0; i < 4; i++) {
        clock += 5_000;
        await a.beat();
        await b.beat();
      }
      expect(a.holds('stream:s1')).toBe(true);
      expect(b.holds('stream:s1')).toBe(false);
      // a freezes (a lost network, kill -9): b's beats take it once the lease lapsed, within 20 s.
      const frozenAt = clock;
      while (!b.holds('stream:s1')) {
        clock += 5_000;
        await b.beat();
        expect(clock - frozenAt).toBeLessThanOrEqual(20_000);
      }
      expect(events).toEqual(['a gained', 'b gained']);
      // a comes back: its next beat finds the lease gone and stops the work.
      await a.beat();
      expect(a.holds('stream:s1')).toBe(false);
      expect(events).toEqual(['a gained', 'b gained', 'a lost']);
      // Unwanted: released at once, so a (which still wants it) takes it on its next beat.
      await b.unwant('stream:s1');
      clock += 1_000;
      await a.beat();
      expect(a.holds('stream:s1')).toBe(true);
      await a.stop();
      await b.stop();
    });

    test('a restarted process on the same host removes its dead predecessor and takes its leases at once', async () => {
      // The predecessor: this process's pid on this host, started before this process (a restarted
      // container), or a pid that is gone.
      const dead = { version: '0', startedAt: now(), lastSeen: now(), jobs: 0, role: 'all' as const };
      const beforeThisProcess = new Date(Date.now() - process.uptime() * 1000 - 60_000);
      await registerNode(o.a, {
        ...dead,
        id: 'node_old1',
        host: 'box',
        pid: process.pid,
        startedAt: beforeThisProcess,
      });
      // Another node of this very process (started after it): alive.
      await registerNode(o.a, { ...dead, id: 'node_twin', host: 'box', pid: process.pid, startedAt: new Date() });
      await registerNode(o.a, { ...dead, id: 'node_old2', host: 'box', pid: 2 ** 22 + 7 });
      await registerNode(o.a, { ...dead, id: 'node_other', host: 'elsewhere', pid: process.pid });
      expect(await takeLease(o.a, MAINTENANCE_LEASE, 'node_old1', 15_000, now())).toBe(true);
      const fresh = node(o.b, 'box');
      await fresh.start();
      expect(await fresh.want(MAINTENANCE_LEASE, {}, true)).toBe(true);
      expect((await listNodes(o.a)).map((n) => n.id).sort()).toEqual([fresh.id, 'node_other', 'node_twin'].sort());
      await fresh.stop();
    });
  });
