/**
 * ffmpeg's stream summary of a video is read several times while it is indexed: an unchanged file
 * is read once per process, and a changed one is read again.
 */
import { afterAll, expect, test } from 'bun:test';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveBinaries } from '../../src/media/binaries';
import { ffmpegSummary, parseFfmpegSummary } from '../../src/media/ffmpeg-probe';
import { clip } from '../helpers';

const dir = mkdtempSync(join(tmpdir(), 'vidq-summary-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The number of processes `fn` starts. */
async function spawnsOf<T>(fn: () => Promise<T>): Promise<{ result: T; spawns: number }> {
  const spawn = Bun.spawn;
  let spawns = 0;
  (Bun as { spawn: unknown }).spawn = (...args: Parameters<typeof Bun.spawn>) => {
    spawns++;
    return spawn(...args);
  };
  try {
    return { result: await fn(), spawns };
  } finally {
    (Bun as { spawn: unknown }).spawn = spawn;
  }
}

const codecs = (err: string) => parseFfmpegSummary(err)?.streams?.map((s) => s.codec_name);

test('an unchanged file is summarised once; the same path with another file is summarised again', async () => {
  const { ffmpeg } = await resolveBinaries(join(dir, 'bin'));
  const file = join(dir, 'source.mp4');
  copyFileSync(clip('talking-head.mp4'), file);
  const first = await spawnsOf(() => ffmpegSummary(ffmpeg, file));
  expect(first.spawns).toBe(1);
  expect(codecs(first.result.err)).toEqual(['mpeg4', 'aac']);
  const again = await spawnsOf(() => ffmpegSummary(ffmpeg, file));
  expect(again.spawns).toBe(0);
  expect(again.result.err).toBe(first.result.err);

  // Replaced (e.g. a re-upload under the same name): its own streams, not the old ones.
  rmSync(file);
  copyFileSync(clip('bottles.mp4'), file);
  const replaced = await spawnsOf(() => ffmpegSummary(ffmpeg, file));
  expect(replaced.spawns).toBe(1);
  expect(codecs(replaced.result.err)).toEqual(['h264']);
});

test('a missing file is not remembered: once it exists, it is read', async () => {
  const { ffmpeg } = await resolveBinaries(join(dir, 'bin'));
  const file = join(dir, 'later.mp4');
  expect(parseFfmpegSummary((await ffmpegSummary(ffmpeg, file)).err)).toBeNull();
  copyFileSync(clip('chaplin-bw.mp4'), file);
  expect(codecs((await ffmpegSummary(ffmpeg, file)).err)).toEqual(['h264', 'mp3']);
});
