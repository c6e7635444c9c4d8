/**
 * The retrieval core on a fake index: segments and vectors inserted directly into a real SQLite
 * database (with its FTS5 index and migrations), no analysis and no model. The embedder is a named
 * stand-in: a bag of word stems hashed into 256 dimensions, so that sentences sharing words are near
 * and others are not (what a sentence encoder does, without loading one).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Embedder } from '../src/analysis/engines/embedder';
import { readIntent } from '../src/answering/intent';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/log';
import { MEANING_ONLY_MAX, NOISE, STRONG, stem } from '../src/search/relevance';
import { RetrievalCore } from '../src/search/retrieval';
import { SearchService } from '../src/search/service';
import { VectorStore } from '../src/search/vectors';
import { storeVideoVectors } from '../src/storage/repositories/vectors';
import { insertReadyVideo } from './factories';
import { createService, type Service } from '../src/service';
import { segments, segmentVectors, type SegmentKind, type User, type Video } from '../src/storage/schema';

const DIMS = 1024;

/** Stand-in embedder (see the file comment): hashed word stems, L2-normalised. */
class StemBagEmbedder implements Embedder {
  readonly info = { kind: 'embeddings', name: 'test:stem-bag' } as Embedder['info'];
  readonly dims = DIMS;
  async embed(texts: string[]): Promise<Float32Array[]> {
    return texts.map(bag);
  }
}

function bag(text: string): Float32Array {
  const v = new Float32Array(DIMS);
  for (const w of text.toLowerCase().split(/[^a-z0-9]+/)) {
    if (w.length < 3 || STOP.has(w)) continue;
    v[Number(Bun.hash.wyhash(stem(w)) % BigInt(DIMS))]! += 1;
  }
  return normalise(v);
}
const STOP = new Set(['the', 'and', 'with', 'what', 'who', 'are', 'was', 'for', 'view', 'does']);

function normalise(v: Float32Array): Float32Array {
  const n = Math.hypot(...v) || 1;
  return v.map((x) => x / n);
}

let dir: string;
let service: Service;
let user: User;
let indexId: string;
const embedder = new StemBagEmbedder();

function addVideo(name: string): Video {
  return insertReadyVideo(service.db, { indexId, userId: user.id }, name, {
    embeddings: { producer: embedder.info.name },
  });
}

type Seg = [SegmentKind, number, number, string, Record<string, unknown>?];

/** Inserts segments with their stand-in vectors, the way the embeddings stage stores them. */
async function addSegments(v: Video, segs: Seg[]): Promise<void> {
  const ids = segs.map(
    ([kind, start, end, text, extra]) =>
      service.db
        .insert(segments)
        .values({ videoId: v.id, kind, start, end, text, confidence: 0.9, extra: extra ?? null })
        .returning({ id: segments.id })
        .get().id,
  );
  const allIds = service.db
    .select({ id: segments.id, text: segments.text })
    .from(segments)
    .all()
    .filter((r) => ids.includes(r.id));
  const vecs = await embedder.embed(allIds.map((r) => r.text));
  await service.catalog.write((tx) =>
    storeVideoVectors(
      tx,
      v.id,
      allIds.map((r) => r.id),
      allIds.map((_, i) => i),
      vecs,
    ),
  );
}

