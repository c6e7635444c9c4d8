/**
 * The one typed configuration of the service.
 *
 * Precedence: command-line flags > environment (VIDQ_*) > config file (JSON) > defaults.
 * Every field documents its default; `describeOptions()` feeds `--help`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

export interface Config {
  /** Address to bind. Loopback by default so nothing is exposed by accident. @default "127.0.0.1" */
  readonly host: string;
  /** TCP port; 0 picks a free one. @default 8420 */
  readonly port: number;
  /** Where the database, media files and secrets live. @default "~/.vidq" */
  readonly dataDir: string;
  /** Let the downloader fetch from loopback, private and link-local addresses (tests, home networks). @default false */
  readonly allowPrivateUrls: boolean;
  /** Largest file the downloader accepts, in bytes (413 above). @default 10 GiB */
  readonly maxDownloadBytes: number;
  /** Time allowed to connect and receive response headers, per hop, in ms. @default 15000 */
  readonly connectTimeoutMs: number;
  /** Longest pause between two chunks of a download before it is abandoned, in ms. @default 30000 */
  readonly idleTimeoutMs: number;
  /** Redirects followed per download (every hop is checked again). @default 5 */
  readonly maxRedirects: number;
  /** Longest media duration accepted, in seconds (422 above). @default 86400 (24 h) */
  readonly maxDurationSec: number;
  /** A resource is `is_large` when its file is bigger than this, in bytes. @default 500 MiB */
  readonly largeFileBytes: number;
  /** Credits one POST /inquire costs. @default 1 */
  readonly inquireCost: number;
  /** Balance of a user created without --credits. @default 100 */
  readonly defaultCredits: number;
  /** Answer GET /indexes without a token while bound to loopback. @default true */
  readonly anonymousListingOnLoopback: boolean;
  /** Lifetime of signed media links in `src`, in seconds. @default 86400 */
  readonly mediaLinkTtlSec: number;
  /** Lifetime of the signed upload URLs of `POST /api-pre-upload`, in seconds (the PUT must start before). @default 3600 */
  readonly uploadUrlTtlSec: number;
  /** Soft-deleted indexes are purged (rows and files) after this many days. @default 7 */
  readonly purgeAfterDays: number;
  /** A resource still downloading/processing after this many minutes is failed by the maintenance job. @default 120 */
  readonly stuckAfterMinutes: number;
  /** Cron pattern of the maintenance job (purge, stuck resources, cache refresh). @default every 5 minutes */
  readonly maintenanceCron: string;
  /** Largest JSON request body, in bytes (413 above): an /inquire at its 8000+8000-character limits, \u-escaped, is ~97 kB. @default 128 KiB */
  readonly maxBodyBytes: number;
  /**
   * Largest JSON body of the endpoints that take an image (POST /search, POST /core/search): a
   * full-HD PNG is 2–6 MB, a third more as base64. @default 24 MiB
   */
  readonly maxImageBodyBytes: number;
  /** Largest file sent to POST /upload, in bytes (413 above); 0 = the same as maxDownloadBytes. @default maxDownloadBytes */
  readonly maxUploadBytes: number;
  /** Where video.ready/failed/removed events go when the index has no webhook URL of its own ("" = nowhere). @default "" */
  readonly webhookUrl: string;
  /** First retry of a failed webhook delivery after this many ms, doubling up to an hour, for a day. @default 5000 */
  readonly webhookRetryMs: number;
  /** Refuse uploads while the data directory's disk has less free space than this, in bytes. @default 1 GiB */
  readonly minFreeBytes: number;
  /** Analysis worker processes (0 = no analysis: videos are ready once stored). @default 1 */
  readonly analysisWorkers: number;
  /**
   * Videos up to this many seconds long may be analysed by a worker's second job slot (the "short
   * lane", sharing its loaded models) while its first slot is busy, so they are not stuck behind a
   * long one (0 = no lane). @default 120
   */
  readonly shortLaneSec: number;
  /** Analyses of one user running at once (0 = no cap); the queue also takes users in turns. @default 0 */
  readonly maxAnalysesPerUser: number;
  /** A worker restarts after analysing a video at least this long, to give its memory back (0 = never). @default 600 */
  readonly workerRecycleSec: number;
  /**
   * A worker that has analysed a video and then waited this long for the next one restarts without
   * its models, giving their memory back; they load again when work arrives (0 = never). @default 60
   */
  readonly workerIdleReleaseSec: number;
  /** Analyzers to run, in order, comma-separated. @default "visual,ocr,objects,faces,speech,subtitles,embeddings" */
  readonly analyzers: string;
  /** Live streams one user may have running (connecting/live/reconnecting/paused). @default 4 */
  readonly liveMaxStreamsPerUser: number;
  /** Analysed frames per second one user's streams may add up to. @default 4 */
  readonly liveMaxFpsPerUser: number;
  /** Analysed frames per second of a stream that asks for none. @default 1 */
  readonly liveFps: number;
  /** Seconds of a stream's recording, frames and segments kept (older ones are purged by the cron). @default 86400 */
  readonly liveRetentionSec: number;
  /** A pulled source that gives no frame for this many seconds is restarted (with backoff). @default 15 */
  readonly liveStallSec: number;
  /** Seconds of one recording segment (the ffmpeg segmenter), what a cited moment plays from. @default 4 */
  readonly liveSegmentSec: number;
  /** At most one sampled frame per this many seconds within a shot (the main speed/detail trade-off of analysis). @default 5 */
  readonly frameIntervalSec: number;
  /** Speech-to-text engine: auto (whisper if its model is in the models directory, else none) | whisper | openai (a model server) | none. @default "auto" */
  readonly sttEngine: string;
  /** Local model directory (Hugging Face layout: <id>/config.json, onnx/...). @default DATA_DIR/models */
  readonly modelsDir: string;
  /** Whisper model id inside the models directory. @default "onnx-community/whisper-base.en" */
  readonly whisperModel: string;
  /**
   * Who writes the answer of /inquire: none (the extractive composer, no generative model) |
   * openai (an OpenAI-compatible /v1/chat/completions endpoint) | transformers (a local model
   * directory through @huggingface/transformers). The composed answer stays the fallback. @default "none"
   */
  readonly generator: GeneratorType;
  /** Base URL of the OpenAI-compatible endpoint, e.g. http://127.0.0.1:11434 (Ollama); "/v1" is added when missing. @default "" */
  readonly generatorUrl: string;
  /** Model name (openai) or model id inside the models directory / absolute model folder (transformers). @default "" */
  readonly generatorModel: string;
  /** Bearer key for the endpoint. Non-enumerable on the loaded config, so it is never serialised or logged. @default "" */
  readonly generatorApiKey: string;
  /** The model reads images: the cited frames are sent with the evidence (openai only). @default false */
  readonly generatorVision: boolean;
  /** Longest a generated answer may take before the composed answer is used, in ms. @default 20000 */
  readonly generatorTimeoutMs: number;
  /** Log level: error | warn | info | debug. @default "info" */
  readonly logLevel: LogLevel;
  // --- Model servers (issue 11): captions, transcripts, embeddings from OpenAI-compatible servers ---
  /** Who writes shot captions at index time: none | openai (an OpenAI-compatible /v1/chat/completions vision model). @default "none" */
  readonly captioner: CaptionerType;
  /** Base URL of the captioning server; "/v1" is added when missing. @default "" */
  readonly captionerUrl: string;
  /** Vision model name the captioning server serves (e.g. qwen2.5vl). @default "" */
  readonly captionerModel: string;
  /** One caption per this many seconds of a long shot. @default 10 */
  readonly captionIntervalSec: number;
  /** Base URL of the speech-to-text server (--stt openai); "/v1" is added when missing. @default "" */
  readonly sttUrl: string;
  /** Transcription model name (--stt openai), e.g. whisper-1 or Systran/faster-whisper-small. @default "" */
  readonly sttModel: string;
  /** Longest one model-server request may take, in ms (then it is retried or given up). @default 60000 */
  readonly modelTimeoutMs: number;
  /** Model-server requests in flight at once, across all videos (split between analysis workers). @default 4 */
  readonly modelConcurrency: number;
  /** Retries of a failed model-server request (connection error, timeout, 429, 5xx), with backoff. @default 2 */
  readonly modelRetries: number;
  /** Who embeds segments and questions: use (the built-in sentence encoder) | openai (POST /v1/embeddings). @default "use" */
  readonly embedder: EmbedderType;
  /** Base URL of the embeddings server (--embedder openai); "/v1" is added when missing. @default "" */
  readonly embedderUrl: string;
  /** Embedding model name (--embedder openai), e.g. nomic-embed-text. @default "" */
  readonly embedderModel: string;
  /**
   * An Ollama server (e.g. http://127.0.0.1:11434): at start-up its installed models are read and a
   * vision model becomes the captioner, a chat model the generator, an embedding model the embedder,
   * unless those are set (non-default). @default ""
   */
  readonly ollama: string;
  /** Bearer keys of the model servers: from VIDQ_CAPTIONER_API_KEY / VIDQ_STT_API_KEY / VIDQ_EMBEDDER_API_KEY only, never serialised. */
  readonly captionerApiKey: string;
  readonly sttApiKey: string;
  readonly embedderApiKey: string;
  // Abuse and fairness limits (README "Limits"); 0 turns a limit off.
  /** Host names (no port) the HTTP server answers to, comma-separated; "*" = any. "" = loopback names plus --host. @default "" */
  readonly allowedHosts: string;
  /** Base URL for absolute links (`src`, `frame_url`), e.g. https://vidq.example; "" = http://<the request's allowed Host>. @default "" */
  readonly publicUrl: string;
  /** Whole-download deadline, in ms, however steadily bytes arrive. @default 3600000 (1 h) */
  readonly downloadDeadlineMs: number;
  /** Slowest average download rate accepted, in bytes/s, judged over each --idle-timeout-ms window. @default 16384 */
  readonly minDownloadRate: number;
  /** Downloads in flight on the whole server (kept below the runtime's connection and file limits). @default 64 */
  readonly maxDownloads: number;
  /** Downloads in flight per user. @default 8 */
  readonly userMaxDownloads: number;
  /** Bytes of stored media per user (507 above). @default 200 GiB */
  readonly userMaxStorageBytes: number;
  /** Videos per user waiting for or under analysis. @default 50 */
  readonly userMaxQueued: number;
  /** Sampled-frame candidates per video: longer videos are sampled more sparsely. @default 7200 */
  readonly maxFramesPerVideo: number;
  /** Largest sampled frame, in pixels (width × height; frames are scaled down by area). @default 518400 (960×540) */
  readonly maxFramePixels: number;
  /** Bytes of sampled frames per video before its analysis fails. @default 1 GiB */
  readonly maxFrameBytesPerVideo: number;
  /** Analysis time allowed per video: this many seconds per minute of video, plus --analysis-budget-base-sec. @default 120 */
  readonly analysisSecPerMinute: number;
  /** The fixed part of the analysis-time budget (model loading, short clips), in seconds; both 0 = no budget. @default 600 */
  readonly analysisBudgetBaseSec: number;
  /** Optional config file the values above were read from. */
  readonly configFile?: string;
}

