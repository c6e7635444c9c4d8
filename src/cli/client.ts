/**
 * The command line as a client of a running service (`vidq add`, `vidq ask`, `vidq search`,
 * `vidq ls`): unlike the
 * admin commands these go over HTTP, so they work against any vidq, local or not, with a token.
 *
 * Server: --server, else VIDQ_SERVER, else http://<--host>:<--port> of the config (127.0.0.1:8420).
 * Token: --token, else VIDQ_TOKEN, else DATA_DIR/default-token.txt.
 */
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, extname, join, relative, resolve } from 'node:path';
import cliProgress from 'cli-progress';
import { clientEnv, type Config } from '../config';
import { stripControls } from '../util/text';

/** Extensions `vidq add DIR` picks up (a file named explicitly is always sent). */
const VIDEO_EXTENSIONS = new Set([
  '.mp4',
  '.m4v',
  '.mov',
  '.mkv',
  '.webm',
  '.avi',
  '.wmv',
  '.flv',
  '.mpg',
  '.mpeg',
  '.ts',
  '.mts',
  '.m2ts',
  '.3gp',
  '.ogv',
]);
/** How often the analysis of added videos is polled. */
const POLL_MS = 1000;
/** A request's answer must begin (and a JSON answer end) within this. */
const REQUEST_TIMEOUT_MS = 30_000;
/** An event stream (an upload's progress, an answer) may be silent this long. */
const STREAM_IDLE_MS = 5 * 60_000;
/** Largest JSON answer read (a listing of thousands of videos is a few MB). */
const MAX_JSON_BYTES = 64 << 20;
/** Largest single server-sent event (an answer with its evidence is a few kB). */
const MAX_EVENT_BYTES = 1 << 20;

/** An error shown to the user as one line: whatever a server sent, no terminal controls in it. */
export class ClientError extends Error {
  constructor(message: string) {
    super(stripControls(message).replace(/\s*\n\s*/g, ' '));
  }
}

export interface ClientOptions {
  server: string;
  token: string;
  /** Where lines go (tests pass their own); progress bars only when it is a terminal. */
  out?: NodeJS.WriteStream;
  /** See REQUEST_TIMEOUT_MS and STREAM_IDLE_MS (tests shorten them). */
  timeoutMs?: number;
  idleMs?: number;
}

/** Writes text that came from a server: escape sequences and control characters removed (issue 25). */
function say(out: NodeJS.WritableStream, text: string): void {
  out.write(stripControls(text));
}

export function clientOptions(
  v: Record<string, string | boolean | undefined>,
  config: Config,
  env: Record<string, string | undefined> = clientEnv(),
): ClientOptions {
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  const server = (
    typeof v.server === 'string'
      ? v.server
      : env.VIDQ_SERVER || `http://${host.includes(':') ? `[${host}]` : host}:${config.port}`
  ).replace(/\/+$/, '');
  try {
    const u = new URL(server);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
  } catch {
    throw new ClientError(`--server must be an http(s) URL, got ${JSON.stringify(server)}`);
  }
  let token = typeof v.token === 'string' ? v.token : env.VIDQ_TOKEN;
  if (!token) {
    const file = join(config.dataDir, 'default-token.txt');
    if (!existsSync(file))
      throw new ClientError(
        `no token: pass --token, set VIDQ_TOKEN, or run on the server's machine (${file} is missing)`,
      );
    token = readFileSync(file, 'utf8').trim();
  }
  return { server, token };
}

/**
 * One request to the service: the token as a header (never in the URL), no redirects followed (a
 * token must not go along to another origin), and the answer's head within the timeout. The
 * returned `done` ends the request's timer once its body has been read.
 */
