/**
 * bench/ingest: how fast videos are indexed with the default offline analyzers, against the floor
 * of a bare ffmpeg decode of the same files, on this machine.
 *
 *   bun bench/ingest.ts [--analyzers visual,ocr,...] [--long-minutes 10] [--skip-long] [--effort balanced]
 *                       [--findings FILE] [--dump DIR] [--static-minutes 10]
 *   bun bench/ingest.ts --timeline talking-head.mp4
 *
 * Runs the real pipeline (the same code as the worker process) over every video clip in
 * ../shared/media and over a long clip concatenated from them (re-encoded once to a common format,
 * cached in the temp directory). Prints per clip: duration, decode floor, analysis time, the
 * real-time ratio, and the time share of each analyzer; and the peak RSS of the process.
 *
 * `--timeline <clip>` indexes that one clip twice (cold: the first video of a process, which loads
 * the models, as a fresh worker does; then warm) and prints where its time goes: every child
 * process (with its own CPU time), the probe, each stage, the database writes and the playback
 * copy, with the CPU time of this process (all its threads). On a shared machine the CPU times are
 * the steadier figures.
 */
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { asc, eq } from 'drizzle-orm';
import { createAnalyzers } from '../src/analysis';
import { Limiter, modelLimitPerWorker } from '../src/analysis/engines/model-server/client';
import { runJob } from '../src/analysis/pipeline';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/log';
import { resolveBinaries } from '../src/media/binaries';
import { probeFile } from '../src/media/probe';
import { notePlaybackPending, playbackStep, startPlaybackCopy } from '../src/jobs/playback-step';
import { createService } from '../src/service';
import { frames, personAppearances, segments, videos } from '../src/storage/schema';

const { values } = parseArgs({
  options: {
    analyzers: { type: 'string' },
    'long-minutes': { type: 'string' },
    'skip-long': { type: 'boolean' },
    only: { type: 'string' },
    file: { type: 'string' },
    timeline: { type: 'string' },
    findings: { type: 'string' },
    dump: { type: 'string' },
    'static-minutes': { type: 'string' },
    effort: { type: 'string' },
  },
});
const MEDIA = process.env.VIDQ_TEST_MEDIA ?? resolve(import.meta.dir, '../../shared/media');
const dataDir = mkdtempSync(join(tmpdir(), 'vidq-bench-'));
// VIDQ_* environment variables apply (e.g. VIDQ_FRAME_INTERVAL_SEC), so settings can be compared.
const config = loadConfig(
  {
    'data-dir': dataDir,
    'log-level': 'error',
    'min-free-bytes': '0',
    ...(values.analyzers ? { analyzers: values.analyzers } : {}),
    ...(values.effort ? { 'analysis-effort': values.effort } : {}),
  },
  process.env,
);
const s = await createService(config, createLogger('error'));
const { ffmpeg, ffprobe } = await resolveBinaries(s.files.binDir);
const analyzers = createAnalyzers(config, {
  modelLimiter: new Limiter(modelLimitPerWorker(config.modelConcurrency, config.analysisWorkers)),
});
const { user } = await s.accounts.createUser('bench', null);
const { index } = await s.indexes.findOrCreateByName(s.catalog, user, 'bench');

