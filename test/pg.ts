/**
 * A real PostgreSQL for the tests (issue 33), never a mock and never skipped:
 * - the server at VIDQ_TEST_DATABASE_URL, else 127.0.0.1:5432 (trust auth, database `test`) when it answers;
 * - otherwise a throwaway cluster made from this machine's binaries (/usr/lib/postgresql/<v>/bin:
 *   initdb + pg_ctl on a temporary folder and a free port), stopped and deleted when the tests end.
 *   VIDQ_TEST_PG=throwaway asks for one even when a server answers.
 * Neither available: the test fails and says so.
 *
 * Each caller gets a database of its own (CREATE DATABASE with a random name, dropped after), so
 * that runs in parallel never see each other's rows.
 */
import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { randomId } from '../src/ids';

const DEFAULT_URL = 'postgres://postgres@127.0.0.1:5432/test';

export interface TestDatabase {
  /** The URL of the fresh database. */
  url: string;
  /** Where it runs: "the server at …" or "a throwaway cluster …". */
  server: string;
  /** Drops the database (its connections are ended first). */
  drop(): Promise<void>;
}

/** A fresh, empty database on a real PostgreSQL server. */
export async function freshPostgresDatabase(): Promise<TestDatabase> {
  const { url: admin, server } = await postgresServer();
  const name = `vidq_t_${randomId(12)
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '_')}`;
  await withClient(admin, (c) => c.query(`CREATE DATABASE "${name}"`));
  const u = new URL(admin);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    server,
    drop: () => withClient(admin, (c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).then(() => {}),
  };
}

async function withClient<T>(url: string, fn: (c: Client) => Promise<T>): Promise<T> {
  const c = new Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

let serverOnce: Promise<{ url: string; server: string }> | undefined;

/** The server the tests use, found (or started) once per test process. */
export function postgresServer(): Promise<{ url: string; server: string }> {
  serverOnce ??= (async () => {
    const url = process.env.VIDQ_TEST_DATABASE_URL || DEFAULT_URL;
    if (process.env.VIDQ_TEST_PG !== 'throwaway') {
      const reached = await withClient(url, (c) => c.query('SELECT 1')).then(
        () => null,
        (e: Error) => e.message,
      );
      if (reached === null) return { url, server: `the server at ${new URL(url).host}` };
    }
    return throwawayCluster();
  })();
  return serverOnce;
}

/** initdb + pg_ctl from /usr/lib/postgresql/<newest>/bin, on a temporary folder and a free port. */
async function throwawayCluster(): Promise<{ url: string; server: string }> {
  const versions = existsSync('/usr/lib/postgresql')
    ? readdirSync('/usr/lib/postgresql')
        .filter((v) => existsSync(`/usr/lib/postgresql/${v}/bin/initdb`))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (!versions.length)
    throw new Error(
      'no PostgreSQL for the tests: nothing answers at 127.0.0.1:5432 (or VIDQ_TEST_DATABASE_URL) and ' +
        'there is no /usr/lib/postgresql/<version>/bin/initdb to start a throwaway cluster (apt-get install postgresql)',
    );
  const bin = `/usr/lib/postgresql/${versions[0]}/bin`;
  const dir = mkdtempSync(join(tmpdir(), 'vidq-pg-'));
  // initdb refuses to run as root: the cluster then belongs to the postgres (or nobody) account.
  const asUser = process.getuid?.() === 0 ? (userExists('postgres') ? 'postgres' : 'nobody') : null;
  if (asUser) {
    const id = spawnSync('id', ['-u', asUser]).stdout.toString().trim();
    const gid = spawnSync('id', ['-g', asUser]).stdout.toString().trim();
    chownSync(dir, Number(id), Number(gid));
  }
  const run = (cmd: string, args: string[]) => {
    const r = asUser
      ? spawnSync('runuser', ['-u', asUser, '--', cmd, ...args], { encoding: 'utf8', timeout: 120_000 })
      : spawnSync(cmd, args, { encoding: 'utf8', timeout: 120_000 });
    if (r.status !== 0) throw new Error(`${cmd} failed: ${r.stderr || r.stdout || r.error?.message}`);
  };
  const port = await freePort();
  const data = join(dir, 'data');
  run(`${bin}/initdb`, ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync']);
  run(`${bin}/pg_ctl`, [
    '-D',
    data,
    '-l',
    join(dir, 'log'),
    '-w',
    '-o',
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off`,
    'start',
  ]);
  process.on('exit', () => {
    const stop = [`${bin}/pg_ctl`, '-D', data, '-m', 'immediate', 'stop'];
    if (asUser) spawnSync('runuser', ['-u', asUser, '--', ...stop]);
    else spawnSync(stop[0]!, stop.slice(1));
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    server: `a throwaway cluster (PostgreSQL ${versions[0]}, port ${port})`,
  };
}

const userExists = (name: string) => spawnSync('id', ['-u', name]).status === 0;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}
