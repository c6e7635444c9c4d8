/**
 * bench/cluster (issue 33): the three figures of "more machines", with real processes, real HTTP
 * and a real PostgreSQL (test/pg.ts: 127.0.0.1:5432 or a throwaway cluster; a fresh database per
 * run, dropped after).
 *
 *   bun bench/cluster.ts [--parts analysis,inquire,api-nodes] [--databases sqlite,postgres]
 *                        [--nodes 1,3] [--clips a.mp4,b.mp4] [--n 200] [--clients 8] [--hours 100] [--repeat R] [--cache DIR]
 *                        [--log-statements]
 *
 * 1. analysis: CPU-seconds of analysis per second of video, one `serve --workers 0` API node and
 *    K `vidq worker --workers 1` nodes (--nodes, default 1 and 3) on one catalog (PostgreSQL:
 *    separate data directories and one shared --media-dir; SQLite: the nodes share the data
 *    directory, the only way they can share the file), plus the single-machine default (one `serve`,
 *    one analysis process, SQLite) as the reference. The clips (--clips, default CLIPS below) are
 *    uploaded together through /remote-upload once every node is up; the window runs from the first
 *    upload to the last video ready. Counted: user+system CPU of every process of every node (the
 *    API node, the worker nodes, their analysis processes and ffmpeg: /proc/<pid>/stat of each live
 *    descendant, with cutime/cstime for those that ended), and on PostgreSQL the server processes
 *    (backends) connected to the run's database (sampled every 250 ms through pg_stat_activity;
 *    a backend that ends between two samples loses at most its last 250 ms). Not counted: this
 *    process (the origin that serves the clips, the polling) and PostgreSQL's shared background
 *    processes (WAL writer, checkpointer, autovacuum), which serve every database of the server.
 * 2. inquire: POST /inquire p50/p95 at --hours (default 100) of indexed video: bench/inquire's
 *    synthetic index (bench/inquire-index.ts, cached in $TMPDIR/vidq-bench-inquire-v2), and the same
 *    catalog copied row for row into a fresh PostgreSQL database (same ids, so the same questions),
 *    then VACUUM ANALYZE (the statistics a catalog filled over time has).
 *    Both servers run at once and are asked in turn (the same question to one then the other, the
 *    order alternating), so that the load of a shared machine falls on both alike. Also the CPU
 *    each question costs (the server process, plus on PostgreSQL its backends).
 * 3. api-nodes: questions per second with --clients (default 8) clients at once against one API
 *    node, then against two API nodes (clients split between them) on the one PostgreSQL catalog.
 *
 * Prints a table; writes every figure to bench/out/cluster-<time>.json with the load average.
 */
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from 'pg';
import { copyCatalog } from './pg-copy';
import { freshPostgresDatabase, postgresServer, type TestDatabase } from '../test/pg';
import { QUESTIONS } from './inquire-questions';
import {
  type BaseInfo,
  buildSizes,
  DEFAULT_ROOT,
  inquireBody,
  MEDIA,
  rngOf,
  SEED,
  type SizeInfo,
} from './inquire-index';

const { values } = parseArgs({
  options: {
    parts: { type: 'string' },
    databases: { type: 'string' },
    nodes: { type: 'string' },
    clips: { type: 'string' },
    n: { type: 'string' },
    clients: { type: 'string' },
    hours: { type: 'string' },
    cache: { type: 'string' },
    repeat: { type: 'string' },
    'log-statements': { type: 'boolean' },
  },
});
const PARTS = new Set((values.parts ?? 'analysis,inquire,api-nodes').split(','));
const DATABASES = (values.databases ?? 'sqlite,postgres').split(',') as ('sqlite' | 'postgres')[];
/** --log-statements: PostgreSQL logs every statement of the run's database with its duration (the server's log). */
const PROFILE = values['log-statements'] === true;
const NODES = (values.nodes ?? '1,3').split(',').map(Number);
/** Eight shared clips, 3 minutes in all, each with something for every analyzer (people-one-by-one's 139 s left out: it would be most of the time). */
const CLIPS = (
  values.clips ??
  'big-buck-bunny-intro.webm,birthday-no-audio.mp4,bottles.mp4,cars-parking-lot.mp4,skateboarding-dog.mp4,smpte-timecode-1080p.mp4,speech-over-bottles.mp4,grid-speakers-33s.mp4'
).split(',');
const N = Number(values.n ?? 200);
const CLIENTS = Number(values.clients ?? 8);
const HOURS = Number(values.hours ?? 100);
const REPEAT = Number(values.repeat ?? 1);
const ROOT = values.cache ?? DEFAULT_ROOT;
const MAIN = join(import.meta.dir, '../src/main.ts');
const OUT = join(import.meta.dir, 'out');
const TICK = 100; // clock ticks per second of /proc/<pid>/stat (USER_HZ, 100 on Linux)