/** --timeline: what happened while one clip was indexed (times in ms from the clip's start). */
interface TimelineEvent {
  start: number;
  end: number;
  cpuMs?: number;
  what: string;
}
let timeline: TimelineEvent[] | null = null;
let timelineT0 = 0;
const since = () => performance.now() - timelineT0;
/** Records `fn` as one event of the timeline when one is being recorded. */
async function timed<T>(what: string, fn: () => Promise<T> | T): Promise<T> {
  if (!timeline) return fn();
  const start = since();
  try {
    return await fn();
  } finally {
    timeline?.push({ start, end: since(), what });
  }
}
if (values.timeline) {
  // Every child process: its command, its span and its own CPU time.
  const spawn = Bun.spawn;
  (Bun as { spawn: unknown }).spawn = (...args: Parameters<typeof Bun.spawn>) => {
    const proc = spawn(...args);
    const record = timeline;
    if (record) {
      const cmd = (Array.isArray(args[0]) ? args[0] : (args[0] as { cmd: string[] }).cmd).map(String);
      const start = since();
      void proc.exited.then(() => {
        const cpu = proc.resourceUsage()?.cpuTime;
        record.push({ start, end: since(), cpuMs: cpu ? Number(cpu.total) / 1000 : undefined, what: describe(cmd) });
      });
    }
    return proc;
  };
  for (const a of analyzers) {
    const run = a.run.bind(a);
    a.run = (ctx) => timed(`stage ${a.stage.replace('analyzing:', '')}`, () => run(ctx));
  }
  for (const m of ['advance', 'finish', 'fail'] as const) {
    const f = s.queue[m].bind(s.queue) as (...a: unknown[]) => unknown;
    (s.queue as unknown as Record<string, unknown>)[m] = (...a: unknown[]) => {
      const start = since();
      const r = f(...a);
      timeline?.push({ start, end: since(), what: `db ${m}${m === 'advance' ? ` → ${String(a[2])}` : ''}` });
      return r;
    };
  }
}
/** A child process in a few words: the program, the input's name and what it makes. */
function describe(cmd: string[]): string {
  const prog = cmd[0]!.split('/').pop()!;
  const input = cmd[cmd.indexOf('-i') + 1]?.split('/').pop() ?? '';
  const fmt = cmd.lastIndexOf('-f') > cmd.indexOf('-i') ? cmd[cmd.lastIndexOf('-f') + 1] : '';
  const vf = cmd.includes('-vf') ? ` -vf ${cmd[cmd.indexOf('-vf') + 1]!.slice(0, 40)}` : '';
  const frames = cmd.includes('-frames:v') ? ` -frames:v ${cmd[cmd.indexOf('-frames:v') + 1]}` : '';
  const out = cmd.includes('-i') ? ` → ${fmt || cmd.at(-1)!.split('/').pop()}` : '';
  return `${prog} ${cmd.includes('-i') ? input : cmd.slice(1).join(' ').slice(0, 50)}${vf}${frames}${out}`;
}

/**
 * CPU seconds of every thread of this process (by tid and name) and of its reaped children, from
 * /proc: the analysis stages run on their own threads (the model Workers, onnxruntime's pool,
 * ffmpeg children), so per-thread CPU tells the stages apart on a machine shared with other work.
 */
interface CpuSnapshot {
  threads: Map<string, { name: string; sec: number }>;
  children: number;
}
function cpuSnapshot(): CpuSnapshot {
  const ticks = (stat: string) => stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const threads = new Map<string, { name: string; sec: number }>();
  if (!existsSync('/proc/self/task')) return { threads, children: 0 };
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const f = ticks(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8'));
      const name = readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim();
      threads.set(tid, { name, sec: (Number(f[11]) + Number(f[12])) / 100 });
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  const f = ticks(readFileSync('/proc/self/stat', 'utf8'));
  return { threads, children: (Number(f[13]) + Number(f[14])) / 100 };
}
/** CPU seconds spent between two snapshots, per thread name (threads that ended in between are lost). */
function cpuSpent(a: CpuSnapshot, b: CpuSnapshot): Record<string, number> {
  const out: Record<string, number> = { 'ffmpeg (children)': b.children - a.children };
  for (const [tid, t] of b.threads) {
    const spent = t.sec - (a.threads.get(tid)?.sec ?? 0);
    if (spent > 0) out[t.name] = (out[t.name] ?? 0) + spent;
  }
  return out;
}

let peakRss = 0;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage.rss())), 50);

async function timeDecode(file: string): Promise<number> {
  // Not part of the indexing: left out of a timeline, whose clock it does not advance.
  const paused = timeline;
  timeline = null;
  const t0 = performance.now();
  try {
    return await decodeOnce(file);
  } finally {
    timeline = paused;
    timelineT0 += performance.now() - t0;
  }
}

async function decodeOnce(file: string): Promise<number> {
  const t0 = performance.now();
  const p = Bun.spawn(
    [ffmpeg, '-hide_banner', '-nostdin', '-loglevel', 'error', '-i', file, '-an', '-f', 'null', '-'],
    { stdout: 'ignore', stderr: 'ignore' },
  );
  await p.exited;
  return (performance.now() - t0) / 1000;
}

