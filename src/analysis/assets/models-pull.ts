/**
 * `models pull`: fetches a Whisper model's ONNX and JSON files from the Hugging Face hub once, on a
 * machine that is online, into `<modelsDir>/<id>/`, where the Whisper engine loads them offline.
 *
 * Every file is checked against the hub's own listing (`/api/models/<id>/tree/<rev>`): SHA-256 for
 * LFS files (the weights), the git blob SHA-1 for small files, the size in any case. Each file is
 * written to a temporary name and renamed once verified, and `config.json` (the file that makes
 * the model visible to the "auto" engine choice) is written last, so an interrupted pull never
 * leaves a model that looks complete. Files already present and intact are not fetched again.
 */
import { existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join, normalize, sep } from 'node:path';
import { hubFromEnv } from '../../config';
import { DEFAULT_WHISPER_DTYPE, DEFAULT_WHISPER_MODEL, whisperRequiredFiles, type WhisperDtype } from '../engines/stt';

export interface PullOptions {
  /** Model id on the hub. @default "onnx-community/whisper-base.en" */
  id?: string;
  /** Local model directory; the model lands in `<modelsDir>/<id>/`. */
  modelsDir: string;
  /** Which ONNX precisions to fetch (must match the engine's). @default encoder fp32, decoder q8 */
  dtype?: WhisperDtype;
  /** Hub address. @default HF_ENDPOINT ?? "https://huggingface.co" */
  endpoint?: string;
  /** Branch, tag or commit. @default "main" */
  revision?: string;
  /** Access token for gated or private models. @default HF_TOKEN */
  token?: string;
  signal?: AbortSignal;
  /** Called as bytes arrive (file path inside the model, bytes so far, expected total or null). */
  onProgress?: (file: string, bytes: number, total: number | null) => void;
}

export interface PulledFile {
  path: string;
  size: number;
  /** How the file was checked: sha256 (LFS), git-sha1 (small files), or size only. */
  verified: 'sha256' | 'git-sha1' | 'size';
  /** False when an intact copy was already there. */
  downloaded: boolean;
}

interface TreeEntry {
  type: string;
  path: string;
  size: number;
  oid?: string;
  lfs?: { oid: string; size: number };
}

/** Small files transformers.js may read besides the required ones (fetched when the repo has them). */
const OPTIONAL_FILES = [
  'special_tokens_map.json',
  'added_tokens.json',
  'normalizer.json',
  'processor_config.json',
  'vocab.json',
  'merges.txt',
];

export async function pullWhisperModel(opts: PullOptions): Promise<{ dir: string; files: PulledFile[] }> {
  const id = opts.id || DEFAULT_WHISPER_MODEL;
  if (!/^[\w.-]+(\/[\w.-]+)?$/.test(id) || id.split('/').some((p) => p === '..' || p === '.'))
    throw new Error(`"${id}" is not a Hugging Face model id (owner/name)`);
  const hub = hubFromEnv();
  const endpoint = (opts.endpoint ?? hub.endpoint ?? 'https://huggingface.co').replace(/\/+$/, '');
  const revision = opts.revision ?? 'main';
  const token = opts.token ?? hub.token;
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  const dir = join(opts.modelsDir, id);

  const tree = await listTree(endpoint, id, revision, headers, opts.signal);
  const byPath = new Map(tree.filter((e) => e.type === 'file').map((e) => [e.path, e]));
  const required = whisperRequiredFiles(opts.dtype ?? DEFAULT_WHISPER_DTYPE);
  const missing = required.filter((f) => !byPath.has(f));
  if (missing.length)
    throw new Error(
      `the hub's ${id}@${revision} has no ${missing.join(', ')}: not a transformers.js Whisper export, or not in the requested precision`,
    );
  // Large ONNX files keep their weights beside them (`model.onnx_data`, `_data_1`, ...).
  const externalData = required
    .filter((f) => f.endsWith('.onnx'))
    .flatMap((f) => [...byPath.keys()].filter((p) => p.startsWith(`${f}_data`)));
  const optional = OPTIONAL_FILES.filter((f) => byPath.has(f));
  const wanted = [...new Set([...required, ...externalData, ...optional])];
  // config.json last: its presence is what marks the model as installed.
  wanted.sort((a, b) => Number(a === 'config.json') - Number(b === 'config.json'));

  const files: PulledFile[] = [];
  for (const path of wanted) {
    opts.signal?.throwIfAborted();
    const entry = byPath.get(path)!;
    const target = safeJoin(dir, path);
    const expect = expectation(entry);
    if (
      existsSync(target) &&
      statSync(target).size === expect.size &&
      (await hashFile(target, expect)) === expect.hash
    ) {
      files.push({ path, size: expect.size, verified: expect.kind, downloaded: false });
      continue;
    }
    mkdirSync(dirname(target), { recursive: true });
    const tmp = `${target}.${process.pid}.part`;
    try {
      await download(
        `${endpoint}/${encodePath(id)}/resolve/${encodeURIComponent(revision)}/${encodePath(path)}`,
        tmp,
        path,
        expect,
        headers,
        opts,
      );
      renameSync(tmp, target);
    } finally {
      rmSync(tmp, { force: true });
    }
    files.push({ path, size: expect.size, verified: expect.kind, downloaded: true });
  }
  return { dir, files };
}

