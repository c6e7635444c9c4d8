/**
 * A fake index for unit tests of the answering: a real database holding videos and the segments a
 * test writes down, answered by the real answering core with no models (no embedder, no
 * generator). Segments in, answer out, in milliseconds.
 *
 * The database is an SQLite file in a temporary folder, or, with `dialect: 'postgres'` (or
 * VIDQ_TEST_DIALECT=postgres), a fresh database on a real PostgreSQL (test/pg.ts), filled through
 * the same catalog the service reads (issue 33). The PostgreSQL one is filled in the background:
 * `ask` waits for it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { composeAnswer } from '../src/answering/answer';
import type { Composed } from '../src/answering/compose';
import { windowOf } from '../src/answering/evidence';
import { relativeScope, type StreamClock } from '../src/answering/relative-time';
import { parseTarget } from '../src/answering/target';
import { RetrievalCore } from '../src/search/retrieval';
import { type Catalog, postgresCatalog, sqliteCatalog } from '../src/storage/catalog';
import { openDatabase, type Db } from '../src/storage/db';
import { openPostgres, type PgDb } from '../src/storage/pg';
import type { SegmentKind, Video } from '../src/storage/rows';
import { freshPostgresDatabase, type TestDatabase } from './pg';

export type FakeDialect = 'sqlite' | 'postgres';

/** The dialect of fake indexes that do not name one: VIDQ_TEST_DIALECT, else SQLite. */
export const defaultDialect = (): FakeDialect => (process.env.VIDQ_TEST_DIALECT === 'postgres' ? 'postgres' : 'sqlite');

export interface FakeSegment {
  kind: SegmentKind;
  start: number;
  end: number;
  text: string;
  confidence?: number;
  extra?: Record<string, unknown>;
  /** A `face` segment's person (the faces analysis groups appearances into people; the user names them). */
  person?: { id: string; name?: string };
}

export interface FakeVideo {
  fileName: string;
  duration: number;
  segments: FakeSegment[];
  width?: number;
  height?: number;
  fps?: number;
  hasAudio?: boolean;
  /** The video's analysis summary (default: every analyzer ran, none reports anything). */
  analysis?: Record<string, unknown>;
}

export class FakeIndex {
  readonly dialect: FakeDialect;
  readonly videos: Video[] = [];
  /** The rows the test asked for, as inserted (people and appearances of `face` segments too). */
  private readonly rows: {
    video: Video;
    segments: (Omit<FakeSegment, 'person'> & { person?: FakeSegment['person'] })[];
  }[] = [];
  private dir: string | null = null;
  private sqlite: Db | null = null;
  private pg: { db: PgDb; database: TestDatabase } | null = null;
  private catalogOf: Catalog | null = null;
  private retrievalOf: RetrievalCore | null = null;
  /** Resolves once the rows are in (at once on SQLite). */
  readonly ready: Promise<void>;

  constructor(vs: FakeVideo[], opts: { dialect?: FakeDialect } = {}) {
    this.dialect = opts.dialect ?? defaultDialect();
    const now = new Date();
    vs.forEach((v, n) => {
      const row = {
        id: `v${n + 1}`,
        indexId: 'i1',
        userId: 'u1',
        sourceUrl: `https://example.com/${v.fileName}`,
        fileName: v.fileName,
        fileType: 'video/mp4',
        storagePath: null,
        sizeBytes: 1_000_000 * (n + 1),
        sha256: null,
        durationSec: v.duration,
        fps: v.fps ?? 25,
        width: v.width ?? 640,
        height: v.height ?? 360,
        videoCodec: 'h264',
        hasAudio: v.hasAudio ?? true,
        status: 'ready' as const,
        stage: null,
        progress: 1,
        error: null,
        analysis: v.analysis ?? {},
        uploadedAt: now,
        updatedAt: now,
      };
      this.videos.push(row as Video);
      this.rows.push({ video: row as Video, segments: v.segments });
    });
    if (this.dialect === 'sqlite') {
      this.dir = mkdtempSync(join(tmpdir(), 'vidq-fake-index-'));
      this.sqlite = openDatabase(join(this.dir, 'vidq.db'));
      // Filled before any test runs (SQLite answers at once: only microtasks stand between).
      this.open(sqliteCatalog(this.sqlite));
      this.ready = this.fill(now);
    } else {
      this.ready = (async () => {
        const database = await freshPostgresDatabase();
        const db = await openPostgres(database.url, { max: 4 });
        this.pg = { db, database };
        this.open(postgresCatalog(db));
        await this.fill(now);
      })();
    }
  }

