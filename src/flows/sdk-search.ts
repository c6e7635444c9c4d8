/**
 * Search in the hosted API's shape (POST /search, flow core/search): three lists of matches —
 * what is seen (`embeddings`), what is said (`transcript`), what is written (`ocr`) — each match
 * `[file_id, start_frame, end_frame, "m min, s sec", "m min, s sec"]`. A text query goes through
 * the same retrieval core as GET /search; an image query through ImageQueries.
 *
 * `threshold` is a distance cut on a 0–1000 scale where 0 is the best match: for a text query the
 * distance is 1000 × (1 − score / best score), for an image 1000 × (1 − similarity). The SDK's
 * default of 1000 keeps everything.
 */
import { rmSync } from 'node:fs';
import { readIntent } from '../answering/intent';
import type { Config } from '../config';
import { ApiError, badRequest, notFound } from '../errors';
import type { IndexService } from '../indexes/service';
import { downloadToFile } from '../ingest/download';
import { parseSourceUrl } from '../ingest/url-guard';
import type { RetrievalCore, ScopeWindow } from '../search/retrieval';
import type { Catalog } from '../storage/catalog';
import { videosInIndex } from '../storage/repositories/flows';
import type { DataDir } from '../storage/files';
import type { MediaIndex, SegmentKind, User, Video } from '../storage/rows';
import { bucketOf, sdkMatch, type SdkMatch } from './format';
import type { ImageQueries, ImageReading, ImageSignal } from './image-query';

export const MAX_NUMARGS = 100;
const RANKED = 200;

export interface SdkSearchRequest {
  /** Index name or index_id. */
  index: string;
  query?: string;
  /** An http(s) URL or the base64 of an image file; wins over `query`. */
  image?: string;
  numargs?: number;
  threshold?: number;
  /** File ids to search in (the SDK may add the original extension: "ID.mp4"). */
  subindex?: string[];
}

export interface SdkSearchOutput {
  embeddings: SdkMatch[];
  transcript: SdkMatch[];
  ocr: SdkMatch[];
}

export interface SdkSearchAnswer {
  status: 'complete';
  output: SdkSearchOutput;
  /** Additive: how the query was matched (text, or the image readers that found something). */
  matched_by: string[];
  /** Additive: what was read from a query image. */
  image?: {
    width: number;
    height: number;
    text: string;
    objects: { label: string; colours: string[] }[];
    faces: number;
    caption: string | null;
    skipped: Record<string, string>;
  };
}

interface Scored {
  videoId: string;
  start: number;
  end: number;
  kind: SegmentKind;
  distance: number;
  via?: ImageSignal[];
}

export class SdkSearchService {
  constructor(
    private readonly d: {
      catalog: Catalog;
      config: Config;
      files: DataDir;
      indexes: IndexService;
      retrieval: RetrievalCore;
      images: ImageQueries | null;
    },
  ) {}

