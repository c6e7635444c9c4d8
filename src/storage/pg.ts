/**
 * The catalog on PostgreSQL (issue 33), through node-postgres (`pg`): a connection pool, drizzle
 * over it, and the embedded migrations applied under an advisory lock, so that several nodes
 * starting at once migrate the database once.
 *
 * Why node-postgres: pg-boss and graphile-worker (the job queues issue 33 allows) are built on it,
 * so a node holds one driver, one pool setting and one TLS/auth setup; it is the most used and
 * longest kept PostgreSQL client, and drizzle 0.45's node-postgres session is its most exercised
 * one. bun:sql needs no dependency, but drizzle 0.45's bun-sql session still has open bugs that
 * touch this schema (json parameters stored as strings, timestamp precision).
 */
import { createHash } from 'node:crypto';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { Client, Pool } from 'pg';
import type { EmbeddedMigration } from './migrations.generated';
import { PG_MIGRATIONS } from './migrations-pg.generated';
import * as schema from './schema-pg';

export type PgDb = NodePgDatabase<typeof schema> & { $client: Pool };

/** Any 64-bit number, the same in every node: the advisory lock the migrations run under. */
const MIGRATION_LOCK = 0x76_69_64_71_6d_69_67n; // "vidqmig"

/** Connects (a pool of at most `max` connections) and brings the schema up to date. */
export async function openPostgres(url: string, { max = 10 } = {}): Promise<PgDb> {
  await migratePostgres(url);
  const pool = new Pool({ connectionString: url, max });
  // An idle connection the server dropped (restart, network) reports here; the pool makes a new one.
  pool.on('error', () => {});
  return drizzle({ client: pool, schema }) as PgDb;
}

/** Applies the migrations the database has not had yet, on one connection that holds the advisory lock. */
export async function migratePostgres(url: string, migrations: EmbeddedMigration[] = PG_MIGRATIONS): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK.toString()]);
    const db = drizzle({ client, schema });
    const metas = migrations.map((m) => ({
      sql: m.sql.split('--> statement-breakpoint'),
      bps: m.breakpoints,
      folderMillis: m.when,
      hash: createHash('sha256').update(m.sql).digest('hex'),
    }));
    // Same routine as drizzle-orm's file-based migrator, fed from the embedded copies.
    await (db as any).dialect.migrate(metas, (db as any).session, { migrationsFolder: '(embedded)' });
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK.toString()]).catch(() => {});
    await client.end();
  }
}
