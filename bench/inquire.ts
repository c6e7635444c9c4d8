/**
 * bench/inquire: latency of POST /inquire (the composed answer, no generative model) as the index
 * grows from 1 h to 100 h of indexed video, through the real HTTP server in its own process.
 *
 *   bun bench/inquire.ts [--sizes 1,10,100] [--n 200] [--concurrency 1,8,32] [--rebuild] [--dump FILE] [--only-build]
 *                        [--cache DIR] [--recall-sample K] [--server-cpu-prof DIR] [--live-streams N]
 *
 * The data (cached in $TMPDIR/vidq-bench-inquire-v2/, reused by later runs; --rebuild starts over):
 *  - base/: the real clips of ../shared/media that bench/quality uses, uploaded through the API
 *    and analysed by the real pipeline (the default offline analyzers).
 *  - h1/, h10/, h100/: cumulative copies of base/ (each larger one holds the smaller one's videos
 *    and more) whose one index also holds synthetic videos up to 1, 10 and 100 hours in all. Each
 *    size is its own data directory (database, FTS index), as a deployment with that much video.
 * Synthetic videos look like real analysis output at real densities per hour: shots every ~5-20 s,
 *  sampled frames every 5 s within a shot, object spans built from simulated per-frame detections
 *  exactly as the objects stage builds them (COCO labels by scene theme; `extra` {label, max_count,
 *  counts, best_t, boxes}), OCR tracks with plausible on-screen text, VAD speech spans and
 *  transcript sentences, and a USE-lite embedding for every segment. Embedding 100 h of segments
 *  is too slow here, so a pool of ~3,000 distinct texts is embedded once (cached beside the data):
 *  object, OCR and speech segments get the vector of their exact sentence (identical texts share a
 *  vector, as in real analysis); a transcript sentence is two pool clauses and gets the normalised
 *  sum of their vectors; a shot gets a pool vector of its "scene change" sentence plus small noise
 *  (so neither is a duplicate that a cache could fold away when the real vectors would differ).
 *
 * Vectors are stored as the embeddings stage stores them (src/search/vectors.ts: int8, each distinct
 * vector of a video once), and every synthetic video is marked as embedded by the built-in encoder,
 * as a real one is (before v2 it was not, so questions never compared the synthetic videos' vectors).
 * Before measuring a size, the ANN index of the media index is built in the bench's process (timed),
 * as the server builds it on first use; the float32 originals are kept beside the
 * data (float32.bin) to measure recall@10 of the compact store + ANN search against exact float32
 * search, printed with the database size per indexed hour.
 *
 * --recall-sample K measures that recall on K of the questions (0: skips it, and the in-process build;
 * the step takes minutes at 1,000 h), for quicker runs while iterating.
 *
 * Then, per size: starts `vidq serve` on the data directory, waits until its search index (built at
 * start-up, in the background) is ready (GET /health `search_index.ready`; printed: how long the
 * build took), so that what is measured is the steady state, warms up (every question twice), asks
 * a fixed seeded sequence of N questions of every type (counting, when, written, said, which video,
 * summary, what object, not found; with and without target and target_video), one at a time, and
 * prints p50/p95/p99/mean per size and per question type, the first request (cold: it loads the
 * embedding model and every video's vectors), and the server's RSS; GET /search with the same
 * texts, one at a time; and with --concurrency, throughput and p50/p95 with N clients at once. --dump writes every question's answer and evidence per size (to compare versions).
 *
 * --live-streams N: the server runs with one analysis worker, and N pushed live streams of the
 * same user (1 fps each, frames of bottles.mp4 sent by this process once a second, analysed by the
 * default analyzers) run from before the warm-up to the end of the measurement: what /inquire
 * costs while cameras are watched. Printed: the server's CPU seconds (user+system) during the
 * timed questions, and each stream's frames analysed and dropped.
 */
