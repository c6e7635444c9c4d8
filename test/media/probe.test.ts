/**
 * Probing the files people have, each made here from the shared clips with the project's ffmpeg:
 * MPEG-TS (on which the bundled ffprobe crashes on some CPUs), animated images, QuickTime, rotated
 * and anamorphic video; and a stand-in ffprobe that dies by SIGSEGV, as the bundled one does.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiError } from '../../src/errors';
import { resolveBinaries } from '../../src/media/binaries';
import { parseFfmpegSummary } from '../../src/media/ffmpeg-probe';
import { probeFile } from '../../src/media/probe';
import { clip } from '../helpers';

let dir: string;
let ffmpeg: string;
let ffprobe: string;
/** A stand-in for a crashing ffprobe: a script that kills itself with SIGSEGV. */
let crashing: string;

async function make(name: string, args: string[]): Promise<string> {
  const out = join(dir, name);
  const p = Bun.spawn([ffmpeg, '-hide_banner', '-loglevel', 'error', '-y', ...args, out], { stderr: 'pipe' });
  const [err, code] = await Promise.all([new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`ffmpeg could not make ${name}: ${err}`);
  return out;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vidq-probe-'));
  ({ ffmpeg, ffprobe } = await resolveBinaries(join(dir, 'bin')));
  crashing = join(dir, 'ffprobe-segv');
  writeFileSync(crashing, '#!/bin/sh\nkill -SEGV $$\n');
  chmodSync(crashing, 0o755);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const opts = () => ({ maxDurationSec: 3600, ffmpeg });

describe('MPEG-TS and a crashing probe tool', () => {
  test('MPEG-2 in MPEG-TS probes (with the real ffprobe, or the ffmpeg fallback where it crashes)', async () => {
    const f = await make('mpeg2.ts', ['-t', '2', '-i', clip('chaplin-bw.mp4'), '-c:v', 'mpeg2video', '-c:a', 'mp2']);
    const info = await probeFile(ffprobe, f, opts());
    expect(info).toMatchObject({
      mimeType: 'video/mp2t',
      ext: 'ts',
      videoCodec: 'mpeg2video',
      width: 640,
      height: 360,
      hasAudio: true,
    });
    expect(info.durationSec).toBeGreaterThan(1.8);
    expect(info.durationSec).toBeLessThan(2.3);
    expect(info.fps).toBe(25);
  });

  test('H.264 in M2TS (camcorder) probes', async () => {
    const f = await make('cam.m2ts', [
      '-t',
      '2',
      '-i',
      clip('chaplin-bw.mp4'),
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-c:a',
      'aac',
    ]);
    const info = await probeFile(ffprobe, f, opts());
    expect(info).toMatchObject({ mimeType: 'video/mp2t', videoCodec: 'h264', width: 640, height: 360, hasAudio: true });
    expect(info.durationSec).toBeGreaterThan(1.8);
  });

  test('a probe that dies by SIGSEGV (stand-in script) falls back to ffmpeg and gives the same facts', async () => {
    const f = await make('small.mp4', ['-t', '2', '-i', clip('chaplin-bw.mp4'), '-c', 'copy']);
    const real = await probeFile(ffprobe, f, opts());
    const fallback = await probeFile(crashing, f, opts());
    expect(fallback).toMatchObject({
      mimeType: real.mimeType,
      videoCodec: real.videoCodec,
      width: real.width,
      height: real.height,
      hasAudio: real.hasAudio,
      fps: real.fps,
    });
    expect(Math.abs(fallback.durationSec - real.durationSec)).toBeLessThan(0.05);
  });

  test('when both tools crash the error blames the tools (500), not the file', async () => {
    const f = await make('small2.mp4', ['-t', '1', '-i', clip('chaplin-bw.mp4'), '-c', 'copy']);
    const err = await probeFile(crashing, f, { maxDurationSec: 3600, ffmpeg: crashing }).catch((e) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(500);
    expect(err.message).toMatch(/probe tool crashed.*SIGSEGV|probe tool crashed.*signal 11/);
    expect(err.message).toMatch(/not of the file/);
    const noFallback = await probeFile(crashing, f, { maxDurationSec: 3600 }).catch((e) => e);
    expect(noFallback.status).toBe(500);
  });

  test("a file that is not media is still the file's fault (415) through the fallback", async () => {
    const f = join(dir, 'junk.ts');
    writeFileSync(f, 'this is not a video at all '.repeat(100));
    const err = await probeFile(crashing, f, opts()).catch((e) => e);
    expect(err.status).toBe(415);
  });
});

describe('animated images are videos', () => {
  test('an animated GIF: duration and frame rate from its frames', async () => {
    const f = await make('anim.gif', [
      '-t',
      '2',
      '-i',
      clip('skateboarding-dog.mp4'),
      '-vf',
      'scale=160:-2',
      '-r',
      '10',
    ]);
    const info = await probeFile(ffprobe, f, opts());
    expect(info).toMatchObject({ mimeType: 'image/gif', ext: 'gif', hasAudio: false, height: 284 });
    // The GIF's pixel aspect (from the scale) is kept: displayed width 158-160.
    expect(Math.abs(info.width - 160)).toBeLessThanOrEqual(2);
    expect(info.durationSec).toBeGreaterThan(1.8);
    expect(info.durationSec).toBeLessThan(2.3);
    expect(info.fps).toBeCloseTo(10, 0);
  });

  test('an animated PNG (APNG)', async () => {
    const f = await make('anim.png', [
      '-t',
      '1',
      '-i',
      clip('skateboarding-dog.mp4'),
      '-vf',
      'scale=120:-2',
      '-r',
      '5',
      '-f',
      'apng',
    ]);
    const info = await probeFile(ffprobe, f, opts());
    expect(info).toMatchObject({ mimeType: 'image/apng', ext: 'png' });
    expect(info.durationSec).toBeGreaterThan(0.8);
    expect(info.fps).toBeCloseTo(5, 0);
  });

  test('a single-frame GIF stays a still image (415)', async () => {
    const f = await make('one.gif', ['-i', clip('chaplin-bw.mp4'), '-frames:v', '1']);
    const err = await probeFile(ffprobe, f, opts()).catch((e) => e);
    expect(err.status).toBe(415);
    expect(err.message).toMatch(/still image/);
  });
});

describe('container types and displayed size', () => {
  test('QuickTime is video/quicktime; MP4 stays video/mp4; Matroska and WebM are told apart', async () => {
    const mov = await make('a.mov', ['-t', '1', '-i', clip('chaplin-bw.mp4'), '-c', 'copy', '-f', 'mov']);
    const mp4 = await make('a.mp4', ['-t', '1', '-i', clip('chaplin-bw.mp4'), '-c', 'copy']);
    const mkv = await make('a.mkv', ['-t', '1', '-i', clip('chaplin-bw.mp4'), '-c', 'copy']);
    const webm = await make('a.webm', [
      '-t',
      '1',
      '-i',
      clip('chaplin-bw.mp4'),
      '-c:v',
      'libvpx',
      '-deadline',
      'realtime',
      '-an',
    ]);
    expect((await probeFile(ffprobe, mov, opts())).mimeType).toBe('video/quicktime');
    expect((await probeFile(ffprobe, mp4, opts())).mimeType).toBe('video/mp4');
    expect((await probeFile(ffprobe, mkv, opts())).mimeType).toBe('video/x-matroska');
    expect((await probeFile(ffprobe, webm, opts())).mimeType).toBe('video/webm');
    // The same through the fallback reader.
    expect((await probeFile(crashing, mov, opts())).mimeType).toBe('video/quicktime');
  });

  test('a phone video stored landscape with a 90° rotation reports its portrait size', async () => {
    // Stored 1024×576 (the portrait clip turned on its side), tagged to be shown turned back.
    // (This ffmpeg drops a rotate tag set while encoding: it is set in a second, copying step.)
    const side = await make('side.mp4', [
      '-t',
      '1',
      '-i',
      clip('skateboarding-dog.mp4'),
      '-vf',
      'transpose=1',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-an',
    ]);
    const f = await make('phone.mp4', ['-i', side, '-c', 'copy', '-metadata:s:v', 'rotate=90']);
    for (const tool of [ffprobe, crashing]) {
      const info = await probeFile(tool, f, opts());
      expect([info.width, info.height]).toEqual([576, 1024]);
      expect((info.rotation ?? 0) % 180).toBe(90);
    }
  });

  test('anamorphic video (SAR 2:1) reports the displayed width', async () => {
    const f = await make('wide.mkv', [
      '-t',
      '1',
      '-i',
      clip('chaplin-bw.mp4'),
      '-vf',
      'scale=320:360,setsar=2',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-an',
    ]);
    for (const tool of [ffprobe, crashing]) {
      const info = await probeFile(tool, f, opts());
      expect([info.width, info.height]).toEqual([640, 360]);
    }
  });

  test('the ffmpeg summary parser reads stream language and attached pictures', () => {
    const text = [
      "Input #0, matroska,webm, from 'x.mkv':",
      '  Duration: 00:01:02.50, start: 0.000000, bitrate: 100 kb/s',
      '    Stream #0:0(eng): Video: hevc (Main), yuv420p(tv), 1920x1080 [SAR 1:1 DAR 16:9], 29.97 fps, 29.97 tbr, 1k tbn (default)',
      '    Stream #0:1(fra): Audio: opus, 48000 Hz, stereo, fltp',
      '    Stream #0:2: Video: mjpeg, yuvj420p, 600x600, 90k tbr, 90k tbn (attached pic)',
    ].join('\n');
    const p = parseFfmpegSummary(text)!;
    expect(p.format).toMatchObject({ format_name: 'matroska,webm', duration: '62.5' });
    expect(p.streams!.map((s) => [s.codec_type, s.codec_name, s.tags?.language])).toEqual([
      ['video', 'hevc', 'eng'],
      ['audio', 'opus', 'fra'],
      ['video', 'mjpeg', undefined],
    ]);
    expect(p.streams![0]).toMatchObject({ width: 1920, height: 1080, avg_frame_rate: '29.97' });
    expect(p.streams![2]!.disposition?.attached_pic).toBe(1);
    expect(parseFfmpegSummary('x.mkv: Invalid data found when processing input')).toBeNull();
  });
});
