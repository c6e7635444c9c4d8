/**
 * `npm run check:schema` (a step of .ci/run): fails when src/storage/schema.ts, drizzle/ and the
 * embedded migrations disagree. Reads the tree, never writes it: drizzle-kit runs on a copy of
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
import config from '../drizzle.config';

const root = join(import.meta.dir, '..');
const drizzleKit = join(root, 'node_modules/.bin/drizzle-kit');
const dialect = config.dialect;
const schema = join(root, String(config.schema));
const out = join(root, String(config.out));
const problems: string[] = [];

/** Every file under dir (relative path → content). */
function filesOf(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const name of readdirSync(dir, { recursive: true, withFileTypes: true }))
    if (name.isFile()) {
      const path = join(name.parentPath, name.name);
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

// 1. drizzle/ against the schema, on a copy. drizzle-kit reads --out and --schema as relative to
// its working directory (it prefixes './'), so both are given relative to the copy.
const tmp = mkdtempSync(join(tmpdir(), 'vidq-schema-'));
try {
  cpSync(out, join(tmp, 'drizzle'), { recursive: true });
  const before = filesOf(join(tmp, 'drizzle'));
  const check = drizzle(tmp, ['check', `--dialect=${dialect}`, '--out=./drizzle']);
  if (!check.ok) problems.push(`drizzle-kit check failed:\n${check.output}`);
  const generate = drizzle(tmp, [
    'generate',
    `--dialect=${dialect}`,
    `--schema=${relative(tmp, schema)}`,
    '--out=./drizzle',
  ]);
  const after = filesOf(join(tmp, 'drizzle'));
  const changed = [...after.keys()].filter((f) => before.get(f) !== after.get(f));
  if (!generate.ok) problems.push(`drizzle-kit generate failed:\n${generate.output}`);
  else if (changed.length)
    problems.push(
      `${relative(root, schema)} has changes with no migration in drizzle/ (drizzle-kit generate would write ${changed.join(', ')}): run npm run db:generate`,
    );
} finally {
  rmSync(tmp, { recursive: true, force: true });
}

// 2. The journal and the SQL files.
const journal = JSON.parse(readFileSync(join(out, 'meta/_journal.json'), 'utf8')) as {
  entries: { tag: string; when: number }[];
};
const tags = new Set(journal.entries.map((e) => e.tag));
const sqlFiles = readdirSync(out).filter((f) => f.endsWith('.sql'));
for (const tag of tags) if (!sqlFiles.includes(`${tag}.sql`)) problems.push(`drizzle/${tag}.sql is missing`);
for (const f of sqlFiles)
  if (!tags.has(f.slice(0, -4))) problems.push(`drizzle/${f} has no entry in drizzle/meta/_journal.json`);
journal.entries.forEach((e, i) => {
  const prev = journal.entries[i - 1];
  if (prev && e.when <= prev.when)
    problems.push(
      `${e.tag} is dated (when ${e.when}) no later than ${prev.tag} (${prev.when}): existing databases would skip it`,
    );
});

// 3. The migrations embedded in the executable.
const embedded = Bun.spawnSync([process.execPath, join(root, 'scripts/embed-migrations.ts'), '--check'], { cwd: root });
if (embedded.exitCode !== 0) problems.push(embedded.stderr.toString().trim());

if (problems.length) {
  for (const p of problems) console.error(p);
  process.exit(1);
}
console.log(`schema.ts, drizzle/ (${journal.entries.length} migrations) and the embedded migrations agree`);
