/**
 * `npm run db:check` (a step of .ci/run): fails when a schema, its migrations and the embedded
 * migrations disagree, for each dialect: src/storage/schema.ts with drizzle/ (SQLite) and
 * src/storage/schema-pg.ts with drizzle/pg/ (PostgreSQL); and when the two schemas disagree on a
 * table, column or index name (one repository reads both). Reads the tree, never writes it: drizzle-kit runs on a copy of
 * drizzle/ in a temporary folder.
 * - drizzle-kit check: the snapshots in drizzle/meta are consistent;
 * - drizzle-kit generate on the copy must find nothing to migrate (a schema change without its
 *   migration fails here, and so does one that would make drizzle-kit ask about a rename);
 * - every journal entry has its SQL file and every SQL file its entry, and the entries' `when`
 *   strictly increase: drizzle's migrator applies only migrations newer than the last one applied,
 *   so an entry dated before its predecessor would be skipped on existing databases;
 * - src/storage/migrations.generated.ts is what scripts/embed-migrations.ts makes of drizzle/.
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { getTableConfig as pgTableConfig, PgTable } from 'drizzle-orm/pg-core';
import { getTableConfig as sqliteTableConfig, SQLiteTable } from 'drizzle-orm/sqlite-core';
import sqliteConfig from '../drizzle.config';
import pgConfig from '../drizzle.pg.config';
import * as pgSchema from '../src/storage/schema-pg';
import * as sqliteSchema from '../src/storage/schema';

const root = join(import.meta.dir, '..');
const drizzleKit = join(root, 'node_modules/.bin/drizzle-kit');
const problems: string[] = [];

/** Every file under dir (relative path → content); `skip`: a sub-folder left out. */
function filesOf(dir: string, skip?: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const name of readdirSync(dir, { recursive: true, withFileTypes: true }))
    if (name.isFile()) {
      const path = join(name.parentPath, name.name);
      if (skip && !relative(join(dir, skip), path).startsWith('..')) continue;
      files.set(relative(dir, path), readFileSync(path, 'utf8'));
    }
  return files;
}

/**
 * Runs drizzle-kit in cwd with no terminal, so that a question it would ask (is this column
 * renamed?) fails instead of waiting. drizzle-kit 0.31 exits 0 even then, with an Error printed:
 * success is an exit code of 0 and no error in the output.
 */
function drizzle(cwd: string, args: string[]): { ok: boolean; output: string } {
  const run = Bun.spawnSync([drizzleKit, ...args], { cwd, stdin: 'ignore', timeout: 120_000, env: process.env });
  const output = `${run.stdout.toString()}${run.stderr.toString()}`.trim();
  return { ok: run.exitCode === 0 && !/\berror\b/i.test(output), output };
}

const dialects = [sqliteConfig, pgConfig].map((config) => ({
  dialect: config.dialect,
  schema: join(root, String(config.schema)),
  out: join(root, String(config.out)),
}));
let counts = '';
for (const { dialect, schema, out } of dialects) {
  // drizzle/ holds drizzle/pg/: the SQLite folder's own files are the others.
  const nested = dialects.find((d) => d.out !== out && d.out.startsWith(`${out}/`));
  const skip = nested ? relative(out, nested.out) : undefined;

  // 1. The migration folder against the schema, on a copy. drizzle-kit reads --out and --schema as
  // relative to its working directory (it prefixes './'), so both are given relative to the copy.
  const tmp = mkdtempSync(join(tmpdir(), 'vidq-schema-'));
  try {
    cpSync(out, join(tmp, 'drizzle'), { recursive: true, filter: (src) => !skip || !src.startsWith(join(out, skip)) });
    const before = filesOf(join(tmp, 'drizzle'));
    const check = drizzle(tmp, ['check', `--dialect=${dialect}`, '--out=./drizzle']);
    if (!check.ok) problems.push(`drizzle-kit check (${dialect}) failed:\n${check.output}`);
    const generate = drizzle(tmp, [
      'generate',
      `--dialect=${dialect}`,
      `--schema=${relative(tmp, schema)}`,
      '--out=./drizzle',
    ]);
    const after = filesOf(join(tmp, 'drizzle'));
    const changed = [...after.keys()].filter((f) => before.get(f) !== after.get(f));
    if (!generate.ok) problems.push(`drizzle-kit generate (${dialect}) failed:\n${generate.output}`);
    else if (changed.length)
      problems.push(
        `${relative(root, schema)} has changes with no migration in ${relative(root, out)}/ (drizzle-kit generate would write ${changed.join(', ')}): run npm run db:generate`,
      );
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }

  // 2. The journal and the SQL files.
  const where = relative(root, out);
  const journal = JSON.parse(readFileSync(join(out, 'meta/_journal.json'), 'utf8')) as {
    entries: { tag: string; when: number }[];
  };
  const tags = new Set(journal.entries.map((e) => e.tag));
  const sqlFiles = readdirSync(out).filter((f) => f.endsWith('.sql'));
  for (const tag of tags) if (!sqlFiles.includes(`${tag}.sql`)) problems.push(`${where}/${tag}.sql is missing`);
  for (const f of sqlFiles)
    if (!tags.has(f.slice(0, -4))) problems.push(`${where}/${f} has no entry in ${where}/meta/_journal.json`);
  journal.entries.forEach((e, i) => {
    const prev = journal.entries[i - 1];
    if (prev && e.when <= prev.when)
      problems.push(
        `${where}: ${e.tag} is dated (when ${e.when}) no later than ${prev.tag} (${prev.when}): existing databases would skip it`,
      );
  });
  counts += `${counts ? ', ' : ''}${where}/ (${journal.entries.length} migrations)`;
}

