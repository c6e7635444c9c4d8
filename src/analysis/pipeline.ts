/**
 * Runs one video's analysis job: its stages in order, starting at the stage the job is at (so a
 * restart resumes there). Each stage's output is stored in the transaction that advances the job,
 * replacing whatever an interrupted earlier run of that stage may have stored.
 */
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { JobQueue } from '../jobs/queue';
import type { Logger } from '../log';
import type { Catalog } from '../storage/catalog';
import type { DataDir } from '../storage/files';
import { framesOfVideo, segmentsOfVideo, storeStageOutput, videoToAnalyse } from '../storage/repositories/analysis';
import type { Job, Segment, SegmentKind } from '../storage/rows';
import {
  EngineUnavailableError,
  type Analyzer,
  type NewSegment,
  type StageContext,
  type StageResult,
  type VideoToAnalyze,
} from './contracts';
import { FrameHints } from './frame-hints';
import { FrameStream } from './frame-stream';

export interface PipelineDeps {
  /** The catalog the video's rows are read from and its findings written to. */
  catalog: Catalog;
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
  const row = await videoToAnalyse(d.catalog, job.videoId);
  if (!row?.storagePath) return 'cancelled';
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
    await d.queue.fail(video.id, 'the stored file is missing; upload the video again');
    d.onChange?.(video.id);
    return 'failed';
  }
  // A reanalysis runs only the stages it names (the other segments stay as they are).
  const stages = job.only ? d.analyzers.filter((a) => job.only!.includes(a.stage)) : d.analyzers;
  const groups = groupStages(stages);
  // A restart resumes at the start of the group the job was in (the job records its first stage).
  const at = stages.findIndex((a) => a.stage === job.stage);
  const from = at < 0 ? 0 : groups.find(([i, j]) => i <= at && at < j)![0];
  const totalWeight = stages.reduce((s, a) => s + a.weight, 0) || 1;
  const weightBefore = (i: number) => stages.slice(0, i).reduce((s, a) => s + a.weight, 0);
  const log = d.log.child({ video_id: video.id });
  const startedAt = performance.now();
  const startProgress = (weightBefore(from) / totalWeight) * 100;
  const timings: Record<string, number> = {};
  // What earlier groups stored, read when a group starts (nothing is stored while a group runs).
  let storedFrames: Awaited<ReturnType<typeof framesOfVideo>> = [];
  let stored: Segment[] = [];
  const frameRows = () => storedFrames.map((f) => ({ ...f, path: join(video.dir, 'frames', f.file) }));
  const storedSegments = (kinds?: SegmentKind[]) => (kinds ? stored.filter((s) => kinds.includes(s.kind)) : stored);

  for (const [i, j] of groups) {
    if (i < from) continue;
    if (signal.aborted) return 'cancelled';
    [storedFrames, stored] = await Promise.all([
      framesOfVideo(d.catalog, video.id),
      segmentsOfVideo(d.catalog, video.id),
    ]);
    // The stages of a group work at the same time; their outputs are still committed one by one,
    // in pipeline order. Frame readers get the frames of the group's frame picker as it picks
    // them, and its segments (shots) once it is done.
    const group = stages.slice(i, j);
    const producer = group.find((a) => a.producesFrames);
    const stream = producer ? new FrameStream() : null;
    const probeStream = producer && group.some((a) => a.readsProbes) ? new FrameStream() : null;
    const hints = new FrameHints(group.some((a) => a.tellsPersons));
    const produced = new Map<SegmentKind, Segment[]>();
    const segmentRows = (kinds?: SegmentKind[]): Segment[] => {
      const stored = storedSegments(kinds).filter((s) => !produced.has(s.kind));
      const fresh = [...produced].filter(([k]) => !kinds || kinds.includes(k)).flatMap(([, rows]) => rows);
      return fresh.length ? [...stored, ...fresh].sort((a, b) => a.start - b.start) : stored;
    };
    const fractions = group.map(() => 0);
    const ctrl = new AbortController();
    // Readers waiting for frames stop when the group is stopped.
    ctrl.signal.addEventListener(
      'abort',
      () => {
        stream?.fail(ctrl.signal.reason);
        probeStream?.fail(ctrl.signal.reason);
        hints.close();
      },
      { once: true },
    );
    const onAbort = () => ctrl.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    let cancelled = false;
    /** The failure that stopped the group (the others then fail only because they were stopped). */
    let firstFailure: { stage: Analyzer; error: unknown } | null = null;
    let lastReport = 0;
    /** A progress write in flight (the next report waits for none: it is skipped meanwhile). */
    let reporting: Promise<void> | null = null;
    const report = (force = false) => {
      const now = performance.now();
      if (reporting || (!force && now - lastReport < REPORT_EVERY_MS)) return;
      lastReport = now;
      const done = weightBefore(i) + group.reduce((sum, a, k) => sum + a.weight * fractions[k]!, 0);
      const overall = (done / totalWeight) * 100;
      const doneSinceStart = overall - startProgress;
      const eta = doneSinceStart > 1 ? ((now - startedAt) / 1000) * ((100 - overall) / doneSinceStart) : null;
      // Shown: the least advanced stage of the group, the one the video waits on.
      const waitingOn = group.reduce(
        (slowest, a, k) => (fractions[k]! < fractions[group.indexOf(slowest)]! ? a : slowest),
        group[0]!,
      );
      // The job's stage stays at the group's first stage, so a restart re-runs the whole group.
      reporting = d.queue
        .report(
          video.id,
          d.workerId,
          group[0]!.stage,
          round1(overall),
          eta === null ? null : Math.round(eta),
          waitingOn.stage,
        )
        .then(
          (still) => {
            if (!still) {
              cancelled = true;
              ctrl.abort(new Error('the video was removed'));
            }
            d.onChange?.(video.id);
          },
          // A progress note is not worth failing the analysis for (database busy); the next one will do.
          (e) => log.debug('progress not recorded', { reason: (e as Error).message }),
        )
        .finally(() => {
          reporting = null;
        });
    };
    report(true);
    // Reports (and so notices a removal) also while a stage says nothing, e.g. a decode that sees
    // one frame a minute; a removed video's child processes are then killed within a second.
    const ticker = setInterval(() => report(), REPORT_EVERY_MS);

    const settled = await Promise.allSettled(
      group.map(async (a, k) => {
        const t0 = performance.now();
        const ctx: StageContext = {
          video,
          ffmpeg: d.ffmpeg,
          signal: ctrl.signal,
          log,
          progress: (fraction) => {
            fractions[k] = Math.max(0, Math.min(1, fraction));
            report();
          },
          frames: frameRows,
          segments: segmentRows,
          frameStream: a.readsFrames ? (stream ?? FrameStream.of(frameRows())) : undefined,
          emitFrame:
            a === producer
              ? (f) => {
                  stream!.push(f);
                  probeStream?.push(f);
                }
              : undefined,
          emitProbe: a === producer && probeStream ? (f) => probeStream.push(f) : undefined,
          probeStream: a.readsProbes && probeStream ? probeStream : undefined,
          hints,
        };
        try {
          const result = await a.run(ctx);
          if (a === producer) {
            for (const kind of a.kinds)
              produced.set(
                kind,
                asRows(
                  video.id,
                  (result.segments ?? []).filter((s) => s.kind === kind),
                ),
              );
            stream!.end();
            probeStream?.end();
          }
          return result;
        } catch (e) {
          if (a === producer) {
            stream!.fail(e);
            probeStream?.fail(e);
          }
          // One real failure fails the video: stop the others rather than let them finish for nothing.
          if (!(e instanceof EngineUnavailableError) && !ctrl.signal.aborted) {
            firstFailure = { stage: a, error: e };
            ctrl.abort(e);
          }
          throw e;
        } finally {
          // Whoever waits for its word on a frame goes on without it.
          if (a.tellsPersons) hints.close();
          timings[a.stage] = Math.round(performance.now() - t0);
          fractions[k] = 1;
        }
      }),
    );
    clearInterval(ticker);
    await reporting;
    signal.removeEventListener('abort', onAbort);
    // Probes live only while their group runs.
    if (probeStream) rmSync(join(video.dir, 'probes'), { recursive: true, force: true });
    if (cancelled || signal.aborted) return 'cancelled';

    const results: StageResult[] = [];
    for (let k = 0; k < group.length; k++) {
      const a = group[k]!;
      const r = settled[k]!;
      if (r.status === 'fulfilled') {
        results.push(r.value);
      } else if (r.reason instanceof EngineUnavailableError) {
        // Not this video's fault: skip the analyzer, and say so in the metadata.
        log.warn('analyzer unavailable', { stage: a.stage, reason: r.reason.message });
        results.push({ summary: { engine: a.info.name, unavailable: r.reason.message } });
      } else if (!(await d.queue.get(video.id))) {
        // Removed while a stage ran: the stage met its files gone before a progress report saw it.
        log.debug('analysis stopped: the video was removed', { stage: a.stage });
        return 'cancelled';
      } else {
        const { stage, error } = firstFailure ?? { stage: a, error: r.reason };
        const why = (error as Error)?.message ?? String(error);
        const reason = `${stage.info.kind} analysis failed: ${why}`;
        log.warn('analysis failed', { stage: stage.stage, reason });
        await d.queue.fail(video.id, reason);
        d.onChange?.(video.id);
        return 'failed';
      }
    }

    for (let k = 0; k < group.length; k++) {
      const a = group[k]!;
      const result = results[k]!;
      const next = stages[i + k + 1]?.stage ?? 'finalizing';
      const progress = round1((weightBefore(i + k + 1) / totalWeight) * 100);
      const advanced = await d.queue.advance(video.id, d.workerId, next, progress, (tx) =>
        store(tx, video.id, a, result, timings[a.stage] ?? 0),
      );
      d.onChange?.(video.id);
      if (!advanced) return 'cancelled';
    }
  }
  if (!(await d.queue.finish(video.id, d.workerId))) return 'cancelled';
  d.onChange?.(video.id);
  log.info('analysis done', { ms: Math.round(performance.now() - startedAt), stages: timings });
  return 'ready';
}

