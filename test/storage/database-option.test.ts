/**
 * --database / VIDQ_DATABASE_URL (issue 33). Absent: the embedded SQLite file, as always. A
 * PostgreSQL URL is checked when the config loads, and refused at start (with the reason) for as
 * long as the PostgreSQL catalog is incomplete: no process runs half on one database.
 */
import { describe, expect, test } from 'bun:test';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig, redactUrl } from '../../src/config';

const root = join(import.meta.dir, '../..');

describe('--database', () => {
  test('absent: empty (the SQLite file in the data directory)', () => {
    expect(loadConfig({ 'data-dir': '/nonexistent-vidq' }, {}).database).toBe('');
  });

  test('a postgres:// or postgresql:// URL with a host and one database is taken', () => {
    for (const url of ['postgres://vidq@db.example:5432/vidq', 'postgresql://127.0.0.1/test']) {
      expect(loadConfig({ database: url }, {}).database).toBe(url);
    }
  });

  test('anything else is refused with what is wrong, without echoing a password', () => {
    const wrong: [string, RegExp][] = [
      ['mysql://db/vidq', /must be a postgres:\/\/ URL/],
      ['/var/lib/vidq.db', /must be a postgres:\/\/ URL/],
      ['postgres://db.example', /must name one database/],
      ['postgres://db.example/a/b', /must name one database/],
      ['postgres:///vidq', /must name the database host/],
    ];
    for (const [url, message] of wrong) {
      let err: unknown;
      try {
        loadConfig({ database: url }, {});
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toMatch(message);
    }
    expect(() => loadConfig({ database: 'mysql://root:hunter2@db/vidq' }, {})).toThrow(/root:\*\*\*@db/);
    expect(redactUrl('postgres://u:p%40ss@h:5432/d')).toBe('postgres://u:***@h:5432/d');
    expect(redactUrl('postgres://u@h/d')).toBe('postgres://u@h/d');
  });

  test('VIDQ_DATABASE_URL is the variable users set', () => {
    expect(loadConfig({}, { VIDQ_DATABASE_URL: 'postgres://h/d' }).database).toBe('postgres://h/d');
  });

  // Until the PostgreSQL catalog is complete (issue 33): serving is refused at start, with the
  // reason. The account commands run on it already (test/storage/cli-catalog.test.ts).
  for (const args of [['serve'], ['worker']])
    test(`vidq ${args.join(' ')} with a PostgreSQL URL stops at start and says what is not available yet`, () => {
      const data = mkdtempSync(join(tmpdir(), 'vidq-dburl-'));
      try {
        const run = Bun.spawnSync(
          [
            process.execPath,
            join(root, 'src/main.ts'),
            ...args,
            '--data-dir',
            data,
            '--database',
            'postgres://vidq:s3cret@127.0.0.1:5432/vidq',
          ],
          { env: { ...process.env, VIDQ_WORKER_CONFIG: '' }, timeout: 30_000 },
        );
        const err = run.stderr.toString();
        expect(run.exitCode).toBe(2);
        expect(err).toContain('the PostgreSQL catalog is not available yet');
        expect(err).toContain('postgres://vidq:***@127.0.0.1:5432/vidq');
        expect(err).not.toContain('s3cret');
        expect(existsSync(join(data, 'vidq.db'))).toBe(false);
      } finally {
        rmSync(data, { recursive: true, force: true });
      }
    });

  test('vidq user create with a PostgreSQL server that does not answer says so, without the password', () => {
    const data = mkdtempSync(join(tmpdir(), 'vidq-dburl-'));
    try {
      const run = Bun.spawnSync(
        [
          process.execPath,
          join(root, 'src/main.ts'),
          'user',
          'create',
          '--name',
          'ann',
          '--data-dir',
          data,
          '--database',
          'postgres://vidq:s3cret@127.0.0.1:1/vidq',
        ],
        { env: { ...process.env, VIDQ_WORKER_CONFIG: '' }, timeout: 30_000 },
      );
      const err = run.stderr.toString();
      expect(run.exitCode).toBe(2);
      expect(err).toContain('cannot open the PostgreSQL catalog');
      expect(err).toContain('postgres://vidq:***@127.0.0.1:1/vidq');
      expect(err).not.toContain('s3cret');
      expect(existsSync(join(data, 'vidq.db'))).toBe(false);
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  });
});