export type LogLevel = 'error' | 'warn' | 'info' | 'debug';
export const GENERATOR_TYPES = ['none', 'openai', 'transformers'] as const;
export type GeneratorType = (typeof GENERATOR_TYPES)[number];
export const CAPTIONER_TYPES = ['none', 'openai'] as const;
export type CaptionerType = (typeof CAPTIONER_TYPES)[number];
export const STT_ENGINES = ['auto', 'whisper', 'openai', 'none'] as const;
export const EMBEDDER_TYPES = ['use', 'openai'] as const;
export type EmbedderType = (typeof EMBEDDER_TYPES)[number];
/** Model-server keys: environment only (a flag would show in ps), never serialised or logged. */
const MODEL_KEY_ENV = {
  captionerApiKey: 'VIDQ_CAPTIONER_API_KEY',
  sttApiKey: 'VIDQ_STT_API_KEY',
  embedderApiKey: 'VIDQ_EMBEDDER_API_KEY',
} as const;

/**
 * Analyzers in pipeline order: visual first (the others read its frames), subtitles after speech
 * (both store transcripts; speech replaces all of them), embeddings last (it embeds what the others stored).
 */
export const ANALYZER_NAMES = ['visual', 'ocr', 'objects', 'faces', 'speech', 'subtitles', 'embeddings'] as const;
export type AnalyzerName = (typeof ANALYZER_NAMES)[number];

