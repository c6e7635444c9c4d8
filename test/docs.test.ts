/**
 * The documentation: README.md is one screen with the two commands CI runs, every link in it and
 * in docs/ resolves (a file of the repository and, with `#…`, a heading of that file), and
 * docs/layout.md names every folder of src/. External links cannot be fetched here (no network in
 * tests): they are checked to be well-formed https URLs.
 */
import { describe, expect, test } from 'bun:test';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dir, '..');
const DOCS = join(ROOT, 'docs');
const pages = [
  join(ROOT, 'README.md'),
  ...readdirSync(DOCS)
    .filter((f) => f.endsWith('.md'))
    .map((f) => join(DOCS, f)),
];

/** The text outside fenced code blocks and inline code (links there are examples, not links). */
function prose(md: string): string {
  return md.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of prose(readFileSync(file, 'utf8')).matchAll(/^#{1,6}\s+(.+)$/gm)) {
    const base = slug(m[1]!.replace(/`/g, ''));
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  return out;
}

function linksOf(file: string): string[] {
  return [...prose(readFileSync(file, 'utf8')).matchAll(/\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!);
}

describe('documentation', () => {
  test('every link in README.md and docs/ resolves', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const page of pages) {
      const at = relative(ROOT, page);
      for (const link of linksOf(page)) {
        checked++;
        if (/^[a-z]+:/i.test(link)) {
          if (!/^https:\/\/[^\s/]+\.[^\s/]+/.test(link) && !link.startsWith('mailto:'))
            broken.push(`${at}: ${link} is not an https URL`);
          continue;
        }
        const [path, anchor] = link.split('#') as [string, string | undefined];
        const target = path === '' ? page : resolve(dirname(page), decodeURIComponent(path));
        if (!target.startsWith(ROOT) || !existsSync(target)) {
          broken.push(`${at}: ${link} (no such file)`);
          continue;
        }
        if (anchor !== undefined && !(statSync(target).isFile() && anchorsOf(target).has(anchor)))
          broken.push(`${at}: ${link} (no heading #${anchor} in ${relative(ROOT, target)})`);
      }
    }
    expect(broken).toEqual([]);
    expect(checked).toBeGreaterThan(pages.length);
  });

  test('README.md fits on a screen: what vidq is, the two commands CI expects, a first question, the links', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(readme.split('\n').length).toBeLessThanOrEqual(60);
    expect(readme).toContain('npm ci && npm start');
    // .ci/run runs `npm test` as the README's test command.
    expect(readme).toContain('npm ci && npm test');
    expect(readme).toMatch(/vidq ask /);
    for (const page of pages.filter((p) => p.startsWith(DOCS)))
      expect({ page: relative(ROOT, page), linked: readme.includes(`](${relative(ROOT, page)})`) }).toEqual({
        page: relative(ROOT, page),
        linked: true,
      });
  });

  test('docs/layout.md names every folder of src/', () => {
    const layout = readFileSync(join(DOCS, 'layout.md'), 'utf8');
    const folders: string[] = [];
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true }))
        if (e.isDirectory()) {
          folders.push(`${relative(ROOT, join(dir, e.name))}/`);
          walk(join(dir, e.name));
        }
    };
    walk(join(ROOT, 'src'));
    expect(folders.length).toBeGreaterThan(10);
    expect(folders.filter((f) => !new RegExp(`^${f.replace(/[.]/g, '\\.')}\\s`, 'm').test(layout))).toEqual([]);
  });
});
