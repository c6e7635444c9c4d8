/**
 * The files a new user tries first (issue 23), each made here from the shared clips with the
 * project's ffmpeg, through the real server and its analysis worker:
 * - an MPEG-TS file passes every stage that reads streams, subtitles included (the bundled ffprobe
 *   crashes on MPEG-TS on some CPUs; every ffprobe call falls back to ffmpeg's summary);
 * - a QuickTime HEVC phone video stored on its side with a rotate tag is described at its
 *   displayed size, its sampled frames are portrait, and it is playable when `ready`: `playback_src`
 *   is there (answering 503 with Retry-After while the copy is made), and the copy is H.264 turned
 *   as the player turns the original, at the displayed size.
 * A stand-in ffprobe that dies by SIGSEGV (a script, named so) shows the fallback where the real
 * one does not crash.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { resolveBinaries } from '../../src/media/binaries';
import { probeStreams } from '../../src/media/ffprobe';
import { probeFile } from '../../src/media/probe';
import { probeSubtitles, readCues } from '../../src/media/subtitles';
import { ffmpegSync } from '../factories';
import { clip, getJson, postJson, startTestServer, type TestServer } from '../helpers';

let dir: string;
let ffmpeg: string;
let ffprobe: string;
/** Stand-in for the crashing bundled ffprobe: a script that kills itself with SIGSEGV. */
let crashingFfprobe: string;
const made: Record<string, string> = {};

