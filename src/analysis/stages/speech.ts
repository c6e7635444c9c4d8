/**
 * Speech: Silero VAD over the whole sound track gives speech spans on every machine; when a
 * speech-to-text engine is available each span (padded a little) is transcribed as soon as it
 * closes, while the audio is still streaming, so only the open span's audio is ever held.
 */
import type { Analyzer, EngineInfo, NewSegment, StageContext, StageResult } from '../contracts';
import { ffmpegSummary, parseFfmpegSummary } from '../../media/ffmpeg-probe';
import { defineAnalyzer } from '../descriptor';
import { ModelServerError } from '../engines/model-server/client';
import { OpenAiSpeechToText } from '../engines/model-server/stt-openai';
import { createSpeechToText, STT_ENGINE, type SpeechToText } from '../engines/stt';
import {
  DEFAULT_VAD,
  SAMPLE_RATE,
  SileroVad,
  SpanTracker,
  VAD_ENGINE,
  decodeAudio16k,
  vadModelPath,
  type FrameSpan,
  type VadOptions,
} from '../engines/vad';

export interface SpeechOptions {
  /** Transcribes speech spans; an engine with `transcribes: false` leaves them "not transcribed". */
  stt: SpeechToText;
  /** Hysteresis and framing of the VAD. @default DEFAULT_VAD */
  vad?: Partial<VadOptions>;
  /** Audio kept before and after each span when it is transcribed, in seconds. @default 0.2 */
  padSec?: number;
  /** Threads for the VAD model. @default 1 */
  threads?: number;
  /** Spoken language for multilingual Whisper models (e.g. "de"); unset, transformers.js assumes English. Ignored by English-only models. */
  language?: string;
  /** Path of the Silero ONNX file. @default vadModelPath() */
  vadModel?: string;
  /**
   * A span is speech only if its loudness swings at least this much: the standard deviation of
   * log10 energy over 32 ms pieces (speech measured 0.77-1.24 on the shared clips, music and
   * drums 0.13-0.47). 0 keeps every span the VAD finds. @default 0.55
   */
  minSwing?: number;
}

/** Speech spans at most this far apart are joined into one chunk (engines with `chunkSec`). */
const JOIN_GAP_SEC = 3;

export class SpeechAnalyzer implements Analyzer {
  readonly stage = 'analyzing:speech';
  readonly kinds = ['speech', 'transcript'] as const;
  readonly info: EngineInfo;
  readonly weight: number;
  /** Reads frames (objects) or the audio (speech) on about one core: runs beside OCR and the other. */
  readonly concurrent = true;
  private readonly vadOpts: VadOptions;
  private readonly padSec: number;
  private readonly minSwing: number;
  private vad?: Promise<SileroVad>;

  constructor(private readonly opts: SpeechOptions) {
    this.vadOpts = { ...DEFAULT_VAD, ...opts.vad };
    this.padSec = opts.padSec ?? 0.2;
    this.minSwing = opts.minSwing ?? 0.55;
    this.info = { kind: 'speech', name: opts.stt.transcribes ? `${VAD_ENGINE} + ${opts.stt.info.name}` : VAD_ENGINE };
    // Against the visual stage's 1: VAD is a fraction of a decode; transcription dominates when on.
    this.weight = 0.3 + opts.stt.weight;
  }

