/**
 * POST /inquire. Validates the question's scope (index, target_video, target), charges credits
 * (check and debit in one statement; refunded when answering fails) and composes the answer.
 *
 * The answer is composed from the indexed evidence (see compose.ts); it never invents.
 */
import { and, eq } from 'drizzle-orm';
import type { AccountService } from '../accounts/service';
import type { Config } from '../config';
import { ApiError, badRequest, notFound } from '../errors';
import type { IndexService } from '../indexes/service';
import type { Db } from '../storage/db';
import { videos, type MediaIndex, type User, type Video } from '../storage/schema';
import type { Embedder } from '../analysis/embedder';
import type { MediaLinks } from '../media/links';
import { Composer, type Composed } from './compose';
import { EmbeddingCache, EvidenceFinder, windowOf, type Evidence } from './evidence';
import { formatTime, parseTarget, type TimeTarget } from './target';

export interface InquireRequest {
  index: string;
  prompt: string;
  guidance?: string;
  target?: string;
  target_video?: string;
}

export interface InquireResponse {
  status: 'complete';
  output: string;
  /** Additive: what the answer is based on, best first; every time in `output` is one of these. */
  evidence: Evidence[];
  /** Additive: which backend wrote the answer. */
  model: string;
  /** Additive: credits this question cost. */
  credits_used: number;
}

export interface Scope {
  index: MediaIndex;
  videos: Video[];
  target: TimeTarget | null;
}

export class AnsweringService {
  private readonly embeddings: EmbeddingCache;
  private readonly finder: EvidenceFinder;

  constructor(
    private readonly d: { db: Db; config: Config; accounts: AccountService; indexes: IndexService; links: MediaLinks; embedder: Embedder | null },
  ) {
    this.embeddings = new EmbeddingCache(d.db);
    this.finder = new EvidenceFinder(d.db, this.embeddings, d.embedder);
  }

  /** A video's segments changed (analysis progressed, or it was removed). */
  invalidate(videoId: string): void {
    this.embeddings.invalidate(videoId);
  }

  /** Resolves and checks everything the question names; throws 400/404 before any charge. */
  scope(user: User, req: InquireRequest): Scope {
    const index = this.d.indexes.resolve(user, req.index, { byName: false });
    const target = req.target !== undefined && req.target !== '' ? parseTarget(req.target) : null;
    let vids: Video[];
    if (req.target_video !== undefined && req.target_video !== '') {
      const v = this.d.db
        .select()
        .from(videos)
        .where(and(eq(videos.id, req.target_video), eq(videos.indexId, index.id)))
        .get();
      if (!v) throw notFound(`target_video ${JSON.stringify(req.target_video.slice(0, 80))} is not in this index`);
      if (target && v.durationSec !== null && target.start > v.durationSec + 0.5) {
        throw badRequest(`target ${formatTime(target.start)} is past the end of the video (${formatTime(v.durationSec)})`);
      }
      vids = [v];
    } else {
      vids = this.d.indexes.videosOf(index.id);
    }
    return { index, videos: vids, target };
  }

  async inquire(user: User, req: InquireRequest): Promise<InquireResponse> {
    const scope = this.scope(user, req);
    const cost = this.d.config.inquireCost;
    if (!this.d.accounts.charge(user.id, cost, 'inquire')) {
      const balance = this.d.accounts.getUser(user.id)?.credits ?? 0;
      throw badRequest(`insufficient credits: the balance is ${balance} and a question costs ${cost}`);
    }
    try {
      const composed = await this.compose(req, scope);
      return { status: 'complete', output: composed.output, evidence: composed.evidence, model: COMPOSER_NAME, credits_used: cost };
    } catch (e) {
      this.d.accounts.refund(user.id, cost, 'inquire failed');
      throw e instanceof ApiError ? e : new ApiError(500, `answering failed: ${(e as Error).message}`);
    }
  }

  compose(req: InquireRequest, scope: Scope): Promise<Composed> {
    return new Composer({
      prompt: req.prompt,
      guidance: req.guidance ?? '',
      scope: { videos: scope.videos, window: windowOf(scope.target) },
      finder: this.finder,
      frameUrl: (videoId, file) => this.d.links.sign(`/media/${videoId}/frames/${file}`),
    }).compose();
  }
}

/** Reported as `model` when no generative model wrote the answer. */
export const COMPOSER_NAME = 'vidq-composer (extractive, no generative model)';