import {
  closeSync,
  readSync,
  cpSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { UseEmbedder } from '../src/analysis/engines/embedder';
import { RetrievalCore } from '../src/search/retrieval';
import { openDatabase } from '../src/storage/db';
import { sqliteCatalog } from '../src/storage/catalog';
import { videos } from '../src/storage/schema';
import { QUESTIONS, type Question } from './inquire-questions';
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
    sizes: { type: 'string' },
    n: { type: 'string' },
    rebuild: { type: 'boolean' },
    dump: { type: 'string' },
    'only-build': { type: 'boolean' },
    concurrency: { type: 'string' },
    cache: { type: 'string' },
    'recall-sample': { type: 'string' },
    'server-cpu-prof': { type: 'string' },
    'live-streams': { type: 'string' },
  },
});
const LIVE_STREAMS = Number(values['live-streams'] ?? 0);
const SIZES = (values.sizes ?? '1,10,100')
  .split(',')
  .map(Number)
  .sort((a, b) => a - b);
const N = Number(values.n ?? 200);
const ROOT = values.cache ?? DEFAULT_ROOT;
/** Questions the compact store's recall@10 is measured on (all of them by default; 0 skips the step). */
const RECALL_SAMPLE = values['recall-sample'] === undefined ? Infinity : Number(values['recall-sample']);
const LEVELS = (values.concurrency ?? '').split(',').filter(Boolean).map(Number);

if (values.rebuild) rmSync(ROOT, { recursive: true, force: true });
mkdirSync(ROOT, { recursive: true });

// ---- running the server and asking ----------------------------------------------------------

