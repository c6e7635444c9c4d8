/** Pure parts of the hosted API's search and flows: how moments are written, hashes, spreading frames. */
import { expect, test } from 'bun:test';
import sharp from 'sharp';
import { bucketOf, clock, frameAt, minSec, sdkMatch } from '../src/flows/format';
import { spread } from '../src/flows/moderation';
import { dHash, hamming, SAME_PICTURE_BITS } from '../src/flows/phash';
import type { Sharp } from '../src/analysis/assets/sharp';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveBinaries } from '../src/media/binaries';
import { clip } from './helpers';

test('a match is [file_id, start_frame, end_frame, "m min, s sec", "m min, s sec"] at the video\'s fps', () => {
  expect(sdkMatch('F1', 22.5, 24.2, 29.97)).toEqual(['F1', 674, 725, '0 min, 22 sec', '0 min, 24 sec']);
  expect(minSec(82.9)).toBe('1 min, 22 sec');
  expect(minSec(3600)).toBe('60 min, 0 sec');
  // Frame 0 is the first; an unknown rate counts seconds.
  expect(frameAt(0, 25)).toBe(0);
  expect(frameAt(1, 25)).toBe(25);
  expect(frameAt(7.9, null)).toBe(7);
});

test('flow times: "MM:SS" for clips, "HH:MM:SS" for scenes', () => {
  expect(clock(65)).toBe('01:05');
  expect(clock(3725, true)).toBe('01:02:05');
  expect(clock(0, true)).toBe('00:00:00');
});

test('kinds go to the list the SDK reads them from', () => {
  expect(bucketOf('ocr')).toBe('ocr');
  expect(bucketOf('speech')).toBe('transcript');
  expect(bucketOf('transcript')).toBe('transcript');
  for (const k of ['shot', 'object', 'caption', 'face'] as const) expect(bucketOf(k)).toBe('embeddings');
});

test('the perceptual hash keeps a picture through scaling and JPEG, and tells different pictures apart', async () => {
  const s = sharp as unknown as Sharp;
  const dir = mkdtempSync(join(tmpdir(), 'vidq-flows-units-'));
  const { ffmpeg } = await resolveBinaries(join(dir, 'bin'));
  const proc = Bun.spawn(
    [
      ffmpeg,
      '-v',
      'error',
      '-ss',
      '5',
      '-i',
      clip('bottles.mp4'),
      '-frames:v',
      '1',
      '-f',
      'image2pipe',
      '-c:v',
      'png',
      '-',
    ],
    { stdout: 'pipe' },
  );
  const png = Buffer.from(await new Response(proc.stdout).arrayBuffer());
  rmSync(dir, { recursive: true, force: true });
  const small = await sharp(png).resize(320).jpeg({ quality: 60 }).toBuffer();
  const other = await sharp(png).flop().toBuffer();
  const h = await dHash(s, png);
  expect(hamming(h, await dHash(s, small))).toBeLessThanOrEqual(SAME_PICTURE_BITS);
  expect(hamming(h, await dHash(s, other))).toBeGreaterThan(SAME_PICTURE_BITS);
});

test('frames to judge are spread evenly over the video', () => {
  const items = Array.from({ length: 100 }, (_, k) => k);
  expect(spread(items, 4)).toEqual([12, 37, 62, 87]);
  expect(spread([1, 2], 4)).toEqual([1, 2]);
});
