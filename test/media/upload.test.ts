/**
 * The files people have, through the real server: an MPEG-TS camcorder file (on which the bundled
 * ffprobe may crash), an animated GIF and a portrait phone video are stored with their real type
 * and displayed size, analysed, and the GIF gets a playable copy. Files made here with ffmpeg.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveBinaries } from '../../src/media/binaries';
import { ffmpegSync, uploadAndWaitReady } from '../factories';
import { clip, getJson, postJson, startTestServer, type TestServer } from '../helpers';

let dir: string;
let srv: TestServer;
let origin: ReturnType<typeof Bun.serve>;
const made: Record<string, string> = {};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vidq-upload-kinds-'));
  const { ffmpeg } = await resolveBinaries(join(dir, 'bin'));
  const make = (name: string, args: string[]) => {
    const out = join(dir, name);
    ffmpegSync(ffmpeg, [...args, out]);
    made[name] = out;
  };
  make('camcorder.m2ts', [
    '-t',
    '4',
    '-i',
    clip('speech-over-bottles.mp4'),
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-c:a',
    'aac',
  ]);
  make('dog.gif', ['-t', '3', '-i', clip('skateboarding-dog.mp4'), '-vf', 'scale=160:-2', '-r', '8']);
  make('side.mp4', [
    '-t',
    '3',
    '-i',
    clip('skateboarding-dog.mp4'),
    '-vf',
    'transpose=1',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-c:a',
    'aac',
  ]);
  make('two-tracks.mkv', [
    '-i',
    clip('speech-over-bottles.mp4'),
    '-i',
    clip('drummer-vertical.mp4'),
    '-map',
    '0:v',
    '-map',
    '1:a',
    '-map',
    '0:a',
    '-t',
    '11',
    '-c:v',
    'copy',
    '-c:a',
    'aac',
    '-metadata:s:a:1',
    'language=eng',
  ]);
  make('phone.mov', ['-i', made['side.mp4']!, '-c', 'copy', '-metadata:s:v', 'rotate=90', '-f', 'mov']);
  origin = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (req) => new Response(Bun.file(made[new URL(req.url).pathname.slice(1)] ?? '/nonexistent')),
  });
  srv = await startTestServer({ 'analysis-workers': '1', analyzers: 'visual,speech,embeddings' });
});
afterAll(async () => {
  await srv?.stop();
  origin?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('M2TS, animated GIF and a rotated QuickTime phone video are stored, described and analysed', async () => {
  for (const name of ['camcorder.m2ts', 'dog.gif', 'phone.mov']) {
    const up = await postJson(srv.url, '/remote-upload', {
      token: srv.token,
      index: 'kinds',
      url: `http://127.0.0.1:${origin.port}/${name}`,
    });
    expect(up.status).toBe(200);
  }
  let rows: any[] = [];
  for (let i = 0; i < 1200; i++) {
    rows = (await getJson(srv.url, `/index-resources?token=${srv.token}&index=kinds`)).body;
    if (
      rows.every((r) => r.status === 'ready' || r.status === 'failed') &&
      rows.find((r) => r.file_name === 'dog.gif')?.metadata.analysis?.playback?.state === 'made'
    )
      break;
    await Bun.sleep(100);
  }
  const by = (n: string) => rows.find((r) => r.file_name === n);
  expect(rows.map((r) => r.status)).toEqual(['ready', 'ready', 'ready']);
  expect(by('camcorder.m2ts')).toMatchObject({
    file_type: 'video/mp2t',
    metadata: { width: 640, height: 360, has_audio: true },
  });
  expect(by('camcorder.m2ts').metadata.analysis.speech.segments).toBeGreaterThan(0);
  expect(by('dog.gif')).toMatchObject({ file_type: 'image/gif', metadata: { has_audio: false } });
  expect(by('dog.gif').metadata.duration).toBeGreaterThan(2.5);
  expect(by('dog.gif').metadata.analysis.shots.frames).toBeGreaterThan(0);
  expect(by('phone.mov')).toMatchObject({ file_type: 'video/quicktime', metadata: { width: 576, height: 1024 } });
  // A GIF cannot play in <video>: its copy can.
  const copy = await fetch(by('dog.gif').playback_src);
  expect(copy.status).toBe(200);
  expect(copy.headers.get('content-type')).toBe('video/mp4');
  expect((await copy.arrayBuffer()).byteLength).toBeGreaterThan(1000);
});

test('with several audio tracks, answers say which track the speech is on', async () => {
  await uploadAndWaitReady(srv, 'tracks', `http://127.0.0.1:${origin.port}/two-tracks.mkv`, {
    timeoutMs: 120_000,
    intervalMs: 100,
  });
  const indexId = (await getJson(srv.url, `/indexes?token=${srv.token}`)).body.find(
    (i: any) => i.name === 'tracks',
  ).index_id;
  const res = await postJson(srv.url, '/inquire', { token: srv.token, index: indexId, prompt: 'Is somebody talking?' });
  expect(res.status).toBe(200);
  expect(res.body.output).toContain('audio track 2 (eng)');
});