async function serve(dir: string): Promise<{ url: string; pid: number; stop: () => Promise<void> }> {
  const prof = values['server-cpu-prof'];
  const proc = Bun.spawn(
    [
      process.execPath,
      // The server's CPU profile (markdown, written when it stops), to see where a question's time goes.
      ...(prof ? ['--cpu-prof-md', `--cpu-prof-dir=${prof}`] : []),
      join(import.meta.dir, '../src/main.ts'),
      'serve',
      '--data-dir',
      dir,
      '--host',
      '127.0.0.1',
      '--port',
      '0',
      '--analysis-workers',
      // Live windows are analysed in a worker (a server without one analyses them itself).
      LIVE_STREAMS > 0 ? '1' : '0',
      '--log-level',
      'warn',
      '--min-free-bytes',
      '0',
    ],
    { stdout: 'pipe', stderr: 'inherit' },
  );
  const reader = proc.stdout.getReader();
  let text = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the server exited: ${text}`);
    text += new TextDecoder().decode(value);
    const m = /listening on (http:\/\/\S+)/.exec(text);
    if (m) {
      void (async () => {
        while (!(await reader.read()).done);
      })();
      return {
        url: m[1]!,
        pid: proc.pid,
        stop: async () => {
          proc.kill('SIGTERM');
          await proc.exited;
        },
      };
    }
  }
}

function rssOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
};
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

interface SizeResult {
  hours: number;
  all: number[];
  byType: Map<string, number[]>;
  first: number;
  rss: { rss: number; peak: number };
  load: [number, number];
  answers: unknown[];
  search: number[];
  levels: LevelResult[];
}

interface LevelResult {
  clients: number;
  perSecond: number;
  p50: number;
  p95: number;
}

/**
 * Builds (or brings up to date) the ANN index of the bench index, as the server does on first use,
 * and measures the compact store: recall@10 of its search against exact float32 search over the
 * synthetic videos' original vectors, for the bench's questions; and the bytes per indexed hour.
 */
async function compactStore(dir: string, base: BaseInfo, hours: number): Promise<void> {
  if (RECALL_SAMPLE <= 0) {
    const bytes = statSync(join(dir, 'vidq.db')).size;
    console.log(
      `  compact store at ${hours} h: recall not measured (--recall-sample 0); database ${(bytes / 1e6).toFixed(0)} MB = ${(bytes / 1e6 / hours).toFixed(2)} MB per indexed hour`,
    );
    return;
  }
  const db = openDatabase(join(dir, 'vidq.db'));
  const embedder = new UseEmbedder();
  const core = new RetrievalCore({ catalog: sqliteCatalog(db), embedder, dataDir: dir });
  const all = db
    .select()
    .from(videos)
    .all()
    .filter((v) => v.indexId === base.indexId);
  // A saved search index (search-index/, from an earlier run or server start) is read, not rebuilt.
  const saved = existsSync(join(dir, 'search-index'));
  let t0 = performance.now();
  await core.prepare(all);
  core.flush();
  const annSec = (performance.now() - t0) / 1000;
  const synthetic = all.filter((v) => v.sourceUrl.startsWith('synthetic:'));
  const every = [...new Set(QUESTIONS.map((q) => q.prompt))];
  // An even sample of the questions when --recall-sample is given.
  const take = Math.min(every.length, RECALL_SAMPLE);
  const prompts = Array.from({ length: take }, (_, i) => every[Math.floor((i * every.length) / take)]!);
  const queries = await embedder.embed(prompts);
  // What the compact store finds: through the ANN index (timed) and by exact int8 search.
  let searchMs = 0;
  const found: [number, number][][] = [];
  const exactFound: [number, number][][] = [];
  for (const q of queries) {
    t0 = performance.now();
    found.push(await core.vectors.nearest(synthetic, q, 10));
    searchMs += performance.now() - t0;
    exactFound.push(await core.vectors.exact(synthetic, q, 10));
  }
  // The float32 originals ([id (float64), 512 float32] records), read a slice at a time (holding
  // them all took gigabytes at 1,000 h): each question's exact 10th best cosine, and the cosines of
  // the vectors found.
  const rec = 8 + 512 * 4;
  const fd = openSync(join(dir, 'float32.bin'), 'r');
  const chunk = 8_192;
  const buf = Buffer.alloc(chunk * rec);
  const wanted = new Set([...found, ...exactFound].flat().map(([id]) => id));
  const cosOf = queries.map(() => new Map<number, number>());
  const best = queries.map((): number[] => []);
  const v = new Float32Array(512);
  let n = 0;
  for (;;) {
    const got = readSync(fd, buf, 0, buf.byteLength, n * rec);
    const rows = Math.floor(got / rec);
    if (rows === 0) break;
    for (let r = 0; r < rows; r++) {
      const at = buf.byteOffset + r * rec;
      const id = new Float64Array(buf.buffer.slice(at, at + 8))[0]!;
      v.set(new Float32Array(buf.buffer.slice(at + 8, at + rec)));
      let len = 0;
      for (let k = 0; k < 512; k++) len += v[k]! * v[k]!;
      len = Math.sqrt(len) || 1;
      queries.forEach((q, i) => {
        let d = 0;
        for (let k = 0; k < 512; k++) d += q[k]! * v[k]!;
        const c = d / len;
        if (wanted.has(id)) cosOf[i]!.set(id, c);
        const b = best[i]!;
        if (b.length === 10 && c <= b[9]!) return;
        let p = b.length;
        while (p > 0 && b[p - 1]! < c) p--;
        b.splice(p, 0, c);
        if (b.length > 10) b.pop();
      });
    }
    n += rows;
  }
  closeSync(fd);
  let hits = 0;
  let near = 0;
  let exactInt8 = 0;
  const asked = queries.length * 10;
  queries.forEach((_, i) => {
    const kth = best[i]![9]!;
    const cos = cosOf[i]!;
    // Tie-aware: a vector as close as the exact 10th counts (the pool repeats vectors across videos).
    hits += found[i]!.filter(([id]) => cos.has(id) && cos.get(id)! >= kth - 1e-5).length;
    // Within 0.01 of the 10th (below the int8 rounding and far below what tells relevant from not).
    near += found[i]!.filter(([id]) => cos.has(id) && cos.get(id)! >= kth - 0.01).length;
    exactInt8 += exactFound[i]!.filter(([id]) => cos.has(id) && cos.get(id)! >= kth - 1e-5).length;
  });
  const bytes = statSync(join(dir, 'vidq.db')).size;
  console.log(
    `  compact store at ${hours} h: ${n} distinct synthetic vectors; recall@10 vs exact float32 search over ${queries.length} questions: int8 exact ${(exactInt8 / asked).toFixed(3)}, int8 + ANN ${(hits / asked).toFixed(3)} (${(near / asked).toFixed(3)} counting those within 0.01 of the 10th); database ${(bytes / 1e6).toFixed(0)} MB = ${(bytes / 1e6 / hours).toFixed(2)} MB per indexed hour; ANN (IVF) build ${annSec.toFixed(1)} s (${saved ? 'read back from its saved lists' : 'lists chosen and saved'}), search ${(searchMs / queries.length).toFixed(1)} ms per question`,
  );
  await embedder.close?.();
  db.$client.close();
}

async function measure(sizeDir: string, base: BaseInfo, size: SizeInfo): Promise<SizeResult> {
  // Live streams write into the data directory (and are resumed by the next server): they run on
  // a throwaway copy, so that every run starts from the same data.
  const dir = LIVE_STREAMS > 0 ? `${sizeDir}.live-run` : sizeDir;
  if (dir !== sizeDir) {
    rmSync(dir, { recursive: true, force: true });
    cpSync(sizeDir, dir, { recursive: true });
  }
  const server = await serve(dir);
  // The steady state: the server builds its search index at start-up, in the background (until
  // then, questions search every vector exactly); measuring before it is ready measures the build.
  const waited = performance.now();
  let health: { search_index?: { ready: boolean; build_ms: number | null } } = {};
  for (;;) {
    health = (await (await fetch(`${server.url}/health`)).json()) as typeof health;
    if (health.search_index?.ready !== false) break;
    await Bun.sleep(500);
  }
  console.log(
    `  ${size.hours.toFixed(0)} h: search index ready after ${((performance.now() - waited) / 1000).toFixed(1)} s (server's start-up build ${health.search_index?.build_ms != null ? `${(health.search_index.build_ms / 1000).toFixed(1)} s` : 'not needed'}; load ${loadavg()[0]!.toFixed(2)})`,
  );
  const load0 = loadavg()[0]!;
  const bodyOf = (q: Question) => inquireBody(q, base, size);
  const ask = async (q: Question): Promise<{ ms: number; body: any }> => {
    const t0 = performance.now();
    const res = await fetch(`${server.url}/inquire`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: bodyOf(q),
    });
    const body = await res.json();
    const ms = performance.now() - t0;
    if (res.status !== 200) throw new Error(`${q.prompt}: HTTP ${res.status} ${JSON.stringify(body)}`);
    return { ms, body };
  };
  let live: Awaited<ReturnType<typeof startLiveStreams>> | null = null;
  try {
    if (LIVE_STREAMS > 0) live = await startLiveStreams(server.url, base.token, LIVE_STREAMS);
    // Warm-up. The first question (index-wide, by meaning) loads the embedding model and every
    // video's vectors: the cold start, reported as "first".
    const first = (await ask(QUESTIONS.find((q) => q.type === 'general')!)).ms;
    const answers: unknown[] = [];
    for (const q of QUESTIONS) {
      const { body } = await ask(q);
      answers.push({
        ...q,
        output: body.output,
        evidence: body.evidence.map((e: any) => ({
          ...e,
          frame_url: e.frame_url ? new URL(e.frame_url).pathname : null,
        })),
      });
    }
    for (const q of QUESTIONS) await ask(q);
    const rng = rngOf(SEED + 1);
    const all: number[] = [];
    const byType = new Map<string, number[]>();
    const cpu0 = cpuSecondsOf(server.pid);
    const timed0 = performance.now();
    for (let i = 0; i < N; i++) {
      const q = QUESTIONS[Math.floor(rng.next() * QUESTIONS.length)]!;
      const { ms } = await ask(q);
      all.push(ms);
      byType.set(q.type, [...(byType.get(q.type) ?? []), ms]);
    }
    const timedSec = (performance.now() - timed0) / 1000;
    console.log(
      `  timed questions: ${timedSec.toFixed(1)} s wall, server CPU ${(cpuSecondsOf(server.pid) - cpu0).toFixed(1)} s (user+system); load ${loadavg()[0]!.toFixed(2)}`,
    );
    if (live) console.log(`  live streams: ${JSON.stringify(await live.stats())}`);
    // GET /search with the same texts, on the same retrieval core.
    const search: number[] = [];
    for (let i = 0; i < N / 2; i++) {
      const q = QUESTIONS[Math.floor(rng.next() * QUESTIONS.length)]!;
      const t0 = performance.now();
      const res = await fetch(
        `${server.url}/search?${new URLSearchParams({ token: base.token, index: base.indexId, q: q.prompt })}`,
      );
      await res.json();
      if (res.status !== 200) throw new Error(`/search ${q.prompt}: HTTP ${res.status}`);
      search.push(performance.now() - t0);
    }
    // N clients at once, each asking the next question of one seeded sequence.
    const levels: LevelResult[] = [];
    for (const clients of LEVELS) {
      const seq = rngOf(SEED + clients);
      const order = Array.from({ length: N }, () => QUESTIONS[Math.floor(seq.next() * QUESTIONS.length)]!);
      const times: number[] = [];
      let next = 0;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: clients }, async () => {
          while (next < order.length) times.push((await ask(order[next++]!)).ms);
        }),
      );
      const wall = (performance.now() - t0) / 1000;
      levels.push({ clients, perSecond: order.length / wall, p50: pct(times, 50), p95: pct(times, 95) });
    }
    return {
      hours: size.hours,
      all,
      byType,
      first,
      rss: rssOf(server.pid),
      load: [load0, loadavg()[0]!],
      answers,
      search,
      levels,
    };
  } finally {
    live?.stop();
    await server.stop();
    if (dir !== sizeDir) rmSync(dir, { recursive: true, force: true });
  }
}

