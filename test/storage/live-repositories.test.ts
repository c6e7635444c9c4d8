/**
 * The live streams' alert records on the catalog (issue 33), on the embedded SQLite file and on a
 * real PostgreSQL (test/pg.ts: a fresh database of its own, dropped after): an alert inserted,
 * listed (oldest first, of one index when asked), deleted only by its user, the events fired listed
 * with their alert and stream (newest first, of one alert when asked, never another user's); a
 * stream found by id, its state changes, its first origin kept, its dropped frames counted; the
 * streams listed (of a user, an index, a state, a video), renamed and their shown source set; a
 * window's frames and counters recorded (the video grown, never shrunk), and its segments
 * continuing the window before's (spans by text, faces by likeness). The same tests on both
 * dialects, through AlertService where it has the call.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { AccountService } from '../../src/accounts/service';
import { IndexService } from '../../src/indexes/service';
import { storeWindowSegments } from '../../src/analysis/segment-store';
import { AlertService } from '../../src/live/alerts';
import { descriptorOf } from '../../src/people/group';
import type { Catalog } from '../../src/storage/catalog';
import {
  alertsOfUser,
  alertsWatching,
  deleteAlertOf,
  extendAlertEvent,
  firedEventsOfUser,
  insertAlert,
  insertAlertEvent,
  lastAlertEvent,
  queueAlertWebhook,
} from '../../src/storage/repositories/alerts';
import {
  extendSegment,
  facesBefore,
  insertSegment,
  insertSegments,
  spanBefore,
} from '../../src/storage/repositories/segments';
import {
  allStreams,
  countDroppedFrames,
  findStream,
  frameFilesOf,
  insertStream,
  latestFrameTime,
  lockStreamCaps,
  markStreamLive,
  pulledStreams,
  purgeStreamBefore,
  recordWindow,
  renameStream,
  setShownSource,
  setStreamOrigin,
  setStreamState,
  setVideoSize,
  streamCapsOfUser,
  streamOfVideo,
  streamsInStates,
  streamsOfIndex,
  streamsOfUser,
} from '../../src/storage/repositories/streams';
import type { MediaIndex, User } from '../../src/storage/rows';
import { CATALOGS, type OpenedCatalog, statusOf } from '../dialects';

/** A live stream of `index` and the `videos` row it writes into. */
async function addStream(c: Catalog, index: MediaIndex, id: string): Promise<void> {
  const at = new Date(1_700_000_000_000);
  await c.write((tx) =>
    tx.run(async (db) => {
      await db.insert(tx.t.videos).values({
        id: `v_${id}`,
        indexId: index.id,
        userId: index.userId,
        sourceUrl: 'live:',
        fileName: id,
        fileType: 'video/x-live',
        storagePath: `media/v_${id}/live`,
        durationSec: 0,
        fps: 1,
        hasAudio: false,
        status: 'ready',
        stage: 'live',
        progress: 100,
        uploadedAt: at,
        updatedAt: at,
      });
      await db.insert(tx.t.liveStreams).values({
        id,
        videoId: `v_${id}`,
        indexId: index.id,
        userId: index.userId,
        url: null,
        name: id,
        fps: 1,
        retentionSec: 3600,
        state: 'connecting',
        createdAt: at,
        updatedAt: at,
      });
    }),
  );
}

/** An event of `alertId` on `streamId` at stream second `t`. */
async function addEvent(c: Catalog, alertId: string, streamId: string, t: number): Promise<void> {
  await c.run(async (db) => {
    await db.insert(c.t.liveAlertEvents).values({
      alertId,
      streamId,
      t,
      lastT: t + 1,
      frame: null,
      evidence: `seen at ${t}`,
      createdAt: new Date(),
    });
  });
}

