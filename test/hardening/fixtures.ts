/**
 * Shared pieces of the hardening tests: bad media files made with the bundled ffmpeg in a
 * throw-away folder, an origin on 127.0.0.1 that serves them (and the shared clips), and a
 * snapshot of everything the service has written (row counts of every table, files in the data
 * directory) to prove that a refused request wrote nothing.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Database } from 'bun:sqlite';
import { Client } from 'pg';
import { resolveBinaries } from '../../src/media/binaries';
import { clip, MEDIA_DIR, type TestServer } from '../helpers';
import { type CatalogReader, openCatalogReader, type Place } from './invariants';

export interface Fixtures {
  dir: string;
  remove(): void;
}

async function run(cmd: string[]): Promise<void> {
  const p = Bun.spawn(cmd, { stdout: 'ignore', stderr: 'pipe' });
  const [err, code] = await Promise.all([new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`${cmd[0]} failed (${code}): ${err.slice(-400)}`);
}

/**
 * picture.mp4 (a PNG), photo.mp4 (a JPEG), notes.mp4 (text), zero.mp4 (0 bytes),
 * cut-head.mp4 (the first 100 kB of a clip whose index comes first: it probes as whole),
 * cut-tail.mp4 (the first 200 kB of a clip whose index comes last), long.mp4 (a real clip whose
 * timestamps are stretched to about 84 hours).
 */
export async function makeFixtures(): Promise<Fixtures> {
  const dir = mkdtempSync(join(tmpdir(), 'vidq-badmedia-'));
  const { ffmpeg } = await resolveBinaries(join(dir, 'bin'));
  const still = ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=1', '-frames:v', '1'];
  await run([ffmpeg, ...still, '-f', 'image2', '-c:v', 'png', join(dir, 'picture.mp4')]);
  await run([ffmpeg, ...still, '-f', 'image2', '-c:v', 'mjpeg', join(dir, 'photo.mp4')]);
  await run([
    ffmpeg,
    '-v',
    'error',
    '-y',
    '-itsscale',
    '50000',
    '-i',
    clip('countdown-living-room.mp4'),
    '-an',
    '-c',
    'copy',
    join(dir, 'long.mp4'),
  ]);
  const head = (name: string, bytes: number) => new Uint8Array(readFileSync(clip(name))).slice(0, bytes);
  writeFileSync(join(dir, 'cut-head.mp4'), head('countdown-living-room.mp4', 100_000));
  writeFileSync(join(dir, 'cut-tail.mp4'), head('chaplin-bw.mp4', 200_000));
  writeFileSync(join(dir, 'zero.mp4'), new Uint8Array(0));
  writeFileSync(join(dir, 'notes.mp4'), 'these are meeting notes, not a video\n'.repeat(50));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface FixtureOrigin {
  url: string;
  stop(): void;
}

/**
 * /fx/<name>        a fixture file
 * /media/<name>     a shared clip
 * /redirect?to=URL  302 to URL (any scheme)
 */
export function startFixtureOrigin(fx: Fixtures): FixtureOrigin {
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const u = new URL(req.url);
      const serveFrom = async (dir: string, name: string) => {
        if (name.includes('/') || name.includes('..')) return new Response('no', { status: 400 });
        const f = Bun.file(join(dir, name));
        if (!(await f.exists())) return new Response('not found', { status: 404 });
        return new Response(f, { headers: { 'content-type': 'video/mp4' } });
      };
      if (u.pathname.startsWith('/fx/')) return serveFrom(fx.dir, decodeURIComponent(u.pathname.slice(4)));
      if (u.pathname.startsWith('/media/')) return serveFrom(MEDIA_DIR, decodeURIComponent(u.pathname.slice(7)));
      if (u.pathname === '/redirect')
        return new Response(null, { status: 302, headers: { location: u.searchParams.get('to') ?? '/' } });
      return new Response('not found', { status: 404 });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) };
}

export interface Snapshot {
  rows: Record<string, number>;
  files: string[];
}

/**
 * Row counts of every table of the catalog (on PostgreSQL also pg-boss's analysis jobs) and every
 * file under the data directory (the database's own files aside).
 */
export async function snapshot(s: TestServer): Promise<Snapshot> {
  const db = await readerOf(s);
  const rows: Record<string, number> = {};
  try {
    const tables = (
      db.dialect === 'sqlite'
        ? await db.all<{ name: string }>(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
          )
        : await db.all<{ name: string }>("SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'")
    ).map((t) => [t.name, `"${t.name}"`]);
    // pg-boss's own bookkeeping changes on its own; the analyses it holds do not.
    if (await db.has('pgboss.job')) tables.push(['pgboss.job', "pgboss.job WHERE name LIKE 'vidq-analysis%'"]);
    // One statement: a request in flight could otherwise land between two counts.
    const counts = await db.all<{ t: string; n: number }>(
      tables.map(([name, from]) => `SELECT '${name}' AS t, count(*) AS n FROM ${from}`).join(' UNION ALL '),
    );
    for (const c of counts.sort((a, b) => a.t.localeCompare(b.t))) rows[c.t] = Number(c.n);
  } finally {
    if (db.dialect === 'sqlite') await db.close();
  }
  const files: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d)) {
      const p = join(d, e);
      if (statSync(p).isDirectory()) walk(p);
      else files.push(relative(s.dataDir, p));
    }
  };
  walk(s.dataDir);
  return {
    rows,
    files: files.filter((f) => !/^vidq\.db(-wal|-shm|-journal)?$/.test(f) && !f.startsWith('bin/')).sort(),
  };
}

/** One PostgreSQL connection per server's database for its snapshots (a table suite takes hundreds). */
const readers = new Map<string, Promise<CatalogReader>>();
function readerOf(s: TestServer): Promise<CatalogReader> {
  if (!s.database) return openCatalogReader({ dataDir: s.dataDir });
  let r = readers.get(s.database);
  if (!r) readers.set(s.database, (r = openCatalogReader({ dataDir: s.dataDir, database: s.database })));
  return r;
}

/** Closes the connections `snapshot` keeps (before their databases are dropped). */
export async function closeSnapshotReaders(): Promise<void> {
  for (const r of readers.values()) await (await r).close();
  readers.clear();
}

/** Runs one writing statement (`?` placeholders) on a server's catalog, behind its back. */
export async function writeCatalog(where: Place, sql: string, params: unknown[] = []): Promise<void> {
  if (!where.database) {
    const db = new Database(join(where.dataDir, 'vidq.db'));
    try {
      db.exec('PRAGMA busy_timeout = 5000');
      db.query(sql).run(...(params as never[]));
    } finally {
      db.close();
    }
    return;
  }
  const c = new Client({ connectionString: where.database });
  await c.connect();
  try {
    let n = 0;
    await c.query(
      sql.replace(/\?/g, () => `$${++n}`),
      params,
    );
  } finally {
    await c.end();
  }
}

/** The files under media/ and tmp/ only. */
export function mediaAndTmp(s: Snapshot): string[] {
  return s.files.filter((f) => f.startsWith('media/') || f.startsWith('tmp/'));
}
