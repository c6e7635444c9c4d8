/**
 * bench/ingest: how fast videos are indexed with the default offline analyzers, against the floor
 * of a bare ffmpeg decode of the same files, on this machine.
 *
 *   bun bench/ingest.ts [--analyzers visual,ocr,...] [--long-minutes 10] [--skip-long]
 *
 * Runs the real pipeline (the same code as the worker process) over every video clip in
 * ../shared/media and over a long clip concatenated from them (re-encoded once to a common format,
 * cached in the temp directory). Prints per clip: duration, decode floor, analysis time, the
 * real-time ratio, and the time share of each analyzer; and the peak RSS of the process.
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
import { playbackStep } from '../src/jobs/playback-step';
import { createService } from '../src/service';
import { videos } from '../src/storage/schema';

const { values } = parseArgs({
  options: {
    analyzers: { type: 'string' },
    'long-minutes': { type: 'string' },
    'skip-long': { type: 'boolean' },
    only: { type: 'string' },
    file: { type: 'string' },
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

let peakRss = 0;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 50);

async function timeDecode(file: string): Promise<number> {
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
}

async function analyse(name: string, file: string): Promise<Row | null> {
  let info;
  try {
    info = await probeFile(ffprobe, file, { maxDurationSec: 1e9 });
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
  const outcome = await runJob(
    job,
    { db: s.db, queue: s.queue, files: s.files, analyzers, ffmpeg, workerId: 'w_bench', log: createLogger('error') },
    new AbortController().signal,
  );
  // The browser-playable copy, as the worker makes it after the analysis (only when needed).
  if (outcome === 'ready') await playbackStep({ db: s.db, files: s.files, ffmpeg, log: createLogger('error') }, id);
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
  return { name, duration: info.durationSec, decode, analysis, stages };
}

const clips = readdirSync(MEDIA)
  .filter((f) => /\.(mp4|webm|mkv)$/.test(f))
  .filter((f) => !values.only || f.includes(values.only))
  .sort();
const rows: Row[] = [];
if (values.file) {
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
for (const a of analyzers) await a.close?.();
s.close();
rmSync(dataDir, { recursive: true, force: true });