/** The analyzers a config asks for, in pipeline order; visual always runs (every other one works from its frames). */
export function analyzerNames(analyzers: string): AnalyzerName[] {
  const names = analyzers
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = names.filter((n) => !(ANALYZER_NAMES as readonly string[]).includes(n));
  if (unknown.length)
    throw new ConfigError(
      `--analyzers: unknown analyzer(s) ${unknown.join(', ')}; choose from ${ANALYZER_NAMES.join(', ')}`,
    );
  return ANALYZER_NAMES.filter((n) => n === 'visual' || names.includes(n));
}

type Kind = 'string' | 'int' | 'bool' | 'level';
interface OptionSpec {
  key: keyof Config;
  flag: string;
  env: string;
  kind: Kind;
  help: string;
}

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

export const DEFAULTS: Readonly<Omit<Config, 'configFile' | keyof typeof MODEL_KEY_ENV>> = Object.freeze({
  host: '127.0.0.1',
  port: 8420,
  dataDir: join(homedir(), '.vidq'),
  allowPrivateUrls: false,
  maxDownloadBytes: 10 * GiB,
  connectTimeoutMs: 15_000,
  idleTimeoutMs: 30_000,
  maxRedirects: 5,
  maxDurationSec: 86_400,
  largeFileBytes: 500 * MiB,
  inquireCost: 1,
  defaultCredits: 100,
  anonymousListingOnLoopback: true,
  mediaLinkTtlSec: 86_400,
  uploadUrlTtlSec: 3600,
  purgeAfterDays: 7,
  stuckAfterMinutes: 120,
  maintenanceCron: '*/5 * * * *',
  maxBodyBytes: 128 * 1024,
  maxImageBodyBytes: 24 * MiB,
  maxUploadBytes: 0,
  webhookUrl: '',
  webhookRetryMs: 5000,
  minFreeBytes: 1 * GiB,
  analysisWorkers: 1,
  shortLaneSec: 120,
  maxAnalysesPerUser: 0,
  workerRecycleSec: 600,
  workerIdleReleaseSec: 60,
  analyzers: 'visual,ocr,objects,faces,speech,subtitles,embeddings',
  frameIntervalSec: 5,
  liveMaxStreamsPerUser: 4,
  liveMaxFpsPerUser: 4,
  liveFps: 1,
  liveRetentionSec: 86400,
  liveStallSec: 15,
  liveSegmentSec: 4,
  sttEngine: 'auto',
  modelsDir: '',
  whisperModel: 'onnx-community/whisper-base.en',
  generator: 'none',
  generatorUrl: '',
  generatorModel: '',
  generatorApiKey: '',
  generatorVision: false,
  generatorTimeoutMs: 20_000,
  logLevel: 'info',
  captioner: 'none',
  captionerUrl: '',
  captionerModel: '',
  captionIntervalSec: 10,
  sttUrl: '',
  sttModel: '',
  modelTimeoutMs: 60_000,
  modelConcurrency: 4,
  modelRetries: 2,
  embedder: 'use',
  embedderUrl: '',
  embedderModel: '',
  ollama: '',
  allowedHosts: '',
  publicUrl: '',
  downloadDeadlineMs: 3_600_000,
  minDownloadRate: 16 * 1024,
  maxDownloads: 64,
  userMaxDownloads: 8,
  userMaxStorageBytes: 200 * GiB,
  userMaxQueued: 50,
  maxFramesPerVideo: 7200,
  maxFramePixels: 960 * 540,
  maxFrameBytesPerVideo: 1 * GiB,
  analysisSecPerMinute: 120,
  analysisBudgetBaseSec: 600,
});

