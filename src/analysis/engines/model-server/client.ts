/**
 * One client for the OpenAI-compatible model servers analysis talks to (Ollama, vLLM, llama.cpp's
 * server, LM Studio, LocalAI, speaches, a hosted API): base URL handling ("/v1" added when missing),
 * a bearer key that is never shown, a timeout per request, bounded retries with backoff, and ONE
 * concurrency limit shared by every request of the process (all videos, all kinds), so a slow
 * server pushes back on the pipeline instead of being flooded.
 *
 * Every failure is a ModelServerError whose message is short, names the URL (never the key) and
 * says what went wrong ("connection refused at http://…"), because it ends up in the metadata.
 */

export class ModelServerError extends Error {
  override readonly name = 'ModelServerError';
  /**
   * The server could not be reached or did not answer in time even after retries: later requests
   * to it would fail the same way, so callers stop sending (rather than wait out every retry again).
   */
  readonly unreachable: boolean;
  constructor(message: string, opts: { unreachable?: boolean } = {}) {
    super(message);
    this.unreachable = opts.unreachable ?? false;
  }
}

/** A counting semaphore with a FIFO queue: at most `max` tasks run at once, the rest wait their turn. */
export class Limiter {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  /** Most tasks that were running at once (for tests and the benchmark). */
  peak = 0;

  constructor(readonly max: number) {
    if (!(max >= 1)) throw new Error('a limiter needs max ≥ 1');
  }

  get running(): number {
    return this.active;
  }
  get queued(): number {
    return this.waiting.length;
  }

  async run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (this.active >= this.max) {
      await new Promise<void>((resolve, reject) => {
        const go = () => {
          signal?.removeEventListener('abort', stop);
          resolve();
        };
        const stop = () => {
          const k = this.waiting.indexOf(go);
          if (k >= 0) this.waiting.splice(k, 1);
          reject(signal!.reason);
        };
        this.waiting.push(go);
        signal?.addEventListener('abort', stop, { once: true });
      });
    } else {
      this.active++;
    }
    this.peak = Math.max(this.peak, this.active);
    try {
      return await task();
    } finally {
      // Hand the slot straight to the next waiter (active stays the same) or free it.
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}

/**
 * The size of a process's model-server limiter (one per process, made by its composition root and
 * handed to every client): each analysis worker is its own process, so --model-concurrency is split
 * between them (at least 1 each).
 */
export function modelLimitPerWorker(concurrency: number, workers: number): number {
  return Math.max(1, Math.ceil(concurrency / Math.max(1, workers)));
}

export interface ModelServerOptions {
  /** Base URL, e.g. http://127.0.0.1:11434 or https://api.openai.com/v1 ("/v1" is added when missing). */
  url: string;
  apiKey?: string;
  /** Per request (each retry gets its own). @default 60000 */
  timeoutMs?: number;
  /** Retries after a connection error, a timeout, 408, 429 or 5xx. @default 2 */
  retries?: number;
  /** First backoff; doubled per retry, with jitter. @default 500 */
  backoffMs?: number;
  limiter: Limiter;
}

export class ModelServerClient {
  /** The base URL as shown in messages and metadata (no credentials, no query). */
  readonly base: string;
  /** A #private field: not enumerable, never in JSON.stringify or a logged object. */
  readonly #key: string;

  private readonly opts: Omit<ModelServerOptions, 'apiKey'>;

  constructor(opts: ModelServerOptions) {
    const { apiKey: _, ...rest } = opts;
    this.opts = rest;
    const u = new URL(opts.url);
    const path = u.pathname.replace(/\/+$/, '');
    this.base = `${u.origin}${path}${/\/v1$/.test(path) ? '' : '/v1'}`;
    this.#key = opts.apiKey ?? '';
  }

  /** Requests this client may have in flight (the shared limit): callers size their own queues by it. */
  get concurrency(): number {
    return this.opts.limiter.max;
  }

