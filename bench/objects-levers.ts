/**
 * bench/objects-levers: what the object detector's speed levers (input size, MoveNet fallback) cost
 * in detections. Runs the visual stage once per clip, then the objects analyzer in each variant,
 * and prints the detector time and how many frames' thresholded labels differ from the default.
 *
 *   bun bench/objects-levers.ts [--only NAME]
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_OBJECTS, ObjectsAnalyzer, applyThresholds, type ObjectsOptions } from '../src/analysis/stages/objects';
import { VisualAnalyzer, DEFAULT_VISUAL } from '../src/analysis/stages/visual';
import { createLogger } from '../src/log';
import { resolveBinaries } from '../src/media/binaries';
import { probeFile } from '../src/media/probe';

const { values } = parseArgs({ options: { only: { type: 'string' } } });
const MEDIA = process.env.VIDQ_TEST_MEDIA ?? resolve(import.meta.dir, '../../shared/media');
const work = mkdtempSync(join(tmpdir(), 'vidq-levers-'));
const bins = await resolveBinaries(join(work, 'bin'));
const variants: [string, Partial<ObjectsOptions>][] = [
  ['512+body', {}],
  ['512', { bodyFallback: false }],
  ['448', { inputLongSide: 448, bodyFallback: false }],
  ['384', { inputLongSide: 384, bodyFallback: false }],
  ['384+body', { inputLongSide: 384 }],
];
// One detector Worker each: per-frame times of one core, comparable across variants.
const analyzers = variants.map(([, o]) => new ObjectsAnalyzer({ ...DEFAULT_OBJECTS, workers: 1, ...o }));
const totals = variants.map(() => ({ ms: 0, diff: 0, frames: 0 }));
const clips = readdirSync(MEDIA)
  .filter((f) => /\.(mp4|webm|mkv)$/.test(f) && (!values.only || f.includes(values.only)))
  .sort();
for (const name of clips) {
  const dir = join(work, name.replace(/\W/g, '_'));
  const file = join(MEDIA, name);
  const info = await probeFile(bins.ffprobe, file, { maxDurationSec: 3600 });
  const video = {
    id: 'v',
    path: file,
    dir,
    durationSec: info.durationSec,
    fps: info.fps,
    width: info.width,
    height: info.height,
    hasAudio: info.hasAudio,
  };
  const base = {
    video,
    ffmpeg: bins.ffmpeg,
    signal: new AbortController().signal,
    log: createLogger('error'),
    progress: () => {},
  };
  const vis = await new VisualAnalyzer({ ...DEFAULT_VISUAL, frameIntervalSec: 5 }).run({
    ...base,
    frames: () => [],
    segments: () => [],
  });
  const frames = vis.frames!.map((f, i) => ({ id: i, videoId: 'v', ...f, path: join(dir, 'frames', f.file) }));
  const keyOf: string[][] = [];
  const row: string[] = [];
  for (let k = 0; k < variants.length; k++) {
    const a = analyzers[k]!;
    await a.detect(base, frames.slice(0, 1)); // warm: model load and the input-size graph
    const t0 = performance.now();
    const { frames: raw } = await a.detect(base, frames);
    const ms = performance.now() - t0;
    const keys = raw.map((r) =>
      applyThresholds(r, DEFAULT_OBJECTS)
        .objects.map((o) => o.label)
        .sort()
        .join(','),
    );
    keyOf.push(keys);
    const diff = keys.filter((x, i) => x !== keyOf[0]![i]).length;
    totals[k]!.ms += ms;
    totals[k]!.diff += diff;
    totals[k]!.frames += keys.length;
    row.push(`${variants[k]![0]} ${Math.round(ms / frames.length)}ms/f diff ${diff}`);
  }
  console.log(`${name.padEnd(28)} ${String(frames.length).padStart(3)} frames | ${row.join(' | ')}`);
  const changed = keyOf[0]!
    .map((x, i) => [i, x, ...keyOf.slice(1).map((ks) => ks[i])])
    .filter((r) => r.slice(2).some((y) => y !== r[1]));
  for (const c of changed.slice(0, 6))
    console.log(
      `   t=${frames[c[0] as number]!.t}: ${c
        .slice(1)
        .map((x, k) => `${variants[k]![0]}=[${x}]`)
        .join(' ')}`,
    );
}
console.log(
  'TOTAL ' +
    totals
      .map((t, k) => `${variants[k]![0]} ${Math.round(t.ms / t.frames)}ms/f, ${t.diff}/${t.frames} frames differ`)
      .join(' | '),
);
for (const a of analyzers) a.close();
rmSync(work, { recursive: true, force: true });