/** User+system CPU seconds of a process so far (Linux /proc). */
function cpuSecondsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * N pushed live streams at 1 fps (frames of bottles.mp4, 640×360 PNG), running until stopped; they
 * are live (a few windows analysed each) before this returns.
 */
async function startLiveStreams(
  url: string,
  token: string,
  n: number,
): Promise<{ stop: () => void; stats: () => Promise<unknown> }> {
  const dir = join(ROOT, 'live-frames');
  if (!existsSync(join(dir, 'f10.png'))) {
    mkdirSync(dir, { recursive: true });
    const ffmpeg = Bun.which('ffmpeg') ?? join(import.meta.dir, '../node_modules/@ffmpeg-installer/linux-x64/ffmpeg');
    const p = Bun.spawnSync([
      ffmpeg,
      '-v',
      'error',
      '-y',
      '-i',
      join(MEDIA, 'bottles.mp4'),
      '-t',
      '10',
      '-vf',
      'fps=1',
      join(dir, 'f%02d.png'),
    ]);
    if (p.exitCode !== 0) throw new Error(`ffmpeg: ${p.stderr.toString()}`);
  }
  const pngs = Array.from({ length: 10 }, (_, i) =>
    readFileSync(join(dir, `f${String(i + 1).padStart(2, '0')}.png`)).toString('base64'),
  );
  const post = async (path: string, body: unknown) =>
    (
      await fetch(url + path, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    ).json() as Promise<any>;
  await fetch(`${url}/create-index?token=${token}&index=bench-live&type=performance`);
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = await post('/add-stream', { token, index: 'bench-live', fps: 1, name: `camera ${i + 1}` });
    if (r.status !== 'success') throw new Error(`add-stream: ${JSON.stringify(r)}`);
    ids.push(r.stream_id);
  }
  let k = 0;
  const timer = setInterval(() => {
    const time = Date.now() / 1000;
    const png = pngs[k++ % pngs.length]!;
    for (const id of ids) void post('/stream', { base64_image: png, stream_id: id, time }).catch(() => {});
  }, 1000);
  const stats = async () =>
    ((await (await fetch(`${url}/streams?token=${token}&index=bench-live`)).json()) as any[]).map((s) => ({
      analysed: s.frames_analysed,
      dropped: s.frames_dropped,
    }));
  const t0 = performance.now();
  while (!(await stats()).every((s: any) => s.analysed >= 3)) {
    if (performance.now() - t0 > 180_000)
      throw new Error(`the live streams did not go live: ${JSON.stringify(await stats())}`);
    await Bun.sleep(1000);
  }
  console.log(
    `  ${n} live streams at 1 fps analysed (${((performance.now() - t0) / 1000).toFixed(0)} s to their first windows)`,
  );
  return { stop: () => clearInterval(timer), stats };
}

