/**
 * bench/soak: memory of a long-running server under mixed traffic (not run by the tests).
 *
 *   bun bench/soak.ts [--seconds 600] [--sample 5] [--workers 1] [--max-slope 1]
 *
 * Starts the real server as a child process (`src/main.ts serve`, 127.0.0.1, throw-away data
 * directory, analysis workers as given) and a local origin serving the shared clips, then for
 * `--seconds` keeps up a bounded mix:
 *   - uploads, one at a time, cycling through short clips and three indexes; an index keeps at most
 *     three videos (the oldest is removed with POST /remove-from-index), so the data stays bounded
 *     and what is measured is the server, not a growing index;
 *   - questions from 4 concurrent clients (POST /inquire, rotating prompts);
 *   - listings (GET /indexes, GET /index-resources) from 2 clients.
 * Every `--sample` seconds it reads VmRSS of the server (and of its worker processes) from /proc.
 * At the end it prints the series, the request counts and errors, and the slope of a least-squares
 * line through the server's RSS after the first fifth (warm-up: models and caches load), in MB per
 * minute, and the medians of the first and last third. Exits 1 when a request failed, or, on runs
 * of 5 minutes or more (shorter ones are too noisy: GC swings RSS by tens of MB), when that slope
 * exceeds `--max-slope` MB/min.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { getJson, postJson, startOrigin } from '../test/helpers';
import { descendants, percentile, rssBytes, spawnServer, stopServer } from '../test/hardening/proc';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: process.env.VIDQ_SOAK_SECONDS ?? '600' },
    sample: { type: 'string', default: '5' },
    workers: { type: 'string', default: '1' },
    'max-slope': { type: 'string', default: '1' },
  },
});
const SECONDS = Number(values.seconds);
const SAMPLE_MS = Number(values.sample) * 1000;
const MAX_SLOPE = Number(values['max-slope']);
// Seven clips over three indexes (coprime): every index sees every clip in turn, so uploads keep
// adding videos, removals keep taking the oldest, and the worker keeps analysing new ones.
const CLIPS = [
  'chaplin-bw.mp4',
  'countdown-living-room.mp4',
  'pancake.mkv',
  'talking-head.mp4',
  'speech-over-bottles.mp4',
  'smpte-timecode-1080p.mp4',
  'bottles.mp4',
];
const PROMPTS = [
  'What is written on screen?',
  'Who is in the video?',
  'How many people are there?',
  'When does the countdown start?',
  'What happens in the kitchen?',
  'what is said?',
  'Describe the scene',
  'Is there a dog?',
];
const MB = 1024 * 1024;

const origin = startOrigin();
const dir = mkdtempSync(join(tmpdir(), 'vidq-soak-'));
const s = await spawnServer(dir, ['--analysis-workers', values.workers!]);
const t0 = performance.now();
const end = t0 + SECONDS * 1000;
const counts = { uploads: 0, removals: 0, questions: 0, listings: 0 };
const errors: string[] = [];
const lat: Record<'upload' | 'question' | 'listing', number[]> = { upload: [], question: [], listing: [] };
const note = (what: string, status: number, body: unknown) => {
  if (errors.length < 20) errors.push(`${what}: ${status} ${JSON.stringify(body).slice(0, 160)}`);
};
const timed = async <T>(bucket: keyof typeof lat, fn: () => Promise<T>): Promise<T> => {
  const t = performance.now();
  try {
    return await fn();
  } finally {
    // Keep the latency lists bounded too.
    if (lat[bucket].length < 200_000) lat[bucket].push(performance.now() - t);
  }
};

console.log(`soak: ${SECONDS} s against ${s.url} (pid ${s.pid}, data ${dir}), RSS every ${SAMPLE_MS / 1000} s`);

async function uploads() {
  const kept: string[][] = [[], [], []];
  for (let i = 0; performance.now() < end; i++) {
    const slot = i % 3;
    const r = await timed('upload', () =>
      postJson(s.url, '/remote-upload', {
        token: s.token,
        index: `soak-${slot}`,
        url: `${origin.url}/media/${CLIPS[i % CLIPS.length]}`,
      }),
    );
    if (r.status !== 200) {
      note('upload', r.status, r.body);
      continue;
    }
    counts.uploads++;
    if (!kept[slot]!.includes(r.body.data.key)) kept[slot]!.push(r.body.data.key);
    if (kept[slot]!.length > 3) {
      const victim = kept[slot]!.shift()!;
      const idx = ((await getJson(s.url, `/indexes?token=${s.token}`)).body as any[]).find(
        (x) => x.name === `soak-${slot}`,
      );
      const rm = await postJson(s.url, '/remove-from-index', {
        token: s.token,
        project_id: idx.index_id,
        video_id: victim,
      });
      if (rm.status === 200) counts.removals++;
      else note('remove', rm.status, rm.body);
    }
    await Bun.sleep(500);
  }
}

async function questions(client: number) {
  for (let i = 0; performance.now() < end; i++) {
    const list = (await getJson(s.url, `/indexes?token=${s.token}`)).body as any[];
    const idx = list[(client + i) % Math.max(1, list.length)];
    if (!idx) {
      await Bun.sleep(200);
      continue;
    }
    const r = await timed('question', () =>
      postJson(s.url, '/inquire', {
        token: s.token,
        index: idx.index_id,
        prompt: PROMPTS[(client + i) % PROMPTS.length]!,
      }),
    );
    if (r.status === 200) counts.questions++;
    else note('inquire', r.status, r.body);
    await Bun.sleep(50);
  }
}

async function listings(client: number) {
  for (let i = 0; performance.now() < end; i++) {
    const r = await timed('listing', () =>
      i % 2
        ? getJson(s.url, `/indexes?token=${s.token}&include_deleted=true`)
        : getJson(s.url, `/index-resources?token=${s.token}&index=soak-${(client + i) % 3}`),
    );
    if (r.status === 200 || r.status === 404) counts.listings++;
    else note('listing', r.status, r.body);
    await Bun.sleep(100);
  }
}

const samples: { t: number; server: number; workers: number }[] = [];
async function sampler() {
  while (performance.now() < end) {
    const kids = descendants(s.pid);
    let workers = 0;
    for (const k of kids) {
      try {
        const r = rssBytes(k);
        if (Number.isFinite(r)) workers += r; // an exiting process has no VmRSS any more
      } catch {
        /* exited */
      }
    }
    samples.push({ t: (performance.now() - t0) / 1000, server: rssBytes(s.pid), workers });
    const last = samples.at(-1)!;
    console.log(
      `  t=${last.t.toFixed(0).padStart(4)} s  server ${(last.server / MB).toFixed(1).padStart(7)} MB  workers ${(last.workers / MB).toFixed(1).padStart(7)} MB  (${counts.uploads} uploads, ${counts.questions} questions, ${counts.listings} listings)`,
    );
    await Bun.sleep(SAMPLE_MS);
  }
}

