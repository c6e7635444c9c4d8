/**
 * Runs the analysis worker processes for the server: starts them, wakes them when a job is queued,
 * relays their change notices, and restarts one that dies (its job goes back to the queue, or fails
 * after three crashes).
 */
import { join } from 'node:path';
import { and, eq, like, sql } from 'drizzle-orm';
import type { Config } from '../config';
import type { Logger } from '../log';
import type { Db } from '../storage/db';
import { jobs, videos } from '../storage/schema';
import type { WorkerMessage } from './worker';

/** Crashes of one job after which it is failed instead of retried. */
const MAX_ATTEMPTS = 3;

export class AnalysisSupervisor {
  private readonly procs = new Set<ReturnType<typeof Bun.spawn>>();
  private stopping = false;

  constructor(private readonly d: { config: Config; db: Db; log: Logger; onChanged: (videoId: string) => void }) {}

  start(): void {
    for (let i = 0; i < this.d.config.analysisWorkers; i++) this.spawn();
  }

  /** A job was queued: let idle workers look now rather than at their next poll. */
  wake(): void {
    for (const p of this.procs) {
      try {
        (p.stdin as import('bun').FileSink).write('\n');
        (p.stdin as import('bun').FileSink).flush();
      } catch {
        /* exiting */
      }
    }
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
    const cmd = compiled ? [process.execPath, 'worker'] : [process.execPath, join(import.meta.dir, '..', 'main.ts'), 'worker'];
    const proc = Bun.spawn(cmd, {
      stdin: 'pipe',
      stdout: 'pipe',
      stderr: 'inherit',
      env: { ...process.env, VIDQ_WORKER_CONFIG: JSON.stringify(this.d.config) },
    });
    this.procs.add(proc);
    this.relay(proc.stdout as ReadableStream<Uint8Array>);
    proc.exited.then((code) => {
      this.procs.delete(proc);
      if (this.stopping) return;
      this.d.log.warn('analysis worker exited; restarting it', { code, pid: proc.pid });
      this.requeueJobsOf(proc.pid);
      setTimeout(() => !this.stopping && this.spawn(), 1000);
    });
  }

  private async relay(stream: ReadableStream<Uint8Array>): Promise<void> {
    const dec = new TextDecoder();
    let buf = '';
    for await (const chunk of stream) {
      buf += dec.decode(chunk, { stream: true });
      let i: number;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        let m: WorkerMessage;
        try {
          m = JSON.parse(line);
        } catch {
          continue;
        }
        if (m.type === 'changed') this.d.onChanged(m.video_id);
      }
    }
  }

  /** The jobs a dead worker held go back to the queue, unless they keep killing workers. */
  private requeueJobsOf(pid: number): void {
    const held = this.d.db.select().from(jobs).where(and(eq(jobs.state, 'running'), like(jobs.workerId, `w_${pid}_%`))).all();
    const now = new Date();
    for (const j of held) {
      if (j.attempts >= MAX_ATTEMPTS) {
        const reason = `the analysis crashed ${j.attempts} times at stage ${j.stage}`;
        this.d.db.transaction((tx) => {
          tx.update(jobs).set({ state: 'failed', error: reason, updatedAt: now }).where(eq(jobs.videoId, j.videoId)).run();
          tx.update(videos).set({ status: 'failed', stage: 'failed', error: reason, updatedAt: now }).where(eq(videos.id, j.videoId)).run();
        });
      } else {
        this.d.db.update(jobs).set({ state: 'pending', workerId: null, updatedAt: now }).where(eq(jobs.videoId, j.videoId)).run();
      }
      this.d.onChanged(j.videoId);
    }
    if (held.length) this.d.log.warn('requeued jobs of a dead worker', { jobs: held.length, pending: this.d.db.select({ n: sql<number>`count(*)` }).from(jobs).where(eq(jobs.state, 'pending')).get()?.n });
  }
}