  async run(ctx: StageContext): Promise<StageResult> {
    const { video, signal } = ctx;
    const stt = this.opts.stt;
    const summary = (speech: NewSegment[], transcripts: number, extra: Record<string, unknown> = {}) => ({
      engine: VAD_ENGINE,
      stt: stt.info.name,
      speech_seconds: round(
        speech.reduce((s, x) => s + (x.end - x.start), 0),
        1,
      ),
      segments: speech.length,
      transcripts,
      ...extra,
    });
    if (!video.hasAudio) return { segments: [], summary: summary([], 0, { note: 'no audio track' }) };

    const tracks = await audioTracks(ctx.ffmpeg, video.path, signal);
    const speech: NewSegment[] = [];
    const transcripts: NewSegment[] = [];
    let notSpeech = 0;
    let chunks = 0;
    let failedChunks = 0;
    let problem: string | null = null;
    for (let k = 0; k < tracks.length; k++) {
      // Several tracks (a commentary, a dub): each is analysed, and its segments say which it is.
      const track = tracks.length > 1 ? tracks[k]! : undefined;
      const r = await this.runTrack(ctx, track, (f) => ctx.progress((k + f) / tracks.length));
      speech.push(...r.speech);
      transcripts.push(...r.transcripts);
      notSpeech += r.notSpeech;
      chunks += r.chunks;
      failedChunks += r.failedChunks;
      problem ??= r.problem;
    }
    const extra: Record<string, unknown> = {};
    if (notSpeech) extra.not_speech = notSpeech;
    // A transcription server that failed: the speech spans stay, and the metadata says why (issue 11).
    if (failedChunks && !transcripts.length) extra.transcripts_skipped = `transcripts: skipped — ${problem}`;
    else if (failedChunks)
      extra.transcripts_incomplete = `transcripts: ${failedChunks} of ${chunks} chunks skipped — ${problem}`;
    if (tracks.length > 1)
      extra.audio_tracks = tracks.map((t) => ({
        track: t.track,
        ...(t.language && { language: t.language }),
        ...(t.title && { title: t.title }),
      }));
    const byStart = (a: NewSegment, b: NewSegment) => a.start - b.start;
    return {
      segments: [...speech.sort(byStart), ...transcripts.sort(byStart)],
      summary: summary(speech, transcripts.length, extra),
    };
  }

