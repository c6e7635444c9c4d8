/**
 * Opens the catalog in either dialect (issue 33): the SQLite file in the data directory, or
 * (--database / VIDQ_DATABASE_URL) a PostgreSQL server, migrated with the embedded migrations
 * (pg.ts). Every process opens it here: `serve`, `vidq worker`, the analysis worker processes and
 * the administration commands.
 */
import { ConfigError, redactUrl } from '../options';
import { type Catalog, postgresCatalog, sqliteCatalog } from './catalog';
import { type Db, openDatabase } from './db';
import { openPostgres } from './pg';

export type { Db } from './db';

export interface OpenedCatalog {
  catalog: Catalog;
  /**
   * The SQLite handle, for the tests and tools that read the file directly; null on PostgreSQL.
   * The service itself goes through `catalog` only.
   */
  sqlite: Db | null;
  /** Ends the connections (the pool on PostgreSQL, the file on SQLite). */
  close(): Promise<void>;
}

/**
 * The catalog `database` names (a postgres:// URL), else the SQLite file. `connections`: the most
 * PostgreSQL connections this process holds (a command needs one or two, a server more).
 */
export async function openCatalog(opts: {
  database: string;
  sqliteFile: string;
  connections?: number;
}): Promise<OpenedCatalog> {
  if (!opts.database) {
    const db = openDatabase(opts.sqliteFile);
    return {
      catalog: sqliteCatalog(db),
      sqlite: db,
      close: async () => db.$client.close(),
    };
  }
  let db: Awaited<ReturnType<typeof openPostgres>>;
  try {
    db = await openPostgres(opts.database, { max: opts.connections ?? 2 });
  } catch (e) {
    throw new ConfigError(
      `--database ${redactUrl(opts.database)}: cannot open the PostgreSQL catalog: ${redactInMessage((e as Error).message, opts.database)}`,
    );
  }
  let closed: Promise<void> | null = null;
  return {
    catalog: postgresCatalog(db),
    sqlite: null,
    close: () => (closed ??= db.$client.end()),
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
