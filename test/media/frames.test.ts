/**
 * Frames of a rotated phone video come out upright and at the displayed size: the visual stage on
 * a file made here (the portrait clip stored on its side with a 90° rotate tag), its first frame
 * compared with the same moment of the upright original.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_VISUAL, VisualAnalyzer } from '../../src/analysis/stages/visual';
import { resolveBinaries } from '../../src/media/binaries';
import { probeFile } from '../../src/media/probe';
import { clip } from '../helpers';
import { ffmpegSync, stageContext } from '../factories';

let dir: string;
let ffmpeg: string;
let ffprobe: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vidq-frames-'));
  ({ ffmpeg, ffprobe } = await resolveBinaries(join(dir, 'bin')));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const run = (args: string[]): Uint8Array => ffmpegSync(ffmpeg, args);

/** A picture as a 18×32 grey thumbnail. */
const thumb = (file: string, extra: string[] = []) =>
  run([...extra, '-i', file, '-frames:v', '1', '-vf', 'scale=18:32,format=gray', '-f', 'rawvideo', 'pipe:1']);
const diff = (a: Uint8Array, b: Uint8Array) => a.reduce((s, v, i) => s + Math.abs(v - b[i]!), 0) / a.length;

test('a phone video stored on its side gives upright frames of its displayed size', async () => {
  const side = join(dir, 'side.mp4');
  const phone = join(dir, 'phone.mp4');
  run([
    '-t',
    '2',
    '-i',
    clip('skateboarding-dog.mp4'),
    '-vf',
    'transpose=1',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-an',
    side,
  ]);
  run(['-i', side, '-c', 'copy', '-metadata:s:v', 'rotate=90', phone]);
  const info = await probeFile(ffprobe, phone, { maxDurationSec: 60, ffmpeg });
  expect([info.width, info.height]).toEqual([576, 1024]);
  const ctx = stageContext({
    video: {
      id: 'x',
      path: phone,
      dir,
      durationSec: info.durationSec,
      fps: info.fps,
      width: info.width,
      height: info.height,
      hasAudio: false,
    },
    ffmpeg,
  });
  const result = await new VisualAnalyzer(DEFAULT_VISUAL).run(ctx);
  const files = readdirSync(join(dir, 'frames')).sort();
  const first = join(dir, 'frames', files[0]!);
  const size = Bun.spawnSync([ffprobe, '-v', 'error', '-show_entries', 'stream=width,height', '-of', 'csv=p=0', first])
    .stdout.toString()
    .trim();
  // Portrait, and scaled from the displayed width (576: never upscaled; the area bound may make it
  // smaller), not from the stored one (1024, which gave 960 px wide frames).
  const [w, h] = size.split(',').map(Number);
  expect(w).toBeLessThanOrEqual(576);
  expect(h! / w!).toBeCloseTo(1024 / 576, 1);
  const t = result.frames![0]!.t;
  const original = thumb(clip('skateboarding-dog.mp4'), ['-ss', String(t)]);
  const got = thumb(first);
  const upsideDown = thumb(clip('skateboarding-dog.mp4'), ['-ss', String(t)])
    .slice()
    .reverse();
  expect(diff(got, original)).toBeLessThan(12);
  expect(diff(got, original)).toBeLessThan(diff(got, upsideDown) / 2);
});