const OPTIONS: OptionSpec[] = [
  { key: 'host', flag: 'host', env: 'VIDQ_HOST', kind: 'string', help: 'address to bind' },
  { key: 'port', flag: 'port', env: 'VIDQ_PORT', kind: 'int', help: 'TCP port (0 = any free port)' },
  {
    key: 'dataDir',
    flag: 'data-dir',
    env: 'VIDQ_DATA_DIR',
    kind: 'string',
    help: 'data directory (database, media, secrets)',
  },
  {
    key: 'allowPrivateUrls',
    flag: 'allow-private-urls',
    env: 'VIDQ_ALLOW_PRIVATE_URLS',
    kind: 'bool',
    help: 'let the downloader fetch loopback/private/link-local addresses',
  },
  {
    key: 'maxDownloadBytes',
    flag: 'max-download-bytes',
    env: 'VIDQ_MAX_DOWNLOAD_BYTES',
    kind: 'int',
    help: 'largest downloadable file in bytes',
  },
  {
    key: 'connectTimeoutMs',
    flag: 'connect-timeout-ms',
    env: 'VIDQ_CONNECT_TIMEOUT_MS',
    kind: 'int',
    help: 'connect + response-headers timeout per hop (ms)',
  },
  {
    key: 'idleTimeoutMs',
    flag: 'idle-timeout-ms',
    env: 'VIDQ_IDLE_TIMEOUT_MS',
    kind: 'int',
    help: 'longest pause between download chunks (ms)',
  },
  {
    key: 'maxRedirects',
    flag: 'max-redirects',
    env: 'VIDQ_MAX_REDIRECTS',
    kind: 'int',
    help: 'redirects followed per download',
  },
  {
    key: 'maxDurationSec',
    flag: 'max-duration-sec',
    env: 'VIDQ_MAX_DURATION_SEC',
    kind: 'int',
    help: 'longest accepted media duration (s)',
  },
  {
    key: 'largeFileBytes',
    flag: 'large-file-bytes',
    env: 'VIDQ_LARGE_FILE_BYTES',
    kind: 'int',
    help: 'size above which a resource is is_large',
  },
  {
    key: 'inquireCost',
    flag: 'inquire-cost',
    env: 'VIDQ_INQUIRE_COST',
    kind: 'int',
    help: 'credits charged per /inquire',
  },
  {
    key: 'defaultCredits',
    flag: 'default-credits',
    env: 'VIDQ_DEFAULT_CREDITS',
    kind: 'int',
    help: 'credits of a new user created without --credits',
  },
  {
    key: 'anonymousListingOnLoopback',
    flag: 'anonymous-listing',
    env: 'VIDQ_ANONYMOUS_LISTING',
    kind: 'bool',
    help: 'answer GET /indexes without a token when bound to loopback',
  },
  {
    key: 'mediaLinkTtlSec',
    flag: 'media-link-ttl-sec',
    env: 'VIDQ_MEDIA_LINK_TTL_SEC',
    kind: 'int',
    help: 'lifetime of signed media links (s)',
  },
  {
    key: 'uploadUrlTtlSec',
    flag: 'upload-url-ttl-sec',
    env: 'VIDQ_UPLOAD_URL_TTL_SEC',
    kind: 'int',
    help: 'lifetime of the signed upload URLs of POST /api-pre-upload (s)',
  },
  {
    key: 'purgeAfterDays',
    flag: 'purge-after-days',
    env: 'VIDQ_PURGE_AFTER_DAYS',
    kind: 'int',
    help: 'days before a deleted index is purged',
  },
  {
    key: 'stuckAfterMinutes',
    flag: 'stuck-after-minutes',
    env: 'VIDQ_STUCK_AFTER_MINUTES',
    kind: 'int',
    help: 'minutes before an unfinished resource is failed',
  },
  {
    key: 'maintenanceCron',
    flag: 'maintenance-cron',
    env: 'VIDQ_MAINTENANCE_CRON',
    kind: 'string',
    help: 'cron pattern of the maintenance job',
  },
  {
    key: 'maxBodyBytes',
    flag: 'max-body-bytes',
    env: 'VIDQ_MAX_BODY_BYTES',
    kind: 'int',
    help: 'largest request body (bytes)',
  },
  {
    key: 'maxImageBodyBytes',
    flag: 'max-image-body-bytes',
    env: 'VIDQ_MAX_IMAGE_BODY_BYTES',
    kind: 'int',
    help: 'largest request body of the endpoints that take an image (POST /search, /core/search; bytes)',
  },
  {
    key: 'webhookUrl',
    flag: 'webhook-url',
    env: 'VIDQ_WEBHOOK_URL',
    kind: 'string',
    help: 'default webhook URL for video.ready/failed/removed events (an index can set its own)',
  },
  {
    key: 'webhookRetryMs',
    flag: 'webhook-retry-ms',
    env: 'VIDQ_WEBHOOK_RETRY_MS',
    kind: 'int',
    help: 'first retry delay of a failed webhook (ms; doubles up to 1 h, for 24 h)',
  },
  {
    key: 'maxUploadBytes',
    flag: 'max-upload-bytes',
    env: 'VIDQ_MAX_UPLOAD_BYTES',
    kind: 'int',
    help: 'largest file sent to POST /upload (bytes; 0 = --max-download-bytes)',
  },
  {
    key: 'minFreeBytes',
    flag: 'min-free-bytes',
    env: 'VIDQ_MIN_FREE_BYTES',
    kind: 'int',
    help: 'refuse uploads below this much free disk (bytes)',
  },
  {
    key: 'analysisWorkers',
    flag: 'analysis-workers',
    env: 'VIDQ_ANALYSIS_WORKERS',
    kind: 'int',
    help: 'analysis worker processes (0 = no analysis)',
  },
  {
    key: 'shortLaneSec',
    flag: 'short-lane-sec',
    env: 'VIDQ_SHORT_LANE_SEC',
    kind: 'int',
    help: "videos up to N s may use a worker's second job slot while its first is busy (0 = off)",
  },
  {
    key: 'maxAnalysesPerUser',
    flag: 'max-analyses-per-user',
    env: 'VIDQ_MAX_ANALYSES_PER_USER',
    kind: 'int',
    help: 'analyses of one user at once (0 = no cap)',
  },
  {
    key: 'workerRecycleSec',
    flag: 'worker-recycle-sec',
    env: 'VIDQ_WORKER_RECYCLE_SEC',
    kind: 'int',
    help: 'restart a worker after a video of N s or longer (0 = never)',
  },
  {
    key: 'workerIdleReleaseSec',
    flag: 'worker-idle-release-sec',
    env: 'VIDQ_WORKER_IDLE_RELEASE_SEC',
    kind: 'int',
    help: 'a worker idle N s after a video restarts without its models (0 = never)',
  },
  {
    key: 'analyzers',
    flag: 'analyzers',
    env: 'VIDQ_ANALYZERS',
    kind: 'string',
    help: 'analyzers to run, comma-separated',
  },
  {
    key: 'liveMaxStreamsPerUser',
    flag: 'live-max-streams-per-user',
    env: 'VIDQ_LIVE_MAX_STREAMS_PER_USER',
    kind: 'int',
    help: 'live streams one user may run at once',
  },
  {
    key: 'liveMaxFpsPerUser',
    flag: 'live-max-fps-per-user',
    env: 'VIDQ_LIVE_MAX_FPS_PER_USER',
    kind: 'int',
    help: 'analysed frames per second all streams of a user may add up to',
  },
  {
    key: 'liveFps',
    flag: 'live-fps',
    env: 'VIDQ_LIVE_FPS',
    kind: 'int',
    help: 'analysed frames per second of a stream that asks for none',
  },
  {
    key: 'liveRetentionSec',
    flag: 'live-retention-sec',
    env: 'VIDQ_LIVE_RETENTION_SEC',
    kind: 'int',
    help: 'seconds of a live recording (and its frames and segments) kept',
  },
  {
    key: 'liveStallSec',
    flag: 'live-stall-sec',
    env: 'VIDQ_LIVE_STALL_SEC',
    kind: 'int',
    help: 'seconds without a frame after which a pulled source is reconnected',
  },
  {
    key: 'liveSegmentSec',
    flag: 'live-segment-sec',
    env: 'VIDQ_LIVE_SEGMENT_SEC',
    kind: 'int',
    help: 'seconds of one live recording segment',
  },
  {
    key: 'frameIntervalSec',
    flag: 'frame-interval-sec',
    env: 'VIDQ_FRAME_INTERVAL_SEC',
    kind: 'int',
    help: 'at most one sampled frame per N seconds of a shot',
  },
  {
    key: 'sttEngine',
    flag: 'stt',
    env: 'VIDQ_STT',
    kind: 'string',
    help: 'speech-to-text engine: auto | whisper | openai (a model server, see --stt-url) | none',
  },
  {
    key: 'modelsDir',
    flag: 'models-dir',
    env: 'VIDQ_MODELS_DIR',
    kind: 'string',
    help: 'local model directory (default DATA_DIR/models)',
  },
  {
    key: 'whisperModel',
    flag: 'whisper-model',
    env: 'VIDQ_WHISPER_MODEL',
    kind: 'string',
    help: 'Whisper model id in the models directory',
  },
  {
    key: 'generator',
    flag: 'generator',
    env: 'VIDQ_GENERATOR',
    kind: 'string',
    help: 'who writes answers: none (composed from the evidence) | openai | transformers',
  },
  {
    key: 'generatorUrl',
    flag: 'generator-url',
    env: 'VIDQ_GENERATOR_URL',
    kind: 'string',
    help: 'OpenAI-compatible base URL, e.g. http://127.0.0.1:11434 (Ollama)',
  },
  {
    key: 'generatorModel',
    flag: 'generator-model',
    env: 'VIDQ_GENERATOR_MODEL',
    kind: 'string',
    help: 'model name (openai) or model id in the models directory (transformers)',
  },
  {
    key: 'generatorApiKey',
    flag: 'generator-api-key',
    env: 'VIDQ_GENERATOR_API_KEY',
    kind: 'string',
    help: 'API key of the endpoint (prefer the environment variable: flags show in ps)',
  },
  {
    key: 'generatorVision',
    flag: 'generator-vision',
    env: 'VIDQ_GENERATOR_VISION',
    kind: 'bool',
    help: 'the model reads images: send the cited frames (openai)',
  },
  {
    key: 'generatorTimeoutMs',
    flag: 'generator-timeout-ms',
    env: 'VIDQ_GENERATOR_TIMEOUT_MS',
    kind: 'int',
    help: 'longest a generated answer may take before the composed one is used (ms)',
  },
  { key: 'logLevel', flag: 'log-level', env: 'VIDQ_LOG_LEVEL', kind: 'level', help: 'error | warn | info | debug' },
  {
    key: 'captioner',
    flag: 'captioner',
    env: 'VIDQ_CAPTIONER',
    kind: 'string',
    help: 'shot captions at index time: none | openai (key: VIDQ_CAPTIONER_API_KEY)',
  },
  {
    key: 'captionerUrl',
    flag: 'captioner-url',
    env: 'VIDQ_CAPTIONER_URL',
    kind: 'string',
    help: 'OpenAI-compatible base URL of the vision model, e.g. http://127.0.0.1:11434',
  },
  {
    key: 'captionerModel',
    flag: 'captioner-model',
    env: 'VIDQ_CAPTIONER_MODEL',
    kind: 'string',
    help: 'vision model name, e.g. qwen2.5vl',
  },
  {
    key: 'captionIntervalSec',
    flag: 'caption-interval-sec',
    env: 'VIDQ_CAPTION_INTERVAL_SEC',
    kind: 'int',
    help: 'one caption per N seconds of a long shot',
  },
  {
    key: 'sttUrl',
    flag: 'stt-url',
    env: 'VIDQ_STT_URL',
    kind: 'string',
    help: 'OpenAI-compatible base URL for --stt openai (key: VIDQ_STT_API_KEY)',
  },
  {
    key: 'sttModel',
    flag: 'stt-model',
    env: 'VIDQ_STT_MODEL',
    kind: 'string',
    help: 'transcription model name for --stt openai, e.g. whisper-1',
  },
  {
    key: 'modelTimeoutMs',
    flag: 'model-timeout-ms',
    env: 'VIDQ_MODEL_TIMEOUT_MS',
    kind: 'int',
    help: 'longest one model-server request may take (ms)',
  },
  {
    key: 'modelConcurrency',
    flag: 'model-concurrency',
    env: 'VIDQ_MODEL_CONCURRENCY',
    kind: 'int',
    help: 'model-server requests in flight at once, across all videos',
  },
  {
    key: 'modelRetries',
    flag: 'model-retries',
    env: 'VIDQ_MODEL_RETRIES',
    kind: 'int',
    help: 'retries of a failed model-server request (with backoff)',
  },
  {
    key: 'embedder',
    flag: 'embedder',
    env: 'VIDQ_EMBEDDER',
    kind: 'string',
    help: 'segment and question vectors: use (built-in) | openai (key: VIDQ_EMBEDDER_API_KEY)',
  },
  {
    key: 'embedderUrl',
    flag: 'embedder-url',
    env: 'VIDQ_EMBEDDER_URL',
    kind: 'string',
    help: 'OpenAI-compatible base URL for --embedder openai',
  },
  {
    key: 'embedderModel',
    flag: 'embedder-model',
    env: 'VIDQ_EMBEDDER_MODEL',
    kind: 'string',
    help: 'embedding model name for --embedder openai, e.g. nomic-embed-text',
  },
  {
    key: 'ollama',
    flag: 'ollama',
    env: 'VIDQ_OLLAMA',
    kind: 'string',
    help: 'Ollama base URL: pick captioner, generator and embedder from its installed models (unless set)',
  },
  // Abuse and fairness limits (0 = off).
  {
    key: 'allowedHosts',
    flag: 'allowed-hosts',
    env: 'VIDQ_ALLOWED_HOSTS',
    kind: 'string',
    help: 'Host names the server answers to, comma-separated ("*" = any; default: loopback names and --host)',
  },
  {
    key: 'publicUrl',
    flag: 'public-url',
    env: 'VIDQ_PUBLIC_URL',
    kind: 'string',
    help: 'base URL of absolute links (default: http://<allowed Host of the request>)',
  },
  {
    key: 'downloadDeadlineMs',
    flag: 'download-deadline-ms',
    env: 'VIDQ_DOWNLOAD_DEADLINE_MS',
    kind: 'int',
    help: 'longest a whole download may take (ms)',
  },
  {
    key: 'minDownloadRate',
    flag: 'min-download-rate',
    env: 'VIDQ_MIN_DOWNLOAD_RATE',
    kind: 'int',
    help: 'slowest accepted download rate (bytes/s, per idle-timeout window)',
  },
  {
    key: 'maxDownloads',
    flag: 'max-downloads',
    env: 'VIDQ_MAX_DOWNLOADS',
    kind: 'int',
    help: 'downloads in flight on the whole server',
  },
  {
    key: 'userMaxDownloads',
    flag: 'user-max-downloads',
    env: 'VIDQ_USER_MAX_DOWNLOADS',
    kind: 'int',
    help: 'downloads in flight per user',
  },
  {
    key: 'userMaxStorageBytes',
    flag: 'user-max-storage-bytes',
    env: 'VIDQ_USER_MAX_STORAGE_BYTES',
    kind: 'int',
    help: 'stored media bytes per user',
  },
  {
    key: 'userMaxQueued',
    flag: 'user-max-queued',
    env: 'VIDQ_USER_MAX_QUEUED',
    kind: 'int',
    help: 'videos per user waiting for or under analysis',
  },
  {
    key: 'maxFramesPerVideo',
    flag: 'max-frames-per-video',
    env: 'VIDQ_MAX_FRAMES_PER_VIDEO',
    kind: 'int',
    help: 'sampled-frame candidates per video',
  },
  {
    key: 'maxFramePixels',
    flag: 'max-frame-pixels',
    env: 'VIDQ_MAX_FRAME_PIXELS',
    kind: 'int',
    help: 'largest sampled frame (width x height)',
  },
  {
    key: 'maxFrameBytesPerVideo',
    flag: 'max-frame-bytes-per-video',
    env: 'VIDQ_MAX_FRAME_BYTES_PER_VIDEO',
    kind: 'int',
    help: 'bytes of sampled frames per video',
  },
  {
    key: 'analysisSecPerMinute',
    flag: 'analysis-sec-per-minute',
    env: 'VIDQ_ANALYSIS_SEC_PER_MINUTE',
    kind: 'int',
    help: 'analysis seconds allowed per minute of video (plus the base)',
  },
  {
    key: 'analysisBudgetBaseSec',
    flag: 'analysis-budget-base-sec',
    env: 'VIDQ_ANALYSIS_BUDGET_BASE_SEC',
    kind: 'int',
    help: 'fixed part of the analysis-time budget (s)',
  },
];

