/**
 * bench/api-clips: a phone's worth of short clips added through the API, as a user adds them.
 *
 *   bun bench/api-clips.ts [--quick] [--after-sec 120] [--media DIR]
 *
 * Starts a fresh server (`vidq serve`, its own process, default settings) on an empty data
 * directory, posts every video clip of ../shared/media (14) to /remote-upload at once (a 429 for
 * too many downloads in flight is retried after 200 ms), and reports:
 * - the seconds from the first post until every clip is `ready` (and each clip's own time);
 * - the peak PSS of the server's process tree while they index (the sum of the `Pss` line of
 *   /proc/<pid>/smaps_rollup over the server and all its descendants, sampled every 200 ms; a child
 *   caught between its spawn and its exec shares its parent's memory and is not counted again);
 * - the PSS of the tree `--after-sec` seconds after the last one is ready (default 120, as the
 *   issue's goal says: by then an idle worker has given its models back);
 * - the load average of the machine before and after (the figures mean little on a busy machine);
 * - a timeline (read from the server's database every 50 ms): per clip when its download started,
 *   when it was queued, when a job slot took it (a or b, the short lane) and when it was ready (and
 *   its playback copy published); per slot its busy time and its idle time while clips were still
 *   to come (waiting in line, or not yet stored), the waste a better order could use.
 *
 * The only options given to the server are those that make a local bench possible (a loopback
 * port, fetching from the loopback origin this script serves, a quiet log, no free-space floor).
 * `--quick` adds `--worker-idle-release-sec 5` and waits 15 s afterwards instead of two minutes:
 * for trying changes, not for the figures.
 */
import { Database } from 'bun:sqlite';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { descendants, spawnServer, stopServer } from '../test/hardening/proc';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean' },
    'after-sec': { type: 'string' },
    media: { type: 'string' },
  },
});
const MEDIA = values.media ?? process.env.VIDQ_TEST_MEDIA ?? resolve(import.meta.dir, '../../shared/media');
const afterSec = Number(values['after-sec'] ?? (values.quick ? 15 : 120));
const clips = readdirSync(MEDIA)
  .filter((f) => /\.(mp4|webm|mkv)$/.test(f))
  .sort();

