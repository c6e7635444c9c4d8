/**
 * Video-change invalidation across API nodes (issue 33) on a real PostgreSQL: two nodes, each with
 * its VideoChanges and a LISTEN relay; a change on one reaches the other's caches within 2 s, and
 * never comes back to the node that made it.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../src/storage/db';
import { sqliteCatalog } from '../../src/storage/catalog';
import { openVideoChangeRelay, type VideoChangeRelay } from '../../src/storage/notify';
import { type VideoPlace, VideoChanges } from '../../src/videos/changes';
import { freshPostgresDatabase, type TestDatabase } from '../pg';

let pg: TestDatabase;
let dir: string;
const relays: VideoChangeRelay[] = [];

beforeAll(async () => {
  pg = await freshPostgresDatabase();
  dir = mkdtempSync(join(tmpdir(), 'vidq-notify-'));
});
afterAll(async () => {
  await Promise.all(relays.map((r) => r.close()));
  await pg.drop();
  rmSync(dir, { recursive: true, force: true });
});

/** A node: its change hub (the SQLite file only answers placeOf, unused when a place is given) and its relay. */
async function node(name: string): Promise<{ changes: VideoChanges; heard: [string, VideoPlace | null][] }> {
  const changes = new VideoChanges(sqliteCatalog(openDatabase(join(dir, `${name}.db`))));
  const heard: [string, VideoPlace | null][] = [];
  changes.subscribe((id, place) => heard.push([id, place]));
  const relay = await openVideoChangeRelay({
    url: pg.url,
    node: name,
    onChange: (c) => changes.fromOtherNode(c.videoId, c.place),
  });
  relays.push(relay);
  changes.relayTo((videoId, place) => relay.publish({ videoId, place }));
  return { changes, heard };
}

async function until(cond: () => boolean, ms: number): Promise<number> {
  const t0 = performance.now();
  while (!cond()) {
    if (performance.now() - t0 > ms) throw new Error(`not within ${ms} ms`);
    await Bun.sleep(10);
  }
  return performance.now() - t0;
}

test('a change on one node reaches the other within 2 s, once, and is not echoed back', async () => {
  const a = await node('node_a');
  const b = await node('node_b');
  const place = { userId: 'u_1', indexId: 'i_1' };
  a.changes.changed('v_1', place);
  expect(a.heard).toEqual([['v_1', place]]);
  const took = await until(() => b.heard.length > 0, 2_000);
  expect(b.heard).toEqual([['v_1', place]]);
  console.log(`a video change reached the other node in ${Math.round(took)} ms`);

  // Many changes of a few videos in a burst: each video arrives (batched, not once per tick).
  for (let i = 0; i < 500; i++) b.changes.changed(`v_${i % 7}`, place);
  await until(() => new Set(a.heard.map(([id]) => id)).size === 7, 2_000);
  await Bun.sleep(300);
  expect(a.heard.length).toBeLessThan(50);
  // Nothing came back to b from its own changes: a's one and its own 500.
  expect(b.heard).toHaveLength(1 + 500);
});

test('a large burst of distinct videos is split under the payload limit and all arrive', async () => {
  const a = await node('node_c');
  const b = await node('node_d');
  for (let i = 0; i < 1000; i++) a.changes.changed(`v_burst_${i}_${'x'.repeat(40)}`, { userId: 'u', indexId: 'i' });
  await until(() => new Set(b.heard.map(([id]) => id)).size === 1000, 2_000);
});
