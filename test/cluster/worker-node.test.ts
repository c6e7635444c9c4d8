/**
 * `serve --workers 0` and `vidq worker` on one data directory (issue 33, the SQLite form): the API
 * node queues an uploaded clip without analysing it, a separate `vidq worker` process analyses it,
 * the API node's listing shows it ready (it reads the changes of the other node), and both nodes
 * are in GET /health and `vidq nodes`; the worker leaves the list when it stops. A server that
 * starts while another node is alive leaves the other's running work alone.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config';
import { type RunningServer, startServer } from '../../src/server';
import { registerNode, removeNode } from '../../src/storage/repositories/nodes';
import { getJson, postJson, startOrigin, type Origin } from '../helpers';

const MAIN = join(import.meta.dir, '../../src/main.ts');
let dataDir: string;
let server: RunningServer;
let origin: Origin;
let token: string;
let worker: ReturnType<typeof Bun.spawn> | null = null;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'vidq-worker-node-'));
  origin = startOrigin();
  const config = loadConfig(
    {
      'data-dir': dataDir,
      port: '0',
      host: '127.0.0.1',
      'allow-private-urls': true,
      'log-level': 'error',
      'min-free-bytes': '0',
      'analysis-workers': '0',
      analyzers: 'visual',
    },
    {},
  );
  server = await startServer(config, () => {}, undefined, { role: 'api' });
  token = (await server.service.accounts.createUser('tester', null)).token;
});
afterAll(async () => {
  worker?.kill('SIGKILL');
  await server?.stop();
  origin?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const nodesCli = () => {
  const p = Bun.spawnSync([process.execPath, MAIN, 'nodes', '--json', '--data-dir', dataDir, '--log-level', 'error']);
  return JSON.parse(p.stdout.toString());
};

test('an API-only node queues, a worker node analyses, the API node shows it ready; both are listed', async () => {
  const up = await postJson(server.url, '/remote-upload', {
    token,
    index: 'clips',
    url: `${origin.url}/media/bottles.mp4`,
  });
  expect(up.status).toBe(200);
  // Queued, and no node analyses it yet.
  await Bun.sleep(1500);
  expect(
    String(JSON.stringify(await getJson(server.url, `/index-resources?token=${token}&index=clips`))),
  ).not.toContain('"ready"');
  expect((await getJson(server.url, '/health')).body.cluster.queue.waiting).toBe(1);

  worker = Bun.spawn(
    [
      process.execPath,
      MAIN,
      'worker',
      '--data-dir',
      dataDir,
      '--workers',
      '1',
      '--analyzers',
      'visual',
      '--log-level',
      'error',
    ],
    { stdout: 'pipe', stderr: 'inherit' },
  );
  const t0 = performance.now();
  let listed = '';
  for (let i = 0; i < 1200 && !listed.includes('"ready"'); i++) {
    await Bun.sleep(250);
    listed = JSON.stringify((await getJson(server.url, `/index-resources?token=${token}&index=clips`)).body);
  }
  expect(listed).toContain('"ready"');
  console.log(`ready on the API node ${((performance.now() - t0) / 1000).toFixed(1)} s after the worker node started`);

  const health = (await getJson(server.url, '/health')).body.cluster;
  expect(health.database).toBe('sqlite');
  expect(health.nodes.map((n: any) => n.role).sort()).toEqual(['api', 'worker']);
  const cli = nodesCli();
  expect(cli.nodes.map((n: any) => n.role).sort()).toEqual(['api', 'worker']);
  expect(cli.nodes.every((n: any) => n.alive)).toBe(true);

  // A clean stop leaves the list at once.
  worker.kill('SIGTERM');
  await worker.exited;
  worker = null;
  expect((await getJson(server.url, '/health')).body.cluster.nodes.map((n: any) => n.role)).toEqual(['api']);
}, 300_000);

test("a server that starts while another node works on its catalog leaves that node's running job alone", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vidq-recovery-others-'));
  const config = loadConfig(
    { 'data-dir': dir, port: '0', host: '127.0.0.1', 'log-level': 'error', 'analysis-workers': '0' },
    {},
  );
  try {
    // A video being analysed by a worker of another node (the job claimed, its node beating).
    let s = await startServer(config, () => {});
    const { user } = await s.service.accounts.createUser('u', null);
    const c = s.service.catalog;
    const { mediaIndexes, videos } = c.t;
    const now = new Date();
    await c.run(async (db) => {
      await db.insert(mediaIndexes).values({ id: 'i_1', userId: user.id, name: 'x', createdAt: now });
      await db.insert(videos).values({
        id: 'v_1',
        indexId: 'i_1',
        userId: user.id,
        sourceUrl: 'https://example.com/a.mp4',
        fileName: 'a.mp4',
        storagePath: 'media/v_1/source.mp4',
        status: 'processing',
        uploadedAt: now,
        updatedAt: now,
      });
    });
    await s.service.queue.enqueue('v_1');
    expect((await s.service.queue.claim('w_999999_x'))?.videoId).toBe('v_1');
    await s.stop();
    const other = { version: '0', pid: 1, jobs: 1, role: 'worker' as const, startedAt: new Date() };
    await registerNode(c, { ...other, id: 'node_elsewhere', host: 'elsewhere', lastSeen: new Date() });

    s = await startServer(config, () => {});
    expect((await s.service.queue.get('v_1'))?.state).toBe('running');
    await s.stop();
    // Alone again (the other node gone): the start puts the job back in line.
    await removeNode(s.service.catalog, 'node_elsewhere');
    s = await startServer(config, () => {});
    expect((await s.service.queue.get('v_1'))?.state).toBe('pending');
    await s.stop();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
