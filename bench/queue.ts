/**
 * The job queue's own cost (issue 33): CPU-seconds of this process per job for queueing, claiming
 * and finishing N jobs (no analysis), on the SQLite queue and on pg-boss (a real PostgreSQL,
 * test/pg.ts). The database server's CPU is not counted: the PostgreSQL figure is the client's.
 * Usage: bun bench/queue.ts [jobs=300]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPgBossQueue } from '../src/jobs/pg-boss-queue';
import { type JobQueue, SqliteJobQueue } from '../src/jobs/queue';
import { type Catalog, postgresCatalog, sqliteCatalog } from '../src/storage/catalog';
import { openDatabase } from '../src/storage/db';
import { openPostgres } from '../src/storage/pg';
import { addUser, addVideo } from '../test/jobs/queue-fixtures';
import { freshPostgresDatabase } from '../test/pg';

const n = Number(process.argv[2] ?? 300);

async function run(name: string, c: Catalog, q: JobQueue): Promise<void> {
  for (const u of ['a', 'b', 'c']) await addUser(c, u);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await addVideo(c, q, `v${i}`, ['a', 'b', 'c'][i % 3]!, 10 + (i % 7) * 200);
  const cpu1 = process.cpuUsage(cpu0);
  const t1 = performance.now();
  for (let job = await q.claim('w_1_a'); job; job = await q.claim('w_1_a')) {
    await q.finish(job.videoId, 'w_1_a');
    await q.release(job.videoId, 'w_1_a');
  }
  const cpu2 = process.cpuUsage(cpu0);
  const t2 = performance.now();
  const ms = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000;
  console.log(
    `${name}: ${n} jobs; store+queue ${(ms(cpu1) / n).toFixed(2)} CPU-ms/job (${((t1 - t0) / n).toFixed(1)} ms wall), ` +
      `claim+finish ${((ms(cpu2) - ms(cpu1)) / n).toFixed(2)} CPU-ms/job (${((t2 - t1) / n).toFixed(1)} ms wall)`,
  );
}

const dir = mkdtempSync(join(tmpdir(), 'vidq-bench-queue-'));
const db = openDatabase(join(dir, 'vidq.db'));
const sc = sqliteCatalog(db);
await run('SQLite', sc, new SqliteJobQueue(sc));
db.$client.close();
rmSync(dir, { recursive: true, force: true });

const pg = await freshPostgresDatabase();
const pdb = await openPostgres(pg.url);
const pc = postgresCatalog(pdb);
const q = await openPgBossQueue(pg.url, pc);
await run('PostgreSQL (pg-boss)', pc, q);
await q.close();
await pdb.$client.end();
await pg.drop();
