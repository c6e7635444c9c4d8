/**
 * Pulled HLS sources as a new user met them (issue 36): real ffmpeg writes the playlists, served on
 * 127.0.0.1, pulled by the real live service.
 * - A live playlist WITH audio (H.264 + AAC in MPEG-TS) stays live: its recording keeps the sound
 *   (it looped between live and reconnecting, the recording's Matroska muxer refusing ADTS AAC).
 * - A playlist that ends (#EXT-X-ENDLIST) ends the stream, with the status saying so; it is not
 *   replayed as new live time.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { liveClient, liveWorkDir, loopClip, serveFolder } from '../factories';
import { clip, startTestServer, type TestServer } from '../helpers';

let srv: TestServer;
let work: string;
let ffmpeg: string;
const children: ReturnType<typeof Bun.spawn>[] = [];
const origins: ReturnType<typeof Bun.serve>[] = [];

beforeAll(async () => {
  ({ work, ffmpeg } = await liveWorkDir('live-hls-audio'));
  srv = await startTestServer({ analyzers: 'visual', 'live-stall-sec': '6' });
}, 60_000);

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  for (const o of origins) o.stop(true);
  await srv?.stop();
  rmSync(work, { recursive: true, force: true });
});

const { post, performanceIndex, stream, waitStream } = liveClient(() => srv);

/** Serves `dir` on 127.0.0.1 and adds its `live.m3u8` as a stream of `index`. */
async function addPulled(index: string, dir: string): Promise<string> {
  const origin = serveFolder(dir);
  origins.push(origin);
  await performanceIndex(index);
  const added = await post('/add-stream', {
    token: srv.token,
    index,
    url: `http://127.0.0.1:${origin.port}/live.m3u8`,
    fps: 1,
  });
  expect(added.status).toBe('success');
  return added.stream_id;
}

async function streamsOf(file: string): Promise<string> {
  const p = Bun.spawn([ffmpeg, '-hide_banner', '-nostdin', '-i', file], { stdout: 'ignore', stderr: 'pipe' });
  const text = await new Response(p.stderr).text();
  await p.exited;
  return text;
}

describe('pulled HLS sources', () => {
  test('a live playlist with audio stays live, and its recording keeps the sound', async () => {
    const dir = join(work, 'with-audio');
    mkdirSync(dir, { recursive: true });
    children.push(
      loopClip(ffmpeg, 'speech-over-bottles.mp4', 'hls', join(dir, 'live.m3u8'), {
        audio: true,
        extra: ['-hls_time', '1', '-hls_list_size', '6', '-hls_flags', 'delete_segments+omit_endlist'],
      }),
    );
    const id = await addPulled('audio-cam', dir);
    const first = await waitStream(id, (s) => s?.status === 'live' && s.latest_time >= 2, 60_000, 'live');
    // 12 s more, looked at every 300 ms: never anything but live (before: reconnecting every ~4 s).
    const seen = new Set<string>();
    const reasons = new Set<string>();
    const until = Date.now() + 12_000;
    while (Date.now() < until) {
      const s = await stream(id);
      seen.add(s.status);
      if (s.reason) reasons.add(s.reason);
      await Bun.sleep(300);
    }
    expect({ statuses: [...seen], reasons: [...reasons] }).toEqual({ statuses: ['live'], reasons: [] });
    const last = await stream(id);
    // Frames kept coming (how many depends on the machine's load: the status is the point).
    expect(last.frames_analysed).toBeGreaterThan(first.frames_analysed);
    // A finished recording segment has the video and the sound.
    const liveDir = join(srv.dataDir, 'media', last.file_id, 'live');
    const segs = readdirSync(liveDir).sort();
    expect(segs.length).toBeGreaterThanOrEqual(2);
    const info = await streamsOf(join(liveDir, segs[0]!));
    expect(info).toMatch(/Video: h264/);
    expect(info).toMatch(/Audio: aac/);
    await post(`/streams/${id}/stop?token=${srv.token}`, {});
  }, 120_000);

  test('a playlist that ends ends the stream (status ended), and is not replayed', async () => {
    const dir = join(work, 'ending');
    mkdirSync(dir, { recursive: true });
    // 10 s of the clip in real time as HLS; at its end ffmpeg writes #EXT-X-ENDLIST.
    const publisher = Bun.spawn(
      [
        ffmpeg,
        '-v',
        'error',
        '-re',
        '-i',
        clip('bottles.mp4'),
        '-t',
        '10',
        '-an',
        '-c:v',
        'libx264',
        '-preset',
        'ultrafast',
        '-g',
        '25',
        '-hls_time',
        '1',
        '-hls_list_size',
        '0',
        '-f',
        'hls',
        join(dir, 'live.m3u8'),
      ],
      { stdin: 'ignore', stdout: 'ignore', stderr: 'ignore' },
    );
    children.push(publisher);
    await Bun.sleep(2000);
    const id = await addPulled('ending-cam', dir);
    await waitStream(id, (s) => s?.status === 'ended', 60_000, 'the stream ended');
    // The frames that came before the end are still analysed (their window waits ~1.2 s to reorder).
    await Bun.sleep(3000);
    const ended = await stream(id);
    expect(ended.status).toBe('ended');
    expect(ended.reason).toMatch(/ended/);
    // Stream time is what the source played (about 8 s of its 10 from when it was added), no more.
    expect(ended.latest_time).toBeLessThanOrEqual(11);
    expect(ended.frames_analysed).toBeGreaterThanOrEqual(4);
    // Nothing more comes: no replay of the ended playlist as new live time.
    await Bun.sleep(5000);
    const later = await stream(id);
    expect(later.status).toBe('ended');
    expect(later.latest_time).toBe(ended.latest_time);
    expect(later.frames_analysed).toBe(ended.frames_analysed);
    // It no longer counts as running: resuming it is refused with the reason.
    const r = await fetch(`${srv.url}/streams/${id}/resume?token=${srv.token}`, { method: 'POST' });
    expect(r.status).toBe(409);
    expect(((await r.json()) as any).message).toMatch(/ended/);
  }, 120_000);
});
