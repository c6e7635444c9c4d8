/**
 * Migrations on databases made by older versions. The webhook outbox triggers used to be created
 * at every start with CREATE TRIGGER IF NOT EXISTS (so a changed trigger never reached an existing
 * database); a migration now drops and recreates them. A database migrated up to the migration
 * before it, holding the triggers an older version made, must end with exactly the triggers of a
 * new database, and they must fire.
 */
import { Database } from 'bun:sqlite';
import { afterEach, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { drizzle } from 'drizzle-orm/bun-sqlite';
import { type Db, migrate, openDatabase } from '../../src/storage/db';
import { MIGRATIONS } from '../../src/storage/migrations.generated';
import * as schema from '../../src/storage/schema';

const URL_OF = (ref: string) =>
  `COALESCE((SELECT url FROM index_webhooks WHERE index_id = ${ref}.index_id), (SELECT default_url FROM webhook_settings WHERE id = 1))`;
const NOW_MS = "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)";

/** What vidq ran at every start before the triggers moved into a migration (src/webhooks/service.ts, ensureWebhookTriggers). */
const STARTUP_TRIGGERS_BEFORE = `
    CREATE TRIGGER IF NOT EXISTS webhook_video_status AFTER UPDATE OF status ON videos
    WHEN NEW.status IN ('ready', 'failed') AND OLD.status IS NOT NEW.status AND ${URL_OF('NEW')} IS NOT NULL
    BEGIN
      INSERT INTO webhook_events (user_id, index_id, video_id, event, file_name, status, error, url, created_at, next_attempt_at)
      VALUES (NEW.user_id, NEW.index_id, NEW.id, 'video.' || NEW.status, NEW.file_name, NEW.status, NEW.error, ${URL_OF('NEW')}, ${NOW_MS}, ${NOW_MS});
    END;
    CREATE TRIGGER IF NOT EXISTS webhook_url_removed AFTER DELETE ON index_webhooks
    BEGIN
      UPDATE webhook_events SET state = 'failed', last_error = 'stopped: the index''s webhook URL was removed'
      WHERE index_id = OLD.index_id AND url = OLD.url AND state = 'pending';
    END;
    CREATE TRIGGER IF NOT EXISTS webhook_url_changed AFTER UPDATE OF url ON index_webhooks
    WHEN OLD.url IS NOT NEW.url
    BEGIN
      UPDATE webhook_events SET state = 'failed', last_error = 'stopped: the index''s webhook URL was changed'
      WHERE index_id = OLD.index_id AND url = OLD.url AND state = 'pending';
    END;
    CREATE TRIGGER IF NOT EXISTS webhook_index_deleted AFTER UPDATE OF deleted_at ON media_indexes
    WHEN NEW.deleted_at IS NOT NULL
    BEGIN
      UPDATE webhook_events SET state = 'failed', last_error = 'stopped: the index was deleted'
      WHERE index_id = NEW.id AND state = 'pending';
    END;
    CREATE TRIGGER IF NOT EXISTS webhook_index_purged AFTER DELETE ON media_indexes
    BEGIN
      UPDATE webhook_events SET state = 'failed', last_error = 'stopped: the index was deleted'
      WHERE index_id = OLD.id AND state = 'pending';
    END;
    CREATE TRIGGER IF NOT EXISTS webhook_video_removed AFTER DELETE ON videos
    WHEN OLD.storage_path IS NOT NULL AND ${URL_OF('OLD')} IS NOT NULL
    BEGIN
      INSERT INTO webhook_events (user_id, index_id, video_id, event, file_name, status, error, url, created_at, next_attempt_at)
      VALUES (OLD.user_id, OLD.index_id, OLD.id, 'video.removed', OLD.file_name, 'removed', NULL, ${URL_OF('OLD')}, ${NOW_MS}, ${NOW_MS});
    END;
`;

/**
 * Two of the six (the first webhooks version made only these), the status trigger in a different,
 * older form that records an event with no listener: the migration must replace it.
 */
const OUTDATED_TRIGGERS = `
    CREATE TRIGGER IF NOT EXISTS webhook_video_status AFTER UPDATE OF status ON videos
    WHEN NEW.status IN ('ready', 'failed')
    BEGIN
      INSERT INTO webhook_events (user_id, index_id, video_id, event, file_name, status, error, url, created_at, next_attempt_at)
      VALUES (NEW.user_id, NEW.index_id, NEW.id, 'video.' || NEW.status, NEW.file_name, NEW.status, NEW.error, COALESCE(${URL_OF('NEW')}, ''), ${NOW_MS}, ${NOW_MS});
    END;
    CREATE TRIGGER IF NOT EXISTS webhook_video_removed AFTER DELETE ON videos
    WHEN OLD.storage_path IS NOT NULL AND ${URL_OF('OLD')} IS NOT NULL
    BEGIN
      INSERT INTO webhook_events (user_id, index_id, video_id, event, file_name, status, error, url, created_at, next_attempt_at)
      VALUES (OLD.user_id, OLD.index_id, OLD.id, 'video.removed', OLD.file_name, 'removed', NULL, ${URL_OF('OLD')}, ${NOW_MS}, ${NOW_MS});
    END;
`;

const TRIGGERS_MIGRATION = MIGRATIONS.findIndex((m) => m.sql.includes('CREATE TRIGGER webhook_video_status'));

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function dbFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'vidq-migrations-'));
  dirs.push(dir);
  return join(dir, 'vidq.db');
}

