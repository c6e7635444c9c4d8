/**
 * The client side of a Worker thread that runs models (the object detector, the face models): it
 * starts the Worker with an `init` message and a start-up timeout, sends requests by id, and turns
 * any failure (a crash, an error at start-up, a timeout, `terminate`) into one error that rejects
 * everything pending and ends the Worker. The Worker answers `ready`, `result` (with the request's
 * id) or `error` (with the id, or none when it failed to start).
 */

export type ModelWorkerResponse =
  | { type: 'ready' }
  | { type: 'result'; id: number }
  | { type: 'error'; id?: number; message: string };

export interface ModelWorkerOptions<M, R> {
  /** What the Worker is, for errors: "object detector". */
  name: string;
  /** What one request does, for errors: "object detection". */
  task: string;
  /** The `init` message (paths of the models and the wasm files). */
  init: unknown;
  /** Longest the Worker may take to load its models, in ms. */
  startTimeoutMs: number;
  /** The result of a `result` message. */
  result: (m: Extract<M, { type: 'result' }>) => R;
}

export class ModelWorker<M extends ModelWorkerResponse, R> {
  readonly ready: Promise<void>;
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: (r: R) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  private dead: Error | null = null;
  private starting: { resolve: () => void; reject: (e: Error) => void } | null = null;

  /** `url` comes from workers/entries.ts, which resolves the entry scripts both in src/ and in the executable. */
  constructor(
    url: URL,
    private readonly o: ModelWorkerOptions<M, R>,
  ) {
    this.ready = new Promise<void>((resolve, reject) => (this.starting = { resolve, reject }));
    // Nobody may be waiting on `ready` when it fails (e.g. closed before use).
    this.ready.catch(() => {});
    const timer = setTimeout(
      () => this.fail(new Error(`the ${o.name} did not start within ${o.startTimeoutMs / 1000} s`)),
      o.startTimeoutMs,
    );
    this.ready.then(
      () => clearTimeout(timer),
      () => clearTimeout(timer),
    );
    this.worker = new Worker(url.href);
    this.worker.onmessage = (ev: MessageEvent<M>) => this.receive(ev.data);
    this.worker.onerror = (ev) => this.fail(new Error(`the ${o.name} crashed: ${ev.message}`));
    this.worker.addEventListener('close', () => this.fail(new Error(`the ${o.name} stopped`)));
    this.worker.postMessage({ type: 'init', ...(o.init as object) });
    this.idle();
  }

  /** Sends the message that `make` builds for a new request id, moving `transfer` to the Worker. */
  request(make: (id: number) => { message: unknown; transfer: ArrayBuffer[] }): Promise<R> {
    if (this.dead) return Promise.reject(this.dead);
    const id = this.nextId++;
    this.worker.ref();
    return new Promise<R>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      const { message, transfer } = make(id);
      this.worker.postMessage(message, transfer);
    });
  }

  get alive(): boolean {
    return this.dead === null;
  }

  terminate(reason: Error): void {
    this.fail(reason);
  }

  /** An idle Worker must not keep the process alive (a forgotten close() would hang exit). */
  private idle(): void {
    if (this.pending.size === 0 && !this.starting) this.worker.unref();
  }

  private receive(message: M): void {
    const m = message as ModelWorkerResponse;
    if (m.type === 'ready') {
      this.starting?.resolve();
      this.starting = null;
    } else if (m.type === 'result') {
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      p?.resolve(this.o.result(message as Extract<M, { type: 'result' }>));
    } else if (m.id === undefined) {
      this.fail(new Error(`the ${this.o.name} failed to start: ${m.message}`));
    } else {
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      p?.reject(new Error(`${this.o.task} failed: ${m.message}`));
    }
    this.idle();
  }

  private fail(e: Error): void {
    if (this.dead) return;
    this.dead = e;
    this.starting?.reject(e);
    this.starting = null;
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
    this.worker.terminate();
  }
}