let dinner: Video;
let street: Video;
let core: RetrievalCore;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vidq-retrieval-'));
  service = await createService(
    loadConfig({ 'data-dir': dir, 'log-level': 'error', 'analysis-workers': '0', 'min-free-bytes': '0' }, {}),
    createLogger('error'),
  );
  user = (await service.accounts.createUser('retrieval', null)).user;
  indexId = (await service.indexes.findOrCreateByName(service.catalog, user, 'fake')).index.id;
  dinner = addVideo('dinner.mp4');
  street = addVideo('street.mp4');
  await addSegments(dinner, [
    ['caption', 0, 8, 'A woman in a purple dress sits at a table covered with a white tablecloth'],
    ['object', 0, 8, 'cup', { label: 'cup' }],
    ['object', 0, 8, 'wine glass', { label: 'wine glass' }],
    ['object', 0, 8, 'person', { label: 'person', upper_colours: ['purple'] }],
    ['object', 2, 9, 'dining table', { label: 'dining table' }],
    ['transcript', 9, 14, 'Welcome everyone, tonight we are cooking a mushroom risotto'],
    ['ocr', 15, 18, 'MUSHROOM RISOTTO RECIPE'],
    ['shot', 0, 20, 'shot 1 of 1'],
  ]);
  await addSegments(street, [
    ['object', 10, 12, 'car', { label: 'car', colours: ['red'] }],
    ['object', 20, 30, 'car', { label: 'car', colours: ['blue'] }],
    ['object', 3, 6, 'dog', { label: 'dog' }],
    ['object', 4, 7, 'bird', { label: 'bird' }],
    ['object', 30, 40, 'cup', { label: 'cup' }],
    ['ocr', 40, 42, 'PARKING LEVEL 2'],
    ['speech', 0, 5, 'speech'],
  ]);
  core = new RetrievalCore({ catalog: service.catalog, embedder, dataDir: dir });
});

afterAll(() => {
  service.db.$client.close();
  rmSync(dir, { recursive: true, force: true });
});

const scopeAll = () => ({ videos: [dinner, street], window: null });
const ask = (text: string, scope: Parameters<RetrievalCore['retrieve']>[0] = scopeAll(), limit = 20) =>
  core.retrieve(scope, text, readIntent(text), limit);

describe('hybrid retrieval over every kind', () => {
  test('a caption that names the asked thing outranks the detector labels of the same moment', async () => {
    const r = await ask('What covers the table?');
    expect(r[0]!.segment.kind).toBe('caption');
    expect(r[0]!.relevance).toBeGreaterThanOrEqual(STRONG);
    const cup = r.find((x) => x.segment.text === 'cup');
    expect(cup === undefined || cup.relevance < r[0]!.relevance).toBe(true);
    const wearing = await ask('What is the woman wearing? A dress?');
    expect(wearing[0]!.segment.kind).toBe('caption');
  });

  test('relevance means the same across kinds: the same word in a transcript and on screen scores alike', async () => {
    const r = await ask('risotto');
    const transcript = r.find((x) => x.segment.kind === 'transcript')!;
    const ocr = r.find((x) => x.segment.kind === 'ocr')!;
    expect(transcript.relevance).toBeGreaterThanOrEqual(STRONG);
    expect(ocr.relevance).toBeGreaterThanOrEqual(STRONG);
    expect(Math.abs(transcript.relevance - ocr.relevance)).toBeLessThan(0.15);
    // Nothing unrelated reaches the clear-match level; every relevance is within [0, 1].
    for (const x of r) {
      expect(x.relevance).toBeGreaterThan(0);
      expect(x.relevance).toBeLessThanOrEqual(1);
      if (!/risotto/i.test(x.segment.text)) {
        expect(x.relevance).toBeLessThan(STRONG);
      }
    }
  });

  test('a rare word weighs more than a common one; colours in an object’s details count', async () => {
    const r = await ask('red car');
    expect(r[0]!.segment.text).toBe('car');
    expect((r[0]!.segment.extra as { colours: string[] }).colours).toEqual(['red']);
    const blue = r.find((x) => (x.segment.extra as { colours?: string[] } | null)?.colours?.[0] === 'blue');
    expect(blue!.relevance).toBeLessThan(r[0]!.relevance);
    for (const animal of r.filter((x) => ['dog', 'bird', 'cup'].includes(x.segment.text)))
      expect(animal.relevance).toBeLessThan(NOISE);
  });

  test('scope: videos, time window and kinds', async () => {
    const onlyStreet = await ask('cup', { videos: [street], window: null });
    expect(onlyStreet.length).toBeGreaterThan(0);
    expect(onlyStreet.every((x) => x.segment.videoId === street.id)).toBe(true);
    const early = await ask('cup', { videos: [dinner, street], window: { start: 0, end: 10 } });
    expect(early.map((x) => x.segment.videoId)).toContain(dinner.id);
    expect(early.every((x) => x.segment.start <= 10 && x.segment.end >= 0)).toBe(true);
    expect(early.some((x) => x.segment.videoId === street.id && x.segment.text === 'cup')).toBe(false);
    const onScreen = await ask('mushroom risotto', { videos: [dinner, street], window: null, kinds: ['ocr'] });
    expect(onScreen.map((x) => x.segment.kind)).toEqual(['ocr']);
  });

  test('relevance is coverage: a word the index never holds counts against a moment, and no word matched ranks below some (issue 34, class 9)', async () => {
    const both = await ask('red car');
    const redCar = both.find((x) => x.segment.text === 'car' && x.segment.start === 10)!;
    const blueCar = both.find((x) => x.segment.text === 'car' && x.segment.start === 20)!;
    expect(redCar.relevance).toBeGreaterThan(0.9);
    expect(blueCar.relevance).toBeLessThan(redCar.relevance - 0.15);
    // "tunnel" is nowhere: a car covers only part of "red car in a tunnel".
    const half = await ask('red car in a tunnel');
    const red = half.find((x) => x.segment.text === 'car' && x.segment.start === 10)!;
    expect(red.relevance).toBeLessThan(0.8);
    expect(red.relevance).toBeGreaterThan(MEANING_ONLY_MAX);
    for (const r of [both, half]) {
      const words = r.filter((x) => x.keyword).map((x) => x.relevance);
      const meaning = r.filter((x) => !x.keyword).map((x) => x.relevance);
      if (words.length && meaning.length) expect(Math.min(...words)).toBeGreaterThan(Math.max(...meaning));
      for (const m of meaning) expect(m).toBeLessThanOrEqual(MEANING_ONLY_MAX);
    }
  });

  test('GET /search leaves out weak matches beside clear ones, and flags a page of weak ones', async () => {
    const search = new SearchService({
      catalog: service.catalog,
      indexes: service.indexes,
      links: service.links,
      retrieval: core,
    });
    const red = await search.search(user, { index: 'fake', q: 'red car' });
    expect(red.weak_only).toBe(false);
    expect(red.moments.length).toBeGreaterThan(0);
    expect(red.moments.every((m) => m.relevance >= STRONG)).toBe(true);
    expect(red.moments.map((m) => m.text)).not.toContain('dog');
    expect(red.moments[0]).toMatchObject({ text: 'car', start: 10, matched: 'both' });
    // Nothing holds this word; the stand-in embedder finds a weak likeness at most.
    const weak = await search.search(user, { index: 'fake', q: 'tablecloth dress parking' });
    expect(weak.moments.length).toBeGreaterThan(0);
    const none = await search.search(user, { index: 'fake', q: 'submarine' });
    expect(none).toMatchObject({ moments: [], total: 0, weak_only: false });
  });
});