/** The webhook triggers as SQLite stores them. */
function triggersOf(db: Db): { name: string; tbl_name: string; sql: string }[] {
  return db.$client
    .query(
      "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'webhook_%' ORDER BY name",
    )
    .all() as { name: string; tbl_name: string; sql: string }[];
}

/** A database as an older version left it: migrated up to the one before the triggers' migration, with its start-up triggers and some data. */
function olderDatabase(file: string, startupTriggers: string): void {
  const sqlite = new Database(file, { create: true, strict: true });
  const db = drizzle({ client: sqlite, schema }) as Db;
  migrate(db, MIGRATIONS.slice(0, TRIGGERS_MIGRATION));
  if (startupTriggers) sqlite.exec(startupTriggers);
  sqlite.exec(`
    INSERT INTO users (id, name, credits, created_at) VALUES ('u1', 'ann', NULL, 0);
    INSERT INTO media_indexes (id, user_id, name, created_at) VALUES ('i1', 'u1', 'demo', 0);
    INSERT INTO videos (id, index_id, user_id, source_url, file_name, storage_path, status, uploaded_at, updated_at)
      VALUES ('v1', 'i1', 'u1', 'https://example.com/a.mp4', 'a.mp4', 'videos/v1.mp4', 'processing', 0, 0),
             ('v2', 'i1', 'u1', 'https://example.com/b.mp4', 'b.mp4', 'videos/v2.mp4', 'processing', 0, 0);
  `);
  sqlite.close();
}

const events = (db: Db) =>
  db.$client.query('SELECT video_id, event, url, state, last_error FROM webhook_events ORDER BY id').all() as {
    video_id: string;
    event: string;
    url: string;
    state: string;
    last_error: string | null;
  }[];