const results: Record<string, unknown> = {
  started: new Date().toISOString(),
  cores: navigator.hardwareConcurrency,
  load_at_start: loadavg(),
};
const load = () => loadavg()[0]!.toFixed(2);
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
};

// ---- CPU accounting ---------------------------------------------------------------------------

interface Stat {
  ppid: number;
  /** utime + stime, seconds. */
  self: number;
  /** cutime + cstime: children that ended and were waited for, seconds. */
  children: number;
}

function statOf(pid: number): Stat | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return {
      ppid: Number(fields[1]),
      self: (Number(fields[11]) + Number(fields[12])) / TICK,
      children: (Number(fields[13]) + Number(fields[14])) / TICK,
    };
  } catch {
    return null; // ended
  }
}

/**
 * CPU seconds of a process and all its descendants so far: each live one's own time plus that of
 * its children that ended (which the kernel adds to the parent when it waits for them).
 */
function treeCpu(root: number): number {
  const stats = new Map<number, Stat>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const s = statOf(Number(name));
    if (s) stats.set(Number(name), s);
  }
  const kids = new Map<number, number[]>();
  for (const [pid, s] of stats) kids.set(s.ppid, [...(kids.get(s.ppid) ?? []), pid]);
  let sum = 0;
  const todo = [root];
  while (todo.length) {
    const pid = todo.pop()!;
    const s = stats.get(pid);
    if (!s) continue;
    sum += s.self + s.children;
    todo.push(...(kids.get(pid) ?? []));
  }
  return sum;
}

/**
 * The PostgreSQL server processes serving one database: sampled every 250 ms (pg_stat_activity),
 * each backend's CPU kept from its last sample, so a backend that ended still counts.
 */
async function backendMeter(database: string): Promise<{ cpu: () => number; stop: () => Promise<void> }> {
  const { url } = await postgresServer();
  const c = new Client({ connectionString: url });
  await c.connect();
  const last = new Map<number, number>();
  let stopped = false;
  const sample = async () => {
    const { rows } = await c.query('SELECT pid FROM pg_stat_activity WHERE datname = $1', [database]);
    for (const { pid } of rows as { pid: number }[]) {
      const s = statOf(pid);
      if (s) last.set(pid, s.self + s.children);
    }
  };
  await sample();
  const loop = (async () => {
    while (!stopped) {
      await Bun.sleep(250);
      await sample().catch(() => {});
    }
  })();
  return {
    cpu: () => [...last.values()].reduce((a, b) => a + b, 0),
    stop: async () => {
      stopped = true;
      await loop;
      await c.end();
    },
  };
}

// ---- processes ---------------------------------------------------------------------------------

interface Proc {
  pid: number;
  url?: string;
  stop: () => Promise<void>;
}

/** Starts `vidq <args>` and waits until its stdout has a line matching `ready`. */
async function start(args: string[], ready: RegExp): Promise<Proc> {
  const proc = Bun.spawn([process.execPath, MAIN, ...args, '--log-level', 'warn'], {
    stdout: 'pipe',
    stderr: 'inherit',
  });
  const reader = proc.stdout.getReader();
  let text = '';
  const deadline = performance.now() + 180_000;
  for (;;) {
    if (performance.now() > deadline) throw new Error(`vidq ${args[0]} did not start: ${text}`);
    const { value, done } = await reader.read();
    if (done) throw new Error(`vidq ${args[0]} exited: ${text}`);
    text += new TextDecoder().decode(value);
    const m = ready.exec(text);
    if (!m) continue;
    void (async () => {
      while (!(await reader.read()).done);
    })();
    return {
      pid: proc.pid,
      ...(m[1] && { url: m[1] }),
      stop: async () => {
        proc.kill('SIGTERM');
        const t = setTimeout(() => proc.kill('SIGKILL'), 30_000);
        await proc.exited;
        clearTimeout(t);
      },
    };
  }
}

