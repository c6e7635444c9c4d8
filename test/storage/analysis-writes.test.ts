/**
 * The analysis writes (storage/repositories/analysis.ts) on both dialects: a stage's output
 * replaces what an earlier attempt of it stored (a retry on another worker neither duplicates nor
 * loses segments), frames are replaced, and the notes in `videos.analysis` are patched per key.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { SqliteJobQueue } from '../../src/jobs/queue';
import {
  framesOfVideo,
  readyVideosWithNoteState,
  segmentsOfVideo,
  setAnalysisNote,
  storeStageOutput,
  videoDuration,
  replaceSubtitleTranscripts,
  videoToAnalyse,
} from '../../src/storage/repositories/analysis';
import { clearVideoVectors, storeVideoVectors, videoVectors } from '../../src/storage/repositories/vectors';
import { descriptorBlob, groupVideoFaces } from '../../src/people/group';
import { quantize } from '../../src/search/int8';
import { eq } from 'drizzle-orm';
import { addUser, addVideo } from '../jobs/queue-fixtures';
import { CATALOGS, type OpenedCatalog } from '../dialects';

const shot = (i: number) => ({ kind: 'shot' as const, start: i, end: i + 1, text: `shot ${i + 1} of 3` });

for (const d of CATALOGS) {
  describe(`analysis writes on ${d.name}`, () => {
    let o: OpenedCatalog;
    beforeAll(async () => {
      o = await d.open();
      await addUser(o.catalog, 'u');
      // The job queue only makes the rows here (the SQLite queue's SQL runs on both dialects).
      await addVideo(o.catalog, new SqliteJobQueue(o.catalog), 'v1', 'u', 42);
    });
    afterAll(() => o.close());

    test("a stage's output replaces an earlier attempt's, in the caller's transaction", async () => {
      const c = o.catalog;
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
      const c = o.catalog;
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

    test('subtitle transcripts replace those of an earlier run, and only those', async () => {
      const c = o.catalog;
      const cue = (i: number) => ({
        kind: 'transcript' as const,
        start: i,
        end: i + 1,
        text: `cue ${i}`,
        extra: { source: 'subtitles' },
      });
      await c.write((tx) =>
        storeStageOutput(tx, 'v1', {
          kinds: [],
          segments: [{ kind: 'transcript', start: 5, end: 6, text: 'heard', extra: { source: 'whisper' } }],
          key: 'speech',
          summary: {},
        }),
      );
      await c.write((tx) => replaceSubtitleTranscripts(tx, 'v1', [cue(0), cue(1)]));
      await c.write((tx) => replaceSubtitleTranscripts(tx, 'v1', [cue(2)]));
      const texts = (await segmentsOfVideo(c, 'v1', ['transcript'])).map((s) => s.text);
      expect(texts).toEqual(['cue 2', 'heard']);
      // A reanalysis of speech alone (the subtitles are not read again) replaces its own transcripts
      // and leaves the subtitles' (the invariant checker caught them lost).
      await c.write((tx) =>
        storeStageOutput(tx, 'v1', {
          kinds: ['speech', 'transcript'],
          segments: [{ kind: 'transcript', start: 7, end: 8, text: 'heard again', extra: { source: 'whisper' } }],
          key: 'speech',
          summary: {},
        }),
      );
      expect((await segmentsOfVideo(c, 'v1', ['transcript'])).map((s) => s.text)).toEqual(['cue 2', 'heard again']);
    });

    test('vectors: each distinct one stored once as int8 bytes, the segments point at it, cleared', async () => {
      const c = o.catalog;
      const segs = await segmentsOfVideo(c, 'v1', ['shot']);
      const vectors = [Float32Array.from([0.5, -0.25, 0.125, 1]), Float32Array.from([-1, 0, 0.75, 0.1])];
      await c.write((tx) =>
        storeVideoVectors(
          tx,
          'v1',
          segs.map((s) => s.id),
          [0, 1, 0],
          vectors,
        ),
      );
      const stored = await videoVectors(c, 'v1');
      expect(stored.length).toBe(2);
      expect(stored[1]!.id).toBe(stored[0]!.id + 1);
      stored.forEach((r, k) => {
        const q = quantize(vectors[k]!);
        expect(Buffer.from(r.vector).equals(Buffer.from(q.buffer, q.byteOffset, q.byteLength))).toBe(true);
      });
      const pointed = (await segmentsOfVideo(c, 'v1', ['shot'])).map((s) => s.vectorId);
      expect(pointed).toEqual([stored[0]!.id, stored[1]!.id, stored[0]!.id]);
      // Stored again: replaced, not added to.
      await c.write((tx) => storeVideoVectors(tx, 'v1', [segs[0]!.id], [0], [vectors[1]!]));
      expect((await videoVectors(c, 'v1')).length).toBe(1);
      await c.write((tx) => clearVideoVectors(tx, 'v1'));
      expect(await videoVectors(c, 'v1')).toEqual([]);
      expect((await segmentsOfVideo(c, 'v1')).every((s) => s.vectorId === null)).toBe(true);
    });

    test("faces join the index's people; empty people go", async () => {
      const c = o.catalog;
      const { people, personAppearances } = c.t;
      const face = (start: number, descriptor: number[]) => ({
        kind: 'face' as const,
        start,
        end: start + 1,
        text: 'face',
        extra: { box: [start], descriptor },
      });
      await addVideo(c, new SqliteJobQueue(c), 'v2', 'u', 10);
      await addVideo(c, new SqliteJobQueue(c), 'v3', 'u', 10);
      await c.write((tx) =>
        storeStageOutput(tx, 'v2', {
          kinds: ['face'],
          segments: [face(0, [1, 0, 0, 0]), face(1, [0, 2, 0, 0]), face(2, [0.95, 0.05, 0, 0])],
          key: 'faces',
          summary: {},
        }),
      );
      expect(await c.write((tx) => groupVideoFaces(tx, 'v2'))).toEqual({ appearances: 3, joined: 1, started: 2 });
      await c.write((tx) =>
        storeStageOutput(tx, 'v3', {
          kinds: ['face'],
          segments: [face(0, [0, 0.9, 0.1, 0])],
          key: 'faces',
          summary: {},
        }),
      );
      expect(await c.write((tx) => groupVideoFaces(tx, 'v3'))).toEqual({ appearances: 1, joined: 1, started: 0 });
      const rows = await c.run((db) =>
        db
          .select({
            personId: personAppearances.personId,
            videoId: personAppearances.videoId,
            d: personAppearances.descriptor,
          })
          .from(personAppearances),
      );
      expect(rows.length).toBe(4);
      expect(new Set(rows.map((r) => r.personId)).size).toBe(2);
      // The descriptor moved out of the segment, unit length, as float32 bytes.
      const v3 = rows.find((r) => r.videoId === 'v3')!;
      expect(Buffer.from(v3.d).equals(descriptorBlob([0, 0.9, 0.1, 0]))).toBe(true);
      expect(rows.filter((r) => r.personId === v3.personId).length).toBe(2);
      const extras = (await segmentsOfVideo(c, 'v2', ['face'])).map((s) => s.extra);
      expect(extras).toEqual([{ box: [0] }, { box: [1] }, { box: [2] }]);
      // Regrouped after a re-analysis that found no faces: the people left with none are gone.
      await c.run((db) => db.delete(personAppearances).where(eq(personAppearances.videoId, 'v2')));
      await c.write((tx) => storeStageOutput(tx, 'v2', { kinds: ['face'], segments: [], key: 'faces', summary: {} }));
      expect(await c.write((tx) => groupVideoFaces(tx, 'v2'))).toEqual({ appearances: 0, joined: 0, started: 0 });
      expect((await c.run((db) => db.select({ id: people.id }).from(people))).map((p) => p.id)).toEqual([v3.personId]);
    });
  });
}
