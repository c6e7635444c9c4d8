/**
 * bench/speech-spans: does speech activity fire only on speech? Runs the speech stage (VAD only,
 * no transcription) over the shared clips and scores its spans against what the clips hold:
 * GRID (one sentence in every 3 s window) and speech-over-bottles (one speech from 0 to ~11 s) have
 * speech; the Big Buck Bunny intro (music), Chaplin (silent film with a music track) and the
 * drummer (drums) have none.
 *
 *   bun bench/speech-spans.ts
 *
 * precision = spans that overlap a window with speech / all spans (spans on the music clips count
 * against it); recall = windows with speech that some span overlaps / all such windows.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { NewSegment, StageContext } from '../src/analysis/contracts';
import { SpeechAnalyzer } from '../src/analysis/stages/speech';
import { NoSpeechToText } from '../src/analysis/engines/stt';
import { createLogger } from '../src/log';
import { resolveBinaries } from '../src/media/binaries';
import { probeFile } from '../src/media/probe';

const MEDIA = process.env.VIDQ_TEST_MEDIA ?? resolve(import.meta.dir, '../../shared/media');
const dir = mkdtempSync(join(tmpdir(), 'vidq-speech-bench-'));
const { ffmpeg, ffprobe } = await resolveBinaries(join(dir, 'bin'));
const grid = Array.from({ length: 11 }, (_, k) => [3 * k, 3 * k + 3] as [number, number]);
const CLIPS: { file: string; speech: [number, number][] }[] = [
  { file: 'grid-speakers-33s.mp4', speech: grid },
  { file: 'speech-over-bottles.mp4', speech: [[0, 11.1]] },
  { file: 'big-buck-bunny-intro.webm', speech: [] },
  { file: 'chaplin-bw.mp4', speech: [] },
  { file: 'drummer-vertical.mp4', speech: [] },
];

// MIN_SWING=0 gives the VAD alone (the "before").
const analyzer = new SpeechAnalyzer({
  stt: new NoSpeechToText(),
  ...(process.env.MIN_SWING && { minSwing: Number(process.env.MIN_SWING) }),
});
let spans = 0;
let goodSpans = 0;
let windows = 0;
let hitWindows = 0;
const overlaps = (s: NewSegment, [a, b]: [number, number]) => s.start < b && s.end > a;
for (const clip of CLIPS) {
  const path = join(MEDIA, clip.file);
  const info = await probeFile(ffprobe, path, { maxDurationSec: 36_000, ffmpeg });
  const ctx: StageContext = {
    video: {
      id: 'b',
      path,
      dir,
      durationSec: info.durationSec,
      fps: info.fps,
      width: info.width,
      height: info.height,
      hasAudio: info.hasAudio,
    },
    ffmpeg,
    signal: new AbortController().signal,
    log: createLogger('error'),
    progress: () => {},
    frames: () => [],
    segments: () => [],
  };
  const t0 = performance.now();
  const res = await analyzer.run(ctx);
  const ms = performance.now() - t0;
  const speech = (res.segments ?? []).filter((s) => s.kind === 'speech');
  spans += speech.length;
  goodSpans += speech.filter((s) => clip.speech.some((w) => overlaps(s, w))).length;
  windows += clip.speech.length;
  hitWindows += clip.speech.filter((w) => speech.some((s) => overlaps(s, w))).length;
  const secs = speech.reduce((t, s) => t + s.end - s.start, 0);
  console.log(speech.map((s) => `${s.start.toFixed(1)}-${s.end.toFixed(1)}:${s.confidence}`).join(' '));
  console.log(
    `${clip.file.padEnd(28)} spans ${String(speech.length).padStart(3)}  speech ${secs.toFixed(1).padStart(5)} s of ${info.durationSec.toFixed(1)} s  (${Math.round(ms)} ms)`,
  );
}
console.log(
  `precision ${(goodSpans / Math.max(1, spans)).toFixed(2)} (${goodSpans}/${spans} spans on speech)  recall ${(hitWindows / Math.max(1, windows)).toFixed(2)} (${hitWindows}/${windows} speech windows)`,
);
await analyzer.close();
rmSync(dir, { recursive: true, force: true });
