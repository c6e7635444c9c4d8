/**
 * The storage boundary of issue 33: outside src/storage/ no module imports drizzle-orm, the tables
 * or the database handles. biome's noRestrictedImports (biome.jsonc) says so while editing; this
 * test reads every import itself, so that a rule switched off for a file does not go unnoticed.
 */
import { expect, test } from 'bun:test';
import { Glob } from 'bun';
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = join(import.meta.dir, '../..');
/** The modules only src/storage/ may import: the tables and the database handles. */
const STORAGE_INSIDES = ['schema', 'schema-pg', 'db', 'pg'].map((m) => `src/storage/${m}`);

function forbiddenImports(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  const specs = [...text.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)].map((m) => m[1]!);
  return specs.filter((spec) => {
    if (spec === 'drizzle-orm' || spec.startsWith('drizzle-orm/')) return true;
    if (!spec.startsWith('.')) return false;
    const target = relative(root, resolve(dirname(join(root, file)), spec)).replace(/\.ts$/, '');
    return STORAGE_INSIDES.includes(target);
  });
}

test('no module outside src/storage/ imports drizzle-orm, the tables or the database handles', () => {
  const offenders: string[] = [];
  for (const file of new Glob('src/**/*.ts').scanSync(root)) {
    if (file.startsWith('src/storage/')) continue;
    for (const spec of forbiddenImports(file)) offenders.push(`${file}: ${spec}`);
  }
  expect(offenders).toEqual([]);
});

test('the check sees an import it must refuse', () => {
  expect(new Set(forbiddenImports('src/storage/open.ts'))).toEqual(new Set(['./db', './pg']));
  expect(forbiddenImports('src/storage/catalog.ts')).toContain('drizzle-orm');
});
