/**
 * The dialect-neutral repositories (issue 33) on both databases: the same tests on the embedded
 * SQLite file and on a real PostgreSQL (test/pg.ts: a fresh database of its own, dropped after).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq, sql } from 'drizzle-orm';
import { type Catalog, postgresCatalog, sqliteCatalog } from '../../src/storage/catalog';
import { openDatabase } from '../../src/storage/db';
import { openPostgres } from '../../src/storage/pg';
import {
  dueWebhookEventIds,
  indexWebhookUrl,
  markWebhookDelivered,
  markWebhookFailed,
  putWebhookSecret,
  setDefaultWebhookUrl,
  setIndexWebhookUrl,
  webhookEvent,
  webhookSecretOf,
} from '../../src/storage/repositories/webhooks';
import { freshPostgresDatabase } from '../pg';

interface Opened {
  catalog: Catalog;
  close(): Promise<void>;
}

const DIALECTS: { name: string; open(): Promise<Opened> }[] = [
  {
    name: 'SQLite',
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'vidq-repo-'));
      const db = openDatabase(join(dir, 'vidq.db'));
      return {
        catalog: sqliteCatalog(db),
        close: async () => {
          db.$client.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: 'PostgreSQL',
    async open() {
      const pg = await freshPostgresDatabase();
      const db = await openPostgres(pg.url);
      return {
        catalog: postgresCatalog(db),
        close: async () => {
          await db.$client.end();
          await pg.drop();
        },
      };
    },
  },
];

/** A user, an index of theirs and a video in it (stored, processing). */
async function seed(c: Catalog, n: string): Promise<{ user: string; index: string; video: string }> {
  const ids = { user: `u_${n}`, index: `i_${n}`, video: `v_${n}` };
  const now = new Date();
  const { users, mediaIndexes, videos } = c.t;
  await c.run(async (db) => {
    await db.insert(users).values({ id: ids.user, name: n, credits: null, createdAt: now });
    await db.insert(mediaIndexes).values({ id: ids.index, userId: ids.user, name: n, createdAt: now });
    await db.insert(videos).values({
      id: ids.video,
      indexId: ids.index,
      userId: ids.user,
      sourceUrl: 'https://example.com/a.mp4',
      fileName: 'a.mp4',
      storagePath: `media/${ids.video}/source.mp4`,
      status: 'processing',
      uploadedAt: now,
      updatedAt: now,
    });
  });
  return ids;
}

const setStatus = (c: Catalog, video: string, status: 'ready' | 'failed') =>
  c.run(async (db) => {
    await db.update(c.t.videos).set({ status, updatedAt: new Date() }).where(eq(c.t.videos.id, video));
  });

