/**
 * The core repositories (issue 33): accounts (users, tokens, credits), indexes and videos, on the
 * embedded SQLite file and on a real PostgreSQL (test/pg.ts: a fresh database of its own, dropped
 * after). The same tests on both: what they return, bad input, and that one user never sees
 * another's indexes or videos.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { AccountService } from '../../src/accounts/service';
import { hashToken } from '../../src/ids';
import { IndexService } from '../../src/indexes/service';
import type { Catalog } from '../../src/storage/catalog';
import { creditEventsOf, tokenByHash, userCount } from '../../src/storage/repositories/accounts';
import {
  activeIndexesNamed,
  existingIndexIds,
  indexesDeletedBefore,
  indexListing,
  indexOf,
  setIndexDeletedAt,
} from '../../src/storage/repositories/indexes';
import {
  activeVideo,
  activeVideoOf,
  failVideo,
  frameNear,
  placeOf,
  readyActiveVideos,
  segmentsByKind,
  timelineFrames,
  timelineSegments,
  transcriptCues,
  videoIdsOfIndex,
  videosOfIndex,
} from '../../src/storage/repositories/videos';
import {
  deleteIndexIfEmpty,
  deleteVideoRow,
  deleteVideoRows,
  existingVideoIds,
  failInterruptedTransfers,
  insertVideo,
  lockUserQuota,
  markVideoStored,
  setTransferProgress,
  storedBytesExcept,
  twinInIndex,
  userUsage,
  videoById,
  videoInIndex,
} from '../../src/storage/repositories/uploads';
import type { MediaIndex, User } from '../../src/storage/rows';
import { CATALOGS, type OpenedCatalog, statusOf } from '../dialects';

/** A video row in `index` of `user` (status ready unless told), uploaded at `t` seconds. */
async function addVideo(
  c: Catalog,
  index: MediaIndex,
  id: string,
  t: number,
  fields: {
    status?: 'ready' | 'processing' | 'downloading';
    durationSec?: number;
    analysis?: Record<string, unknown>;
  } = {},
): Promise<void> {
  const at = new Date(1_700_000_000_000 + t * 1000);
  await c.run(async (db) => {
    await db.insert(c.t.videos).values({
      id,
      indexId: index.id,
      userId: index.userId,
      sourceUrl: 'upload:',
      fileName: `${id}.mp4`,
      storagePath: `media/${id}/source.mp4`,
      status: fields.status ?? 'ready',
      durationSec: fields.durationSec ?? 10,
      analysis: fields.analysis ?? null,
      uploadedAt: at,
      updatedAt: at,
    });
  });
}

