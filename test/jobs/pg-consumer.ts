/**
 * A queue consumer in a process of its own, for test/jobs/pg-boss-processes.test.ts: claims jobs
 * from the pg-boss queue and prints one JSON line per claim. `work`: finishes each after a moment;
 * `hold`: keeps the first job it claims (its heartbeat going) until it is killed.
 * Usage: bun test/jobs/pg-consumer.ts URL work|hold NAME
 */
import { openPgBossQueue } from '../../src/jobs/pg-boss-queue';
import { postgresCatalog } from '../../src/storage/catalog';
import { openPostgres } from '../../src/storage/pg';

const [url, mode, name] = process.argv.slice(2) as [string, 'work' | 'hold', string];
const db = await openPostgres(url, { max: 3 });
const queue = await openPgBossQueue(url, postgresCatalog(db), { heartbeatSec: 10, monitorSec: 1, retryDelaySec: 1 });
const workerId = `w_${process.pid}_${name}`;
const say = (m: object) => process.stdout.write(`${JSON.stringify({ ...m, name, t: Date.now() })}\n`);
say({ event: 'ready' });
for (;;) {
  const job = await queue.claim(workerId, new Date());
  if (!job) {
    await Bun.sleep(100);
    continue;
  }
  say({ event: 'claimed', videoId: job.videoId, attempts: job.attempts });
  if (mode === 'hold') await new Promise(() => {});
  await Bun.sleep(20);
  const done = await queue.finish(job.videoId, workerId);
  await queue.release(job.videoId, workerId);
  say({ event: done ? 'finished' : 'lost', videoId: job.videoId });
}
