/**
 * `vidq nodes` on the PostgreSQL catalog (issue 33): the command opens the catalog alone
 * (--database), lists the nodes seen within the grace, and with --all the gone ones too.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postgresCatalog } from '../../src/storage/catalog';
import { openPostgres, type PgDb } from '../../src/storage/pg';
import { registerNode } from '../../src/storage/repositories/nodes';
import { freshPostgresDatabase, type TestDatabase } from '../pg';

const MAIN = join(import.meta.dir, '../../src/main.ts');
let pg: TestDatabase;
let db: PgDb;
let dataDir: string;

beforeAll(async () => {
  pg = await freshPostgresDatabase();
  db = await openPostgres(pg.url, { max: 2 });
  dataDir = mkdtempSync(join(tmpdir(), 'vidq-nodes-cli-'));
});
afterAll(async () => {
  await db.$client.end();
  await pg.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

const nodes = (...extra: string[]) => {
  const p = Bun.spawnSync([process.execPath, MAIN, 'nodes', '--database', pg.url, '--data-dir', dataDir, ...extra]);
  expect(p.exitCode).toBe(0);
  return p.stdout.toString();
};

test('vidq nodes lists the PostgreSQL catalog nodes: alive by default, gone ones with --all', async () => {
  const c = postgresCatalog(db);
  const base = { version: '0.1.0', jobs: 0, startedAt: new Date() };
  await registerNode(c, { ...base, id: 'node_api', host: 'api1', role: 'api', pid: 10, lastSeen: new Date() });
  await registerNode(c, {
    ...base,
    id: 'node_w1',
    host: 'work1',
    role: 'worker',
    pid: 11,
    jobs: 2,
    lastSeen: new Date(),
  });
  await registerNode(c, {
    ...base,
    id: 'node_gone',
    host: 'work2',
    role: 'worker',
    pid: 12,
    lastSeen: new Date(Date.now() - 60_000),
  });
  const listed = JSON.parse(nodes('--json'));
  expect(listed.database).toBe('postgres');
  expect(listed.nodes.map((n: any) => [n.host, n.role, n.jobs, n.alive])).toEqual([
    ['api1', 'api', 0, true],
    ['work1', 'worker', 2, true],
  ]);
  const all = JSON.parse(nodes('--json', '--all'));
  expect(all.nodes.map((n: any) => [n.host, n.alive]).sort()).toEqual([
    ['api1', true],
    ['work1', true],
    ['work2', false],
  ]);
  const table = nodes('--all');
  expect(table.split('\n')[0]).toMatch(/^NODE\s+HOST\s+ROLE\s+VERSION\s+PID\s+JOBS\s+LAST SEEN\s+STATE$/);
  expect(table).toContain('gone');
});