for (const dialect of DIALECTS)
  describe(`repositories on ${dialect.name}`, () => {
    let opened: Opened;
    let c: Catalog;
    beforeAll(async () => {
      opened = await dialect.open();
      c = opened.catalog;
    });
    afterAll(() => opened?.close());

    test('webhooks: an index URL is set, replaced and removed; a secret is stored and replaced', async () => {
      const a = await seed(c, 'hooks');
      expect(await indexWebhookUrl(c, a.index)).toBeNull();
      await setIndexWebhookUrl(c, a.index, 'https://one.example/h');
      await setIndexWebhookUrl(c, a.index, 'https://two.example/h');
      expect(await indexWebhookUrl(c, a.index)).toBe('https://two.example/h');
      await setIndexWebhookUrl(c, a.index, null);
      expect(await indexWebhookUrl(c, a.index)).toBeNull();

      expect(await webhookSecretOf(c, a.user)).toBeUndefined();
      await putWebhookSecret(c, a.user, 's1');
      await putWebhookSecret(c, a.user, 's2');
      expect(await webhookSecretOf(c, a.user)).toBe('s2');
    });

    test('webhooks: the triggers fill the outbox; due events come in turns (one per video, users and URLs alternating); delivered and failed leave it', async () => {
      await setDefaultWebhookUrl(c, 'https://default.example/h');
      const busy = await seed(c, 'busy');
      const busy2 = await seed(c, 'busy2');
      // busy2's videos are the busy user's too: one user with many events.
      await c.run(async (db) => {
        await db.update(c.t.videos).set({ userId: busy.user }).where(eq(c.t.videos.id, busy2.video));
      });
      const calm = await seed(c, 'calm');
      await setIndexWebhookUrl(c, calm.index, 'https://calm.example/h');
      await setStatus(c, busy.video, 'ready');
      await setStatus(c, busy2.video, 'failed');
      await setStatus(c, calm.video, 'ready');
      await c.run(async (db) => {
        await db.delete(c.t.videos).where(eq(c.t.videos.id, busy.video)); // a second event of one video
      });

      const due = await dueWebhookEventIds(c, Date.now() + 1000, 10);
      const events = await Promise.all(due.map((d) => webhookEvent(c, d.id)));
      // busy's removal waits for its ready event (in order per video); calm's first event comes
      // before the busy user's second.
      expect(events.map((e) => [e!.videoId, e!.event])).toEqual([
        [busy.video, 'video.ready'],
        [calm.video, 'video.ready'],
        [busy2.video, 'video.failed'],
      ]);
      expect(events.map((e) => e!.url)).toEqual([
        'https://default.example/h',
        'https://calm.example/h',
        'https://default.example/h',
      ]);
      expect(
        events.every((e) => e!.createdAt instanceof Date && Math.abs(e!.createdAt.getTime() - Date.now()) < 60_000),
      ).toBe(true);
      expect(await dueWebhookEventIds(c, Date.now() - 60_000, 10)).toEqual([]);

      const at = new Date();
      await markWebhookDelivered(c, due[0]!.id, 1, at);
      await markWebhookFailed(c, due[1]!.id, {
        giveUp: false,
        attempts: 1,
        lastError: 'HTTP 500',
        nextAttemptAt: new Date(Date.now() + 3_600_000),
      });
      await markWebhookFailed(c, due[2]!.id, {
        giveUp: true,
        attempts: 9,
        lastError: 'gone',
        nextAttemptAt: new Date(),
      });
      const delivered = await webhookEvent(c, due[0]!.id);
      expect(delivered).toMatchObject({ state: 'delivered', attempts: 1, lastError: null });
      expect(delivered!.deliveredAt!.getTime()).toBe(at.getTime());
      expect(await webhookEvent(c, due[2]!.id)).toMatchObject({ state: 'failed', attempts: 9, lastError: 'gone' });
      // Now due: busy's removal (its ready event was delivered); calm's retry waits an hour.
      const next = await Promise.all(
        (await dueWebhookEventIds(c, Date.now() + 1000, 10)).map((d) => webhookEvent(c, d.id)),
      );
      expect(next.map((e) => [e!.videoId, e!.event])).toEqual([[busy.video, 'video.removed']]);
    });

    test('write: a body that throws leaves nothing; a statement from outside it meanwhile is not rolled back with it', async () => {
      const { users } = c.t;
      let opened!: () => void;
      const bodyOpen = new Promise<void>((resolve) => (opened = resolve));
      const outside = bodyOpen.then(() =>
        c.run(async (db) => {
          await db.insert(users).values({ id: 'u_outside', name: 'outside', createdAt: new Date() });
        }),
      );
      const failed = c
        .write(async (tx) => {
          await tx.run(async (db) => {
            await db.insert(users).values({ id: 'u_inside', name: 'inside', createdAt: new Date() });
          });
          opened();
          await Bun.sleep(30);
          // A write inside a write joins it.
          await tx.write((inner) =>
            inner.run(async (db) => {
              await db.insert(users).values({ id: 'u_inner', name: 'inner', createdAt: new Date() });
            }),
          );
          throw new Error('changed my mind');
        })
        .catch((e: Error) => e.message);
      expect(await failed).toBe('changed my mind');
      await outside;
      const names = (await c.run((db) => db.select({ id: users.id }).from(users))).map((u) => u.id);
      expect(names).toContain('u_outside');
      expect(names).not.toContain('u_inside');
      expect(names).not.toContain('u_inner');

      const made = await c.write(async (tx) => {
        await tx.run(async (db) => {
          await db.insert(users).values({ id: 'u_kept', name: 'kept', createdAt: new Date() });
        });
        return 'done';
      });
      expect(made).toBe('done');
      // Raw rows keep the driver's types (PostgreSQL's count is a bigint, as text): the repository converts.
      const [row] = await c.rows<{ n: number | string }>(sql`SELECT count(*) AS n FROM users WHERE id = ${'u_kept'}`);
      expect(Number(row!.n)).toBe(1);
    });
  });
