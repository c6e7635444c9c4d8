/**
 * The pg-boss queue across processes, on a real PostgreSQL (test/pg.ts, never skipped): two
 * consumer processes never get the same job, and a job whose consumer is killed with -9 is handed
 * to another within 30 s (its heartbeat lapses; pg-boss's monitor puts it back).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Subprocess } from 'bun';
import { openPgBossQueue, type PgBossJobQueue } from '../../src/jobs/pg-boss-queue';
import { type Catalog, postgresCatalog } from '../../src/storage/catalog';
import { openPostgres, type PgDb } from '../../src/storage/pg';
import { freshPostgresDatabase, type TestDatabase } from '../pg';
import { lines } from '../../src/util/lines';
import { segmentsOfVideo, videoToAnalyse } from '../../src/storage/repositories/analysis';
import { addUser, addVideo } from './queue-fixtures';

let pg: TestDatabase;
let db: PgDb;
let c: Catalog;
let q: PgBossJobQueue;
const procs: Subprocess[] = [];
const mediaRoot = mkdtempSync(join(tmpdir(), 'vidq-consumers-'));

beforeAll(async () => {
  pg = await freshPostgresDatabase();
  db = await openPostgres(pg.url);
  c = postgresCatalog(db);
  q = await openPgBossQueue(pg.url, c, { heartbeatSec: 10, monitorSec: 1, retryDelaySec: 1 });
  for (const u of ['a', 'b', 'c']) await addUser(c, u);
});

afterAll(async () => {
  for (const p of procs) p.kill(9);
  await q.close();
  await db.$client.end();
  await pg.drop();
  rmSync(mediaRoot, { recursive: true, force: true });
});

interface Line {
  event: string;
  name: string;
  videoId?: string;
  attempts?: number;
  t: number;
}

/** A consumer process; its lines are collected into `seen`. */
function consumer(mode: 'work' | 'hold' | 'pipeline' | 'pipeline-hold', name: string, seen: Line[]): Subprocess {
  const p = Bun.spawn([process.execPath, 'test/jobs/pg-consumer.ts', pg.url, mode, name, mediaRoot], {
    stdout: 'pipe',
    stderr: 'inherit',
  });
  procs.push(p);
  (async () => {
    for await (const l of lines(p.stdout as ReadableStream<Uint8Array>)) {
      try {
        seen.push(JSON.parse(l));
      } catch {}
    }
  })();
  return p;
}

async function until(what: string, ok: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const t = Date.now();
  while (!(await ok())) {
    if (Date.now() - t > ms) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(100);
  }
}

const doneCount = async () => (await q.counts()).waiting + (await q.counts()).active;

test('two consumer processes never get the same job', async () => {
  const ids: string[] = [];
  for (let i = 0; i < 30; i++) {
    const id = `v${i}`;
    ids.push(id);
    await addVideo(c, q, id, ['a', 'b', 'c'][i % 3]!, 10 + (i % 5) * 300);
  }
  const seen: Line[] = [];
  const [p1, p2] = [consumer('work', 'one', seen), consumer('work', 'two', seen)];
  await until('every job done', async () => (await doneCount()) === 0, 60_000);
  p1.kill(9);
  p2.kill(9);
  const claims = seen.filter((l) => l.event === 'claimed');
  // Each video claimed once, by one of them, and finished by it.
  expect(claims.map((l) => l.videoId).sort()).toEqual([...ids].sort());
  expect(seen.filter((l) => l.event === 'finished').length).toBe(30);
  expect(seen.filter((l) => l.event === 'lost').length).toBe(0);
  const by = (n: string) => claims.filter((l) => l.name === n).length;
  console.log(`claims: one ${by('one')}, two ${by('two')}`);
  for (const id of ids) expect((await q.get(id))!.state).toBe('done');
}, 90_000);

test('a job whose consumer is killed with -9 is handed to another within 30 s', async () => {
  await addVideo(c, q, 'k1', 'a', 60);
  const seen: Line[] = [];
  const holder = consumer('hold', 'holder', seen);
  await until('the holder claims', () => seen.some((l) => l.event === 'claimed' && l.videoId === 'k1'), 30_000);
  holder.kill(9);
  const killedAt = Date.now();
  const heir = consumer('work', 'heir', seen);
  await until(
    'the heir claims',
    () => seen.some((l) => l.name === 'heir' && l.event === 'claimed' && l.videoId === 'k1'),
    40_000,
  );
  const handed = seen.find((l) => l.name === 'heir' && l.event === 'claimed')!;
  const after = handed.t - killedAt;
  console.log(`job handed over ${(after / 1000).toFixed(1)} s after kill -9 (heartbeat 10 s, monitor 1 s)`);
  expect(after).toBeLessThan(30_000);
  expect(handed.attempts).toBe(2);
  await until('the video done', async () => (await q.get('k1'))?.state === 'done', 10_000);
  heir.kill(9);
}, 90_000);

test('the pipeline killed with -9 in its second stage: another worker resumes there, and the segments are those of one run', async () => {
  const id = 'killedinthesecondstagexxxxxxxxxx';
  await addVideo(c, q, id, 'b', 30);
  // The stored original the pipeline checks for (the stand-in stages do not read it).
  mkdirSync(join(mediaRoot, 'media', id), { recursive: true });
  writeFileSync(join(mediaRoot, 'media', id, 'source.mp4'), '');
  const seen: Line[] = [];
  const holder = consumer('pipeline-hold', 'holder2', seen);
  await until('the holder in its second stage', () => seen.some((l) => l.event === 'in-second-stage'), 30_000);
  holder.kill(9);
  const killedAt = Date.now();
  // The first stage's output is stored; the second's is not.
  expect((await segmentsOfVideo(c, id)).map((s) => s.kind)).toEqual(['shot', 'shot', 'shot']);
  consumer('pipeline', 'heir2', seen);
  await until('the video ready', async () => (await q.get(id))?.state === 'done', 40_000);
  const heir = seen.find((l) => l.name === 'heir2' && l.event === 'claimed') as Line & { stage: string };
  console.log(`pipeline resumed ${((heir.t - killedAt) / 1000).toFixed(1)} s after kill -9, at ${heir.stage}`);
  expect(heir.t - killedAt).toBeLessThan(30_000);
  expect(heir.stage).toBe('analyzing:ocr');
  expect(heir.attempts).toBe(2);
  const segs = await segmentsOfVideo(c, id);
  expect(segs.map((s) => `${s.kind} ${s.text}`).sort()).toEqual(
    ['ocr ocr 0', 'ocr ocr 1', 'shot shot 0', 'shot shot 1', 'shot shot 2'].sort(),
  );
  const v = (await videoToAnalyse(c, id))!;
  expect(v.status).toBe('ready');
  expect(Object.keys(v.analysis!).sort()).toEqual(['ocr', 'shots']);
  expect(seen.filter((l) => l.event === 'finished' && l.videoId === id).length).toBe(1);
}, 90_000);
