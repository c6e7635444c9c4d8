/**
 * The inverted-file (IVF) index of the vector store (src/search/ivf.ts) on vectors inserted directly
 * into a real SQLite database: what a question reads as the index grows, recall against exact
 * search, and its contiguous lists after videos are replaced, removed and added.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/log';
import { IvfIndex, Top } from '../src/search/ivf';
import { quantize, VectorStore } from '../src/search/vectors';
import { insertReadyVideo } from './factories';
import { createService, type Service } from '../src/service';
import { writeTx } from '../src/storage/db';
import { segmentVectors, type User, type Video } from '../src/storage/schema';

const DIMS = 64;
let dir: string;
let service: Service;
let user: User;
let indexId: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vidq-ivf-'));
  service = await createService(
    loadConfig({ 'data-dir': dir, 'log-level': 'error', 'analysis-workers': '0', 'min-free-bytes': '0' }, {}),
    createLogger('error'),
  );
  user = (await service.accounts.createUser('ivf', null)).user;
  indexId = (await service.indexes.findOrCreateByName(service.catalog, user, 'ivf')).index.id;
});

afterAll(() => {
  service.close();
  rmSync(dir, { recursive: true, force: true });
});

function rand(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296 - 0.5;
  };
}

function unit(v: Float32Array): Float32Array {
  const n = Math.hypot(...v) || 1;
  return v.map((x) => x / n);
}

/** Vectors gathered around topics, as sentence embeddings are. */
function clustered(seed: number, topics: number): () => Float32Array {
  const r = rand(seed);
  const centres = Array.from({ length: topics }, () => unit(Float32Array.from({ length: DIMS }, r)));
  return () => {
    const c = centres[Math.floor((r() + 0.5) * topics)]!;
    return unit(Float32Array.from(c, (x) => x + (0.9 * r()) / Math.sqrt(DIMS)));
  };
}

function addVideo(name: string): Video {
  return insertReadyVideo(service.db, { indexId, userId: user.id }, name);
}

/** Stores a video's vectors (replacing any), as the embeddings stage does: consecutive ids. */
function store(v: Video, vectors: Float32Array[]): void {
  writeTx(service.db, (tx) => {
    tx.delete(segmentVectors).where(eq(segmentVectors.videoId, v.id)).run();
    for (const x of vectors) {
      const q = quantize(x);
      tx.insert(segmentVectors)
        .values({ videoId: v.id, vector: Buffer.from(q.buffer, q.byteOffset, q.byteLength) })
        .run();
    }
  });
}

/** The stored vectors of these videos. */
function rowsOf(vids: Video[]) {
  const ids = new Set(vids.map((v) => v.id));
  return service.db
    .select()
    .from(segmentVectors)
    .all()
    .filter((r) => ids.has(r.videoId));
}

/** Exact cosines of the question with every stored vector of these videos, best first. */
function exact(vids: Video[], q: Float32Array, k: number, rows = rowsOf(vids)): [number, number][] {
  return rows
    .map((r): [number, number] => {
      const b = r.vector as Buffer;
      const row = new Int8Array(b.buffer, b.byteOffset, b.byteLength);
      let dot = 0;
      let len = 0;
      for (let i = 0; i < DIMS; i++) {
        dot += q[i]! * row[i]!;
        len += row[i]! * row[i]!;
      }
      return [r.id, dot / Math.sqrt(len)];
    })
    .sort((a, b) => b[1] - a[1] || a[0] - b[0])
    .slice(0, k);
}

describe('the IVF index', () => {
  test('a question reads a falling share of the vectors as the index grows, and finds the exact top 10', async () => {
    const vector = clustered(5, 300);
    const shares: number[] = [];
    for (const n of [4_000, 16_000]) {
      const vids = Array.from({ length: 4 }, (_, i) => addVideo(`grow-${n}-${i}.mp4`));
      for (const v of vids) store(v, Array.from({ length: n / 4 }, vector));
      const ivf = new IvfIndex({ catalog: service.catalog, dims: DIMS, minRead: 64 });
      await ivf.ready(vids);
      expect(ivf.size).toBe(n);
      const rows = rowsOf(vids);
      let read = 0;
      let hits = 0;
      for (let i = 0; i < 40; i++) {
        const q = vector();
        const got = ivf.probe(ivf.inScope(vids), q, 10);
        read += got.read;
        const want = new Set(exact(vids, q, 10, rows).map(([id]) => id));
        hits += got.items.filter(([id]) => want.has(id)).length;
      }
      expect(hits / 400).toBeGreaterThanOrEqual(0.98);
      shares.push(read / 40 / n);
    }
    // About n^¾ read: four times the vectors, about 0.7 of the share (lists are not all one size).
    expect(shares[1]!).toBeLessThan(shares[0]! * 0.85);
    expect(shares[1]!).toBeLessThan(0.2);
  });

  test('its contiguous lists stay right after a video is replaced, removed and added', async () => {
    const vector = clustered(11, 60);
    const [a, b, c] = ['a.mp4', 'b.mp4', 'c.mp4'].map(addVideo) as [Video, Video, Video];
    for (const v of [a, b, c]) store(v, Array.from({ length: 900 }, vector));
    // Reads every list: each cosine must be exactly that of the id beside it.
    const ivf = new IvfIndex({ catalog: service.catalog, dims: DIMS, minRead: Infinity });
    const check = async (vids: Video[]) => {
      const q = vector();
      const got = await ivf.search(vids, q, 25);
      const want = exact(vids, q, 25);
      expect(got!.map(([id]) => id)).toEqual(want.map(([id]) => id));
      got!.forEach(([, cos], i) => expect(cos).toBeCloseTo(want[i]![1], 5));
    };
    await ivf.ready([a, b, c]);
    await check([a, b, c]);
    const oldB = new Set(exact([b], vector(), 900).map(([id]) => id));

    // b's vectors replaced (new ids), c's removed, d added.
    const target = vector();
    store(b, [target, ...Array.from({ length: 899 }, vector)]);
    writeTx(service.db, (tx) => tx.delete(segmentVectors).where(eq(segmentVectors.videoId, c.id)).run());
    ivf.invalidate(b.id);
    ivf.invalidate(c.id);
    const d = addVideo('d.mp4');
    store(d, Array.from({ length: 500 }, vector));
    const top = (await ivf.search([a, b, d], target, 1))!;
    expect(top[0]![1]).toBeGreaterThan(0.99);
    expect(oldB.has(top[0]![0])).toBe(false);
    expect(ivf.size).toBe(900 + 900 + 500);
    await check([a, b, d]);
    // A scope of one video answers with that video's vectors only.
    await check([d]);
    const all = (await ivf.search([a, b, d], vector(), 3_000))!.map(([id]) => id);
    expect(all.length).toBe(2_300);
    expect(all.some((id) => oldB.has(id))).toBe(false);
  });

  test('a build in the background is reported, and searches meanwhile say to search exactly', async () => {
    const vector = clustered(17, 40);
    const big = addVideo('big.mp4');
    store(big, Array.from({ length: 12_000 }, vector));
    const ivf = new IvfIndex({ catalog: service.catalog, dims: DIMS });
    // More than a search adds inline: it answers null (search exactly) and builds in the background.
    expect(await ivf.search([big], vector(), 10)).toBeNull();
    expect(ivf.state.building).toBe(true);
    await ivf.ready([big]);
    expect(ivf.state).toMatchObject({ building: false, vectors: 12_000 });
    expect(ivf.state.lastBuildMs).toBeGreaterThan(0);
    expect((await ivf.search([big], vector(), 10))!.length).toBe(10);
  });
});

