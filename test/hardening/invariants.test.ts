/**
 * The invariant checker itself, on both dialects: a video analysed through the real queue (claim,
 * a stage's output stored with the move to the next stage, finish) is healthy; then the faults the
 * kill -9 scenarios must never leave are made by hand, and the checker names each: a segment
 * duplicated, a stage's segments lost, a video analysed to completion twice (a second
 * `video.ready`, and on PostgreSQL a second pg-boss completion).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { and, eq } from 'drizzle-orm';
import { openPgBossQueue } from '../../src/jobs/pg-boss-queue';
import { type JobQueue, SqliteJobQueue } from '../../src/jobs/queue';
import { type Catalog, postgresCatalog, sqliteCatalog } from '../../src/storage/catalog';
import { openDatabase } from '../../src/storage/db';
import { openPostgres } from '../../src/storage/pg';
import { storeStageOutput } from '../../src/storage/repositories/analysis';
import { freshPostgresDatabase } from '../pg';
import { writeCatalog } from './fixtures';
import { checkInvariants, type Place } from './invariants';

interface Opened {
  place: Place;
  catalog: Catalog;
  queue: JobQueue;
  close(): Promise<void>;
}

const DIALECTS: { name: string; open(dir: string): Promise<Opened> }[] = [
  {
    name: 'SQLite',
    async open(dir) {
      const db = openDatabase(join(dir, 'vidq.db'));
      const catalog = sqliteCatalog(db);
      return {
        place: { dataDir: dir },
        catalog,
        queue: new SqliteJobQueue(catalog),
        close: async () => db.$client.close(),
      };
    },
  },
  {
    name: 'PostgreSQL',
    async open(dir) {
      const pg = await freshPostgresDatabase();
      const db = await openPostgres(pg.url, { max: 4 });
      const catalog = postgresCatalog(db);
      const queue = await openPgBossQueue(pg.url, catalog);
      return {
        place: { dataDir: dir, database: pg.url },
        catalog,
        queue,
        close: async () => {
          await queue.close();
          await db.$client.end();
          await pg.drop();
        },
      };
    },
  },
];

const VIDEO = 'V'.repeat(32);
const SHOTS = [
  { kind: 'shot' as const, start: 0, end: 4, text: 'shot 1 of 2' },
  { kind: 'shot' as const, start: 4, end: 9.6, text: 'shot 2 of 2' },
];

for (const dialect of DIALECTS)
  describe(`the invariant checker on ${dialect.name}`, () => {
    let dir: string;
    let o: Opened;
    /** Sorted, to compare as a set. */
    const violations = async () => (await checkInvariants(o.place)).violations.sort();

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'vidq-inv-'));
      o = await dialect.open(dir);
      const c = o.catalog;
      const now = new Date();
      await c.run(async (db) => {
        await db.insert(c.t.users).values({ id: 'u1', name: 'u', credits: null, createdAt: now });
        await db.insert(c.t.mediaIndexes).values({ id: 'i1', userId: 'u1', name: 'inv', createdAt: now });
        await db.insert(c.t.videos).values({
          id: VIDEO,
          indexId: 'i1',
          userId: 'u1',
          sourceUrl: 'upload:',
          fileName: 'a.mp4',
          storagePath: `media/${VIDEO}/source.mp4`,
          durationSec: 9.6,
          status: 'processing',
          uploadedAt: now,
          updatedAt: now,
        });
      });
      mkdirSync(join(dir, 'media', VIDEO, 'frames'), { recursive: true });
      writeFileSync(join(dir, 'media', VIDEO, 'source.mp4'), 'not read');
      writeFileSync(join(dir, 'media', VIDEO, 'frames', 'f1.jpg'), 'not read');
      // The real path: queued, claimed, the visual stage's output stored with the move on, finished.
      await o.queue.enqueue(VIDEO);
      const job = await o.queue.claim('w_1_a');
      expect(job?.videoId).toBe(VIDEO);
      expect(
        await o.queue.advance(VIDEO, 'w_1_a', 'finalizing', 90, (tx) =>
          storeStageOutput(tx, VIDEO, {
            kinds: ['shot'],
            segments: SHOTS,
            frames: [{ t: 1, shot: 0, file: 'f1.jpg' }],
            key: 'shots',
            summary: { shots: 2, frames: 1, producer: 'test' },
          }),
        ),
      ).toBe(true);
      expect(await o.queue.finish(VIDEO, 'w_1_a')).toBe(true);
      await o.queue.release(VIDEO, 'w_1_a');
    }, 60_000);

    afterAll(async () => {
      await o?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    test('a video analysed once, through the queue, is healthy', async () => {
      expect(await violations()).toEqual([]);
    });

    test('a duplicated segment is named, twice over: as a duplicate and against the stage’s count', async () => {
      const c = o.catalog;
      await c.run(async (db) => {
        await db.insert(c.t.segments).values({ videoId: VIDEO, ...SHOTS[0]! });
      });
      expect(await violations()).toEqual([
        `duplicate segment x2: ${VIDEO} shot 0-4 "shot 1 of 2"`,
        `video ${VIDEO} (ready): the shots stage stored 2 shot rows, the catalog has 3`,
      ]);
      await writeCatalog(o.place, 'DELETE FROM segments WHERE id = (SELECT max(id) FROM segments)');
      expect(await violations()).toEqual([]);
    });

    test('a lost segment is named against the stage’s count', async () => {
      const c = o.catalog;
      await c.run(async (db) => {
        await db.delete(c.t.segments).where(and(eq(c.t.segments.videoId, VIDEO), eq(c.t.segments.start, 4)));
      });
      expect(await violations()).toEqual([
        `video ${VIDEO} (ready): the shots stage stored 2 shot rows, the catalog has 1`,
      ]);
      await c.run(async (db) => {
        await db.insert(c.t.segments).values({ videoId: VIDEO, ...SHOTS[1]! });
      });
      expect(await violations()).toEqual([]);
    });

    test('a video announced ready twice is named', async () => {
      const c = o.catalog;
      const event = {
        userId: 'u1',
        indexId: 'i1',
        videoId: VIDEO,
        event: 'video.ready',
        fileName: 'a.mp4',
        status: 'ready',
        url: 'http://127.0.0.1:9/hook',
        createdAt: new Date(),
        nextAttemptAt: new Date(),
      };
      await c.run(async (db) => {
        await db.insert(c.t.webhookEvents).values([event, event]);
      });
      expect(await violations()).toEqual([`video ${VIDEO} was announced ready 2 times (video.ready webhook events)`]);
      await writeCatalog(o.place, 'DELETE FROM webhook_events');
    });

    if (dialect.name === 'PostgreSQL')
      test('a second pg-boss completion of the same video is named', async () => {
        await writeCatalog(
          o.place,
          `INSERT INTO pgboss.job (name, data, state, output, completed_on) VALUES ('vidq-analysis', ?::jsonb, 'completed', '{"ready": true}'::jsonb, now())`,
          [JSON.stringify({ videoId: VIDEO })],
        );
        expect(await violations()).toEqual([
          `video ${VIDEO} was analysed to completion 2 times (pg-boss jobs completed as ready)`,
        ]);
      });
  });
