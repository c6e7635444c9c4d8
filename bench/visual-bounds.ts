/**
 * bench/visual-bounds: the visual stage (src/analysis/stages/visual.ts) on a file built to amplify work,
 * reporting wall time, CPU, frames kept, and disk: peak bytes under the video folder (sampled every
 * 50 ms) and bytes of stored frames.
 *
 *   bun bench/visual-bounds.ts FILE DURATION_SEC WIDTH HEIGHT
 *
 * Make the files with the bundled ffmpeg, e.g. the "23 hours of silent audio and one frame
 * a minute":
 *   ffmpeg -f lavfi -i testsrc=s=320x240:r=1/60 -f lavfi -i anullsrc=r=8000:cl=mono -t 82800 \
 *          -c:v mpeg4 -q:v 10 -c:a aac -b:a 8k -shortest long23h.mp4
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_VISUAL, VisualAnalyzer } from '../src/analysis/stages/visual';
import { createLogger } from '../src/log';
import { resolveBinaries } from '../src/media/binaries';

const [file, duration, width, height] = process.argv.slice(2);
if (!file || !duration) throw new Error('usage: bun bench/visual-bounds.ts FILE DURATION_SEC WIDTH HEIGHT');
const dir = mkdtempSync(join(tmpdir(), 'vidq-bench-visual-'));
const { ffmpeg } = await resolveBinaries(join(dir, 'bin'));
const videoDir = join(dir, 'video');

function bytesUnder(d: string): number {
  if (!existsSync(d)) return 0;
  let n = 0;
  for (const e of readdirSync(d, { withFileTypes: true })) {
    try {
      n += e.isDirectory() ? bytesUnder(join(d, e.name)) : statSync(join(d, e.name)).size;
    } catch {} // deleted meanwhile
  }
  return n;
}

let peak = 0;
const sampler = setInterval(() => (peak = Math.max(peak, bytesUnder(videoDir))), 50);
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const result = await new VisualAnalyzer(DEFAULT_VISUAL).run({
  video: {
    id: 'bench',
    path: file,
    dir: videoDir,
    durationSec: Number(duration),
    fps: 0,
    width: Number(width),
    height: Number(height),
    hasAudio: true,
  },
  ffmpeg,
  signal: new AbortController().signal,
  log: createLogger('error'),
  progress: () => {},
  frames: () => [],
  segments: () => [],
});
clearInterval(sampler);
const wall = (performance.now() - t0) / 1000;
const cpu = process.cpuUsage(cpu0);
console.log(
  JSON.stringify({
    file,
    wall_s: Math.round(wall * 10) / 10,
    bun_cpu_s: Math.round((cpu.user + cpu.system) / 1e5) / 10,
    frames: result.frames!.length,
    shots: result.segments!.length,
    peak_disk_mb: Math.round(peak / 1e5) / 10,
    stored_mb: Math.round(bytesUnder(join(videoDir, 'frames')) / 1e5) / 10,
  }),
);
rmSync(dir, { recursive: true, force: true });
