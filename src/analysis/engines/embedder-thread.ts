/**
 * An Embedder that runs the sentence-embedding model in a Worker thread (embedder-worker.ts), so
 * that the HTTP server's event loop keeps serving other requests while a question is embedded.
 * The worker starts on the first call and is restarted after a crash; an idle one does not keep
 * the process alive.
 */
import { EngineUnavailableError, type EngineInfo } from '../contracts';
import { USE_DIMS, UseEmbedder, type Embedder, type UseFiles } from './embedder';
import { EMBEDDER_WORKER } from '../workers/entries';

export type EmbedderRequest =
  | { type: 'init'; modelDir: string; wasmDir: string }
  | { type: 'embed'; id: number; texts: string[] };
export type EmbedderResponse =
  | { type: 'result'; id: number; vectors: ArrayBuffer[] }
  | { type: 'error'; id: number; message: string; unavailable: boolean };

export class ThreadedEmbedder implements Embedder {
  readonly info: EngineInfo = new UseEmbedder().info;
  readonly dims = USE_DIMS;
  private worker: Worker | null = null;
  private starting: Promise<Worker> | null = null;
  private readonly pending = new Map<number, { resolve: (v: Float32Array[]) => void; reject: (e: Error) => void }>();
  private nextId = 1;

  /** `files`: where the model and wasm files are (resolved once, on the first call). */
  constructor(private readonly files: () => UseFiles | Promise<UseFiles>) {}

  async embed(texts: string[]): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    const worker = await this.start();
    const id = this.nextId++;
    worker.ref();
    return new Promise<Float32Array[]>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ type: 'embed', id, texts } satisfies EmbedderRequest);
    });
  }

  close(): void {
    this.stop(new EngineUnavailableError('the embedder was closed'));
  }

  private start(): Promise<Worker> {
    this.starting ??= (async () => {
      let files: UseFiles;
      try {
        files = await this.files();
      } catch (e) {
        this.starting = null;
        throw e instanceof EngineUnavailableError
          ? e
          : new EngineUnavailableError(`the sentence-embedding model is not available: ${(e as Error).message}`);
      }
      const w = new Worker(EMBEDDER_WORKER.href);
      w.onmessage = (ev: MessageEvent<EmbedderResponse>) => this.receive(ev.data);
      w.onerror = (ev) => this.stop(new EngineUnavailableError(`the embedder thread crashed: ${ev.message}`));
      w.addEventListener('close', () => {
        if (this.worker === w) this.stop(new EngineUnavailableError('the embedder thread stopped'));
      });
      w.postMessage({ type: 'init', ...files } satisfies EmbedderRequest);
      w.unref();
      this.worker = w;
      return w;
    })();
    return this.starting;
  }

  private receive(m: EmbedderResponse): void {
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    if (this.pending.size === 0) this.worker?.unref();
    if (m.type === 'result') p.resolve(m.vectors.map((b) => new Float32Array(b)));
    else p.reject(m.unavailable ? new EngineUnavailableError(m.message) : new Error(m.message));
  }

  /** Fails whatever waits and forgets the worker; the next call starts a new one. */
  private stop(reason: Error): void {
    const w = this.worker;
    this.worker = null;
    this.starting = null;
    for (const p of this.pending.values()) p.reject(reason);
    this.pending.clear();
    w?.terminate();
  }
}