  /** POST a JSON body to `{base}{path}`, return the parsed JSON reply. */
  postJson(path: string, body: unknown, signal: AbortSignal): Promise<unknown> {
    const text = JSON.stringify(body);
    return this.request(path, () => ({ body: text, headers: { 'content-type': 'application/json' } }), signal);
  }

  /** POST multipart form data (built fresh for every attempt: a FormData body is consumed once). */
  postForm(path: string, form: () => FormData, signal: AbortSignal): Promise<unknown> {
    return this.request(path, () => ({ body: form(), headers: {} }), signal);
  }

  private async request(
    path: string,
    init: () => { body: string | FormData; headers: Record<string, string> },
    signal: AbortSignal,
  ): Promise<unknown> {
    const url = `${this.base}${path}`;
    const retries = this.opts.retries ?? 2;
    const timeoutMs = this.opts.timeoutMs ?? 60_000;
    let last: ModelServerError | null = null;
    for (let attempt = 0; attempt <= retries; attempt++) {
      signal.throwIfAborted();
      if (attempt > 0)
        await sleep((this.opts.backoffMs ?? 500) * 2 ** (attempt - 1) * (0.75 + Math.random() * 0.5), signal);
      const outcome = await this.opts.limiter.run(() => this.once(url, init(), timeoutMs, signal), signal);
      if (outcome.ok) return outcome.value;
      last = outcome.error;
      if (!outcome.retry) throw last;
    }
    throw last!;
  }

  private async once(
    url: string,
    init: { body: string | FormData; headers: Record<string, string> },
    timeoutMs: number,
    signal: AbortSignal,
  ): Promise<{ ok: true; value: unknown } | { ok: false; error: ModelServerError; retry: boolean }> {
    const timeout = AbortSignal.timeout(timeoutMs);
    const both = AbortSignal.any([signal, timeout]);
    const headers: Record<string, string> = { accept: 'application/json', ...init.headers };
    if (this.#key) headers.authorization = `Bearer ${this.#key}`;
    let res: Response;
    let text: string;
    try {
      res = await fetch(url, { method: 'POST', body: init.body, headers, signal: both, redirect: 'error' });
      text = await res.text();
    } catch (e) {
      if (signal.aborted) throw signal.reason;
      if (timeout.aborted)
        return {
          ok: false,
          retry: true,
          error: new ModelServerError(`no reply within ${timeoutMs} ms from ${url}`, { unreachable: true }),
        };
      return {
        ok: false,
        retry: true,
        error: new ModelServerError(`${networkReason(e)} at ${url}`, { unreachable: true }),
      };
    }
    if (!res.ok) {
      const retry = res.status === 408 || res.status === 429 || res.status >= 500;
      return {
        ok: false,
        retry,
        error: new ModelServerError(`HTTP ${res.status} from ${url}${snippet(text)}`, { unreachable: retry }),
      };
    }
    try {
      return { ok: true, value: JSON.parse(text) };
    } catch {
      return {
        ok: false,
        retry: false,
        error: new ModelServerError(`a reply that is not JSON from ${url}${snippet(text)}`),
      };
    }
  }
}

function networkReason(e: unknown): string {
  const code = (e as { code?: string })?.code ?? '';
  const msg = (e as Error)?.message ?? String(e);
  if (code === 'ConnectionRefused' || code === 'ECONNREFUSED' || /refused/i.test(msg)) return 'connection refused';
  if (code === 'ECONNRESET' || /reset|closed/i.test(msg)) return 'connection closed';
  if (/dns|resolve|ENOTFOUND/i.test(code + msg)) return 'host not found';
  return `request failed (${msg.slice(0, 80)})`;
}

/** A short, single-line hint of what the server said (error bodies may echo the request, never keys). */
function snippet(text: string): string {
  const s = text.replace(/\s+/g, ' ').trim().slice(0, 120);
  return s ? `: ${s}` : '';
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => {
      signal.removeEventListener('abort', stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(t);
      reject(signal.reason);
    };
    signal.addEventListener('abort', stop, { once: true });
  });
}
