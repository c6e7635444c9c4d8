/**
 * Runs the analysis worker processes for the server: starts them, wakes them when a job is queued,
 * relays their change notices, and restarts one that dies (its job goes back to the queue, or fails
 * after three crashes).
 */
import { join } from 'node:path';
import { workerEnv, type Config } from '../config';
import type { Logger } from '../log';
import type { JobQueue } from './queue';
import { lines } from '../util/lines';
import { randomId } from '../ids';
import type { WindowRequest, WindowResult } from '../live/window';
import type { ParentMessage, WorkerMessage } from './worker';

type Proc = ReturnType<typeof Bun.spawn>;
/** How long a live window waits for a worker that is ready (one starting loads its files first). */
const WINDOW_WAIT_READY_MS = 60_000;
/** A live window's analysis that takes longer is given up (its frames stay to be analysed after a restart). */
const WINDOW_TIMEOUT_MS = 120_000;

/** Crashes of one job after which it is failed instead of retried. */
const MAX_ATTEMPTS = 3;
/** A worker that dies before saying it is ready this many times in a row cannot start at all. */
const MAX_START_FAILURES = 3;
/** Restart delay: doubles after each failed start, up to the cap. */
const RESTART_DELAY_MS = 1000;
const RESTART_DELAY_CAP_MS = 60_000;

export class AnalysisSupervisor {
  private readonly procs = new Set<Proc>();
  /** Workers that said they are ready, with the live windows each has in hand. */
  private readonly ready = new Map<Proc, number>();
  private readonly windows = new Map<
    number,
    { proc: Proc; resolve: (r: WindowResult) => void; reject: (e: Error) => void; timer: ReturnType<typeof setTimeout> }
  >();
  private nextWindowId = 1;
  /**
   * This supervisor's part of its workers' ids (w_<pid>_<tag>_…): pids repeat across machines, so
   * a dead worker's jobs are found by pid and tag, never another host's worker of the same pid.
   */
  private readonly tag = randomId(8);
  /** Built by every Service, started only by the server: the CLI and tests never spawn workers. */
  private started = false;
  private stopping = false;
  /** Consecutive workers that died before they were ready. */
  private startFailures = 0;

  constructor(
    private readonly d: {
      config: Config;
      queue: JobQueue;
      log: Logger;
      onChanged: (videoId: string) => void;
      /** Where the workers' log lines go (default: this process's stderr). */
      logSink?: (line: string) => void;
    },
  ) {}

  start(): void {
    this.started = true;
    // Each worker has its own short lane (a second job slot sharing its models): see worker.ts.
    for (let i = 0; i < this.d.config.analysisWorkers; i++) this.spawn();
  }

  /** A job was queued: let idle workers look now rather than at their next poll. */
  wake(): void {
    if (!this.started) return;
    for (const p of this.procs) {
      try {
        (p.stdin as import('bun').FileSink).write('\n');
        (p.stdin as import('bun').FileSink).flush();
      } catch {
        /* exiting */
      }
    }
  }

  /**
   * A live stream's window analysed by a worker process (the one with the fewest windows in hand),
   * so that no model runs on the server's request thread.
   */
  async analyseWindow(w: WindowRequest): Promise<WindowResult> {
    const until = Date.now() + WINDOW_WAIT_READY_MS;
    while (!this.ready.size) {
      if (this.stopping || !this.started || Date.now() > until)
        throw new Error('no analysis worker is ready to analyse the window');
      await Bun.sleep(200);
    }
    const [proc] = [...this.ready].sort((a, b) => a[1] - b[1])[0]!;
    const id = this.nextWindowId++;
    return new Promise<WindowResult>((resolve, reject) => {
      const timer = setTimeout(() => this.settleWindow(id, new Error('the window took too long')), WINDOW_TIMEOUT_MS);
      this.windows.set(id, { proc, resolve, reject, timer });
      this.ready.set(proc, (this.ready.get(proc) ?? 0) + 1);
      const request: ParentMessage = { type: 'live-window', id, window: w };
      try {
        (proc.stdin as import('bun').FileSink).write(`${JSON.stringify(request)}\n`);
        (proc.stdin as import('bun').FileSink).flush();
      } catch (e) {
        this.settleWindow(id, e as Error);
      }
    });
  }

  private settleWindow(id: number, outcome: WindowResult | Error): void {
    const p = this.windows.get(id);
    if (!p) return;
    this.windows.delete(id);
    clearTimeout(p.timer);
    const held = this.ready.get(p.proc);
    if (held !== undefined) this.ready.set(p.proc, Math.max(0, held - 1));
    if (outcome instanceof Error) p.reject(outcome);
    else p.resolve(outcome);
  }

  /** The worker-id prefix of each running worker process (its job slots' ids start with it). */
  workerPrefixes(): string[] {
    return [...this.procs].map((p) => this.prefixOf(p.pid));
  }

