/**
 * Speech activity on every audio track, and not on music or effects: the real Silero VAD over the
 * shared clips and over a two-track file made here (music on track 1, speech on track 2).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { audioTracks, SpeechAnalyzer } from '../../src/analysis/stages/speech';
import { createSpeechToText, NoSpeechToText } from '../../src/analysis/engines/stt';
import { TINY_WHISPER_TEXT, writeTinyWhisper } from '../analysis/tiny-whisper';
import { resolveBinaries } from '../../src/media/binaries';
import { probeFile } from '../../src/media/probe';
import { clip } from '../helpers';
import { ffmpegSync, stageContext } from '../factories';

let dir: string;
let ffmpeg: string;
let ffprobe: string;
const analyzer = new SpeechAnalyzer({ stt: new NoSpeechToText() });
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vidq-tracks-'));
  ({ ffmpeg, ffprobe } = await resolveBinaries(join(dir, 'bin')));
});
afterAll(async () => {
  await analyzer.close();
  rmSync(dir, { recursive: true, force: true });
});

async function speechOf(path: string, a: SpeechAnalyzer = analyzer) {
  const info = await probeFile(ffprobe, path, { maxDurationSec: 3600, ffmpeg });
  const ctx = stageContext({
    video: {
      id: 'x',
      path,
      dir,
      durationSec: info.durationSec,
      fps: info.fps,
      width: info.width,
      height: info.height,
      hasAudio: info.hasAudio,
    },
    ffmpeg,
  });
  const r = await a.run(ctx);
  return {
    speech: (r.segments ?? []).filter((s) => s.kind === 'speech'),
    transcripts: (r.segments ?? []).filter((s) => s.kind === 'transcript'),
    summary: r.summary as Record<string, unknown>,
  };
}

test("music and drums are not speech (drummer, Chaplin's music track); speech still is", async () => {
  for (const name of ['drummer-vertical.mp4', 'chaplin-bw.mp4']) {
    const { speech, summary } = await speechOf(clip(name));
    expect(speech).toEqual([]);
    expect(summary.not_speech).toBeGreaterThan(0); // the VAD fired, and was overruled
  }
  const { speech } = await speechOf(clip('speech-over-bottles.mp4'));
  expect(speech.length).toBeGreaterThanOrEqual(3);
  expect(speech.reduce((t, s) => t + s.end - s.start, 0)).toBeGreaterThan(6);
});

test('every audio track is analysed: speech on the second track is found and says which track', async () => {
  const f = join(dir, 'two-tracks.mkv');
  ffmpegSync(ffmpeg, [
    '-i',
    clip('speech-over-bottles.mp4'),
    '-i',
    clip('drummer-vertical.mp4'),
    '-map',
    '0:v',
    '-map',
    '1:a',
    '-map',
    '0:a',
    '-t',
    '11',
    '-c:v',
    'copy',
    '-c:a',
    'aac',
    '-metadata:s:a:0',
    'language=zxx',
    '-metadata:s:a:0',
    'title=Music',
    '-metadata:s:a:1',
    'language=eng',
    '-metadata:s:a:1',
    'title=Speech',
    f,
  ]);
  expect(await audioTracks(ffmpeg, f, new AbortController().signal)).toEqual([
    { track: 1, language: 'zxx', title: 'Music' },
    { track: 2, language: 'eng', title: 'Speech' },
  ]);
  const { speech, summary } = await speechOf(f);
  expect(speech.length).toBeGreaterThanOrEqual(3);
  for (const s of speech) {
    expect(s.extra).toMatchObject({ track: 2, language: 'eng', title: 'Speech' });
    expect(s.text).toContain('audio track 2 (eng)');
  }
  expect(summary.audio_tracks).toEqual([
    { track: 1, language: 'zxx', title: 'Music' },
    { track: 2, language: 'eng', title: 'Speech' },
  ]);
});

test("transcripts are made per track and carry the track (Whisper code path with the tests' tiny model)", async () => {
  const f = join(dir, 'two-tracks.mkv');
  if (!(await Bun.file(f).exists())) throw new Error('made by the test before');
  const modelsDir = join(dir, 'models');
  writeTinyWhisper(modelsDir, 'tests/tiny-whisper');
  const whisper = new SpeechAnalyzer({
    stt: createSpeechToText({ type: 'whisper', modelsDir, model: 'tests/tiny-whisper' }),
  });
  try {
    const { transcripts } = await speechOf(f, whisper);
    expect(transcripts.length).toBeGreaterThanOrEqual(3);
    for (const t of transcripts) {
      expect(t.text).toBe(TINY_WHISPER_TEXT);
      expect(t.extra).toMatchObject({ track: 2, language: 'eng', title: 'Speech' });
    }
  } finally {
    await whisper.close();
  }
});
