/**
 * Speech-to-text engines behind one interface. Whisper runs through @huggingface/transformers from
 * a local model directory only (nothing is downloaded at run time; `models pull` fetches it once on
 * a machine that is online); "none" leaves speech spans untranscribed.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { apiKey, engine, needs, serverUrl, text } from '../../options';
import type { EngineInfo } from '../contracts';
import { SAMPLE_RATE } from './vad';

export interface TranscriptPiece {
  /** Seconds from the start of the audio handed to `transcribe`. */
  start: number;
  end: number;
  text: string;
  confidence?: number;
}

export interface SpeechToText {
  /** kind "stt"; name "whisper:<model id>" or "none" (shown in the video's metadata). */
  readonly info: EngineInfo;
  /** False for the "none" engine: callers skip collecting audio for it. */
  readonly transcribes: boolean;
  /** Relative cost per second of speech, for progress and ETA (VAD alone is about 0.2). */
  readonly weight: number;
  /**
   * Join nearby speech spans into chunks of at most this many seconds (cut in a silence) before
   * transcribing; unset: each span on its own (local Whisper). Remote engines set it: fewer requests.
   */
  readonly chunkSec?: number;
  /** Chunks may be transcribed at the same time (a model server; its client limits concurrency). */
  readonly parallel?: boolean;
  /** With `parallel`: chunks in flight at most; the audio decode waits beyond it (backpressure). */
  readonly maxInFlight?: number;
  /** `audio`: 16 kHz mono samples, at most about 30 s (one Whisper window) or `chunkSec`. */
  transcribe(audio: Float32Array, opts: { signal: AbortSignal; language?: string }): Promise<TranscriptPiece[]>;
  close?(): Promise<void>;
}

/** Per-file ONNX precision, as transformers.js names it (`q8` loads `*_quantized.onnx`). */
export type WhisperDtype = { encoder_model: OnnxDtype; decoder_model_merged: OnnxDtype };
export type OnnxDtype = 'fp32' | 'fp16' | 'q8' | 'int8' | 'uint8' | 'q4' | 'bnb4' | 'q4f16';

/**
 * Full-precision encoder, 8-bit decoder: quantizing Whisper's encoder costs noticeably more
 * accuracy than the decoder, while the decoder (run once per token) is where 8 bits save time.
 */
export const DEFAULT_WHISPER_DTYPE: WhisperDtype = { encoder_model: 'fp32', decoder_model_merged: 'q8' };
export const DEFAULT_WHISPER_MODEL = 'onnx-community/whisper-base.en';

const DTYPE_SUFFIX: Record<OnnxDtype, string> = {
  fp32: '',
  fp16: '_fp16',
  q8: '_quantized',
  int8: '_int8',
  uint8: '_uint8',
  q4: '_q4',
  bnb4: '_bnb4',
  q4f16: '_q4f16',
};

/** Files a Whisper model needs in `<modelsDir>/<id>/` (besides optional small JSON files). */
export function whisperRequiredFiles(dtype: WhisperDtype = DEFAULT_WHISPER_DTYPE): string[] {
  return [
    'config.json',
    'generation_config.json',
    'preprocessor_config.json',
    'tokenizer.json',
    'tokenizer_config.json',
    `onnx/encoder_model${DTYPE_SUFFIX[dtype.encoder_model]}.onnx`,
    `onnx/decoder_model_merged${DTYPE_SUFFIX[dtype.decoder_model_merged]}.onnx`,
  ];
}

export interface SttConfig {
  /** auto (whisper when its model is in `modelsDir`, else none) | whisper | none. @default "auto" */
  type: 'auto' | 'whisper' | 'none';
  /** Local model directory, Hugging Face layout (`<id>/config.json`, `<id>/onnx/*.onnx`). */
  modelsDir: string;
  /** Whisper model id inside `modelsDir`. @default "onnx-community/whisper-base.en" */
  model?: string;
  /** ONNX precision per file. @default the first complete set in the model folder: encoder fp32 + decoder q8, all q8, all fp32, all fp16 */
  dtype?: WhisperDtype;
  /** Inference threads. @default 1 */
  threads?: number;
  /** Longest one call may take, in ms, before it is abandoned (the signal also stops it). @default 120000 */
  timeoutMs?: number;
}