async function api(o: ClientOptions, path: string, init: RequestInit = {}): Promise<Response> {
  const timeoutMs = o.timeoutMs ?? REQUEST_TIMEOUT_MS;
  const ctrl = new AbortController();
  const timer = setTimeout(() => ctrl.abort(), timeoutMs);
  let res: Response;
  try {
    res = await fetch(o.server + path, {
      ...init,
      redirect: 'manual',
      signal: ctrl.signal,
      headers: { authorization: `Bearer ${o.token}`, ...(init.headers as Record<string, string>) },
    });
  } catch (e) {
    throw new ClientError(
      ctrl.signal.aborted
        ? `the service at ${o.server} did not answer within ${timeoutMs / 1000} s`
        : `cannot reach the service at ${o.server} (${(e as Error).message}); is \`vidq serve\` running?`,
    );
  } finally {
    clearTimeout(timer);
  }
  if (res.status >= 300 && res.status < 400) {
    await res.body?.cancel().catch(() => {});
    const to = res.headers.get('location');
    let where = 'elsewhere';
    try {
      if (to) where = new URL(to, o.server).origin;
    } catch {}
    throw new ClientError(
      `the service at ${o.server} redirected to ${where}; the token is not sent there: pass that address as --server if you trust it`,
    );
  }
  return res;
}

/** A JSON answer, read within the timeout and at most MAX_JSON_BYTES; null when it is not JSON. */
async function readJson(o: ClientOptions, res: Response): Promise<unknown> {
  if (!res.body) return null;
  const timeoutMs = o.timeoutMs ?? REQUEST_TIMEOUT_MS;
  const reader = res.body.getReader();
  const timer = setTimeout(() => void reader.cancel().catch(() => {}), timeoutMs);
  const chunks: Uint8Array[] = [];
  let size = 0;
  let timedOut = true;
  try {
    for (;;) {
      const r = await reader.read();
      if (r.done) {
        timedOut = false;
        break;
      }
      size += r.value.byteLength;
      if (size > MAX_JSON_BYTES) {
        await reader.cancel().catch(() => {});
        throw new ClientError(`the service's answer is larger than ${MAX_JSON_BYTES} bytes; stopped reading it`);
      }
      chunks.push(r.value);
    }
  } catch (e) {
    if (e instanceof ClientError) throw e;
    throw new ClientError(`the service's answer was cut off (${(e as Error).message})`);
  } finally {
    clearTimeout(timer);
  }
  if (timedOut) throw new ClientError(`the service's answer did not arrive within ${timeoutMs / 1000} s`);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return null;
  }
}

async function apiJson<T>(o: ClientOptions, path: string, init: RequestInit = {}): Promise<T> {
  const res = await api(o, path, init);
  const body = (await readJson(o, res)) as any;
  if (!res.ok)
    throw new ClientError(
      typeof body?.message === 'string' ? `${body.message} (HTTP ${res.status})` : `HTTP ${res.status}`,
    );
  if (body === null) throw new ClientError(`the service's answer is not JSON (HTTP ${res.status})`);
  return body as T;
}

/** The message of an error answer (JSON `{error, message}`), else its status. */
async function errorOf(o: ClientOptions, res: Response): Promise<string> {
  const body = (await readJson(o, res).catch(() => null)) as any;
  return typeof body?.message === 'string' ? body.message : `HTTP ${res.status}`;
}

interface IndexRow {
  index_id: string;
  name: string;
  count: number;
  total_duration: number;
  deleted: boolean;
}
interface ResourceRow {
  file_id: string;
  file_name: string;
  status: string;
  progress: number;
  stage?: string;
  error?: string;
  metadata: { duration?: number; sha256?: string };
}

/** Extensions of audio files, named as such when a folder's walk leaves them out. */
const AUDIO_EXTENSIONS = new Set(['.wav', '.mp3', '.m4a', '.aac', '.flac', '.ogg', '.opus', '.wma', '.aiff']);

export interface Sources {
  sources: { kind: 'url' | 'file'; ref: string }[];
  /** Files a folder held that are not sent, each with the reason (shown to the user). */
  skipped: { path: string; reason: string }[];
}