export class ConfigError extends Error {}

function parseValue(spec: OptionSpec, raw: unknown, from: string): unknown {
  switch (spec.kind) {
    case 'string':
      if (typeof raw !== 'string' || raw === '')
        throw new ConfigError(`${from}: ${spec.flag} must be a non-empty string`);
      return raw;
    case 'int': {
      const n = typeof raw === 'number' ? raw : Number(String(raw).trim());
      if (!Number.isSafeInteger(n) || n < 0)
        throw new ConfigError(`${from}: ${spec.flag} must be a whole number ≥ 0, got ${JSON.stringify(raw)}`);
      return n;
    }
    case 'bool': {
      if (typeof raw === 'boolean') return raw;
      const s = String(raw).toLowerCase();
      if (['1', 'true', 'yes', 'on', ''].includes(s)) return true;
      if (['0', 'false', 'no', 'off'].includes(s)) return false;
      throw new ConfigError(`${from}: ${spec.flag} must be true or false, got ${JSON.stringify(raw)}`);
    }
    case 'level':
      if (!['error', 'warn', 'info', 'debug'].includes(String(raw)))
        throw new ConfigError(`${from}: ${spec.flag} must be error, warn, info or debug`);
      return String(raw);
  }
}

/** Flags as parsed by util.parseArgs (strings, booleans for switches). */
export type FlagValues = Record<string, string | boolean | undefined>;

