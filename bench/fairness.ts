/**
 * bench/fairness: how long a short clip waits when it is added while a long video is analysed,
 * through the real server and its worker processes.
 *
 *   bun bench/fairness.ts [--long-minutes 20] [--analyzers visual] [--short-lane-sec 120]
 *
 * `--short-lane-sec 0` gives the old behaviour (the short clip waits for the long video).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { resolveBinaries } from '../src/media/binaries';
import { startTestServer } from '../test/helpers';

const { values } = parseArgs({
  options: { 'long-minutes': { type: 'string' }, analyzers: { type: 'string' }, 'short-lane-sec': { type: 'string' } },
});
const MEDIA = process.env.VIDQ_TEST_MEDIA ?? resolve(import.meta.dir, '../../shared/media');
const dir = mkdtempSync(join(tmpdir(), 'vidq-fair-bench-'));
const { ffmpeg } = await resolveBinaries(join(dir, 'bin'));
const minutes = Number(values['long-minutes'] ?? 20);
const long = join(dir, 'long.mp4');
// bottles.mp4 is 40 s: repeated without re-encoding.
Bun.spawnSync([
  ffmpeg,
  '-loglevel',
  'error',
  '-y',
  '-stream_loop',
  String(Math.ceil((minutes * 60) / 40) - 1),
  '-i',
  join(MEDIA, 'bottles.mp4'),
  '-c',
  'copy',
  long,
]);
const files: Record<string, string> = { 'long.mp4': long, 'short.mp4': join(MEDIA, 'chaplin-bw.mp4') };
const origin = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  fetch: (req) => new Response(Bun.file(files[new URL(req.url).pathname.slice(1)] ?? '/nonexistent')),
});
// The worker restarts after the long video (--worker-recycle-sec 300): its log says how much it held.
const recycles: string[] = [];
const srv = await startTestServer(
  {
    'analysis-workers': '1',
    analyzers: values.analyzers ?? 'visual',
    'short-lane-sec': values['short-lane-sec'] ?? '120',
    'worker-recycle-sec': '300',
    'log-level': 'info',
  },
  { logSink: (l) => l.includes('give its memory back') && recycles.push(l) },
);
/** VmRSS (MB) of this process's worker children. */
const workerRss = () =>
  [...new Bun.Glob('[0-9]*').scanSync({ cwd: '/proc', onlyFiles: false })].flatMap((pid) => {
    try {
      const st = require('node:fs').readFileSync(`/proc/${pid}/status`, 'utf8') as string;
      if (Number(/PPid:\s+(\d+)/.exec(st)?.[1]) !== process.pid) return [];
      return [Math.round(Number(/VmRSS:\s+(\d+)/.exec(st)?.[1]) / 1024)];
    } catch {
      return [];
    }
  });
const post = (name: string) =>
  fetch(srv.url + '/remote-upload', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ token: srv.token, index: 'b', url: `http://127.0.0.1:${origin.port}/${name}` }),
  }).then((r) => r.json() as Promise<any>);
const list = async () => (await (await fetch(`${srv.url}/index-resources?token=${srv.token}&index=b`)).json()) as any[];
try {
  const longKey = (await post('long.mp4')).data.key;
  while ((await list())[0].stage === 'queued') await Bun.sleep(100);
  const t0 = performance.now();
  const shortKey = (await post('short.mp4')).data.key;
  let shortReady = 0;
  let longReady = 0;
  let firstSeen: any = null;
  while (!shortReady || !longReady) {
    const rows = await list();
    const s = rows.find((r) => r.file_id === shortKey);
    firstSeen ??= s;
    if (!shortReady && s.status === 'ready') shortReady = (performance.now() - t0) / 1000;
    if (!longReady && rows.find((r) => r.file_id === longKey).status === 'ready')
      longReady = (performance.now() - t0) / 1000;
    await Bun.sleep(200);
  }
  await Bun.sleep(3000);
  for (const l of recycles) console.log(`worker before its restart: ${JSON.parse(l).rss_mb} MB`);
  console.log(`worker processes now: ${workerRss().join(', ')} MB`);
  console.log(
    `short lane ${values['short-lane-sec'] ?? '120'} s, long ${minutes} min, analyzers ${values.analyzers ?? 'visual'}: short clip ready after ${shortReady.toFixed(1)} s (first shown as stage ${firstSeen.stage}, place ${firstSeen.queue_position ?? '-'}, eta ${firstSeen.eta_sec ?? '-'} s); long ready after ${longReady.toFixed(1)} s`,
  );
} finally {
  await srv.stop();
  origin.stop();
  rmSync(dir, { recursive: true, force: true });
}