// 3. The two schemas name the same tables, columns and indexes (PostgreSQL's full-text column aside).
const PG_ONLY_COLUMNS = new Set(['segments.text_search']);
const PG_ONLY_INDEXES = new Set(['segments_text_search_idx']);
const shape = (tables: { name: string; columns: string[]; indexes: string[] }[]) =>
  new Map(tables.map((t) => [t.name, t]));
const sqliteTables = shape(
  (Object.values(sqliteSchema) as unknown[])
    .filter((v): v is SQLiteTable => v instanceof SQLiteTable)
    .map((t) => sqliteTableConfig(t))
    .map((c) => ({
      name: c.name,
      columns: c.columns.map((k) => k.name),
      indexes: c.indexes.map((i) => i.config.name),
    })),
);
const pgTables = shape(
  (Object.values(pgSchema) as unknown[])
    .filter((v): v is PgTable => v instanceof PgTable)
    .map((t) => pgTableConfig(t))
    .map((c) => ({
      name: c.name,
      columns: c.columns.map((k) => k.name).filter((k) => !PG_ONLY_COLUMNS.has(`${c.name}.${k}`)),
      indexes: c.indexes.map((i) => i.config.name!).filter((i) => !PG_ONLY_INDEXES.has(i)),
    })),
);
const fix = 'give src/storage/schema-pg.ts the same tables, columns and indexes as schema.ts, then npm run db:generate';
for (const [name, s] of sqliteTables) {
  const p = pgTables.get(name);
  if (!p) {
    problems.push(`table ${name} is in schema.ts but not in schema-pg.ts: ${fix}`);
    continue;
  }
  const diff = (a: string[], b: string[]) => a.filter((x) => !b.includes(x));
  for (const [what, a, b] of [
    ['column', s.columns, p.columns],
    ['index', s.indexes, p.indexes],
  ] as const) {
    for (const x of diff(a, b)) problems.push(`${what} ${name}.${x} is in schema.ts but not in schema-pg.ts: ${fix}`);
    for (const x of diff(b, a)) problems.push(`${what} ${name}.${x} is in schema-pg.ts but not in schema.ts: ${fix}`);
  }
}
for (const name of pgTables.keys())
  if (!sqliteTables.has(name)) problems.push(`table ${name} is in schema-pg.ts but not in schema.ts: ${fix}`);

// 4. The migrations embedded in the executable.
const embedded = Bun.spawnSync([process.execPath, join(root, 'scripts/embed-migrations.ts'), '--check'], { cwd: root });
if (embedded.exitCode !== 0) problems.push(embedded.stderr.toString().trim());

if (problems.length) {
  for (const p of problems) console.error(p);
  process.exit(1);
}
console.log(`both schemas, ${counts} and the embedded migrations agree`);