/** Options for util.parseArgs, shared by every command that takes the service config. */
export function configParseOptions(): Record<string, { type: 'string' | 'boolean' }> {
  const out: Record<string, { type: 'string' | 'boolean' }> = { config: { type: 'string' } };
  for (const o of OPTIONS) {
    out[o.flag] = { type: o.kind === 'bool' ? 'boolean' : 'string' };
    if (o.kind === 'bool') out[`no-${o.flag}`] = { type: 'boolean' };
  }
  return out;
}

export function loadConfig(flags: FlagValues = {}, env: Record<string, string | undefined> = process.env): Config {
  const merged: Record<string, unknown> = { ...DEFAULTS };

  const configFile = (flags.config as string | undefined) ?? env.VIDQ_CONFIG;
  const fileCandidate =
    configFile ?? join(String(flags['data-dir'] ?? env.VIDQ_DATA_DIR ?? DEFAULTS.dataDir), 'config.json');
  if (existsSync(fileCandidate)) {
    let fromFile: Record<string, unknown>;
    try {
      fromFile = JSON.parse(readFileSync(fileCandidate, 'utf8'));
    } catch (e) {
      throw new ConfigError(`config file ${fileCandidate} is not valid JSON: ${(e as Error).message}`);
    }
    for (const [k, v] of Object.entries(fromFile)) {
      const spec = OPTIONS.find((o) => o.key === k || o.flag === k);
      if (!spec) throw new ConfigError(`config file ${fileCandidate}: unknown option "${k}"`);
      merged[spec.key] = parseValue(spec, v, `config file ${fileCandidate}`);
    }
  } else if (configFile) {
    throw new ConfigError(`config file ${configFile} does not exist`);
  }

  for (const spec of OPTIONS) {
    const e = env[spec.env];
    if (e !== undefined && e !== '') merged[spec.key] = parseValue(spec, e, `environment ${spec.env}`);
  }
  for (const spec of OPTIONS) {
    const f = flags[spec.flag];
    if (f !== undefined) merged[spec.key] = parseValue(spec, f, `--${spec.flag}`);
    if (spec.kind === 'bool' && flags[`no-${spec.flag}`] === true) merged[spec.key] = false;
  }
  if ((merged.port as number) > 65535) throw new ConfigError('--port must be at most 65535');
  if (!(STT_ENGINES as readonly string[]).includes(merged.sttEngine as string))
    throw new ConfigError(`--stt must be ${STT_ENGINES.join(', ')}`);
  analyzerNames(merged.analyzers as string);
  if ((merged.frameIntervalSec as number) < 1) throw new ConfigError('--frame-interval-sec must be at least 1');
  checkGenerator(merged);
  checkModelServers(merged);
  if (merged.webhookUrl) {
    let u: URL | null = null;
    try {
      u = new URL(String(merged.webhookUrl));
    } catch {}
    if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:') || u.username || u.password)
      throw new ConfigError('--webhook-url must be an http(s) URL without credentials');
  }
  if ((merged.webhookRetryMs as number) < 100) throw new ConfigError('--webhook-retry-ms must be at least 100');
  // Uploads share the download cap unless given their own.
  if (merged.maxUploadBytes === 0) merged.maxUploadBytes = merged.maxDownloadBytes;
  if (merged.publicUrl && !/^https?:\/\/[^/?#\s]+\/?$/i.test(String(merged.publicUrl)))
    throw new ConfigError('--public-url must be an http(s) base URL without a path, e.g. https://vidq.example');
  merged.dataDir = resolve(String(merged.dataDir).replace(/^~(?=$|\/)/, homedir()));
  merged.modelsDir = merged.modelsDir ? resolve(String(merged.modelsDir)) : join(merged.dataDir as string, 'models');
  if (configFile || existsSync(fileCandidate)) merged.configFile = fileCandidate;
  // The key stays readable as config.generatorApiKey but out of JSON.stringify and inspection (logs,
  // the worker's inherited config).
  const key = merged.generatorApiKey;
  delete merged.generatorApiKey;
  Object.defineProperty(merged, 'generatorApiKey', { get: () => key, enumerable: false });
  withModelKeys(merged, env);
  return Object.freeze(merged) as unknown as Config;
}

/**
 * Attaches the model-server keys from the environment, non-enumerable like the generator key. The
 * analysis worker gets its config as JSON (keys dropped) and calls this with its inherited environment.
 */
export function withModelKeys<T extends object>(config: T, env: Record<string, string | undefined> = process.env): T {
  const target = Object.isFrozen(config) ? { ...config } : config;
  for (const [prop, name] of Object.entries(MODEL_KEY_ENV)) {
    const value = env[name] ?? '';
    Object.defineProperty(target, prop, { get: () => value, enumerable: false, configurable: true });
  }
  return target as T;
}

/** A copy of `config` with `changes`, keeping its non-enumerable keys (generator and model servers). */
export function deriveConfig(config: Config, changes: Partial<Config>): Config {
  const next: Record<string, unknown> = { ...config, ...changes };
  for (const prop of ['generatorApiKey', ...Object.keys(MODEL_KEY_ENV)]) {
    const value = (config as unknown as Record<string, unknown>)[prop];
    Object.defineProperty(next, prop, { get: () => value, enumerable: false });
  }
  return Object.freeze(next) as unknown as Config;
}

/** The model-server keys as environment variables, for the analysis worker (its config travels as JSON, without them). */
export function modelKeyEnv(config: Config): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [prop, name] of Object.entries(MODEL_KEY_ENV)) {
    const value = (config as unknown as Record<string, string | undefined>)[prop];
    if (value) out[name] = value;
  }
  return out;
}