const LISTENING = /listening on (http:\/\/\S+)/;

/** The flags that put a node on a catalog: the SQLite file of `dataDir`, or the PostgreSQL database and a media folder. */
function catalogFlags(dataDir: string, db: TestDatabase | null, mediaDir: string | null): string[] {
  return ['--data-dir', dataDir, ...(db ? ['--database', db.url] : []), ...(mediaDir ? ['--media-dir', mediaDir] : [])];
}

function serveArgs(flags: string[], extra: string[] = []): string[] {
  return [
    'serve',
    ...flags,
    '--host',
    '127.0.0.1',
    '--port',
    '0',
    '--allow-private-urls',
    '--min-free-bytes',
    '0',
    ...extra,
  ];
}

async function getJson(url: string): Promise<any> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`GET ${url}: HTTP ${res.status}`);
  return res.json();
}

// ---- 1. analysis: CPU-seconds per video-second -------------------------------------------------

interface Round {
  video_sec: number;
  wall_sec: number;
  cpu_sec: { api: number; workers: number; postgres: number; total: number };
  /** Each worker node's share of `cpu_sec.workers`. */
  per_worker_node_cpu_sec: number[];
  cpu_per_video_sec: number;
  load: [string, string];
}

interface AnalysisRun extends Round {
  setup: string;
  database: 'sqlite' | 'postgres';
  worker_nodes: number;
  /** The first round, which also loads the models of every analysis process. */
  cold: Round;
  /** Rounds before the measured one (more than 1 when a worker node had no video in the first). */
  warm_up_rounds: number;
  /** CPU-seconds per second of every counted process while no video waits. */
  idle_cpu_per_sec: number;
}

