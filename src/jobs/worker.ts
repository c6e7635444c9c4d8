/**
 * The analysis worker: a child process of the server (`vidq worker`, hidden command), so that CPU-
 * heavy analysis never blocks the HTTP server and a crash or kill of it loses no more than the
 * stages in progress. It claims jobs from the shared queue (the jobs table on SQLite, pg-boss on
 * PostgreSQL) into two job slots that share one set of loaded models (see `Slot`), and tells its
 * parent about changes as JSON lines on stdout. It exits when its stdin closes (the parent is gone).
 */
import { getPriority, setPriority } from 'node:os';
import { randomId } from '../ids';
import { createAnalyzers } from '../analysis';
import { analysisAssets } from '../analysis/assets/extract';
import { Limiter, modelLimitPerWorker } from '../analysis/engines/model-server/client';
import { analyzerNames } from '../analysis/analyzers';
import { type Config, inheritedWorkerTag } from '../config';
import { createLogger } from '../log';
import { resolveBinaries } from '../media/binaries';
import { killRunningFfmpeg } from '../media/ffmpeg';
import { openCatalog } from '../storage/open';
import { DataDir } from '../storage/files';
import type { Job } from '../storage/rows';
import { videoDuration } from '../storage/repositories/analysis';
import { analyseWindow, liveAnalyzersOf, type WindowRequest, type WindowResult } from '../live/window';
import { lines } from '../util/lines';
import { analyseJob, type JobDeps } from './analyse-job';
import { openJobQueue } from './queues';

/** The playback copy is made beside the analysis (one x264 thread in the time it leaves idle). */
const EARLY_PLAYBACK_COPY = true;

export type WorkerMessage =
  | { type: 'changed'; video_id: string }
  | { type: 'live-window-done'; id: number; result: WindowResult }
  | { type: 'live-window-failed'; id: number; reason: string }
  | { type: 'idle' }
  | { type: 'ready'; analyzers: string[] }
  | { type: 'recycle'; rss_bytes: number; reason?: 'long video' | 'idle' };

/**
 * Niceness the worker gives itself: analysis saturates every core, and at the same priority the
 * HTTP server (and anything else on the machine) waits for its turn behind it. Set first thing, so
 * the threads and processes started afterwards (onnxruntime, the object detector, ffmpeg) inherit it.
 */
const WORKER_NICE = 10;
/** Longest a slot sleeps before it looks at the queue again (a wake from the parent comes sooner). */
const POLL_MS = 2000;
/**
 * How long a worker whose parent is gone (or which was told to stop) may take to end its jobs
 * before it exits anyway. Its jobs resume from their stages in the next server, as after a crash;
 * an orphan must never keep analysing (one CI run saw one still alive 15 s after the server's
 * kill -9).
 */
const STOP_GRACE_MS = 5000;
/** How often the worker looks whether its parent is still the server that started it. */
const PARENT_CHECK_MS = 1000;

/**
 * The worker's two job slots share one set of loaded analyzers (one copy of each model):
 * - `a` takes any job;
 * - `b`, the short lane, takes only videos up to `--short-lane-sec`, and only while `a` is busy, so
 *   that a short clip does not wait behind a long video (absent when `--short-lane-sec` is 0).
 * Their job rows carry the worker's id (`b` with a suffix): when the process dies, the supervisor
 * puts back every job whose worker id starts with `w_<pid>_`.
 */
type Slot = 'a' | 'b';

