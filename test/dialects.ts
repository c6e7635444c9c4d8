/**
 * The catalog on both dialects for tests (issue 33): two catalogs on one database (two nodes), on
 * the embedded SQLite file and on a real PostgreSQL (test/pg.ts: a fresh database, dropped after).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Catalog, postgresCatalog, sqliteCatalog } from '../src/storage/catalog';
import { openDatabase } from '../src/storage/db';
import { openPostgres } from '../src/storage/pg';
import { ApiError } from '../src/errors';
import { freshPostgresDatabase } from './pg';

export interface TwoNodes {
  /** Two catalogs on the same database: two nodes. */
  a: Catalog;
  b: Catalog;
  /** The PostgreSQL URL (undefined on SQLite). */
  url?: string;
  close(): Promise<void>;
}

export const DIALECTS: { name: string; open(): Promise<TwoNodes> }[] = [
  {
    name: 'SQLite',
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'vidq-cluster-'));
      const one = openDatabase(join(dir, 'vidq.db'));
      const two = openDatabase(join(dir, 'vidq.db'));
      return {
        a: sqliteCatalog(one),
        b: sqliteCatalog(two),
        close: async () => {
          one.$client.close();
          two.$client.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: 'PostgreSQL',
    async open() {
      const pg = await freshPostgresDatabase();
      const one = await openPostgres(pg.url, { max: 4 });
      const two = await openPostgres(pg.url, { max: 4 });
      return {
        a: postgresCatalog(one),
        b: postgresCatalog(two),
        url: pg.url,
        close: async () => {
          await one.$client.end();
          await two.$client.end();
          await pg.drop();
        },
      };
    },
  },
];

/** One catalog, and how to close it (and drop its database). */
export interface OpenedCatalog {
  catalog: Catalog;
  /** The PostgreSQL URL (undefined on SQLite). */
  url?: string;
  close(): Promise<void>;
}

/** One catalog on each dialect: what the repository tests run on. */
export const CATALOGS: { name: string; open(): Promise<OpenedCatalog> }[] = [
  {
    name: 'SQLite',
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'vidq-catalog-'));
      const db = openDatabase(join(dir, 'vidq.db'));
      return {
        catalog: sqliteCatalog(db),
        close: async () => {
          db.$client.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: 'PostgreSQL',
    async open() {
      const pg = await freshPostgresDatabase();
      const db = await openPostgres(pg.url);
      return {
        catalog: postgresCatalog(db),
        url: pg.url,
        close: async () => {
          await db.$client.end();
          await pg.drop();
        },
      };
    },
  },
];

/** The HTTP status an async call fails with (or 0 when it does not fail). */
export async function statusOf(p: Promise<unknown>): Promise<number> {
  try {
    await p;
    return 0;
  } catch (e) {
    if (e instanceof ApiError) return e.status;
    throw e;
  }
}