async function analysisRun(database: 'sqlite' | 'postgres', workerNodes: number): Promise<AnalysisRun> {
  const root = mkdtempSync(join(tmpdir(), 'vidq-bench-cluster-'));
  const db = database === 'postgres' ? await freshPostgresDatabase() : null;
  const media = db ? join(root, 'media') : null;
  if (media) mkdirSync(media);
  const procs: Proc[] = [];
  const origin = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (req) => new Response(Bun.file(join(MEDIA, decodeURIComponent(new URL(req.url).pathname.slice(1))))),
  });
  let meter: Awaited<ReturnType<typeof backendMeter>> | null = null;
  try {
    const apiDir = join(root, 'api');
    const user = Bun.spawnSync([
      process.execPath,
      MAIN,
      'user',
      'create',
      '--name',
      'bench',
      '--credits',
      'unlimited',
      '--json',
      ...catalogFlags(apiDir, db, media),
    ]);
    if (user.exitCode !== 0) throw new Error(`user create: ${user.stderr.toString()}`);
    const token = JSON.parse(user.stdout.toString()).token as string;
    // workerNodes 0: the single-machine default, one serve that analyses with one process.
    const api = await start(
      serveArgs(catalogFlags(apiDir, db, media), ['--workers', workerNodes === 0 ? '1' : '0']),
      LISTENING,
    );
    procs.push(api);
    for (let i = 0; i < workerNodes; i++)
      procs.push(
        await start(
          ['worker', ...catalogFlags(db ? join(root, `worker${i + 1}`) : apiDir, db, media), '--workers', '1'],
          /vidq worker node/,
        ),
      );
    // Every node in the cluster's list before the clock starts.
    for (;;) {
      const nodes = (await getJson(`${api.url}/health`)).cluster?.nodes ?? [];
      if (nodes.length >= 1 + workerNodes) break;
      await Bun.sleep(250);
    }
    if (db) meter = await backendMeter(new URL(db.url).pathname.slice(1));
    const cpuOf = () => ({
      api: treeCpu(api.pid),
      workers: procs.slice(1).reduce((a, p) => a + treeCpu(p.pid), 0),
      postgres: meter?.cpu() ?? 0,
    });
    const worker = (p: Proc) => treeCpu(p.pid);
    /** Uploads every clip at once into `index` and waits until all are analysed; the CPU each part used meanwhile. */
    const round = async (index: string): Promise<Round> => {
      const load0 = load();
      const c0 = cpuOf();
      const w0 = procs.slice(1).map(worker);
      const t0 = performance.now();
      await Promise.all(
        CLIPS.map(async (clip) => {
          const res = await fetch(`${api.url}/remote-upload`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'application/json' },
            body: JSON.stringify({ token, index, url: `${origin.url}${encodeURIComponent(clip)}` }),
          });
          if (res.status !== 200) throw new Error(`upload of ${clip}: HTTP ${res.status} ${await res.text()}`);
        }),
      );
      let listed: any[] = [];
      for (;;) {
        listed = await getJson(`${api.url}/index-resources?token=${token}&index=${index}`);
        if (listed.length === CLIPS.length && listed.every((r) => r.status === 'ready' || r.status === 'failed')) break;
        if (performance.now() - t0 > 1_800_000) throw new Error(`not analysed after 30 min: ${JSON.stringify(listed)}`);
        await Bun.sleep(250);
      }
      const wall = (performance.now() - t0) / 1000;
      const c1 = cpuOf();
      for (const r of listed.filter((x) => x.status === 'failed')) throw new Error(`${r.file_name} failed: ${r.error}`);
      const videoSec = listed.reduce((a, r) => a + Number(r.metadata?.duration ?? r.duration ?? 0), 0);
      const cpu = {
        api: c1.api - c0.api,
        workers: c1.workers - c0.workers,
        postgres: c1.postgres - c0.postgres,
        total: 0,
      };
      cpu.total = cpu.api + cpu.workers + cpu.postgres;
      return {
        video_sec: videoSec,
        wall_sec: wall,
        cpu_sec: cpu,
        per_worker_node_cpu_sec: procs.slice(1).map((p, k) => worker(p) - w0[k]!),
        cpu_per_video_sec: cpu.total / videoSec,
        load: [load0, load()],
      };
    };
    // The first round loads each node's models (each analysis process loads them on its first
    // video): a cost per node, not per video. The round after the warm-up is the steady state.
    const cold = await round('cold');
    // Until every worker node has had videos of its own (the queue hands them to whichever asks first).
    const had = [...cold.per_worker_node_cpu_sec];
    let warmUps = 1;
    while (warmUps < 5 && had.some((x) => x < 0.5 * Math.max(...had))) {
      (await round(`cold${++warmUps}`)).per_worker_node_cpu_sec.forEach((x, k) => {
        had[k]! += x;
      });
    }
    // What the nodes cost doing nothing (heartbeats, the queue's polling), over 15 s.
    const i0 = cpuOf();
    await Bun.sleep(15_000);
    const i1 = cpuOf();
    const idle = (i1.api + i1.workers + i1.postgres - i0.api - i0.workers - i0.postgres) / 15;
    const warm = await round('bench');
    return {
      setup:
        workerNodes === 0
          ? `serve, 1 analysis process (${database})`
          : `serve --workers 0 + ${workerNodes} worker node(s) (${database})`,
      database,
      worker_nodes: workerNodes,
      cold,
      warm_up_rounds: warmUps,
      idle_cpu_per_sec: idle,
      ...warm,
    };
  } finally {
    for (const p of procs.reverse()) await p.stop().catch(() => {});
    await meter?.stop();
    origin.stop(true);
    await db?.drop();
    rmSync(root, { recursive: true, force: true });
  }
}

// ---- 2. /inquire at 100 h, SQLite against PostgreSQL ----------------------------------------------

interface Asker {
  name: string;
  proc: Proc;
  /** CPU seconds so far: the server's processes, and its database's backends on PostgreSQL. */
  cpu: () => number;
  /** PostgreSQL: its database, and the CPU seconds of that database's backends so far. */
  db?: TestDatabase;
  backends?: () => number;
}

/** Waits until the server's search index (built at start-up in the background) is ready. */
async function steady(url: string): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    const h = await getJson(`${url}/health`);
    if (h.search_index?.ready !== false) return (performance.now() - t0) / 1000;
    await Bun.sleep(500);
  }
}

