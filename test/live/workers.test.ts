/**
 * Live windows are analysed in the analysis worker processes (issue 36), as files are: a server
 * with one worker, pushed frames of a real clip, the real object detector. The windows' segments,
 * frames and alert reach the stream's resource through the worker (its log says which process
 * analysed them), and the server's own request thread is free meanwhile.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { clipFrames, liveClient, liveWorkDir, until } from '../factories';
import { startTestServer, type TestServer } from '../helpers';

let srv: TestServer;
let work: string;
let pngs: string[] = [];
const logs: string[] = [];

beforeAll(async () => {
  let ffmpeg: string;
  ({ work, ffmpeg } = await liveWorkDir('live-workers'));
  pngs = await clipFrames(ffmpeg, 'bottles.mp4', work, { seconds: 6, prefix: 'w' });
  srv = await startTestServer(
    { analyzers: 'objects', 'analysis-workers': '1', 'log-level': 'debug' },
    { logSink: (l) => logs.push(l) },
  );
}, 120_000);

afterAll(async () => {
  await srv?.stop();
  rmSync(work, { recursive: true, force: true });
});

const { post, performanceIndex, api } = liveClient(() => srv);

describe('live windows in the analysis workers', () => {
  test('pushed frames are analysed by a worker process: object segments, frames and an alert', async () => {
    await performanceIndex('cam');
    await post('/alerts', { token: srv.token, index: 'cam', kind: 'object', query: 'bottle', cooldown_sec: 600 });
    const added = await post('/add-stream', { token: srv.token, index: 'cam' });
    expect(added.status).toBe('success');
    const t0 = Math.floor(Date.now() / 1000) - 10;
    for (let i = 0; i < pngs.length; i++)
      expect(await post('/stream', { base64_image: pngs[i], stream_id: added.stream_id, time: t0 + i })).toEqual({
        success: true,
      });
    const streams = await until(
      () => api(`/streams?token=${srv.token}`),
      (l: any[]) => l[0]?.frames_analysed === pngs.length,
      90_000,
      'the pushed frames analysed',
      250,
    );
    expect(streams[0].latest_time).toBe(pngs.length - 1);
    const hit = await until(
      () => api(`/search?token=${srv.token}&index=cam&q=bottle`),
      (r: any) => r.moments?.some((m: { kind: string }) => m.kind === 'object'),
      30_000,
      'bottles found',
    );
    const obj = hit.moments.find((m: { kind: string }) => m.kind === 'object');
    expect(obj.video_id).toBe(streams[0].file_id);
    // One episode of bottles: one alert, published to the server's listeners from the worker's result.
    const fired = await until(
      () => api(`/alerts/fired?token=${srv.token}`),
      (l: any[]) => l.length > 0,
      30_000,
      'the alert',
    );
    expect(fired).toHaveLength(1);
    expect(fired[0].stream_id).toBe(added.stream_id);
    // The worker process analysed the windows (its log lines carry role "worker").
    const analysed = logs
      .map((l) => {
        try {
          return JSON.parse(l);
        } catch {
          return null;
        }
      })
      .filter((l) => l?.msg === 'live window analysed');
    expect(analysed.length).toBeGreaterThan(0);
    expect(analysed.every((l) => l.role === 'worker' && l.stream_id === added.stream_id)).toBe(true);
    expect(analysed.reduce((n, l) => n + l.frames, 0)).toBe(pngs.length);
  }, 180_000);
});