export function whisperModelPresent(modelsDir: string, id: string): boolean {
  return existsSync(join(modelsDir, id, 'config.json'));
}

export function createSpeechToText(cfg: SttConfig): SpeechToText {
  const id = cfg.model || DEFAULT_WHISPER_MODEL;
  switch (cfg.type) {
    case 'whisper':
      return new WhisperStt({ ...cfg, model: id });
    case 'auto':
      return whisperModelPresent(cfg.modelsDir, id) ? new WhisperStt({ ...cfg, model: id }) : new NoSpeechToText();
    case 'none':
      return new NoSpeechToText();
    default:
      throw new Error(
        `unknown speech-to-text engine "${String((cfg as { type: unknown }).type)}" (auto, whisper or none)`,
      );
  }
}

export class NoSpeechToText implements SpeechToText {
  readonly info: EngineInfo = { kind: 'stt', name: 'none' };
  readonly transcribes = false;
  readonly weight = 0;
  async transcribe(): Promise<TranscriptPiece[]> {
    return [];
  }
}

/** The slice of transformers.js's ASR pipeline output this file relies on. */
interface AsrOutput {
  text: string;
  chunks?: { timestamp: [number | null, number | null]; text: string }[];
}
type AsrPipeline = ((audio: Float32Array, opts: Record<string, unknown>) => Promise<AsrOutput>) & {
  dispose(): Promise<void>;
};

export class WhisperStt implements SpeechToText {
  readonly info: EngineInfo;
  readonly transcribes = true;
  // Whisper-base on one CPU thread runs at roughly a fifth to a tenth of real time.
  readonly weight = 5;
  private readonly dir: string;
  private loading?: Promise<{ asr: AsrPipeline; multilingual: boolean }>;
  /**
   * The pipeline runs one request at a time: the worker's two job slots share it, and a generation
   * keeps its state in the pipeline's model while it runs.
   */
  private turn: Promise<unknown> = Promise.resolve();

  constructor(private readonly cfg: SttConfig & { model: string }) {
    this.info = { kind: 'stt', name: `whisper:${cfg.model}`, version: transformersVersion() };
    this.dir = join(cfg.modelsDir, cfg.model);
  }

  transcribe(audio: Float32Array, opts: { signal: AbortSignal; language?: string }): Promise<TranscriptPiece[]> {
    const run = this.turn.then(() => this.transcribeNow(audio, opts));
    this.turn = run.catch(() => {});
    return run;
  }