/** PSS (bytes) of one process, 0 when it is gone or unreadable. */
function pss(pid: number): number {
  try {
    const kb = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1];
    return Number(kb ?? 0) * 1024;
  } catch {
    return 0;
  }
}
const cmdline = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
};
const parentOf = (pid: number) => {
  try {
    return Number(/\) \S+ (\d+)/.exec(readFileSync(`/proc/${pid}/stat`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
};
/**
 * The server and its descendants, less a child caught between its spawn and its exec: it still
 * shares its parent's memory (and so its cmdline), and counting it would count the parent twice.
 */
const tree = (root: number) => [root, ...descendants(root).filter((p) => cmdline(p) !== cmdline(parentOf(p)))];
const treePss = (root: number) => tree(root).reduce((sum, p) => sum + pss(p), 0);
/** What the processes of the tree hold (MB each, largest first), e.g. "worker 980, server 150, ffmpeg 40". */
function breakdown(root: number): string {
  const parts = tree(root).map((p) => {
    const cmd = cmdline(p).split('\0').filter(Boolean).join(' ');
    const what = p === root ? 'server' : / worker$/.test(cmd) ? 'worker' : (cmd.split(' ')[0]?.split('/').pop() ?? '?');
    return { what, bytes: pss(p) };
  });
  return parts
    .filter((x) => x.bytes > 0)
    .sort((a, b) => b.bytes - a.bytes)
    .map((x) => `${x.what} ${mb(x.bytes)}`)
    .join(', ');
}
const mb = (b: number) => Math.round(b / 2 ** 20);
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

const origin = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  fetch: (req) => {
    const name = decodeURIComponent(new URL(req.url).pathname.slice(1));
    return clips.includes(name)
      ? new Response(Bun.file(join(MEDIA, name)))
      : new Response('not found', { status: 404 });
  },
});
const dataDir = mkdtempSync(join(tmpdir(), 'vidq-api-clips-'));
const loadBefore = load();
const server = await spawnServer(dataDir, values.quick ? ['--worker-idle-release-sec', '5'] : []);
let peak = 0;
let peakParts = '';
let sampling = true;
const sampler = (async () => {
  while (sampling) {
    const now = treePss(server.pid);
    if (now > peak) {
      peak = now;
      peakParts = breakdown(server.pid);
    }
    await Bun.sleep(200);
  }
})();
const startPss = treePss(server.pid);

/** What the timeline records of each video (seconds from the first post). */
interface Seen {
  downloading?: number;
  queued?: number;
  start?: number;
  slot?: 'a' | 'b';
  ready?: number;
  copied?: number;
  durationSec?: number;
}
const seen = new Map<string, Seen>();
let timelineT0 = 0;
const serverDb = new Database(join(dataDir, 'vidq.db'), { readonly: true });
const timeline = (async () => {
  const q = serverDb.query(
    `SELECT v.id id, v.status status, v.duration_sec dur, j.state state, j.worker_id worker,
            json_extract(v.analysis, '$.playback.state') playback
       FROM videos v LEFT JOIN jobs j ON j.video_id = v.id`,
  );
  while (sampling) {
    if (timelineT0) {
      const t = (performance.now() - timelineT0) / 1000;
      let rows: {
        id: string;
        status: string;
        dur: number | null;
        state: string | null;
        worker: string | null;
        playback: string | null;
      }[] = [];
      try {
        rows = q.all() as typeof rows;
      } catch {
        /* the server holds a write: the next sample */
      }
      for (const r of rows) {
        const e = seen.get(r.id) ?? {};
        seen.set(r.id, e);
        if (r.dur) e.durationSec = r.dur;
        e.downloading ??= t;
        if (r.state) e.queued ??= t;
        if (r.state === 'running' || r.state === 'done') {
          e.start ??= t;
          e.slot ??= r.worker?.endsWith('_b') ? 'b' : 'a';
        }
        if (r.status === 'ready') e.ready ??= t;
        if (r.status === 'ready' && r.playback !== 'making') e.copied ??= t;
      }
    }
    await Bun.sleep(50);
  }
})();

try {
  const t0 = performance.now();
  timelineT0 = t0;
  // All at once, as a phone's gallery is shared; a 429 (too many downloads in flight for one user)
  // is retried after a moment, as a client does.
  const keys = await Promise.all(
    clips.map(async (name) => {
      for (;;) {
        const res = await fetch(`${server.url}/remote-upload`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          body: JSON.stringify({ token: server.token, index: 'clips', url: `http://127.0.0.1:${origin.port}/${name}` }),
        });
        const body = (await res.json()) as { data?: { key: string }; message?: string };
        if (res.status === 429) {
          await Bun.sleep(200);
          continue;
        }
        if (!res.ok || !body.data) throw new Error(`${name}: ${res.status} ${body.message ?? ''}`);
        return [body.data.key, name] as const;
      }
    }),
  );
  const names = new Map(keys);
  const readyAt = new Map<string, number>();
  let rows: { file_id: string; status: string; metadata?: { duration?: number }; error?: string }[] = [];
  while (readyAt.size < clips.length) {
    if (performance.now() - t0 > 30 * 60_000) throw new Error('not all ready after 30 minutes');
    rows = (await (await fetch(`${server.url}/index-resources?token=${server.token}&index=clips`)).json()) as never;
    for (const r of rows) {
      if (r.status === 'failed') throw new Error(`${names.get(r.file_id)} failed: ${r.error}`);
      if (r.status === 'ready' && !readyAt.has(r.file_id)) readyAt.set(r.file_id, (performance.now() - t0) / 1000);
    }
    await Bun.sleep(100);
  }
  const allReady = Math.max(...readyAt.values());
  const peakWhileIndexing = peak;
  const peakWhileIndexingParts = peakParts;
  const loadAtEnd = load();
  const videoSec = rows.reduce((s, r) => s + (r.metadata?.duration ?? 0), 0);
  await Bun.sleep(afterSec * 1000);
  const after = treePss(server.pid);
  sampling = false;
  await sampler;

  console.log(
    `\n${clips.length} clips (${videoSec.toFixed(1)} s of video) through POST /remote-upload, fresh server, default settings${values.quick ? ' except --worker-idle-release-sec 5 (quick)' : ''}`,
  );
  for (const [key, t] of [...readyAt].sort((a, b) => a[1] - b[1]))
    console.log(`  ${t.toFixed(1).padStart(6)} s  ${names.get(key)}`);
  console.log(`all ready after ${allReady.toFixed(1)} s (${(videoSec / allReady).toFixed(1)}× real time; goal ≤ 16 s)`);
  console.log(
    `PSS of the server's process tree: ${mb(startPss)} MB at start, peak ${mb(peakWhileIndexing)} MB while indexing (goal ≤ 1229 MB), ${mb(after)} MB ${afterSec} s after the last was ready (goal ≤ 400 MB after 120 s)`,
  );
  console.log(`  at the peak, MB per process: ${peakWhileIndexingParts}`);
  console.log(`  ${afterSec} s after, MB per process: ${breakdown(server.pid)}`);
  printTimeline(names);
  console.log(
    `load average (1, 5, 15 min): ${loadBefore} before, ${loadAtEnd} when all were ready, ${load()} at the end; ${navigator.hardwareConcurrency} cores`,
  );
} finally {
  sampling = false;
  await timeline;
  serverDb.close();
  await stopServer(server);
  origin.stop();
  rmSync(dataDir, { recursive: true, force: true });
}

