/** On-screen text: PaddleOCR on frames sampled by the visual stage from real clips, and the merge logic. */
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NewSegment, StageContext, StageResult } from '../../src/analysis/contracts';
import { frameDifference, quadOf, thumbnail } from '../../src/analysis/engines/ocr-geometry';
import type { TextLine } from '../../src/analysis/engines/paddle-ocr';
import { OcrAnalyzer } from '../../src/analysis/stages/ocr';
import {
  cleanLines,
  groupBlocks,
  mergeSightings,
  sameTextScore,
  similarity,
  type FrameText,
  type TextBlock,
} from '../../src/analysis/stages/ocr-grouping';
import { DEFAULT_VISUAL, VisualAnalyzer } from '../../src/analysis/stages/visual';
import { resolveBinaries } from '../../src/media/binaries';
import type { Frame, Segment } from '../../src/storage/schema';
import { clip } from '../helpers';
import { stageContext } from '../factories';

const ocr = new OcrAnalyzer({ threads: 2 });
const dirs: string[] = [];
afterAll(async () => {
  await ocr.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

type StoredFrame = Frame & { path: string };

function context(
  video: StageContext['video'],
  ffmpeg: string,
  frames: StoredFrame[],
  shots: NewSegment[],
): StageContext {
  const stored: Segment[] = shots.map((s, i) => ({
    id: i + 1,
    videoId: video.id,
    kind: s.kind,
    start: s.start,
    end: s.end,
    text: s.text,
    confidence: s.confidence ?? null,
    extra: s.extra ?? null,
    embedding: null,
  }));
  return stageContext({ video, ffmpeg, frames: () => frames, segments: () => stored });
}

/** Runs the visual stage (frames + shots, as in the pipeline), then OCR on its frames. */
async function analyze(name: string, durationSec: number, width: number, height: number) {
  const dir = mkdtempSync(join(tmpdir(), 'vidq-ocr-'));
  dirs.push(dir);
  const { ffmpeg } = await resolveBinaries(join(dir, 'bin'));
  const video = { id: name, path: clip(name), dir, durationSec, fps: 25, width, height, hasAudio: false };
  const visual = await new VisualAnalyzer(DEFAULT_VISUAL).run(context(video, ffmpeg, [], []));
  const frames: StoredFrame[] = visual.frames!.map((f, i) => ({
    id: i + 1,
    videoId: name,
    ...f,
    path: join(dir, 'frames', f.file),
  }));
  const ctx = context(video, ffmpeg, frames, visual.segments!);
  const result = await ocr.run(ctx);
  return { result, frames, ctx };
}

const flat = (s: { text: string }) => s.text.replace(/\s+/g, ' ');
const ocrSegments = (r: StageResult) => r.segments!.filter((s) => s.kind === 'ocr');

/** Real clips take seconds each (ffmpeg + OCR), more when the machine is busy. */
const SLOW = 60_000;

describe('ocr on real clips', () => {
  let bbbRun: ReturnType<typeof analyze> | undefined;
  const bunny = () => (bbbRun ??= analyze('big-buck-bunny-intro.webm', 30, 1280, 720));

  test(
    'Big Buck Bunny: "THE PEACH OPEN MOVIE PROJECT PRESENTS" at 20–22 s, nothing before',
    async () => {
      const bbb = await bunny();
      const segs = ocrSegments(bbb.result);
      const credit = segs.find((s) => /PEACH OPEN MOVIE PROJECT/.test(flat(s)));
      expect(credit).toBeDefined();
      // The two lines of the credit are one block, so one segment answers "what does it say".
      expect(flat(credit!)).toContain('PRESENTS');
      expect(credit!.extra!.lines).toEqual(['THE PEACH OPEN MOVIE PROJECT', 'PRESENTS']);
      expect(credit!.start).toBeGreaterThanOrEqual(19);
      expect(credit!.start).toBeLessThanOrEqual(23);
      expect(credit!.end).toBeGreaterThanOrEqual(21);
      expect(credit!.end).toBeLessThanOrEqual(23);
      expect(credit!.confidence!).toBeGreaterThan(0.9);
      const [x, y, w, h] = credit!.extra!.box as number[];
      // White text in the middle of the picture.
      expect(x! + w! / 2).toBeGreaterThan(0.35);
      expect(x! + w! / 2).toBeLessThan(0.65);
      expect(y!).toBeGreaterThan(0.3);
      expect(y! + h!).toBeLessThan(0.7);
      expect(segs.filter((s) => s.start < 19)).toEqual([]);
    },
    SLOW,
  );

  test(
    'a repeated frame reuses the OCR of the first and merges into one segment',
    async () => {
      const bbb = await bunny();
      const credit = bbb.frames.find((f) => Math.abs(f.t - 22) < 0.6)!;
      expect(credit).toBeDefined();
      const frames = [20, 21, 22].map((t, i) => ({ ...credit, id: 100 + i, t, shot: 0 }));
      const ctx = context({ ...bbb.ctx.video, durationSec: 23 }, bbb.ctx.ffmpeg, frames, []);
      const r = await ocr.run(ctx);
      expect(r.summary).toMatchObject({ frames: 3, ocr_frames: 1, reused_frames: 2 });
      expect(r.segments).toHaveLength(1);
      expect(r.segments![0]).toMatchObject({ start: 20, end: 23, extra: { frames: 3 } });
    },
    SLOW,
  );

  test(
    'tilted and upright text is read along its own direction',
    async () => {
      const bbb = await bunny();
      const credit = bbb.frames.find((f) => Math.abs(f.t - 22) < 0.6)!;
      const sharp = (await import('sharp')).default;
      for (const angle of [-12, 90]) {
        const path = join(bbb.ctx.video.dir, `tilted-${angle}.jpg`);
        await sharp(credit.path).rotate(angle, { background: '#000' }).jpeg().toFile(path);
        const frames = [{ ...credit, path }];
        const r = await ocr.run(context({ ...bbb.ctx.video, durationSec: 23 }, bbb.ctx.ffmpeg, frames, []));
        const text = r.segments!.map(flat).join(' ');
        expect(text).toContain('THE PEACH OPEN MOVIE PROJECT');
        expect(text).toContain('PRESENTS');
      }
    },
    SLOW,
  );

  test(
    'SMPTE bars: the burned-in timecode is read on every frame and matches the frame time',
    async () => {
      const { result, frames } = await analyze('smpte-timecode-1080p.mp4', 10, 1920, 1080);
      const segs = ocrSegments(result);
      const codes = segs.filter((s) => /00:00:\d\d[;:]\d\d/.test(s.text));
      expect(codes.length).toBe(frames.length);
      // The frame stored at t shows the timecode of t (within a frame of the 25-fps clip).
      const late = codes.filter((s) => {
        const [, ss, ff] = /00:00:(\d\d)[;:](\d\d)/.exec(s.text)!;
        return Math.abs(Number(ss) + Number(ff) / 30 - s.start) > 0.05;
      });
      expect(late.map((s) => `${s.text} at ${s.start}`)).toEqual([]);
      for (const s of codes) {
        // The counters change every frame: nothing merges across frames.
        expect(s.extra!.frames).toBe(1);
        expect(s.end - s.start).toBeLessThanOrEqual(DEFAULT_VISUAL.frameIntervalSec + 1e-6);
      }
      expect(new Set(codes.map((s) => s.text)).size).toBe(codes.length);
      // The frame counter in the middle ("132.000" at 4.4 s) runs at ~30 per second.
      const counters = segs.filter((s) => /^\d+\.000$/.test(s.text));
      expect(counters.length).toBe(frames.length);
      for (const s of counters) expect(Math.abs(Number(s.text) / 30 - s.start)).toBeLessThanOrEqual(0.05);
      // The colour bars stay the same, but the changed digits must not pass for a duplicate frame.
      expect(result.summary).toMatchObject({ reused_frames: 0 });
    },
    SLOW,
  );

  test(
    'skateboarding dog: no text',
    async () => {
      const { result } = await analyze('skateboarding-dog.mp4', 14.1, 576, 1024);
      const segs = ocrSegments(result);
      expect(segs.length).toBeLessThanOrEqual(1);
      for (const s of segs) expect(s.extra!.frames).toBe(1);
    },
    SLOW,
  );
});

// ---------------------------------------------------------------------------------------------

const line = (text: string, rect: [number, number, number, number], confidence = 0.95): TextLine => ({
  text,
  confidence,
  rect,
});
const block = (
  text: string,
  box: [number, number, number, number] = [0.2, 0.4, 0.5, 0.1],
  confidence = 0.95,
): TextBlock => ({ text, lines: text.split('\n'), confidence, box });

describe('grouping lines into blocks', () => {
  test('stacked lines of one size form a block; far text on the same row stays apart', () => {
    // The BBB credit at 960×540 plus the SMPTE-like corner counters.
    const blocks = groupBlocks(
      [
        line('PRESENTS', [398, 279, 549, 308]),
        line('THE PEACH OPEN MOVIE PROJECT', [234, 236, 712, 264]),
        line('0.734', [190, 446, 330, 490]),
        line('00:00:00;22', [486, 446, 767, 493]),
      ],
      960,
      540,
    );
    expect(blocks.map((b) => b.text)).toEqual(['THE PEACH OPEN MOVIE PROJECT\nPRESENTS', '0.734', '00:00:00;22']);
    expect(blocks[0]!.lines).toEqual(['THE PEACH OPEN MOVIE PROJECT', 'PRESENTS']);
    [234 / 960, 236 / 540, 478 / 960, 72 / 540].forEach((v, i) => expect(blocks[0]!.box[i]!).toBeCloseTo(v, 3));
  });

  test('pieces of one row join left to right; a much bigger line below is a block of its own', () => {
    const blocks = groupBlocks(
      [line('WORLD', [160, 100, 250, 130]), line('HELLO', [50, 100, 140, 130]), line('Big Title', [40, 140, 600, 260])],
      960,
      540,
    );
    expect(blocks.map((b) => b.text)).toEqual(['HELLO WORLD', 'Big Title']);
  });

  test('lone single characters are dropped unless a confident digit', () => {
    const blocks = groupBlocks(
      [
        line('X', [400, 260, 480, 330], 0.96),
        line('4', [800, 400, 830, 440], 0.99),
        line('7', [100, 400, 130, 440], 0.7),
      ],
      960,
      540,
    );
    expect(blocks.map((b) => b.text)).toEqual(['4']);
  });

  test('junk lines: unsure readings and strings without a letter or digit', () => {
    const kept = cleanLines(
      [
        line('  Hello   there ', [0, 0, 1, 1], 0.9),
        line('|', [0, 0, 1, 1], 0.99),
        line('--', [0, 0, 1, 1], 0.99),
        line('BUBKY', [0, 0, 1, 1], 0.55),
      ],
      0.6,
    );
    expect(kept.map((l) => l.text)).toEqual(['Hello there']);
  });
});

describe('merging sightings across frames', () => {
  const frame = (t: number, texts: (string | TextBlock)[], shot = 0): FrameText => ({
    t,
    shot,
    blocks: texts.map((x) => (typeof x === 'string' ? block(x) : x)),
  });

  test('similarity tolerates OCR noise, not a changed number', () => {
    expect(similarity('the peach open movie project', 'the peach 0pen movie project')).toBeGreaterThan(0.95);
    expect(sameTextScore('the peach open movie project', 'the peach 0pen movie project')).toBeGreaterThan(0.95);
    expect(sameTextScore('132.000', '133.000')).toBe(0);
    expect(sameTextScore('score 2', 'score 2')).toBe(1);
    expect(similarity('abc', 'xyz')).toBe(0);
  });

  test('the same text in consecutive frames is one segment with the commonest reading', () => {
    const segs = mergeSightings(
      [
        frame(0, []),
        frame(3, ['THE PEACH OPEN MOVIE PROJECT']),
        frame(6, ['The peach 0PEN movie project']),
        frame(9, ['THE PEACH OPEN MOVIE PROJECT']),
        frame(12, []),
      ],
      { similarity: 0.8, maxHoldSec: 3, duration: 15 },
    );
    expect(segs).toHaveLength(1);
    expect(segs[0]).toMatchObject({
      kind: 'ocr',
      start: 3,
      end: 12,
      text: 'THE PEACH OPEN MOVIE PROJECT',
      extra: { frames: 3 },
    });
  });

  test('end: the gap to the next frame, at most maxHoldSec, never past the shot end or the video', () => {
    const ends = (frames: FrameText[], shotEnd?: (s: number) => number | undefined) =>
      mergeSightings(frames, { similarity: 0.8, maxHoldSec: 3, duration: 20, shotEnd }).map((s) => [
        s.text,
        s.start,
        s.end,
      ]);
    expect(ends([frame(1, ['A caption']), frame(2, [])])).toEqual([['A caption', 1, 2]]);
    expect(ends([frame(1, ['A caption']), frame(9, [])])).toEqual([['A caption', 1, 4]]);
    expect(ends([frame(1, ['A caption']), frame(9, [], 1)], (s) => [2.5, 20][s])).toEqual([['A caption', 1, 2.5]]);
    expect(ends([frame(19, ['A caption'])])).toEqual([['A caption', 19, 20]]);
  });

  test('a missed frame, a changed counter or a different text starts a new segment', () => {
    const segs = mergeSightings(
      [frame(0, ['Hello world', 'frame 101']), frame(1, ['frame 102']), frame(2, ['Hello world', 'frame 103'])],
      { similarity: 0.8, maxHoldSec: 3, duration: 3 },
    );
    expect(segs.map((s) => [s.text, s.start, s.end])).toEqual([
      ['Hello world', 0, 1],
      ['frame 101', 0, 1],
      ['frame 102', 1, 2],
      ['Hello world', 2, 3],
      ['frame 103', 2, 3],
    ]);
  });

  test('two similar captions in one frame keep their own tracks', () => {
    const left = block('Exit A', [0.1, 0.5, 0.1, 0.05]);
    const right = block('Exit B', [0.8, 0.5, 0.1, 0.05]);
    const segs = mergeSightings([frame(0, [left, right]), frame(1, [right, left])], {
      similarity: 0.8,
      maxHoldSec: 3,
      duration: 2,
    });
    expect(segs.map((s) => [s.text, s.extra!.frames])).toEqual([
      ['Exit A', 2],
      ['Exit B', 2],
    ]);
  });
});

describe('text boxes', () => {
  test("opencv's rotated rectangles become a quad along the text, whatever the angle convention", () => {
    const round = (q: ReturnType<typeof quadOf>) => Object.values(q).map((v) => Math.round(v * 100) / 100 + 0); // + 0 turns -0 into 0
    // A 100×20 box centred at (60, 40): the same rectangle described three ways.
    for (const [w, h, angle] of [
      [100, 20, 0],
      [20, 100, 90],
      [20, 100, -90],
    ] as const)
      expect(round(quadOf(60, 40, w, h, angle))).toEqual([10, 30, 100, 0, 0, 20]);
    // Tilted 30° (rising to the right in image coordinates means a negative angle).
    const q = quadOf(0, 0, 100, 20, -30);
    expect(q.ux).toBeCloseTo(86.6, 1);
    expect(q.uy).toBeCloseTo(-50, 1);
    expect(q.vx).toBeCloseTo(10, 1);
    expect(q.vy).toBeCloseTo(17.32, 1);
  });
});

describe('near-duplicate frames', () => {
  const thumb = (fill: number) => ({ data: new Uint8Array(160 * 90).fill(fill), width: 160, height: 90 });
  test('noise everywhere is small; a changed patch the size of a digit is large', () => {
    const a = thumb(100);
    const noisy = thumb(102);
    expect(frameDifference(a, noisy)).toBe(2);
    const digit = thumb(100);
    for (let y = 40; y < 46; y++) for (let x = 80; x < 84; x++) digit.data[y * 160 + x] = 250;
    expect(frameDifference(a, digit)).toBeGreaterThan(20);
    expect(frameDifference(a, { data: new Uint8Array(160 * 284), width: 160, height: 284 })).toBe(255);
  });

  test('the grey copy averages boxes of pixels', () => {
    // 4×2 RGBA: left half white, right half black → 2×1 grey.
    const px = [255, 255, 255, 255, 255, 255, 255, 255, 0, 0, 0, 255, 0, 0, 0, 255];
    const img = { data: new Uint8Array([...px, ...px]), width: 4, height: 2 };
    const t = thumbnail(img, 2);
    expect([t.width, t.height]).toEqual([2, 1]);
    expect([...t.data]).toEqual([255, 0]);
  });
});
