/**
 * Sentence embeddings: the USE-lite embedder itself, and the embeddings stage run as a real job
 * (SQLite queue, pipeline transaction) over segments of every kind, answering questions by meaning.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import type { Analyzer, NewSegment } from '../../src/analysis/contracts';
import { cosine, fromBlob, toBlob, UseEmbedder } from '../../src/analysis/engines/embedder';
import { embeddingText, EmbeddingsAnalyzer } from '../../src/analysis/stages/embeddings';
import { runJob } from '../../src/analysis/pipeline';
import { DEFAULT_VISUAL, VisualAnalyzer } from '../../src/analysis/stages/visual';
import { type JobQueue, SqliteJobQueue } from '../../src/jobs/queue';
import { type Catalog, sqliteCatalog } from '../../src/storage/catalog';
import { createLogger } from '../../src/log';
import { resolveBinaries } from '../../src/media/binaries';
import { openDatabase, type Db } from '../../src/storage/db';
import { DataDir } from '../../src/storage/files';
import { mediaIndexes, segments, segmentVectors, users, videos } from '../../src/storage/schema';
import { clip } from '../helpers';

// One model for the whole file (it loads in ~0.1 s, but each copy holds ~150 MB).
const embedder = new UseEmbedder();
afterAll(() => embedder.close());

describe('USE-lite embedder', () => {
  test('512-d unit vectors; a paraphrase is closer than an unrelated sentence', async () => {
    const [dog, puppy, bars] = await embedder.embed([
      'a dog rides a skateboard',
      'a puppy on a board',
      'colour bars with a timecode',
    ]);
    for (const v of [dog!, puppy!, bars!]) {
      expect(v).toHaveLength(512);
      expect(Math.abs(cosine(v, v) - 1)).toBeLessThan(1e-5);
    }
    expect(cosine(dog!, puppy!)).toBeGreaterThan(cosine(dog!, bars!) + 0.2);
  });

  test('empty texts keep their place (zero vectors), even at the end of a batch', async () => {
    const vs = await embedder.embed(['a cat', '', 'a cat', '   ']);
    expect(vs).toHaveLength(4);
    expect(cosine(vs[0]!, vs[2]!)).toBeGreaterThan(0.999);
    expect(vs[1]!.every((x) => x === 0)).toBe(true);
    expect(vs[3]!.every((x) => x === 0)).toBe(true);
  });

  test('a text embedded before is not run through the model again, and gets its vector back', async () => {
    const e = new UseEmbedder();
    try {
      const model = await e.load();
      const run = model.embed.bind(model);
      const seen: string[] = [];
      model.embed = ((batch: string[]) => {
        seen.push(...batch);
        return run(batch);
      }) as typeof model.embed;
      const [talks, dog] = await e.embed(['speech: someone talks', 'a dog in view']);
      const again = await e.embed(['a bottle in view', 'speech:  someone talks ', 'a dog in view']);
      expect(seen).toEqual(['a dog in view', 'speech: someone talks', 'a bottle in view']);
      expect([...again[1]!]).toEqual([...talks!]);
      expect([...again[2]!]).toEqual([...dog!]);
      expect(cosine(again[0]!, dog!)).toBeLessThan(0.999);
    } finally {
      await e.close();
    }
  });

  test('many texts are cut into batches without changing the vectors', async () => {
    const texts = Array.from(
      { length: 40 },
      (_, i) => `sentence number ${i} about ${i % 2 ? 'cooking pancakes' : 'parking cars'}`,
    );
    const small = new UseEmbedder({ maxBatch: 7, maxBatchChars: 150 });
    try {
      const [a, b] = [await embedder.embed(texts), await small.embed(texts)];
      a.forEach((v, i) => expect(cosine(v, b[i]!)).toBeGreaterThan(0.999));
    } finally {
      await small.close();
    }
  });

  test('blobs are 4 bytes per dimension and read back from unaligned buffers', () => {
    const v = Float32Array.from({ length: 512 }, (_, i) => Math.sin(i));
    const blob = toBlob(v);
    expect(blob.byteLength).toBe(2048);
    const unaligned = new Uint8Array(2049).subarray(1);
    unaligned.set(blob);
    expect([...fromBlob(unaligned)]).toEqual([...v]);
    expect(() => fromBlob(new Uint8Array(6))).toThrow();
  });
});

describe('embedding sentences', () => {
  test('objects become "in view" sentences with their count; OCR and shots say what they are', () => {
    expect(embeddingText({ kind: 'object', text: 'bottle', extra: { label: 'bottle', max_count: 3 } })).toBe(
      'three bottles in view',
    );
    expect(embeddingText({ kind: 'object', text: 'person', extra: { label: 'person', max_count: 2 } })).toBe(
      'two people in view',
    );
    expect(embeddingText({ kind: 'object', text: 'person', extra: null })).toBe('one person (people) in view');
    expect(embeddingText({ kind: 'object', text: '2 wine glass', extra: null })).toBe('two wine glasses in view');
    expect(embeddingText({ kind: 'object', text: 'umbrella', extra: { label: 'umbrella', max_count: 1 } })).toBe(
      'an umbrella in view',
    );
    expect(embeddingText({ kind: 'ocr', text: 'THE PEACH  OPEN MOVIE', extra: null })).toBe(
      'the screen shows the text "the peach open movie"',
    );
    expect(embeddingText({ kind: 'shot', text: 'shot 2 of 4', extra: null })).toBe('scene change: cut to shot 2 of 4');
    expect(embeddingText({ kind: 'speech', text: 'speech, not transcribed', extra: null })).toBe(
      'speech: someone talks',
    );
    expect(embeddingText({ kind: 'transcript', text: 'ask not what your country can do for you', extra: null })).toBe(
      'ask not what your country can do for you',
    );
  });
});

interface Env {
  dir: string;
  db: Db;
  files: DataDir;
  queue: JobQueue;
  catalog: Catalog;
  videoId: string;
}

/** A data directory with one stored video (a link to `source`) whose job is queued. */
async function setup(source: string, durationSec: number): Promise<Env> {
  const dir = mkdtempSync(join(tmpdir(), 'vidq-embed-'));
  const files = new DataDir(dir);
  files.ensure();
  const db = openDatabase(files.dbFile);
  const now = new Date();
  const videoId = 'E'.repeat(32);
  db.insert(users).values({ id: 'u_test', name: 'tester', credits: null, createdAt: now }).run();
  db.insert(mediaIndexes)
    .values({ id: 'I'.repeat(64), userId: 'u_test', name: 'idx', createdAt: now })
    .run();
  mkdirSync(files.videoDir(videoId), { recursive: true });
  const ext = source.split('.').pop()!;
  const storagePath = files.sourceRelPath(videoId, ext);
  symlinkSync(source, files.abs(storagePath));
  db.insert(videos)
    .values({
      id: videoId,
      indexId: 'I'.repeat(64),
      userId: 'u_test',
      sourceUrl: `http://x/v.${ext}`,
      fileName: `v.${ext}`,
      storagePath,
      durationSec,
      fps: 24,
      width: 1280,
      height: 720,
      hasAudio: true,
      status: 'processing',
      uploadedAt: now,
      updatedAt: now,
    })
    .run();
  const catalog = sqliteCatalog(db);
  const queue = new SqliteJobQueue(catalog);
  await queue.enqueue(videoId);
  return { dir, db, catalog, files, queue, videoId };
}

