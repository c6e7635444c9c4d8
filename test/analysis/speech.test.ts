/**
 * Speech stage: Silero VAD spans on real clips, the hysteresis itself, the speech-to-text engine
 * choice, and the Whisper code path run end to end with a tiny model the test builds itself.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NewSegment, StageContext, StageResult } from '../../src/analysis/contracts';
import { AudioWindow, SpeechAnalyzer } from '../../src/analysis/stages/speech';
import {
  createSpeechToText,
  NoSpeechToText,
  type SpeechToText,
  type TranscriptPiece,
} from '../../src/analysis/engines/stt';
import { DEFAULT_VAD, SAMPLE_RATE, speechSpans } from '../../src/analysis/engines/vad';
import { resolveBinaries } from '../../src/media/binaries';
import { probeFile } from '../../src/media/probe';
import { clip, MEDIA_DIR } from '../helpers';
import { stageContext } from '../factories';
import { TINY_WHISPER_END_SEC, TINY_WHISPER_TEXT, writeTinyWhisper } from './tiny-whisper';

const tmp = mkdtempSync(join(tmpdir(), 'vidq-speech-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

async function context(name: string, signal = new AbortController().signal): Promise<StageContext> {
  const { ffmpeg, ffprobe } = await resolveBinaries(join(tmp, 'bin'));
  const info = await probeFile(ffprobe, clip(name), { maxDurationSec: 3600 });
  return stageContext({
    video: {
      id: name,
      path: clip(name),
      dir: tmp,
      durationSec: info.durationSec,
      fps: info.fps,
      width: info.width,
      height: info.height,
      hasAudio: info.hasAudio,
    },
    ffmpeg,
    signal,
  });
}

const noStt = new SpeechAnalyzer({ stt: new NoSpeechToText() });
afterAll(() => noStt.close());

const ofKind = (r: StageResult, kind: string) => (r.segments ?? []).filter((s) => s.kind === kind);
/** Seconds of [from, to] covered by the segments. */
const covered = (segs: NewSegment[], from: number, to: number) =>
  segs.reduce((s, x) => s + Math.max(0, Math.min(to, x.end) - Math.max(from, x.start)), 0);

describe('speech spans on real clips (Silero VAD v4)', () => {
  test('speech-over-bottles: the JFK speech covers most of 0.3–11 s, untranscribed without an engine', async () => {
    const r = await noStt.run(await context('speech-over-bottles.mp4'));
    const speech = ofKind(r, 'speech');
    expect(speech.length).toBeGreaterThanOrEqual(1);
    expect(speech[0]!.start).toBeLessThanOrEqual(0.3 + 1);
    expect(speech.at(-1)!.end).toBeGreaterThanOrEqual(11 - 1);
    expect(covered(speech, 0.3, 11) / 10.7).toBeGreaterThan(0.6);
    for (const s of speech) {
      expect(s.text).toBe('speech, not transcribed');
      expect(s.confidence!).toBeGreaterThan(0.5);
    }
    expect(ofKind(r, 'transcript')).toHaveLength(0);
    expect(r.summary).toMatchObject({ engine: 'silero-vad v4', stt: 'none', segments: speech.length, transcripts: 0 });
    expect(r.summary!.speech_seconds as number).toBeGreaterThan(6);
  });

  test('grid-speakers: one speech span per 3 s speaker, each starting within 1.2 s of its slot', async () => {
    const slots = readFileSync(join(MEDIA_DIR, 'grid-speakers-33s.transcript.tsv'), 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => Number(l.split('\t')[1]));
    expect(slots).toHaveLength(11);
    const speech = ofKind(await noStt.run(await context('grid-speakers-33s.mp4')), 'speech');
    expect(speech).toHaveLength(11);
    slots.forEach((slot, i) => {
      expect(speech[i]!.start).toBeGreaterThanOrEqual(slot);
      expect(speech[i]!.start).toBeLessThanOrEqual(slot + 1.2);
      expect(speech[i]!.end).toBeLessThanOrEqual(slot + 3 + 0.5);
    });
  });

  test('talking-head: speech most of 0–8 s', async () => {
    const speech = ofKind(await noStt.run(await context('talking-head.mp4')), 'speech');
    expect(speech[0]!.start).toBeLessThanOrEqual(1);
    expect(speech.at(-1)!.end).toBeGreaterThanOrEqual(7);
    expect(covered(speech, 0, 8) / 8).toBeGreaterThan(0.75);
  });

  test('bottles has no audio track: no segments, and the summary says so', async () => {
    const ctx = await context('bottles.mp4');
    expect(ctx.video.hasAudio).toBe(false);
    const r = await noStt.run(ctx);
    expect(r.segments).toHaveLength(0);
    expect(r.summary).toMatchObject({
      engine: 'silero-vad v4',
      stt: 'none',
      segments: 0,
      speech_seconds: 0,
      note: 'no audio track',
    });
  });

  test('cars-parking-lot has a digitally silent sound track: no speech', async () => {
    const ctx = await context('cars-parking-lot.mp4');
    expect(ctx.video.hasAudio).toBe(true);
    const r = await noStt.run(ctx);
    expect(r.segments).toHaveLength(0);
    expect(r.summary).toMatchObject({ segments: 0, speech_seconds: 0 });
  });

  test('a stopped job stops the stage', async () => {
    const ctrl = new AbortController();
    const ctx = {
      ...(await context('grid-speakers-33s.mp4', ctrl.signal)),
      progress: (f: number) => f > 0.2 && ctrl.abort(new Error('cancelled')),
    };
    // (Not `expect(promise).rejects`: under bun test it starves the pipe reads of the stage.)
    const err = await noStt.run(ctx).then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).toBe('cancelled');
  });
});

