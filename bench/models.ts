/**
 * bench/models: indexing with captions and transcripts from a model server, at several
 * --model-concurrency levels. The server is the STAND-IN OpenAI-compatible server of the tests
 * (test/model-stand-in.ts) answering after fixed delays (default 300 ms per caption, 1 s per
 * transcription chunk), so the figures show vidq's orchestration, not a model's speed.
 *
 *   bun bench/models.ts [--levels 1,4,16] [--caption-ms 300] [--stt-ms 1000] [--parallel 1]
 *                       [--caption-interval-sec 2] [--frame-interval-sec 1] [--only NAME]
 *
 * Runs the real pipeline in-process (as the worker does: visual, speech with --stt openai, captions
 * with --captioner openai, beside the visual stage) over the shared clips with a fresh data directory per level, and reports
 * the wall time, the time spent in the caption and speech stages, the requests sent, the most
 * requests the server saw at once, and this process's CPU time (user+system) per wall second.
 * `--parallel N` analyses N videos at once (they share the one limiter, as in one worker process).
 * Short caption intervals give each clip many windows, so the limit, not the clip count, decides.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { eq } from 'drizzle-orm';
import { createAnalyzers } from '../src/analysis';
import { Limiter, modelLimitPerWorker } from '../src/analysis/engines/model-server/client';
import { runJob } from '../src/analysis/pipeline';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/log';
import { resolveBinaries } from '../src/media/binaries';
import { probeFile } from '../src/media/probe';
import { createService } from '../src/service';
import { videos } from '../src/storage/schema';
import { ModelStandIn } from '../test/model-stand-in';

const { values } = parseArgs({
  options: {
    levels: { type: 'string' },
    'caption-ms': { type: 'string' },
    'stt-ms': { type: 'string' },
    parallel: { type: 'string' },
    'caption-interval-sec': { type: 'string' },
    'frame-interval-sec': { type: 'string' },
    only: { type: 'string' },
  },
});
const MEDIA = process.env.VIDQ_TEST_MEDIA ?? resolve(import.meta.dir, '../../shared/media');
const levels = (values.levels ?? '1,4,16').split(',').map(Number);
const parallel = Number(values.parallel ?? 1);
const stand = new ModelStandIn({
  delayMs: { chat: Number(values['caption-ms'] ?? 300), transcription: Number(values['stt-ms'] ?? 1000) },
  caption: (k) => `stand-in caption ${k}`,
});
const clips = readdirSync(MEDIA)
  .filter((f) => /\.(mp4|webm|mkv)$/.test(f))
  .filter((f) => !values.only || f.includes(values.only))
  .sort();

interface Level {
  concurrency: number;
  wall: number;
  captionsSec: number;
  speechSec: number;
  visualSec: number;
  requests: number;
  peak: number;
  captions: number;
  transcripts: number;
  cpuPerWall: number;
}

async function runLevel(concurrency: number): Promise<Level> {
  const dataDir = mkdtempSync(join(tmpdir(), 'vidq-bench-models-'));
  const config = loadConfig(
    {
      'data-dir': dataDir,
      'log-level': 'error',
      'min-free-bytes': '0',
      analyzers: 'visual,speech',
      captioner: 'openai',
      'captioner-url': stand.url,
      'captioner-model': 'bench-vision',
      stt: 'openai',
      'stt-url': stand.url,
      'stt-model': 'bench-whisper',
      'model-concurrency': String(concurrency),
      'caption-interval-sec': values['caption-interval-sec'] ?? '2',
      'frame-interval-sec': values['frame-interval-sec'] ?? '1',
    },
    {},
  );
  const s = await createService(config, createLogger('error'));
  const { ffmpeg, ffprobe } = await resolveBinaries(s.files.binDir);
  const analyzers = createAnalyzers(config, {
    modelLimiter: new Limiter(modelLimitPerWorker(config.modelConcurrency, config.analysisWorkers)),
  });
  const { user } = await s.accounts.createUser('bench', null);
  const { index } = await s.indexes.findOrCreateByName(s.catalog, user, 'bench');
  const ids: string[] = [];
  for (const name of clips) {
    let info;
    try {
      info = await probeFile(ffprobe, join(MEDIA, name), { maxDurationSec: 1e9 });
    } catch {
      continue;
    }
    const id = (name.replace(/[^A-Za-z0-9]/g, '') + 'x'.repeat(32)).slice(0, 32);
    const rel = s.files.sourceRelPath(id, info.ext);
    mkdirSync(join(dataDir, 'media', id), { recursive: true });
    copyFileSync(join(MEDIA, name), s.files.abs(rel));
    const now = new Date();
    s.db
      .insert(videos)
      .values({
        id,
        indexId: index.id,
        userId: user.id,
        sourceUrl: 'file:' + name,
        fileName: name,
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
    ids.push(id);
  }
  stand.resetCounts();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const worker = async (w: number) => {
    for (let job = await s.queue.claim(`w_bench_${w}`); job; job = await s.queue.claim(`w_bench_${w}`)) {
      const outcome = await runJob(
        job,
        {
          catalog: s.catalog,
          queue: s.queue,
          files: s.files,
          analyzers,
          ffmpeg,
          workerId: `w_bench_${w}`,
          log: createLogger('error'),
        },
        new AbortController().signal,
      );
      if (outcome !== 'ready') console.error(`${job.videoId}: ${outcome}`);
    }
  };
  await Promise.all(Array.from({ length: parallel }, (_, w) => worker(w)));
  const wall = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const sum = (kind: string, field: string) =>
    ids.reduce((t, id) => {
      const a = (s.db.select({ a: videos.analysis }).from(videos).where(eq(videos.id, id)).get()?.a ?? {}) as Record<
        string,
        Record<string, number>
      >;
      return t + (a[kind]?.[field] ?? 0);
    }, 0);
  const level: Level = {
    concurrency,
    wall,
    captionsSec: sum('captions', 'ms') / 1000,
    speechSec: sum('speech', 'ms') / 1000,
    visualSec: sum('shots', 'ms') / 1000,
    requests: stand.requests.length,
    peak: stand.peak,
    captions: sum('captions', 'captions'),
    transcripts: sum('speech', 'transcripts'),
    cpuPerWall: (cpu.user + cpu.system) / 1e6 / wall,
  };
  for (const a of analyzers) await a.close?.();
  s.close();
  rmSync(dataDir, { recursive: true, force: true });
  return level;
}

const rows: Level[] = [];
for (const c of levels) rows.push(await runLevel(c));
stand.stop();

const f = (x: number, d = 1) => x.toFixed(d).padStart(8);
console.log(
  `\nclips: ${clips.length} (${MEDIA}); stand-in delays: caption ${values['caption-ms'] ?? 300} ms, transcription ${values['stt-ms'] ?? 1000} ms; videos at once: ${parallel}; machine: ${navigator.hardwareConcurrency} cores`,
);
console.log(
  `${'conc'.padStart(5)} ${'wall s'.padStart(8)} ${'captions'.padStart(8)} ${'speech'.padStart(8)} ${'visual'.padStart(8)} ${'requests'.padStart(8)} ${'peak'.padStart(5)} ${'caps'.padStart(5)} ${'trans'.padStart(5)} ${'cpu/wall'.padStart(8)}`,
);
for (const r of rows) {
  console.log(
    `${String(r.concurrency).padStart(5)} ${f(r.wall)} ${f(r.captionsSec)} ${f(r.speechSec)} ${f(r.visualSec)} ${String(r.requests).padStart(8)} ${String(r.peak).padStart(5)} ${String(r.captions).padStart(5)} ${String(r.transcripts).padStart(5)} ${f(r.cpuPerWall, 2)}`,
  );
}
console.log(
  'captions / speech / visual: seconds spent in those stages, summed over the clips; peak: most requests the stand-in saw at once.',
);
