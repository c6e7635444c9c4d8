/**
 * Opens the SQLite database (WAL, foreign keys on) and applies the embedded migrations.
 */
import { Database } from 'bun:sqlite';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync } from 'node:fs';
import { drizzle, type BunSQLiteDatabase } from 'drizzle-orm/bun-sqlite';
import { type EmbeddedMigration, MIGRATIONS } from './migrations.generated';
import * as schema from './schema';

export type Db = BunSQLiteDatabase<typeof schema> & { $client: Database };

export function openDatabase(file: string): Db {
  // Owner-only, also when the file was made earlier with a looser umask: it holds token hashes.
  // SQLite gives the -wal and -shm files the database file's mode.
  const ownerOnly = () => {
    for (const f of [file, `${file}-wal`, `${file}-shm`]) if (existsSync(f)) chmodSync(f, 0o600);
  };
  ownerOnly();
  const sqlite = new Database(file, { create: true, strict: true });
  ownerOnly();
  sqlite.exec('PRAGMA journal_mode = WAL');
  sqlite.exec('PRAGMA synchronous = NORMAL');
  sqlite.exec('PRAGMA foreign_keys = ON');
  // Concurrent writers (CLI next to a running server) wait instead of failing at once.
  sqlite.exec('PRAGMA busy_timeout = 5000');
  keepStatementsCompiled(sqlite);
  const db = drizzle({ client: sqlite, schema }) as Db;
  migrate(db);
  ownerOnly();
  return db;
}

/** How many compiled statements `prepare` keeps, by SQL text (the most recently used). */
const STATEMENTS_KEPT = 256;

/**
 * drizzle compiles every query it runs anew (`client.prepare`, ~0.05–0.3 ms each, a few dozen per
 * question); the same SQL text gets the same compiled statement here. Safe because drizzle runs a
 * statement to its end at once (all/get/values/run, never a held iterator), and statements are
 * never finalized by hand: one dropped from the cache is finalized when collected.
 */
function keepStatementsCompiled(sqlite: Database): void {
  const compile = sqlite.prepare.bind(sqlite);
  const kept = new Map<string, ReturnType<typeof compile>>();
  sqlite.prepare = ((sql: string, ...rest: unknown[]) => {
    if (rest.length) return compile(sql, ...(rest as [never]));
    let stmt = kept.get(sql);
    if (stmt) kept.delete(sql);
    else stmt = compile(sql);
    kept.set(sql, stmt);
    if (kept.size > STATEMENTS_KEPT) kept.delete(kept.keys().next().value!);
    return stmt;
  }) as typeof sqlite.prepare;
}

/** Applies the migrations the database has not had yet (all embedded ones unless told; tests give fewer). */
export function migrate(db: Db, migrations: EmbeddedMigration[] = MIGRATIONS): void {
  const metas = migrations.map((m) => ({
    sql: m.sql.split('--> statement-breakpoint'),
    bps: m.breakpoints,
    folderMillis: m.when,
    hash: createHash('sha256').update(m.sql).digest('hex'),
  }));
  // Same routine as drizzle-orm's file-based migrator, fed from the embedded copies.
  (db as any).dialect.migrate(metas, (db as any).session, { migrationsFolder: '(embedded)' });
}

/**
 * A write transaction that takes the write lock at BEGIN (IMMEDIATE). The server, its worker
 * processes and the CLI share the database: a deferred transaction that reads and then writes
 * fails with SQLITE_BUSY_SNAPSHOT when another process committed in between, whereas an immediate
 * one waits for the lock (busy_timeout) and then sees the latest data.
 */
export function writeTx<T>(db: Db, fn: (tx: Db) => T): T {
  return db.transaction((tx) => fn(tx as unknown as Db), { behavior: 'immediate' });
}