/** Files named on the command line, folders expanded recursively (videos only), URLs as given. */
export function expandSources(args: string[]): Sources {
  const out: Sources = { sources: [], skipped: [] };
  const walk = (root: string, dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = join(dir, e.name);
      const ext = extname(e.name).toLowerCase();
      // Hidden folders (.git, caches) are not walked, and said so once; hidden files likewise.
      if (e.name.startsWith('.')) out.skipped.push({ path: relative(root, p), reason: 'hidden' });
      else if (e.isDirectory()) walk(root, p);
      else if (e.isFile() && VIDEO_EXTENSIONS.has(ext)) out.sources.push({ kind: 'file', ref: p });
      else
        out.skipped.push({
          path: relative(root, p) || e.name,
          reason: !e.isFile()
            ? 'not a regular file'
            : AUDIO_EXTENSIONS.has(ext)
              ? 'an audio file: vidq indexes videos (a file without a video stream is refused)'
              : `not a video file (${ext || 'no extension'}); name it on the command line to send it anyway`,
        });
    }
  };
  for (const a of args) {
    if (/^https?:\/\//i.test(a)) out.sources.push({ kind: 'url', ref: a });
    else if (!existsSync(a))
      throw new ClientError(`${a}: no such file or folder (URLs start with http:// or https://)`);
    else if (statSync(a).isDirectory()) walk(dirname(resolve(a)), resolve(a));
    else out.sources.push({ kind: 'file', ref: resolve(a) });
  }
  return out;
}

/** Most skipped files named one by one; the rest are counted. */
const SKIPPED_SHOWN = 20;

async function sha256File(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest('hex');
}

/** One line per file: a bar on a terminal, plain lines (on each change of stage) otherwise. */
class Progress {
  private readonly multi: cliProgress.MultiBar | null;
  private readonly bars = new Map<string, cliProgress.SingleBar>();
  private readonly lastStage = new Map<string, string>();
  private readonly started = new Map<string, number>();

  constructor(private readonly out: NodeJS.WriteStream) {
    this.multi = out.isTTY
      ? new cliProgress.MultiBar(
          {
            stream: out,
            format: '{name} [{bar}] {percentage}% {stage} {detail} ETA {eta_formatted}',
            barsize: 16,
            hideCursor: true,
            clearOnComplete: false,
            etaBuffer: 20,
            autopadding: true,
          },
          cliProgress.Presets.shades_classic,
        )
      : null;
  }

  add(name: string): void {
    this.started.set(name, Date.now());
    this.bars.set(
      name,
      this.multi?.create(100, 0, { name: short(name), stage: 'waiting', detail: '' }) as cliProgress.SingleBar,
    );
  }

  update(name: string, rawStage: string, percentage: number, rawDetail = ''): void {
    // Stages and details can come from the server: shown without terminal controls.
    const stage = stripControls(rawStage);
    const detail = stripControls(rawDetail);
    const bar = this.bars.get(name);
    if (bar) {
      // Each stage has its own ETA: restart the bar's clock when the stage changes.
      if (this.lastStage.get(name) !== stage) bar.start(100, 0, { name: short(name), stage, detail });
      bar.update(Math.max(0, Math.min(100, Math.round(percentage))), { stage, detail });
    } else if (this.lastStage.get(name) !== stage) {
      this.out.write(`${name}: ${stage}${detail ? ` ${detail}` : ''}\n`);
    }
    this.lastStage.set(name, stage);
  }

  done(name: string, rawLine: string): void {
    const line = stripControls(rawLine);
    const bar = this.bars.get(name);
    if (bar) {
      bar.update(100, { stage: line, detail: '' });
      bar.stop();
    } else this.out.write(`${name}: ${line}\n`);
    this.lastStage.set(name, 'done');
  }

  stop(): void {
    this.multi?.stop();
  }
}

const short = (name: string) => (name.length > 24 ? '…' + name.slice(-23) : name.padEnd(24));
const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;

/**
 * Reads a server-sent-event response, calling `on` with each `data:` object. Each event is at most
 * MAX_EVENT_BYTES, the stream may be silent at most the idle limit, and an event that is not JSON
 * is a readable error (not a crash).
 */