async function ask(url: string, body: string): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(`${url}/inquire`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`/inquire: HTTP ${res.status} ${text.slice(0, 300)}`);
  return performance.now() - t0;
}

interface InquireFigures {
  database: string;
  p50_ms: number;
  p95_ms: number;
  p99_ms: number;
  mean_ms: number;
  cpu_ms_per_question: number;
  search_index_ready_sec: number;
}

/** The same seeded sequence of N questions to every server, one question at a time, in turn. */
async function inquireInTurn(askers: Asker[], base: BaseInfo, size: SizeInfo): Promise<InquireFigures[]> {
  const bodies = QUESTIONS.map((q) => inquireBody(q, base, size));
  // Warm-up: every question twice on each (the first loads the embedding model and the vectors).
  for (const a of askers) for (let r = 0; r < 2; r++) for (const b of bodies) await ask(a.proc.url!, b);
  const rng = rngOf(SEED + 1);
  const order = Array.from({ length: N }, () => bodies[Math.floor(rng.next() * bodies.length)]!);
  const times = askers.map((): number[] => []);
  const cpu = askers.map((): number => 0);
  for (let i = 0; i < order.length; i++) {
    // Alternating who goes first, so neither always follows the other's question.
    const turn = i % 2 === 0 ? askers.map((_, k) => k) : askers.map((_, k) => askers.length - 1 - k);
    for (const k of turn) {
      const c0 = askers[k]!.cpu();
      times[k]!.push(await ask(askers[k]!.proc.url!, order[i]!));
      cpu[k]! += askers[k]!.cpu() - c0;
    }
  }
  return askers.map((a, k) => ({
    database: a.name,
    p50_ms: pct(times[k]!, 50),
    p95_ms: pct(times[k]!, 95),
    p99_ms: pct(times[k]!, 99),
    mean_ms: times[k]!.reduce((x, y) => x + y, 0) / times[k]!.length,
    cpu_ms_per_question: (cpu[k]! * 1000) / order.length,
    search_index_ready_sec: 0,
  }));
}

// ---- 3. questions per second, one API node against two -------------------------------------------

interface Throughput {
  api_nodes: number;
  clients: number;
  questions_per_sec: number;
  p50_ms: number;
  p95_ms: number;
  cpu_ms_per_question: number;
  load: string;
}

/** N questions from CLIENTS clients at once, client k asking node k mod nodes. */
async function throughput(
  nodes: Asker[],
  meter: (() => number) | null,
  base: BaseInfo,
  size: SizeInfo,
): Promise<Throughput> {
  const bodies = QUESTIONS.map((q) => inquireBody(q, base, size));
  const rng = rngOf(SEED + CLIENTS);
  const order = Array.from({ length: N }, () => bodies[Math.floor(rng.next() * bodies.length)]!);
  const cpuNow = () => nodes.reduce((a, n) => a + treeCpu(n.proc.pid), 0) + (meter?.() ?? 0);
  const times: number[] = [];
  let next = 0;
  const c0 = cpuNow();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, k) => {
      const url = nodes[k % nodes.length]!.proc.url!;
      while (next < order.length) times.push(await ask(url, order[next++]!));
    }),
  );
  const wall = (performance.now() - t0) / 1000;
  return {
    api_nodes: nodes.length,
    clients: CLIENTS,
    questions_per_sec: order.length / wall,
    p50_ms: pct(times, 50),
    p95_ms: pct(times, 95),
    cpu_ms_per_question: ((cpuNow() - c0) * 1000) / order.length,
    load: load(),
  };
}

// ---- main -------------------------------------------------------------------------------------------

