/**
 * Live caps that hold under concurrent requests (issue 37): the running-stream and fps caps of
 * --live-max-streams-per-user / --live-max-fps-per-user against 20 parallel POST /add-stream calls
 * whose source is a host name (a DNS lookup between the count and the insert used to let all of
 * them through); the cap on all streams a user keeps, stopped ones included
 * (--live-max-kept-streams-per-user); pushed frame times kept near the server's clock.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { clipFrames, freePort, liveClient, liveWorkDir, until } from '../factories';
import { startTestServer, type TestServer } from '../helpers';

let srv: TestServer;
let work: string;
let png = '';

beforeAll(async () => {
  let ffmpeg: string;
  ({ work, ffmpeg } = await liveWorkDir('live-caps'));
  png = (await clipFrames(ffmpeg, 'bottles.mp4', work, { seconds: 1 }))[0]!;
  srv = await startTestServer({
    analyzers: 'subtitles',
    'live-max-streams-per-user': '2',
    'live-max-fps-per-user': '4',
    'live-max-kept-streams-per-user': '5',
    'live-stall-sec': '60',
  });
}, 60_000);

afterAll(async () => {
  await srv?.stop();
  rmSync(work, { recursive: true, force: true });
});

const live = liveClient(() => srv);

async function postStatus(path: string, body: unknown): Promise<{ status: number; body: any }> {
  const r = await fetch(srv.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: r.status, body: await r.json() };
}

/** A user of its own with a performance index `cam`. */
async function freshUser(name: string): Promise<string> {
  const { token } = await srv.server.service.accounts.createUser(name, null);
  const r = await fetch(`${srv.url}/create-index?token=${token}&index=cam&type=performance`);
  expect(r.status).toBe(200);
  return token;
}

/** 20 parallel add-stream calls for rtsp://localhost sources (a host name: a DNS lookup each); the stream ids accepted. */
async function raceAdds(token: string, fps: number): Promise<{ accepted: string[]; refused: any[] }> {
  const port = await freePort();
  const replies = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      postStatus('/add-stream', { token, index: 'cam', url: `rtsp://localhost:${port}/race${i}`, fps }),
    ),
  );
  const accepted = replies.filter((r) => r.status === 200 && r.body.status === 'success').map((r) => r.body.stream_id);
  const refused = replies.filter((r) => r.status !== 200);
  for (const id of accepted) await postStatus(`/streams/${id}/stop?token=${token}`, {});
  return { accepted, refused };
}

describe('live caps under concurrency', () => {
  test('20 parallel add-stream calls with --live-max-streams-per-user 2: exactly 2 accepted', async () => {
    const token = await freshUser('racer');
    const { accepted, refused } = await raceAdds(token, 1);
    console.log(`stream cap 2: ${accepted.length} of 20 parallel add-stream calls accepted`);
    expect(accepted).toHaveLength(2);
    expect(refused).toHaveLength(18);
    for (const r of refused) {
      expect(r.status).toBe(429);
      expect(r.body.error).toBe(429);
      expect(r.body.message).toContain('live-max-streams-per-user');
    }
  }, 60_000);

  test('20 parallel add-stream calls at 3 fps with --live-max-fps-per-user 4: exactly 1 accepted', async () => {
    const token = await freshUser('fps-racer');
    const { accepted, refused } = await raceAdds(token, 3);
    console.log(`fps cap 4 at 3 fps each: ${accepted.length} of 20 parallel add-stream calls accepted`);
    expect(accepted).toHaveLength(1);
    for (const r of refused) {
      expect(r.status).toBe(429);
      expect(r.body.message).toContain('frames per second');
    }
  }, 60_000);
});

describe('streams kept and frame times', () => {
  test('stopped streams count in --live-max-kept-streams-per-user until their resource is removed', async () => {
    const token = await freshUser('keeper');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const added = await postStatus('/add-stream', { token, index: 'cam', name: `cycle ${i}` });
      expect(added.body.status).toBe('success');
      ids.push(added.body.stream_id);
      expect((await postStatus(`/streams/${added.body.stream_id}/stop?token=${token}`, {})).status).toBe(200);
    }
    const sixth = await postStatus('/add-stream', { token, index: 'cam' });
    expect(sixth.status).toBe(429);
    expect(sixth.body.error).toBe(429);
    expect(sixth.body.message).toContain('live-max-kept-streams-per-user');
    // Parallel tries are refused just as well.
    const burst = await Promise.all(
      Array.from({ length: 10 }, () => postStatus('/add-stream', { token, index: 'cam' })),
    );
    expect(burst.every((r) => r.status === 429)).toBe(true);
    expect((await live.api(`/streams?token=${token}`)).length).toBe(5);

    // Removing a stopped stream's resource makes room for one more.
    const first = (await live.api(`/streams?token=${token}`)).find((s: any) => s.stream_id === ids[0]);
    const removed = await postStatus('/remove-from-index', { token, project_id: 'cam', video_id: first.file_id });
    expect(removed.status).toBe(200);
    const again = await postStatus('/add-stream', { token, index: 'cam' });
    expect(again.body.status).toBe('success');
  }, 60_000);

  test('a pushed frame time far from the server clock is refused with 400', async () => {
    const token = await freshUser('pusher');
    const added = await postStatus('/add-stream', { token, index: 'cam', name: 'desk' });
    const stream_id = added.body.stream_id;
    const now = Date.now() / 1000;
    for (const time of [1e300, now + 3600, now - 3 * 86400, 1]) {
      const r = await postStatus('/stream', { stream_id, base64_image: png, time });
      expect(r.status).toBe(400);
      expect(r.body.error).toBe(400);
      expect(r.body.message).toContain('time');
    }
    // Nothing was taken from the refused frames: no stream clock was set by them.
    const ok = await postStatus('/stream', { stream_id, base64_image: png, time: now - 5 });
    expect(ok.body).toEqual({ success: true });
    const later = await postStatus('/stream', { stream_id, base64_image: png, time: now + 1 });
    expect(later.body).toEqual({ success: true });
    const streams = await until(
      () => live.api(`/streams?token=${token}`),
      (l) => l[0]?.frames_analysed >= 2,
      20_000,
      'two frames analysed',
      200,
    );
    const s = streams[0];
    expect(s.latest_time).toBeGreaterThan(5);
    expect(s.latest_time).toBeLessThan(7);
  }, 60_000);
});
