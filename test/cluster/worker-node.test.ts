/**
 * `serve --workers 0` and `vidq worker` on one data directory (issue 33, the SQLite form): the API
 * node queues an uploaded clip without analysing it, a separate `vidq worker` process analyses it,
 * the API node's listing shows it ready (it reads the changes of the other node), and both nodes
 * are in GET /health and `vidq nodes`; the worker leaves the list when it stops.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config';
import { type RunningServer, startServer } from '../../src/server';
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
