/**
 * Search by image: the query image is read by the same models that read the videos (it becomes a
 * one-frame video in a temporary folder), and what they find is matched against the index:
 * - faces → the people of the index (FaceRes descriptors, the people grouping's similarity);
 * - detected objects → object segments of the same label, ranked up when their colours agree;
 * - on-screen text (OCR) → the index's text, speech and other segments, by the retrieval core;
 * - the picture itself → near-identical sampled frames (perceptual hash over the stored frames);
 * - with a vision model server configured, its caption → the retrieval core.
 * Each hit says which of these found it.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Metadata } from 'sharp';
import { createAnalyzers } from '../analysis';
import { analysisAssets } from '../analysis/assets/extract';
import type { Limiter } from '../analysis/engines/model-server/client';
import { CaptionAnalyzer } from '../analysis/stages/captions';
import type { Analyzer, NewSegment, StageContext } from '../analysis/contracts';
import { FacesAnalyzer } from '../analysis/stages/faces';
import { ObjectsAnalyzer } from '../analysis/stages/objects';
import { OcrAnalyzer } from '../analysis/stages/ocr';
import { readIntent } from '../answering/intent';
import type { Config } from '../config';
import { badRequest } from '../errors';
import { randomId } from '../ids';
import type { Logger } from '../log';
import { cosine, descriptorOf, JOIN_SIMILARITY } from '../people/group';
import type { RetrievalCore, ScopeWindow } from '../search/retrieval';
import type { Catalog } from '../storage/catalog';
import { faceDescriptors, videoFrames } from '../storage/repositories/flows';
import type { DataDir } from '../storage/files';
import type { Segment, SegmentKind } from '../storage/rows';
import { dHash, hamming, SAME_PICTURE_BITS } from './phash';
import { loadSharp } from '../analysis/assets/sharp';

/** What matched a hit: the reasons named in the answer's `matched_by`. */
export type ImageSignal = 'faces' | 'objects' | 'colours' | 'text' | 'frame' | 'caption';

export interface ImageHit {
  videoId: string;
  start: number;
  end: number;
  kind: SegmentKind;
  /** 0..1: face or caption similarity, share of the frame's bits equal, colour agreement… */
  score: number;
  via: ImageSignal[];
}

/** What the models read from the query image. */
export interface ImageReading {
  width: number;
  height: number;
  text: string;
  objects: { label: string; colours: string[] }[];
  faces: number[][];
  caption: string | null;
  hash: bigint;
  /** Readers that could not run (their model is not installed, the server is down), with why. */
  skipped: Record<string, string>;
}

/** Long side the query is scaled to before the models see it: the size the sampled frames have. */
const QUERY_LONG_SIDE = 960;
/** A picture with more pixels than this is refused before it is decoded (a decompression bomb). */
const MAX_QUERY_PIXELS = 50_000_000;
/** Text or caption hits below this similarity (and without a keyword) are not shown. */
const MIN_TEXT_COSINE = 0.45;

