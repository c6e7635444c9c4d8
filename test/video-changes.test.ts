/**
 * Every path that changes a video reaches its caches through the one entry point
 * (Service.videoChanged → VideoChanges): an upload stored and then analysed, a duplicate upload,
 * a re-analysis, a removal. Each is checked where a user sees it — the index listing (served from
 * a cache) and search — right after the change, with the listing warmed just before, and the
 * change is seen on the entry point with the video's index.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { VideoPlace } from '../src/videos/changes';
import { waitVideoReady } from './factories';
import { getJson, postJson, startOrigin, startTestServer, type Origin, type TestServer } from './helpers';

const VTT = `WEBVTT

00:00:01.000 --> 00:00:03.000
The quartermaster counts down in the living room
`;

let srv: TestServer;
let origin: Origin;
let subs: ReturnType<typeof Bun.serve>;
const seen: { id: string; place: VideoPlace | null }[] = [];

beforeAll(async () => {
  origin = startOrigin();
  subs = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response(VTT) });
  srv = await startTestServer({ 'analysis-workers': '1', analyzers: 'visual,subtitles,objects' });
  srv.server.service.changes.subscribe((id, place) => seen.push({ id, place }));
}, 60_000);

afterAll(async () => {
  await srv?.stop();
  origin?.stop();
  subs?.stop(true);
});

const listing = async () =>
  (await getJson(srv.url, `/index-resources?token=${srv.token}&index=changes`)).body as {
    file_id: string;
    status: string;
  }[];
const found = async (q: string) =>
  ((await getJson(srv.url, `/search?token=${srv.token}&index=changes&q=${q}`)).body.moments ?? []).map(
    (m: { video_id: string }) => m.video_id,
  );
const sawChange = (id: string, indexId: string) =>
  seen.some((c) => c.id === id && c.place?.indexId === indexId && c.place.userId === srv.userId);

describe('a change to a video reaches its caches', () => {
  test('upload → analysed → duplicate → re-analysis → removal, each seen at once in the listing and search', async () => {
    const upload = () =>
      postJson(srv.url, '/remote-upload', {
        token: srv.token,
        index: 'changes',
        url: `${origin.url}/media/countdown-living-room.mp4`,
        subtitles_url: `http://127.0.0.1:${subs.port}/countdown.vtt`,
      });
    const up = await upload();
    expect(up.status).toBe(200);
    const key = up.body.data.key as string;
    const indexId = (await getJson(srv.url, `/indexes?token=${srv.token}`)).body[0].index_id as string;
    expect(sawChange(key, indexId)).toBe(true);

    // Stored, then analysed: the listing (polled, so warm all along) turns ready, search finds it.
    await waitVideoReady(srv, 'changes', key, { timeoutMs: 120_000, intervalMs: 200 });
    expect(await found('quartermaster')).toContain(key);

    // The same bytes again: the new row goes at once (a duplicate), the listing keeps one video.
    seen.length = 0;
    const again = await upload();
    expect(again.body.data.key).toBe(key);
    expect((await listing()).map((r) => r.file_id)).toEqual([key]);
    expect(seen.some((c) => c.id !== key && c.place?.indexId === indexId)).toBe(true);

    // Re-analysis: the warm listing shows the video back in analysis straight away.
    expect((await listing())[0]?.status).toBe('ready');
    seen.length = 0;
    const re = await postJson(srv.url, `/videos/${key}/reanalyze`, { token: srv.token, analyzers: ['objects'] });
    expect(re.status).toBe(202);
    expect(sawChange(key, indexId)).toBe(true);
    expect((await listing())[0]?.status).not.toBe('ready');
    await waitVideoReady(srv, 'changes', key, { timeoutMs: 120_000, intervalMs: 200 });

    // Removal: its row is gone, and still every cache hears of it with the index it was in.
    expect(await found('quartermaster')).toContain(key);
    seen.length = 0;
    const rm = await postJson(srv.url, '/remove-from-index', { token: srv.token, project_id: indexId, video_id: key });
    expect(rm.status).toBe(200);
    expect(sawChange(key, indexId)).toBe(true);
    expect(await listing()).toEqual([]);
    expect(await found('quartermaster')).not.toContain(key);
  }, 240_000);
});