for (const dialect of CATALOGS)
  describe(`core repositories on ${dialect.name}`, () => {
    let opened: OpenedCatalog;
    let c: Catalog;
    let accounts: AccountService;
    let indexes: IndexService;
    beforeAll(async () => {
      opened = await dialect.open();
      c = opened.catalog;
      accounts = new AccountService(c);
      indexes = new IndexService(c);
    });
    afterAll(() => opened?.close());

    test('accounts: a user and its token; the token authenticates, is stored as a hash only, and is revoked once', async () => {
      const { user, token } = await accounts.createUser('  Ann  ', 5);
      expect(user).toMatchObject({ name: 'Ann', credits: 5 });
      expect(await accounts.getUser(user.id)).toEqual(user);
      expect((await accounts.authenticate(token)).id).toBe(user.id);
      const stored = await tokenByHash(c, hashToken(token));
      expect(stored?.hash).toBe(hashToken(token));
      expect(JSON.stringify(stored)).not.toContain(token);

      const second = await accounts.createToken(user.id);
      expect(second).not.toBe(token);
      const { tokenId } = await accounts.authenticateToken(second);
      expect(await accounts.isTokenLive(tokenId)).toBe(true);
      expect(await accounts.revokeToken(second)).toBe(true);
      expect(await accounts.revokeToken(second)).toBe(false);
      expect(await accounts.isTokenLive(tokenId)).toBe(false);
      expect(await statusOf(accounts.authenticate(second))).toBe(401);
      // The first token still works.
      expect((await accounts.authenticate(token)).id).toBe(user.id);
      expect(await userCount(c)).toBeGreaterThanOrEqual(1);
    });

    test('accounts: bad input is refused (names, credits, tokens, unknown users)', async () => {
      for (const name of ['', '   ', 'x'.repeat(101), 'a\u0000b', 'evil\u202etxt'])
        expect(await statusOf(accounts.createUser(name, null))).toBe(400);
      for (const credits of [-1, 1.5, Number.NaN, 2 ** 60])
        expect(await statusOf(accounts.createUser('c', credits))).toBe(400);
      for (const token of [undefined, null, '', 42, 'nope', 'x'.repeat(60)])
        expect(await statusOf(accounts.authenticate(token))).toBe(401);
      expect(await statusOf(accounts.createToken('u_nobody'))).toBe(404);
      expect(await statusOf(accounts.requireUser('u_nobody'))).toBe(404);
      expect(await statusOf(accounts.addCredits('u_nobody', 5))).toBe(404);
      expect(await statusOf(accounts.addCredits('u_nobody', 0))).toBe(400);
      expect(await accounts.revokeToken('never-issued')).toBe(false);
      expect(await accounts.getUser("u_x' OR '1'='1")).toBeUndefined();
    });

    test('credits: added, taken never below zero (also at once), refunded; every change is an event; unlimited stays unlimited', async () => {
      const { user } = await accounts.createUser('spender', 3);
      expect((await accounts.addCredits(user.id, 4)).credits).toBe(7);
      expect(await statusOf(accounts.addCredits(user.id, -8))).toBe(400);
      expect((await accounts.addCredits(user.id, -2)).credits).toBe(5);
      // Ten charges of 1 at once: exactly five pass.
      const charged = await Promise.all(Array.from({ length: 10 }, () => accounts.charge(user.id, 1, 'inquire')));
      expect(charged.filter(Boolean).length).toBe(5);
      expect((await accounts.getUser(user.id))?.credits).toBe(0);
      expect(await accounts.charge(user.id, 1, 'inquire')).toBe(false);
      expect(await accounts.charge(user.id, 0, 'free')).toBe(true);
      await accounts.refund(user.id, 2, 'inquire failed');
      expect((await accounts.getUser(user.id))?.credits).toBe(2);
      const events = await creditEventsOf(c, user.id);
      expect(events.map((e) => e.delta)).toEqual([3, 4, -2, -1, -1, -1, -1, -1, 2]);
      expect(events.reduce((sum, e) => sum + Number(e.delta), 0)).toBe(2);

      const rich = (await accounts.createUser('rich', null)).user;
      expect(await accounts.charge(rich.id, 1_000_000, 'inquire')).toBe(true);
      expect((await accounts.addCredits(rich.id, 5)).credits).toBeNull();
      await accounts.refund(rich.id, 1, 'inquire failed');
      expect((await accounts.getUser(rich.id))?.credits).toBeNull();
      expect(await accounts.charge('u_nobody', 1, 'inquire')).toBe(false);
    });

    test('indexes: created once by name, found by id or name, listed with counts, deleted and restored; bad names refused', async () => {
      const { user } = await accounts.createUser('indexer', null);
      const made = await indexes.create(user, 'Holidays', 'standard');
      expect(made.created).toBe(true);
      expect((await indexes.create(user, 'Holidays', 'standard')).created).toBe(false);
      expect(await statusOf(indexes.create(user, 'Holidays', 'performance'))).toBe(409);
      // Five requests at once create one index (PostgreSQL: a lock on the name; SQLite: the write lock).
      const all = await Promise.all(Array.from({ length: 5 }, () => indexes.create(user, 'Twice', 'standard')));
      expect(new Set(all.map((r) => r.index.id)).size).toBe(1);
      expect(all.filter((r) => r.created).length).toBe(1);
      for (const bad of ['', '  ', 'x'.repeat(201), 'a\u0007b', 'A'.repeat(64)])
        expect(await statusOf(indexes.create(user, bad, 'standard'))).toBe(400);

      const idx = made.index;
      expect((await indexes.resolve(user, idx.id, { byName: false })).id).toBe(idx.id);
      expect((await indexes.resolve(user, 'Holidays', { byName: true })).id).toBe(idx.id);
      expect(await statusOf(indexes.resolve(user, 'Holidays', { byName: false }))).toBe(404);
      await addVideo(c, idx, 'v_list_a', 1, { durationSec: 1.25 });
      await addVideo(c, idx, 'v_list_b', 2, { durationSec: 2.5 });
      const listed = await indexes.list(user.id, false);
      expect(listed.map((i) => i.name).sort()).toEqual(['Holidays', 'Twice']);
      expect(listed.find((i) => i.index_id === idx.id)).toMatchObject({
        count: 2,
        total_duration: 3.75,
        deleted: false,
      });
      expect((await indexes.resources(user.id, idx.id)).map((v) => v.id)).toEqual(['v_list_a', 'v_list_b']);

      await indexes.softDelete(user, idx.id);
      expect(await indexes.find(user, 'Holidays', { byName: true })).toBeUndefined();
      expect((await indexes.list(user.id, true)).find((i) => i.index_id === idx.id)?.deleted).toBe(true);
      expect((await indexesDeletedBefore(c, new Date(Date.now() + 60_000))).map((i) => i.id)).toContain(idx.id);
      expect(await indexesDeletedBefore(c, new Date(Date.now() - 60_000))).toEqual([]);
      // A new active index of the same name blocks the restore.
      const clash = await indexes.create(user, 'Holidays', 'standard');
      expect(await statusOf(indexes.restore(user, idx.id))).toBe(400);
      await setIndexDeletedAt(c, clash.index.id, new Date());
      expect((await indexes.restore(user, idx.id)).deletedAt).toBeNull();
      expect([...(await existingIndexIds(c, [idx.id, 'i_gone']))]).toEqual([idx.id]);
      expect((await indexes.forStreaming(user, 'Holidays')) as unknown).toEqual({
        error: 'this index is not compatible with streaming',
      });
      expect(await indexes.forStreaming(user, 'nowhere')).toEqual({ error: 'index does not exist' });
    });

    test('isolation: one user never sees, lists, resolves or reads another user\u2019s indexes and videos', async () => {
      const ann: User = (await accounts.createUser('ann', null)).user;
      const bob: User = (await accounts.createUser('bob', null)).user;
      const annIdx = (await indexes.create(ann, 'shared-name', 'standard')).index;
      const bobIdx = (await indexes.create(bob, 'shared-name', 'standard')).index;
      await addVideo(c, annIdx, 'v_ann', 1);
      await addVideo(c, bobIdx, 'v_bob', 1);

      expect((await indexes.resolve(ann, 'shared-name', { byName: true })).id).toBe(annIdx.id);
      expect((await indexes.resolve(bob, 'shared-name', { byName: true })).id).toBe(bobIdx.id);
      expect(await statusOf(indexes.resolve(bob, annIdx.id, { byName: true }))).toBe(404);
      expect(await indexOf(c, bob.id, annIdx.id, { byName: true, includeDeleted: true })).toBeUndefined();
      expect((await indexListing(c, bob.id, true)).map((r) => r.index.id)).toEqual([bobIdx.id]);

      expect((await activeVideoOf(c, ann.id, 'v_ann'))?.id).toBe('v_ann');
      expect(await activeVideoOf(c, bob.id, 'v_ann')).toBeUndefined();
      expect(await activeVideoOf(c, ann.id, 'v_bob')).toBeUndefined();
      expect((await activeVideo(c, 'v_bob', null))?.id).toBe('v_bob'); // a signed link: no user
      // A deleted index hides its videos, also from signed links.
      await indexes.softDelete(ann, annIdx.id);
      expect(await activeVideoOf(c, ann.id, 'v_ann')).toBeUndefined();
      expect(await activeVideo(c, 'v_ann', null)).toBeUndefined();

      // The command line's lookup across users: both indexes of that name, or one user's.
      await indexes.restore(ann, annIdx.id);
      expect((await activeIndexesNamed(c, 'shared-name')).map((i) => i.userId).sort()).toEqual([ann.id, bob.id].sort());
      expect(await activeIndexesNamed(c, 'shared-name', bob.id)).toEqual([{ id: bobIdx.id, userId: bob.id }]);
      expect(await activeIndexesNamed(c, annIdx.id, bob.id)).toEqual([]);
      expect(await activeIndexesNamed(c, "shared-name' OR '1'='1")).toEqual([]);
    });

    test('uploads: the row of a transfer, its progress, the stored commit, quotas, twins, removal and recovery', async () => {
      const { user } = await accounts.createUser('uploader', null);
      const idx = (await indexes.create(user, 'uploads', 'standard')).index;
      const other = (await accounts.createUser('other-uploader', null)).user;
      const otherIdx = (await indexes.create(other, 'uploads', 'standard')).index;
      const now = new Date();
      const row = (id: string, index: MediaIndex) => ({
        id,
        indexId: index.id,
        userId: index.userId,
        sourceUrl: 'upload:',
        fileName: `${id}.mp4`,
        status: 'downloading' as const,
        stage: 'uploading',
        progress: 0,
        uploadedAt: now,
        updatedAt: now,
      });
      await c.write(async (tx) => {
        await insertVideo(tx, row('u_one', idx));
        await insertVideo(tx, row('u_two', idx));
      });
      await insertVideo(c, row('u_theirs', otherIdx));
      // A second row with the same id is refused by the database (a key is never reused).
      await expect(insertVideo(c, row('u_one', idx))).rejects.toThrow();
      expect(await userUsage(c, user.id)).toEqual({ bytes: 0, waiting: 2 });

      await setTransferProgress(c, 'u_one', 'uploading', 42);
      expect(await videoById(c, 'u_one')).toMatchObject({ stage: 'uploading', progress: 42 });
      const info = {
        formatName: 'mov,mp4',
        durationSec: 12.5,
        fps: 25,
        width: 640,
        height: 360,
        videoCodec: 'h264',
        hasAudio: true,
        mimeType: 'video/mp4',
        ext: '.mp4',
      } as unknown as Parameters<typeof markVideoStored>[2]['info'];
      const big = 5_000_000_000; // above 2^32: kept whole in both dialects
      const stored = await c.write(async (tx) => {
        await lockUserQuota(tx, user.id);
        return markVideoStored(
          tx,
          'u_one',
          { rel: 'media/u_one/source.mp4', fileName: 'one.mp4', bytes: big, sha256: 'abc', info },
          true,
          now,
        );
      });
      expect(stored).toMatchObject({
        status: 'processing',
        stage: 'queued',
        sizeBytes: big,
        hasAudio: true,
        durationSec: 12.5,
      });
      expect(
        await markVideoStored(c, 'u_gone', { rel: 'x', fileName: 'x', bytes: 1, sha256: 'x', info }, false, now),
      ).toBeUndefined();
      expect(await userUsage(c, user.id)).toEqual({ bytes: big, waiting: 2 });
      expect(await storedBytesExcept(c, user.id, 'u_one')).toBe(0);
      expect(await storedBytesExcept(c, user.id, 'u_two')).toBe(big);
      expect(await userUsage(c, other.id)).toEqual({ bytes: 0, waiting: 1 });

      // The same bytes again in the index: the first is its twin; not across users or indexes.
      expect((await twinInIndex(c, idx.id, 'abc', 'u_two'))?.id).toBe('u_one');
      expect(await twinInIndex(c, idx.id, 'abc', 'u_one')).toBeUndefined();
      expect(await twinInIndex(c, otherIdx.id, 'abc', 'u_theirs')).toBeUndefined();
      expect((await videoInIndex(c, idx.id, 'u_one'))?.id).toBe('u_one');
      expect(await videoInIndex(c, idx.id, 'u_theirs')).toBeUndefined();
      expect(await videoInIndex(c, otherIdx.id, 'u_one')).toBeUndefined();

      // Recovery: transfers cut off become failed; which ids have rows.
      const failed = await failInterruptedTransfers(c, 'interrupted by a restart');
      expect(failed.sort()).toEqual(['u_theirs', 'u_two']);
      expect(await videoById(c, 'u_two')).toMatchObject({ status: 'failed', error: 'interrupted by a restart' });
      expect(await userUsage(c, user.id)).toEqual({ bytes: big, waiting: 1 });
      expect([...(await existingVideoIds(c, ['u_one', 'u_two', 'u_never']))].sort()).toEqual(['u_one', 'u_two']);
      expect(await existingVideoIds(c, [])).toEqual(new Set());

      // Removal: rows go, and so do the index's people left without appearances.
      const { people, personAppearances, segments } = c.t;
      await c.run(async (db) => {
        await db.insert(people).values([
          { id: 'p_only_one', indexId: idx.id, userId: user.id, name: null, createdAt: now },
          { id: 'p_elsewhere', indexId: idx.id, userId: user.id, name: null, createdAt: now },
        ]);
        for (const [video, person] of [
          ['u_one', 'p_only_one'],
          ['u_two', 'p_elsewhere'],
        ] as const) {
          const [seg] = await db
            .insert(segments)
            .values({ videoId: video, kind: 'face', start: 1, end: 2, text: 'face' })
            .returning({ id: segments.id });
          await db.insert(personAppearances).values({
            segmentId: seg!.id,
            personId: person,
            videoId: video,
            indexId: idx.id,
            descriptor: Buffer.from([1, 2]),
          });
        }
      });
      await c.write((tx) => deleteVideoRows(tx, idx.id, ['u_one']));
      expect(await videoById(c, 'u_one')).toBeUndefined();
      const left = await c.run((db) => db.select({ id: people.id }).from(people));
      expect(left.map((p) => p.id)).toEqual(['p_elsewhere']);

      // A failed upload's index goes with its last row, not before.
      const fresh = (await indexes.create(user, 'fresh', 'standard')).index;
      await insertVideo(c, row('u_fresh', fresh));
      await c.write((tx) => deleteIndexIfEmpty(tx, fresh.id));
      expect(await indexOf(c, user.id, fresh.id, { byName: false })).toBeDefined();
      await c.write(async (tx) => {
        await deleteVideoRow(tx, 'u_fresh');
        await deleteIndexIfEmpty(tx, fresh.id);
      });
      expect(await indexOf(c, user.id, fresh.id, { byName: false, includeDeleted: true })).toBeUndefined();
    });

    test('uploads: two stored commits at once under one quota lock see each other', async () => {
      const { user } = await accounts.createUser('racer', null);
      const idx = (await indexes.create(user, 'race', 'standard')).index;
      const now = new Date();
      for (const id of ['r_a', 'r_b'])
        await insertVideo(c, {
          id,
          indexId: idx.id,
          userId: user.id,
          sourceUrl: 'upload:',
          fileName: `${id}.mp4`,
          status: 'downloading',
          uploadedAt: now,
          updatedAt: now,
        });
      const info = {
        durationSec: 1,
        fps: 25,
        width: 1,
        height: 1,
        videoCodec: 'h264',
        hasAudio: false,
        mimeType: 'video/mp4',
      } as unknown as Parameters<typeof markVideoStored>[2]['info'];
      // Quota 150 bytes, 100 each: exactly one commit fits, whichever comes first.
      const commit = (id: string) =>
        c
          .write(async (tx) => {
            await lockUserQuota(tx, user.id);
            const others = await storedBytesExcept(tx, user.id, id);
            await Bun.sleep(20); // the other commit tries meanwhile
            if (others + 100 > 150) throw new Error('over quota');
            return markVideoStored(tx, id, { rel: 'x', fileName: 'x', bytes: 100, sha256: id, info }, false, now);
          })
          .then(
            () => 'stored',
            (e: Error) => e.message,
          );
      const results = await Promise.all([commit('r_a'), commit('r_b')]);
      expect(results.sort()).toEqual(['over quota', 'stored']);
    });

    test('videos: timelines, transcripts, frames and the reads of the purge, re-embedding and the stuck check', async () => {
      const { user } = await accounts.createUser('viewer', null);
      const idx = (await indexes.create(user, 'timeline', 'standard')).index;
      await addVideo(c, idx, 'v_tl', 1, { analysis: { embeddings: { producer: 'old' } } });
      await addVideo(c, idx, 'v_wait', 2, { status: 'processing' });
      const { segments, frames } = c.t;
      await c.run(async (db) => {
        await db.insert(segments).values([
          { videoId: 'v_tl', kind: 'transcript', start: 5, end: 7, text: 'second', confidence: 0.9 },
          { videoId: 'v_tl', kind: 'transcript', start: 1, end: 3, text: 'first', confidence: 0.8 },
          {
            videoId: 'v_tl',
            kind: 'ocr',
            start: 2,
            end: 4,
            text: 'EXIT',
            confidence: null,
            extra: { box: [1, 2, 3, 4] },
          },
        ]);
        await db.insert(frames).values([
          { videoId: 'v_tl', t: 0, shot: 0, file: '000000.jpg' },
          { videoId: 'v_tl', t: 4, shot: 1, file: '000004.jpg' },
          { videoId: 'v_tl', t: 8, shot: 1, file: '000008.jpg' },
        ]);
      });
      expect((await timelineSegments(c, 'v_tl')).map((s) => s.text)).toEqual(['first', 'EXIT', 'second']);
      expect(await transcriptCues(c, 'v_tl')).toEqual([
        { start: 1, end: 3, text: 'first' },
        { start: 5, end: 7, text: 'second' },
      ]);
      const byKind = await segmentsByKind(c, 'v_tl');
      expect(byKind.map((s) => [s.kind, s.text])).toEqual([
        ['ocr', 'EXIT'],
        ['transcript', 'first'],
        ['transcript', 'second'],
      ]);
      expect(byKind[0]!.extra).toEqual({ box: [1, 2, 3, 4] });
      expect((await timelineFrames(c, 'v_tl')).map((f) => f.t)).toEqual([0, 4, 8]);
      expect(await frameNear(c, 'v_tl', 5)).toBe('000004.jpg');
      expect(await frameNear(c, 'v_tl', 7.5)).toBe('000008.jpg');
      expect(await frameNear(c, 'v_none', 1)).toBeUndefined();
      expect(await transcriptCues(c, 'v_none')).toEqual([]);

      expect(await placeOf(c, 'v_tl')).toEqual({ userId: user.id, indexId: idx.id });
      expect(await placeOf(c, 'v_none')).toBeUndefined();
      expect((await videosOfIndex(c, idx.id)).map((v) => v.id)).toEqual(['v_tl', 'v_wait']);
      expect((await videoIdsOfIndex(c, idx.id)).sort()).toEqual(['v_tl', 'v_wait']);
      const ready = await readyActiveVideos(c);
      expect(ready.find((v) => v.id === 'v_tl')?.analysis).toEqual({ embeddings: { producer: 'old' } });
      expect(ready.some((v) => v.id === 'v_wait')).toBe(false);

      await failVideo(c, 'v_wait', 'no progress', new Date());
      expect(await activeVideoOf(c, user.id, 'v_wait')).toMatchObject({ status: 'failed', error: 'no progress' });
    });
  });
