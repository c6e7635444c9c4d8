/**
 * The cluster's tables (issue 33) on both dialects: nodes (register, heartbeat, list, prune) and
 * leases (taken by one node at a time, renewed, taken over after expiry, released), including two
 * catalogs racing for the same lease (on PostgreSQL: two pools, as two nodes).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import {
  currentLease,
  currentLeases,
  releaseLease,
  releaseLeasesOf,
  takeLease,
} from '../../src/storage/repositories/leases';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataDir } from '../../src/storage/files';
import {
  catalogIdentity,
  listNodes,
  nodeSeen,
  pruneNodes,
  registerNode,
  removeNode,
  touchNode,
} from '../../src/storage/repositories/nodes';
import { DIALECTS, type TwoNodes } from '../dialects';

const at = (ms: number) => new Date(1_800_000_000_000 + ms);

for (const dialect of DIALECTS)
  describe(`cluster tables on ${dialect.name}`, () => {
    let o: TwoNodes;
    beforeAll(async () => {
      o = await dialect.open();
    });
    afterAll(() => o?.close());

    test('nodes: registered, seen by their heartbeat, listed by recency, removed and pruned', async () => {
      const base = { version: '0.1.0', pid: 1, jobs: 0 };
      await registerNode(o.a, { ...base, id: 'n_api', host: 'api-1', role: 'api', startedAt: at(0), lastSeen: at(0) });
      await registerNode(o.b, { ...base, id: 'n_w1', host: 'w-1', role: 'worker', startedAt: at(1), lastSeen: at(1) });
      await registerNode(o.b, { ...base, id: 'n_w2', host: 'w-2', role: 'worker', startedAt: at(2), lastSeen: at(2) });
      expect(await touchNode(o.b, 'n_w1', at(20_000), 2)).toBe(true);
      expect(await touchNode(o.b, 'n_missing', at(20_000), 0)).toBe(false);

      const all = await listNodes(o.a);
      expect(all.map((n) => n.id)).toEqual(['n_api', 'n_w1', 'n_w2']);
      expect(all[1]).toMatchObject({ host: 'w-1', role: 'worker', jobs: 2, version: '0.1.0', pid: 1 });
      expect(all[1]!.lastSeen.getTime()).toBe(at(20_000).getTime());
      expect(all[0]!.startedAt).toBeInstanceOf(Date);

      expect((await listNodes(o.a, at(10_000))).map((n) => n.id)).toEqual(['n_w1']);
      expect(await nodeSeen(o.a, 'n_w1', at(10_000))).toBe(true);
      expect(await nodeSeen(o.a, 'n_w2', at(10_000))).toBe(false);

      // Registering again (a pruned node's heartbeat) keeps one row.
      await registerNode(o.a, {
        ...base,
        id: 'n_w1',
        host: 'w-1',
        role: 'worker',
        startedAt: at(1),
        lastSeen: at(21_000),
      });
      expect((await listNodes(o.a)).filter((n) => n.id === 'n_w1')).toHaveLength(1);

      await removeNode(o.a, 'n_api');
      expect(await pruneNodes(o.a, at(10_000))).toBe(1); // n_w2
      expect((await listNodes(o.b)).map((n) => n.id)).toEqual(['n_w1']);
      await removeNode(o.a, 'n_w1');
    });

    test('leases: one holder at a time; renewed by it, taken over after expiry, released', async () => {
      expect(await takeLease(o.a, 'cron:maintenance', 'A', 15_000, at(0))).toBe(true);
      expect(await takeLease(o.b, 'cron:maintenance', 'B', 15_000, at(1_000))).toBe(false);
      // The holder renews; the time it took the lease stays.
      expect(await takeLease(o.a, 'cron:maintenance', 'A', 15_000, at(10_000))).toBe(true);
      expect(await takeLease(o.b, 'cron:maintenance', 'B', 15_000, at(20_000))).toBe(false);
      const held = await currentLease(o.b, 'cron:maintenance', at(20_000));
      expect(held).toMatchObject({ holder: 'A' });
      expect(held!.takenAt.getTime()).toBe(at(0).getTime());
      expect(held!.expiresAt.getTime()).toBe(at(25_000).getTime());

      // A stops renewing: after expiry B takes it over, and A can no longer renew.
      expect(await currentLease(o.b, 'cron:maintenance', at(25_001))).toBeUndefined();
      expect(await takeLease(o.b, 'cron:maintenance', 'B', 15_000, at(25_001))).toBe(true);
      expect(await takeLease(o.a, 'cron:maintenance', 'A', 15_000, at(26_000))).toBe(false);
      const taken = await currentLease(o.a, 'cron:maintenance', at(26_000));
      expect(taken).toMatchObject({ holder: 'B' });
      expect(taken!.takenAt.getTime()).toBe(at(25_001).getTime());

      // Only the holder releases; then anyone takes it at once.
      expect(await releaseLease(o.a, 'cron:maintenance', 'A')).toBe(false);
      expect(await releaseLease(o.b, 'cron:maintenance', 'B')).toBe(true);
      expect(await takeLease(o.a, 'cron:maintenance', 'A', 15_000, at(27_000))).toBe(true);

      // By prefix; a node's clean stop releases all of its leases.
      expect(await takeLease(o.a, 'stream:ls_1', 'A', 15_000, at(27_000))).toBe(true);
      expect(await takeLease(o.b, 'stream:ls_2', 'B', 15_000, at(27_000))).toBe(true);
      expect(await takeLease(o.b, 'stream_x', 'B', 15_000, at(27_000))).toBe(true);
      const streams = await currentLeases(o.a, 'stream:', at(28_000));
      expect(streams.map((l) => [l.name, l.holder])).toEqual([
        ['stream:ls_1', 'A'],
        ['stream:ls_2', 'B'],
      ]);
      expect(await releaseLeasesOf(o.a, 'A')).toBe(2);
      expect((await currentLeases(o.a, '', at(28_000))).map((l) => l.holder)).toEqual(['B', 'B']);
    });

    test('leases: two nodes racing for one lease, 30 times: exactly one wins each', async () => {
      for (let i = 0; i < 30; i++) {
        const now = new Date();
        const [x, y] = await Promise.all([
          takeLease(o.a, `race:${i}`, 'A', 15_000, now),
          takeLease(o.b, `race:${i}`, 'B', 15_000, now),
        ]);
        expect(Number(x) + Number(y)).toBe(1);
      }
    });

    test('the catalog keeps one id: nodes with data directories of their own claim one shared media folder', async () => {
      const first = await catalogIdentity(o.a, 'id_of_node_a');
      expect(first).toBe('id_of_node_a');
      expect(await catalogIdentity(o.b, 'id_of_node_b')).toBe('id_of_node_a');
      const tmp = mkdtempSync(join(tmpdir(), 'vidq-shared-media-'));
      try {
        const media = join(tmp, 'media-share');
        const a = new DataDir(join(tmp, 'a'), media);
        const b = new DataDir(join(tmp, 'b'), media);
        a.ensure();
        b.ensure();
        expect(a.claimMediaRoot(await catalogIdentity(o.a, a.localCatalogId()))).toBeNull();
        expect(b.claimMediaRoot(await catalogIdentity(o.b, b.localCatalogId()))).toBeNull();
        // Another catalog's node is still refused.
        expect(b.claimMediaRoot('id_of_another_catalog')).toContain('holds the media of another vidq catalog');
      } finally {
        rmSync(tmp, { recursive: true, force: true });
      }
    });
  });
