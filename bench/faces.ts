/**
 * bench/faces: what the faces analyzer and the colour naming cost, per clip and in total, in
 * core-seconds of this process (the model Workers are threads of it; the ffmpeg that decodes the
 * frame JPEGs is a child and not counted) and wall time, beside the objects analyzer for scale.
 * Frames come from one run of the visual stage per clip at the default interval; the models load
 * before the first clip (a worker process loads them once, not per video).
 *
 *   bun bench/faces.ts [--only NAME]
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { paintSegments } from '../src/analysis/stages/colours';
import { FacesAnalyzer } from '../src/analysis/stages/faces';
import { DEFAULT_OBJECTS, ObjectsAnalyzer, applyThresholds, mergeSpans } from '../src/analysis/stages/objects';
import { shotBounds } from '../src/analysis/stages/frames';
import { DEFAULT_VISUAL, VisualAnalyzer } from '../src/analysis/stages/visual';
import { createLogger } from '../src/log';
import { resolveBinaries } from '../src/media/binaries';
import { probeFile } from '../src/media/probe';
import type { Segment } from '../src/storage/schema';

const { values } = parseArgs({ options: { only: { type: 'string' } } });
const MEDIA = process.env.VIDQ_TEST_MEDIA ?? resolve(import.meta.dir, '../../shared/media');
const work = mkdtempSync(join(tmpdir(), 'vidq-faces-bench-'));
const bins = await resolveBinaries(join(work, 'bin'));
const faces = new FacesAnalyzer();
const objects = new ObjectsAnalyzer({ ...DEFAULT_OBJECTS });
const clips = readdirSync(MEDIA)
  .filter((f) => /\.(mp4|webm|mkv)$/.test(f) && (!values.only || f.includes(values.only)))
  .sort();

/** Core-seconds and wall seconds of fn. */
async function measure<T>(fn: () => Promise<T>): Promise<{ r: T; cpu: number; wall: number }> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const r = await fn();
  const c = process.cpuUsage(c0);
  return { r, cpu: (c.user + c.system) / 1e6, wall: (performance.now() - t0) / 1000 };
}

const total = { dur: 0, faces: 0, objects: 0, colours: 0, facesWall: 0 };
let warm = false;
console.log(
  `${'clip'.padEnd(28)} ${'dur s'.padStart(6)} ${'frames'.padStart(6)} ${'faces cpu'.padStart(9)} ${'wall'.padStart(6)} ${'objects cpu'.padStart(11)} ${'colours cpu'.padStart(11)}  appearances`,
);
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
  const vis = await new VisualAnalyzer({ ...DEFAULT_VISUAL }).run({ ...base, frames: () => [], segments: () => [] });
  const frames = vis.frames!.map((f) => ({ ...f, path: join(dir, 'frames', f.file) }));
  const shots = (vis.segments ?? []).map((s, i) => ({
    id: i,
    videoId: 'v',
    ...s,
    confidence: s.confidence ?? null,
    extra: s.extra ?? null,
    embedding: null,
  })) as Segment[];
  const ctx = { ...base, frames: () => frames, segments: () => shots };
  if (!warm) {
    // Model loading, once (as in a worker process).
    await faces.run({ ...ctx, frames: () => frames.slice(0, 1) });
    await objects.detect(base, frames.slice(0, 1));
    warm = true;
  }
  const f = await measure(() => faces.run(ctx));
  const o = await measure(() => objects.detect(base, frames));
  const segs = mergeSpans(
    o.r.frames.map((r) => applyThresholds(r, DEFAULT_OBJECTS)),
    shotBounds(shots, info.durationSec),
    info.durationSec,
  );
  const c = await measure(() => paintSegments(base, segs, frames));
  total.dur += info.durationSec;
  total.faces += f.cpu;
  total.facesWall += f.wall;
  total.objects += o.cpu;
  total.colours += c.cpu;
  console.log(
    `${name.padEnd(28)} ${info.durationSec.toFixed(1).padStart(6)} ${String(frames.length).padStart(6)} ${f.cpu.toFixed(2).padStart(9)} ${f.wall.toFixed(2).padStart(6)} ${o.cpu.toFixed(2).padStart(11)} ${c.cpu.toFixed(3).padStart(11)}  ${f.r.segments?.length ?? 0}`,
  );
}
console.log(
  `TOTAL ${total.dur.toFixed(0)} s of video: faces ${total.faces.toFixed(1)} core-s (${(total.dur / total.faces).toFixed(0)}× real time per core; wall ${total.facesWall.toFixed(1)} s), objects detection ${total.objects.toFixed(1)} core-s, colours ${total.colours.toFixed(2)} core-s`,
);
faces.close();
objects.close();
rmSync(work, { recursive: true, force: true });
