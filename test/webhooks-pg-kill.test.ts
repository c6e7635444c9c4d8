/**
 * Webhooks on PostgreSQL through a kill -9 (issue 33): an API node (`serve --database`, a separate
 * process) is killed while a delivery is in flight; another node started on the same database sends
 * the event again once the dead node's pg-boss heartbeat lapses (at least once: the receiver sees the
 * same `delivery_id` twice and accepts the second).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq, sql } from 'drizzle-orm';
import { postgresCatalog } from '../src/storage/catalog';
import { openPostgres, type PgDb } from '../src/storage/pg';
import { kill9Node, spawnNode, stopAllNodes } from './cluster/harness';
import { until } from './factories';
import { freshPostgresDatabase, type TestDatabase } from './pg';

let pg: TestDatabase;
let db: PgDb;
let work: string;
/** Deliveries received: the first is held open (never answered), the later ones accepted. */
const got: { delivery_id: number; type: string }[] = [];
let receiver: ReturnType<typeof Bun.serve>;

beforeAll(async () => {
  pg = await freshPostgresDatabase();
  db = await openPostgres(pg.url, { max: 2 });
  work = mkdtempSync(join(tmpdir(), 'vidq-webhook-kill-'));
  receiver = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      got.push((await req.json()) as { delivery_id: number; type: string });
      if (got.length === 1) await Bun.sleep(60_000); // the node holding it dies meanwhile
      return new Response('ok');
    },
  });
}, 60_000);

afterAll(async () => {
  await stopAllNodes();
  receiver?.stop(true);
  await db?.$client.end();
  await pg?.drop();
  if (work) rmSync(work, { recursive: true, force: true });
}, 60_000);

test('a delivery cut off by a kill -9 of its node is sent again by another node', async () => {
  const args = (name: string) => [
    '--database',
    pg.url,
    '--media-dir',
    join(work, 'media'),
    '--workers',
    '0',
    '--webhook-url',
    `http://127.0.0.1:${receiver.port}/hook`,
    '--webhook-retry-ms',
    '1000',
    '--data-dir',
    join(work, name),
  ];
  const first = await spawnNode('serve', join(work, 'a'), args('a'));
  // A video made ready: the trigger writes the event, the node hands it to pg-boss and delivers it.
  const c = postgresCatalog(db);
  const now = new Date();
  await c.run(async (q) => {
    await q.insert(c.t.users).values({ id: 'u_kill', name: 'kill', credits: null, createdAt: now });
    await q.insert(c.t.mediaIndexes).values({ id: 'i_kill', userId: 'u_kill', name: 'kill', createdAt: now });
    await q.insert(c.t.videos).values({
      id: 'v_kill',
      indexId: 'i_kill',
      userId: 'u_kill',
      sourceUrl: 'https://example.com/a.mp4',
      fileName: 'a.mp4',
      storagePath: 'media/v_kill/source.mp4',
      status: 'processing',
      uploadedAt: now,
      updatedAt: now,
    });
    await q.update(c.t.videos).set({ status: 'ready', updatedAt: new Date() }).where(eq(c.t.videos.id, 'v_kill'));
  });
  await until(
    () => got.length,
    (n) => n >= 1,
    30_000,
    'the first delivery',
  );
  await kill9Node(first);
  const t0 = Date.now();
  await spawnNode('serve', join(work, 'b'), args('b'));
  await until(
    () => got.length,
    (n) => n >= 2,
    60_000,
    'the delivery sent again',
  );
  const again = (Date.now() - t0) / 1000;
  expect(got.map((d) => [d.type, d.delivery_id])).toEqual([
    ['video.ready', got[0]!.delivery_id],
    ['video.ready', got[0]!.delivery_id],
  ]);
  const rows = await until(
    () => c.rows<{ state: string }>(sql`SELECT state FROM webhook_events WHERE video_id = 'v_kill'`),
    (r) => r[0]?.state === 'delivered',
    10_000,
    'the row delivered',
  );
  expect(rows.length).toBe(1);
  // The heartbeat (20 s) lapses, pg-boss's monitor (5 s) sees it, the retry waits 1–2 s.
  expect(again).toBeLessThan(45);
  console.log(`webhook sent again ${again.toFixed(1)} s after the kill -9`);
}, 150_000);
