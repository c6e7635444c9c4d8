/**
 * Opens the catalog alone, in either dialect (issue 33): the SQLite file in the data directory, or
 * (--database / VIDQ_DATABASE_URL) a PostgreSQL server, migrated with the embedded migrations
 * (pg.ts). The administration commands (`user`, `token`, `credits`, the reads of `reanalyze`)
 * need nothing else, so they run on PostgreSQL already, while `serve` and `worker` still refuse it
 * (db.ts's openCatalog) until the job queue and the other parts are on the catalog too.
 */
import { ConfigError, redactUrl } from '../options';
import { type Catalog, postgresCatalog, sqliteCatalog } from './catalog';
import { openDatabase } from './db';
import { openPostgres } from './pg';

export interface OpenedCatalog {
  catalog: Catalog;
  /** Ends the connections (the pool on PostgreSQL, the file on SQLite). */
  close(): Promise<void>;
}

/** The catalog `database` names (a postgres:// URL), else the SQLite file. */
export async function openCatalogOnly(opts: { database: string; sqliteFile: string }): Promise<OpenedCatalog> {
  if (!opts.database) {
    const db = openDatabase(opts.sqliteFile);
    return {
      catalog: sqliteCatalog(db),
      close: async () => db.$client.close(),
    };
  }
  let db: Awaited<ReturnType<typeof openPostgres>>;
  try {
    // A command holds one connection at a time: a small pool.
    db = await openPostgres(opts.database, { max: 2 });
  } catch (e) {
    throw new ConfigError(
      `--database ${redactUrl(opts.database)}: cannot open the PostgreSQL catalog: ${redactInMessage((e as Error).message, opts.database)}`,
    );
  }
  return {
    catalog: postgresCatalog(db),
    close: () => db.$client.end(),
  };
}

/** A driver's message, without the password should it quote the URL. */
function redactInMessage(message: string, url: string): string {
  const password = (() => {
    try {
      return decodeURIComponent(new URL(url).password);
    } catch {
      return '';
    }
  })();
  return password ? message.split(password).join('***') : message;
}