/** The model-server options must name a usable server; checked at start-up, not on the first video. */
function checkModelServers(m: Record<string, unknown>): void {
  if (!(CAPTIONER_TYPES as readonly string[]).includes(m.captioner as string))
    throw new ConfigError(`--captioner must be ${CAPTIONER_TYPES.join(' or ')}; got ${JSON.stringify(m.captioner)}`);
  if ((m.captionIntervalSec as number) < 1) throw new ConfigError('--caption-interval-sec must be at least 1');
  if ((m.modelTimeoutMs as number) < 100) throw new ConfigError('--model-timeout-ms must be at least 100');
  if ((m.modelConcurrency as number) < 1 || (m.modelConcurrency as number) > 256)
    throw new ConfigError('--model-concurrency must be between 1 and 256');
  if ((m.modelRetries as number) > 10) throw new ConfigError('--model-retries must be at most 10');
  if (m.captioner === 'openai') {
    checkServerUrl(String(m.captionerUrl), '--captioner-url', '--captioner openai', 'VIDQ_CAPTIONER_API_KEY');
    if (!m.captionerModel)
      throw new ConfigError(
        '--captioner openai needs --captioner-model, a vision model the server serves (e.g. qwen2.5vl)',
      );
  }
  if (!(EMBEDDER_TYPES as readonly string[]).includes(m.embedder as string))
    throw new ConfigError(`--embedder must be ${EMBEDDER_TYPES.join(' or ')}; got ${JSON.stringify(m.embedder)}`);
  if (m.embedder === 'openai') {
    checkServerUrl(String(m.embedderUrl), '--embedder-url', '--embedder openai', 'VIDQ_EMBEDDER_API_KEY');
    if (!m.embedderModel)
      throw new ConfigError(
        '--embedder openai needs --embedder-model, the embedding model the server serves (e.g. nomic-embed-text)',
      );
  }
  if (m.ollama) checkServerUrl(String(m.ollama), '--ollama', '--ollama', 'the key variables');
  if (m.sttEngine === 'openai') {
    checkServerUrl(String(m.sttUrl), '--stt-url', '--stt openai', 'VIDQ_STT_API_KEY');
    if (!m.sttModel)
      throw new ConfigError(
        '--stt openai needs --stt-model, the transcription model the server serves (e.g. whisper-1)',
      );
  }
}