async function longClip(minutes: number, clips: string[]): Promise<string> {
  const out = join(tmpdir(), `vidq-bench-long-${minutes}min.mp4`);
  if (existsSync(out)) return out;
  const list = join(tmpdir(), 'vidq-bench-list.txt');
  // Re-encode each clip once to a common format, then concatenate copies up to the length.
  const parts: string[] = [];
  for (const c of clips) {
    const part = join(tmpdir(), `vidq-bench-part-${c.replace(/\W/g, '_')}.mp4`);
    if (!existsSync(part)) {
      Bun.spawnSync([
        ffmpeg,
        '-y',
        '-loglevel',
        'error',
        '-i',
        join(MEDIA, c),
        '-vf',
        'scale=640:360:force_original_aspect_ratio=decrease,pad=640:360:(ow-iw)/2:(oh-ih)/2,fps=25',
        '-c:v',
        'libx264',
        '-preset',
        'veryfast',
        '-crf',
        '26',
        '-ac',
        '1',
        '-ar',
        '16000',
        '-c:a',
        'aac',
        '-shortest',
        part,
      ]);
    }
    if (existsSync(part)) parts.push(part);
  }
  let total = 0;
  const lines: string[] = [];
  const durations = await Promise.all(
    parts.map(async (p) => (await probeFile(ffprobe, p, { maxDurationSec: 1e9 })).durationSec),
  );
  for (let i = 0; total < minutes * 60; i = (i + 1) % parts.length) {
    lines.push(`file '${parts[i]}'`);
    total += durations[i]!;
  }
  writeFileSync(list, lines.join('\n'));
  Bun.spawnSync([ffmpeg, '-y', '-loglevel', 'error', '-f', 'concat', '-safe', '0', '-i', list, '-c', 'copy', out]);
  return out;
}

/**
 * A parked camera (issue 35): one still frame of cars-parking-lot.mp4 for `minutes`, with 8 s of the
 * clip's own motion in the middle; made with ffmpeg once and cached in the temp directory.
 */
