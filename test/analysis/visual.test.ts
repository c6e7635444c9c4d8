/** Shots and sampled frames of real clips, from one decode. */
import { describe, expect, test } from 'bun:test';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_VISUAL, shotsFrom, thinFrames, VisualAnalyzer } from '../../src/analysis/stages/visual';
import { createLogger } from '../../src/log';
import { resolveBinaries } from '../../src/media/binaries';
import { clip } from '../helpers';
import { stageContext } from '../factories';

async function runVisual(name: string, duration: number, width: number) {
  const dir = mkdtempSync(join(tmpdir(), 'vidq-visual-'));
  const { ffmpeg } = await resolveBinaries(join(dir, 'bin'));
  const ctx = stageContext({
    video: { id: 'x', path: clip(name), dir, durationSec: duration, fps: 25, width, height: 0, hasAudio: false },
    ffmpeg,
  });
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
    const ctx = stageContext({
      video: { id: 'x', path: clip(name), dir, durationSec: duration, fps: 25, width, height: 0, hasAudio: false },
      ffmpeg,
      log: Object.assign(Object.create(log), { warn: (msg: string) => warnings.push(msg) }),
      progress: (f) => events.push(`progress ${f}`),
      emitFrame: (f) => {
        events.push('frame');
        handed.push({ t: f.t, shot: f.shot, file: f.file, onDisk: existsSync(f.path) });
      },
    });
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

describe('sampled frame times', () => {
  /**
   * A strip of 12 black/white blocks across the top of every picture spells its own time in
   * hundredths of a second (bit i = block i), drawn by ffmpeg from the frame's timestamp: the
   * content's time can be read back from a stored JPEG without our code.
   */
  const TIME_STRIP =
    "geq=lum='if(lt(Y\\,40)\\,255*mod(floor(round(T*100)/pow(2\\,floor(X/40)))\\,2)\\,128)':cb=128:cr=128";

  function ffmpegOk(ffmpeg: string, args: string[]) {
    const p = Bun.spawnSync([ffmpeg, '-v', 'error', '-y', ...args]);
    if (p.exitCode !== 0) throw new Error(p.stderr.toString());
    return p.stdout;
  }

  /** The time a picture's strip spells. */
  function stripTime(ffmpeg: string, jpeg: string): number {
    const grey = ffmpegOk(ffmpeg, ['-i', jpeg, '-vf', 'scale=480:270,format=gray', '-f', 'rawvideo', '-']);
    let code = 0;
    for (let bit = 0; bit < 12; bit++) if (grey[20 * 480 + 40 * bit + 20]! > 128) code += 2 ** bit;
    return code / 100;
  }

  /** Times of the clip's video frames as a player counts them (from the file's start), from ffprobe. */
  function framePts(ffprobe: string, path: string): number[] {
    const p = Bun.spawnSync([
      ffprobe,
      '-v',
      'error',
      '-show_entries',
      'format=start_time:packet=pts_time',
      '-select_streams',
      'v:0',
      '-of',
      'json',
      path,
    ]);
    const info = JSON.parse(p.stdout.toString()) as { packets: { pts_time: string }[]; format: { start_time: string } };
    const start = Number(info.format.start_time);
    return info.packets.map((k) => Number(k.pts_time) - start).sort((a, b) => a - b);
  }

  for (const [kind, source, delay, container, maxCandidates] of [
    ['25 fps', 'color=c=gray:s=480x270:r=25:d=8,format=yuv420p', 0, 'mp4', 0],
    ['29.97 fps', 'color=c=gray:s=480x270:r=30000/1001:d=8,format=yuv420p', 0, 'mp4', 0],
    // A candidate every 2 s, as for a video longer than maxCandidates seconds.
    ['sparser sampling', 'color=c=gray:s=480x270:r=25:d=8,format=yuv420p', 0, 'mp4', 4],
    // 25 fps for 3 s, then a frame every 0.16 s.
    [
      'variable frame rate',
      "color=c=gray:s=480x270:r=25:d=6,setpts='if(lt(N\\,75)\\,N/25\\,3+(N-75)*0.16)/TB'",
      0,
      'mkv',
      0,
    ],
    // The container starts with the sound; the first picture comes 0.7 s later.
    ['video starting 0.7 s into the file', 'color=c=gray:s=480x270:r=25:d=8,format=yuv420p', 0.7, 'mp4', 0],
  ] as const) {
    test(`${kind}: a frame stored at t shows the picture on screen at t`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'vidq-stamps-'));
      try {
        const { ffmpeg, ffprobe } = await resolveBinaries(join(dir, 'bin'));
        const coded = join(dir, `coded.${container}`);
        ffmpegOk(ffmpeg, ['-f', 'lavfi', '-i', `${source},${TIME_STRIP}`, '-c:v', 'mpeg4', '-q:v', '2', coded]);
        let path = coded;
        if (delay) {
          path = join(dir, 'delayed.mp4');
          const sound = ['-f', 'lavfi', '-t', '8', '-i', 'anullsrc=r=16000:cl=mono'];
          ffmpegOk(ffmpeg, [
            ...sound,
            '-itsoffset',
            String(delay),
            '-i',
            coded,
            '-map',
            '1:v',
            '-map',
            '0:a',
            '-c:v',
            'copy',
            '-c:a',
            'aac',
            path,
          ]);
        }
        const pts = framePts(ffprobe, path);
        const duration = pts.at(-1)! + 0.04;
        const read: { t: number; path: string }[] = [];
        const ctx = stageContext({
          video: { id: 'x', path, dir, durationSec: duration, fps: 25, width: 480, height: 270, hasAudio: !!delay },
          ffmpeg,
          emitFrame: (f) => read.push(f),
          emitProbe: (f) => read.push(f),
        });
        // Up to a frame a second kept, and probes between them: every candidate is looked at.
        await new VisualAnalyzer({ ...DEFAULT_VISUAL, frameIntervalSec: 1, maxCandidates }).run(ctx);
        expect(read.length).toBeGreaterThanOrEqual(maxCandidates ? 2 : Math.floor(duration) - 1);
        const wrong = [];
        for (const f of read) {
          // On screen at t: the last picture at or before t (before the first one: the first one).
          const onScreen = pts.filter((p) => p <= Math.max(f.t, pts[0]!) + 1e-6).at(-1)!;
          const shows = stripTime(ffmpeg, f.path) + delay;
          // The strip counts hundredths.
          if (Math.abs(shows - onScreen) > 0.011) wrong.push({ t: f.t, shows, onScreen });
        }
        expect(wrong).toEqual([]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
