/**
 * The one typed configuration of the service, and the only module that reads the environment.
 *
 * Precedence: command-line flags > environment (VIDQ_*) > config file (JSON) > defaults.
 *
 * Everything comes from ONE declaration: GENERAL (flat options), the analyzers' own options (each
 * declared in its descriptor, src/analysis/analyzers.ts) and ENGINES (one section per model engine,
 * told apart by its `type`, Frigate-style, each declared with its engine). From it come the `Config` type, the defaults, the
 * flags and their `--help` lines, the environment variables (VIDQ_ + the flag) and the config-file
 * keys. An engine's options keep their flat flags (`--generator-url`), which fill its section
 * (`config.generator.url`); the file takes either the flat keys or the section
 * (`"generator": {"type": "openai", "url": …, "model": …}`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { ANALYZER_NAMES, ANALYZERS, unknownAnalyzers } from './analysis/analyzers';
import { GENERATOR_ENGINE } from './answering/generate/options';
import { WHISPER_MODEL } from './analysis/engines/stt';
import { LOG_LEVELS, type LogLevel } from './log';
import {
  bool,
  ConfigError,
  type Engine,
  type EngineConfig,
  type EngineTypes,
  GiB,
  idOf,
  int,
  MiB,
  nameOf,
  type Option,
  oneOf,
  redactUrl,
  serverUrl,
  type Simplify,
  text,
  type Values,
} from './options';

export { ConfigError, redactUrl };
export type { LogLevel };

// --- The declaration ---

function httpUrlCheck(v: string): string | undefined {
  let u: URL | null = null;
  try {
    u = new URL(v);
  } catch {}
  if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:') || u.username || u.password)
    return 'must be an http(s) URL without credentials';
}

/** A PostgreSQL URL with a host and a database name (it may carry credentials: they never reach a log). */
function databaseUrlCheck(v: string): string | undefined {
  let u: URL | null = null;
  try {
    u = new URL(v);
  } catch {}
  if (!u || (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:'))
    return `must be a postgres:// URL, e.g. postgres://vidq@db.example:5432/vidq; got ${JSON.stringify(redactUrl(v))}`;
  if (!u.hostname) return 'must name the database host (postgres://HOST[:PORT]/DATABASE)';
  if (u.pathname.length < 2 || u.pathname.slice(1).includes('/'))
    return 'must name one database (postgres://HOST[:PORT]/DATABASE)';
}

/** The flat options. The help line is also the field's documentation; docs/configuration.md explains more. */
const GENERAL = {
  // Loopback by default, so nothing is exposed by accident.
  host: text('host', '127.0.0.1', 'address to bind'),
  port: int('port', 8420, 'TCP port (0 = any free port)', { max: 65535 }),
  dataDir: text('data-dir', join(homedir(), '.vidq'), 'data directory (database, media, secrets)'),
  // More machines (issue 33): a shared media folder and the catalog on a database server.
  mediaDir: text(
    'media-dir',
    '',
    'folder of originals, playback copies and frames; may be a shared mount (default DATA_DIR)',
  ),
  database: {
    ...text(
      'database',
      '',
      'catalog database URL: postgres://… (default: the SQLite file in DATA_DIR)',
      databaseUrlCheck,
    ),
    env: 'VIDQ_DATABASE_URL',
  },
  allowPrivateUrls: bool('allow-private-urls', false, 'let the downloader fetch loopback/private/link-local addresses'),
  maxDownloadBytes: int('max-download-bytes', 10 * GiB, 'largest downloadable file in bytes (413 above)'),
  connectTimeoutMs: int('connect-timeout-ms', 15_000, 'connect + response-headers timeout per hop (ms)'),
  idleTimeoutMs: int('idle-timeout-ms', 30_000, 'longest pause between download chunks (ms)'),
  maxRedirects: int('max-redirects', 5, 'redirects followed per download (every hop is checked again)'),
  maxDurationSec: int('max-duration-sec', 86_400, 'longest accepted media duration (s; 422 above)'),
  largeFileBytes: int('large-file-bytes', 500 * MiB, 'size above which a resource is is_large'),
  inquireCost: int('inquire-cost', 1, 'credits charged per /inquire'),
  defaultCredits: int('default-credits', 100, 'credits of a new user created without --credits'),
  anonymousListingOnLoopback: bool(
    'anonymous-listing',
    true,
    'answer GET /indexes without a token when bound to loopback',
  ),
  mediaLinkTtlSec: int('media-link-ttl-sec', 86_400, 'lifetime of signed media links (s)'),
  uploadUrlTtlSec: int(
    'upload-url-ttl-sec',
    3600,
    'lifetime of the signed upload URLs of POST /api-pre-upload (s; the PUT must start before)',
  ),
  purgeAfterDays: int('purge-after-days', 7, 'days before a deleted index is purged (rows and files)'),
  stuckAfterMinutes: int('stuck-after-minutes', 120, 'minutes before an unfinished resource is failed'),
  maintenanceCron: text('maintenance-cron', '*/5 * * * *', 'cron pattern of the maintenance job'),
  // An /inquire at its 8000+8000-character limits, \u-escaped, is ~97 kB.
  maxBodyBytes: int('max-body-bytes', 128 * 1024, 'largest request body (bytes)'),
  // A full-HD PNG is 2–6 MB, a third more as base64.
  maxImageBodyBytes: int(
    'max-image-body-bytes',
    24 * MiB,
    'largest request body of the endpoints that take an image (POST /search, /core/search; bytes)',
  ),
  webhookUrl: text(
    'webhook-url',
    '',
    'default webhook URL for video.ready/failed/removed events (an index can set its own)',
    httpUrlCheck,
  ),
  webhookRetryMs: int(
    'webhook-retry-ms',
    5000,
    'first retry delay of a failed webhook (ms; doubles up to 1 h, for 24 h)',
    { min: 100 },
  ),
  maxUploadBytes: int('max-upload-bytes', 0, 'largest file sent to POST /upload (bytes; 0 = --max-download-bytes)'),
  minFreeBytes: int('min-free-bytes', 1 * GiB, 'refuse uploads below this much free disk (bytes)'),
  analysisWorkers: int('analysis-workers', 1, 'analysis worker processes (0 = no analysis)'),
  // A short video is not stuck behind a long one.
  shortLaneSec: int(
    'short-lane-sec',
    120,
    "videos up to N s may use a worker's second job slot (same models) while its first is busy (0 = off)",
  ),
  maxAnalysesPerUser: int('max-analyses-per-user', 0, 'analyses of one user at once (0 = no cap)'),
  // Gives a worker's memory back.
  workerRecycleSec: int('worker-recycle-sec', 600, 'restart a worker after a video of N s or longer (0 = never)'),
  workerIdleReleaseSec: int(
    'worker-idle-release-sec',
    60,
    'a worker idle N s after a video restarts without its models (0 = never)',
  ),
  analyzers: text(
    'analyzers',
    ANALYZER_NAMES.join(','),
    'analyzers to run, comma-separated (captions run when --captioner is set)',
    unknownAnalyzers,
  ),
  liveMaxStreamsPerUser: int('live-max-streams-per-user', 4, 'live streams one user may run at once'),
  liveMaxFpsPerUser: int('live-max-fps-per-user', 4, 'analysed frames per second all streams of a user may add up to'),
  liveMaxKeptStreamsPerUser: int(
    'live-max-kept-streams-per-user',
    32,
    'live streams one user may keep, stopped ones included, until their resources are removed',
  ),
  liveFps: int('live-fps', 1, 'analysed frames per second of a stream that asks for none'),
  liveRetentionSec: int('live-retention-sec', 86_400, 'seconds of a live recording (and its frames and segments) kept'),
  liveStallSec: int('live-stall-sec', 15, 'seconds without a frame after which a pulled source is reconnected'),
  liveSegmentSec: int('live-segment-sec', 4, 'seconds of one live recording segment'),
  modelsDir: text('models-dir', '', 'local model directory, Hugging Face layout (default DATA_DIR/models)'),
  logLevel: oneOf('log-level', LOG_LEVELS, 'info', 'error | warn | info | debug'),
  // Shared by every model-server client (captioner, stt, embedder) of a process.
  modelTimeoutMs: int('model-timeout-ms', 60_000, 'longest one model-server request may take (ms)', { min: 100 }),
  modelConcurrency: int('model-concurrency', 4, 'model-server requests in flight at once, across all videos', {
    min: 1,
    max: 256,
  }),
  modelRetries: int('model-retries', 2, 'retries of a failed model-server request (with backoff)', { max: 10 }),
  ollama: serverUrl(
    'ollama',
    'Ollama base URL: pick captioner, generator and embedder from its installed models (unless set)',
    'the key variables',
  ),
  // Abuse and fairness limits (docs/limits.md); 0 turns a limit off.
  allowedHosts: text(
    'allowed-hosts',
    '',
    'Host names the server answers to, comma-separated ("*" = any; default: loopback names and --host)',
  ),
  publicUrl: text(
    'public-url',
    '',
    'base URL of absolute links (default: http://<allowed Host of the request>)',
    (v) =>
      /^https?:\/\/[^/?#\s]+\/?$/i.test(v)
        ? undefined
        : 'must be an http(s) base URL without a path, e.g. https://vidq.example',
  ),
  downloadDeadlineMs: int('download-deadline-ms', 3_600_000, 'longest a whole download may take (ms)'),
  minDownloadRate: int(
    'min-download-rate',
    16 * 1024,
    'slowest accepted download rate (bytes/s, per idle-timeout window)',
  ),
  maxDownloads: int('max-downloads', 64, 'downloads in flight on the whole server'),
  userMaxDownloads: int('user-max-downloads', 8, 'downloads in flight per user'),
  userMaxStorageBytes: int('user-max-storage-bytes', 200 * GiB, 'stored media bytes per user'),
  userMaxQueued: int('user-max-queued', 50, 'videos per user waiting for or under analysis'),
  analysisSecPerMinute: int(
    'analysis-sec-per-minute',
    120,
    'analysis seconds allowed per minute of video (plus the base)',
  ),
  analysisBudgetBaseSec: int('analysis-budget-base-sec', 600, 'fixed part of the analysis-time budget (s)'),
};

/** The analyzers' flat options (`--frame-interval-sec`), each declared by its analyzer. */
const ANALYZER_OPTIONS = Object.assign({}, ...ANALYZERS.map((a) => a.options)) as Intersection<
  (typeof ANALYZERS)[number]['options']
>;
/** The flat options: the general ones, then the analyzers'. */
const FLAT = { ...GENERAL, ...ANALYZER_OPTIONS };

/**
 * The model engines, each declared with its engine (the answer generator's in answering/generate,
 * an analyzer's in its descriptor). Each type lists the options it takes; `needs` marks those it
 * cannot do without.
 */
const ENGINES = {
  generator: GENERATOR_ENGINE,
  ...(Object.assign({}, ...ANALYZERS.map((a) => a.engines)) as Intersection<(typeof ANALYZERS)[number]['engines']>),
};

type Engines = typeof ENGINES;
export type EngineName = keyof Engines;

export type Config = Simplify<
  Values<typeof FLAT> & { readonly [E in EngineName]: EngineConfig<Engines[E]> } & {
    /** The config file the values were read from, if any. */
    readonly configFile?: string;
  }
>;

/** The defaults of the flat options (engine defaults: each engine's default type, e.g. `generator: {type: 'none'}`). */
export const DEFAULTS = Object.freeze(
  Object.fromEntries(Object.entries(FLAT).map(([k, o]) => [k, o.default])),
) as Values<typeof FLAT>;

/** All members of a union at once (the analyzers' option sections, merged). */
type Intersection<U> = (U extends unknown ? (k: U) => void : never) extends (k: infer I) => void ? I : never;

// --- Derived from the declaration: every option once, flag parsing, help ---

type AnyEngine = Engine<EngineTypes>;
const engineList = () => Object.entries(ENGINES) as unknown as [EngineName, AnyEngine][];

/** Each option once (an option several engine types share, e.g. --whisper-model, is one option). */
const ALL_OPTIONS: Option<unknown>[] = (() => {
  const seen = new Map<string, Option<unknown>>();
  const add = (o: Option<unknown>) => {
    if (!seen.has(idOf(o))) seen.set(idOf(o), o);
  };
  for (const o of Object.values(FLAT) as Option<unknown>[]) add(o);
  for (const [, e] of engineList()) {
    add(e.type);
    for (const fields of Object.values(e.types)) for (const o of Object.values(fields)) add(o);
  }
  return [...seen.values()];
})();

const camel = (flag: string) => flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/** The option a flat config-file key names: the field name, the flag, its camelCase, or an old alias. */
function optionByKey(key: string): Option<unknown> | undefined {
  if (Object.hasOwn(FLAT, key)) return (FLAT as Record<string, Option<unknown>>)[key];
  return ALL_OPTIONS.find((o) => o.flag && (o.flag === key || camel(o.flag) === key || o.aliases?.includes(key)));
}

/** Flags as parsed by util.parseArgs (strings, booleans for switches). */
export type FlagValues = Record<string, string | boolean | undefined>;

/** Options for util.parseArgs, shared by every command that takes the service config. */
export function configParseOptions(): Record<string, { type: 'string' | 'boolean' }> {
  const out: Record<string, { type: 'string' | 'boolean' }> = { config: { type: 'string' } };
  for (const o of ALL_OPTIONS) {
    if (!o.flag) continue;
    out[o.flag] = { type: o.arg === 'switch' ? 'boolean' : 'string' };
    if (o.arg === 'switch') out[`no-${o.flag}`] = { type: 'boolean' };
  }
  return out;
}

/** The `--help` text of the service options, engine options marked with the types that take them. */
export function describeOptions(): string {
  const lines = [
    '  --config FILE                 JSON config file (default: DATA_DIR/config.json if present)  [VIDQ_CONFIG]',
    '                                keys: the option names below, or one section per engine, e.g.',
    '                                {"captioner": {"type": "openai", "url": "http://127.0.0.1:11434", "model": "qwen2.5vl"}}',
  ];
  const line = (o: Option<unknown>, note = '') => {
    const shown = o.secret ? '' : ` (default: ${JSON.stringify(o.default)})`;
    if (!o.flag) return lines.push(`  ${o.env.padEnd(29)} ${o.help}${note} (environment or config file only)`);
    const arg = o.arg === 'switch' ? ` | --no-${o.flag}` : ` ${o.arg}`;
    lines.push(`  --${(o.flag + arg).padEnd(28)} ${o.help}${note}${shown}  [${o.env}]`);
  };
  for (const o of Object.values(FLAT) as Option<unknown>[]) line(o);
  for (const [, e] of engineList()) {
    line(e.type);
    const done = new Set<string>();
    for (const fields of Object.values(e.types))
      for (const o of Object.values(fields)) {
        if (done.has(idOf(o))) continue;
        done.add(idOf(o));
        const takers = Object.keys(e.types).filter((t) => Object.values(e.types[t]!).some((f) => idOf(f) === idOf(o)));
        line(o, takers.length < Object.keys(e.types).length ? ` (with --${e.type.flag} ${takers.join('|')})` : '');
      }
  }
  return lines.join('\n');
}

// --- Loading ---

/** The values set so far, by option id; later layers (file < environment < flags) overwrite earlier ones. */
type Layer = Map<string, unknown>;

/** Values behind each loaded config, so deriveConfig can rebuild an engine with its keys and settings. */
const LAYERS = new WeakMap<object, Layer>();

export function loadConfig(flags: FlagValues = {}, env: Record<string, string | undefined> = process.env): Config {
  const set: Layer = new Map();
  const configFile = (flags.config as string | undefined) ?? env.VIDQ_CONFIG;
  const fileCandidate =
    configFile ?? join(String(flags['data-dir'] ?? env.VIDQ_DATA_DIR ?? GENERAL.dataDir.default), 'config.json');
  if (existsSync(fileCandidate)) {
    let fromFile: unknown;
    try {
      fromFile = JSON.parse(readFileSync(fileCandidate, 'utf8'));
    } catch (e) {
      throw new ConfigError(`config file ${fileCandidate} is not valid JSON: ${(e as Error).message}`);
    }
    if (!isObject(fromFile)) throw new ConfigError(`config file ${fileCandidate} must hold a JSON object`);
    readSections(set, fromFile, `config file ${fileCandidate}:`);
  } else if (configFile) {
    throw new ConfigError(`config file ${configFile} does not exist`);
  }
  for (const o of ALL_OPTIONS) {
    const e = env[o.env];
    if (e !== undefined && e !== '') set.set(idOf(o), o.parse(e, `environment ${o.env}`));
  }
  for (const o of ALL_OPTIONS) {
    if (!o.flag) continue;
    const f = flags[o.flag];
    if (f !== undefined) set.set(idOf(o), o.parse(f, `--${o.flag}`));
    if (o.arg === 'switch' && flags[`no-${o.flag}`] === true) set.set(idOf(o), false);
  }

  const merged: Record<string, unknown> = {};
  for (const [key, o] of Object.entries(FLAT) as [string, Option<unknown>][])
    merged[key] = set.has(idOf(o)) ? set.get(idOf(o)) : o.default;
  for (const [name, e] of engineList()) merged[name] = buildEngine(name, e, set);
  // Uploads share the download cap unless given their own.
  if (merged.maxUploadBytes === 0) merged.maxUploadBytes = merged.maxDownloadBytes;
  merged.dataDir = resolve(String(merged.dataDir).replace(/^~(?=$|\/)/, homedir()));
  merged.mediaDir = merged.mediaDir
    ? resolve(String(merged.mediaDir).replace(/^~(?=$|\/)/, homedir()))
    : merged.dataDir;
  merged.modelsDir = merged.modelsDir ? resolve(String(merged.modelsDir)) : join(merged.dataDir as string, 'models');
  if (configFile || existsSync(fileCandidate)) merged.configFile = fileCandidate;
  const config = Object.freeze(merged) as unknown as Config;
  LAYERS.set(config, set);
  return config;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A config file (or deriveConfig's changes): flat keys, or one section per engine. */
function readSections(set: Layer, from: Record<string, unknown>, where: string): void {
  for (const [k, v] of Object.entries(from)) {
    const eng = engineList().find(([name, e]) => name === k || e.type.aliases?.includes(k));
    if (eng && isObject(v)) {
      readSection(set, eng[0], eng[1], v, where);
      continue;
    }
    const o = optionByKey(k);
    if (!o) throw new ConfigError(`${where} unknown option "${k}"`);
    set.set(idOf(o), o.parse(v, `${where} "${k}"`));
  }
}

/** `{"type": "openai", "url": …}`: the keys are the options of that type (no type: the engine's default type). */
function readSection(set: Layer, name: string, e: AnyEngine, section: Record<string, unknown>, where: string): void {
  const type = section.type === undefined ? e.type.default : e.type.parse(section.type, `${where} "${name}.type"`);
  if (section.type !== undefined) set.set(idOf(e.type), type);
  const fields = e.types[type]!;
  for (const [k, v] of Object.entries(section)) {
    if (k === 'type') continue;
    const o = fields[k];
    if (!o)
      throw new ConfigError(
        `${where} "${name}.${k}" is not an option of ${name} type "${type}" (it takes: ${['type', ...Object.keys(fields)].join(', ')})`,
      );
    set.set(idOf(o), o.parse(v, `${where} "${name}.${k}"`));
  }
}

/** A key stays readable as `section.apiKey` but out of JSON.stringify and inspection (logs, the worker's config). */
function hideKey(section: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(section, key, { get: () => value, enumerable: false });
}

/** One engine's section from the values set: its type's options, checked; keys non-enumerable. */
function buildEngine(name: string, e: AnyEngine, set: Layer): Record<string, unknown> {
  const type = (set.get(idOf(e.type)) as string | undefined) ?? e.type.default;
  const fields = e.types[type]!;
  const section: Record<string, unknown> = { type };
  const pick = `--${e.type.flag} ${type}`;
  for (const [key, o] of Object.entries(fields)) {
    const value = set.has(idOf(o)) ? set.get(idOf(o)) : o.default;
    if (o.need && value === '')
      throw new ConfigError(`${pick} needs ${nameOf(o)} (config file: "${name}.${key}"), ${o.need}`);
    if (o.secret) hideKey(section, key, value);
    else section[key] = value;
  }
  // An option that works with other types only is refused when set, not quietly ignored.
  for (const [other, otherFields] of Object.entries(e.types))
    for (const o of Object.values(otherFields)) {
      if (!o.strict || Object.values(fields).some((f) => idOf(f) === idOf(o))) continue;
      const v = set.get(idOf(o));
      if (v === undefined || v === o.default) continue;
      throw new ConfigError(
        `${nameOf(o)} needs --${e.type.flag} ${other} (it works with ${other} only; the ${name} is "${type}")`,
      );
    }
  return Object.freeze(section);
}

/** Engine sections to change, written as in a config file. */
export type EngineChanges = { [E in EngineName]?: { type: string } & Record<string, unknown> };

/**
 * A copy of `config` with engine sections changed (as in a config file: `{captioner: {type: 'openai',
 * url, model}}`), rebuilt over the values it was loaded from, so keys and other settings carry over.
 */
export function deriveConfig(config: Config, changes: EngineChanges): Config {
  const set: Layer = new Map(LAYERS.get(config) ?? layerOf(config));
  readSections(set, changes as Record<string, unknown>, 'derived config:');
  const next: Record<string, unknown> = { ...config };
  for (const [name, e] of engineList()) next[name] = buildEngine(name, e, set);
  const out = Object.freeze(next) as unknown as Config;
  LAYERS.set(out, set);
  return out;
}

/** The values behind a config that did not come from loadConfig (the worker's, parsed from JSON). */
function layerOf(config: Config): Layer {
  const set: Layer = new Map();
  for (const [name, e] of engineList()) {
    const section = config[name] as Record<string, unknown>;
    set.set(idOf(e.type), section.type);
    for (const [key, o] of Object.entries(e.types[section.type as string] ?? {}))
      if (section[key] !== undefined) set.set(idOf(o), section[key]);
  }
  return set;
}

/** The Whisper model `vidq models pull` fetches: --whisper-model, whichever engine --stt picks. */
export function whisperModelOf(config: Config): string {
  const stt = config.stt;
  if (stt.type === 'auto' || stt.type === 'whisper') return stt.model;
  return (LAYERS.get(config)?.get(idOf(WHISPER_MODEL)) as string | undefined) ?? WHISPER_MODEL.default;
}

/** The engines' keys as environment variables, for the analysis worker (its config travels as JSON, without them). */
export function secretEnv(config: Config): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, e] of engineList()) {
    const section = config[name] as Record<string, unknown>;
    for (const [key, o] of Object.entries(e.types[section.type as string] ?? {}))
      if (o.secret && section[key]) out[o.env] = String(section[key]);
  }
  return out;
}

/** A config parsed from JSON, with the engines' keys put back from the environment (non-enumerable again). */
export function withSecrets(config: Config, env: Record<string, string | undefined> = process.env): Config {
  const next: Record<string, unknown> = { ...config };
  for (const [name, e] of engineList()) {
    const section: Record<string, unknown> = { ...(config[name] as Record<string, unknown>) };
    for (const [key, o] of Object.entries(e.types[section.type as string] ?? {}))
      if (o.secret) hideKey(section, key, env[o.env] ?? '');
    next[name] = Object.freeze(section);
  }
  return Object.freeze(next) as unknown as Config;
}

// --- What only the environment says (read here, so that no other module reads it) ---

/** Paths of ffmpeg/ffprobe to use instead of the system's or the embedded ones (tests, packagers). */
export function toolPathsFromEnv(): { ffmpeg?: string; ffprobe?: string; ignoreSystem: boolean } {
  return {
    ffmpeg: process.env.VIDQ_FFMPEG || undefined,
    ffprobe: process.env.VIDQ_FFPROBE || undefined,
    ignoreSystem: process.env.VIDQ_IGNORE_SYSTEM_FFMPEG === '1',
  };
}

/** Another Silero VAD file (the compiled executable points it at its extracted copy). */
export function vadModelFromEnv(): string | undefined {
  return process.env.VIDQ_VAD_MODEL || undefined;
}

/** The Hugging Face hub `vidq models pull` downloads from: HF_ENDPOINT and HF_TOKEN, as the hub's own tools read them. */
export function hubFromEnv(): { endpoint?: string; token?: string } {
  return { endpoint: process.env.HF_ENDPOINT || undefined, token: process.env.HF_TOKEN || undefined };
}

/** VIDQ_SERVER and VIDQ_TOKEN, read by the client commands (add, ask, ls, mcp). */
export function clientEnv(): Record<string, string | undefined> {
  return { VIDQ_SERVER: process.env.VIDQ_SERVER, VIDQ_TOKEN: process.env.VIDQ_TOKEN };
}

/**
 * A child's environment: ours without any inherited proxy setting (so nothing exempts a host from
 * a checking proxy), and with `http_proxy` set to `proxy` when one is given.
 */
export function proxiedChildEnv(proxy: string | undefined): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env };
  for (const k of ['http_proxy', 'HTTP_PROXY', 'https_proxy', 'HTTPS_PROXY', 'no_proxy', 'NO_PROXY']) delete env[k];
  if (proxy) env.http_proxy = proxy;
  return env;
}

const WORKER_CONFIG_ENV = 'VIDQ_WORKER_CONFIG';
const WORKER_TAG_ENV = 'VIDQ_WORKER_TAG';

/**
 * The environment of an analysis worker: ours, plus its config as JSON and the engines' keys beside
 * it, and its supervisor's tag (the middle of its job slots' ids, see jobs/supervisor.ts).
 */
export function workerEnv(config: Config, tag: string): Record<string, string | undefined> {
  return {
    ...process.env,
    ...secretEnv(config),
    [WORKER_CONFIG_ENV]: JSON.stringify(config),
    [WORKER_TAG_ENV]: tag,
  };
}

/** In an analysis worker: the tag its supervisor gave it, or undefined. */
export function inheritedWorkerTag(): string | undefined {
  return process.env[WORKER_TAG_ENV] || undefined;
}

/** In an analysis worker: the config its server handed over (keys from the environment), or null. */
export function inheritedWorkerConfig(): Config | null {
  const inherited = process.env[WORKER_CONFIG_ENV];
  return inherited ? withSecrets(JSON.parse(inherited) as Config) : null;
}

// --- Helpers on a loaded config ---

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
