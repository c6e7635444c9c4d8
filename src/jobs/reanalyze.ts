/**
 * Reanalysis: bring an indexed video up to date after a model was added or changed (a captioner
 * configured later, a transcriber, another embedder). Only the named stages run, through the same
 * crash-safe job queue as a first analysis; the other segments stay. By default, every stage whose
 * engine (or model) differs from the one recorded in the video's `metadata.analysis`, or that was
 * skipped last time (its server was down), runs. The embeddings stage follows any stage that adds
 * segments, so the new ones are searchable by meaning.
 */
import { REANALYZABLE } from '../analysis/analyzers';
import type { Analyzer } from '../analysis/contracts';
import { ApiError, badRequest, notFound, tooManyRequests } from '../errors';
import type { Catalog } from '../storage/catalog';
import type { User } from '../storage/rows';
import { activeIndexesNamed } from '../storage/repositories/indexes';
import { activeVideoOf, readyActiveVideos, videoIdsOfIndex } from '../storage/repositories/videos';
import type { JobQueue } from './queue';

const ALIASES: Record<string, string> = { transcripts: 'speech', transcript: 'speech', caption: 'captions' };

/** The part of an analyzer a plan needs (the server builds them without loading any model). */
export type StageInfo = Pick<Analyzer, 'stage'> & { info: { kind: string; name: string } };

export interface ReanalyzeDeps {
  catalog: Catalog;
  queue: JobQueue;
  /** The configured analyzers, in pipeline order. */
  stages: () => readonly StageInfo[];
  /** Analysis workers configured (0: nothing would ever run the job). */
  workers: number;
  /** --user-max-queued: reanalyses count with uploads waiting for analysis (0: no cap). */
  userMaxQueued?: number;
  onQueued?: (videoId: string) => void;
}

export class ReanalyzeService {
  constructor(private readonly d: ReanalyzeDeps) {}

  /** Queues a reanalysis of one of `user`'s videos; returns the analyzer names that will run. */
  async request(
    user: User,
    fileId: string,
    requested: string[] | undefined,
  ): Promise<{ file_id: string; analyzers: string[] }> {
    const v = await activeVideoOf(this.d.catalog, user.id, fileId);
    if (!v) throw notFound('no such video');
    const stages = this.plan(v.analysis ?? {}, requested);
    if (this.d.workers < 1)
      throw new ApiError(409, 'analysis is off on this server (--analysis-workers 0): nothing would run a reanalysis');
    if (!stages.length)
      throw new ApiError(
        409,
        'nothing to reanalyze: every stage ran with the engine configured now; name them in "analyzers" to run them again',
      );
    const outcome = await this.d.queue.reanalyze(
      v.id,
      stages.map((s) => s.stage),
      new Date(),
      this.d.userMaxQueued ?? 0,
    );
    if (outcome === 'full')
      throw tooManyRequests(
        `you have ${this.d.userMaxQueued} videos downloading or waiting for analysis, the per-user limit (--user-max-queued, VIDQ_USER_MAX_QUEUED); wait for some to be ready, or ask the operator to raise it`,
      );
    if (outcome === 'busy') throw new ApiError(409, 'this video is being analysed already; ask again once it is ready');
    if (outcome === 'not-ready')
      throw new ApiError(
        409,
        'this video has no finished analysis to add to (it is still downloading, or it failed: upload it again)',
      );
    this.d.onQueued?.(v.id);
    return { file_id: v.id, analyzers: stages.map(nameOf) };
  }

  /** See queueReembedding; wakes the workers when it queued anything. */
  async reembedChanged(): Promise<string[]> {
    const ids = await queueReembedding(this.d);
    for (const id of ids) this.d.onQueued?.(id);
    return ids;
  }