describe('the vector store', () => {
  const rand = (seed: number) => {
    let a = seed >>> 0;
    return () => {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = Math.imul(a ^ (a >>> 15), a | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296 - 0.5;
    };
  };
  // Sentence embeddings gather around topics: vectors near one of 40 centres (random directions are
  // no test of a nearest-neighbour index: every vector is about as far as every other).
  const centres = (() => {
    const r = rand(99);
    return Array.from({ length: 40 }, () => normalise(Float32Array.from({ length: DIMS }, r)));
  })();
  const vector = (r: () => number) => {
    const c = centres[Math.floor((r() + 0.5) * centres.length)]!;
    return normalise(Float32Array.from(c, (x) => x + (0.6 * r()) / Math.sqrt(DIMS)));
  };

  async function fill(v: Video, n: number, r: () => number): Promise<void> {
    const ids = Array.from(
      { length: n },
      (_, i) =>
        service.db
          .insert(segments)
          .values({ videoId: v.id, kind: 'transcript', start: i, end: i + 1, text: `line ${i}` })
          .returning({ id: segments.id })
          .get().id,
    );
    await service.catalog.write((tx) =>
      storeVideoVectors(
        tx,
        v.id,
        ids,
        ids.map((_, i) => i),
        ids.map(() => vector(r)),
      ),
    );
  }

  test('vectors are stored as int8, each distinct one once, apart from the segment rows', () => {
    const rows = service.db.select().from(segmentVectors).all();
    expect(rows.every((r) => (r.vector as Buffer).byteLength === DIMS)).toBe(true);
    const segs = service.db.select().from(segments).all();
    expect(segs.every((s) => s.embedding === null && s.vectorId !== null)).toBe(true);
  });

  test('the ANN index (IVF) finds what exact search finds, and follows a video that changed (also after a restart)', async () => {
    const r = rand(7);
    const a = addVideo('a.mp4');
    const b = addVideo('b.mp4');
    await fill(a, 400, r);
    await fill(b, 400, r);
    const ann = new VectorStore({ catalog: service.catalog, exactMax: 0 });
    const exact = new VectorStore({ catalog: service.catalog });
    let hits = 0;
    for (let i = 0; i < 30; i++) {
      const q = vector(r);
      const got = new Set((await ann.nearest([a, b], q, 10)).map(([id]) => id));
      const want = (await exact.exact([a, b], q, 10)).map(([id]) => id);
      hits += want.filter((id) => got.has(id)).length;
    }
    expect(hits / 300).toBeGreaterThanOrEqual(0.98);
    // Only one video in scope: every result is that video's.
    const onlyA = new Set(
      service.db
        .select({ id: segmentVectors.id, v: segmentVectors.videoId })
        .from(segmentVectors)
        .all()
        .filter((x) => x.v === a.id)
        .map((x) => x.id),
    );
    const q = vector(r);
    expect((await ann.nearest([a], q, 10)).every(([id]) => onlyA.has(id))).toBe(true);

    // b's vectors are replaced: the old ones are never returned again once b is invalidated.
    const oldB = (await exact.exact([b], q, 10)).map(([id]) => id);
    const target = vector(r);
    const bIds = service.db
      .select({ id: segments.id })
      .from(segments)
      .all()
      .map((x) => x.id)
      .filter(
        (id) =>
          service.db
            .select()
            .from(segments)
            .all()
            .find((s) => s.id === id)?.videoId === b.id,
      );
    await service.catalog.write((tx) =>
      storeVideoVectors(
        tx,
        b.id,
        bIds,
        bIds.map((_, i) => i),
        bIds.map((_, i) => (i === 0 ? target : vector(r))),
      ),
    );
    ann.invalidate(b.id);
    const top = await ann.nearest([a, b], target, 5);
    const newFirst = service.db
      .select({ id: segmentVectors.id })
      .from(segmentVectors)
      .all()
      .map((x) => x.id)
      .sort((x, y) => x - y)
      .at(-bIds.length)!;
    expect(top[0]![0]).toBe(newFirst);
    expect(top[0]![1]).toBeGreaterThan(0.99);
    const afterQ = (await ann.nearest([a, b], q, 50)).map(([id]) => id);
    expect(afterQ.some((id) => oldB.includes(id))).toBe(false);

    // After a restart (a new store over the same database): the same answers.
    const reopened = new VectorStore({ catalog: service.catalog, exactMax: 0 });
    expect((await reopened.nearest([a, b], target, 5)).map(([id]) => id)).toEqual(top.map(([id]) => id));
  });

  test('vectors left in the segment rows by an earlier version move into the store at start-up', async () => {
    const v = addVideo('legacy.mp4');
    const f = normalise(Float32Array.from({ length: DIMS }, (_, i) => Math.sin(i)));
    const blob = Buffer.from(f.buffer);
    for (const t of ['one', 'two'])
      service.db
        .insert(segments)
        .values({ videoId: v.id, kind: 'ocr', start: 0, end: 1, text: t, embedding: blob })
        .run();
    const moved = new RetrievalCore({ catalog: service.catalog, embedder, dataDir: dir });
    const rows = service.db
      .select()
      .from(segments)
      .all()
      .filter((s) => s.videoId === v.id);
    expect(rows.every((s) => s.embedding === null && s.vectorId !== null)).toBe(true);
    // Both rows held the same vector: it is stored once.
    expect(new Set(rows.map((s) => s.vectorId)).size).toBe(1);
    const [[, cos]] = (await moved.vectors.exact([v], f, 1)) as [[number, number]];
    expect(cos).toBeGreaterThan(0.999);
  });
});
