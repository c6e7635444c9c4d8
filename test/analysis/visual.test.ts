/** Shots and sampled frames of real clips, from one decode. */
import { describe, expect, test } from 'bun:test';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StageContext } from '../../src/analysis/contracts';
import { DEFAULT_VISUAL, shotsFrom, thinFrames, VisualAnalyzer } from '../../src/analysis/stages/visual';
import { createLogger } from '../../src/log';
import { resolveBinaries } from '../../src/media/binaries';
import { clip } from '../helpers';

async function runVisual(name: string, duration: number, width: number) {
  const dir = mkdtempSync(join(tmpdir(), 'vidq-visual-'));
  const { ffmpeg } = await resolveBinaries(join(dir, 'bin'));
  const ctx: StageContext = {
    video: { id: 'x', path: clip(name), dir, durationSec: duration, fps: 25, width, height: 0, hasAudio: false },
    ffmpeg,
    signal: new AbortController().signal,
    log: createLogger('error'),
    progress: () => {},
    frames: () => [],
    segments: () => [],
  };
  const result = await new VisualAnalyzer(DEFAULT_VISUAL).run(ctx);
  return { result, dir };
}

describe('visual stage', () => {
  test('finds the cuts of Big Buck Bunny near 12, 16 and 23 s and keeps frames of every shot', async () => {
    const { result, dir } = await runVisual('big-buck-bunny-intro.webm', 30, 1280);
    try {
      const starts = result.segments!.map((s) => s.start);
      expect(starts).toHaveLength(4);
      for (const [got, want] of [
        [starts[1], 12],
        [starts[2], 16],
        [starts[3], 23],
      ] as const)
        expect(Math.abs(got! - want)).toBeLessThanOrEqual(1);
      const shotsWithFrames = new Set(result.frames!.map((f) => f.shot));
      expect(shotsWithFrames.size).toBe(4);
      // At most one frame per interval within a shot.
      for (let i = 1; i < result.frames!.length; i++) {
        const [a, b] = [result.frames![i - 1]!, result.frames![i]!];
        if (a.shot === b.shot) expect(b.t - a.t).toBeGreaterThanOrEqual(DEFAULT_VISUAL.frameIntervalSec);
      }
      const files = readdirSync(join(dir, 'frames')).sort();
      expect(files).toEqual(result.frames!.map((f) => f.file).sort());
      expect(existsSync(join(dir, 'frames.partial'))).toBe(false);
      // Stored frames are small: at most 960 px wide JPEGs.
      const { ffprobe } = await resolveBinaries(join(dir, 'bin'));
      const meta = Bun.spawnSync([
        ffprobe,
        '-v',
        'error',
        '-show_entries',
        'stream=width',
        '-of',
        'csv=p=0',
        join(dir, 'frames', files[0]!),
      ]);
      expect(Number(meta.stdout.toString().trim())).toBe(960);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('finds the cut between each GRID speaker (every 3 s), including the low-contrast ones', async () => {
    const { result, dir } = await runVisual('grid-speakers-33s.mp4', 33, 360);
    try {
      const starts = result.segments!.map((s) => s.start).slice(1);
      expect(starts).toHaveLength(10);
      starts.forEach((s, i) => expect(Math.abs(s - 3 * (i + 1))).toBeLessThanOrEqual(1));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a single-shot clip gives one shot', async () => {
    const { result, dir } = await runVisual('skateboarding-dog.mp4', 14.1, 576);
    try {
      expect(result.segments).toHaveLength(1);
      expect(result.frames!.length).toBeGreaterThanOrEqual(3);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('thinning keeps at least one frame for a shot shorter than the interval', () => {
    const shots = shotsFrom(
      [
        { t: 5, score: 0.9 },
        { t: 6.5, score: 0.9 },
      ],
      10,
    );
    expect(shots.map((s) => [s.start, s.end])).toEqual([
      [0, 5],
      [5, 6.5],
      [6.5, 10],
    ]);
    const candidates = Array.from({ length: 20 }, (_, i) => ({
      t: i / 2,
      file: `${String(i + 1).padStart(6, '0')}.jpg`,
    }));
    const kept = thinFrames(candidates, shots, 3);
    expect(kept.filter((f) => f.shot === 1)).toHaveLength(1);
    expect(kept.filter((f) => f.shot === 0).map((f) => f.t)).toEqual([0.5, 3.5]);
  });
});

describe('frames handed on while decoding', () => {
  /** The visual stage with a reader attached: what it hands on, when, and what it warns about. */
  async function runStreaming(name: string, duration: number, width: number) {
    const dir = mkdtempSync(join(tmpdir(), 'vidq-visual-'));
    const { ffmpeg } = await resolveBinaries(join(dir, 'bin'));
    const events: string[] = [];
    const handed: { t: number; shot: number; file: string; onDisk: boolean }[] = [];
    const warnings: string[] = [];
    const log = createLogger('error');
    const ctx: StageContext = {
      video: { id: 'x', path: clip(name), dir, durationSec: duration, fps: 25, width, height: 0, hasAudio: false },
      ffmpeg,
      signal: new AbortController().signal,
      log: Object.assign(Object.create(log), { warn: (msg: string) => warnings.push(msg) }),
      progress: (f) => events.push(`progress ${f}`),
      frames: () => [],
      segments: () => [],
      emitFrame: (f) => {
        events.push('frame');
        handed.push({ t: f.t, shot: f.shot, file: f.file, onDisk: existsSync(f.path) });
      },
    };
    const result = await new VisualAnalyzer(DEFAULT_VISUAL).run(ctx);
    rmSync(dir, { recursive: true, force: true });
    // The same clip without a reader: frames picked only at the end, from all the scores.
    const offline = await runVisual(name, duration, width);
    rmSync(offline.dir, { recursive: true, force: true });
    return { result, offline: offline.result, events, handed, warnings };
  }

  for (const [name, duration, width] of [
    ['people-one-by-one.mp4', 139.4, 768],
    ['grid-speakers-33s.mp4', 33, 360],
    ['big-buck-bunny-intro.webm', 30, 1280],
    ['drummer-vertical.mp4', 36.3, 204],
  ] as const) {
    test(`${name}: the frames handed on are exactly the frames an offline pick keeps, none of them ever revised`, async () => {
      const { result, offline, handed, warnings } = await runStreaming(name, duration, width);
      const plain = (fs: { t: number; shot: number; file: string }[]) => fs.map((f) => `${f.t}/${f.shot}/${f.file}`);
      expect(plain(handed)).toEqual(plain(result.frames!));
      expect(plain(result.frames!)).toEqual(plain(offline.frames!));
      expect(result.segments).toEqual(offline.segments!);
      expect(handed.every((f) => f.onDisk)).toBe(true);
      expect(warnings).toEqual([]);
    });
  }

  test('frames reach a reader before the decode is done', async () => {
    const { events } = await runStreaming('people-one-by-one.mp4', 139.4, 768);
    const firstFrame = events.indexOf('frame');
    const decodeFractions = events
      .slice(firstFrame)
      .filter((e) => e.startsWith('progress'))
      .map((e) => Number(e.split(' ')[1]));
    // Some frame was handed on while the decode still had a good part of the clip to go.
    expect(firstFrame).toBeGreaterThanOrEqual(0);
    expect(decodeFractions.some((f) => f < 0.8)).toBe(true);
  });
});
