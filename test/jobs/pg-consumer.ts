/**
 * A queue consumer in a process of its own, for test/jobs/pg-boss-processes.test.ts: claims jobs
 * from the pg-boss queue and prints one JSON line per claim.
 * - `work`: finishes each job after a moment;
 * - `hold`: keeps the first job it claims (its heartbeat going) until it is killed;
 * - `pipeline`: runs each job through the real pipeline (analysis/pipeline.ts) with two stand-in
 *   stages (shots, then text) that write segments; `pipeline-hold` stops in the second stage, after
 *   the first one's output is stored, until it is killed.
 * Usage: bun test/jobs/pg-consumer.ts URL MODE NAME [MEDIA_ROOT]
 */
import type { Analyzer } from '../../src/analysis/contracts';
import { runJob } from '../../src/analysis/pipeline';
import { openPgBossQueue } from '../../src/jobs/pg-boss-queue';
import { createLogger } from '../../src/log';
import { postgresCatalog } from '../../src/storage/catalog';
import { DataDir } from '../../src/storage/files';
import { openPostgres } from '../../src/storage/pg';

type Mode = 'work' | 'hold' | 'pipeline' | 'pipeline-hold';
const [url, mode, name, mediaRoot] = process.argv.slice(2) as [string, Mode, string, string | undefined];
const db = await openPostgres(url, { max: 3 });
const catalog = postgresCatalog(db);
const queue = await openPgBossQueue(url, catalog, { heartbeatSec: 10, monitorSec: 1, retryDelaySec: 1 });
const workerId = `w_${process.pid}_${name}`;
const say = (m: object) => process.stdout.write(`${JSON.stringify({ ...m, name, t: Date.now() })}\n`);

const seg = (kind: 'shot' | 'ocr', i: number) => ({ kind, start: i, end: i + 1, text: `${kind} ${i}` });
const analyzers: Analyzer[] = [
  {
    stage: 'analyzing:shots',
    kinds: ['shot'],
    info: { kind: 'shots', name: 'stand-in' },
    weight: 1,
    run: async () => ({ segments: [0, 1, 2].map((i) => seg('shot', i)), summary: { shots: 3 } }),
  },
  {
    stage: 'analyzing:ocr',
    kinds: ['ocr'],
    info: { kind: 'ocr', name: 'stand-in' },
    weight: 1,
    run: async () => {
      if (mode === 'pipeline-hold') {
        say({ event: 'in-second-stage' });
        await new Promise(() => {});
      }
      return { segments: [0, 1].map((i) => seg('ocr', i)), summary: { lines: 2 } };
    },
  },
];

say({ event: 'ready' });
for (;;) {
  const job = await queue.claim(workerId, new Date());
  if (!job) {
    await Bun.sleep(100);
    continue;
  }
  say({ event: 'claimed', videoId: job.videoId, attempts: job.attempts, stage: job.stage });
  if (mode === 'hold') await new Promise(() => {});
  if (mode === 'pipeline' || mode === 'pipeline-hold') {
    const outcome = await runJob(
      job,
      {
        catalog,
        queue,
        files: new DataDir(mediaRoot!),
        analyzers,
        ffmpeg: 'ffmpeg',
        workerId,
        log: createLogger('error'),
      },
      new AbortController().signal,
    );
    await queue.release(job.videoId, workerId);
    say({ event: outcome === 'ready' ? 'finished' : outcome, videoId: job.videoId });
    continue;
  }
  await Bun.sleep(20);
  const done = await queue.finish(job.videoId, workerId);
  await queue.release(job.videoId, workerId);
  say({ event: done ? 'finished' : 'lost', videoId: job.videoId });
}