  private open(c: Catalog): void {
    this.catalogOf = c;
    this.retrievalOf = new RetrievalCore({ catalog: c, embedder: null });
  }

  /** The SQLite database (SQLite fake indexes only). */
  get db(): Db {
    if (!this.sqlite) throw new Error('FakeIndex.db: this fake index is on PostgreSQL; use `catalog`');
    return this.sqlite;
  }

  /** The catalog (after `ready`). */
  get catalog(): Catalog {
    return this.catalogOf!;
  }

  /** The retrieval core over the index (after `ready`). */
  get retrieval(): RetrievalCore {
    return this.retrievalOf!;
  }

  private async fill(now: Date): Promise<void> {
    const c = this.catalogOf!;
    const t = c.t;
    await c.run(async (db) => {
      await db.insert(t.users).values({ id: 'u1', name: 'tester', credits: null, createdAt: now });
      await db.insert(t.mediaIndexes).values({ id: 'i1', userId: 'u1', name: 'fake', createdAt: now, deletedAt: null });
      for (const { video, segments: segs } of this.rows) {
        await db.insert(t.videos).values(video);
        for (const { person, ...s } of segs) {
          const [seg] = await db
            .insert(t.segments)
            .values({ videoId: video.id, ...s, confidence: s.confidence ?? 0.9, extra: s.extra ?? null })
            .returning({ id: t.segments.id });
          if (!person) continue;
          await db
            .insert(t.people)
            .values({ id: person.id, indexId: 'i1', userId: 'u1', name: person.name ?? null, createdAt: now })
            .onConflictDoNothing();
          await db.insert(t.personAppearances).values({
            segmentId: seg!.id,
            personId: person.id,
            videoId: video.id,
            indexId: 'i1',
            descriptor: Buffer.alloc(4),
          });
        }
      }
    });
  }

  /** Asks a question of every video (or of one, by file name), with an optional target. */
  ask(
    prompt: string,
    opts: {
      video?: string;
      target?: string;
      guidance?: string;
      clock?: StreamClock;
      /** Reads the text on screen at a moment (a stand-in for the OCR moment reader). */
      textAt?: (video: Video, t: number) => { text: string; confidence: number }[];
    } = {},
  ): Promise<Composed> {
    return this.ready.then(() => this.askNow(prompt, opts));
  }

  private async askNow(
    prompt: string,
    opts: {
      video?: string;
      target?: string;
      guidance?: string;
      clock?: StreamClock;
      textAt?: (video: Video, t: number) => { text: string; confidence: number }[];
    },
  ): Promise<Composed> {
    let vids = opts.video ? this.videos.filter((v) => v.fileName === opts.video) : this.videos;
    let target = opts.target ? parseTarget(opts.target) : null;
    // Relative time ("now", "the last 10 minutes") as the service reads it, with the test's clock.
    const rel = !target && opts.clock ? await relativeScope(prompt, vids, opts.clock) : null;
    if (rel) [vids, target] = [rel.videos, rel.target];
    return composeAnswer({
      catalog: this.catalog,
      retrieval: this.retrieval,
      embedder: null,
      indexId: 'i1',
      prompt,
      guidance: opts.guidance ?? '',
      videos: vids,
      window: windowOf(target),
      point: target?.point ? target.start : null,
      frameUrl: (videoId, file) => `/media/${videoId}/frames/${file}`,
      textAt: opts.textAt ? (video, t) => async () => opts.textAt!(video, t) : null,
    });
  }

  async close(): Promise<void> {
    await this.ready.catch(() => {});
    if (this.sqlite) this.sqlite.$client.close();
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
    if (this.pg) {
      await this.pg.db.$client.end();
      await this.pg.database.drop();
    }
  }
}

/** Object spans with per-frame counts: [[t, n], ...] sampled once a second. */
export function objectSpan(
  label: string,
  start: number,
  end: number,
  n: number | ((t: number) => number),
  confidence = 0.8,
): FakeSegment {
  const counts: [number, number][] = [];
  for (let t = start; t <= end; t++) counts.push([t, typeof n === 'number' ? n : n(t)]);
  return {
    kind: 'object',
    start,
    end,
    text: label,
    confidence,
    extra: { counts, max_count: Math.max(...counts.map(([, c]) => c)) },
  };
}