  /**
   * The stages to run, in pipeline order. `requested`: names from REANALYZABLE (unknown or
   * unconfigured ones are a 400); unset: the stages whose engine changed or was skipped.
   */
  plan(analysis: Record<string, unknown>, requested: string[] | undefined): StageInfo[] {
    const configured = this.d.stages().filter((s) => (REANALYZABLE as readonly string[]).includes(nameOf(s)));
    let chosen: StageInfo[];
    if (requested) {
      const names = requested.map((n) => ALIASES[n] ?? n);
      const unknown = names.filter((n) => !(REANALYZABLE as readonly string[]).includes(n));
      if (unknown.length)
        throw badRequest(
          `analyzers: unknown ${unknown.map((n) => JSON.stringify(n)).join(', ')}; choose from ${REANALYZABLE.join(', ')}`,
        );
      const off = names.filter((n) => !configured.some((s) => nameOf(s) === n));
      if (off.length)
        throw badRequest(
          `analyzers: ${off.join(', ')} ${off.length > 1 ? 'are' : 'is'} not configured on this server${off.includes('captions') ? ' (captions need --captioner openai)' : ''}`,
        );
      chosen = configured.filter((s) => names.includes(nameOf(s)));
    } else {
      chosen = configured.filter((s) => changed(analysis[s.info.kind], s.info.name));
    }
    // New segments need their vectors: the embeddings stage follows any stage that adds some.
    const embeddings = configured.find((s) => nameOf(s) === 'embeddings');
    if (embeddings && chosen.length && !chosen.includes(embeddings)) chosen.push(embeddings);
    return chosen;
  }
}

const nameOf = (s: StageInfo) => s.stage.replace(/^analyzing:/, '');

/**
 * When the embedding model changed since videos were indexed, their vectors are redone: a
 * reanalysis job of the embeddings stage per affected ready video (with progress on the resource,
 * crash-safe like any job). Until a video's job is done, questions leave its old vectors alone.
 * Returns the ids queued.
 */
export async function queueReembedding(d: Pick<ReanalyzeDeps, 'catalog' | 'queue' | 'stages'>): Promise<string[]> {
  const embeddings = d.stages().find((s) => nameOf(s) === 'embeddings');
  if (!embeddings) return [];
  const ready = await readyActiveVideos(d.catalog);
  const queued: string[] = [];
  for (const v of ready) {
    const e = (v.analysis as Record<string, Record<string, unknown> | undefined> | null)?.embeddings;
    if (!e) continue; // never embedded (embeddings were off): nothing to redo
    const was = e.producer ?? e.engine;
    if (was === embeddings.info.name) continue;
    if ((await d.queue.reanalyze(v.id, [embeddings.stage])) === 'queued') queued.push(v.id);
  }
  return queued;
}

/** Whether a stage's recorded summary came from another engine than `now`, or the stage was skipped. */
function changed(summary: unknown, now: string): boolean {
  if (!summary || typeof summary !== 'object') return true;
  const s = summary as Record<string, unknown>;
  if (s.skipped || s.unavailable || s.transcripts_skipped) return true;
  // Videos analysed before `producer` was recorded: the speech stage's name was "<vad> + <stt>".
  const was =
    typeof s.producer === 'string'
      ? s.producer
      : typeof s.stt === 'string' && s.stt !== 'none'
        ? `${s.engine} + ${s.stt}`
        : s.engine;
  return was !== now;
}

/**
 * `vidq reanalyze`: queues every ready video of an index (by name or id). Without `userId` the
 * index must be unambiguous across users. Videos that cannot be queued are listed with the reason.
 */
export async function reanalyzeIndex(
  s: { catalog: Catalog; accounts: { getUser(id: string): Promise<User | undefined> }; reanalyze: ReanalyzeService },
  index: string,
  userId: string | undefined,
  requested: string[] | undefined,
): Promise<{ queued: { file_id: string; analyzers: string[] }[]; skipped: { file_id: string; reason: string }[] }> {
  const found = await activeIndexesNamed(s.catalog, index, userId);
  const distinct = [...new Map(found.map((i) => [i.id, i])).values()];
  if (!distinct.length) throw new ApiError(404, `no index "${index}"${userId ? ` of user ${userId}` : ''}`);
  if (distinct.length > 1)
    throw new ApiError(409, `${distinct.length} users have an index "${index}": name one with --user`);
  const user = (await s.accounts.getUser(distinct[0]!.userId))!;
  const ids = await videoIdsOfIndex(s.catalog, distinct[0]!.id);
  const out = {
    queued: [] as { file_id: string; analyzers: string[] }[],
    skipped: [] as { file_id: string; reason: string }[],
  };
  for (const id of ids) {
    try {
      out.queued.push(await s.reanalyze.request(user, id, requested));
    } catch (e) {
      if (!(e instanceof ApiError) || e.status === 400) throw e;
      out.skipped.push({ file_id: id, reason: e.message });
    }
  }
  return out;
}
