/**
 * Runs one video's analysis job: its stages in order, starting at the stage the job is at (so a
 * restart resumes there). Each stage's output is stored in the transaction that advances the job,
 * replacing whatever an interrupted earlier run of that stage may have stored.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import type { JobQueue } from '../jobs/queue';
import type { Logger } from '../log';
import type { Db } from '../storage/db';
import type { DataDir } from '../storage/files';
import { frames, segments, videos, type Job, type SegmentKind } from '../storage/schema';
import { EngineUnavailableError, type Analyzer, type StageContext, type StageResult, type VideoToAnalyze } from './contracts';

export interface PipelineDeps {
  db: Db;
  queue: JobQueue;
  files: DataDir;
  analyzers: readonly Analyzer[];
  ffmpeg: string;
  workerId: string;
  log: Logger;
  /** Called after every progress write (the server drops cached listings). */
  onChange?: (videoId: string) => void;
}

export type JobOutcome = 'ready' | 'failed' | 'cancelled';

/** Progress writes are at most this frequent. */
const REPORT_EVERY_MS = 500;

export async function runJob(job: Job, d: PipelineDeps, signal: AbortSignal): Promise<JobOutcome> {
  const row = d.db.select().from(videos).where(eq(videos.id, job.videoId)).get();
  if (!row || !row.storagePath) return 'cancelled';
  const video: VideoToAnalyze = {
    id: row.id,
    path: d.files.abs(row.storagePath),
    dir: d.files.videoDir(row.id),
    durationSec: row.durationSec ?? 0,
    fps: row.fps ?? 0,
    width: row.width ?? 0,
    height: row.height ?? 0,
    hasAudio: !!row.hasAudio,
  };
  if (!existsSync(video.path)) {
    d.queue.fail(video.id, 'the stored file is missing; upload the video again');
    d.onChange?.(video.id);
    return 'failed';
  }
  const stages = d.analyzers;
  let from = stages.findIndex((a) => a.stage === job.stage);
  if (from < 0) from = 0;
  const totalWeight = stages.reduce((s, a) => s + a.weight, 0) || 1;
  const weightBefore = (i: number) => stages.slice(0, i).reduce((s, a) => s + a.weight, 0);
  const log = d.log.child({ video_id: video.id });
  const startedAt = performance.now();
  const startProgress = (weightBefore(from) / totalWeight) * 100;
  const timings: Record<string, number> = {};

  for (let i = from; i < stages.length; i++) {
    const a = stages[i]!;
    if (signal.aborted) return 'cancelled';
    let lastReport = 0;
    let cancelled = false;
    const ctrl = new AbortController();
    const onAbort = () => ctrl.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    const ctx: StageContext = {
      video,
      ffmpeg: d.ffmpeg,
      signal: ctrl.signal,
      log,
      progress: (fraction) => {
        const now = performance.now();
        if (now - lastReport < REPORT_EVERY_MS) return;
        lastReport = now;
        const overall = ((weightBefore(i) + a.weight * Math.max(0, Math.min(1, fraction))) / totalWeight) * 100;
        const doneSinceStart = overall - startProgress;
        const eta = doneSinceStart > 1 ? ((now - startedAt) / 1000) * ((100 - overall) / doneSinceStart) : null;
        if (!d.queue.report(video.id, d.workerId, a.stage, round1(overall), eta === null ? null : Math.round(eta))) {
          cancelled = true;
          ctrl.abort(new Error('the video was removed'));
        }
        d.onChange?.(video.id);
      },
      frames: () =>
        d.db
          .select()
          .from(frames)
          .where(eq(frames.videoId, video.id))
          .orderBy(asc(frames.t))
          .all()
          .map((f) => ({ ...f, path: join(video.dir, 'frames', f.file) })),
      segments: (kinds?: SegmentKind[]) =>
        d.db
          .select()
          .from(segments)
          .where(kinds ? and(eq(segments.videoId, video.id), inArray(segments.kind, kinds)) : eq(segments.videoId, video.id))
          .orderBy(asc(segments.start))
          .all(),
    };
    const t0 = performance.now();
    let result: StageResult;
    try {
      d.queue.report(video.id, d.workerId, a.stage, round1((weightBefore(i) / totalWeight) * 100), null);
      d.onChange?.(video.id);
      result = await a.run(ctx);
    } catch (e) {
      if (cancelled || signal.aborted) return 'cancelled';
      if (e instanceof EngineUnavailableError) {
        // Not this video's fault: skip the analyzer, and say so in the metadata.
        log.warn('analyzer unavailable', { stage: a.stage, reason: e.message });
        result = { summary: { engine: a.info.name, unavailable: e.message } };
      } else {
        const reason = `${a.info.kind} analysis failed: ${(e as Error).message}`;
        log.warn('analysis failed', { stage: a.stage, reason });
        d.queue.fail(video.id, reason);
        d.onChange?.(video.id);
        return 'failed';
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
    if (cancelled) return 'cancelled';
    timings[a.stage] = Math.round(performance.now() - t0);
    const next = stages[i + 1]?.stage ?? 'finalizing';
    const progress = round1((weightBefore(i + 1) / totalWeight) * 100);
    const advanced = d.queue.advance(video.id, d.workerId, next, progress, (tx) => {
      if (a.kinds.length) tx.delete(segments).where(and(eq(segments.videoId, video.id), inArray(segments.kind, [...a.kinds]))).run();
      if (result.segments?.length) {
        // Chunked: SQLite limits the number of bound parameters per statement.
        for (let k = 0; k < result.segments.length; k += 200) {
          tx.insert(segments)
            .values(result.segments.slice(k, k + 200).map((s) => ({ videoId: video.id, kind: s.kind, start: s.start, end: s.end, text: s.text, confidence: s.confidence ?? null, extra: s.extra ?? null })))
            .run();
        }
      }
      if (result.frames) {
        tx.delete(frames).where(eq(frames.videoId, video.id)).run();
        for (let k = 0; k < result.frames.length; k += 200) {
          const chunk = result.frames.slice(k, k + 200);
          if (chunk.length) tx.insert(frames).values(chunk.map((f) => ({ videoId: video.id, ...f }))).run();
        }
      }
      result.apply?.(tx);
      const summary = { ...(result.summary ?? {}), ms: timings[a.stage] };
      tx.update(videos)
        .set({ analysis: sql`json_set(coalesce(${videos.analysis}, '{}'), ${'$.' + a.info.kind}, json(${JSON.stringify(summary)}))` })
        .where(eq(videos.id, video.id))
        .run();
    });
    d.onChange?.(video.id);
    if (!advanced) return 'cancelled';
  }
  if (!d.queue.finish(video.id, d.workerId)) return 'cancelled';
  d.onChange?.(video.id);
  log.info('analysis done', { ms: Math.round(performance.now() - startedAt), stages: timings });
  return 'ready';
}

const round1 = (x: number) => Math.round(x * 10) / 10;