async function staticClip(minutes: number): Promise<string> {
  const out = join(tmpdir(), `vidq-bench-static-${minutes}min.mp4`);
  if (existsSync(out)) return out;
  const src = join(MEDIA, 'cars-parking-lot.mp4');
  const enc = ['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '26', '-pix_fmt', 'yuv420p', '-r', '25', '-an'];
  const vf = 'scale=640:360:force_original_aspect_ratio=decrease,pad=640:360:(ow-iw)/2:(oh-ih)/2';
  const still = join(tmpdir(), 'vidq-bench-static-still.mp4');
  const motion = join(tmpdir(), 'vidq-bench-static-motion.mp4');
  const half = Math.max(1, (minutes * 60 - 8) / 2);
  const run = (args: string[]) => {
    const r = Bun.spawnSync([ffmpeg, '-y', '-loglevel', 'error', ...args]);
    if (r.exitCode !== 0) throw new Error(`ffmpeg failed: ${r.stderr.toString().trim()}`);
  };
  // The picture at 10 s, held; then 10–18 s as it moves.
  run(['-ss', '10', '-i', src, '-frames:v', '1', '-vf', vf, '-f', 'image2', '-c:v', 'png', `${still}.png`]);
  run([
    '-loop',
    '1',
    '-framerate',
    '25',
    '-i',
    `${still}.png`,
    '-t',
    String(half),
    '-tune',
    'stillimage',
    ...enc,
    still,
  ]);
  run(['-ss', '10', '-i', src, '-t', '8', '-vf', vf, ...enc, motion]);
  const list = join(tmpdir(), 'vidq-bench-static-list.txt');
  writeFileSync(list, [still, motion, still].map((f) => `file '${f}'`).join('\n'));
  run(['-f', 'concat', '-safe', '0', '-i', list, '-c', 'copy', out]);
  return out;
}

interface Row {
  name: string;
  duration: number;
  decode: number;
  analysis: number;
  stages: Record<string, number>;
  /** What the analysis found: segments per kind, frames kept, and a hash of every segment's content. */
  findings: string;
  /** CPU seconds per thread name (and of the ffmpeg children) while the clip was indexed. */
  cpu: Record<string, number>;
  /** Frames each frame-reading stage saw, and how many of them its models ran on. */
  analysed: Record<string, { frames: number; analysed: number }>;
}

/** Segments per kind and frames of one video, with a hash of the segments' kind/span/text (rounded to ms). */
async function findingsOf(id: string): Promise<string> {
  const rows = s.db
    .select({ kind: segments.kind, start: segments.start, end: segments.end, text: segments.text })
    .from(segments)
    .where(eq(segments.videoId, id))
    .orderBy(asc(segments.kind), asc(segments.start), asc(segments.text))
    .all();
  const perKind: Record<string, number> = {};
  for (const r of rows) perKind[r.kind] = (perKind[r.kind] ?? 0) + 1;
  const hash = new Bun.CryptoHasher('sha1');
  for (const r of rows) hash.update(`${r.kind}|${r.start.toFixed(3)}|${r.end.toFixed(3)}|${r.text}\n`);
  const frameCount = s.db.select({ id: frames.id }).from(frames).where(eq(frames.videoId, id)).all().length;
  return `${Object.entries(perKind)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ')}; frames ${frameCount}; sha1 ${hash.digest('hex').slice(0, 12)}`;
}

/** --dump DIR: the clip's segments (and the stages' summaries) as JSON, for bench/quality-diff.ts. */
function dumpFindings(id: string, name: string, summaries: Record<string, unknown>): void {
  const rows = s.db
    .select({
      kind: segments.kind,
      start: segments.start,
      end: segments.end,
      text: segments.text,
      extra: segments.extra,
    })
    .from(segments)
    .where(eq(segments.videoId, id))
    .orderBy(asc(segments.kind), asc(segments.start), asc(segments.text))
    .all();
  // Which person each face appearance was grouped into (people are grouped across the bench's clips).
  const people = s.db
    .select({ start: segments.start, end: segments.end, person: personAppearances.personId })
    .from(personAppearances)
    .innerJoin(segments, eq(segments.id, personAppearances.segmentId))
    .where(eq(personAppearances.videoId, id))
    .orderBy(asc(segments.start))
    .all();
  mkdirSync(values.dump!, { recursive: true });
  writeFileSync(join(values.dump!, `${name}.json`), JSON.stringify({ name, summaries, segments: rows, people }));
}

async function analyse(name: string, file: string): Promise<Row | null> {
  let info;
  try {
    info = await timed('probe (ingest)', () => probeFile(ffprobe, file, { maxDurationSec: 1e9 }));
  } catch {
    return null; // audio only etc.
  }
  const id = (name.replace(/[^A-Za-z0-9]/g, '') + 'x'.repeat(32)).slice(0, 32);
  const rel = s.files.sourceRelPath(id, info.ext);
  mkdirSync(join(dataDir, 'media', id), { recursive: true });
  copyFileSync(file, s.files.abs(rel));
  const now = new Date();
  s.db
    .insert(videos)
    .values({
      id,
      indexId: index.id,
      userId: user.id,
      sourceUrl: 'file:' + name,
      fileName: name,
      fileType: info.mimeType,
      storagePath: rel,
      durationSec: info.durationSec,
      fps: info.fps,
      width: info.width,
      height: info.height,
      hasAudio: info.hasAudio,
      status: 'processing',
      progress: 0,
      uploadedAt: now,
      updatedAt: now,
    })
    .run();
  await s.queue.enqueue(id);
  const job = (await s.queue.claim('w_bench'))!;
  const decode = await timeDecode(file);
  const cpu0 = cpuSnapshot();
  const t0 = performance.now();
  // As the worker does: a video that will get a playable copy is marked before its analysis.
  const playbackDeps = { catalog: s.catalog, files: s.files, ffmpeg, log: createLogger('error') };
  // …and its copy is made beside the analysis.
  const early = (await timed('playback mark', () => notePlaybackPending(playbackDeps, id)))
    ? startPlaybackCopy(playbackDeps, id, new AbortController().signal)
    : null;
  const outcome = await runJob(
    job,
    {
      catalog: s.catalog,
      queue: s.queue,
      files: s.files,
      analyzers,
      ffmpeg,
      workerId: 'w_bench',
      log: createLogger('error'),
    },
    new AbortController().signal,
  );
  // The browser-playable copy, published (or made, when it was not started) after the analysis.
  if (outcome === 'ready')
    await timed('playback copy (the rest of it)', () => playbackStep(playbackDeps, id, undefined, early));
  const analysis = (performance.now() - t0) / 1000;
  const cpu = cpuSpent(cpu0, cpuSnapshot());
  const ocrCpu =
    Number(
      (
        s.db.select({ a: videos.analysis }).from(videos).where(eq(videos.id, id)).get()?.a as {
          ocr?: { cpu_ms?: number };
        } | null
      )?.ocr?.cpu_ms ?? 0,
    ) / 1000;
  // The OCR models run on the main thread: its share is told apart by the stage's own count.
  if (ocrCpu > 0 && cpu.bun !== undefined) {
    cpu['ocr (main thread)'] = ocrCpu;
    cpu.bun = Math.max(0, cpu.bun - ocrCpu);
  }
  if (outcome !== 'ready')
    console.error(`${name}: ${outcome}`, s.db.select({ e: videos.error }).from(videos).all().at(-1));
  const row = s.db.select({ a: videos.analysis }).from(videos).where(eq(videos.id, id)).get();
  const stages: Record<string, number> = {};
  const summaries = (row?.a ?? {}) as Record<string, Record<string, unknown>>;
  for (const [k, v] of Object.entries(summaries)) stages[k] = Number(v.ms ?? 0) / 1000;
  const analysed: Row['analysed'] = {};
  const n = (x: unknown) => (typeof x === 'number' ? x : 0);
  if (summaries.objects)
    analysed.objects = { frames: n(summaries.objects.frames), analysed: n(summaries.objects.detected) };
  if (summaries.faces)
    analysed.faces = {
      frames: n(summaries.faces.frames),
      analysed: n(summaries.faces.analysed_frames ?? summaries.faces.frames),
    };
  if (summaries.ocr) analysed.ocr = { frames: n(summaries.ocr.frames), analysed: n(summaries.ocr.ocr_frames) };
  if (values.dump) dumpFindings(id, name, summaries);
  return { name, duration: info.durationSec, decode, analysis, stages, findings: await findingsOf(id), cpu, analysed };
}

const clips = readdirSync(MEDIA)
  .filter((f) => /\.(mp4|webm|mkv)$/.test(f))
  .filter((f) => !values.only || f.includes(values.only))
  .sort();
const rows: Row[] = [];
if (values.timeline) {
  const passes: { wall: number; cpu: number }[] = [];
  const name = values.timeline.split('/').pop()!;
  const file = existsSync(values.timeline) ? values.timeline : join(MEDIA, name);
  for (const [pass, label] of [
    ['cold', 'cold: the first video of this process, as in a fresh worker'],
    ['warm', 'warm: the models are loaded'],
  ] as const) {
    timeline = [];
    timelineT0 = performance.now();
    const wall0 = performance.now();
    const cpu0 = process.cpuUsage();
    const r = await analyse(`${name} ${pass}`, file);
    await Bun.sleep(50); // the last child's exit is recorded
    const cpu = process.cpuUsage(cpu0);
    const events = timeline as TimelineEvent[];
    timeline = null;
    if (!r) throw new Error(`${name}: not a video`);
    rows.push(r);
    const children = events.reduce((a, e) => a + (e.cpuMs ?? 0), 0);
    console.log(`\ntimeline of ${name} (${r.duration.toFixed(1)} s), ${label}`);
    console.log(
      `${'start ms'.padStart(9)} ${'end ms'.padStart(8)} ${'wall ms'.padStart(8)} ${'cpu ms'.padStart(8)}  what`,
    );
    for (const e of events.sort((a, b) => a.start - b.start))
      console.log(
        `${e.start.toFixed(0).padStart(9)} ${e.end.toFixed(0).padStart(8)} ${(e.end - e.start).toFixed(0).padStart(8)} ${(e.cpuMs === undefined ? '' : e.cpuMs.toFixed(0)).padStart(8)}  ${e.what}`,
      );
    const self = (cpu.user + cpu.system) / 1000;
    passes.push({ wall: performance.now() - wall0 - r.decode * 1000, cpu: self + children });
    console.log(
      `total: decode floor ${(r.decode * 1000).toFixed(0)} ms, indexed in ${(r.analysis * 1000).toFixed(0)} ms wall; CPU ${self.toFixed(0)} ms in this process (all threads) + ${children.toFixed(0)} ms in ${events.filter((e) => e.cpuMs !== undefined).length} child processes`,
    );
  }
  // What a fresh worker (or one that gave its models back when idle) pays before its first video.
  const [cold, warm] = passes as [{ wall: number; cpu: number }, { wall: number; cpu: number }];
  console.log(
    `\nmodel (re)load, cold − warm: ${(cold.wall - warm.wall).toFixed(0)} ms wall, ${(cold.cpu - warm.cpu).toFixed(0)} ms CPU`,
  );
  clips.length = 0;
  values['skip-long'] = true;
} else if (values.file) {
  // One given file only (e.g. the cached long clip), to measure analyzers in isolation.
  const r = await analyse(values.file.split('/').pop()!, values.file);
  if (r) rows.push(r);
  clips.length = 0;
  values['skip-long'] = true;
}
for (const c of clips) {
  const r = await analyse(c, join(MEDIA, c));
  if (r) rows.push(r);
}
if (values['static-minutes']) {
  const minutes = Number(values['static-minutes']);
  const r = await analyse(`static-${minutes}min.mp4`, await staticClip(minutes));
  if (r) rows.push(r);
}
if (!values['skip-long']) {
  const minutes = Number(values['long-minutes'] ?? 10);
  const file = await longClip(minutes, clips);
  const r = await analyse(`long-${minutes}min.mp4`, file);
  if (r) rows.push(r);
}
clearInterval(sampler);

const fmt = (x: number, d = 2) => x.toFixed(d).padStart(7);
console.log(
  `\nanalyzers: ${analyzers.map((a) => a.stage.replace('analyzing:', '')).join(', ')}  (machine: ${navigator.hardwareConcurrency} cores)`,
);
console.log(
  `${'clip'.padEnd(30)} ${'dur s'.padStart(7)} ${'decode'.padStart(7)} ${'index'.padStart(7)} ${'×RT'.padStart(7)} ${'÷floor'.padStart(7)}  stage shares`,
);
for (const r of rows) {
  const shares = Object.entries(r.stages)
    .map(([k, v]) => `${k} ${Math.round((v / r.analysis) * 100)}%`)
    .join(', ');
  console.log(
    `${r.name.padEnd(30)} ${fmt(r.duration, 1)} ${fmt(r.decode)} ${fmt(r.analysis)} ${fmt(r.duration / r.analysis, 1)} ${fmt(r.analysis / Math.max(r.decode, 0.001), 1)}  ${shares}`,
  );
}
const sum = (f: (r: Row) => number) => rows.reduce((a, r) => a + f(r), 0);
const totalStages: Record<string, number> = {};
for (const r of rows) for (const [k, v] of Object.entries(r.stages)) totalStages[k] = (totalStages[k] ?? 0) + v;
console.log(
  `${'TOTAL'.padEnd(30)} ${fmt(
    sum((r) => r.duration),
    1,
  )} ${fmt(sum((r) => r.decode))} ${fmt(sum((r) => r.analysis))} ${fmt(sum((r) => r.duration) / sum((r) => r.analysis), 1)} ${fmt(sum((r) => r.analysis) / sum((r) => r.decode), 1)}`,
);
console.log(
  `time shares: ${Object.entries(totalStages)
    .map(([k, v]) => `${k} ${Math.round((v / sum((r) => r.analysis)) * 100)}%`)
    .join(', ')}`,
);
console.log(
  `indexing speed: ${(sum((r) => r.duration) / sum((r) => r.analysis)).toFixed(1)}× real time (target ≥ 20×); peak RSS ${(peakRss / 2 ** 20).toFixed(0)} MB (target < 1536 MB)`,
);
// CPU seconds per video second, by thread: the models' Workers are named after their stage (see
// workers/thread-name.ts); onnxruntime (OCR) and sharp work on the runtime's pool threads.
const videoSec = sum((r) => r.duration);
const cpuTotal: Record<string, number> = {};
for (const r of rows) for (const [k, v] of Object.entries(r.cpu)) cpuTotal[k] = (cpuTotal[k] ?? 0) + v;
const allCpu = Object.values(cpuTotal).reduce((a, b) => a + b, 0);
console.log(
  `CPU: ${allCpu.toFixed(1)} s for ${videoSec.toFixed(1)} s of video (${(allCpu / videoSec).toFixed(3)} CPU-s per video-s); by thread:`,
);
for (const [k, v] of Object.entries(cpuTotal).sort((a, b) => b[1] - a[1]))
  if (v >= 0.05)
    console.log(`  ${k.padEnd(22)} ${v.toFixed(1).padStart(7)} s  ${(v / videoSec).toFixed(4)} per video-s`);
const share: Record<string, { frames: number; analysed: number }> = {};
for (const r of rows)
  for (const [k, v] of Object.entries(r.analysed)) {
    const t = (share[k] ??= { frames: 0, analysed: 0 });
    t.frames += v.frames;
    t.analysed += v.analysed;
  }
console.log(
  `frames analysed by the models: ${Object.entries(share)
    .map(([k, v]) => `${k} ${v.analysed}/${v.frames} (${v.frames ? Math.round((v.analysed / v.frames) * 100) : 0} %)`)
    .join(
      ', ',
    )}; effort ${config.analysisEffort}; load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`,
);
// CPU per clip, by stage (threads grouped: the figures that hold on a shared machine), and what
// an idle 2-core machine would reach at that CPU if both cores were kept busy (an upper bound).
const stageOf = (thread: string): string =>
  thread === 'ffmpeg (children)'
    ? 'decode'
    : thread === 'vidq-objects'
      ? 'objects'
      : thread === 'ocr (main thread)'
        ? 'ocr'
        : thread === 'vidq-faces'
          ? 'faces'
          : 'other';
const STAGES = ['decode', 'objects', 'ocr', 'faces', 'other'];
const cpuByStage = (r: Row) => {
  const out: Record<string, number> = Object.fromEntries(STAGES.map((k) => [k, 0]));
  for (const [k, v] of Object.entries(r.cpu)) out[stageOf(k)]! += v;
  return out;
};
console.log(
  `\nCPU-s per clip ${'total'.padStart(7)} ${STAGES.map((k) => k.padStart(7)).join(' ')}  CPU-s/video-s  2-core ×RT bound`,
);
const groups: [string, Row[]][] = [
  ['short clips', rows.filter((r) => !/^(static|long)-/.test(r.name))],
  ['static', rows.filter((r) => r.name.startsWith('static-'))],
  ['long', rows.filter((r) => r.name.startsWith('long-'))],
];
const cpuLine = (name: string, rs: Row[]) => {
  const by: Record<string, number> = Object.fromEntries(STAGES.map((k) => [k, 0]));
  for (const r of rs) for (const [k, v] of Object.entries(cpuByStage(r))) by[k]! += v;
  const total = STAGES.reduce((a, k) => a + by[k]!, 0);
  const dur = rs.reduce((a, r) => a + r.duration, 0);
  console.log(
    `${name.slice(0, 28).padEnd(28)} ${total.toFixed(1).padStart(7)} ${STAGES.map((k) => by[k]!.toFixed(1).padStart(7)).join(' ')}  ${(total / dur).toFixed(4).padStart(13)}  ${(dur / (total / 2)).toFixed(1).padStart(16)}`,
  );
};
for (const r of rows) cpuLine(r.name, [r]);
for (const [name, rs] of groups)
  if (rs.length > 1 || (rs.length === 1 && name !== 'short clips')) cpuLine(`= ${name} (${rs.length})`, rs);
// --findings FILE: what each clip's analysis found, one line per clip, to compare runs exactly.
if (values.findings) writeFileSync(values.findings, rows.map((r) => `${r.name}: ${r.findings}`).join('\n') + '\n');
for (const a of analyzers) await a.close?.();
s.close();
rmSync(dataDir, { recursive: true, force: true });