  private async transcribeNow(
    audio: Float32Array,
    opts: { signal: AbortSignal; language?: string },
  ): Promise<TranscriptPiece[]> {
    opts.signal.throwIfAborted();
    const { asr, multilingual } = await this.load();
    const { InterruptableStoppingCriteria } = await import('@huggingface/transformers');
    const stop = new InterruptableStoppingCriteria();
    const signal = AbortSignal.any([opts.signal, AbortSignal.timeout(this.cfg.timeoutMs ?? 120_000)]);
    const onAbort = () => stop.interrupt();
    signal.addEventListener('abort', onAbort, { once: true });
    let out: AsrOutput;
    try {
      out = await asr(audio, {
        return_timestamps: true,
        // English-only checkpoints refuse a language; multilingual ones are told it when known.
        ...(multilingual && opts.language ? { language: opts.language, task: 'transcribe' } : {}),
        ...(audio.length > 30 * SAMPLE_RATE ? { chunk_length_s: 30 } : {}),
        stopping_criteria: stop,
      });
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
    if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : new Error('transcription was stopped');
    const duration = audio.length / SAMPLE_RATE;
    const chunks = out.chunks?.length ? out.chunks : [{ timestamp: [0, duration] as [number, number], text: out.text }];
    return chunks
      .map((c) => {
        const start = clamp(c.timestamp[0] ?? 0, 0, duration);
        const end = clamp(c.timestamp[1] ?? duration, start, duration);
        return { start, end, text: c.text.trim() };
      })
      .filter((c) => c.text.length > 0);
  }

  async close(): Promise<void> {
    const loaded = await this.loading?.catch(() => undefined);
    this.loading = undefined;
    await loaded?.asr.dispose();
  }

  private missingFiles(dtype: WhisperDtype): string[] {
    return whisperRequiredFiles(dtype).filter((f) => !existsSync(join(this.dir, f)));
  }

  private load() {
    this.loading ??= this.open().catch((e) => {
      // A later call retries (the model may have been pulled in the meantime).
      this.loading = undefined;
      throw e;
    });
    return this.loading;
  }

  private async open() {
    const dtype =
      this.cfg.dtype ?? FALLBACK_DTYPES.find((d) => this.missingFiles(d).length === 0) ?? DEFAULT_WHISPER_DTYPE;
    const missing = this.missingFiles(dtype);
    if (missing.length) {
      throw new Error(
        `the Whisper model "${this.cfg.model}" is not in ${this.cfg.modelsDir} (missing ${missing.join(', ')}); ` +
          `run \`vidq models pull ${this.cfg.model}\` on a machine that is online, or set the speech-to-text engine to none`,
      );
    }
    const { env, pipeline } = await import('@huggingface/transformers');
    // Local files only: a missing file must fail here, never turn into a download.
    env.allowRemoteModels = false;
    env.allowLocalModels = true;
    env.localModelPath = this.cfg.modelsDir.endsWith('/') ? this.cfg.modelsDir : `${this.cfg.modelsDir}/`;
    env.useFSCache = false;
    env.useBrowserCache = false;
    const threads = this.cfg.threads ?? 1;
    const asr = (await pipeline('automatic-speech-recognition', this.cfg.model, {
      dtype,
      device: 'cpu',
      session_options: { intraOpNumThreads: threads, interOpNumThreads: 1 },
    })) as unknown as AsrPipeline;
    const gen = readJson(join(this.dir, 'generation_config.json'));
    return { asr, multilingual: gen?.is_multilingual === true };
  }
}

/** Without a configured precision, whichever of these was pulled is used (first complete one wins). */
const FALLBACK_DTYPES: WhisperDtype[] = [
  DEFAULT_WHISPER_DTYPE,
  { encoder_model: 'q8', decoder_model_merged: 'q8' },
  { encoder_model: 'fp32', decoder_model_merged: 'fp32' },
  { encoder_model: 'fp16', decoder_model_merged: 'fp16' },
];

function readJson(path: string): Record<string, unknown> | null {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  } catch {
    return null;
  }
}

function transformersVersion(): string | undefined {
  try {
    return `transformers.js ${(createRequire(import.meta.url)('@huggingface/transformers/package.json') as { version: string }).version}`;
  } catch {
    return undefined;
  }
}

const clamp = (x: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, x));

/** The Whisper model id (`--whisper-model`): `vidq models pull` fetches it whichever engine --stt picks. */
export const WHISPER_MODEL = text(
  'whisper-model',
  'onnx-community/whisper-base.en',
  'Whisper model id in the models directory',
);

/** Speech to text. auto: Whisper when its model is in the models directory, else none. */
export const STT_ENGINE = engine(
  'stt',
  'auto',
  'speech-to-text engine: auto | whisper | openai (a model server, see --stt-url) | none',
  {
    auto: { model: WHISPER_MODEL },
    whisper: { model: WHISPER_MODEL },
    /** An OpenAI-compatible /v1/audio/transcriptions endpoint. */
    openai: {
      url: needs(
        serverUrl('stt-url', 'OpenAI-compatible base URL for --stt openai (key: VIDQ_STT_API_KEY)', 'VIDQ_STT_API_KEY'),
        "the server's base URL (e.g. http://127.0.0.1:8000)",
      ),
      model: needs(
        text('stt-model', '', 'transcription model name for --stt openai, e.g. whisper-1'),
        'the transcription model the server serves (e.g. whisper-1)',
      ),
      apiKey: apiKey(null, 'VIDQ_STT_API_KEY', 'bearer key of the speech-to-text server'),
    },
    none: {},
  },
  ['sttEngine'],
);