async function readEvents(o: ClientOptions, res: Response, on: (e: any) => void): Promise<void> {
  if (!res.body) return;
  const idleMs = o.idleMs ?? STREAM_IDLE_MS;
  const reader = res.body.getReader();
  let idle = false;
  let timer = setTimeout(() => {}, 0);
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      idle = true;
      void reader.cancel().catch(() => {});
    }, idleMs);
  };
  const dec = new TextDecoder();
  let buf = '';
  try {
    arm();
    for (;;) {
      let r: { done: boolean; value?: Uint8Array };
      try {
        r = await reader.read();
      } catch (e) {
        throw new ClientError(`the service's event stream was cut off (${(e as Error).message})`);
      }
      if (idle) throw new ClientError(`the service sent nothing for ${idleMs / 1000} s; gave up waiting`);
      if (r.done) break;
      arm();
      buf += dec.decode(r.value, { stream: true });
      let i: number;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const line = block.split('\n').find((l) => l.startsWith('data: '));
        if (!line) continue;
        let event: unknown;
        try {
          event = JSON.parse(line.slice(6));
        } catch {
          throw new ClientError('the service sent an event that is not JSON; is --server a vidq service?');
        }
        on(event);
      }
      if (buf.length > MAX_EVENT_BYTES) {
        await reader.cancel().catch(() => {});
        throw new ClientError(`the service sent an event larger than ${MAX_EVENT_BYTES} bytes; stopped reading`);
      }
    }
  } finally {
    clearTimeout(timer);
  }
}

/**
 * vidq add: sends every source (files streamed as the raw body of POST /upload, URLs through
 * /remote-upload), then follows the analysis of what was stored. Returns the exit code: 0 when
 * every source ended ready (or was already in the index), 1 otherwise, with the reason per file.
 */
export async function addCommand(o: ClientOptions, index: string, args: string[]): Promise<number> {
  const out = o.out ?? process.stdout;
  if (args.length === 0) throw new ClientError('name at least one file, folder or URL to add');
  const { sources, skipped } = expandSources(args);
  // Said before anything is sent: a file left out is never a silent surprise.
  for (const s of skipped.slice(0, SKIPPED_SHOWN)) say(out, `${s.path}: skipped, ${s.reason}\n`);
  if (skipped.length > SKIPPED_SHOWN)
    out.write(`… and ${skipped.length - SKIPPED_SHOWN} more files skipped (not videos)\n`);
  if (sources.length === 0) {
    out.write('no video files found\n');
    return 0;
  }
  // Skip files whose bytes the index already has (the listing carries each stored file's sha256).
  const known = new Map<string, ResourceRow>();
  const existing = await api(o, `/index-resources?index=${encodeURIComponent(index)}`);
  if (existing.ok) {
    const rows = await readJson(o, existing);
    if (!Array.isArray(rows)) throw new ClientError("cannot list the index: the service's answer is not a listing");
    for (const r of rows as ResourceRow[])
      if (r?.metadata?.sha256 && r.status !== 'failed') known.set(r.metadata.sha256, r);
  } else if (existing.status !== 404) {
    throw new ClientError(`cannot list the index: ${await errorOf(o, existing)}`);
  }

  const progress = new Progress(out);
  const failures: string[] = [];
  const watching = new Map<string, string>(); // file_id → display name
  for (const s of sources) progress.add(s.kind === 'file' ? basename(s.ref) : s.ref);
  for (const s of sources) {
    const name = s.kind === 'file' ? basename(s.ref) : s.ref;
    try {
      if (s.kind === 'file') {
        progress.update(name, 'hashing', 0);
        const twin = known.get(await sha256File(s.ref));
        if (twin) {
          progress.done(name, `already in the index as ${twin.file_id} (${twin.status}), skipped`);
          continue;
        }
      }
      const key = await sendOne(o, index, s, name, progress);
      watching.set(key, name);
    } catch (e) {
      failures.push(`${name}: ${(e as Error).message}`);
      progress.done(name, `failed: ${(e as Error).message}`);
    }
  }
  // Follow the analysis of what was stored until each is ready or failed.
  const seen = new Map<string, number>();
  while (watching.size) {
    const res = await api(o, `/index-resources?index=${encodeURIComponent(index)}`);
    if (!res.ok) throw new ClientError(`cannot follow the analysis: ${await errorOf(o, res)}`);
    const listing = await readJson(o, res);
    if (!Array.isArray(listing))
      throw new ClientError("cannot follow the analysis: the service's answer is not a listing");
    const rows = new Map((listing as ResourceRow[]).map((r) => [r.file_id, r]));
    for (const [key, name] of [...watching]) {
      const r = rows.get(key);
      if (!r) {
        failures.push(`${name}: removed from the index during its analysis`);
        progress.done(name, 'removed');
        watching.delete(key);
      } else if (r.status === 'ready') {
        progress.done(name, `ready (${key})`);
        watching.delete(key);
      } else if (r.status === 'failed') {
        failures.push(`${name}: ${r.error ?? 'the analysis failed'}`);
        progress.done(name, `failed: ${r.error ?? 'the analysis failed'}`);
        watching.delete(key);
      } else {
        if (!seen.has(key)) seen.set(key, Date.now());
        progress.update(name, `analysing${r.stage ? ': ' + r.stage : ''}`, r.progress ?? 0);
      }
    }
    if (watching.size) await Bun.sleep(POLL_MS);
  }
  progress.stop();
  if (failures.length) {
    say(
      process.stderr,
      `${failures.length} of ${sources.length} failed:\n${failures.map((f) => `  ${f.replace(/\n/g, ' ')}`).join('\n')}\n`,
    );
    return 1;
  }
  return 0;
}