  /** VAD (and transcription) of one audio track; `track` unset = ffmpeg's default audio stream. */
  private async runTrack(
    ctx: StageContext,
    track: AudioTrack | undefined,
    progress: (fraction: number) => void,
  ): Promise<{
    speech: NewSegment[];
    transcripts: NewSegment[];
    notSpeech: number;
    chunks: number;
    failedChunks: number;
    problem: string | null;
  }> {
    const { video, signal } = ctx;
    const stt = this.opts.stt;
    const trackExtra = track
      ? {
          track: track.track,
          ...(track.language && { language: track.language }),
          ...(track.title && { title: track.title }),
        }
      : {};
    const trackText = track ? ` on audio track ${track.track}${track.language ? ` (${track.language})` : ''}` : '';
    // The model is shared (by the tracks, and by the worker's job slots); the state is this stream's.
    const vad = (await this.loadVad()).stream();
    const frame = this.vadOpts.frameSamples;
    const frameSec = frame / SAMPLE_RATE;
    const padSamples = Math.round(this.padSec * SAMPLE_RATE);
    const tracker = new SpanTracker(this.vadOpts);
    // Only kept when someone will transcribe it.
    const window = stt.transcribes ? new AudioWindow() : null;
    const speech: NewSegment[] = [];
    const transcripts: NewSegment[] = [];
    let samples = 0;
    const last = new Float32Array(frame); // zeros

    const loudness = new Loudness();
    let notSpeech = 0;
    // Remote engines get nearby spans joined into chunks of at most chunkSec (cut in a silence,
    // between two spans) and may have several in flight; a failed chunk leaves its words out.
    const chunkSec = stt.chunkSec ?? 0;
    type Chunk = { from: number; to: number; speechStart: number; speechEnd: number };
    let chunk = null as Chunk | null;
    const inFlight: Promise<void>[] = [];
    const pending = new Set<Promise<void>>();
    let failedChunks = 0;
    let chunks = 0;
    let firstProblem: string | null = null;
    let down: string | null = null;

    const transcribe = async (from: number, to: number, speechStart: number, speechEnd: number) => {
      const audio = window!.slice(from, to);
      const offset = from / SAMPLE_RATE;
      chunks++;
      let pieces;
      try {
        if (down) throw new ModelServerError(down);
        pieces = await stt.transcribe(audio, { signal, language: this.opts.language });
      } catch (e) {
        if (!(e instanceof ModelServerError)) throw e;
        if (e.unreachable) down ??= e.message;
        failedChunks++;
        if (firstProblem === null) {
          firstProblem = e.message;
          ctx.log.warn('transcription skipped', {
            reason: e.message,
            more: 'further problems are counted, not logged',
          });
        }
        return;
      }
      for (const piece of pieces) {
        transcripts.push({
          kind: 'transcript',
          start: round(offset + piece.start, 3),
          end: round(offset + piece.end, 3),
          text: piece.text,
          confidence: piece.confidence ?? null,
          extra: { engine: stt.info.name, speech_start: speechStart, speech_end: speechEnd, ...trackExtra },
        });
      }
    };
    const flush = async () => {
      if (!chunk) return;
      const c = chunk;
      chunk = null;
      const job = transcribe(c.from, c.to, c.speechStart, c.speechEnd);
      if (stt.parallel) {
        // Awaited at the end; until then a rejection (the analysis stopped) must not count as unhandled.
        const settled = job.then(
          () => void pending.delete(settled),
          () => void pending.delete(settled),
        );
        pending.add(settled);
        inFlight.push(job);
        job.catch(() => {});
        // Backpressure: a slow server holds up the decode rather than letting chunks pile up.
        while (pending.size >= (stt.maxInFlight ?? Infinity)) await Promise.race(pending);
      } else await job;
    };

    const emit = async (span: FrameSpan) => {
      const start = round(span.start * frameSec, 3);
      const end = round(Math.min(span.end * frameSec, samples / SAMPLE_RATE), 3);
      if (end <= start) return;
      // Silero fires on music and drums too (the drummer clip was 36 of 36 s "speech"). Speech
      // rises and falls with its syllables; music and effects hold a steady level.
      const swing = loudness.swing(span.start * frame, span.end * frame);
      if (swing < this.minSwing) {
        notSpeech++;
        return;
      }
      // The swing is kept: a span just over the floor may be singing or music, and answers hedge it.
      const extra = { engine: VAD_ENGINE, transcribed: !!window, swing: round(swing, 2), ...trackExtra };
      speech.push({
        kind: 'speech',
        start,
        end,
        text: (window ? 'speech' : 'speech, not transcribed') + trackText,
        confidence: round(span.meanProb, 3),
        extra,
      });
      if (!window) return;
      const from = Math.max(0, span.start * frame - padSamples);
      const to = span.end * frame + padSamples;
      if (!chunkSec) {
        chunk = { from, to, speechStart: start, speechEnd: end };
        return flush();
      }
      // A long silence or the length limit ends a chunk: silence sent for transcription costs time
      // and makes Whisper-type models invent words.
      if (chunk && ((to - chunk.from) / SAMPLE_RATE > chunkSec || (from - chunk.to) / SAMPLE_RATE > JOIN_GAP_SEC))
        await flush();
      chunk = chunk ? { ...chunk, to, speechEnd: end } : { from, to, speechStart: start, speechEnd: end };
    };

    for await (const block of decodeAudio16k(
      ctx.ffmpeg,
      video.path,
      signal,
      frame,
      track?.track === undefined ? undefined : track.track - 1,
    )) {
      let input = block;
      if (block.length < frame) {
        // The last block is usually short: pad it with silence rather than drop its speech.
        last.set(block);
        input = last;
      }
      window?.append(block);
      loudness.push(block);
      samples += block.length;
      const spans = tracker.push(await vad.prob(input));
      for (const span of spans) await emit(span);
      // Silence since the pending chunk's last span: send it now rather than with the next span.
      if (chunk && tracker.openSince < 0 && (samples - chunk.to) / SAMPLE_RATE > JOIN_GAP_SEC) await flush();
      if (window) {
        const open = tracker.openSince;
        const keep = open >= 0 ? open * frame - padSamples : samples - padSamples - frame;
        // A pending chunk's audio is kept until the chunk is sent.
        window.dropBefore(chunk ? Math.min(chunk.from, keep) : keep);
      }
      if (video.durationSec > 0) progress(Math.min(0.99, samples / SAMPLE_RATE / video.durationSec));
      signal.throwIfAborted();
    }
    for (const span of tracker.finish()) await emit(span);
    await flush();
    await Promise.all(inFlight);
    return { speech, transcripts, notSpeech, chunks, failedChunks, problem: down ?? firstProblem };
  }

  async close(): Promise<void> {
    const vad = await this.vad?.catch(() => undefined);
    this.vad = undefined;
    await vad?.close();
    await this.opts.stt.close?.();
  }

  private loadVad(): Promise<SileroVad> {
    this.vad ??= SileroVad.load(this.opts.vadModel ?? vadModelPath(), this.opts.threads ?? 1).catch((e) => {
      this.vad = undefined;
      throw e;
    });
    return this.vad;
  }
}

/** One audio stream of the file: `track` counts from 1 among the audio streams. */
export interface AudioTrack {
  track: number;
  language?: string;
  title?: string;
}

