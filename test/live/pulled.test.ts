/**
 * Live streams, pulled (issue 21): an HLS live playlist written by ffmpeg from a shared clip into a
 * folder served on 127.0.0.1 behind a password, pulled by the real server (a child process, so it
 * can be killed with SIGKILL). Live within seconds, objects as segments with stream times, an object
 * alert fired once; the source killed and restarted → reconnects; the server killed → the stream
 * resumes with no duplicates (invariant checker); the password never in logs or answers.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { hlsLive, liveClient, liveWorkDir, serveFolder, until } from '../factories';
import { checkInvariants } from '../hardening/invariants';
import { kill9, spawnServer, stopAll, stopServer, type ServerProc } from '../hardening/proc';

const SECRET = 's3cret-Pw9';
let work: string;
let hlsDir: string;
let ffmpeg: string;
let publisher: ReturnType<typeof Bun.spawn> | null = null;
let origin: ReturnType<typeof Bun.serve>;
const stderrText: string[] = [];
const answers: string[] = [];

function startPublisher(): void {
  rmSync(hlsDir, { recursive: true, force: true });
  mkdirSync(hlsDir, { recursive: true });
  // The clip looped in real time as a live playlist (no end list), 1 s segments.
  publisher = hlsLive(ffmpeg, 'bottles.mp4', hlsDir);
}

function drain(s: ServerProc): void {
  void (async () => {
    const dec = new TextDecoder();
    try {
      for await (const c of s.proc.stderr as ReadableStream<Uint8Array>) stderrText.push(dec.decode(c));
    } catch {
      /* closed */
    }
  })();
}

beforeAll(async () => {
  ({ work, ffmpeg } = await liveWorkDir('live-hls'));
  hlsDir = join(work, 'hls');
  origin = serveFolder(hlsDir, { basic: `cam:${SECRET}` });
  startPublisher();
});

afterAll(async () => {
  publisher?.kill('SIGKILL');
  origin?.stop(true);
  await stopAll();
  rmSync(work, { recursive: true, force: true });
});

const args = ['--analyzers', 'ocr,objects', '--analysis-workers', '0', '--live-stall-sec', '4'];

describe('a pulled HLS live playlist', () => {
  test('goes live, is understood, alerts once, reconnects, survives kill -9, keeps its password', async () => {
    const dataDir = join(work, 'data');
    let srv = await spawnServer(dataDir, args, { stderr: 'pipe', logLevel: 'info' });
    drain(srv);
    const { api, post, performanceIndex } = liveClient(() => srv, answers);
    const tok = srv.token;
    await performanceIndex('yard');
    await post('/alerts', { token: tok, index: 'yard', kind: 'object', query: 'bottle', cooldown_sec: 3600 });
    const port = origin.port;
    const added = await post('/add-stream', {
      token: tok,
      index: 'yard',
      url: `http://cam:${SECRET}@127.0.0.1:${port}/live.m3u8`,
      fps: 1,
    });
    expect(added.status).toBe('success');
    const streams = () => api(`/streams?token=${tok}`);
    const t0 = Date.now();
    let s = await until(streams, (l) => l[0]?.status === 'live', 60_000, 'the stream live', 250);
    const liveAfterMs = Date.now() - t0;
    expect(liveAfterMs).toBeLessThan(60_000);
    expect(s[0].source).toBe(`http://127.0.0.1:${port}/…`);

    // The bottles, as object segments of the stream with times inside what was analysed.
    const hit = await until(
      () => api(`/search?token=${tok}&index=yard&q=bottle`),
      (r) => r.moments?.some((m: { kind: string }) => m.kind === 'object'),
      120_000,
      'bottles found',
      500,
    );
    const obj = hit.moments.find((m: { kind: string }) => m.kind === 'object');
    expect(obj.video_id).toBe(s[0].file_id);
    s = await streams();
    expect(obj.start).toBeGreaterThanOrEqual(0);
    expect(obj.end).toBeLessThanOrEqual(s[0].latest_time + 1.01);
    const fired = await until(
      () => api(`/alerts/fired?token=${tok}`),
      (l) => l.length > 0,
      30_000,
      'the alert',
    );
    expect(fired).toHaveLength(1);
    expect(fired[0].frame_url).toContain('/frames/');

    // The source vanishes: detected as stalled, reconnected once it is back.
    publisher!.kill('SIGKILL');
    await publisher!.exited;
    await until(streams, (l) => l[0]?.status === 'reconnecting', 30_000, 'reconnecting', 250);
    startPublisher();
    await until(streams, (l) => l[0]?.status === 'live', 90_000, 'live again', 250);
    const before = (await streams())[0].frames_analysed;

    // kill -9 of the server: the stream resumes on the next start, nothing twice.
    const { orphans, orphanExitMs } = await kill9(srv);
    console.log(`kill -9: ${orphans} child processes of the server gone in ${orphanExitMs} ms`);
    srv = await spawnServer(dataDir, args, { stderr: 'pipe', logLevel: 'info' });
    drain(srv);
    await until(
      streams,
      (l) => l[0]?.status === 'live' && l[0].frames_analysed > before + 2,
      90_000,
      'the stream resumed after kill -9',
      500,
    );
    // Still one event for the one episode of bottles (the bottles never left).
    expect(await api(`/alerts/fired?token=${tok}`)).toHaveLength(1);
    await api(`/index-resources?token=${tok}&index=yard`);
    await stopServer(srv);
    expect((await checkInvariants(dataDir)).violations).toEqual([]);

    const logs = stderrText.join('');
    expect(logs).toContain('live stream added');
    expect(logs).not.toContain(SECRET);
    for (const a of answers) expect(a).not.toContain(SECRET);
  }, 400_000);
});