await Promise.all([
  uploads(),
  questions(0),
  questions(1),
  questions(2),
  questions(3),
  listings(0),
  listings(1),
  sampler(),
]);
await stopServer(s);
origin.stop();
rmSync(dir, { recursive: true, force: true });

/** Least-squares slope of y over x. */
function slope(xs: number[], ys: number[]): number {
  const n = xs.length;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (xs[i]! - mx) * (ys[i]! - my);
    den += (xs[i]! - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

const steady = samples.filter((x) => x.t >= SECONDS / 5);
const perMin = (key: 'server' | 'workers') =>
  slope(
    steady.map((x) => x.t / 60),
    steady.map((x) => x[key] / MB),
  );
const serverSlope = perMin('server');
const first = steady[0];
const last = samples.at(-1)!;
const q = (xs: number[]) => `p50 ${percentile(xs, 50).toFixed(1)} ms, p99 ${percentile(xs, 99).toFixed(1)} ms`;
console.log(
  `\nRSS series (s:MB server/workers): ${samples.map((x) => `${x.t.toFixed(0)}:${(x.server / MB).toFixed(0)}/${(x.workers / MB).toFixed(0)}`).join(' ')}`,
);
console.log(
  `requests: ${JSON.stringify(counts)}; uploads ${q(lat.upload)}; questions ${q(lat.question)}; listings ${q(lat.listing)}`,
);
console.log(
  `server RSS: ${first ? (first.server / MB).toFixed(1) : '?'} MB after warm-up → ${(last.server / MB).toFixed(1)} MB at the end, peak ${(Math.max(...samples.map((x) => x.server)) / MB).toFixed(1)} MB; slope after warm-up ${serverSlope.toFixed(2)} MB/min (limit ${MAX_SLOPE})`,
);
console.log(
  `worker RSS slope after warm-up ${perMin('workers').toFixed(2)} MB/min (restarted workers and model loads make it noisier)`,
);
if (errors.length) console.log(`errors:\n  ${errors.join('\n  ')}`);
// Garbage collection swings the RSS by tens of MB; below five minutes a slope says little.
const median = (xs: number[]) => percentile(xs, 50);
const third = Math.max(1, Math.floor(steady.length / 3));
const early = median(steady.slice(0, third).map((x) => x.server / MB));
const late = median(steady.slice(-third).map((x) => x.server / MB));
console.log(
  `server RSS median of the first third after warm-up ${early.toFixed(1)} MB, of the last third ${late.toFixed(1)} MB`,
);
const judged = SECONDS >= 300 && steady.length >= 10;
const ok = errors.length === 0 && (!judged || serverSlope <= MAX_SLOPE);
console.log(
  errors.length
    ? 'FAILED: requests failed'
    : !judged
      ? 'indicative only: run 5 minutes or more to judge the slope'
      : ok
        ? 'memory is flat'
        : `FAILED: memory grows ${serverSlope.toFixed(2)} MB/min`,
);
process.exit(ok ? 0 : 1);