function checkServerUrl(url: string, flag: string, what: string, keyEnv: string): void {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new ConfigError(
      `${what} needs ${flag}, the server's base URL (e.g. http://127.0.0.1:11434); got ${JSON.stringify(url)}`,
    );
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new ConfigError(`${flag} must be an http or https URL`);
  if (u.username || u.password) throw new ConfigError(`${flag} must not carry credentials; set ${keyEnv} instead`);
}

/** The generator options must make a usable backend; checked at start-up, not on the first question. */
function checkGenerator(m: Record<string, unknown>): void {
  const type = m.generator as string;
  if (!(GENERATOR_TYPES as readonly string[]).includes(type))
    throw new ConfigError(`--generator must be ${GENERATOR_TYPES.join(', ')}; got ${JSON.stringify(type)}`);
  if ((m.generatorTimeoutMs as number) < 100) throw new ConfigError('--generator-timeout-ms must be at least 100');
  if (type === 'openai') {
    const url = String(m.generatorUrl);
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      throw new ConfigError(
        `--generator openai needs --generator-url, the endpoint's base URL (e.g. http://127.0.0.1:11434); got ${JSON.stringify(url)}`,
      );
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:')
      throw new ConfigError('--generator-url must be an http or https URL');
    if (u.username || u.password)
      throw new ConfigError(
        '--generator-url must not carry credentials; use --generator-api-key (or VIDQ_GENERATOR_API_KEY)',
      );
    if (!m.generatorModel)
      throw new ConfigError(
        '--generator openai needs --generator-model, the model name the endpoint serves (e.g. llama3.1)',
      );
  } else if (type === 'transformers') {
    if (!m.generatorModel)
      throw new ConfigError(
        '--generator transformers needs --generator-model, a model id inside the models directory (or an absolute model folder)',
      );
    if (m.generatorVision)
      throw new ConfigError(
        '--generator-vision works with --generator openai only (the transformers text-generation pipeline reads no images)',
      );
  } else if (m.generatorVision) {
    throw new ConfigError('--generator-vision needs --generator openai');
  }
}

export function describeOptions(): string {
  const lines = [
    '  --config FILE                 JSON config file (default: DATA_DIR/config.json if present)  [VIDQ_CONFIG]',
  ];
  for (const o of OPTIONS) {
    const arg = o.kind === 'bool' ? ` | --no-${o.flag}` : o.kind === 'int' ? ' N' : ' VALUE';
    const def = (DEFAULTS as Record<string, unknown>)[o.key];
    lines.push(`  --${(o.flag + arg).padEnd(28)} ${o.help} (default: ${JSON.stringify(def)})  [${o.env}]`);
  }
  return lines.join('\n');
}

/**
 * The Host names the HTTP server answers to (lower case, no port, IPv6 without brackets), or null
 * for any. By default the loopback names and the bound address: a page on another site that
 * rebinds its own name to 127.0.0.1 still sends its own name, and is refused.
 */
export function allowedHostNames(c: Pick<Config, 'allowedHosts' | 'host'>): Set<string> | null {
  const listed = c.allowedHosts
    .split(',')
    .map((h) =>
      h
        .trim()
        .toLowerCase()
        .replace(/^\[|\]$/g, ''),
    )
    .filter(Boolean);
  if (listed.includes('*')) return null;
  if (listed.length) return new Set(listed);
  const names = new Set(['localhost', '127.0.0.1', '::1']);
  const bound = c.host.toLowerCase().replace(/^\[|\]$/g, '');
  if (bound !== '0.0.0.0' && bound !== '::') names.add(bound);
  return names;
}

export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\./.test(host);
}
