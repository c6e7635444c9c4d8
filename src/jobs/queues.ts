/**
 * The analysis queue for a catalog: pg-boss on PostgreSQL, the `jobs` table on SQLite (see queue.ts
 * and pg-boss-queue.ts). What a node opens once its catalog is open; `close()` it on the way out.
 */
import type { Logger } from '../log';
import type { Catalog } from '../storage/catalog';
import { openPgBossQueue } from './pg-boss-queue';
import { type JobQueue, SqliteJobQueue } from './queue';

export async function openJobQueue(
  c: Catalog,
  o: { databaseUrl?: string; shortLaneSec?: number; log?: Logger } = {},
): Promise<JobQueue> {
  if (c.dialect === 'sqlite') return new SqliteJobQueue(c);
  if (!o.databaseUrl) throw new Error('the PostgreSQL job queue needs the database URL');
  return openPgBossQueue(o.databaseUrl, c, { shortSec: o.shortLaneSec ?? 0, ...(o.log && { log: o.log }) });
}
