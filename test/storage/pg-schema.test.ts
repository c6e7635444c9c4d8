/**
 * The PostgreSQL dialect of the catalog (issue 33) on a real server (test/pg.ts): the embedded
 * migrations make every table of the SQLite schema, nodes starting at once migrate once, full-text
 * search runs on the tsvector column, vectors keep their bytes, and the webhook outbox triggers
 * record what SQLite's record.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { getTableConfig, SQLiteTable } from 'drizzle-orm/sqlite-core';
import { Client } from 'pg';
import { migratePostgres } from '../../src/storage/pg';
import * as sqliteSchema from '../../src/storage/schema';
import { freshPostgresDatabase, type TestDatabase } from '../pg';

let pg: TestDatabase;
let c: Client;

beforeAll(async () => {
  pg = await freshPostgresDatabase();
  console.log(`PostgreSQL: ${pg.server}`);
  c = new Client({ connectionString: pg.url });
  await c.connect();
});
afterAll(async () => {
  await c?.end();
  await pg?.drop();
});

const q = async (text: string, values: unknown[] = []) => (await c.query(text, values)).rows;

describe('PostgreSQL schema', () => {
  test('three nodes migrating at once apply each migration once; every table and column of the SQLite schema is there', async () => {
    await Promise.all([migratePostgres(pg.url), migratePostgres(pg.url), migratePostgres(pg.url)]);
    await migratePostgres(pg.url);
    const applied = await q('SELECT hash FROM drizzle.__drizzle_migrations');
    const { PG_MIGRATIONS } = await import('../../src/storage/migrations-pg.generated');
    expect(applied.length).toBe(PG_MIGRATIONS.length);

    const columns = await q(
      `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public'`,
    );
    const have = new Set(columns.map((r) => `${r.table_name}.${r.column_name}`));
    const want = (Object.values(sqliteSchema) as unknown[])
      .filter((v): v is SQLiteTable => v instanceof SQLiteTable)
      .flatMap((t) => {
        const cfg = getTableConfig(t);
        return cfg.columns.map((col) => `${cfg.name}.${col.name}`);
      });
    expect(want.length).toBeGreaterThan(100);
    expect(want.filter((w) => !have.has(w))).toEqual([]);
  });

  test('full-text search: English stems on the generated tsvector, served by its GIN index', async () => {
    await seedVideo('v1');
    await q(
      `INSERT INTO segments (video_id, kind, start, "end", text) VALUES
       ('v1', 'transcript', 0, 2, 'The dogs were running across the park'),
       ('v1', 'ocr', 3, 4, 'EXIT ONLY'),
       ('v1', 'transcript', 5, 6, 'a cat sleeps')`,
    );
    const hits = await q(
      `SELECT text FROM segments WHERE text_search @@ plainto_tsquery('english', $1) ORDER BY start`,
      ['dog runs'],
    );
    expect(hits.map((h) => h.text)).toEqual(['The dogs were running across the park']);
    const index = await q(`SELECT indexdef FROM pg_indexes WHERE indexname = 'segments_text_search_idx'`);
    expect(index[0].indexdef).toContain('USING gin (text_search)');
    // A transcript line longer than a btree entry can hold is stored (the label index covers objects only).
    await q(`INSERT INTO segments (video_id, kind, start, "end", text) VALUES ('v1', 'transcript', 7, 9, $1)`, [
      'word '.repeat(4000),
    ]);
  });

  test('vectors and face descriptors keep their bytes (bytea)', async () => {
    const bytes = Buffer.from(Int8Array.from([-128, -1, 0, 1, 127]).buffer);
    await q(`INSERT INTO segment_vectors (video_id, vector) VALUES ('v1', $1)`, [bytes]);
    const [row] = await q(`SELECT vector FROM segment_vectors WHERE video_id = 'v1'`);
    expect(Buffer.isBuffer(row.vector)).toBe(true);
    expect([...new Int8Array(row.vector.buffer, row.vector.byteOffset, row.vector.length)]).toEqual([
      -128, -1, 0, 1, 127,
    ]);
  });

  test('webhook outbox triggers: ready and removed are recorded for a listened index; a deleted index stops its retries', async () => {
    await q(`INSERT INTO webhook_settings (id, default_url) VALUES (1, 'https://hooks.example/default')`);
    await q(`UPDATE videos SET status = 'ready' WHERE id = 'v1'`);
    await q(`UPDATE videos SET status = 'ready' WHERE id = 'v1'`); // no change of status: no second event
    await q(`INSERT INTO index_webhooks (index_id, url, updated_at) VALUES ('i1', 'https://hooks.example/i1', now())`);
    await seedVideo('v2', 'i1', false);
    await q(`UPDATE videos SET status = 'failed', error = 'bad file' WHERE id = 'v2'`);
    await q(`DELETE FROM videos WHERE id = 'v1'`);
    const events = await q('SELECT video_id, event, status, error, url, state FROM webhook_events ORDER BY id');
    expect(events).toEqual([
      {
        video_id: 'v1',
        event: 'video.ready',
        status: 'ready',
        error: null,
        url: 'https://hooks.example/default',
        state: 'pending',
      },
      {
        video_id: 'v2',
        event: 'video.failed',
        status: 'failed',
        error: 'bad file',
        url: 'https://hooks.example/i1',
        state: 'pending',
      },
      {
        video_id: 'v1',
        event: 'video.removed',
        status: 'removed',
        error: null,
        url: 'https://hooks.example/i1',
        state: 'pending',
      },
    ]);
    await q(`UPDATE media_indexes SET deleted_at = now() WHERE id = 'i1'`);
    const states = await q('SELECT state, last_error FROM webhook_events ORDER BY id');
    expect(states.every((s) => s.state === 'failed' && s.last_error === 'stopped: the index was deleted')).toBe(true);
  });
});

/** A user, an index and a video (with a stored file unless told), if not there yet. */
async function seedVideo(id: string, indexId = 'i1', stored = true): Promise<void> {
  await q(`INSERT INTO users (id, name, created_at) VALUES ('u1', 'ann', now()) ON CONFLICT DO NOTHING`);
  await q(
    `INSERT INTO media_indexes (id, user_id, name, created_at) VALUES ($1, 'u1', $1, now()) ON CONFLICT DO NOTHING`,
    [indexId],
  );
  await q(
    `INSERT INTO videos (id, index_id, user_id, source_url, file_name, storage_path, status, uploaded_at, updated_at)
     VALUES ($1, $2, 'u1', 'https://example/x.mp4', 'x.mp4', $3, 'processing', now(), now())`,
    [id, indexId, stored ? `media/${id}/source.mp4` : null],
  );
}

test('VIDQ_TEST_PG=throwaway (as on a machine with no server): the harness starts a throwaway cluster from the machine binaries', () => {
  const script = `
    import { freshPostgresDatabase } from ${JSON.stringify(join(import.meta.dir, '../pg.ts'))};
    import { Client } from 'pg';
    const db = await freshPostgresDatabase();
    const c = new Client({ connectionString: db.url });
    await c.connect();
    const [row] = (await c.query('SELECT current_database() AS name, version() AS v')).rows;
    await c.end();
    await db.drop();
    console.log(JSON.stringify({ server: db.server, name: row.name, v: row.v }));
  `;
  const run = Bun.spawnSync([process.execPath, '-e', script], {
    env: { ...process.env, VIDQ_TEST_PG: 'throwaway' },
    cwd: join(import.meta.dir, '../..'),
    timeout: 120_000,
  });
  expect(run.stderr.toString()).toBe('');
  const out = JSON.parse(run.stdout.toString().trim().split('\n').at(-1)!);
  expect(out.server).toMatch(/^a throwaway cluster \(PostgreSQL \d+, port \d+\)$/);
  expect(out.name).toMatch(/^vidq_t_/);
  expect(out.v).toContain('PostgreSQL');
}, 130_000);