export class ImageQueries {
  private readers: {
    ocr?: OcrAnalyzer;
    objects?: ObjectsAnalyzer;
    faces?: FacesAnalyzer;
    caption?: CaptionAnalyzer;
  } | null = null;
  /** Hashes of each video's sampled frames, computed on the first query that needs them. */
  private readonly hashes = new Map<string, { count: number; frames: { t: number; hash: bigint }[] }>();
  /** One image at a time: the models are one Worker each. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly d: {
      catalog: Catalog;
      config: Config;
      files: DataDir;
      retrieval: RetrievalCore;
      ffmpeg: () => Promise<string>;
      log: Logger;
      /** The process's one limit on model-server requests (the captioner's). */
      modelLimiter: Limiter;
    },
  ) {}

  /** Bytes of an image file → what the models read from it; 400 when it is not an image. */
  read(bytes: Buffer, signal: AbortSignal): Promise<ImageReading> {
    const run = this.queue.then(() => this.readNow(bytes, signal));
    this.queue = run.catch(() => {});
    return run;
  }

  /** The moments of the scope that the reading matches, best first. */
  async match(scope: ScopeWindow, indexId: string, reading: ImageReading, limit: number): Promise<ImageHit[]> {
    const hits: ImageHit[] = [];
    if (scope.videos.length === 0) return hits;
    const videoIds = scope.videos.map((v) => v.id);
    hits.push(...(await this.sameFrames(scope, reading.hash)));
    hits.push(...(await this.samePeople(indexId, videoIds, reading.faces)));
    hits.push(...(await this.sameObjects(scope, reading.objects)));
    if (reading.text) hits.push(...(await this.byText(scope, reading.text, 'text', limit)));
    if (reading.caption) hits.push(...(await this.byText(scope, reading.caption, 'caption', limit)));
    // One hit per moment: the reasons of hits over the same span are joined, the best score kept.
    const merged = new Map<string, ImageHit>();
    for (const h of hits) {
      const key = `${h.videoId}:${h.kind}:${h.start}:${h.end}`;
      const m = merged.get(key);
      if (!m) merged.set(key, { ...h, via: [...h.via] });
      else {
        m.score = Math.max(m.score, h.score);
        for (const v of h.via) if (!m.via.includes(v)) m.via.push(v);
      }
    }
    return [...merged.values()].sort((a, b) => b.score - a.score || a.start - b.start);
  }

  async close(): Promise<void> {
    const r = this.readers;
    this.readers = null;
    for (const a of Object.values(r ?? {}) as (Analyzer | undefined)[]) await a?.close?.();
  }

  private async readNow(bytes: Buffer, signal: AbortSignal): Promise<ImageReading> {
    const sharp = await loadSharp(this.d.files.assetsDir);
    let meta: Metadata;
    try {
      meta = await sharp(bytes, { limitInputPixels: MAX_QUERY_PIXELS }).metadata();
    } catch {
      throw badRequest('image is neither an http(s) URL nor the base64 of an image file (PNG, JPEG, WebP, GIF)');
    }
    if (!meta.width || !meta.height) throw badRequest('image has no size: send a PNG or JPEG picture');
    if (meta.width * meta.height > MAX_QUERY_PIXELS)
      throw badRequest(`image has more than ${MAX_QUERY_PIXELS} pixels; send a smaller picture`);
    const dir = join(this.d.files.tmpDir, `image-${randomId(16)}`);
    mkdirSync(join(dir, 'frames'), { recursive: true, mode: 0o700 });
    try {
      const jpeg = await sharp(bytes, { limitInputPixels: MAX_QUERY_PIXELS })
        .rotate()
        .flatten({ background: '#000000' })
        .resize(QUERY_LONG_SIDE, QUERY_LONG_SIDE, { fit: 'inside', withoutEnlargement: true })
        .jpeg({ quality: 90 })
        .toBuffer({ resolveWithObject: true });
      const path = join(dir, 'frames', '000000.jpg');
      writeFileSync(path, jpeg.data);
      const frame = { t: 0, shot: 0, file: '000000.jpg', path };
      const ctx: StageContext = {
        video: {
          id: 'query-image',
          path,
          dir,
          durationSec: 1,
          fps: 1,
          width: jpeg.info.width,
          height: jpeg.info.height,
          hasAudio: false,
        },
        ffmpeg: await this.d.ffmpeg(),
        signal,
        log: this.d.log,
        progress: () => {},
        frames: () => [frame],
        segments: () => [],
      };
      const readers = await this.ensureReaders();
      const skipped: Record<string, string> = {};
      const run = async (name: string, a: Analyzer | undefined): Promise<NewSegment[]> => {
        if (!a) return [];
        try {
          return (await a.run(ctx)).segments ?? [];
        } catch (e) {
          signal.throwIfAborted();
          skipped[name] = (e as Error).message;
          this.d.log.warn('image query: a reader failed', { reader: name, reason: (e as Error).message });
          return [];
        }
      };
      // One after another: each model is one core, and the machine serves other requests too.
      const text = (await run('ocr', readers.ocr)).map((s) => s.text).join(' ');
      const objects = (await run('objects', readers.objects)).map((s) => ({
        label: s.text,
        colours: (s.extra?.colours as string[] | undefined) ?? [],
      }));
      const faces = (await run('faces', readers.faces))
        .map((s) => s.extra?.descriptor)
        .filter((d): d is number[] => Array.isArray(d) && d.length > 0);
      const caption = (await run('caption', readers.caption))[0]?.text ?? null;
      return {
        width: meta.width,
        height: meta.height,
        text: text.trim(),
        objects,
        faces,
        caption,
        hash: await dHash(sharp, jpeg.data),
        skipped,
      };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  private async ensureReaders() {
    if (this.readers) return this.readers;
    const c = this.d.config;
    const wanted = c.analyzers.split(',').map((s) => s.trim());
    const assets = await analysisAssets(this.d.files.assetsDir, wanted);
    const all = createAnalyzers(c, { assets, modelLimiter: this.d.modelLimiter });
    this.readers = {
      ocr: all.find((a): a is OcrAnalyzer => a instanceof OcrAnalyzer),
      objects: all.find((a): a is ObjectsAnalyzer => a instanceof ObjectsAnalyzer),
      faces: all.find((a): a is FacesAnalyzer => a instanceof FacesAnalyzer),
      caption: all.find((a): a is CaptionAnalyzer => a instanceof CaptionAnalyzer),
    };
    return this.readers;
  }

  /** Sampled frames whose hash is within SAME_PICTURE_BITS of the query's, as their shot's moment. */
  private async sameFrames(scope: ScopeWindow, hash: bigint): Promise<ImageHit[]> {
    const hits: ImageHit[] = [];
    for (const v of scope.videos) {
      const near = (await this.frameHashesOf(v.id)).filter((f) => hamming(f.hash, hash) <= SAME_PICTURE_BITS);
      if (!near.length) continue;
      const shots = await this.d.retrieval.byKind({ videos: [v], window: null }, ['shot']);
      for (const f of near) {
        const shot = shots.find((s) => s.start <= f.t && f.t <= s.end);
        const start = Math.max(shot?.start ?? 0, f.t - 2);
        const end = Math.min(shot?.end ?? f.t + 2, f.t + 2);
        const score = 1 - hamming(f.hash, hash) / 64;
        hits.push({ videoId: v.id, start, end, kind: 'shot', score, via: ['frame'] });
      }
    }
    return hits;
  }

  /** A video changed (reanalysed or removed): its frame hashes are read again when next needed. */
  forget(videoId: string): void {
    this.hashes.delete(videoId);
  }

  /** Hashes of a video's sampled frames (cached until its frames change). */
  async frameHashesOf(videoId: string): Promise<{ t: number; hash: bigint }[]> {
    const rows = await videoFrames(this.d.catalog, videoId);
    const cached = this.hashes.get(videoId);
    if (cached && cached.count === rows.length) return cached.frames;
    const dir = join(this.d.files.videoDir(videoId), 'frames');
    const sharp = await loadSharp(this.d.files.assetsDir);
    const out: { t: number; hash: bigint }[] = [];
    for (const r of rows) {
      // Generated names only (see schema frames.file); a file that is gone is skipped.
      if (!/^[\w.-]+$/.test(r.file)) continue;
      try {
        out.push({ t: r.t, hash: await dHash(sharp, join(dir, r.file)) });
      } catch {
        // the frame was removed (reanalysis in progress)
      }
    }
    this.hashes.set(videoId, { count: rows.length, frames: out });
    if (this.hashes.size > 256) this.hashes.delete(this.hashes.keys().next().value!);
    return out;
  }

  /** Face appearances of the index whose descriptor is as close as the people grouping needs. */
  private async samePeople(indexId: string, videoIds: string[], faces: number[][]): Promise<ImageHit[]> {
    if (!faces.length) return [];
    const rows = await faceDescriptors(this.d.catalog, indexId, videoIds);
    const hits: ImageHit[] = [];
    for (const r of rows) {
      const d = descriptorOf(r.descriptor);
      const best = Math.max(...faces.map((f) => cosine(f, d)));
      if (best >= JOIN_SIMILARITY)
        hits.push({ videoId: r.videoId, start: r.start, end: r.end, kind: 'face', score: best, via: ['faces'] });
    }
    return hits;
  }

  /** Object segments of the query's labels; those whose colours agree rank above the rest. */
  private async sameObjects(scope: ScopeWindow, objects: ImageReading['objects']): Promise<ImageHit[]> {
    if (!objects.length) return [];
    const labels = [...new Set(objects.map((o) => o.label))];
    const found = await this.d.retrieval.byKind(scope, ['object'], { labels, limit: 500 });
    return found.map((s: Segment): ImageHit => {
      const theirs = new Set((s.extra?.colours as string[] | undefined) ?? []);
      let agree = 0;
      for (const o of objects)
        if (o.label === s.text && o.colours.length)
          agree = Math.max(agree, o.colours.filter((c) => theirs.has(c)).length / o.colours.length);
      return {
        videoId: s.videoId,
        start: s.start,
        end: s.end,
        kind: 'object',
        score: 0.5 + 0.3 * agree,
        via: agree > 0 ? ['objects', 'colours'] : ['objects'],
      };
    });
  }

  /** Segments the retrieval core finds for a text read from (or said about) the image. */
  private async byText(scope: ScopeWindow, text: string, via: 'text' | 'caption', limit: number): Promise<ImageHit[]> {
    const ranked = await this.d.retrieval.retrieve(scope, text.slice(0, 1000), readIntent(text), Math.max(limit, 20));
    return ranked
      .filter((r) => r.keyword || (r.cosine ?? 0) >= MIN_TEXT_COSINE)
      .map((r) => ({
        videoId: r.segment.videoId,
        start: r.segment.start,
        end: r.segment.end,
        kind: r.segment.kind,
        score: Math.max(r.cosine ?? 0, r.keyword ? 0.7 : 0),
        via: [via],
      }));
  }
}