describe('hysteresis', () => {
  const frame = DEFAULT_VAD.frameSamples / SAMPLE_RATE; // 96 ms
  const frames = (sec: number, p: number) => new Array<number>(Math.round(sec / frame)).fill(p);

  test('starts at 0.5, holds above 0.35, bridges pauses under 0.3 s, drops blips under 0.25 s', () => {
    const probs = [
      ...frames(1, 0.1),
      ...frames(1, 0.9),
      ...frames(0.5, 0.4),
      ...frames(0.2, 0.1),
      ...frames(1, 0.8),
      ...frames(1, 0.1),
      ...frames(0.1, 0.9),
      ...frames(1, 0.1),
    ];
    const spans = speechSpans(probs);
    expect(spans).toHaveLength(1);
    const [s] = spans;
    expect(s!.start * frame).toBeCloseTo(0.96, 1);
    expect(s!.end * frame).toBeCloseTo(3.55, 1);
    expect(s!.meanProb).toBeGreaterThan(0.6);
  });

  test('0.4 never starts speech; a 0.3 s pause ends it', () => {
    expect(speechSpans(frames(3, 0.45))).toHaveLength(0);
    const spans = speechSpans([...frames(1, 0.9), ...frames(0.4, 0.1), ...frames(1, 0.9)]);
    expect(spans).toHaveLength(2);
  });

  test('a long monologue is cut into pieces of at most maxSpanSec at its quietest frame', () => {
    const probs = frames(70, 0.95);
    probs[Math.round(25 / frame)] = 0.4; // a breath at 25 s
    const spans = speechSpans(probs);
    expect(spans.length).toBe(3);
    for (const s of spans) expect((s.end - s.start) * frame).toBeLessThanOrEqual(DEFAULT_VAD.maxSpanSec + frame);
    expect(spans[0]!.end * frame).toBeCloseTo(25, 0);
    // Contiguous: cutting loses no speech.
    expect(spans[1]!.start).toBe(spans[0]!.end);
    expect(spans[2]!.end * frame).toBeCloseTo(70, 0);
  });

  test('the audio window keeps only what it is told to and slices by absolute sample', () => {
    const w = new AudioWindow();
    for (let i = 0; i < 100; i++) {
      w.append(Float32Array.from({ length: 1000 }, (_, k) => i * 1000 + k));
      w.dropBefore(i * 1000 - 2500);
    }
    expect(w.end).toBe(100_000);
    expect([...w.slice(97_000, 97_003)]).toEqual([97_000, 97_001, 97_002]);
    expect([...w.slice(96_498, 96_502)]).toEqual([96_500, 96_501]); // clipped to what is held
    expect(w.slice(0, 10)).toHaveLength(0); // dropped long ago
  });
});