  async search(user: User, req: SdkSearchRequest, signal: AbortSignal): Promise<SdkSearchAnswer> {
    const numargs = req.numargs ?? 5;
    const threshold = req.threshold ?? 1000;
    if (!Number.isInteger(numargs) || numargs < 1 || numargs > MAX_NUMARGS)
      throw badRequest(`field "numargs" must be a whole number from 1 to ${MAX_NUMARGS}`);
    if (!Number.isFinite(threshold) || threshold < 0) throw badRequest('field "threshold" must be a number ≥ 0');
    const image = typeof req.image === 'string' && req.image.trim() !== '' ? req.image.trim() : null;
    const query = (req.query ?? '').trim();
    if (!image && !query) throw badRequest('send "query" (words to look for) or "image" (an http(s) URL or base64)');
    if (query.length > 1000) throw badRequest('field "query" must be at most 1000 characters');
    const index = await this.d.indexes.resolve(user, req.index, { byName: true });
    const scope = await this.scopeOf(index, req.subindex);
    const fps = new Map(scope.videos.map((v) => [v.id, v.fps]));
    let scored: Scored[];
    let matchedBy: string[];
    let reading: ImageReading | undefined;
    if (image) {
      if (!this.d.images) throw new ApiError(501, 'search by image is not available on this server');
      reading = await this.d.images.read(await this.imageBytes(image, signal), signal);
      const hits = await this.d.images.match(scope, index.id, reading, numargs * 3);
      scored = hits.map((h) => ({ ...h, distance: Math.round(1000 * (1 - h.score)) }));
      matchedBy = [...new Set(hits.flatMap((h) => h.via))];
    } else {
      const ranked = await this.d.retrieval.retrieve(scope, query, readIntent(query), RANKED);
      const top = ranked[0]?.score ?? 1;
      scored = ranked.map((r) => ({
        videoId: r.segment.videoId,
        start: r.segment.start,
        end: r.segment.end,
        kind: r.segment.kind,
        distance: Math.round(1000 * (1 - r.score / (top || 1))),
      }));
      matchedBy = ['text'];
    }
    const output: SdkSearchOutput = { embeddings: [], transcript: [], ocr: [] };
    const seen = new Set<string>();
    for (const s of scored) {
      if (s.distance > threshold) continue;
      const list = output[bucketOf(s.kind)];
      if (list.length >= numargs) continue;
      const m = sdkMatch(s.videoId, s.start, s.end, fps.get(s.videoId) ?? null);
      const key = `${bucketOf(s.kind)}:${m.join('|')}`;
      if (seen.has(key)) continue;
      seen.add(key);
      list.push(m);
    }
    const answer: SdkSearchAnswer = { status: 'complete', output, matched_by: matchedBy };
    if (reading)
      answer.image = {
        width: reading.width,
        height: reading.height,
        text: reading.text,
        objects: reading.objects,
        faces: reading.faces.length,
        caption: reading.caption,
        skipped: reading.skipped,
      };
    return answer;
  }

  /** The stored videos of the index, or of the listed files of it (404 for a file not in it). */
  async scopeOf(index: MediaIndex, subindex: string[] | undefined): Promise<ScopeWindow> {
    let vids: Video[];
    if (subindex?.length) {
      // The SDK cuts ids at the first dot in one place; ids given with an extension are accepted.
      const ids = [...new Set(subindex.map((id) => id.split('.')[0]!))];
      vids = await videosInIndex(this.d.catalog, index.id, ids);
      const missing = ids.find((id) => !vids.some((v) => v.id === id));
      if (missing !== undefined) throw notFound(`file ${JSON.stringify(missing.slice(0, 80))} is not in this index`);
    } else vids = await this.d.indexes.videosOf(index.id);
    return { videos: vids.filter((v) => v.storagePath !== null), window: null };
  }

  /** The image's bytes: fetched from an http(s) URL under the downloader's rules, or decoded from base64. */
  private async imageBytes(image: string, signal: AbortSignal): Promise<Buffer> {
    const max = this.d.config.maxImageBodyBytes;
    // Anything written like a URL is judged as one (an ftp:// or file:// address is refused as such).
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(image)) {
      const url = parseSourceUrl(image);
      const dest = this.d.files.tempFile();
      try {
        const c = this.d.config;
        await downloadToFile(url, dest, {
          policy: { allowPrivate: c.allowPrivateUrls },
          maxBytes: max,
          connectTimeoutMs: c.connectTimeoutMs,
          idleTimeoutMs: c.idleTimeoutMs,
          maxRedirects: c.maxRedirects,
          deadlineMs: 60_000,
          signal,
        });
        return Buffer.from(await Bun.file(dest).arrayBuffer());
      } finally {
        rmSync(dest, { force: true });
      }
    }
    const b64 = image.replace(/^data:image\/[\w.+-]+;base64,/i, '').replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(b64))
      throw badRequest('field "image" must be an http(s) URL or the base64 of an image file');
    const bytes = Buffer.from(b64, 'base64');
    if (bytes.length === 0) throw badRequest('field "image" is empty');
    return bytes;
  }
}
