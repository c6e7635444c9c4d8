/**
 * Live streams, pushed frames (issue 21): the hosted API's /add-stream and /stream with frames of
 * real clips sent out of order by three senders at once, analysed by the real OCR and object
 * detector; segments searchable with stream times, an object alert fired once with its frame (SSE
 * and the listing), pause/stop replies, and another user's stream refused.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { clipFrames, liveWorkDir, until } from '../factories';
import { startTestServer, type TestServer } from '../helpers';

let srv: TestServer;
let work: string;
const logs: string[] = [];
let frames: { png: string; i: number }[] = [];

beforeAll(async () => {
  let ffmpeg: string;
  ({ work, ffmpeg } = await liveWorkDir('live-push'));
  // 8 s of the bottles scene (three bottles), then 3 s of the title "Big Buck BUNNY".
  const pngs = [
    ...(await clipFrames(ffmpeg, 'bottles.mp4', work, { seconds: 8, prefix: 'a' })),
    ...(await clipFrames(ffmpeg, 'big-buck-bunny-intro.webm', work, { seconds: 3, from: 25, prefix: 'b' })),
  ];
  frames = pngs.map((png, i) => ({ png, i }));
  srv = await startTestServer({ analyzers: 'ocr,objects', 'log-level': 'info' }, { logSink: (l) => logs.push(l) });
}, 120_000);

afterAll(async () => {
  await srv?.stop();
  rmSync(work, { recursive: true, force: true });
});

const post = (path: string, body: unknown) =>
  fetch(srv.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
// JSON answers of the API, read field by field by the assertions.
const get = async (path: string): Promise<any> => (await fetch(srv.url + path)).json();
const json = (r: Response): Promise<any> => r.json();

describe('pushed live frames', () => {
  test('add-stream answers the hosted errors with status 200', async () => {
    let r = await post('/add-stream', { token: srv.token, index: 'no-such-index' });
    expect(r.status).toBe(200);
    expect(await json(r)).toEqual({ error: 'index does not exist' });
    await fetch(`${srv.url}/create-index?token=${srv.token}&index=plain`);
    r = await post('/add-stream', { token: srv.token, index: 'plain' });
    expect(await json(r)).toEqual({ error: 'this index is not compatible with streaming' });
    r = await post('/add-stream', { index: 'plain' });
    expect(r.status).toBe(401);
  });

  test('out-of-order frames become searchable segments with stream times; an object alert fires once', async () => {
    expect((await fetch(`${srv.url}/create-index?token=${srv.token}&index=cam&type=performance`)).status).toBe(200);
    const alert = await json(
      await post('/alerts', { token: srv.token, index: 'cam', kind: 'object', query: 'bottle', cooldown_sec: 60 }),
    );
    expect(alert.alert_id).toBeString();
    // Fired alerts as server-sent events, read while the frames go in.
    const sse = await fetch(`${srv.url}/alerts/events?token=${srv.token}`);
    expect(sse.headers.get('content-type')).toContain('text/event-stream');
    const sseText: string[] = [];
    const reader = sse.body!.getReader();
    void (async () => {
      const dec = new TextDecoder();
      for (;;) {
        const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
        if (done) break;
        sseText.push(dec.decode(value));
      }
    })();

    const added = await json(await post('/add-stream', { token: srv.token, index: 'cam', name: 'desk camera' }));
    expect(added.status).toBe('success');
    const id = added.stream_id as string;
    const t0 = Math.floor(Date.now() / 1000);
    // The first frame sets stream time 0; the others go out of order from three senders at once.
    const first = frames[0]!;
    expect(await json(await post('/stream', { base64_image: first.png, stream_id: id, time: t0 }))).toEqual({
      success: true,
    });
    const rest = frames.slice(1);
    for (let k = 0; k + 1 < rest.length; k += 3)
      [rest[k], rest[k + 2 < rest.length ? k + 2 : k + 1]] = [rest[k + 2 < rest.length ? k + 2 : k + 1]!, rest[k]!];
    const queue = [...rest];
    await Promise.all(
      [0, 1, 2].map(async () => {
        for (let f = queue.shift(); f; f = queue.shift()) {
          const r = await post('/stream', { base64_image: f.png, stream_id: id, time: t0 + f.i });
          expect(await json(r)).toEqual({ success: true });
        }
      }),
    );
    const stream = await until(
      () => get(`/streams?token=${srv.token}&index=cam`),
      (l: any) => l[0]?.frames_analysed === frames.length,
      120_000,
      'every frame analysed',
      250,
    );
    expect(stream[0].status).toBe('live');
    expect(stream[0].went_live_at).toBeString();
    expect(stream[0].seconds_analysed).toBe(frames.length);
    expect(stream[0].source).toBe('push');

    // The resource of the stream, with its live part.
    const resources = await get(`/index-resources?token=${srv.token}&index=cam`);
    const res = resources.find((r: { file_id: string }) => r.file_id === stream[0].file_id);
    expect(res.live.stream_id).toBe(id);
    expect(res.live.status).toBe('live');
    expect(res.status).toBe('ready');

    // Bottles in the first 8 s of stream time; the title's text at 8–10 s.
    const bottles = await get(`/search?token=${srv.token}&index=cam&q=bottle`);
    const obj = bottles.moments.find((m: { kind: string }) => m.kind === 'object');
    expect(obj.video_id).toBe(stream[0].file_id);
    expect(obj.start).toBeLessThan(2);
    expect(obj.end).toBeGreaterThan(5);
    expect(obj.end).toBeLessThanOrEqual(9);
    const title = await get(`/search?token=${srv.token}&index=cam&q=bunny`);
    const ocr = title.moments.find((m: { kind: string }) => m.kind === 'ocr');
    expect(ocr.start).toBeGreaterThanOrEqual(7.9);
    expect(ocr.start).toBeLessThanOrEqual(11);

    // One episode of bottles: one event, with a frame that is served.
    const fired = await get(`/alerts/fired?token=${srv.token}`);
    expect(fired).toHaveLength(1);
    expect(fired[0].alert_id).toBe(alert.alert_id);
    expect(fired[0].time).toBeLessThan(8);
    expect(fired[0].evidence).toContain('bottle');
    const img = await fetch(fired[0].frame_url);
    expect(img.status).toBe(200);
    expect(img.headers.get('content-type')).toContain('image/jpeg');
    await until(
      () => sseText.join(''),
      (s) => s.includes('event: alert'),
      5000,
      'the alert on the event stream',
    );
    const events = sseText.join('').match(/event: alert/g) ?? [];
    expect(events).toHaveLength(1);
    await reader.cancel();
  }, 200_000);

  test('/inquire reads live wording: "what is there now" is the latest moment, "the last minute" a window', async () => {
    const [stream] = await get(`/streams?token=${srv.token}&index=cam`);
    const fileId = stream.file_id as string;
    const ask = async (prompt: string): Promise<any> =>
      json(await post('/inquire', { token: srv.token, index: 'cam', target_video: fileId, prompt }));
    // Now: the latest analysed frames, the title of the film (8–10 s), not the bottles of the start.
    const now = await ask('what is there now?');
    expect(now.output).toMatch(/bunny/i);
    expect(now.evidence.length).toBeGreaterThan(0);
    for (const e of now.evidence) expect(e.end).toBeGreaterThanOrEqual(7);
    // The last minute by the stream's clock (wall time since its first frame, or the latest frame
    // when the sender's clock runs ahead).
    const before = (await srv.server.service.live.lastWindow(fileId, 60))!;
    const minute = await ask('what happened in the last minute?');
    for (const e of minute.evidence) expect(e.end).toBeGreaterThanOrEqual(before.from - 1);
    // The stream is younger than a minute when the analysis kept up: then the minute holds all of it.
    if (before.from === 0) {
      expect(minute.output).toMatch(/bottle/i);
      expect(minute.output).toMatch(/bunny/i);
    }
  }, 60_000);

  test('pause, resume and stop answer as the hosted API; another user cannot use the stream', async () => {
    const id = (await json(await post('/add-stream', { token: srv.token, index: 'cam' }))).stream_id;
    const other = await srv.server.service.accounts.createUser('other', null);
    // Another user's token: refused as unknown, and cannot control it.
    let r = await post('/stream', { base64_image: frames[0]!.png, stream_id: id, time: 1, token: other.token });
    expect(r.status).toBe(404);
    r = await fetch(`${srv.url}/streams/${id}/stop?token=${other.token}`, { method: 'POST' });
    expect(r.status).toBe(404);
    expect(await get(`/streams?token=${other.token}`)).toEqual([]);
    r = await fetch(`${srv.url}/streams/${id}/pause?token=${srv.token}`, { method: 'POST' });
    expect((await json(r)).status).toBe('paused');
    r = await post('/stream', { base64_image: frames[0]!.png, stream_id: id, time: 1 });
    expect(await json(r)).toEqual({ success: false, action: 'paused' });
    r = await fetch(`${srv.url}/streams/${id}/resume?token=${srv.token}`, { method: 'POST' });
    expect((await json(r)).status).toBe('live');
    r = await fetch(`${srv.url}/streams/${id}/stop?token=${srv.token}`, { method: 'POST' });
    expect((await json(r)).status).toBe('stopped');
    r = await post('/stream', { base64_image: frames[0]!.png, stream_id: id, time: 2 });
    expect(await json(r)).toEqual({ success: false, action: 'stopped' });
    r = await post('/stream', { base64_image: 'bm90IGFuIGltYWdl', stream_id: 'ls_unknown', time: 2 });
    expect(r.status).toBe(404);
  });
});