/** Uploads one source with its event stream; returns the stored file_id. */
async function sendOne(
  o: ClientOptions,
  index: string,
  s: { kind: 'url' | 'file'; ref: string },
  name: string,
  progress: Progress,
): Promise<string> {
  const res =
    s.kind === 'file'
      ? await api(o, `/upload?index=${encodeURIComponent(index)}&file_name=${encodeURIComponent(name)}`, {
          method: 'POST',
          headers: { accept: 'text/event-stream', 'content-type': 'application/octet-stream' },
          body: Bun.file(s.ref),
        })
      : await api(o, '/remote-upload', {
          method: 'POST',
          headers: { accept: 'text/event-stream', 'content-type': 'application/json' },
          body: JSON.stringify({ index, url: s.ref }),
        });
  if (!(res.headers.get('content-type') ?? '').includes('text/event-stream'))
    throw new ClientError(await errorOf(o, res));
  let key: string | null = null;
  let error: string | null = null;
  let duplicate = false;
  await readEvents(o, res, (e) => {
    if (e.type === 'progress')
      progress.update(
        name,
        e.stage,
        e.percentage,
        e.total_bytes ? `${mb(e.bytes)} of ${mb(e.total_bytes)}` : mb(e.bytes),
      );
    else if (e.type === 'complete') {
      key = e.key;
      duplicate = e.duplicate;
    } else if (e.type === 'error') error = e.message;
  });
  if (error) throw new ClientError(error);
  if (!key) throw new ClientError('the service closed the upload without an answer');
  if (duplicate) progress.update(name, 'already in the index', 100, key);
  return key;
}

/** vidq ls: the user's indexes, or one index's videos with their status. */
export async function lsCommand(o: ClientOptions, index: string | undefined): Promise<number> {
  const out = o.out ?? process.stdout;
  if (index === undefined) {
    const rows = await apiJson<IndexRow[]>(o, '/indexes');
    if (!rows.length) out.write('no indexes yet; add a video with: vidq add FILE --index NAME\n');
    for (const r of rows)
      say(
        out,
        `${oneLine(r.name)}\t${r.count} video${r.count === 1 ? '' : 's'}\t${fmtTime(r.total_duration)}\t${oneLine(r.index_id)}\n`,
      );
    return 0;
  }
  const rows = await apiJson<ResourceRow[]>(o, `/index-resources?index=${encodeURIComponent(index)}`);
  if (!rows.length) out.write('no videos in this index\n');
  for (const r of rows) {
    const status = r.status === 'processing' ? `processing${r.stage ? ` (${r.stage} ${r.progress}%)` : ''}` : r.status;
    say(
      out,
      `${oneLine(r.file_id)}\t${oneLine(r.file_name)}\t${r.metadata?.duration !== undefined ? fmtTime(r.metadata.duration) : '-'}\t${oneLine(status)}${r.error ? `: ${oneLine(r.error)}` : ''}\n`,
    );
  }
  return 0;
}