mkdirSync(OUT, { recursive: true });
const outFile = join(OUT, `cluster-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
const save = () => writeFileSync(outFile, JSON.stringify({ ...results, load_at_end: loadavg() }, null, 2));

if (PARTS.has('analysis')) {
  console.log(`\n1. analysis of ${CLIPS.length} clips (${CLIPS.join(', ')}), uploaded at once; load ${load()}`);
  const runs: AnalysisRun[] = [];
  results.analysis = runs;
  const plan: ['sqlite' | 'postgres', number][] = [['sqlite', 0]];
  for (const d of DATABASES) for (const k of NODES) plan.push([d, k]);
  // Rounds of the whole plan (not each setup R times in a row), so that a change of the machine's load falls on every setup.
  for (let rep = 0; rep < REPEAT; rep++)
    for (const [d, k] of plan) {
      const r = await analysisRun(d, k);
      runs.push(r);
      save();
      const f = (x: number) => x.toFixed(1);
      console.log(
        `  ${r.setup.padEnd(46)} first round (models loading) ${r.cold.cpu_per_video_sec.toFixed(3)} CPU-s per video-s, per worker node ${r.cold.per_worker_node_cpu_sec.map(f).join(' / ') || '-'} CPU-s; idle ${r.idle_cpu_per_sec.toFixed(3)} CPU-s/s\n` +
          `  ${''.padEnd(46)} after ${r.warm_up_rounds} warm-up round(s): ${r.video_sec.toFixed(0)} s of video, ${f(r.cpu_sec.total)} CPU-s (api ${f(r.cpu_sec.api)}, workers ${f(r.cpu_sec.workers)}, postgres ${f(r.cpu_sec.postgres)}; per worker node ${r.per_worker_node_cpu_sec.map(f).join(' / ') || '-'}) = ${r.cpu_per_video_sec.toFixed(3)} CPU-s per video-s; wall ${r.wall_sec.toFixed(0)} s; load ${r.load.join('→')}`,
      );
    }
  const meanOf = (d: string, k: number) => {
    const xs = runs.filter((r) => r.database === d && r.worker_nodes === k).map((r) => r.cpu_per_video_sec);
    return xs.reduce((a, b) => a + b, 0) / xs.length;
  };
  const summary: Record<string, number> = {};
  for (const [d, k] of plan) summary[`${d}:${k}`] = meanOf(d, k);
  results.analysis_mean_cpu_per_video_sec = summary;
  console.log(`  mean over ${REPEAT} round(s), CPU-s per video-s (steady state):`);
  for (const [d, k] of plan)
    console.log(
      `    ${(k === 0 ? `${d}, single machine` : `${d}, ${k} worker node(s)`).padEnd(28)} ${meanOf(d, k).toFixed(3)}`,
    );
  for (const d of DATABASES)
    for (const k of NODES.slice(1))
      console.log(
        `  ${d}: ${k} worker nodes against ${NODES[0]}: ${((meanOf(d, k) / meanOf(d, NODES[0]!) - 1) * 100).toFixed(1)} % CPU per video-second (goal ≤ 10 %)`,
      );
  save();
}

if (PARTS.has('inquire') || PARTS.has('api-nodes')) {
  const built = await buildSizes(ROOT, [HOURS]);
  const { base } = built;
  const size = built.sizes[0]!;
  console.log(`\nindex: ${size.info.hours.toFixed(1)} h, ${size.info.videos} videos (${size.dir})`);
  const work = mkdtempSync(join(tmpdir(), 'vidq-bench-cluster-inquire-'));
  const procs: Proc[] = [];
  const meters: Awaited<ReturnType<typeof backendMeter>>[] = [];
  const dbs: TestDatabase[] = [];
  try {
    const askers: Asker[] = [];
    if (DATABASES.includes('sqlite')) {
      const p = await start(serveArgs(['--data-dir', size.dir], ['--analysis-workers', '0']), LISTENING);
      procs.push(p);
      askers.push({ name: 'sqlite', proc: p, cpu: () => treeCpu(p.pid) });
    }
    let pgMedia = '';
    if (DATABASES.includes('postgres')) {
      {
        // The media folder (the real clips' files and frames) copied, so that the run leaves the
        // cache as it was; one per catalog (a media folder belongs to one catalog).
        const media = join(work, 'media-pg');
        cpSync(join(size.dir, 'media'), join(media, 'media'), { recursive: true });
        pgMedia ||= media;
        const d = await freshPostgresDatabase();
        dbs.push(d);
        const t0 = performance.now();
        console.log(`copying the catalog into PostgreSQL (${d.server}) ...`);
        await copyCatalog(join(size.dir, 'vidq.db'), d.url);
        const copySec = (performance.now() - t0) / 1000;
        console.log(`  copied in ${copySec.toFixed(0)} s`);
        results.postgres_copy_sec = copySec;
        // Planner statistics, as a catalog filled over time has them (autovacuum would take a while).
        const c = new Client({ connectionString: d.url });
        await c.connect();
        await c.query('VACUUM ANALYZE');
        if (PROFILE)
          await c.query(`ALTER DATABASE "${new URL(d.url).pathname.slice(1)}" SET log_min_duration_statement = 0`);
        await c.end();
        const meter = await backendMeter(new URL(d.url).pathname.slice(1));
        meters.push(meter);
        const p = await start(
          serveArgs(catalogFlags(join(work, 'api-pg'), d, media), ['--analysis-workers', '0']),
          LISTENING,
        );
        procs.push(p);
        askers.push({
          name: 'postgres',
          db: d,
          proc: p,
          cpu: () => treeCpu(p.pid) + meter.cpu(),
          backends: meter.cpu,
        });
      }
    }
    const ready = await Promise.all(askers.map((a) => steady(a.proc.url!)));
    if (PARTS.has('inquire')) {
      console.log(
        `\n2. POST /inquire at ${size.info.hours.toFixed(0)} h, ${N} questions one at a time, servers in turn; load ${load()}`,
      );
      const figures = await inquireInTurn(askers, base, size.info);
      figures.forEach((f, k) => {
        f.search_index_ready_sec = ready[k]!;
      });
      results.inquire = { hours: size.info.hours, videos: size.info.videos, questions: N, load: load(), figures };
      save();
      for (const f of figures)
        console.log(
          `  ${f.database.padEnd(9)} p50 ${f.p50_ms.toFixed(0).padStart(5)} ms  p95 ${f.p95_ms.toFixed(0).padStart(5)} ms  p99 ${f.p99_ms.toFixed(0).padStart(5)} ms  mean ${f.mean_ms.toFixed(0).padStart(5)} ms  CPU ${f.cpu_ms_per_question.toFixed(0)} ms per question`,
        );
      const s = figures.find((f) => f.database === 'sqlite');
      for (const p of figures.filter((f) => f.database !== 'sqlite'))
        if (s) console.log(`  ${p.database} p95 / SQLite p95 = ${(p.p95_ms / s.p95_ms).toFixed(2)} (goal ≤ 1.5)`);
    }
    if (PARTS.has('api-nodes')) {
      // On PostgreSQL when it is measured, else two servers on the one SQLite file.
      const first = askers.find((a) => a.db) ?? askers[0]!;
      const meter = first.backends ?? null;
      const second = await start(
        first.db
          ? serveArgs(catalogFlags(join(work, 'api-second'), first.db, pgMedia), ['--analysis-workers', '0'])
          : serveArgs(['--data-dir', size.dir], ['--analysis-workers', '0']),
        LISTENING,
      );
      procs.push(second);
      await steady(second.url!);
      const b: Asker = { name: first.name, proc: second, cpu: () => treeCpu(second.pid) };
      for (const bodyOf of QUESTIONS.map((q) => inquireBody(q, base, size.info))) await ask(second.url!, bodyOf);
      console.log(
        `\n3. questions per second, ${CLIENTS} clients at once, ${N} questions (${first.name}); load ${load()}`,
      );
      const runs: Throughput[] = [];
      // One, two, one, two: the load of the machine drifts; each setup is measured twice.
      for (const nodes of [[first], [first, b], [first], [first, b]]) {
        const r = await throughput(nodes, meter, base, size.info);
        runs.push(r);
        console.log(
          `  ${r.api_nodes} API node(s): ${r.questions_per_sec.toFixed(1).padStart(5)} questions/s  p50 ${r.p50_ms.toFixed(0).padStart(5)} ms  p95 ${r.p95_ms.toFixed(0).padStart(5)} ms  CPU ${r.cpu_ms_per_question.toFixed(0)} ms per question; load ${r.load}`,
        );
      }
      results.api_nodes = { database: first.name, hours: size.info.hours, runs };
      save();
    }
  } finally {
    for (const p of procs.reverse()) await p.stop().catch(() => {});
    for (const m of meters) await m.stop();
    for (const d of dbs) await d.drop();
    rmSync(work, { recursive: true, force: true });
  }
}
save();
console.log(`\nwritten to ${outFile}; load ${load()} (${navigator.hardwareConcurrency} cores)`);