describe('webhook triggers come from a migration', () => {
  test('a new database has all six', () => {
    expect(TRIGGERS_MIGRATION).toBeGreaterThan(0);
    const db = openDatabase(dbFile());
    expect(triggersOf(db).map((t) => t.name)).toEqual([
      'webhook_index_deleted',
      'webhook_index_purged',
      'webhook_url_changed',
      'webhook_url_removed',
      'webhook_video_removed',
      'webhook_video_status',
    ]);
    db.$client.close();
  });

  for (const [older, startup] of [
    ['the last start-up triggers', STARTUP_TRIGGERS_BEFORE],
    ['two triggers, one of them outdated', OUTDATED_TRIGGERS],
    ['no triggers (never started as a server)', ''],
  ] as const)
    test(`a database left with ${older} ends with the same triggers as a new one, and they fire`, () => {
      const fresh = openDatabase(dbFile());
      const expected = triggersOf(fresh);
      fresh.$client.close();

      const file = dbFile();
      olderDatabase(file, startup);
      const db = openDatabase(file);
      expect(triggersOf(db)).toEqual(expected);
      const applied = db.$client.query('SELECT COUNT(*) AS n FROM __drizzle_migrations').get() as { n: number };
      expect(applied.n).toBe(MIGRATIONS.length);

      const run = (sql: string) => db.$client.exec(sql);
      // No listener: nothing recorded.
      run("UPDATE videos SET status = 'failed', error = 'x' WHERE id = 'v2'");
      expect(events(db)).toEqual([]);
      // The server's default URL listens: ready recorded once.
      run("INSERT INTO webhook_settings (id, default_url) VALUES (1, 'https://hooks.example/default')");
      run("UPDATE videos SET status = 'ready' WHERE id = 'v1'");
      run("UPDATE videos SET status = 'ready' WHERE id = 'v1'");
      expect(events(db)).toEqual([
        {
          video_id: 'v1',
          event: 'video.ready',
          url: 'https://hooks.example/default',
          state: 'pending',
          last_error: null,
        },
      ]);
      // The index's own URL wins; changing it stops the pending events to the old one.
      run("INSERT INTO index_webhooks (index_id, url, updated_at) VALUES ('i1', 'https://hooks.example/one', 0)");
      run("UPDATE videos SET status = 'processing' WHERE id = 'v1'");
      run("UPDATE videos SET status = 'ready' WHERE id = 'v1'");
      run("UPDATE index_webhooks SET url = 'https://hooks.example/two' WHERE index_id = 'i1'");
      expect(events(db)[1]).toMatchObject({ url: 'https://hooks.example/one', state: 'failed' });
      expect(events(db)[1]?.last_error).toContain('changed');
      // A stored video's removal is announced to the current URL; removing the URL stops it.
      run("DELETE FROM videos WHERE id = 'v2'");
      expect(events(db)[2]).toMatchObject({ video_id: 'v2', event: 'video.removed', url: 'https://hooks.example/two' });
      run("DELETE FROM index_webhooks WHERE index_id = 'i1'");
      expect(events(db)[2]).toMatchObject({ state: 'failed' });
      expect(events(db)[2]?.last_error).toContain('removed');
      // Deleting the index (soft, then for good) stops what is still pending for it.
      run("UPDATE videos SET status = 'failed' WHERE id = 'v1'");
      run("UPDATE media_indexes SET deleted_at = 1 WHERE id = 'i1'");
      expect(events(db)[3]).toMatchObject({
        event: 'video.failed',
        state: 'failed',
        last_error: 'stopped: the index was deleted',
      });
      run("UPDATE webhook_events SET state = 'pending', last_error = NULL WHERE id = 4");
      run('PRAGMA foreign_keys = OFF');
      run("DELETE FROM media_indexes WHERE id = 'i1'");
      expect(events(db)[3]).toMatchObject({ state: 'failed', last_error: 'stopped: the index was deleted' });
      db.$client.close();
    });

  test('opening a migrated database again changes nothing', () => {
    const file = dbFile();
    const first = openDatabase(file);
    const before = triggersOf(first);
    first.$client.close();
    const again = openDatabase(file);
    expect(triggersOf(again)).toEqual(before);
    expect((again.$client.query('SELECT COUNT(*) AS n FROM __drizzle_migrations').get() as { n: number }).n).toBe(
      MIGRATIONS.length,
    );
    again.$client.close();
  });
});