// ---- main -----------------------------------------------------------------------------------

const built = await buildSizes(ROOT, SIZES);
const base = built.base;
const sizes = built.sizes;
for (const s of sizes) await compactStore(s.dir, base, s.info.hours);
if (values['only-build']) process.exit(0);

console.log(
  `\nPOST /inquire, composed answers, ${N} requests per size one at a time after a warm-up; ${navigator.hardwareConcurrency} cores`,
);
const results: SizeResult[] = [];
for (const s of sizes) {
  const r = await measure(s.dir, base, s.info);
  results.push(r);
  const segs = Object.values(s.info.segments).reduce((a, b) => a + b, 0);
  console.log(
    `${`${r.hours.toFixed(1)} h`.padStart(7)}  ${String(s.info.videos).padStart(4)} videos ${String(segs).padStart(7)} segments   p50 ${pct(r.all, 50).toFixed(0).padStart(5)} ms  p95 ${pct(r.all, 95).toFixed(0).padStart(5)} ms  p99 ${pct(r.all, 99).toFixed(0).padStart(5)} ms  mean ${mean(r.all).toFixed(0).padStart(5)} ms  first ${r.first.toFixed(0).padStart(5)} ms  server RSS ${r.rss.rss.toFixed(0)} MB (peak ${r.rss.peak.toFixed(0)})  load ${r.load[0].toFixed(2)}→${r.load[1].toFixed(2)}`,
  );
}
const types = [...new Set(QUESTIONS.map((q) => q.type))];
console.log(`\np50 / p95 ms by question type`);
console.log(`${'type'.padEnd(12)} ${results.map((r) => `${r.hours.toFixed(0)} h`.padStart(13)).join(' ')}`);
for (const t of types)
  console.log(
    `${t.padEnd(12)} ${results.map((r) => (r.byType.get(t) ? `${pct(r.byType.get(t)!, 50).toFixed(0)} / ${pct(r.byType.get(t)!, 95).toFixed(0)}` : '-').padStart(13)).join(' ')}`,
  );
console.log(`\nGET /search (same texts, one at a time)`);
for (const r of results)
  console.log(
    `${`${r.hours.toFixed(1)} h`.padStart(7)}  p50 ${pct(r.search, 50).toFixed(0).padStart(5)} ms  p95 ${pct(r.search, 95).toFixed(0).padStart(5)} ms`,
  );
if (LEVELS.length) {
  console.log(`\nPOST /inquire with N clients at once (${N} questions per level)`);
  for (const r of results)
    for (const l of r.levels)
      console.log(
        `${`${r.hours.toFixed(1)} h`.padStart(7)}  N=${String(l.clients).padEnd(3)} ${l.perSecond.toFixed(1).padStart(6)} questions/s  p50 ${l.p50.toFixed(0).padStart(5)} ms  p95 ${l.p95.toFixed(0).padStart(5)} ms`,
      );
}
const last = results.at(-1)!;
console.log(`\np95 at ${last.hours.toFixed(0)} h: ${pct(last.all, 95).toFixed(0)} ms (target < 300 ms)`);
if (values.dump)
  writeFileSync(
    values.dump,
    JSON.stringify(Object.fromEntries(results.map((r) => [`${r.hours.toFixed(1)}h`, r.answers])), null, 1),
  );
