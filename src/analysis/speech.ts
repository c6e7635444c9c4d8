/**
 * Speech: Silero VAD over the whole sound track gives speech spans on every machine; when a
 * speech-to-text engine is available each span (padded a little) is transcribed as soon as it
 * closes, while the audio is still streaming, so only the open span's audio is ever held.
 */
import type { Analyzer, EngineInfo, NewSegment, StageContext, StageResult } from './contracts';
import { ModelServerError } from './model-server/client';
import type { SpeechToText } from './stt';
import { DEFAULT_VAD, SAMPLE_RATE, SileroVad, SpanTracker, VAD_ENGINE, decodeAudio16k, vadModelPath, type FrameSpan, type VadOptions } from './vad';

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
  private vad?: Promise<SileroVad>;

  constructor(private readonly opts: SpeechOptions) {
    this.vadOpts = { ...DEFAULT_VAD, ...opts.vad };
    this.padSec = opts.padSec ?? 0.2;
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
      speech_seconds: round(speech.reduce((s, x) => s + (x.end - x.start), 0), 1),
      segments: speech.length,
      transcripts,
      ...extra,
    });
    if (!video.hasAudio) return { segments: [], summary: summary([], 0, { note: 'no audio track' }) };

    const vad = await this.loadVad();
    vad.reset();
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
          ctx.log.warn('transcription skipped', { reason: e.message, more: 'further problems are counted, not logged' });
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
          extra: { engine: stt.info.name, speech_start: speechStart, speech_end: speechEnd },
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
      const extra = { engine: VAD_ENGINE, transcribed: !!window };
      speech.push({ kind: 'speech', start, end, text: window ? 'speech' : 'speech, not transcribed', confidence: round(span.meanProb, 3), extra });
      if (!window) return;
      const from = Math.max(0, span.start * frame - padSamples);
      const to = span.end * frame + padSamples;
      if (!chunkSec) {
        chunk = { from, to, speechStart: start, speechEnd: end };
        return flush();
      }
      // A long silence or the length limit ends a chunk: silence sent for transcription costs time
      // and makes Whisper-type models invent words.
      if (chunk && ((to - chunk.from) / SAMPLE_RATE > chunkSec || (from - chunk.to) / SAMPLE_RATE > JOIN_GAP_SEC)) await flush();
      chunk = chunk ? { ...chunk, to, speechEnd: end } : { from, to, speechStart: start, speechEnd: end };
    };

    for await (const block of decodeAudio16k(ctx.ffmpeg, video.path, signal, frame)) {
      let input = block;
      if (block.length < frame) {
        // The last block is usually short: pad it with silence rather than drop its speech.
        last.set(block);
        input = last;
      }
      window?.append(block);
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
      if (video.durationSec > 0) ctx.progress(Math.min(0.99, samples / SAMPLE_RATE / video.durationSec));
      signal.throwIfAborted();
    }
    for (const span of tracker.finish()) await emit(span);
    await flush();
    await Promise.all(inFlight);
    transcripts.sort((a, b) => a.start - b.start);
    const problems: Record<string, unknown> = {};
    if (failedChunks && !transcripts.length) problems.transcripts_skipped = `transcripts: skipped — ${down ?? firstProblem}`;
    else if (failedChunks) problems.transcripts_incomplete = `transcripts: ${failedChunks} of ${chunks} chunks skipped — ${down ?? firstProblem}`;
    return { segments: [...speech, ...transcripts], summary: summary(speech, transcripts.length, problems) };
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
