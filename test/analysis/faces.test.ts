/**
 * The faces analyzer on real clips (frames from a real run of the visual stage): one appearance
 * per face per shot, tracked across the shot's frames; faces too blurred or too small to identify
 * are dropped (clips made in the test from GRID with the bundled ffmpeg).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FacesAnalyzer } from '../../src/analysis/stages/faces';
import { resolveBinaries } from '../../src/media/binaries';
import { cosine } from '../../src/people/group';
import { clip } from '../helpers';
import { removeContexts, visualContext } from './faces-context';

const analyzer = new FacesAnalyzer();
let dir: string;
let ffmpeg: string;

/** The first 6 s of GRID (two people) through an ffmpeg filter. */
async function gridVariant(name: string, filter: string): Promise<string> {
  const out = join(dir, name);
  const p = Bun.spawn(
    [
      ffmpeg,
      '-hide_banner',
      '-loglevel',
      'error',
      '-y',
      '-t',
      '6',
      '-i',
      clip('grid-speakers-33s.mp4'),
      '-vf',
      filter,
      '-an',
      '-c:v',
      'libx264',
      '-preset',
      'veryfast',
      out,
    ],
    { stderr: 'pipe' },
  );
  if ((await p.exited) !== 0) throw new Error(await new Response(p.stderr).text());
  return out;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vidq-faces-test-'));
  ffmpeg = (await resolveBinaries(join(dir, 'bin'))).ffmpeg;
});
afterAll(() => {
  analyzer.close();
  removeContexts();
  rmSync(dir, { recursive: true, force: true });
});

describe('faces on real clips', () => {
  test('GRID at a frame a second: eleven appearances, one per shot, each tracked over its frames', async () => {
    const r = await analyzer.run(await visualContext(clip('grid-speakers-33s.mp4'), 1));
    const apps = r.segments!;
    expect(apps.length).toBe(11);
    for (const [i, a] of apps.entries()) {
      expect(a.kind).toBe('face');
      // Each spans its 3-s shot (cuts every 3 s), from more than one frame.
      expect(Math.abs(a.start - i * 3)).toBeLessThanOrEqual(0.6);
      expect(Math.abs(a.end - (i + 1) * 3)).toBeLessThanOrEqual(0.6);
      expect(a.extra!.frames as number).toBeGreaterThanOrEqual(2);
      expect((a.extra!.descriptor as number[]).length).toBe(1024);
    }
    // The man of 6–9 s and of 21–24 s: nearer each other than to anyone else.
    const d = apps.map((a) => a.extra!.descriptor as number[]);
    const same = cosine(d[2]!, d[7]!);
    const others = d
      .flatMap((x, i) => d.slice(i + 1).map((y, k) => [i, i + 1 + k, cosine(x, y)] as const))
      .filter(([i, j]) => !(i === 2 && j === 7));
    expect(same).toBeGreaterThan(Math.max(...others.map(([, , c]) => c)));
  }, 60_000);

  test('talking-head: one appearance over the whole clip', async () => {
    const r = await analyzer.run(await visualContext(clip('talking-head.mp4'), 1));
    expect(r.segments!.length).toBe(1);
    expect(r.segments![0]!.start).toBeLessThanOrEqual(0.5);
    expect(r.segments![0]!.end).toBeGreaterThanOrEqual(7.5);
  }, 60_000);

  test('a face too blurred to identify is dropped; a slightly soft one is kept', async () => {
    const soft = await analyzer.run(await visualContext(await gridVariant('soft.mp4', 'gblur=sigma=2'), 5));
    expect(soft.segments!.length).toBe(2);
    const blurred = await analyzer.run(await visualContext(await gridVariant('blurred.mp4', 'gblur=sigma=6'), 5));
    expect(blurred.segments!.length).toBe(0);
    expect(blurred.summary!.dropped as number).toBeGreaterThan(0);
  }, 60_000);

  test('a face too small to identify is dropped', async () => {
    // 360×288 scaled to 64 px wide: each face box is about 30 px.
    const r = await analyzer.run(await visualContext(await gridVariant('tiny.mp4', 'scale=64:-2'), 5));
    expect(r.segments!.length).toBe(0);
    // BlazeFace still found them: the size threshold is what dropped them.
    expect(r.summary!.dropped as number).toBeGreaterThan(0);
  }, 60_000);
});
