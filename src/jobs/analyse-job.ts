/**
 * One claimed job, from its claim to the end of its files: the analysis (within its time budget),
 * the playback copy beside it or after it, and, when the video was removed meanwhile, its folder.
 * Run by the worker's job slots (worker.ts); kept apart so that the removal's races can be tested
 * in one process.
 */
import type { Analyzer } from '../analysis/contracts';
import { runJob, type JobOutcome } from '../analysis/pipeline';
import type { Config } from '../config';
import type { Logger } from '../log';
import type { Catalog } from '../storage/catalog';
import type { DataDir } from '../storage/files';
import { videoDuration } from '../storage/repositories/analysis';
import type { Job } from '../storage/rows';
import { notePlaybackPending, playbackStep, startPlaybackCopy, type EarlyCopy } from './playback-step';
import type { JobQueue } from './queue';

/** How often a job looks whether its video was removed while its playback copy is made. */
const REMOVAL_CHECK_MS = 500;

export interface JobDeps {
  config: Pick<Config, 'analysisSecPerMinute' | 'analysisBudgetBaseSec' | 'minFreeBytes'>;
  catalog: Catalog;
  queue: JobQueue;
  files: DataDir;
  analyzers: readonly Analyzer[];
  ffmpeg: string;
  log: Logger;
  /** The video's resource changed (the worker tells the server). */
  onChange: (videoId: string) => void;
  /** The worker is stopping: the job ends where it is (its mark and files stay for the retry). */
  stop: AbortSignal;
  /** Make the playback copy beside the analysis (true) or after it (false). */
  earlyPlaybackCopy: boolean;
}

/** Analyses one claimed job to its end (ready, failed or cancelled), with its playback copy. */
export async function analyseJob(job: Job, workerId: string, d: JobDeps): Promise<JobOutcome> {
  const { catalog, queue, files } = d;
  const playbackDeps = { catalog, files, ffmpeg: d.ffmpeg, log: d.log, minFreeBytes: d.config.minFreeBytes };
  // A budget of time relative to the video's duration: a file built to be slow to analyse cannot
  // hold the worker (and everyone queued behind it) for hours. The stages stop as on a removal
  // (child processes killed, partial output deleted); the video is then failed with the reason.
  const budget = analysisBudgetSec(d.config, await videoDuration(catalog, job.videoId));
  const overBudget = new AbortController();
  const budgetTimer = budget ? setTimeout(() => overBudget.abort(), budget * 1000) : null;
  // The pipeline notices a removal while it analyses; the copy can outlast it (made after the
  // analysis, or a long one beside it), so the job looks too, and stops the copy of a removed video.
  const removed = new AbortController();
  const removalCheck = setInterval(() => {
    void queue.get(job.videoId).then(
      (j) => !j && removed.abort(new Error('the video was removed')),
      () => {},
    );
  }, REMOVAL_CHECK_MS);
  const copyStop = new AbortController();
  const copySignal = AbortSignal.any([d.stop, removed.signal, copyStop.signal]);
  let early: EarlyCopy | null = null;
  let outcome: JobOutcome;
  try {
    // Marked before the analysis, so the resource has `playback_src` by the time it is ready.
    if (await notePlaybackPending(playbackDeps, job.videoId, d.stop)) {
      d.onChange(job.videoId);
      if (d.earlyPlaybackCopy) early = startPlaybackCopy(playbackDeps, job.videoId, copySignal);
    }
    outcome = await runJob(
      job,
      {
        catalog,
        queue,
        files,
        analyzers: d.analyzers,
        ffmpeg: d.ffmpeg,
        workerId,
        log: d.log,
        onChange: d.onChange,
      },
      AbortSignal.any([d.stop, overBudget.signal]),
    );
    if (budgetTimer) clearTimeout(budgetTimer);
    if (outcome === 'cancelled' && overBudget.signal.aborted && !d.stop.aborted && (await queue.get(job.videoId))) {
      await queue.fail(
        job.videoId,
        `analysis took longer than its budget of ${Math.round(budget)} s (--analysis-budget-base-sec ${d.config.analysisBudgetBaseSec} plus --analysis-sec-per-minute ${d.config.analysisSecPerMinute} per minute of video); the video was not analysed`,
      );
      d.onChange(job.videoId);
      outcome = 'failed';
    }
    // A removal can end the analysis as a failure before the pipeline sees it: a stage whose files
    // went under it fails ("ENOENT … frames"). A video whose job is gone was removed, whatever its
    // stages said.
    if (!(await queue.get(job.videoId))) outcome = 'cancelled';
    d.log.debug('job finished', { video_id: job.videoId, outcome });
    // Only a ready video keeps its copy.
    if (outcome !== 'ready') copyStop.abort();
    // A failed video loses its mark (and its copy); a ready one gets its copy (stopped if it is
    // removed meanwhile).
    if (
      (outcome === 'ready' || outcome === 'failed') &&
      (await playbackStep(playbackDeps, job.videoId, AbortSignal.any([d.stop, removed.signal]), early))
    )
      d.onChange(job.videoId);
    // Nothing of this job writes into the video's folder after this: the stages have settled and
    // the copy's ffmpeg has ended.
    await early;
  } catch (e) {
    // Not an outcome (a bug, the database gone): the copy does not outlive the job.
    copyStop.abort();
    await early;
    throw e;
  } finally {
    if (budgetTimer) clearTimeout(budgetTimer);
    clearInterval(removalCheck);
  }
  // Removed at any moment of the job: the removal deleted the folder, but may have run before a
  // stage or the copy wrote into it; take what is there now.
  if (!(await queue.get(job.videoId))) files.removeVideoFiles(job.videoId);
  return outcome;
}

/** Seconds of analysis a video may take (0 = no limit). */
export function analysisBudgetSec(
  config: Pick<Config, 'analysisSecPerMinute' | 'analysisBudgetBaseSec'>,
  durationSec: number,
): number {
  return config.analysisBudgetBaseSec + (config.analysisSecPerMinute * durationSec) / 60;
}
