/**
 * --database / VIDQ_DATABASE_URL (issue 33). Absent: the embedded SQLite file, as always. A
 * PostgreSQL URL is checked when the config loads; every command opens that catalog at start and
 * stops with the reason when it cannot. The multi-node behaviour is in test/cluster/.
 */
import { describe, expect, test } from 'bun:test';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig, redactUrl } from '../../src/config';
import { clip, getJson, postJson, startTestServer } from '../helpers';
import { freshPostgresDatabase } from '../pg';

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

  // Every command opens the catalog the same way: a server that does not answer stops it at start.
  for (const args of [['serve'], ['worker'], ['user', 'create', '--name', 'ann']])
    test(`vidq ${args.join(' ')} with a PostgreSQL server that does not answer says so, without the password`, () => {
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

  test('serve on PostgreSQL: a stored video is analysed through pg-boss, answered, and removed, with no SQLite file', async () => {
    const pg = await freshPostgresDatabase();
    const srv = await startTestServer({ database: pg.url, 'analysis-workers': '1' });
    try {
      expect(srv.server.service.catalog.dialect).toBe('postgres');
      expect(srv.server.service.queue.kind).toBe('pg-boss');
      const up = await fetch(`${srv.url}/upload?index=pg&filename=chaplin.mp4`, {
        method: 'POST',
        headers: { authorization: `Bearer ${srv.token}`, 'content-type': 'video/mp4' },
        body: Bun.file(clip('chaplin-bw.mp4')),
      });
      expect(up.status).toBe(200);
      const key = ((await up.json()) as { data: { key: string } }).data.key;
      const indexId = (await getJson(srv.url, `/indexes?token=${srv.token}`)).body[0].index_id as string;
      const resources = async () =>
        (await getJson(srv.url, `/index-resources?token=${srv.token}&index=${indexId}`)).body as {
          file_id: string;
          status: string;
        }[];
      const deadline = Date.now() + 240_000;
      while ((await resources())[0]?.status !== 'ready' && Date.now() < deadline) await Bun.sleep(500);
      expect((await resources())[0]).toMatchObject({ file_id: key, status: 'ready' });
      const asked = await postJson(srv.url, '/inquire', { token: srv.token, index: indexId, prompt: 'Who is shown?' });
      expect(asked.status).toBe(200);
      expect(asked.body.evidence[0]?.video_id).toBe(key);
      const removed = await postJson(srv.url, '/remove-from-index', {
        token: srv.token,
        project_id: indexId,
        video_id: key,
      });
      expect(removed.status).toBe(200);
      expect(await resources()).toEqual([]);
      expect(existsSync(join(srv.dataDir, 'vidq.db'))).toBe(false);
    } finally {
      await srv.stop();
      await pg.drop();
    }
  }, 300_000);
});