  private prefixOf(pid: number): string {
    return `w_${pid}_${this.tag}_`;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    const all = [...this.procs];
    for (const p of all) {
      try {
        (p.stdin as import('bun').FileSink).end();
      } catch {
        /* already closed */
      }
      p.kill('SIGTERM');
    }
    await Promise.all(all.map((p) => Promise.race([p.exited, Bun.sleep(3000).then(() => p.kill('SIGKILL'))])));
  }

  private spawn(): void {
    const compiled = import.meta.dir.startsWith('/$bunfs') || import.meta.dir.includes('~BUN');
    const cmd = compiled
      ? [process.execPath, 'worker']
      : [process.execPath, join(import.meta.dir, '..', 'main.ts'), 'worker'];
    const proc = Bun.spawn(cmd, {
      stdin: 'pipe',
      stdout: 'pipe',
      stderr: 'pipe',
      env: workerEnv(this.d.config, this.tag),
    });
    this.procs.add(proc);
    const state = { ready: false, lastError: '', recycled: false };
    this.relay(proc, state);
    this.forwardStderr(proc.stderr as ReadableStream<Uint8Array>, state);
    proc.exited.then((code) => {
      this.procs.delete(proc);
      this.ready.delete(proc);
      for (const [id, w] of this.windows)
        if (w.proc === proc) this.settleWindow(id, new Error(`the analysis worker exited (code ${code})`));
      if (this.stopping) return;
      // Both slots' jobs: their worker ids start with w_<pid>_<tag>_.
      void this.requeueJobsOf(proc.pid);
      if (state.recycled && code === 0) {
        // Restarted on purpose to give memory back: not a crash.
        this.spawn();
        return;
      }
      if (state.ready) this.startFailures = 0;
      else this.startFailures++;
      const delay = Math.min(RESTART_DELAY_CAP_MS, RESTART_DELAY_MS * 2 ** Math.max(0, this.startFailures - 1));
      this.d.log.warn('analysis worker exited; restarting it', {
        code,
        pid: proc.pid,
        ready: state.ready,
        retry_ms: delay,
        reason: state.lastError || undefined,
      });
      if (this.startFailures === MAX_START_FAILURES)
        void this.failWaitingJobs(`the analysis worker cannot start (${state.lastError || `exit code ${code}`})`);
      setTimeout(() => !this.stopping && this.spawn(), delay);
    });
  }

  /** Passes the worker's log lines on, remembering the last one as the likely reason of a crash. */
  private async forwardStderr(stream: ReadableStream<Uint8Array>, state: { lastError: string }): Promise<void> {
    const dec = new TextDecoder();
    const sink = this.d.logSink;
    let pending = '';
    for await (const chunk of stream) {
      const text = dec.decode(chunk, { stream: true });
      if (sink) {
        const parts = (pending + text).split('\n');
        pending = parts.pop()!;
        for (const line of parts) if (line) sink(line);
      } else {
        process.stderr.write(text);
      }
      // Bun's crash report ends with its version line: the error line before it says more.
      const lines = text.trim().split('\n').filter(Boolean);
      const last = lines.findLast((l) => /error|exception|fatal|panic/i.test(l)) ?? lines.at(-1);
      if (last) state.lastError = last.trim().slice(0, 300);
    }
  }

  /** Jobs cannot make progress while no worker starts: say so on each waiting video. */
  private async failWaitingJobs(reason: string): Promise<void> {
    const failed = await this.d.queue.failWaiting(reason);
    for (const id of failed) this.d.onChanged(id);
    this.d.log.error('analysis is unavailable', { reason, failed_jobs: failed.length });
  }

  private async relay(proc: Proc, state: { ready: boolean; recycled: boolean }): Promise<void> {
    for await (const line of lines(proc.stdout as ReadableStream<Uint8Array>)) {
      let m: WorkerMessage;
      try {
        m = JSON.parse(line);
      } catch {
        continue;
      }
      if (m.type === 'changed') this.d.onChanged(m.video_id);
      else if (m.type === 'ready') {
        state.ready = true;
        this.ready.set(proc, 0);
      } else if (m.type === 'live-window-done') this.settleWindow(m.id, m.result);
      else if (m.type === 'live-window-failed') this.settleWindow(m.id, new Error(m.reason));
      else if (m.type === 'recycle') {
        state.recycled = true;
        // Leaving: new windows go to the others (or wait for the worker that replaces it).
        this.ready.delete(proc);
        this.d.log.info('analysis worker restarts to give its memory back', {
          rss_mb: Math.round(m.rss_bytes / 2 ** 20),
          reason: m.reason,
        });
      }
    }
  }

  /** The jobs a dead worker held go back to the queue, unless they keep killing workers. */
  private async requeueJobsOf(pid: number): Promise<void> {
    try {
      const { requeued, failed } = await this.d.queue.releaseWorker(this.prefixOf(pid), MAX_ATTEMPTS);
      for (const id of [...requeued, ...failed]) this.d.onChanged(id);
      if (requeued.length || failed.length)
        this.d.log.warn('released the jobs of a dead worker', { requeued: requeued.length, failed: failed.length });
    } catch (e) {
      // The next server start resumes them (resetRunning).
      this.d.log.error('could not release the jobs of a dead worker', { pid, reason: (e as Error).message });
    }
  }
}