export async function runWorker(config: Config): Promise<number> {
  try {
    setPriority(Math.min(19, getPriority() + WORKER_NICE));
  } catch {
    /* not permitted here: run at the normal priority */
  }
  const log = createLogger(config.logLevel, { role: 'worker' });
  const files = new DataDir(config.dataDir, config.mediaDir);
  // Its two job slots, its progress writes and its live windows share a small pool (PostgreSQL).
  const opened = await openCatalog({ database: config.database, sqliteFile: files.dbFile, connections: 4 });
  const catalog = opened.catalog;
  const queue = await openJobQueue(catalog, { databaseUrl: config.database, shortLaneSec: config.shortLaneSec, log });
  const { ffmpeg } = await resolveBinaries(files.binDir);
  // In the compiled executable: the models and libraries, extracted on the first start.
  const assets = await analysisAssets(files.assetsDir, analyzerNames(config.analyzers));
  if (assets.extracted.length)
    log.info('analysis files extracted', { groups: assets.extracted, ms: assets.extractMs, dir: files.assetsDir });
  for (const problem of assets.problems) log.warn('analysis files', { problem });
  // One limit on model-server requests for the whole process (its share of --model-concurrency).
  const modelLimiter = new Limiter(modelLimitPerWorker(config.modelConcurrency, config.analysisWorkers));
  const analyzers = createAnalyzers(config, { assets, modelLimiter });
  // w_<pid>_<supervisor tag>_: the supervisor finds its dead worker's jobs by that prefix.
  const workerId = `w_${process.pid}_${inheritedWorkerTag() ?? randomId(8)}_${randomId(6)}`;
  const send = (m: WorkerMessage) => process.stdout.write(JSON.stringify(m) + '\n');
  const stop = new AbortController();
  const sleepers = new Set<() => void>();
  const wakeAll = () => {
    for (const wake of sleepers) wake();
    sleepers.clear();
  };
  const nap = (ms: number) =>
    new Promise<void>((r) => {
      const timer = setTimeout(() => {
        sleepers.delete(done);
        r();
      }, ms);
      const done = () => {
        clearTimeout(timer);
        r();
      };
      sleepers.add(done);
    });

  const stopNow = (reason: string) => {
    if (stop.signal.aborted) return;
    stop.abort(new Error(reason));
    wakeAll();
    setTimeout(() => {
      log.warn('the jobs did not stop in time: exiting', { reason, grace_ms: STOP_GRACE_MS });
      // An ffmpeg writing a file (a playback copy, sampled frames) would outlive the worker.
      killRunningFfmpeg();
      process.exit(1);
    }, STOP_GRACE_MS).unref();
  };
  // A live stream's window (sent by the server's supervisor), analysed beside the job slots with
  // the same loaded models; the result goes back on stdout with the request's id.
  const liveDeps = {
    catalog,
    videoDir: (id: string) => files.videoDir(id),
    analyzers: liveAnalyzersOf(analyzers),
    ffmpeg,
    log,
  };
  const liveWindow = (id: number, w: WindowRequest) =>
    analyseWindow(liveDeps, w).then(
      (result) => {
        log.debug('live window analysed', {
          stream_id: w.streamId,
          frames: w.frames.length,
          fired: result.fired.length,
        });
        send({ type: 'live-window-done', id, result });
      },
      (e) => send({ type: 'live-window-failed', id, reason: (e as Error).message }),
    );
  // Parent → worker: an empty line wakes the slots, a JSON line is a live window; EOF means the parent is gone.
  (async () => {
    for await (const line of lines(process.stdin as unknown as ReadableStream<Uint8Array>)) {
      const m = parseRequest(line);
      if (m) void liveWindow(m.id, m.window);
      else wakeAll();
    }
    stopNow('parent gone');
  })();
  // The same, should the EOF not come (another process holding the pipe): an orphan gets a new parent.
  const parent = process.ppid;
  setInterval(() => process.ppid !== parent && stopNow('parent gone'), PARENT_CHECK_MS).unref();
  process.on('SIGTERM', () => stopNow('terminated'));

  send({ type: 'ready', analyzers: analyzers.map((a) => a.stage) });
  const busy = { a: false, b: false };
  // The models load on a process's first video and stay: an idle worker that has them restarts.
  let modelsLoaded = false;
  let idleSince: number | null = null;
  /** Set when the process is to restart to give its memory back: no slot takes another job. */
  let leaving: { reason: 'long video' | 'idle'; rss: number } | null = null;
  const goOn = () => !stop.signal.aborted && !leaving;
  const jobDeps: JobDeps = {
    config,
    catalog,
    queue,
    files,
    analyzers,
    ffmpeg,
    log,
    onChange: (id) => send({ type: 'changed', video_id: id }),
    stop: stop.signal,
    earlyPlaybackCopy: EARLY_PLAYBACK_COPY,
  };

  /** Analyses one claimed job to its end, then decides whether the process restarts. */
  const analyse = async (job: Job, slotId: string, slot: Slot): Promise<void> => {
    const outcome = await analyseJob(job, slotId, jobDeps);
    log.debug('job done in slot', { video_id: job.videoId, outcome, slot });
    // A long video leaves the heap and the native allocators grown (about 0.95 GB after a 60-minute
    // one); a fresh process gives that back, once the other slot's job is done too. The supervisor
    // starts the next one at once.
    if (config.workerRecycleSec > 0 && (await videoDuration(catalog, job.videoId)) >= config.workerRecycleSec)
      leaving ??= { reason: 'long video', rss: process.memoryUsage.rss() };
  };

  const runSlot = async (slot: Slot): Promise<void> => {
    const slotId = slot === 'a' ? workerId : `${workerId}_b`;
    const rules = {
      perUserCap: config.maxAnalysesPerUser,
      ...(slot === 'b' && { maxVideoSec: config.shortLaneSec }),
    };
    while (goOn()) {
      // The short lane opens only while the other slot is busy.
      if (slot === 'b' && !busy.a) {
        await nap(POLL_MS);
        continue;
      }
      let job: Job | null;
      try {
        job = await queue.claim(slotId, new Date(), rules);
      } catch (e) {
        // The database is busy beyond its timeout (another process holds a long write): try again.
        log.warn('could not claim a job', { reason: (e as Error).message });
        await Bun.sleep(1000);
        continue;
      }
      if (!job) {
        if (slot === 'a') {
          idleSince = busy.b ? null : (idleSince ?? Date.now());
          if (
            idleSince !== null &&
            modelsLoaded &&
            config.workerIdleReleaseSec > 0 &&
            Date.now() - idleSince >= config.workerIdleReleaseSec * 1000
          ) {
            leaving = { reason: 'idle', rss: process.memoryUsage.rss() };
            wakeAll();
            break;
          }
          if (!busy.b) send({ type: 'idle' });
        }
        await nap(POLL_MS);
        continue;
      }
      busy[slot] = true;
      idleSince = null;
      modelsLoaded = true;
      send({ type: 'changed', video_id: job.videoId });
      // The other slot looks now: the short lane opens while this one is busy.
      wakeAll();
      try {
        await analyse(job, slotId, slot);
      } finally {
        await queue
          .release(job.videoId, slotId)
          .catch((e) => log.warn('job not released', { video_id: job.videoId, reason: (e as Error).message }));
        busy[slot] = false;
        idleSince = null;
      }
      if (leaving) wakeAll();
    }
  };

  await Promise.all([runSlot('a'), ...(config.shortLaneSec > 0 ? [runSlot('b')] : [])]);
  // Set inside the slots (TypeScript cannot see that here).
  const left = leaving as { reason: 'long video' | 'idle'; rss: number } | null;
  if (left && !stop.signal.aborted) send({ type: 'recycle', rss_bytes: left.rss, reason: left.reason });
  for (const a of analyzers) await a.close?.();
  await queue.close();
  await opened.close();
  // Left on purpose (a restart to give memory back), the stdin reader would keep the process
  // alive; stopped, a thread or handle left open could. Exit, once the last message has gone out.
  await Bun.sleep(50);
  process.exit(0);
}

/** The server → worker request of a live window (see ParentMessage); null for a wake-up line. */
export type ParentMessage = { type: 'live-window'; id: number; window: WindowRequest };

function parseRequest(line: string): ParentMessage | null {
  if (!line.startsWith('{')) return null;
  try {
    const m = JSON.parse(line) as ParentMessage;
    return m.type === 'live-window' && typeof m.id === 'number' ? m : null;
  } catch {
    return null;
  }
}