describe('speech-to-text engine choice', () => {
  test('auto is none without a local Whisper model, whisper:<id> with one', () => {
    const modelsDir = join(tmp, 'auto-models');
    expect(createSpeechToText({ type: 'auto', modelsDir, model: 'tests/tiny-whisper' }).info.name).toBe('none');
    writeTinyWhisper(modelsDir, 'tests/tiny-whisper');
    const stt = createSpeechToText({ type: 'auto', modelsDir, model: 'tests/tiny-whisper' });
    expect(stt.info.name).toBe('whisper:tests/tiny-whisper');
    expect(stt.transcribes).toBe(true);
    expect(createSpeechToText({ type: 'none', modelsDir, model: 'tests/tiny-whisper' }).info.name).toBe('none');
  });

  test('a model pulled in full precision only is used without configuring its precision', async () => {
    const modelsDir = join(tmp, 'fp32-models');
    writeTinyWhisper(modelsDir, 'tests/tiny-whisper-fp32', '');
    const stt = createSpeechToText({ type: 'auto', modelsDir, model: 'tests/tiny-whisper-fp32' });
    try {
      const pieces = await stt.transcribe(new Float32Array(SAMPLE_RATE * 2), { signal: new AbortController().signal });
      expect(pieces).toEqual([{ start: 0, end: TINY_WHISPER_END_SEC, text: TINY_WHISPER_TEXT }]);
    } finally {
      await stt.close?.();
    }
  });

  test('whisper without its model fails with a sentence that says what is missing and how to get it', async () => {
    const stt = createSpeechToText({ type: 'whisper', modelsDir: join(tmp, 'empty-models') });
    expect(stt.info.name).toBe('whisper:onnx-community/whisper-base.en');
    const err = await stt
      .transcribe(new Float32Array(SAMPLE_RATE), { signal: new AbortController().signal })
      .catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toContain('onnx/encoder_model.onnx');
    expect((err as Error).message).toContain('vidq models pull onnx-community/whisper-base.en');
    // Through the analyzer the stage fails with that reason rather than indexing silently.
    const a = new SpeechAnalyzer({ stt });
    const stageErr = await a.run(await context('talking-head.mp4')).then(
      () => null,
      (e: Error) => e,
    );
    expect(stageErr?.message).toContain('models pull');
  });
});

/** Records what the analyzer hands to the engine. */
class RecordingStt implements SpeechToText {
  readonly info = { kind: 'stt', name: 'recording' };
  readonly transcribes = true;
  readonly weight = 0;
  calls: { seconds: number; rms: number }[] = [];
  async transcribe(audio: Float32Array): Promise<TranscriptPiece[]> {
    const rms = Math.sqrt(audio.reduce((s, x) => s + x * x, 0) / Math.max(1, audio.length));
    this.calls.push({ seconds: audio.length / SAMPLE_RATE, rms });
    return [{ start: 0.5, end: 1, text: `call ${this.calls.length}` }];
  }
}

describe('transcription per speech span', () => {
  test('each span is handed over once, with 0.2 s of audio either side, and pieces are placed at the span', async () => {
    const stt = new RecordingStt();
    const a = new SpeechAnalyzer({ stt });
    try {
      const r = await a.run(await context('grid-speakers-33s.mp4'));
      const speech = ofKind(r, 'speech');
      const transcripts = ofKind(r, 'transcript');
      expect(stt.calls).toHaveLength(speech.length);
      speech.forEach((s, i) => {
        expect(s.text).toBe('speech');
        expect(stt.calls[i]!.seconds).toBeCloseTo(s.end - s.start + 0.4, 1);
        expect(stt.calls[i]!.rms).toBeGreaterThan(0.01); // real audio, not silence
        expect(transcripts[i]!.text).toBe(`call ${i + 1}`);
        expect(transcripts[i]!.start).toBeCloseTo(s.start - 0.2 + 0.5, 2);
      });
      expect(r.summary).toMatchObject({ stt: 'recording', transcripts: speech.length });
    } finally {
      await a.close();
    }
  });

  test('Whisper plumbing with a tiny model the test builds itself (hand-set weights, not real Whisper)', async () => {
    const modelsDir = join(tmp, 'tiny-models');
    writeTinyWhisper(modelsDir, 'tests/tiny-whisper');
    const stt = createSpeechToText({ type: 'auto', modelsDir, model: 'tests/tiny-whisper' });
    const a = new SpeechAnalyzer({ stt });
    try {
      const r = await a.run(await context('speech-over-bottles.mp4'));
      const speech = ofKind(r, 'speech');
      const transcripts = ofKind(r, 'transcript');
      expect(transcripts).toHaveLength(speech.length);
      speech.forEach((s, i) => {
        const t = transcripts[i]!;
        expect(t.text).toBe(TINY_WHISPER_TEXT);
        // The model's segment is 0–1 s of the audio it was given, which starts 0.2 s before the span.
        expect(t.start).toBeCloseTo(Math.max(0, s.start - 0.2), 2);
        expect(t.end).toBeCloseTo(Math.max(0, s.start - 0.2) + TINY_WHISPER_END_SEC, 2);
        expect(t.extra).toMatchObject({ engine: 'whisper:tests/tiny-whisper' });
      });
      expect(r.summary).toMatchObject({
        engine: 'silero-vad v4',
        stt: 'whisper:tests/tiny-whisper',
        transcripts: speech.length,
      });
    } finally {
      await a.close();
    }
  });
});
