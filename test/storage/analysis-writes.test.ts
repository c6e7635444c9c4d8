/**
 * The analysis writes (storage/repositories/analysis.ts) on both dialects: a stage's output
 * replaces what an earlier attempt of it stored (a retry on another worker neither duplicates nor
 * loses segments), frames are replaced, and the notes in `videos.analysis` are patched per key.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteJobQueue } from '../../src/jobs/queue';
import { type Catalog, postgresCatalog, sqliteCatalog } from '../../src/storage/catalog';
import { openDatabase } from '../../src/storage/db';
import { openPostgres } from '../../src/storage/pg';
import {
  framesOfVideo,
  readyVideosWithNoteState,
  segmentsOfVideo,
  setAnalysisNote,
  storeStageOutput,
  videoDuration,
  videoToAnalyse,
} from '../../src/storage/repositories/analysis';
import { addUser, addVideo } from '../jobs/queue-fixtures';
import { freshPostgresDatabase } from '../pg';

const DIALECTS: { name: string; open(): Promise<{ c: Catalog; close(): Promise<void> }> }[] = [
  {
    name: 'SQLite',
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'vidq-aw-'));
      const db = openDatabase(join(dir, 'vidq.db'));
      return {
        c: sqliteCatalog(db),
        close: async () => {
          db.$client.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: 'PostgreSQL',
    async open() {
      const pg = await freshPostgresDatabase();
      const db = await openPostgres(pg.url);
      return {
        c: postgresCatalog(db),
        close: async () => {
          await db.$client.end();
          await pg.drop();
        },
      };
    },
  },
];

const shot = (i: number) => ({ kind: 'shot' as const, start: i, end: i + 1, text: `shot ${i + 1} of 3` });

for (const d of DIALECTS) {
  describe(`analysis writes on ${d.name}`, () => {
    let o: { c: Catalog; close(): Promise<void> };
    beforeAll(async () => {
      o = await d.open();
      await addUser(o.c, 'u');
      // The job queue only makes the rows here (the SQLite queue's SQL runs on both dialects).
      await addVideo(o.c, new SqliteJobQueue(o.c), 'v1', 'u', 42);
    });
    afterAll(() => o.close());

    test("a stage's output replaces an earlier attempt's, in the caller's transaction", async () => {
      const { c } = o;
      expect((await videoToAnalyse(c, 'v1'))!.id).toBe('v1');
      expect(await videoDuration(c, 'v1')).toBe(42);
      const out = {
        kinds: ['shot'] as const,
        segments: [shot(0), shot(1), { ...shot(2), text: 'shot 3 of 3\u001b[2J' }],
        frames: [0, 1, 2].map((i) => ({ t: i, shot: i, file: `${i}.jpg` })),
        key: 'shots',
        summary: { engine: 'x', shots: 3 },
      };
      // An attempt that stored half of its output and then died (its transaction rolled back)…
      await expect(
        c.write(async (tx) => {
          await storeStageOutput(tx, 'v1', out);
          throw new Error('killed');
        }),
      ).rejects.toThrow('killed');
      expect(await segmentsOfVideo(c, 'v1')).toEqual([]);
      // …then two attempts that both stored (the second one a retry): no duplicates.
      await c.write((tx) => storeStageOutput(tx, 'v1', out));
      await c.write((tx) => storeStageOutput(tx, 'v1', { ...out, summary: { engine: 'x', shots: 3, again: true } }));
      const segs = await segmentsOfVideo(c, 'v1');
      expect(segs.map((s) => s.text)).toEqual(['shot 1 of 3', 'shot 2 of 3', 'shot 3 of 3']);
      expect((await segmentsOfVideo(c, 'v1', ['ocr'])).length).toBe(0);
      expect((await framesOfVideo(c, 'v1')).map((f) => f.file)).toEqual(['0.jpg', '1.jpg', '2.jpg']);
      // Another stage's output leaves these alone.
      await c.write((tx) =>
        storeStageOutput(tx, 'v1', {
          kinds: ['ocr'],
          segments: [{ kind: 'ocr', start: 0, end: 1, text: 'EXIT' }],
          key: 'ocr',
          summary: { engine: 'y' },
        }),
      );
      expect((await segmentsOfVideo(c, 'v1')).length).toBe(4);
      expect((await videoToAnalyse(c, 'v1'))!.analysis).toEqual({
        shots: { engine: 'x', shots: 3, again: true },
        ocr: { engine: 'y' },
      });
    });

    test('notes: set, read back by state, removed', async () => {
      const { c } = o;
      const { videos } = c.t;
      await c.run((db) => db.update(videos).set({ status: 'ready' }));
      await setAnalysisNote(c, 'v1', 'playback', { state: 'making' });
      expect(await readyVideosWithNoteState(c, 'playback', 'making')).toEqual(['v1']);
      await setAnalysisNote(c, 'v1', 'playback', { state: 'made', made: 'remux', ms: 5 });
      expect(await readyVideosWithNoteState(c, 'playback', 'making')).toEqual([]);
      expect(((await videoToAnalyse(c, 'v1'))!.analysis as any).playback).toEqual({
        state: 'made',
        made: 'remux',
        ms: 5,
      });
      await setAnalysisNote(c, 'v1', 'playback', null);
      expect(Object.keys((await videoToAnalyse(c, 'v1'))!.analysis!).sort()).toEqual(['ocr', 'shots']);
    });
  });
}