/** vidq ask: streams the answer of /inquire-stream, then its cited moments. */
export async function askCommand(
  o: ClientOptions,
  index: string,
  question: string,
  opts: { video?: string; at?: string },
): Promise<number> {
  const out = o.out ?? process.stdout;
  if (!question.trim())
    throw new ClientError('ask needs a question, e.g. vidq ask --index NAME "what is written on screen?"');
  const indexId = await resolveIndexId(o, index);
  const res = await api(o, '/inquire-stream', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({
      index: indexId,
      prompt: question,
      ...(opts.video && { target_video: opts.video }),
      ...(opts.at && { target: opts.at }),
    }),
  });
  if (!(res.headers.get('content-type') ?? '').includes('text/event-stream'))
    throw new ClientError(await errorOf(o, res));
  let evidence: { video_id: string; file_name: string; start: number; end: number; kind: string; text: string }[] = [];
  let failed: string | null = null;
  let written = '';
  await readEvents(o, res, (e) => {
    if (e.type === 'evidence') evidence = Array.isArray(e.evidence) ? e.evidence : [];
    else if (e.type === 'token') {
      written += e.text;
      say(out, String(e.text));
    } else if (e.type === 'reset') {
      // The streamed text was voided (a model's unchecked claim): the composed answer follows.
      out.write(out.isTTY ? '\n[the answer is rewritten]\n' : '\n');
      written = '';
    } else if (e.type === 'complete') {
      if (!written) say(out, String(e.output));
    } else if (e.type === 'error') failed = e.message;
  });
  out.write('\n');
  if (failed) throw new ClientError(failed);
  if (evidence.length) {
    out.write('\nmoments:\n');
    for (const ev of evidence.slice(0, 10))
      say(
        out,
        `  ${oneLine(ev.file_name)} ${fmtTime(ev.start)}–${fmtTime(ev.end)} [${oneLine(ev.kind)}] ${oneLine(ev.text).slice(0, 100)}\n`,
      );
  }
  return 0;
}

interface SearchMoment {
  file_name: string;
  start: number;
  end: number;
  kind: string;
  text: string;
  relevance: number;
}
interface SearchPage {
  moments: SearchMoment[];
  total: number;
  next_offset: number | null;
  weak_only: boolean;
}

/** vidq search: the moments of GET /search, one line each as `ask` shows its cited moments. */
export async function searchCommand(
  o: ClientOptions,
  index: string,
  words: string,
  opts: { video?: string; kinds?: string; limit?: string; offset?: string },
): Promise<number> {
  const out = o.out ?? process.stdout;
  if (!words.trim()) throw new ClientError('search needs words, e.g. vidq search --index NAME "red umbrella"');
  const q = new URLSearchParams({ index, q: words });
  if (opts.video) q.set('video', opts.video);
  if (opts.kinds) q.set('kinds', opts.kinds);
  if (opts.limit) q.set('limit', opts.limit);
  if (opts.offset) q.set('offset', opts.offset);
  const page = await apiJson<SearchPage>(o, `/search?${q}`);
  if (!page.moments.length) {
    out.write('no moments found\n');
    return 0;
  }
  out.write(page.weak_only ? 'moments (none matches clearly; the closest):\n' : 'moments:\n');
  for (const m of page.moments)
    say(
      out,
      `  ${oneLine(m.file_name)} ${fmtTime(m.start)}–${fmtTime(m.end)} [${oneLine(m.kind)}] ${oneLine(m.text).slice(0, 100)}\n`,
    );
  if (page.next_offset !== null)
    out.write(`${page.moments.length} of ${page.total}; more with --offset ${page.next_offset}\n`);
  return 0;
}

async function resolveIndexId(o: ClientOptions, index: string): Promise<string> {
  const rows = await apiJson<IndexRow[]>(o, '/indexes');
  const hit = rows.find((r) => r.index_id === index) ?? rows.find((r) => r.name === index);
  if (!hit) throw new ClientError(`no index named ${JSON.stringify(index)}; see vidq ls`);
  return hit.index_id;
}

/** A server's value on one line of a listing: controls removed, whitespace runs as one space. */
const oneLine = (v: unknown) => stripControls(String(v ?? '')).replace(/\s+/g, ' ');

/** 83.5 → "1:23", 3725 → "1:02:05". */
export function fmtTime(sec: number): string {
  const s = Math.floor(sec);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}