describe("the IVF search's best k", () => {
  test('keeps the k best of any order of offers, ties by the smaller id, as a full sort would', () => {
    // Scores from a few values, so that many tie (near-duplicate sentences share a vector score).
    let seed = 7;
    const rand = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (const k of [1, 5, 60, 240]) {
      const offers: [number, number][] = Array.from({ length: 3_000 }, (_, i) => [i, Math.floor(rand() * 40) / 40]);
      // Shuffled: the lists of the index come in centroid order, not id order.
      for (let i = offers.length - 1; i > 0; i--) {
        const j = Math.floor(rand() * (i + 1));
        [offers[i], offers[j]] = [offers[j]!, offers[i]!];
      }
      const top = new Top(k);
      for (const [id, score] of offers) top.offer(id, score);
      const want = [...offers].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, k);
      expect(top.sorted()).toEqual(want);
    }
    const none = new Top(0);
    none.offer(1, 0.5);
    expect(none.sorted()).toEqual([]);
  });
});

describe('the IVF index saved beside the data', () => {
  test('a restart reads the saved lists instead of choosing them again, and finds the same', async () => {
    const vector = clustered(23, 50);
    const vids = ['s1.mp4', 's2.mp4'].map(addVideo);
    for (const v of vids) store(v, Array.from({ length: 3_000 }, vector));
    const file = join(dir, 'saved.ivf');
    const first = new IvfIndex({ catalog: service.catalog, dims: DIMS, file, minRead: 64 });
    await first.ready(vids);
    const qs = Array.from({ length: 20 }, vector);
    const before = qs.map((q) => first.probe(first.inScope(vids), q, 10));
    // A vector added after the save joins its nearest list on the next start.
    const late = addVideo('late.mp4');
    const target = vector();
    store(late, [target]);
    const again = new IvfIndex({ catalog: service.catalog, dims: DIMS, file, minRead: 64 });
    await again.ready([...vids, late]);
    expect(again.state).toMatchObject({ vectors: 6_001, lists: first.state.lists });
    qs.forEach((q, i) => {
      const got = again.probe(again.inScope(vids), q, 10);
      expect(got.items).toEqual(before[i]!.items);
      // The same lists read (the late vector may have joined one of them).
      expect(got.read - before[i]!.read).toBeOneOf([0, 1]);
    });
    expect((await again.search([...vids, late], target, 1))![0]![1]).toBeGreaterThan(0.99);
    // A file of other vectors (another size) is ignored.
    const other = new IvfIndex({ catalog: service.catalog, dims: DIMS, file: join(dir, 'missing.ivf') });
    await other.ready(vids);
    expect(other.state.vectors).toBe(6_000);
  });
});

describe('a purged media index', () => {
  test("takes its saved lists with it, and leaves other indexes' lists alone", () => {
    const saved = join(dir, 'purge-search-index');
    mkdirSync(saved);
    const store = new VectorStore({ catalog: service.catalog, dir: saved });
    for (const name of ['idx_gone-64.ivf', 'idx_gone-512.ivf', 'idx_gone_too-64.ivf', 'idx_kept-64.ivf']) {
      writeFileSync(join(saved, name), 'lists');
    }
    store.forgetIndex('idx_gone');
    expect(readdirSync(saved).sort()).toEqual(['idx_gone_too-64.ivf', 'idx_kept-64.ivf']);
    // A name that is no plain id never reaches the file system.
    store.forgetIndex('../idx_kept');
    expect(readdirSync(saved)).toContain('idx_kept-64.ivf');
  });
});
