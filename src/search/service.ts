/**
 * Search moments (GET /search): the ranked segments an answer would be built from, without
 * composing one. It uses the one retrieval core (src/search/retrieval.ts) that answers use too.
 *
 * Free of charge: no answer is composed and no model is asked, so it costs what listing an index
 * costs; credits pay for answers (docs/API.md, "Search moments").
 */
import type { Evidence } from '../answering/evidence';
import { readIntent } from '../answering/intent';
import { badRequest, notFound } from '../errors';
import type { IndexService } from '../indexes/service';
import type { MediaLinks } from '../media/links';
import type { Catalog } from '../storage/catalog';
import { SEGMENT_KINDS, videoInIndex } from '../storage/repositories/finder';
import { NOISE, SEM_FLOOR, STRONG } from './relevance';
import type { RetrievalCore } from './retrieval';
import type { SegmentKind, User, Video } from '../storage/rows';

/** Candidates ranked per query: the pages come from these (keyword and semantic top-k fused). */
export const SEARCH_CANDIDATES = 200;
export const SEARCH_MAX_LIMIT = 50;

export interface SearchRequest {
  index: string;
  q: string;
  video?: string;
  /** Comma-separated segment kinds. */
  kinds?: string;
  limit?: number;
  offset?: number;
}

export interface Moment extends Evidence {
  /** Why it matched: a word of the query, its meaning (embedding similarity), or both. */
  matched: 'keyword' | 'meaning' | 'both';
  /** How clearly it bears on the query, 0–1, comparable across kinds: ≥ 0.5 clearly, < 0.2 noise. */
  relevance: number;
}

export interface SearchPage {
  index_id: string;
  q: string;
  moments: Moment[];
  /** Moments found in all (every page). */
  total: number;
  offset: number;
  limit: number;
  /** Offset of the next page, or null on the last one. */
  next_offset: number | null;
  credits_used: number;
  /**
   * True when moments were found but none clearly bears on the query (every relevance < 0.5):
   * they are the closest there are, not matches. When some do, the weaker ones are left out.
   */
  weak_only: boolean;
}

export class SearchService {
  constructor(
    private readonly d: { catalog: Catalog; indexes: IndexService; links: MediaLinks; retrieval: RetrievalCore },
  ) {}

  async search(user: User, req: SearchRequest): Promise<SearchPage> {
    const q = req.q.trim();
    if (!q) throw badRequest('query parameter "q" must not be empty: the words or the idea to look for');
    const kinds = parseKinds(req.kinds);
    const limit = req.limit ?? 20;
    const offset = req.offset ?? 0;
    if (limit < 1 || limit > SEARCH_MAX_LIMIT)
      throw badRequest(`query parameter "limit" must be between 1 and ${SEARCH_MAX_LIMIT}`);
    if (offset < 0 || offset >= SEARCH_CANDIDATES)
      throw badRequest(`query parameter "offset" must be between 0 and ${SEARCH_CANDIDATES - 1}`);
    const index = await this.d.indexes.resolve(user, req.index, { byName: true });
    let vids: Video[];
    if (req.video !== undefined && req.video !== '') {
      const v = await videoInIndex(this.d.catalog, req.video, index.id);
      if (!v) throw notFound(`video ${JSON.stringify(req.video.slice(0, 80))} is not in this index`);
      vids = [v];
    } else {
      vids = await this.d.indexes.videosOf(index.id);
    }
    vids = vids.filter((v) => v.storagePath !== null);
    const byId = new Map(vids.map((v) => [v.id, v]));
    const scope = { videos: vids, window: null, ...(kinds && { kinds: [...kinds] }) };
    const ranked = await this.d.retrieval.retrieve(scope, q, readIntent(q), SEARCH_CANDIDATES);
    // Ordered by relevance (the same scale for every kind). When some moments clearly match, the
    // ones that do not are noise beside them ("red car": not every animal "by meaning"); when none
    // does, the closest are shown and flagged as weak.
    const sorted = ranked
      .filter((r) => (!kinds || kinds.has(r.segment.kind)) && r.relevance >= NOISE)
      .sort((a, b) => b.relevance - a.relevance || b.score - a.score);
    const strong = sorted.length > 0 && sorted[0]!.relevance >= STRONG;
    const hits = strong ? sorted.filter((r) => r.relevance >= STRONG) : sorted;
    const shown = hits.slice(offset, offset + limit);
    // Every moment's frame in one read.
    const frames = await this.d.retrieval.finder.framesNear(
      shown.map((r) => [r.segment.videoId, (r.segment.start + r.segment.end) / 2]),
    );
    const page = shown.map((r, i): Moment => {
      const s = r.segment;
      const frame = frames[i];
      const semantic = r.cosine !== null && r.cosine >= SEM_FLOOR;
      return {
        video_id: s.videoId,
        file_name: byId.get(s.videoId)?.fileName ?? '',
        start: s.start,
        end: s.end,
        kind: s.kind,
        text: s.text,
        score: Math.round(r.relevance * 1000) / 1000,
        relevance: Math.round(r.relevance * 1000) / 1000,
        frame_url: frame ? this.d.links.sign(`/media/${s.videoId}/frames/${frame}`) : null,
        matched: r.keyword && semantic ? 'both' : r.keyword ? 'keyword' : 'meaning',
      };
    });
    const next = offset + limit;
    return {
      index_id: index.id,
      q,
      moments: page,
      total: hits.length,
      offset,
      limit,
      next_offset: next < hits.length ? next : null,
      credits_used: 0,
      weak_only: hits.length > 0 && !strong,
    };
  }
}

function parseKinds(raw: string | undefined): Set<SegmentKind> | null {
  if (raw === undefined || raw.trim() === '') return null;
  const names = raw
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean);
  const unknown = names.filter((k) => !(SEGMENT_KINDS as readonly string[]).includes(k));
  if (unknown.length)
    throw badRequest(
      `query parameter "kinds": unknown kind ${JSON.stringify(unknown[0]!.slice(0, 40))}; use a comma-separated list of ${SEGMENT_KINDS.join(', ')}`,
    );
  return new Set(names as SegmentKind[]);
}
