/**
 * bench/ingest: how fast videos are indexed with the default offline analyzers, against the floor
 * of a bare ffmpeg decode of the same files, on this machine.
 *
 *   bun bench/ingest.ts [--analyzers visual,ocr,...] [--long-minutes 10] [--skip-long]
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
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createAnalyzers } from '../src/analysis';
import { runJob } from '../src/analysis/pipeline';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/log';
import { resolveBinaries } from '../src/media/binaries';
import { probeFile } from '../src/media/probe';
import { notePlaybackPending, playbackStep, startPlaybackCopy } from '../src/jobs/playback-step';
import { createService } from '../src/service';
import { frames, segments, videos } from '../src/storage/schema';

const { values } = parseArgs({
  options: {
    analyzers: { type: 'string' },
    'long-minutes': { type: 'string' },
    'skip-long': { type: 'boolean' },
    only: { type: 'string' },
    file: { type: 'string' },
    timeline: { type: 'string' },
    findings: { type: 'string' },
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
  },
  process.env,
);
const s = createService(config, createLogger('error'));
const { ffmpeg, ffprobe } = await resolveBinaries(s.files.binDir);
const analyzers = createAnalyzers(config);
const { user } = s.accounts.createUser('bench', null);
const { index } = s.indexes.findOrCreateByName(s.db, user, 'bench');

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

let peakRss = 0;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 50);

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

interface Row {
  name: string;
  duration: number;
  decode: number;
  analysis: number;
  stages: Record<string, number>;
  /** What the analysis found: segments per kind, frames kept, and a hash of every segment's content. */
  findings: string;
}

/** Segments per kind and frames of one video, with a hash of the segments' kind/span/text (rounded to ms). */
async function findingsOf(id: string): Promise<string> {
  const { eq, asc } = await import('drizzle-orm');
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
  s.queue.enqueue(id);
  const job = s.queue.claim('w_bench')!;
  const decode = await timeDecode(file);
  const t0 = performance.now();
  // As the worker does: a video that will get a playable copy is marked before its analysis.
  const playbackDeps = { db: s.db, files: s.files, ffmpeg, log: createLogger('error') };
  // …and its copy is made beside the analysis.
  const early = (await timed('playback mark', () => notePlaybackPending(playbackDeps, id)))
    ? startPlaybackCopy(playbackDeps, id, new AbortController().signal)
    : null;
  const outcome = await runJob(
    job,
    { db: s.db, queue: s.queue, files: s.files, analyzers, ffmpeg, workerId: 'w_bench', log: createLogger('error') },
    new AbortController().signal,
  );
  // The browser-playable copy, published (or made, when it was not started) after the analysis.
  if (outcome === 'ready')
    await timed('playback copy (the rest of it)', () => playbackStep(playbackDeps, id, undefined, early));
  const analysis = (performance.now() - t0) / 1000;
  if (outcome !== 'ready')
    console.error(`${name}: ${outcome}`, s.db.select({ e: videos.error }).from(videos).all().at(-1));
  const row = s.db
    .select({ a: videos.analysis })
    .from(videos)
    .where((await import('drizzle-orm')).eq(videos.id, id))
    .get();
  const stages: Record<string, number> = {};
  for (const [k, v] of Object.entries((row?.a ?? {}) as Record<string, { ms?: number }>))
    stages[k] = (v.ms ?? 0) / 1000;
  return { name, duration: info.durationSec, decode, analysis, stages, findings: await findingsOf(id) };
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
// --findings FILE: what each clip's analysis found, one line per clip, to compare runs exactly.
if (values.findings) writeFileSync(values.findings, rows.map((r) => `${r.name}: ${r.findings}`).join('\n') + '\n');
for (const a of analyzers) await a.close?.();
s.close();
rmSync(dataDir, { recursive: true, force: true });
