/**
 * A live stream owned by one node through its lease (issue 33): two servers, the first a separate
 * process, on each form of a cluster: one data directory (the SQLite file), and one PostgreSQL
 * database with a data directory each and a shared media folder. The stream runs on the node that
 * added it, and the other refuses its pushed frames (409). After `kill -9` of the owner, the other
 * node takes the stream over within 30 s and accepts and analyses its frames; on SQLite the
 * maintenance cron's lease moves with it (the cron runs on one node at a time; on PostgreSQL
 * pg-boss's schedule hands out its ticks).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { MAINTENANCE_LEASE } from '../../src/cluster/heartbeat';
import { loadConfig } from '../../src/config';
import { type RunningServer, startServer } from '../../src/server';
import { lines } from '../../src/util/lines';
import { clipFrames, liveWorkDir, until } from '../factories';
import { freshPostgresDatabase, type TestDatabase } from '../pg';

const MAIN = join(import.meta.dir, '../../src/main.ts');

for (const dialect of ['SQLite', 'PostgreSQL'] as const)
  describe(`on ${dialect}`, () => {
    let work: string;
    let frames: string[] = [];
    let owner: ReturnType<typeof Bun.spawn> | null = null;
    let ownerUrl = '';
    let other: RunningServer;
    let token = '';
    let pg: TestDatabase | null = null;

    beforeAll(async () => {
      let ffmpeg: string;
      ({ work, ffmpeg } = await liveWorkDir(`live-takeover-${dialect}`));
      frames = await clipFrames(ffmpeg, 'bottles.mp4', work, { seconds: 3 });
      // SQLite: both nodes on one data directory. PostgreSQL: a data directory each, one database
      // and one media folder.
      if (dialect === 'PostgreSQL') pg = await freshPostgresDatabase();
      const shared = pg ? { database: pg.url, 'media-dir': join(work, 'media') } : {};
      const dataDirOf = (node: number) => join(work, pg ? `data${node}` : 'data');
      const flags = ['--data-dir', dataDirOf(1), '--port', '0', '--host', '127.0.0.1', '--analysis-workers', '0'];
      const common = ['--allow-private-urls', '--min-free-bytes', '0', '--analyzers', 'visual', '--log-level', 'error'];
      const sharedFlags = Object.entries(shared).flatMap(([k, v]) => [`--${k}`, v]);
      owner = Bun.spawn([process.execPath, MAIN, 'serve', ...flags, ...common, ...sharedFlags], {
        stdout: 'pipe',
        stderr: 'inherit',
      });
      for await (const line of lines(owner.stdout as ReadableStream<Uint8Array>)) {
        const m = /listening on (http:\/\/\S+)/.exec(line);
        if (m) {
          ownerUrl = m[1]!;
          break;
        }
      }
      token = readFileSync(join(dataDirOf(1), 'default-token.txt'), 'utf8').trim();
      other = await startServer(
        loadConfig(
          {
            'data-dir': dataDirOf(2),
            port: '0',
            host: '127.0.0.1',
            'analysis-workers': '0',
            'allow-private-urls': true,
            'min-free-bytes': '0',
            analyzers: 'visual',
            'log-level': 'error',
            ...shared,
          },
          {},
        ),
        () => {},
      );
    }, 120_000);

    afterAll(async () => {
      owner?.kill('SIGKILL');
      await other?.stop();
      await pg?.drop();
      rmSync(work, { recursive: true, force: true });
    });

    const post = async (base: string, path: string, body: unknown) => {
      const r = await fetch(base + path, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: r.status, body: (await r.json()) as any };
    };

    test('the owner runs the stream, the other node refuses its frames; after kill -9 the other takes it over within 30 s', async () => {
      expect(ownerUrl).toStartWith('http://');
      expect((await fetch(`${ownerUrl}/create-index?token=${token}&index=cam&type=performance`)).status).toBe(200);
      const added = await post(ownerUrl, '/add-stream', { token, index: 'cam', name: 'door' });
      expect(added.body.status).toBe('success');
      const id = added.body.stream_id as string;
      const t0 = Math.floor(Date.now() / 1000);
      expect((await post(ownerUrl, '/stream', { base64_image: frames[0], stream_id: id, time: t0 })).body).toEqual({
        success: true,
      });
      const refused = await post(other.url, '/stream', { base64_image: frames[1], stream_id: id, time: t0 + 1 });
      expect(refused.status).toBe(409);
      expect(JSON.stringify(refused.body)).toContain('another node');
      // The maintenance cron is the first node's too (SQLite; pg-boss's on PostgreSQL): the second does not run it.
      expect(other.service.heartbeat.holds(MAINTENANCE_LEASE)).toBe(false);

      owner!.kill('SIGKILL');
      await owner!.exited;
      owner = null;
      const killedAt = performance.now();
      await until(
        async () => (await post(other.url, '/stream', { base64_image: frames[1], stream_id: id, time: t0 + 1 })).status,
        (s) => s === 200,
        30_000,
        'the other node to take the stream over',
        500,
      );
      const tookSec = (performance.now() - killedAt) / 1000;
      console.log(`${dialect}: stream taken over ${tookSec.toFixed(1)} s after kill -9 of its node`);
      expect(tookSec).toBeLessThan(30);
      expect((await post(other.url, '/stream', { base64_image: frames[2], stream_id: id, time: t0 + 2 })).body).toEqual(
        {
          success: true,
        },
      );
      // The new owner analyses the frames (the first one, left unanalysed by the killed node, included).
      const streams = await until(
        async () => (await fetch(`${other.url}/streams?token=${token}&index=cam`)).json() as Promise<any>,
        (l) => l[0]?.frames_analysed >= 2,
        60_000,
        'the frames analysed on the new owner',
        250,
      );
      expect(streams[0].stream_id).toBe(id);
      // And on SQLite the cron goes with it (the lease lapsed at the same time as the stream's). On
      // PostgreSQL no node holds it: pg-boss's schedule hands each tick to a live node
      // (test/jobs/cluster-maintenance.test.ts).
      if (!pg)
        await until(
          () => other.service.heartbeat.holds(MAINTENANCE_LEASE),
          (held) => held,
          20_000,
          'the maintenance lease on the remaining node',
          250,
        );
    }, 180_000);
  });
