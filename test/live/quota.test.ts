/**
 * Live storage in the user's quota (issue 21): a pushed stream's kept frames (and a pulled one's
 * recording, measured the same way) are its resource's size, so they count in
 * `--user-max-storage-bytes` like uploads. Over the quota the stream is paused with the reason
 * (pushed frames are answered `paused`, not silently dropped), resuming is refused with 507, and
 * uploads are refused too.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { clipFrames, liveClient, liveWorkDir } from '../factories';
import { clip, startTestServer, type TestServer } from '../helpers';

const QUOTA = 120_000;
let srv: TestServer;
let work: string;
let pngs: string[] = [];

beforeAll(async () => {
  let ffmpeg: string;
  ({ work, ffmpeg } = await liveWorkDir('live-quota'));
  pngs = await clipFrames(ffmpeg, 'bottles.mp4', work, { seconds: 12 });
  // No frame analyzers: the windows are stored as they come (the quota is what is tested).
  srv = await startTestServer({ analyzers: 'subtitles', 'user-max-storage-bytes': String(QUOTA) });
}, 60_000);

afterAll(async () => {
  await srv?.stop();
  rmSync(work, { recursive: true, force: true });
});

const post = async (path: string, body: unknown): Promise<{ status: number; body: any }> => {
  const r = await fetch(srv.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: r.status, body: await r.json() };
};
const get = async (path: string): Promise<any> => (await fetch(srv.url + path)).json();
const live = liveClient(() => srv);

describe('live storage and the quota', () => {
  test('kept frames count; over the quota the stream is paused with the reason; resume and uploads refused', async () => {
    const tok = srv.token;
    await live.performanceIndex('lobby');
    const added = await post('/add-stream', { token: tok, index: 'lobby', fps: 1 });
    expect(added.body.status).toBe('success');
    const id = added.body.stream_id;
    const t0 = Date.now() / 1000 - 60;
    // Each frame is a JPEG of 20–60 kB: the quota is full after a few of them.
    const replies: any[] = [];
    for (let i = 0; i < pngs.length; i++) {
      replies.push((await post('/stream', { stream_id: id, base64_image: pngs[i], time: t0 + i })).body);
      if (replies.at(-1).success === false) break;
      await Bun.sleep(400);
    }
    const paused = await live.waitStream(id, (s) => s.status === 'paused', 20_000, 'paused by the quota', 200);
    expect(paused.reason).toContain('storage limit');
    expect(paused.frames_analysed).toBeGreaterThan(0);
    // A frame sent now is answered, not dropped in silence.
    const r = await post('/stream', { stream_id: id, base64_image: pngs[0], time: t0 + 30 });
    expect(r.body).toEqual({ success: false, action: 'paused' });

    // The stream's resource carries its size: what the quota counted.
    const res: any[] = await get(`/index-resources?token=${tok}&index=lobby`);
    const resource = res.find((v) => v.file_id === paused.file_id);
    expect(resource.live.status).toBe('paused');
    expect(resource.metadata.file_size).toBeGreaterThan(QUOTA);
    const resumed = await post(`/streams/${id}/resume?token=${tok}`, {});
    expect(resumed.status).toBe(507);
    expect(resumed.body.message).toContain('storage limit');

    // Uploads share the same quota.
    const form = new FormData();
    form.append('file', Bun.file(clip('countdown-living-room.mp4')), 'count.mp4');
    const up = await fetch(`${srv.url}/upload?token=${tok}&index=lobby`, { method: 'POST', body: form });
    expect(up.status).toBe(507);
    const another = await post('/add-stream', { token: tok, index: 'lobby' });
    expect(another.status).toBe(507);
  }, 60_000);
});
