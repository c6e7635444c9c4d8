/**
 * POST /inquire. Validates the question's scope (index, target_video, target), charges credits
 * (check and debit in one statement; refunded when answering fails) and composes the answer.
 *
 * Until the analysis pipeline indexes what is seen and said, the answer is built only from what
 * the service knows about the files (names, durations, formats) and says so: it never invents.
 */
import { and, eq } from 'drizzle-orm';
import type { AccountService } from '../accounts/service';
import type { Config } from '../config';
import { ApiError, badRequest, notFound } from '../errors';
import type { IndexService } from '../indexes/service';
import type { Db } from '../storage/db';
import { videos, type MediaIndex, type User, type Video } from '../storage/schema';
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
  /** Credits this question cost (additive field). */
  credits_used: number;
}

export interface Scope {
  index: MediaIndex;
  videos: Video[];
  target: TimeTarget | null;
}

export class AnsweringService {
  constructor(
    private readonly d: { db: Db; config: Config; accounts: AccountService; indexes: IndexService },
  ) {}

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

  inquire(user: User, req: InquireRequest): InquireResponse {
    const scope = this.scope(user, req);
    const cost = this.d.config.inquireCost;
    if (!this.d.accounts.charge(user.id, cost, 'inquire')) {
      const balance = this.d.accounts.getUser(user.id)?.credits ?? 0;
      throw badRequest(`insufficient credits: the balance is ${balance} and a question costs ${cost}`);
    }
    try {
      return { status: 'complete', output: composeFromMetadata(req, scope), credits_used: cost };
    } catch (e) {
      this.d.accounts.refund(user.id, cost, 'inquire failed');
      throw e instanceof ApiError ? e : new ApiError(500, `answering failed: ${(e as Error).message}`);
    }
  }
}

function describeVideo(v: Video): string {
  if (v.status !== 'ready') return `${v.fileName} (${v.status}${v.error ? `: ${v.error}` : ''})`;
  const parts = [formatTime(v.durationSec ?? 0), `${v.width}×${v.height}`, `${Math.round((v.fps ?? 0) * 100) / 100} fps`, v.hasAudio ? 'with sound' : 'no sound'];
  return `${v.fileName} (${parts.join(', ')})`;
}

function composeFromMetadata(req: InquireRequest, scope: Scope): string {
  const { index, videos: vids, target } = scope;
  if (vids.length === 0) return `The index "${index.name}" holds no videos yet, so there is nothing to answer "${req.prompt.slice(0, 200)}" from. Add a video with POST /remote-upload.`;
  const where = target ? (target.point ? ` at ${formatTime(target.start)}` : ` from ${formatTime(target.start)} to ${formatTime(target.end)}`) : '';
  const list = vids.map(describeVideo).join('; ');
  const what = vids.length === 1 ? `This is ${list}.` : `The index "${index.name}" holds ${vids.length} videos: ${list}.`;
  return `I could not find an answer to "${req.prompt.slice(0, 200)}"${where}: what is seen and said in the video has not been analysed, so I only know the files themselves. ${what}`;
}
