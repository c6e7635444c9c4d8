/**
 * The command line as a client of a running service (`vidq add`, `vidq ask`, `vidq ls`): unlike the
 * admin commands these go over HTTP, so they work against any vidq, local or not, with a token.
 *
 * Server: --server, else VIDQ_SERVER, else http://<--host>:<--port> of the config (127.0.0.1:8420).
 * Token: --token, else VIDQ_TOKEN, else DATA_DIR/default-token.txt.
 */
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, extname, join, resolve } from 'node:path';
import cliProgress from 'cli-progress';
import type { Config } from '../config';

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

export class ClientError extends Error {}

export interface ClientOptions {
  server: string;
  token: string;
  /** Where lines go (tests pass their own); progress bars only when it is a terminal. */
  out?: NodeJS.WriteStream;
}

export function clientOptions(
  v: Record<string, string | boolean | undefined>,
  config: Config,
  env: Record<string, string | undefined> = process.env,
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

async function api(o: ClientOptions, path: string, init: RequestInit = {}): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(o.server + path, {
      ...init,
      headers: { authorization: `Bearer ${o.token}`, ...(init.headers as Record<string, string>) },
    });
  } catch (e) {
    throw new ClientError(
      `cannot reach the service at ${o.server} (${(e as Error).message}); is \`vidq serve\` running?`,
    );
  }
  return res;
}

async function apiJson<T>(o: ClientOptions, path: string, init: RequestInit = {}): Promise<T> {
  const res = await api(o, path, init);
  const body = (await res.json().catch(() => null)) as any;
  if (!res.ok) throw new ClientError(body?.message ? `${body.message} (HTTP ${res.status})` : `HTTP ${res.status}`);
  return body as T;
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

/** Files named on the command line, folders expanded recursively (videos only), URLs as given. */
export function expandSources(args: string[]): { kind: 'url' | 'file'; ref: string }[] {
  const out: { kind: 'url' | 'file'; ref: string }[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && VIDEO_EXTENSIONS.has(extname(e.name).toLowerCase())) out.push({ kind: 'file', ref: p });
    }
  };
  for (const a of args) {
    if (/^https?:\/\//i.test(a)) out.push({ kind: 'url', ref: a });
    else if (!existsSync(a))
      throw new ClientError(`${a}: no such file or folder (URLs start with http:// or https://)`);
    else if (statSync(a).isDirectory()) walk(resolve(a));
    else out.push({ kind: 'file', ref: resolve(a) });
  }
  return out;
}

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

  update(name: string, stage: string, percentage: number, detail = ''): void {
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

  done(name: string, line: string): void {
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

/** Reads a server-sent-event response, calling `on` with each `data:` object. */
async function readEvents(res: Response, on: (e: any) => void): Promise<void> {
  if (!res.body) return;
  const dec = new TextDecoder();
  let buf = '';
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buf += dec.decode(chunk, { stream: true });
    let i: number;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      const line = block.split('\n').find((l) => l.startsWith('data: '));
      if (line) on(JSON.parse(line.slice(6)));
    }
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
  const sources = expandSources(args);
  if (sources.length === 0) {
    out.write('no video files found\n');
    return 0;
  }
  // Skip files whose bytes the index already has (the listing carries each stored file's sha256).
  const known = new Map<string, ResourceRow>();
  const existing = await api(o, `/index-resources?index=${encodeURIComponent(index)}`);
  if (existing.ok) {
    for (const r of (await existing.json()) as ResourceRow[])
      if (r.metadata.sha256 && r.status !== 'failed') known.set(r.metadata.sha256, r);
  } else if (existing.status !== 404) {
    const body = (await existing.json().catch(() => null)) as any;
    throw new ClientError(`cannot list the index: ${body?.message ?? `HTTP ${existing.status}`}`);
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
    if (!res.ok) throw new ClientError(`cannot follow the analysis: HTTP ${res.status}`);
    const rows = new Map(((await res.json()) as ResourceRow[]).map((r) => [r.file_id, r]));
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
    process.stderr.write(
      `${failures.length} of ${sources.length} failed:\n${failures.map((f) => `  ${f}`).join('\n')}\n`,
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
  if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) {
    const body = (await res.json().catch(() => null)) as any;
    throw new ClientError(body?.message ?? `HTTP ${res.status}`);
  }
  let key: string | null = null;
  let error: string | null = null;
  let duplicate = false;
  await readEvents(res, (e) => {
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
    const rows = await apiJson<IndexRow[]>(o, `/indexes?token=${encodeURIComponent(o.token)}`);
    if (!rows.length) out.write('no indexes yet; add a video with: vidq add FILE --index NAME\n');
    for (const r of rows)
      out.write(
        `${r.name}\t${r.count} video${r.count === 1 ? '' : 's'}\t${fmtTime(r.total_duration)}\t${r.index_id}\n`,
      );
    return 0;
  }
  const rows = await apiJson<ResourceRow[]>(o, `/index-resources?index=${encodeURIComponent(index)}`);
  if (!rows.length) out.write('no videos in this index\n');
  for (const r of rows) {
    const status = r.status === 'processing' ? `processing${r.stage ? ` (${r.stage} ${r.progress}%)` : ''}` : r.status;
    out.write(
      `${r.file_id}\t${r.file_name}\t${r.metadata.duration !== undefined ? fmtTime(r.metadata.duration) : '-'}\t${status}${r.error ? `: ${r.error}` : ''}\n`,
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
      token: o.token,
      index: indexId,
      prompt: question,
      ...(opts.video && { target_video: opts.video }),
      ...(opts.at && { target: opts.at }),
    }),
  });
  if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) {
    const body = (await res.json().catch(() => null)) as any;
    throw new ClientError(body?.message ?? `HTTP ${res.status}`);
  }
  let evidence: { video_id: string; file_name: string; start: number; end: number; kind: string; text: string }[] = [];
  let failed: string | null = null;
  let written = '';
  await readEvents(res, (e) => {
    if (e.type === 'evidence') evidence = e.evidence ?? [];
    else if (e.type === 'token') {
      written += e.text;
      out.write(e.text);
    } else if (e.type === 'reset') {
      // The streamed text was voided (a model's unchecked claim): the composed answer follows.
      out.write(out.isTTY ? '\n[the answer is rewritten]\n' : '\n');
      written = '';
    } else if (e.type === 'complete') {
      if (!written) out.write(e.output);
    } else if (e.type === 'error') failed = e.message;
  });
  out.write('\n');
  if (failed) throw new ClientError(failed);
  if (evidence.length) {
    out.write('\nmoments:\n');
    for (const ev of evidence.slice(0, 10))
      out.write(
        `  ${ev.file_name} ${fmtTime(ev.start)}–${fmtTime(ev.end)} [${ev.kind}] ${ev.text.replace(/\s+/g, ' ').slice(0, 100)}\n`,
      );
  }
  return 0;
}

async function resolveIndexId(o: ClientOptions, index: string): Promise<string> {
  const rows = await apiJson<IndexRow[]>(o, `/indexes?token=${encodeURIComponent(o.token)}`);
  const hit = rows.find((r) => r.index_id === index) ?? rows.find((r) => r.name === index);
  if (!hit) throw new ClientError(`no index named ${JSON.stringify(index)}; see vidq ls`);
  return hit.index_id;
}

/** 83.5 → "1:23", 3725 → "1:02:05". */
export function fmtTime(sec: number): string {
  const s = Math.floor(sec);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}
