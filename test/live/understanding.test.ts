/**
 * Faces and speech on live windows (issue 21): an RTMP source (ffmpeg listening as the server)
 * looping a shared clip of ten speakers, one every 3 s (grid-speakers-33s.mp4, H.264 + AAC), pulled
 * by the real server with the real face models and the real voice-activity model. The transcriber
 * is a STAND-IN for an OpenAI-compatible speech-to-text server (test/model-stand-in.ts): it hears
 * the window's WAV and answers with the words the test gives it.
 * A second source without a sound track still goes live while speech is analysed.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { freePort, liveClient, liveWorkDir, loopClip, until } from '../factories';
import { startTestServer, type TestServer } from '../helpers';
import { ModelStandIn } from '../model-stand-in';

const WORDS = 'the delivery van is at the gate';
let srv: TestServer;
let stand: ModelStandIn;
let work: string;
let ffmpeg: string;
const children: ReturnType<typeof Bun.spawn>[] = [];

let done = false;

/** The clip looped in real time and served over RTMP by ffmpeg (one client; listening again after each). */
async function rtmpOf(name: string, audio: boolean): Promise<string> {
  const port = await freePort();
  const url = `rtmp://127.0.0.1:${port}/live/cam`;
  const listen = (): void => {
    if (done) return;
    const p = loopClip(ffmpeg, name, 'flv', url, { audio, extra: ['-listen', '1'] });
    children.push(p);
    void p.exited.then(listen);
  };
  listen();
  await Bun.sleep(300);
  return url;
}

beforeAll(async () => {
  ({ work, ffmpeg } = await liveWorkDir('live-understand'));
  stand = new ModelStandIn({ transcript: (_k, d) => [{ start: 0, end: Math.min(d, 2), text: WORDS }] });
  srv = await startTestServer({
    analyzers: 'faces,speech',
    stt: 'openai',
    'stt-url': `${stand.url}/v1`,
    'stt-model': 'whisper-1',
    'live-stall-sec': '8',
  });
}, 120_000);

afterAll(async () => {
  done = true;
  for (const c of children) c.kill('SIGKILL');
  await srv?.stop();
  stand?.stop();
  rmSync(work, { recursive: true, force: true });
});

const { api, post, performanceIndex, stream, waitStream } = liveClient(() => srv);

describe('faces and speech on live windows', () => {
  test('faces join the index people, speech is detected and transcribed, a speech alert fires once', async () => {
    const tok = srv.token;
    await performanceIndex('door');
    await post('/alerts', { token: tok, index: 'door', kind: 'speech', query: 'delivery van', cooldown_sec: 3600 });
    const added = await post('/add-stream', {
      token: tok,
      index: 'door',
      url: await rtmpOf('grid-speakers-33s.mp4', true),
      fps: 1,
    });
    expect(added.status).toBe('success');
    const id: string = added.stream_id;
    const live = await waitStream(id, (s) => s?.status === 'live', 30_000, 'live', 200);
    const segs = () => api(`/videos/${live.file_id}/segments?token=${tok}`);
    const kinds = (r: any, k: string) => r.segments.filter((s: any) => s.kind === k);
    // About 12 s of stream: four speakers, each on screen and speaking for 3 s.
    const got = await until(
      segs,
      (r) => kinds(r, 'face').length >= 3 && kinds(r, 'speech').length >= 1 && kinds(r, 'transcript').length >= 1,
      60_000,
      'faces, speech and transcripts',
      500,
    );
    const s = await stream(id);
    const end = s.latest_time + 1.01;
    for (const f of [...kinds(got, 'face'), ...kinds(got, 'speech'), ...kinds(got, 'transcript')]) {
      expect(f.start).toBeGreaterThanOrEqual(0);
      expect(f.end).toBeLessThanOrEqual(end + 2);
    }
    // A new speaker every 3 s: one face appearance never runs on into the next person's.
    for (const f of kinds(got, 'face')) expect(f.end - f.start).toBeLessThanOrEqual(5);
    expect(kinds(got, 'transcript')[0].text).toContain('delivery van');

    // The faces are the index's people (different speakers, different people), with this stream's video.
    const list = await api(`/indexes/${live.index_id}/people?token=${tok}`);
    expect(list.length).toBeGreaterThanOrEqual(2);
    for (const p of list) expect(p.videos).toContain(live.file_id);

    // The transcriber heard real WAV audio of the window (the stand-in checks the request's shape).
    const heard = stand.requests.filter((r) => r.path === '/v1/audio/transcriptions');
    expect(heard.length).toBeGreaterThan(0);
    for (const r of heard) {
      expect(r.problems).toEqual([]);
      expect(Number(r.form?.file)).toBeGreaterThan(44);
    }
    // At least one request carries half a second or more of 16 kHz audio. (Not every one: a speech
    // span cut by a window's edge can be shorter; at load 3 one was 0.4 s.)
    expect(Math.max(...heard.map((r) => Number(r.form?.file)))).toBeGreaterThan(44 + 16000);

    const fired = await until(
      () => api(`/alerts/fired?token=${tok}`),
      (l) => l.length > 0,
      20_000,
      'the speech alert',
      300,
    );
    expect(fired).toHaveLength(1);
    expect(fired[0].evidence).toContain('delivery van');
    const n = s.frames_analysed;
    await waitStream(id, (x) => x.frames_analysed >= n + 3, 30_000, 'more windows', 300);
    expect(await api(`/alerts/fired?token=${tok}`)).toHaveLength(1);
    expect((await post(`/streams/${id}/stop?token=${tok}`, {})).status).toBe('stopped');
  }, 120_000);

  test('a source without a sound track goes live while speech is analysed', async () => {
    const tok = srv.token;
    await performanceIndex('silent');
    const added = await post('/add-stream', {
      token: tok,
      index: 'silent',
      url: await rtmpOf('bottles.mp4', false),
      fps: 1,
    });
    await waitStream(
      added.stream_id,
      (s) => s?.status === 'live' && s.frames_analysed >= 2,
      40_000,
      'silent source live',
      300,
    );
    expect((await post(`/streams/${added.stream_id}/stop?token=${tok}`, {})).status).toBe('stopped');
  }, 60_000);
});
