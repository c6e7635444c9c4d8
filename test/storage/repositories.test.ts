/**
 * The dialect-neutral repositories (issue 33) on both databases: the same tests on the embedded
 * SQLite file and on a real PostgreSQL (test/pg.ts: a fresh database of its own, dropped after).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq, sql } from 'drizzle-orm';
import type { Catalog } from '../../src/storage/catalog';
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
import {
  insertUploadGrant,
  releaseUploadGrant,
  takeUploadGrant,
  uploadGrant,
} from '../../src/storage/repositories/grants';
import {
  appearanceCount,
  appearancesIn,
  appearancesInVideo,
  hasAppearance,
  activePerson,
  mergePeople,
  personNames,
  setPersonName,
  splitAppearance,
} from '../../src/storage/repositories/people';
import { CATALOGS, type OpenedCatalog } from '../dialects';

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

for (const dialect of CATALOGS)
  describe(`repositories on ${dialect.name}`, () => {
    let opened: OpenedCatalog;
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

    test('people: the access-checked lookup, appearances in time order, naming, merging and splitting', async () => {
      const a = await seed(c, 'faces');
      const other = await seed(c, 'stranger');
      const { people, personAppearances, segments, mediaIndexes } = c.t;
      const now = new Date();
      const segIds: number[] = [];
      await c.run(async (db) => {
        await db.insert(people).values([
          { id: 'p_ann', indexId: a.index, userId: a.user, name: 'Ann', createdAt: now },
          { id: 'p_bob', indexId: a.index, userId: a.user, name: null, createdAt: now },
        ]);
        for (const [start, person] of [
          [20, 'p_ann'],
          [5, 'p_ann'],
          [12, 'p_bob'],
        ] as const) {
          const [row] = await db
            .insert(segments)
            .values({
              videoId: a.video,
              kind: 'face',
              start,
              end: start + 2,
              text: 'face',
              extra: { best_t: start + 1 },
            })
            .returning({ id: segments.id });
          segIds.push(row!.id);
          await db.insert(personAppearances).values({
            segmentId: row!.id,
            personId: person,
            videoId: a.video,
            indexId: a.index,
            descriptor: Buffer.from([1, 2, 3, 4]),
          });
        }
      });
      expect(typeof segIds[0]).toBe('number');

      expect((await activePerson(c, a.index, 'p_ann', a.user))?.name).toBe('Ann');
      expect(await activePerson(c, a.index, 'p_ann', other.user)).toBeUndefined();
      expect((await activePerson(c, a.index, 'p_ann', null))?.id).toBe('p_ann');
      const apps = await appearancesIn(c, a.index);
      expect(apps.map((x) => [x.person_id, x.start])).toEqual([
        ['p_ann', 5],
        ['p_bob', 12],
        ['p_ann', 20],
      ]);
      expect(apps[0]).toMatchObject({ video_id: a.video, file_name: 'a.mp4', end: 7, extra: { best_t: 6 } });
      expect((await appearancesIn(c, a.index, 'p_bob')).map((x) => x.appearance_id)).toEqual([segIds[2]!]);
      expect([...(await personNames(c, a.index)).entries()].sort()).toEqual([
        ['p_ann', 'Ann'],
        ['p_bob', null],
      ]);
      expect(await appearanceCount(c, 'p_ann')).toBe(2);
      expect(await hasAppearance(c, 'p_ann', segIds[2]!)).toBe(false);
      expect(await hasAppearance(c, 'p_bob', segIds[2]!)).toBe(true);

      await setPersonName(c, 'p_bob', 'Bob');
      await mergePeople(c, 'p_bob', 'p_ann', 'Ann');
      expect(await appearanceCount(c, 'p_ann')).toBe(3);
      expect(await activePerson(c, a.index, 'p_bob', null)).toBeUndefined();

      await splitAppearance(c, { id: 'p_new', indexId: a.index, userId: a.user }, segIds[0]!);
      expect((await appearancesInVideo(c, a.video)).map((x) => [x.id, x.name, x.start])).toEqual([
        ['p_ann', 'Ann', 5],
        ['p_ann', 'Ann', 12],
        ['p_new', null, 20],
      ]);

      // A deleted index hides its people.
      await c.run(async (db) => {
        await db.update(mediaIndexes).set({ deletedAt: new Date() }).where(eq(mediaIndexes.id, a.index));
      });
      expect(await activePerson(c, a.index, 'p_ann', a.user)).toBeUndefined();
    });

    test('upload grants: the per-user cap holds for requests at once; a grant is taken once, released, taken again; day-old grants go', async () => {
      const a = await seed(c, 'grants');
      const now = new Date();
      const grant = (id: string, at = now) => ({
        id,
        userId: a.user,
        indexRef: 'home',
        fileName: 'x.mp4',
        sizeBytes: 5_000_000_000, // above 2^32: kept whole in both dialects
        expiresAt: new Date(at.getTime() + 3_600_000),
        createdAt: at,
      });
      const old = new Date(now.getTime() - 3 * 86_400_000);
      expect(await insertUploadGrant(c, grant('g_old', old), 0, old)).toBeNull();
      const results = await Promise.all(
        ['g1', 'g2', 'g3', 'g4', 'g5'].map((id) => insertUploadGrant(c, grant(id), 2, now)),
      );
      expect(results.filter((r) => r === null).length).toBe(2);
      expect(results.filter((r) => r === 2).length).toBe(3);
      expect(await uploadGrant(c, 'g_old')).toBeUndefined();

      const kept = results.flatMap((r, i) => (r === null ? [`g${i + 1}`] : []));
      const g = (await uploadGrant(c, kept[0]!))!;
      expect(g).toMatchObject({ userId: a.user, sizeBytes: 5_000_000_000, usedAt: null });
      expect(g.expiresAt.getTime()).toBe(now.getTime() + 3_600_000);
      const takes = await Promise.all([takeUploadGrant(c, g.id, now), takeUploadGrant(c, g.id, now)]);
      expect(takes.filter(Boolean).length).toBe(1);
      expect(takes.find(Boolean)!.usedAt!.getTime()).toBe(now.getTime());
      await releaseUploadGrant(c, g.id);
      expect((await takeUploadGrant(c, g.id, now))?.id).toBe(g.id);
      // A used grant no longer counts against the cap.
      expect(await insertUploadGrant(c, grant('g6'), 2, now)).toBeNull();
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
