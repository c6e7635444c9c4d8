/** A StageContext for a real clip whose frames and shots come from a real run of the visual stage. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StageContext } from '../../src/analysis/contracts';
import { VisualAnalyzer } from '../../src/analysis/stages/visual';
import { resolveBinaries } from '../../src/media/binaries';
import { probeFile } from '../../src/media/probe';
import type { Segment } from '../../src/storage/schema';
import { stageContext } from '../factories';

const dirs: string[] = [];

export async function visualContext(file: string, frameIntervalSec = 5): Promise<StageContext> {
  const dir = mkdtempSync(join(tmpdir(), 'vidq-faces-'));
  dirs.push(dir);
  const bins = await resolveBinaries(join(dir, 'bin'));
  const info = await probeFile(bins.ffprobe, file, { maxDurationSec: 3600 });
  const video = {
    id: 'v1',
    path: file,
    dir,
    durationSec: info.durationSec,
    fps: info.fps,
    width: info.width,
    height: info.height,
    hasAudio: info.hasAudio,
  };
  const visual = await new VisualAnalyzer({ frameIntervalSec, sceneThreshold: 0.3, frameWidth: 960 }).run(
    stageContext({ video, ffmpeg: bins.ffmpeg }),
  );
  const frames = visual.frames!.map((f) => ({ ...f, path: join(dir, 'frames', f.file) }));
  const shots: Segment[] = (visual.segments ?? []).map((s, i) => ({
    id: i + 1,
    videoId: video.id,
    start: s.start,
    end: s.end,
    kind: s.kind,
    text: s.text,
    confidence: s.confidence ?? null,
    extra: s.extra ?? null,
    embedding: null,
  }));
  return stageContext({
    video,
    ffmpeg: bins.ffmpeg,
    frames: () => frames,
    segments: (kinds) => shots.filter((s) => !kinds || kinds.includes(s.kind)),
  });
}

export function removeContexts(): void {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
}
