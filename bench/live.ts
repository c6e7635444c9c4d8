/**
 * bench/live: live streams on this machine (not run by the tests).
 *
 *   bun bench/live.ts [--seconds 30] [--streams 1,2,3]
 *
 * Starts the real server (child process, OCR and object analyzers, throw-away data directory) and
 * measures:
 *  1. latency: a pushed 720p stream at 1 fps shows an empty grey scene, then bottles; the time from
 *     pushing the first bottle frame to GET /search finding the `bottle` object segment (goal ≤ 10 s);
 *  2. throughput: 60 frames pushed at once, the frames per second the windows are analysed at
 *     (≈ how many 1 fps streams one server keeps up with);
 *  3. streams at once: N pushed 1 fps 720p streams for `--seconds`, frames dropped and the backlog
 *     left at the end, the server's CPU (user+system seconds per second) and memory growth per stream;
 *  4. disk: a pulled HLS 720p playlist (ffmpeg on 127.0.0.1, libx264 at ~2 Mbit/s) recorded for
 *     `--seconds`; recorded bytes scaled to an hour.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import sharp from 'sharp';
import { resolveBinaries } from '../src/media/binaries';
import { clip } from '../test/helpers';
import { descendants, rssBytes, spawnServer, stopServer } from '../test/hardening/proc';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '30' },
    streams: { type: 'string', default: '1,2,3' },
  },
});
const SECONDS = Number(values.seconds);
const work = mkdtempSync(join(tmpdir(), 'vidq-bench-live-'));
const { ffmpeg } = await resolveBinaries(join(work, 'bin'));

async function run(cmd: string[]): Promise<void> {
  const p = Bun.spawn(cmd, { stdout: 'ignore', stderr: 'pipe' });
  if ((await p.exited) !== 0) throw new Error(`${cmd[0]} failed: ${await new Response(p.stderr).text()}`);
}

// 720p PNG frames of the bottles scene, and an empty grey 720p frame.
await run([
  ffmpeg,
  '-v',
  'error',
  '-i',
  clip('bottles.mp4'),
  '-t',
  '30',
  '-vf',
  'fps=1,scale=1280:720',
  join(work, 'f%02d.png'),
]);
const bottles = readdirSync(work)
  .filter((n) => n.endsWith('.png'))
  .sort()
  .map((n) => readFileSync(join(work, n)).toString('base64'));
const grey = (
  await sharp({ create: { width: 1280, height: 720, channels: 3, background: { r: 128, g: 128, b: 128 } } })
    .png()
    .toBuffer()
).toString('base64');

const dataDir = join(work, 'data');
const srv = await spawnServer(dataDir, [
  '--analyzers',
  'ocr,objects',
  '--analysis-workers',
  '0',
  '--live-max-streams-per-user',
  '64',
  '--live-max-fps-per-user',
  '64',
]);
const tok = srv.token;
const api = async (path: string, init?: RequestInit): Promise<any> => (await fetch(srv.url + path, init)).json();
const post = (path: string, body: unknown) =>
  api(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
await api(`/create-index?token=${tok}&index=bench&type=performance`);
const stream = async (name: string) => (await post('/add-stream', { token: tok, index: 'bench', name })).stream_id;
const push = (id: string, png: string, time: number) => post('/stream', { base64_image: png, stream_id: id, time });
const cpuSec = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) / 100; // utime + stime, in clock ticks of 1/100 s
};
const results: Record<string, unknown> = {};

// 1. latency
{
  const id = await stream('latency');
  const t0 = Math.floor(Date.now() / 1000);
  // Warm-up: the models load on the first window.
  for (let i = 0; i < 8; i++) {
    await push(id, grey, t0 + i);
    await Bun.sleep(1000);
  }
  let found = -1;
  const started = Date.now();
  for (let i = 8; i < 40 && found < 0; i++) {
    await push(id, bottles[(i - 8) % bottles.length]!, t0 + i);
    const r = await api(`/search?token=${tok}&index=bench&q=bottle`);
    if (r.moments?.some((m: { kind: string }) => m.kind === 'object')) found = Date.now() - started;
    else await Bun.sleep(Math.max(0, 1000 - ((Date.now() - started) % 1000)));
  }
  results.latency_event_to_searchable_ms = found;
  await fetch(`${srv.url}/streams/${id}/stop?token=${tok}`, { method: 'POST' });
}

// 2. throughput
{
  const id = await stream('throughput');
  const t0 = Math.floor(Date.now() / 1000);
  const started = Date.now();
  for (let i = 0; i < 60; i++) await push(id, bottles[i % bottles.length]!, t0 + i);
  for (;;) {
    const l = await api(`/streams?token=${tok}`);
    const s = l.find((x: { stream_id: string }) => x.stream_id === id);
    if (s.frames_analysed + s.frames_dropped >= 60) {
      results.throughput_frames_per_sec = Math.round((s.frames_analysed / ((Date.now() - started) / 1000)) * 100) / 100;
      results.throughput_dropped = s.frames_dropped;
      break;
    }
    await Bun.sleep(250);
  }
  await fetch(`${srv.url}/streams/${id}/stop?token=${tok}`, { method: 'POST' });
}

// 3. streams at once
const perN: Record<string, unknown>[] = [];
for (const n of values.streams.split(',').map(Number)) {
  const ids = await Promise.all(Array.from({ length: n }, (_, k) => stream(`many-${n}-${k}`)));
  const cpu0 = cpuSec(srv.pid);
  const rss0 = rssBytes(srv.pid);
  const t0 = Math.floor(Date.now() / 1000);
  const started = Date.now();
  for (let i = 0; i < SECONDS; i++) {
    await Promise.all(ids.map((id) => push(id, bottles[i % bottles.length]!, t0 + i)));
    await Bun.sleep(Math.max(0, started + (i + 1) * 1000 - Date.now()));
  }
  const elapsed = (Date.now() - started) / 1000;
  const cpu = cpuSec(srv.pid) - cpu0;
  const rss = rssBytes(srv.pid);
  await Bun.sleep(3000);
  const l = await api(`/streams?token=${tok}`);
  const mine = l.filter((x: { stream_id: string }) => ids.includes(x.stream_id));
  const analysed = mine.reduce((s: number, x: { frames_analysed: number }) => s + x.frames_analysed, 0);
  const dropped = mine.reduce((s: number, x: { frames_dropped: number }) => s + x.frames_dropped, 0);
  perN.push({
    streams: n,
    frames_sent: n * SECONDS,
    analysed_3s_after: analysed,
    dropped,
    backlog_3s_after: n * SECONDS - analysed - dropped,
    cpu_cores_used: Math.round((cpu / elapsed) * 100) / 100,
    cpu_cores_per_stream: Math.round((cpu / elapsed / n) * 100) / 100,
    rss_mb: Math.round(rss / 1e6),
    rss_growth_mb: Math.round((rss - rss0) / 1e6),
  });
  for (const id of ids) await fetch(`${srv.url}/streams/${id}/stop?token=${tok}`, { method: 'POST' });
  await Bun.sleep(2000);
}
results.streams_at_once = perN;

// 4. disk per hour of recording (a pulled 720p HLS playlist)
{
  const hls = join(work, 'hls');
  mkdirSync(hls);
  const pub = Bun.spawn(
    [
      ffmpeg,
      '-v',
      'error',
      '-re',
      '-stream_loop',
      '-1',
      '-i',
      clip('bottles.mp4'),
      '-an',
      '-vf',
      'scale=1280:720',
      '-c:v',
      'libx264',
      '-preset',
      'veryfast',
      '-b:v',
      '2M',
      '-g',
      '50',
      '-f',
      'hls',
      '-hls_time',
      '2',
      '-hls_list_size',
      '6',
      '-hls_flags',
      'delete_segments+omit_endlist',
      join(hls, 'live.m3u8'),
    ],
    { stdout: 'ignore', stderr: 'ignore' },
  );
  const origin = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (req) => new Response(Bun.file(join(hls, new URL(req.url).pathname.slice(1).replace(/[^\w.-]/g, '')))),
  });
  await Bun.sleep(4000);
  const added = await post('/add-stream', {
    token: tok,
    index: 'bench',
    url: `http://127.0.0.1:${origin.port}/live.m3u8`,
    fps: 1,
  });
  const cpu0 = cpuSec(srv.pid);
  const started = Date.now();
  await Bun.sleep(SECONDS * 1000);
  const elapsed = (Date.now() - started) / 1000;
  const l = await api(`/streams?token=${tok}`);
  const s = l.find((x: { stream_id: string }) => x.stream_id === added.stream_id);
  const dir = join(dataDir, 'media', s.file_id, 'live');
  const bytes = readdirSync(dir).reduce((sum, n) => sum + statSync(join(dir, n)).size, 0);
  const framesDir = join(dataDir, 'media', s.file_id, 'frames');
  const frameBytes = readdirSync(framesDir).reduce((sum, n) => sum + statSync(join(framesDir, n)).size, 0);
  const kids = descendants(srv.pid);
  results.pulled_hls_720p = {
    status: s.status,
    frames_analysed: s.frames_analysed,
    server_cpu_cores: Math.round(((cpuSec(srv.pid) - cpu0) / elapsed) * 100) / 100,
    ffmpeg_rss_mb: Math.round(kids.reduce((sum, k) => sum + (rssBytesSafe(k) ?? 0), 0) / 1e6),
    recording_mb_per_hour: Math.round(((bytes / elapsed) * 3600) / 1e6),
    frames_mb_per_hour: Math.round(((frameBytes / elapsed) * 3600) / 1e6),
  };
  pub.kill('SIGKILL');
  origin.stop(true);
}

function rssBytesSafe(pid: number): number | null {
  try {
    return rssBytes(pid);
  } catch {
    return null;
  }
}

await stopServer(srv);
rmSync(work, { recursive: true, force: true });
console.log(JSON.stringify(results, null, 2));
