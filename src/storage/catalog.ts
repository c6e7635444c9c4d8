/**
 * The catalog in either dialect (issue 33): what the repositories in src/storage/repositories/
 * take, so that one repository runs on the embedded SQLite file and on PostgreSQL.
 *
 * A repository builds its statements with drizzle's query builder, which is the same for both
 * dialects, over the dialect's own tables (`t`), and awaits them: never `.get()`, `.all()` or
 * `.run()`, which only SQLite's driver has (the PostgreSQL half of test/storage/repositories.test.ts
 * fails on them). Raw SQL goes through `rows()`; where the dialects spell something differently,
 * the repository asks `dialect`.
 *
 * Transactions: `write(fn)`. On PostgreSQL, a transaction on a connection of its own. On SQLite, the
 * same BEGIN IMMEDIATE as db.ts's writeTx (the write lock at BEGIN, waiting up to busy_timeout
 * for another process), but around an async body: one connection serves the whole process, so
 * each `run` or `write` body has it to itself and the others wait their turn (a statement of
 * another caller never lands inside an open transaction). So a body must not wait on anything but
 * its own catalog (`tx` in a write; no network, no files: the lock is held meanwhile), and never
 * calls the outer catalog (it would wait for itself).
 * During the migration, code that still calls drizzle synchronously (db.ts's writeTx and plain
 * `.run()`) does not wait for an open async transaction: src/storage/ keeps each table on one side
 * of the migration (all of a table's writes in its repository), so the two never meet on a table.
 */
import { type SQL, sql } from 'drizzle-orm';
import { badRequest } from '../errors';
import type { Db } from './db';
import type { PgDb } from './pg';
import * as pgTables from './schema-pg';
import * as sqliteTables from './schema';

export type Dialect = 'sqlite' | 'postgres';

/**
 * The tables, typed as SQLite's: drizzle's builder takes either dialect's tables through the same
 * calls, and the row types agree (Date times, numbers, Buffers, parsed JSON; db:check keeps the
 * names equal), so a repository is written once.
 */
export type Tables = typeof sqliteTables;

export interface Catalog {
  readonly dialect: Dialect;
  /** The dialect's tables. */
  readonly t: Tables;
  /** Runs `fn` with the database (waiting, on SQLite, for a write transaction in progress to end). */
  run<T>(fn: (db: Db) => Promise<T> | T): Promise<T>;
  /** Raw SQL (a drizzle `sql` template): the rows. */
  rows<T extends Record<string, unknown>>(query: SQL): Promise<T[]>;
  /** A write transaction; `tx` is this catalog inside it. A write inside a write joins it. */
  write<T>(fn: (tx: Catalog) => Promise<T>): Promise<T>;
}

/** The first row of a result, or undefined: what SQLite's `.get()` gives, in both dialects. */
export const first = <T>(rows: T[]): T | undefined => rows[0];

/** Rows a write statement changed (SQLite's `changes`, PostgreSQL's `rowCount`). */
export function changed(result: unknown): number {
  const r = result as { changes?: number; rowCount?: number | null };
  return Number(r.changes ?? r.rowCount ?? 0);
}

/** The catalog over the SQLite database that db.ts opened. */
export function sqliteCatalog(db: Db): Catalog {
  /**
   * The body holding the connection (a `run` or a `write`): resolves when it ends. Waiters check it
   * again after each wait, with no await between that check and taking it (another may have).
   */
  let busy: Promise<void> | null = null;
  async function exclusive<T>(fn: () => Promise<T> | T): Promise<T> {
    while (busy) await busy;
    let done!: () => void;
    busy = new Promise((resolve) => (done = resolve));
    try {
      return await fn();
    } finally {
      busy = null;
      done();
    }
  }

  const inside: Catalog = {
    dialect: 'sqlite',
    t: sqliteTables,
    run: async (fn) => fn(db),
    rows: async (query) => db.all(query),
    write: (fn) => fn(inside),
  };
  return {
    dialect: 'sqlite',
    t: sqliteTables,
    // A body of several statements is not interleaved with another's either.
    run: (fn) => exclusive(() => fn(db)),
    rows: (query) => exclusive(() => db.all(query)),
    write: (fn) =>
      exclusive(async () => {
        db.run(sql`BEGIN IMMEDIATE`);
        try {
          const out = await fn(inside);
          db.run(sql`COMMIT`);
          return out;
        } catch (e) {
          db.run(sql`ROLLBACK`);
          throw e;
        }
      }),
  };
}

/**
 * PostgreSQL's text holds no NUL: a query given one fails (22021). Whatever the user sent it in (an
 * index name, a file id, a URL) can match nothing, so the caller is told what to fix, as a 400.
 */
function refuseNul(e: unknown): never {
  const pg = ((e as { cause?: unknown })?.cause ?? e) as { code?: string; message?: string } | undefined;
  if (pg?.code === '22021' && pg.message?.includes('0x00'))
    throw badRequest(
      'the request contains a NUL character (\\u0000, %00), which no name, id or URL may hold: remove it',
    );
  throw e;
}

/** The catalog on PostgreSQL (src/storage/pg.ts opens the pool). */
export function postgresCatalog(db: PgDb): Catalog {
  const over = (d: unknown, inTx: boolean): Catalog => {
    const self: Catalog = {
      dialect: 'postgres',
      t: pgTables as unknown as Tables,
      run: async (fn) => {
        try {
          return await fn(d as Db);
        } catch (e) {
          refuseNul(e);
        }
      },
      rows: async <T>(query: SQL) =>
        ((await (d as PgDb).execute(query).catch(refuseNul)) as unknown as { rows: T[] }).rows,
      write: (fn) => (inTx ? fn(self) : (d as PgDb).transaction((tx) => fn(over(tx, true)))),
    };
    return self;
  };
  return over(db, false);
}