/**
 * Per clip: download start, queued, taken by a slot, ready, copy published (s); a bar of 0.5 s
 * steps (more on a long run: at most 100 columns) (d downloading, q queued, a/b analysed in that slot, c its playback copy after ready).
 * Per slot: busy from its jobs' start to their copy, idle while clips were still to come.
 */
function printTimeline(names: Map<string, string>): void {
  const rows = [...seen].filter(([, e]) => e.start !== undefined && e.copied !== undefined);
  if (rows.length === 0) return;
  const end = Math.max(...rows.map(([, e]) => e.copied!));
  // At most 100 columns.
  const step = Math.max(0.5, Math.ceil(end / 100 / 0.5) * 0.5);
  console.log(
    `\ntimeline (s from the first post): download, queued, start [slot], ready, copy published; one column = ${step} s`,
  );
  for (const [id, e] of rows.sort((x, y) => x[1].start! - y[1].start!)) {
    let bar = '';
    for (let t = 0; t < end; t += step) {
      const mid = t + step / 2;
      bar +=
        mid < e.downloading!
          ? ' '
          : mid < e.queued!
            ? 'd'
            : mid < e.start!
              ? 'q'
              : mid < e.ready!
                ? e.slot!
                : mid < e.copied!
                  ? 'c'
                  : ' ';
    }
    const f = (x: number | undefined) => (x === undefined ? '   -' : x.toFixed(1).padStart(5));
    console.log(
      `  ${(names.get(id) ?? id).slice(0, 26).padEnd(26)} ${String(Math.round(e.durationSec ?? 0)).padStart(4)} s ${f(e.downloading)} ${f(e.queued)} ${f(e.start)} [${e.slot}] ${f(e.ready)} ${f(e.copied)} |${bar}|`,
    );
  }
  // A slot is idle while a clip that is not yet taken exists (waiting or still downloading) and the
  // slot holds no job; 'b' only counts clips it may take (up to the short lane's 120 s default).
  for (const slot of ['a', 'b'] as const) {
    let busy = 0;
    let idleWithWork = 0;
    let idleTail = 0;
    for (let t = 0; t < end; t += step / 5) {
      const mid = t + step / 10;
      const holds = rows.some(([, e]) => e.slot === slot && e.start! <= mid && mid < e.copied!);
      if (holds) {
        busy += step / 5;
        continue;
      }
      const toCome = rows.some(([, e]) => e.start! > mid && (slot === 'a' || (e.durationSec ?? 0) <= 120));
      if (toCome) idleWithWork += step / 5;
      else idleTail += step / 5;
    }
    console.log(
      `  slot ${slot}: busy ${busy.toFixed(1)} s, idle ${idleWithWork.toFixed(1)} s while clips it may take were still to come, idle ${idleTail.toFixed(1)} s with none left`,
    );
  }
}