/** The file's audio streams with their language and title tags (from ffmpeg's input summary). */
export async function audioTracks(ffmpeg: string, path: string, signal: AbortSignal): Promise<AudioTrack[]> {
  const run = await ffmpegSummary(ffmpeg, path, signal);
  const streams = (parseFfmpegSummary(run.err)?.streams ?? []).filter((s) => s.codec_type === 'audio');
  // Unreadable summary: analyse ffmpeg's default stream as before.
  if (streams.length === 0) return [{ track: 1 }];
  return streams.map((s, i) => {
    const language = s.tags?.language && s.tags.language !== 'und' ? s.tags.language : undefined;
    return { track: i + 1, ...(language && { language }), ...(s.tags?.title && { title: s.tags.title }) };
  });
}

/** Samples per loudness piece (32 ms at 16 kHz). */
const PIECE = 512;

/**
 * The loudness of the audio stream in 32 ms pieces (log10 of mean energy, floored at -80 dB so
 * digital silence does not count as a swing): 4 bytes per piece, about 450 kB per hour.
 */
export class Loudness {
  private levels = new Float32Array(1024);
  private n = 0;
  private acc = 0;
  private accN = 0;

  push(samples: Float32Array): void {
    for (let i = 0; i < samples.length; i++) {
      this.acc += samples[i]! * samples[i]!;
      if (++this.accN === PIECE) {
        if (this.n === this.levels.length) {
          const next = new Float32Array(this.levels.length * 2);
          next.set(this.levels);
          this.levels = next;
        }
        this.levels[this.n++] = Math.log10(this.acc / PIECE + 1e-8);
        this.acc = 0;
        this.accN = 0;
      }
    }
  }

  /** Standard deviation of the levels of samples [from, to). */
  swing(from: number, to: number): number {
    const a = Math.max(0, Math.floor(from / PIECE));
    const b = Math.min(this.n, Math.ceil(to / PIECE));
    if (b - a < 2) return Infinity; // too short to judge: keep it
    let sum = 0;
    for (let i = a; i < b; i++) sum += this.levels[i]!;
    const mean = sum / (b - a);
    let v = 0;
    for (let i = a; i < b; i++) v += (this.levels[i]! - mean) ** 2;
    return Math.sqrt(v / (b - a));
  }
}

/** A growing tail of the audio stream, addressed by absolute sample index. */
export class AudioWindow {
  private data = new Float32Array(SAMPLE_RATE * 4);
  /** Absolute index of data[head]. */
  private base = 0;
  private head = 0;
  private length = 0;

  get end(): number {
    return this.base + this.length;
  }

  append(samples: Float32Array): void {
    if (this.head + this.length + samples.length > this.data.length) {
      // Compact in place while the held audio fits in half the buffer, else grow it.
      const need = this.length + samples.length;
      if (need * 2 > this.data.length) {
        const next = new Float32Array(need * 2);
        next.set(this.data.subarray(this.head, this.head + this.length));
        this.data = next;
      } else {
        this.data.copyWithin(0, this.head, this.head + this.length);
      }
      this.head = 0;
    }
    this.data.set(samples, this.head + this.length);
    this.length += samples.length;
  }

  /** Forgets samples before absolute index `at`. */
  dropBefore(at: number): void {
    const n = Math.min(this.length, Math.max(0, at - this.base));
    this.base += n;
    this.head += n;
    this.length -= n;
  }

  /** A copy of samples [from, to), clipped to what is held. */
  slice(from: number, to: number): Float32Array {
    const a = Math.max(from, this.base) - this.base;
    const b = Math.min(to, this.end) - this.base;
    return b > a ? this.data.slice(this.head + a, this.head + b) : new Float32Array(0);
  }
}

const round = (x: number, digits: number) => {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
};

/** Speech spans of every audio track, transcribed by the --stt engine. */
export const speechDescriptor = defineAnalyzer({
  name: 'speech',
  options: {},
  engines: { stt: STT_ENGINE },
  listed: true,
  live: true,
  reanalyzable: true,
  create: ({ stt }, setup) =>
    new SpeechAnalyzer({
      stt:
        stt.type === 'openai'
          ? new OpenAiSpeechToText(setup.modelServer(stt.url, stt.apiKey), stt.model)
          : createSpeechToText({
              type: stt.type,
              modelsDir: setup.modelsDir,
              model: stt.type === 'none' ? undefined : stt.model,
            }),
      vadModel: setup.vadModel,
    }),
});
