/**
 * A fake index for unit tests of the answering: a real SQLite database (temporary folder) holding
 * videos and the segments a test writes down, answered by the real answering core with no models
 * (no embedder, no generator). Segments in, answer out, in milliseconds.
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
import { openDatabase, type Db } from '../src/storage/db';
import {
  mediaIndexes,
  people,
  personAppearances,
  segments,
  users,
  videos,
  type SegmentKind,
  type Video,
} from '../src/storage/schema';

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
  readonly db: Db;
  readonly videos: Video[] = [];
  private readonly dir: string;
  private readonly retrieval: RetrievalCore;

  constructor(vs: FakeVideo[]) {
    this.dir = mkdtempSync(join(tmpdir(), 'vidq-fake-index-'));
    this.db = openDatabase(join(this.dir, 'vidq.db'));
    const now = new Date();
    this.db.insert(users).values({ id: 'u1', name: 'tester', credits: null, createdAt: now }).run();
    this.db
      .insert(mediaIndexes)
      .values({ id: 'i1', userId: 'u1', name: 'fake', createdAt: now, deletedAt: null })
      .run();
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
      this.db.insert(videos).values(row).run();
      this.videos.push(row as Video);
      for (const { person, ...s } of v.segments) {
        const seg = this.db
          .insert(segments)
          .values({ videoId: row.id, ...s, confidence: s.confidence ?? 0.9, extra: s.extra ?? null })
          .returning({ id: segments.id })
          .get();
        if (!person) continue;
        this.db
          .insert(people)
          .values({ id: person.id, indexId: 'i1', userId: 'u1', name: person.name ?? null, createdAt: now })
          .onConflictDoNothing()
          .run();
        this.db
          .insert(personAppearances)
          .values({
            segmentId: seg.id,
            personId: person.id,
            videoId: row.id,
            indexId: 'i1',
            descriptor: Buffer.alloc(4),
          })
          .run();
      }
    });
    this.retrieval = new RetrievalCore({ db: this.db, embedder: null });
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
    let vids = opts.video ? this.videos.filter((v) => v.fileName === opts.video) : this.videos;
    let target = opts.target ? parseTarget(opts.target) : null;
    // Relative time ("now", "the last 10 minutes") as the service reads it, with the test's clock.
    const rel = !target && opts.clock ? relativeScope(prompt, vids, opts.clock) : null;
    if (rel) [vids, target] = [rel.videos, rel.target];
    return composeAnswer({
      db: this.db,
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

  close(): void {
    this.db.$client.close();
    rmSync(this.dir, { recursive: true, force: true });
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