async function listTree(
  endpoint: string,
  id: string,
  revision: string,
  headers: Record<string, string>,
  signal?: AbortSignal,
): Promise<TreeEntry[]> {
  const out: TreeEntry[] = [];
  let url: string | null =
    `${endpoint}/api/models/${encodePath(id)}/tree/${encodeURIComponent(revision)}?recursive=true`;
  while (url) {
    let res: Response;
    try {
      res = await fetch(url, { headers, signal });
    } catch (e) {
      if (signal?.aborted) throw e;
      throw new Error(
        `the hub at ${endpoint} cannot be reached (${(e as Error).message}); models pull needs a network connection`,
      );
    }
    if (res.status === 401 || res.status === 403)
      throw new Error(`the hub refused access to ${id} (HTTP ${res.status}): gated or private models need HF_TOKEN`);
    if (res.status === 404) throw new Error(`the hub has no model ${id} at revision ${revision}`);
    if (!res.ok) throw new Error(`the hub's file listing for ${id} failed with HTTP ${res.status}`);
    const page = (await res.json()) as unknown;
    if (!Array.isArray(page)) throw new Error(`the hub's file listing for ${id} is not a list`);
    for (const e of page as Partial<TreeEntry>[]) {
      if (typeof e.path === 'string' && typeof e.type === 'string' && typeof e.size === 'number')
        out.push(e as TreeEntry);
    }
    // Long listings are paged with a Link header, like the hub's other list endpoints.
    const next = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get('link') ?? '')?.[1];
    url = next ? new URL(next, url).toString() : null;
  }
  return out;
}

interface Expectation {
  size: number;
  kind: PulledFile['verified'];
  hash?: string;
}

function expectation(e: TreeEntry): Expectation {
  if (e.lfs && /^[0-9a-f]{64}$/.test(e.lfs.oid)) return { size: e.lfs.size, kind: 'sha256', hash: e.lfs.oid };
  if (!e.lfs && e.oid && /^[0-9a-f]{40}$/.test(e.oid)) return { size: e.size, kind: 'git-sha1', hash: e.oid };
  return { size: e.lfs?.size ?? e.size, kind: 'size' };
}

function hasher(expect: Expectation): { update(b: Uint8Array): void; digest(): string | undefined } {
  if (expect.kind === 'size') return { update() {}, digest: () => undefined };
  if (expect.kind === 'sha256') {
    const h = new Bun.CryptoHasher('sha256');
    return { update: (b) => h.update(b), digest: () => h.digest('hex') };
  }
  // A git blob id is the SHA-1 of "blob <size>\0" followed by the content.
  const h = new Bun.CryptoHasher('sha1');
  h.update(`blob ${expect.size}\0`);
  return { update: (b) => h.update(b), digest: () => h.digest('hex') };
}

async function hashFile(path: string, expect: Expectation): Promise<string | undefined> {
  const h = hasher(expect);
  for await (const chunk of Bun.file(path).stream()) h.update(chunk);
  return h.digest();
}

async function download(
  url: string,
  tmp: string,
  path: string,
  expect: Expectation,
  headers: Record<string, string>,
  opts: PullOptions,
): Promise<void> {
  const res = await fetch(url, { headers, signal: opts.signal, redirect: 'follow' });
  if (!res.ok || !res.body) throw new Error(`downloading ${path} failed with HTTP ${res.status}`);
  const h = hasher(expect);
  const sink = Bun.file(tmp).writer();
  let bytes = 0;
  try {
    for await (const chunk of res.body) {
      bytes += chunk.length;
      if (bytes > expect.size) throw new Error(`${path} is larger than the hub says (${expect.size} bytes)`);
      h.update(chunk);
      sink.write(chunk);
      opts.onProgress?.(path, bytes, expect.size);
    }
  } finally {
    await sink.end();
  }
  if (bytes !== expect.size) throw new Error(`${path} arrived incomplete: ${bytes} of ${expect.size} bytes`);
  const got = h.digest();
  if (got !== expect.hash)
    throw new Error(`${path} is corrupt: its ${expect.kind} is ${got}, the hub says ${expect.hash}`);
}

const encodePath = (p: string) => p.split('/').map(encodeURIComponent).join('/');

/** A hub path inside the model folder (never outside it, whatever the listing says). */
function safeJoin(dir: string, path: string): string {
  const full = normalize(join(dir, path));
  if (!full.startsWith(normalize(dir) + sep))
    throw new Error(`the hub listed a file outside the model folder: ${path}`);
  return full;
}