/**
 * The stages as groups [from, to) that run together: each run of concurrent stages is one group;
 * a stage that is not concurrent runs alone.
 */
export function groupStages(stages: readonly Analyzer[]): [number, number][] {
  const groups: [number, number][] = [];
  for (let i = 0; i < stages.length; ) {
    let j = i + 1;
    if (stages[i]!.concurrent) while (j < stages.length && stages[j]!.concurrent) j++;
    groups.push([i, j]);
    i = j;
  }
  return groups;
}

/** In-flight segments in the shape of stored rows (for readers in the same group). */
function asRows(videoId: string, segs: NewSegment[]): Segment[] {
  return segs.map((s, k) => ({
    id: -1 - k,
    videoId,
    kind: s.kind,
    start: s.start,
    end: s.end,
    text: s.text,
    confidence: s.confidence ?? null,
    extra: s.extra ?? null,
    embedding: null,
  }));
}

/** A stage's output replaces whatever an interrupted earlier run of it stored. */
async function store(tx: Catalog, videoId: string, a: Analyzer, result: StageResult, ms: number): Promise<void> {
  // `producer`: which engine (and model) made this kind, so a reanalysis can tell what changed.
  const summary = { ...(result.summary ?? {}), producer: a.info.name, ms };
  await storeStageOutput(tx, videoId, {
    kinds: a.kinds,
    segments: result.segments ?? [],
    ...(result.frames && { frames: result.frames }),
    key: a.info.kind,
    summary,
  });
  // A stage's own rows (subtitle transcripts, vectors, people), in the same transaction.
  if (result.apply) await result.apply(tx);
}

const round1 = (x: number) => Math.round(x * 10) / 10;
