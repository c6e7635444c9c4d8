/**
 * The objects stage's keep-alive (balanced effort, issue 35): a frame that looks like the last
 * detected one is detected again once that detection is `keepAliveSec` old, so a slow change is
 * seen, but not when nothing at all changed since (a parked camera's still picture), where it only
 * cost detections (12 of 63 frames of the bench's 10-minute parked camera, against 3 in thorough).
 * Real detector, frames made with ffmpeg: one still picture, and the same with a small patch.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SampledFrame } from '../../src/analysis/frame-stream';
import { OBJECTS_EFFORT, ObjectsAnalyzer } from '../../src/analysis/stages/objects';
import { createLogger } from '../../src/log';
import { resolveBinaries } from '../../src/media/binaries';

let dir = '';
let ffmpeg = '';
const analyzer = new ObjectsAnalyzer({ ...OBJECTS_EFFORT.balanced, keepAliveSec: 60 });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vidq-keepalive-'));
  ffmpeg = (await resolveBinaries(join(dir, 'bin'))).ffmpeg;
  const make = (file: string, vf: string) => {
    const r = Bun.spawnSync([
      ffmpeg,
      '-v',
      'error',
      '-f',
      'lavfi',
      '-i',
      'testsrc2=s=640x360:d=1',
      '-frames:v',
      '1',
      '-vf',
      vf,
      '-q:v',
      '2',
      '-y',
      join(dir, file),
    ]);
    if (r.exitCode !== 0) throw new Error(r.stderr.toString());
  };
  make('still.jpg', 'null');
  // A small patch (a few of the 32×32 grid's cells): under the 8 cells that count as a new picture.
  make('patch.jpg', 'drawbox=x=300:y=170:w=24:h=14:color=black:t=fill');
});

afterAll(() => {
  analyzer.close();
  rmSync(dir, { recursive: true, force: true });
});

/** One shot, a frame every 10 s for 200 s: the still picture, or from `patchFrom` s on the patched one. */
function frames(patchFrom = Infinity): SampledFrame[] {
  return Array.from({ length: 21 }, (_, i) => {
    const file = i * 10 >= patchFrom ? 'patch.jpg' : 'still.jpg';
    return { t: i * 10, shot: 0, file, path: join(dir, file) };
  });
}

const ctx = () => ({
  ffmpeg,
  signal: new AbortController().signal,
  progress: () => {},
  video: {
    id: 'keepalive',
    path: '',
    dir,
    durationSec: 210,
    fps: 25,
    width: 640,
    height: 360,
    hasAudio: false,
  },
  log: createLogger('error'),
});

describe('objects keep-alive', () => {
  test('a still picture is detected once for the whole shot, however long', async () => {
    const { frames: out, stats } = await analyzer.detect(ctx(), frames());
    expect(out).toHaveLength(21);
    expect(stats.detected).toBe(1);
    expect(stats.reused).toBe(20);
  }, 120_000);

  test('a small change, too small to count as a new picture, is looked at again at the keep-alive', async () => {
    // The patch appears at 30 s: it looks like the anchor (few cells), so it is reused until the
    // anchor is 60 s old; then detected again (the anchor moves there), and reused after that.
    const { frames: out, stats } = await analyzer.detect(ctx(), frames(30));
    expect(out.filter((f) => !f.reused).map((f) => f.t)).toEqual([0, 60]);
    expect(stats.detected).toBe(2);
  }, 120_000);
});
