/**
 * The real server as a child process (so it can be killed with SIGKILL), its descendants (analysis
 * workers and their helpers), a seeded random number generator for reproducible kill points, and
 * small polling/latency helpers shared by the hardening tests and bench/soak.ts.
 *
 * Both dialects (issue 33): `SERVER_DIALECTS` gives each server its catalog, the SQLite file in its
 * data directory or a fresh PostgreSQL database (test/pg.ts) passed as `--database`; the databases
 * are dropped by `stopAll`.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freshPostgresDatabase, type TestDatabase } from '../pg';
import type { Place } from './invariants';

const MAIN = join(import.meta.dir, '../../src/main.ts');

export interface ServerProc {
  proc: ReturnType<typeof Bun.spawn>;
  pid: number;
  url: string;
  /** The default user's token (unlimited credits). */
  token: string;
  dataDir: string;
  /** Its --database URL (undefined: the SQLite file in dataDir). */
  database?: string;
  /** Everything the server printed on stdout so far (first lines). */
  out: string;
}

/** Where a server's state is, for the invariant checker. */
export const placeOf = (s: { dataDir: string; database?: string }): Place => ({
  dataDir: s.dataDir,
  ...(s.database && { database: s.database }),
});

/** Servers started and not yet stopped, so a failed test cannot leave one running. */
const live = new Set<ServerProc>();
/** PostgreSQL databases made for servers here, dropped by stopAll. */
const databases: TestDatabase[] = [];

/** Kills every server this process started and has not stopped, and drops their databases (for afterAll). */
export async function stopAll(): Promise<void> {
  for (const s of [...live]) await stopServer(s);
  await dropDatabases();
}

/** Drops the PostgreSQL databases `SERVER_DIALECTS` made (their servers must be stopped). */
export async function dropDatabases(): Promise<void> {
  for (const d of databases.splice(0)) await d.drop();
}

export interface ServerDialect {
  name: 'SQLite' | 'PostgreSQL';
  /** A catalog for one data directory: the --database URL to give its servers, undefined for SQLite. */
  catalog(): Promise<string | undefined>;
}

/** The two catalogs the hardening suites run on. */
export const SERVER_DIALECTS: ServerDialect[] = [
  { name: 'SQLite', catalog: async () => undefined },
  {
    name: 'PostgreSQL',
    async catalog() {
      const d = await freshPostgresDatabase();
      databases.push(d);
      return d.url;
    },
  },
];

/**
 * Starts `bun src/main.ts serve` on a free port of 127.0.0.1 with `args` added. The default
 * options keep it quiet and let it fetch from the local test origin.
 */
export async function spawnServer(
  dataDir: string,
  args: string[] = [],
  opts: {
    stderr?: 'inherit' | 'ignore' | 'pipe';
    env?: Record<string, string>;
    logLevel?: string;
    /** --database (a postgres:// URL); undefined: the SQLite file in dataDir. */
    database?: string;
  } = {},
): Promise<ServerProc> {
  const proc = Bun.spawn(
    [
      process.execPath,
      MAIN,
      'serve',
      '--data-dir',
      dataDir,
      '--host',
      '127.0.0.1',
      '--port',
      '0',
      '--allow-private-urls',
      '--log-level',
      opts.logLevel ?? 'error',
      '--min-free-bytes',
      '0',
      ...(opts.database ? ['--database', opts.database] : []),
      ...args,
    ],
    {
      stdout: 'pipe',
      stderr: opts.stderr ?? 'inherit',
      stdin: 'ignore',
      ...(opts.env && { env: { ...process.env, ...opts.env } }),
    },
  );
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  let out = '';
  const dec = new TextDecoder();
  const deadline = Date.now() + 30_000;
  while (!/listening on (http:\/\/\S+)/.test(out)) {
    if (Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`server did not start within 30 s: ${out}`);
    }
    const { value, done } = await reader.read();
    if (done) throw new Error(`server exited (code ${await proc.exited}): ${out}`);
    out += dec.decode(value);
  }
  reader.releaseLock();
  // Keep draining stdout so the child never blocks on a full pipe.
  void (async () => {
    try {
      for await (const _ of proc.stdout as ReadableStream<Uint8Array>) {
        /* discard */
      }
    } catch {
      /* closed */
    }
  })();
  const url = /listening on (http:\/\/\S+)/.exec(out)![1]!;
  const tokenFile = join(dataDir, 'default-token.txt');
  const token =
    /^\s+([A-Za-z0-9_-]{60}|[A-Za-z0-9_-]{64})$/m.exec(out)?.[1] ??
    (existsSync(tokenFile) ? readFileSync(tokenFile, 'utf8').trim() : '');
  const started = { proc, pid: proc.pid, url, token, dataDir, database: opts.database, out };
  live.add(started);
  return started;
}

/** Pids of all descendants of `pid` (children first), from /proc. */
export function descendants(pid: number): number[] {
  const out: number[] = [];
  const walk = (p: number) => {
    let kids: number[] = [];
    try {
      const taskDir = `/proc/${p}/task`;
      const tasks = existsSync(taskDir) ? readdirSync(taskDir) : [];
      for (const t of tasks) {
        const f = `${taskDir}/${t}/children`;
        if (existsSync(f)) kids.push(...readFileSync(f, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number));
      }
    } catch {
      kids = [];
    }
    for (const k of kids) {
      out.push(k);
      walk(k);
    }
  };
  walk(pid);
  return [...new Set(out)];
}

/** A process's command line, shortened (to say which child an orphan is). */
function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ').slice(0, 300);
  } catch {
    return 'gone';
  }
}

export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // A zombie (state Z) has exited; it only waits for its parent to reap it.
    return !/^\d+ \(.*\) Z/.test(stat);
  } catch {
    return false;
  }
}

/**
 * kill -9 of the server. Its workers are orphaned and must notice on their own (stdin closes) and
 * exit; returns how long that took, or throws when some are still alive after `graceMs`.
 */
export async function kill9(s: ServerProc, graceMs = 15_000): Promise<{ orphans: number; orphanExitMs: number }> {
  live.delete(s);
  const kids = descendants(s.pid);
  s.proc.kill('SIGKILL');
  await s.proc.exited;
  const t0 = Date.now();
  while (kids.some(alive)) {
    if (Date.now() - t0 > graceMs) {
      const left = kids.filter(alive);
      const what = left.map((k) => `${k} (${commandOf(k)})`);
      for (const k of left) process.kill(k, 'SIGKILL');
      throw new Error(
        `orphaned processes ${what.join(', ')} were still running ${graceMs} ms after the server was killed`,
      );
    }
    await Bun.sleep(25);
  }
  return { orphans: kids.length, orphanExitMs: Date.now() - t0 };
}

/** SIGTERM and wait (SIGKILL after 10 s). */
export async function stopServer(s: ServerProc): Promise<void> {
  live.delete(s);
  const kids = descendants(s.pid);
  s.proc.kill('SIGTERM');
  const code = await Promise.race([s.proc.exited, Bun.sleep(10_000).then(() => null)]);
  if (code === null) s.proc.kill('SIGKILL');
  await s.proc.exited;
  for (const k of kids) if (alive(k)) process.kill(k, 'SIGKILL');
}

/** Resident set size of a process in bytes (from /proc). */
export function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? NaN);
  return kb * 1024;
}

/** mulberry32: a small seeded generator, so kill points are the same on every run of one seed. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** p-th percentile (0–100) of a list of numbers (nearest rank). */
export function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

export const ms = (x: number) => Math.round(x * 10) / 10;