function make(name: string, args: string[]): string {
  const out = join(dir, name);
  ffmpegSync(ffmpeg, [...args, out]);
  made[name] = out;
  return out;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vidq-first-hour-'));
  ({ ffmpeg, ffprobe } = await resolveBinaries(join(dir, 'bin')));
  crashingFfprobe = join(dir, 'ffprobe-segv');
  writeFileSync(crashingFfprobe, '#!/bin/sh\nkill -SEGV $$\n');
  chmodSync(crashingFfprobe, 0o755);
  // The commands (shortened to a few seconds).
  make('clip.ts', [
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
    '-f',
    'mpegts',
  ]);
  // A phone's HEVC video: stored on its side (transpose=2), tagged to be shown turned. This ffmpeg
  // drops a rotate tag set while encoding, so it is set in a second, copying step.
  make('side-hevc.mov', [
    '-t',
    '3',
    '-i',
    clip('skateboarding-dog.mp4'),
    '-vf',
    'transpose=2',
    '-c:v',
    'libx265',
    '-preset',
    'ultrafast',
    '-x265-params',
    'log-level=error',
    '-tag:v',
    'hvc1',
    '-c:a',
    'aac',
  ]);
  make('phone-hevc.mov', ['-i', made['side-hevc.mov']!, '-c', 'copy', '-metadata:s:v', 'rotate=90', '-f', 'mov']);
  make('subs.mkv', [
    '-t',
    '3',
    '-i',
    clip('bottles.mp4'),
    '-f',
    'srt',
    '-i',
    'data:text/plain;base64,' + btoa('1\n00:00:00,500 --> 00:00:02,000\nTwo bottles on a table\n\n'),
    '-map',
    '0:v',
    '-map',
    '1:s',
    '-c:v',
    'copy',
    '-c:s',
    'srt',
    '-metadata:s:s:0',
    'language=fra',
  ]);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('every ffprobe call falls back to ffmpeg when ffprobe crashes', () => {
  test('the MPEG-TS clip: streams and subtitle tracks are listed with the real ffprobe and with a crashing one', async () => {
    for (const tool of [ffprobe, crashingFfprobe]) {
      const probe = await probeStreams({ ffprobe: tool, ffmpeg }, made['clip.ts']!);
      expect(probe.ok).toBe(true);
      if (probe.ok) expect(probe.parsed.streams?.map((s) => s.codec_type)).toEqual(['video', 'audio']);
      expect(await probeSubtitles({ ffprobe: tool, ffmpeg }, made['clip.ts']!)).toEqual([]);
    }
  });

  test('a subtitle track found through the fallback keeps its stream index, language and cues', async () => {
    const tracks = await probeSubtitles({ ffprobe: crashingFfprobe, ffmpeg }, made['subs.mkv']!);
    expect(tracks).toEqual([{ index: 1, codec: 'subrip', language: 'fra', text: true }]);
    const cues = await readCues(ffmpeg, made['subs.mkv']!, tracks[0]!.index);
    expect(cues).toEqual([{ start: 0.5, end: 2, text: 'Two bottles on a table' }]);
  });

  test('without ffmpeg to fall back on, a crash is the tools’ fault, not "unreadable file"', async () => {
    const probe = await probeStreams({ ffprobe: crashingFfprobe }, made['clip.ts']!);
    expect(probe).toMatchObject({ ok: false, toolFault: true });
    await expect(probeSubtitles({ ffprobe: crashingFfprobe }, made['clip.ts']!)).rejects.toThrow(/ffprobe crashed/);
  });

  test('the HEVC phone video reports its displayed (portrait) size, with either tool', async () => {
    for (const tool of [ffprobe, crashingFfprobe]) {
      const info = await probeFile(tool, made['phone-hevc.mov']!, { maxDurationSec: 3600, ffmpeg });
      expect(info).toMatchObject({ videoCodec: 'hevc', mimeType: 'video/quicktime', width: 576, height: 1024 });
    }
  });
});

describe('through the server', () => {
  let srv: TestServer;
  let origin: ReturnType<typeof Bun.serve>;
  beforeAll(async () => {
    origin = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: (req) => new Response(Bun.file(made[new URL(req.url).pathname.slice(1)] ?? '/nonexistent')),
    });
    srv = await startTestServer({ 'analysis-workers': '1', analyzers: 'visual,subtitles' });
  });
  afterAll(async () => {
    await srv?.stop();
    origin?.stop();
  });

  const add = async (name: string, index: string) => {
    const up = await postJson(srv.url, '/remote-upload', {
      token: srv.token,
      index,
      url: `http://127.0.0.1:${origin.port}/${name}`,
    });
    expect(up.status).toBe(200);
  };
  const rowsOf = async (index: string): Promise<any[]> =>
    (await getJson(srv.url, `/index-resources?token=${srv.token}&index=${index}`)).body;
  /** Polls until every row is ready or failed; checks `check` on each ready row the first time it is seen. */
  const untilSettled = async (index: string, check: (row: any) => Promise<void> | void): Promise<any[]> => {
    const seen = new Set<string>();
    for (let i = 0; i < 1800; i++) {
      const rows = await rowsOf(index);
      for (const r of rows)
        if (r.status === 'ready' && !seen.has(r.file_id)) {
          seen.add(r.file_id);
          await check(r);
        }
      if (rows.length && rows.every((r) => r.status === 'ready' || r.status === 'failed')) return rows;
      await Bun.sleep(50);
    }
    throw new Error('the videos did not settle');
  };

  test('an MPEG-TS file passes the subtitles stage', async () => {
    await add('clip.ts', 'ts');
    const [row] = await untilSettled('ts', () => {});
    expect(row.error).toBeUndefined();
    expect(row).toMatchObject({ status: 'ready', file_type: 'video/mp2t', metadata: { width: 640, height: 360 } });
    expect(row.metadata.analysis.subtitles).toBeDefined();
  });

  test('a QuickTime HEVC phone video is playable when ready, upright at its displayed size', async () => {
    await add('phone-hevc.mov', 'hevc');
    let atReady: Response | undefined;
    const [row] = await untilSettled('hevc', async (r) => {
      // The first sight of `ready`: a browser must have something it can play, or be told to wait.
      expect(r.playback_src).toBeString();
      atReady = await fetch(r.playback_src);
      if (atReady.status === 503) {
        expect(r.metadata.analysis.playback).toEqual({ state: 'making' });
        expect(Number(atReady.headers.get('retry-after'))).toBeGreaterThan(0);
        expect(((await atReady.json()) as { error: number }).error).toBe(503);
      } else {
        expect(atReady.status).toBe(200);
        expect(atReady.headers.get('content-type')).toBe('video/mp4');
      }
    });
    expect(atReady).toBeDefined();
    expect(row).toMatchObject({
      status: 'ready',
      file_type: 'video/quicktime',
      metadata: { video_codec: 'hevc', width: 576, height: 1024 },
    });
    // The sampled frames (the timeline's thumbnails, the answers' citations) are turned like the player.
    const segs = (await getJson(srv.url, `/videos/${row.file_id}/segments?token=${srv.token}`)).body;
    expect(segs.frames.length).toBeGreaterThan(0);
    const jpeg = await (await fetch(segs.frames[0].url)).arrayBuffer();
    const { width, height } = await sharp(Buffer.from(jpeg)).metadata();
    expect(height!).toBeGreaterThan(width!);
    // The copy arrives: H.264, upright (the rotation applied, none left to apply).
    let copy: Response | undefined;
    for (let i = 0; i < 600; i++) {
      const r = (await rowsOf('hevc'))[0];
      if (r.metadata.analysis.playback?.state === 'made') {
        copy = await fetch(r.playback_src);
        break;
      }
      await Bun.sleep(100);
    }
    expect(copy?.status).toBe(200);
    expect(copy?.headers.get('content-type')).toBe('video/mp4');
    const file = join(dir, 'copy.mp4');
    await Bun.write(file, await copy!.arrayBuffer());
    const info = await probeFile(ffprobe, file, { maxDurationSec: 3600, ffmpeg });
    expect(info).toMatchObject({ videoCodec: 'h264', width: 576, height: 1024, rotation: 0 });
  });
});