for (const dialect of CATALOGS)
  describe(`live stream and alert repositories on ${dialect.name}`, () => {
    let opened: OpenedCatalog;
    let c: Catalog;
    let alerts: AlertService;
    let ann: User;
    let bob: User;
    let annCams: MediaIndex;
    let annDoors: MediaIndex;
    let bobCams: MediaIndex;
    beforeAll(async () => {
      opened = await dialect.open();
      c = opened.catalog;
      const accounts = new AccountService(c);
      const indexes = new IndexService(c);
      alerts = new AlertService({ catalog: c, indexes });
      ann = (await accounts.createUser('Ann', 0)).user;
      bob = (await accounts.createUser('Bob', 0)).user;
      annCams = (await indexes.create(ann, 'cams', 'standard')).index;
      annDoors = (await indexes.create(ann, 'doors', 'standard')).index;
      bobCams = (await indexes.create(bob, 'cams', 'standard')).index;
      await addStream(c, annCams, 'ls_ann1');
      await addStream(c, bobCams, 'ls_bob1');
    });
    afterAll(() => opened?.close());

    test('a stream is found by id; an unknown id finds nothing', async () => {
      expect(await findStream(c, 'ls_ann1')).toMatchObject({
        id: 'ls_ann1',
        videoId: 'v_ls_ann1',
        userId: ann.id,
        state: 'connecting',
        framesDropped: 0,
      });
      expect(await findStream(c, 'ls_none')).toBeUndefined();
    });

    test('a stream created with its resource in one write; the caps count the streams of the user only', async () => {
      const idx = (await new IndexService(c).create(bob, 'gate', 'standard')).index;
      const at = new Date(1_750_000_000_000);
      await c.write(async (tx) => {
        await lockStreamCaps(tx, bob.id);
        await insertStream(tx, {
          id: 'ls_gate',
          videoId: 'v_gate',
          indexId: idx.id,
          userId: bob.id,
          url: 'rtsp://cam.example/x',
          shownSource: 'rtsp://cam.example/',
          name: 'gate',
          fps: 2,
          retentionSec: 600,
          at,
        });
      });
      expect(await findStream(c, 'ls_gate')).toMatchObject({
        videoId: 'v_gate',
        url: 'rtsp://cam.example/x',
        state: 'connecting',
        fps: 2,
        retentionSec: 600,
        createdAt: at,
      });
      const [video] = await c.run((db) => db.select().from(c.t.videos).where(eq(c.t.videos.id, 'v_gate')));
      expect(video).toMatchObject({ fileType: 'video/x-live', sourceUrl: 'rtsp://cam.example/', status: 'ready' });
      // A failed write leaves neither row.
      await expect(
        c.write(async (tx) => {
          await insertStream(tx, {
            id: 'ls_gate2',
            videoId: 'v_gate2',
            indexId: idx.id,
            userId: bob.id,
            url: null,
            shownSource: 'live:push',
            name: 'gate 2',
            fps: 1,
            retentionSec: 600,
            at,
          });
          throw new Error('over the caps');
        }),
      ).rejects.toThrow('over the caps');
      expect(await findStream(c, 'ls_gate2')).toBeUndefined();
      expect((await streamCapsOfUser(c, bob.id)).map((r) => r.id).sort()).toEqual(['ls_bob1', 'ls_gate']);
      expect((await streamCapsOfUser(c, bob.id)).find((r) => r.id === 'ls_gate')).toEqual({
        id: 'ls_gate',
        fps: 2,
        state: 'connecting',
      });
    });

    test('purge before a stream second: older frames (their files back), segments and alert events go; other streams keep theirs', async () => {
      const idx = (await new IndexService(c).create(ann, 'porch', 'standard')).index;
      await addStream(c, idx, 'ls_p1');
      await addStream(c, idx, 'ls_p2');
      const al = await alerts.create(ann, { index: 'porch', kind: 'object', query: 'box' });
      await c.run(async (db) => {
        for (const v of ['v_ls_p1', 'v_ls_p2']) {
          await db.insert(c.t.frames).values([1, 5, 9].map((t) => ({ videoId: v, t, shot: 0, file: `${v}-${t}.jpg` })));
          await db.insert(c.t.segments).values(
            [
              [0, 2],
              [3, 6],
              [8, 10],
            ].map(([start, end]) => ({ videoId: v, kind: 'object' as const, start: start!, end: end!, text: 'box' })),
          );
        }
      });
      for (const [stream, t] of [
        ['ls_p1', 1],
        ['ls_p1', 8],
        ['ls_p2', 1],
      ] as const)
        await addEvent(c, al.alert_id, stream, t);

      const gone = await purgeStreamBefore(c, (await findStream(c, 'ls_p1'))!, 6);
      expect(gone.map((g) => g.file).sort()).toEqual(['v_ls_p1-1.jpg', 'v_ls_p1-5.jpg']);
      const left = async (v: string) => ({
        frames: (await c.run((db) => db.select().from(c.t.frames).where(eq(c.t.frames.videoId, v))))
          .map((f) => f.t)
          .sort(),
        segments: (await c.run((db) => db.select().from(c.t.segments).where(eq(c.t.segments.videoId, v))))
          .map((g) => g.end)
          .sort(),
      });
      // Segments ending before 6 go (the one ending at 6 stays); events whose last second is before 6 go.
      expect(await left('v_ls_p1')).toEqual({ frames: [9], segments: [10, 6] });
      expect(await left('v_ls_p2')).toEqual({ frames: [1, 5, 9], segments: [10, 2, 6] });
      const events = await c.run((db) =>
        db.select().from(c.t.liveAlertEvents).where(eq(c.t.liveAlertEvents.alertId, al.alert_id)),
      );
      expect(events.map((e) => `${e.streamId}@${e.t}`).sort()).toEqual(['ls_p1@8', 'ls_p2@1']);
      // The later tests list Ann's alerts from none.
      await alerts.delete(ann, al.alert_id);
    });

    test('stream state: set with its reason (the video id back), live once, origin first wins, drops counted', async () => {
      await addStream(c, annCams, 'ls_ann2');
      expect(await setStreamState(c, 'ls_ann2', 'reconnecting', 'lost')).toBe('v_ls_ann2');
      expect(await setStreamState(c, 'ls_none', 'failed', 'x')).toBeUndefined();
      expect(await findStream(c, 'ls_ann2')).toMatchObject({ state: 'reconnecting', reason: 'lost', wentLiveAt: null });

      await markStreamLive(c, (await findStream(c, 'ls_ann2'))!);
      const live = (await findStream(c, 'ls_ann2'))!;
      expect(live).toMatchObject({ state: 'live', reason: null });
      expect(live.wentLiveAt).toBeInstanceOf(Date);
      await setStreamState(c, 'ls_ann2', 'reconnecting', 'lost again');
      await Bun.sleep(5);
      await markStreamLive(c, (await findStream(c, 'ls_ann2'))!);
      expect((await findStream(c, 'ls_ann2'))!.wentLiveAt!.getTime()).toBe(live.wentLiveAt!.getTime());

      expect(await setStreamOrigin(c, 'ls_ann2', 1_700_000_000_500)).toBe(1_700_000_000_500);
      expect(await setStreamOrigin(c, 'ls_ann2', 1_700_000_009_000)).toBe(1_700_000_000_500);
      expect(await setStreamOrigin(c, 'ls_none', 42)).toBe(42);

      await countDroppedFrames(c, 'ls_ann2', 1);
      await countDroppedFrames(c, 'ls_ann2', 4);
      expect((await findStream(c, 'ls_ann2'))!.framesDropped).toBe(5);
      // Another stream's counters do not move.
      expect((await findStream(c, 'ls_ann1'))!.framesDropped).toBe(0);
      expect((await findStream(c, 'ls_ann1'))!.originMs).toBeNull();
    });

    test('alerts: created, listed oldest first (of one index when asked), deleted only by their user', async () => {
      const a1 = await alerts.create(ann, { index: 'cams', kind: 'object', query: 'car', cooldown_sec: 5 });
      const a2 = await alerts.create(ann, { index: 'doors', kind: 'text', query: 'EXIT', count: 2 });
      const a3 = await alerts.create(ann, { index: 'cams', stream_id: 'ls_ann1', kind: 'object', query: 'dog' });
      const b1 = await alerts.create(bob, { index: 'cams', kind: 'object', query: 'cat' });
      expect(a1).toMatchObject({ index_id: annCams.id, stream_id: null, kind: 'object', cooldown_sec: 5, count: 1 });
      expect(a2).toMatchObject({ index_id: annDoors.id, count: 2, cooldown_sec: 30 });
      expect(a3.stream_id).toBe('ls_ann1');

      expect((await alerts.list(ann)).map((a) => a.alert_id).sort()).toEqual(
        [a1.alert_id, a2.alert_id, a3.alert_id].sort(),
      );
      expect((await alerts.list(ann, annDoors.id)).map((a) => a.alert_id)).toEqual([a2.alert_id]);
      expect((await alerts.list(bob)).map((a) => a.alert_id)).toEqual([b1.alert_id]);
      // Another user's index id lists nothing of it.
      expect(await alerts.list(ann, bobCams.id)).toEqual([]);

      // A stream of another user, or of another index, is refused; bad input too.
      expect(
        await statusOf(alerts.create(ann, { index: 'cams', stream_id: 'ls_bob1', kind: 'object', query: 'x' })),
      ).toBe(404);
      expect(
        await statusOf(alerts.create(ann, { index: 'doors', stream_id: 'ls_ann1', kind: 'object', query: 'x' })),
      ).toBe(404);
      expect(await statusOf(alerts.create(ann, { index: 'cams', kind: 'nope', query: 'x' }))).toBe(400);
      expect(await statusOf(alerts.create(ann, { index: 'cams', kind: 'object', query: '  ' }))).toBe(400);

      // Bob cannot delete Ann's alert; Ann can, once.
      expect(await statusOf(alerts.delete(bob, a2.alert_id))).toBe(404);
      expect(await deleteAlertOf(c, bob.id, a2.alert_id)).toBe(false);
      expect(await statusOf(alerts.delete(ann, a2.alert_id))).toBe(0);
      expect(await statusOf(alerts.delete(ann, a2.alert_id))).toBe(404);
      expect((await alertsOfUser(c, ann.id)).map((a) => a.id).sort()).toEqual([a1.alert_id, a3.alert_id].sort());
      expect((await alertsOfUser(c, bob.id)).map((a) => a.id)).toEqual([b1.alert_id]);
    });

    test('alerts list oldest first', async () => {
      const base = 1_800_000_000_000;
      for (const [i, id] of ['al_o3', 'al_o1', 'al_o2'].entries())
        await insertAlert(c, {
          id,
          userId: ann.id,
          indexId: annDoors.id,
          streamId: null,
          kind: 'object',
          query: id,
          minCount: 1,
          colour: null,
          person: null,
          cooldownSec: 0,
          createdAt: new Date(base + [3, 1, 2][i]! * 1000),
        });
      expect((await alertsOfUser(c, ann.id, annDoors.id)).map((a) => a.id)).toEqual(['al_o1', 'al_o2', 'al_o3']);
    });

    test('fired events: newest first, of one alert when asked, with their alert and stream, never another user', async () => {
      const mine = await alerts.create(ann, { index: 'cams', kind: 'object', query: 'bus' });
      const theirs = await alerts.create(bob, { index: 'cams', kind: 'object', query: 'bus' });
      await addEvent(c, mine.alert_id, 'ls_ann1', 10);
      await addEvent(c, mine.alert_id, 'ls_ann1', 20);
      await addEvent(c, theirs.alert_id, 'ls_bob1', 15);

      const fired = await alerts.fired(ann, mine.alert_id);
      expect(fired.map((f) => f.time)).toEqual([20, 10]);
      expect(fired[0]).toMatchObject({
        alert_id: mine.alert_id,
        stream_id: 'ls_ann1',
        index_id: annCams.id,
        file_id: 'v_ls_ann1',
        query: 'bus',
        evidence: 'seen at 20',
        frame_path: null,
      });
      expect((await alerts.fired(bob)).map((f) => f.alert_id)).toEqual([theirs.alert_id]);
      // Ann asking for Bob's alert sees nothing of it.
      expect(await alerts.fired(ann, theirs.alert_id)).toEqual([]);
      expect((await firedEventsOfUser(c, ann.id, undefined, 1)).map((r) => r.e.t)).toEqual([20]);
      expect((await firedEventsOfUser(c, ann.id, undefined, 100)).every((r) => r.a.userId === ann.id)).toBe(true);
    });

    test('window-time: watching alerts, the last event extended, a repeated event not recorded, the webhook queued in the write', async () => {
      const idx = (await new IndexService(c).create(ann, 'yard', 'standard')).index;
      await addStream(c, idx, 'ls_yard');
      const row = (await findStream(c, 'ls_yard'))!;
      const onIndex = await alerts.create(ann, { index: 'yard', kind: 'object', query: 'fox' });
      const onStream = await alerts.create(ann, { index: 'yard', stream_id: 'ls_yard', kind: 'text', query: 'GO' });
      expect((await alertsWatching(c, row)).map((a) => a.id).sort()).toEqual(
        [onIndex.alert_id, onStream.alert_id].sort(),
      );

      const fired = await c.write(async (tx) => {
        const id = await insertAlertEvent(tx, {
          alertId: onIndex.alert_id,
          streamId: row.id,
          t: 5,
          lastT: 6,
          frame: 'f.jpg',
          evidence: 'fox',
        });
        // The same event again (alert, stream, t) is not recorded twice.
        const again = await insertAlertEvent(tx, {
          alertId: onIndex.alert_id,
          streamId: row.id,
          t: 5,
          lastT: 7,
          frame: null,
          evidence: 'fox',
        });
        await extendAlertEvent(tx, id!, 9);
        // No webhook URL anywhere: nothing queued.
        await queueAlertWebhook(tx, row, { n: 1 });
        return { id, again };
      });
      expect(fired.id).toBeNumber();
      expect(fired.again).toBeUndefined();
      expect(await lastAlertEvent(c, onIndex.alert_id, row.id)).toMatchObject({ id: fired.id, t: 5, lastT: 9 });
      expect(await lastAlertEvent(c, onStream.alert_id, row.id)).toBeUndefined();

      const outbox = async () =>
        c.run((db) => db.select().from(c.t.webhookEvents).where(eq(c.t.webhookEvents.indexId, idx.id)));
      expect(await outbox()).toEqual([]);
      await c.run(async (db) => {
        await db
          .insert(c.t.indexWebhooks)
          .values({ indexId: idx.id, url: 'https://hooks.example/x', updatedAt: new Date() });
      });
      // A write that fails leaves no webhook behind; one that commits queues it.
      await expect(
        c.write(async (tx) => {
          await queueAlertWebhook(tx, row, { n: 2 });
          throw new Error('window failed');
        }),
      ).rejects.toThrow('window failed');
      expect(await outbox()).toEqual([]);
      await c.write((tx) => queueAlertWebhook(tx, row, { n: 3 }));
      const queued = await outbox();
      expect(queued).toHaveLength(1);
      expect(queued[0]).toMatchObject({
        event: 'alert.fired',
        url: 'https://hooks.example/x',
        userId: ann.id,
        videoId: 'v_ls_yard',
        data: JSON.stringify({ n: 3 }),
      });
    });

    test('streams listed: of a user (oldest first, of one index), of an index, in states, by video; pulled ones renamed and their source shown', async () => {
      const indexes = new IndexService(c);
      const cid = (await new AccountService(c).createUser('Cid', 0)).user;
      const north = (await indexes.create(cid, 'north', 'standard')).index;
      const south = (await indexes.create(cid, 'south', 'standard')).index;
      const base = 1_760_000_000_000;
      const add = (id: string, index: MediaIndex, k: number, url: string | null) =>
        insertStream(c, {
          id,
          videoId: `v_${id}`,
          indexId: index.id,
          userId: cid.id,
          url,
          shownSource: url ?? 'live:push',
          name: url ?? id,
          fps: 1,
          retentionSec: 600,
          at: new Date(base + k * 1000),
        });
      // Added out of order: the listing is by creation time.
      await add('ls_c3', north, 3, null);
      await add('ls_c1', north, 1, null);
      await add('ls_c2', south, 2, 'rtsp://cam.example/live/key123');
      const ids = (rows: { id: string }[]) => rows.map((r) => r.id);
      const mine = (rows: { id: string }[]) => ids(rows).filter((id) => id.startsWith('ls_c'));

      expect(ids(await streamsOfUser(c, cid.id))).toEqual(['ls_c1', 'ls_c2', 'ls_c3']);
      expect(ids(await streamsOfUser(c, cid.id, north.id))).toEqual(['ls_c1', 'ls_c3']);
      // Another user's index lists nothing of Cid's.
      expect(await streamsOfUser(c, ann.id, north.id)).toEqual([]);
      expect(ids(await streamsOfIndex(c, south.id))).toEqual(['ls_c2']);
      expect(mine(await allStreams(c)).sort()).toEqual(['ls_c1', 'ls_c2', 'ls_c3']);

      await setStreamState(c, 'ls_c3', 'paused', null);
      expect(mine(await streamsInStates(c, ['paused']))).toEqual(['ls_c3']);
      expect(mine(await streamsInStates(c, ['connecting', 'paused'])).sort()).toEqual(['ls_c1', 'ls_c2', 'ls_c3']);
      expect(mine(await streamsInStates(c, ['stopped']))).toEqual([]);

      expect((await streamOfVideo(c, 'v_ls_c2'))?.id).toBe('ls_c2');
      expect(await streamOfVideo(c, 'v_none')).toBeUndefined();

      const pulled = (await pulledStreams(c)).filter((r) => r.id.startsWith('ls_c'));
      expect(pulled).toEqual([
        {
          id: 'ls_c2',
          videoId: 'v_ls_c2',
          url: 'rtsp://cam.example/live/key123',
          name: 'rtsp://cam.example/live/key123',
        },
      ]);
      const video = async (id: string) =>
        (await c.run((db) => db.select().from(c.t.videos).where(eq(c.t.videos.id, id))))[0]!;
      // A write that fails renames nothing; one that commits renames the stream and its resource.
      await expect(
        c.write(async (tx) => {
          await renameStream(tx, pulled[0]!, 'gate');
          throw new Error('start-up failed');
        }),
      ).rejects.toThrow('start-up failed');
      expect((await findStream(c, 'ls_c2'))!.name).toBe('rtsp://cam.example/live/key123');
      await c.write(async (tx) => {
        await renameStream(tx, pulled[0]!, 'gate');
        await setShownSource(tx, 'v_ls_c2', 'rtsp://cam.example/');
      });
      expect((await findStream(c, 'ls_c2'))!.name).toBe('gate');
      expect(await video('v_ls_c2')).toMatchObject({ fileName: 'gate', sourceUrl: 'rtsp://cam.example/' });
      // The same source again changes nothing (the row is not written).
      await setShownSource(c, 'v_ls_c2', 'rtsp://cam.example/');
      expect((await video('v_ls_c2')).sourceUrl).toBe('rtsp://cam.example/');
      // The other streams' resources keep their names.
      expect((await video('v_ls_c1')).fileName).toBe('ls_c1');
    });

    test("a window recorded: its frames, the stream's counters, the video grown (never shrunk), its frame size and sound; frame files and the latest frame", async () => {
      await addStream(c, annCams, 'ls_win');
      await addStream(c, annCams, 'ls_win2');
      const v = 'v_ls_win';
      const video = async () => (await c.run((db) => db.select().from(c.t.videos).where(eq(c.t.videos.id, v))))[0]!;
      expect(await latestFrameTime(c, v)).toBeUndefined();
      expect(await frameFilesOf(c, v)).toEqual(new Set());
      const window = (frames: [number, string][], o: { width?: number; heard?: boolean } = {}) => ({
        streamId: 'ls_win',
        videoId: v,
        frames: frames.map(([t, file]) => ({ t, file })),
        step: 0.5,
        width: o.width ?? 0,
        height: o.width ? 360 : 0,
        heard: o.heard ?? false,
      });

      await recordWindow(
        c,
        window(
          [
            [0, 'a.jpg'],
            [0.5, 'b.jpg'],
          ],
          { width: 640 },
        ),
      );
      expect(await findStream(c, 'ls_win')).toMatchObject({ framesAnalysed: 2, secondsAnalysed: 1 });
      expect(await video()).toMatchObject({ durationSec: 1, width: 640, height: 360, hasAudio: false });

      // A window without a frame size keeps the one known; one with sound marks the video as having it.
      await recordWindow(
        c,
        window(
          [
            [1, 'c.jpg'],
            [1.5, 'd.jpg'],
          ],
          { heard: true },
        ),
      );
      expect(await findStream(c, 'ls_win')).toMatchObject({ framesAnalysed: 4, secondsAnalysed: 2 });
      expect(await video()).toMatchObject({ durationSec: 2, width: 640, height: 360, hasAudio: true });

      // An earlier frame stored later does not shorten the video.
      await recordWindow(c, window([[0.25, 'e.jpg']]));
      expect((await video()).durationSec).toBe(2);
      expect((await findStream(c, 'ls_win'))!.framesAnalysed).toBe(5);

      // A window whose write fails leaves no frame and no count behind.
      await expect(
        c.write(async (tx) => {
          await recordWindow(tx, window([[9, 'z.jpg']]));
          throw new Error('alerts failed');
        }),
      ).rejects.toThrow('alerts failed');
      expect((await findStream(c, 'ls_win'))!.framesAnalysed).toBe(5);
      expect((await video()).durationSec).toBe(2);

      expect(await latestFrameTime(c, v)).toBe(1.5);
      expect(await frameFilesOf(c, v)).toEqual(new Set(['a.jpg', 'b.jpg', 'c.jpg', 'd.jpg', 'e.jpg']));
      expect(await frameFilesOf(c, v, ['b.jpg', 'z.jpg'])).toEqual(new Set(['b.jpg']));
      // Another stream's video has none of them.
      expect(await frameFilesOf(c, 'v_ls_win2', ['a.jpg'])).toEqual(new Set());
      expect(await latestFrameTime(c, 'v_ls_win2')).toBeUndefined();
      expect((await findStream(c, 'ls_win2'))!.framesAnalysed).toBe(0);

      await setVideoSize(c, v, 3_000_000_000);
      expect((await video()).sizeBytes).toBe(3_000_000_000);
    });

    test("a window's segments continue the window before's: spans by kind and text, faces by likeness; transcripts never", async () => {
      await addStream(c, annCams, 'ls_seg');
      const v = 'v_ls_seg';
      const seg = (kind: 'object' | 'transcript' | 'face', start: number, end: number, text: string, extra = {}) => ({
        kind,
        start,
        end,
        text,
        extra,
      });
      await insertSegments(c, v, [seg('object', 0, 1, 'car', { max_count: 1 }), seg('object', 0, 1, 'dog')]);
      const rows = async () =>
        (await c.run((db) => db.select().from(c.t.segments).where(eq(c.t.segments.videoId, v)))).sort(
          (a, b) => a.id - b.id,
        );
      const [car, dog] = await rows();
      expect(await spanBefore(c, v, seg('object', 1.5, 2, 'car'), 1)).toEqual({
        id: car!.id,
        end: 1,
        extra: { max_count: 1 },
      });
      // Too far after it, or another label: nothing to continue.
      expect(await spanBefore(c, v, seg('object', 5, 6, 'car'), 1)).toBeUndefined();
      expect(await spanBefore(c, v, seg('object', 1.5, 2, 'bus'), 1)).toBeUndefined();

      const next = [
        seg('object', 1, 2, 'car', { max_count: 3 }),
        seg('object', 8, 9, 'dog'),
        seg('transcript', 1, 2, 'hello'),
        seg('transcript', 2, 3, 'hello'),
      ];
      const ids = await c.write((tx) => storeWindowSegments(tx, v, next, 1));
      // The car continues (its end and the most seen at once); the dog seen much later and each sentence are new.
      expect(ids.get(next[0]!)).toBe(car!.id);
      expect(ids.get(next[1]!)).not.toBe(dog!.id);
      expect(ids.get(next[2]!)).not.toBe(ids.get(next[3]!));
      const after = await rows();
      expect(after.find((r) => r.id === car!.id)).toMatchObject({ start: 0, end: 2, extra: { max_count: 3 } });
      expect(after).toHaveLength(5);

      await extendSegment(c, dog!.id, 4);
      expect((await rows()).find((r) => r.id === dog!.id)).toMatchObject({ end: 4, extra: {} });

      // A face appearance with its descriptor (the faces stage groups it into a person).
      const unit = (i: number) => Array.from({ length: 8 }, (_, k) => (k === i ? 1 : 0));
      const faceId = await insertSegment(c, v, seg('face', 0, 1, 'face'));
      expect(faceId).toBeNumber();
      await c.run(async (db) => {
        await db.insert(c.t.people).values({ id: 'p_seg', indexId: annCams.id, userId: ann.id, createdAt: new Date() });
        await db.insert(c.t.personAppearances).values({
          segmentId: faceId,
          personId: 'p_seg',
          videoId: v,
          indexId: annCams.id,
          descriptor: Buffer.from(new Float32Array(unit(0)).buffer),
        });
      });
      const near = await facesBefore(c, v, 1.5, 1);
      expect(near.map((n) => n.id)).toEqual([faceId]);
      expect([...descriptorOf(near[0]!.descriptor)]).toEqual(unit(0));
      expect(await facesBefore(c, v, 5, 1)).toEqual([]);

      const same = seg('face', 1, 2, 'face', { descriptor: unit(0) });
      const other = seg('face', 1, 2, 'face', { descriptor: unit(1) });
      const faces = await c.write((tx) => storeWindowSegments(tx, v, [same, other], 1));
      expect(faces.get(same)).toBe(faceId);
      expect(faces.get(other)).not.toBe(faceId);
      expect((await rows()).find((r) => r.id === faceId)!.end).toBe(2);
    });
  });
