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
 * - the load average of the machine before and after (the figures mean little on a busy machine).
 *
 * The only options given to the server are those that make a local bench possible (a loopback
 * port, fetching from the loopback origin this script serves, a quiet log, no free-space floor).
 * `--quick` adds `--worker-idle-release-sec 5` and waits 15 s afterwards instead of two minutes:
 * for trying changes, not for the figures.
 */
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

try {
  const t0 = performance.now();
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
  console.log(
    `load average (1, 5, 15 min): ${loadBefore} before, ${loadAtEnd} when all were ready, ${load()} at the end; ${navigator.hardwareConcurrency} cores`,
  );
} finally {
  sampling = false;
  await stopServer(server);
  origin.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