async function runStages(env: Env, analyzers: Analyzer[]) {
  const job = await env.queue.claim('w_test');
  expect(job).not.toBeNull();
  const { ffmpeg } = await resolveBinaries(env.files.binDir);
  const outcome = await runJob(
    job!,
    {
      catalog: env.catalog,
      queue: env.queue,
      files: env.files,
      analyzers,
      ffmpeg,
      workerId: 'w_test',
      log: createLogger('error'),
    },
    new AbortController().signal,
  );
  return outcome;
}

/** Stands in for the earlier stages: stores the given segments, as they would. */
class FixedSegments implements Analyzer {
  readonly stage = 'analyzing:fixture';
  readonly kinds = ['shot', 'ocr', 'object', 'speech', 'transcript'] as const;
  readonly info = { kind: 'fixture', name: 'fixed segments' };
  readonly weight = 0;
  constructor(private readonly segs: NewSegment[]) {}
  async run() {
    return { segments: this.segs };
  }
}

describe('embeddings stage', () => {
  test('stores a vector (int8, 512 bytes) for every segment, and questions find the right one', async () => {
    // A dummy file: this stage never decodes the video, the pipeline only checks the file is there.
    const src = join(mkdtempSync(join(tmpdir(), 'vidq-embed-src-')), 'v.mp4');
    writeFileSync(src, 'not decoded');
    const env = await setup(src, 60);
    try {
      const person = (start: number, end: number): NewSegment => ({
        kind: 'object',
        start,
        end,
        text: 'person',
        extra: { label: 'person', max_count: 1 },
      });
      const fixture: NewSegment[] = [
        { kind: 'shot', start: 0, end: 30, text: 'shot 1 of 2' },
        { kind: 'shot', start: 30, end: 60, text: 'shot 2 of 2' },
        { kind: 'ocr', start: 20, end: 22, text: 'THE PEACH OPEN MOVIE PROJECT' },
        { kind: 'ocr', start: 4, end: 5, text: '00:00:04;12' },
        { kind: 'object', start: 2, end: 14, text: 'dog', extra: { label: 'dog', max_count: 1 } },
        { kind: 'object', start: 2, end: 14, text: 'skateboard', extra: { label: 'skateboard', max_count: 1 } },
        { kind: 'object', start: 30, end: 40, text: 'bottle', extra: { label: 'bottle', max_count: 3 } },
        { kind: 'object', start: 44, end: 52, text: 'car', extra: { label: 'car', max_count: 2 } },
        person(3, 17),
        person(23, 41),
        person(48, 59),
        { kind: 'speech', start: 40, end: 51, text: 'speech, not transcribed' },
        { kind: 'speech', start: 52, end: 55, text: 'speech, not transcribed' },
        {
          kind: 'transcript',
          start: 40,
          end: 51,
          text: 'ask not what your country can do for you, ask what you can do for your country',
        },
        { kind: 'transcript', start: 52, end: 55, text: 'now pour the batter into the hot pan and flip the pancake' },
      ];
      const analyzer = new EmbeddingsAnalyzer(embedder);
      expect(await runStages(env, [new FixedSegments(fixture), analyzer])).toBe('ready');

      const rows = env.db.select().from(segments).where(eq(segments.videoId, env.videoId)).all();
      expect(rows).toHaveLength(fixture.length);
      const vectorOf = storedVectors(env.db);
      for (const r of rows) expect(vectorOf(r.vectorId)).toHaveLength(512);
      const video = env.db.select().from(videos).where(eq(videos.id, env.videoId)).get()!;
      expect(video.status).toBe('ready');
      // The three person spans and the two speech spans share a sentence each.
      expect(video.analysis?.embeddings).toMatchObject({
        engine: 'universal-sentence-encoder-lite (tfjs)',
        dims: 512,
        segments: 15,
        distinct_texts: 12,
      });

      const nearest = async (question: string) => {
        const [q] = await embedder.embed([question]);
        return rows.map((r) => ({ r, s: cosine(q!, vectorOf(r.vectorId)) })).sort((a, b) => b.s - a.s)[0]!.r;
      };
      const expectations: [string, (r: (typeof rows)[number]) => boolean][] = [
        ['when does the dog appear?', (r) => r.text === 'dog'],
        ['how many bottles are on the table?', (r) => r.text === 'bottle'],
        ['are there any cars?', (r) => r.text === 'car'],
        ['what is the name of the movie project?', (r) => r.text.startsWith('THE PEACH')],
        ['what timecode is displayed?', (r) => r.text === '00:00:04;12'],
        ['what did the president say about the country?', (r) => r.text.startsWith('ask not')],
        ['how do you cook the pancakes?', (r) => r.text.includes('pancake')],
        ['when does someone talk?', (r) => r.kind === 'speech'],
        ['when does the scene change?', (r) => r.kind === 'shot'],
        ['how many people are there?', (r) => r.text === 'person'],
        ['who is in the video?', (r) => r.text === 'person'],
      ];
      const misses: string[] = [];
      for (const [question, right] of expectations) {
        const got = await nearest(question);
        if (!right(got)) misses.push(`${question} → ${got.kind}: ${got.text}`);
      }
      expect(misses).toEqual([]);
    } finally {
      env.db.$client.close();
      rmSync(env.dir, { recursive: true, force: true });
      rmSync(join(src, '..'), { recursive: true, force: true });
    }
  });

  test('after the visual stage of a real clip, each of its shots (cuts near 12, 16, 23 s) is embedded', async () => {
    const env = await setup(clip('big-buck-bunny-intro.webm'), 30);
    try {
      expect(await runStages(env, [new VisualAnalyzer(DEFAULT_VISUAL), new EmbeddingsAnalyzer(embedder)])).toBe(
        'ready',
      );
      const shots = env.db.select().from(segments).where(eq(segments.videoId, env.videoId)).all();
      expect(shots.map((s) => s.kind)).toEqual(['shot', 'shot', 'shot', 'shot']);
      shots.slice(1).forEach((s, i) => expect(Math.abs(s.start - [12, 16, 23][i]!)).toBeLessThanOrEqual(1));
      const vectorOf = storedVectors(env.db);
      // Each shot has a vector of its own (int8, 512 bytes), of unit length once read back.
      expect(new Set(shots.map((s) => s.vectorId)).size).toBe(shots.length);
      for (const s of shots)
        expect(Math.abs(cosine(vectorOf(s.vectorId), vectorOf(s.vectorId)) - 1)).toBeLessThan(1e-5);
    } finally {
      env.db.$client.close();
      rmSync(env.dir, { recursive: true, force: true });
    }
  });
});

/** A stored vector (int8 in segment_vectors) read back as a unit-length Float32Array. */
function storedVectors(db: Db): (id: number | null | undefined) => Float32Array {
  return (id) => {
    const row = db
      .select()
      .from(segmentVectors)
      .where(eq(segmentVectors.id, id ?? -1))
      .get();
    if (!row) throw new Error(`segment without a stored vector (vector_id ${id})`);
    const b = row.vector as Buffer;
    const v = Float32Array.from(new Int8Array(b.buffer, b.byteOffset, b.byteLength));
    const n = Math.hypot(...v) || 1;
    return v.map((x) => x / n);
  };
}
