/**
 * A client of the hosted API written from ../shared/spec/moonshine-sdk.md (the facts of what its
 * official SDK sends and reads), not from the SDK's code: the same paths, field names and types,
 * the same headers (Content-Type on bodies; no Accept beyond fetch's default, no Authorization),
 * and the same reading rules: only `data: ` lines of an event stream, `fileSize` without its last
 * three characters, the integer average of the `/status` list. Tests point it at vidq by its base
 * URL, and its one fixed status URL at vidq's /status, as a user of vidq would.
 */
import { readFileSync, statSync } from 'node:fs';
import { basename, extname } from 'node:path';

/** What the SDK raises: the status and the parsed body, when there was one. */
export class HostedError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly body: any,
  ) {
    super(message);
  }
}

const LOCAL_EXTENSIONS = ['.mp4', '.avi', '.mov', '.wmv', '.flv', '.mkv'];
const MEDIA_TYPES: Record<string, string> = {
  '.mp4': 'video/mp4',
  '.avi': 'video/x-msvideo',
  '.mov': 'video/quicktime',
  '.wmv': 'video/x-ms-wmv',
  '.flv': 'video/x-flv',
  '.mkv': 'video/x-matroska',
};

export interface UrlUploadResult {
  key: string;
  /** `fileSize` as the SDK reads it: the number before the three-character unit. */
  sizeNumber: number;
  large: boolean;
  /** Every `data:` object of the stream, in order (for the tests; the SDK keeps only what it reads). */
  events: any[];
}

export class HostedClient {
  /** Only POST bodies carry a header; nothing else is set (fetch adds its default Accept: *\/*). */
  private readonly json = { 'Content-Type': 'application/json' };

  constructor(
    /** The SDK's base URL module variable. */
    readonly base: string,
    readonly token: string,
    /** The one fixed status URL (a host of the hosted product), redirected by the user to vidq. */
    readonly statusUrl: string,
    /** The SDK waits 4 s between polls; tests wait less. */
    readonly pollMs = 100,
  ) {}

  private async call(method: string, path: string, body?: unknown, base = this.base): Promise<any> {
    const res = await fetch(base + path, {
      method,
      ...(body !== undefined && { headers: this.json, body: JSON.stringify(body) }),
    });
    const text = await res.text();
    let parsed: any = null;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: left null
    }
    if (!res.ok) throw new HostedError(`${method} ${path}: ${res.status}`, res.status, parsed);
    if (parsed === null) throw new HostedError(`${method} ${path}: the answer is not JSON`, res.status, text);
    return parsed;
  }

  async checkToken(): Promise<boolean> {
    const r = await this.call('GET', `/check-token?token=${encodeURIComponent(this.token)}`);
    return r.valid;
  }

  async exists(index: string): Promise<boolean> {
    return (await this.call('POST', '/does-group-exist', { token: this.token, index })).exists;
  }

  /** The SDK asks first and refuses to create an index that exists. */
  async create(index: string, performance = false): Promise<any> {
    if (await this.exists(index)) throw new Error('index already exists');
    const q = `token=${encodeURIComponent(this.token)}&index=${encodeURIComponent(index)}`;
    return this.call('GET', `/create-index?${q}${performance ? '&type=performance' : ''}`);
  }

  /** URL upload: reads the event stream until the server closes it, then polls until processed. */
  async uploadUrl(url: string, index: string, waitProcessed = true): Promise<UrlUploadResult> {
    if (!(await this.exists(index))) throw new Error('index does not exist');
    const res = await fetch(`${this.base}/remote-upload`, {
      method: 'POST',
      headers: this.json,
      body: JSON.stringify({ url, index, token: this.token }),
    });
    let key: string | undefined;
    let sizeNumber: number | undefined;
    const events: any[] = [];
    // Line by line as it arrives, as a streaming HTTP client reads it; returns when the server closes.
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffered = '';
    let stopped = false;
    while (!stopped) {
      const { value, done } = await reader.read();
      if (done) break;
      buffered += value;
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) {
        if (!line.startsWith('data: ')) continue;
        const e = JSON.parse(line.slice('data: '.length));
        events.push(e);
        if (e.type === 'file_authorized') key = e.key;
        else if (e.type === 'metadata') sizeNumber = Number.parseFloat(String(e.fileSize).slice(0, -3));
        else if (e.type === 'error') {
          stopped = true;
          break;
        }
      }
    }
    await reader.cancel().catch(() => {});
    if (events.some((e) => e.type === 'error'))
      throw new HostedError(
        'upload failed',
        res.status,
        events.find((e) => e.type === 'error'),
      );
    if (key === undefined || sizeNumber === undefined || Number.isNaN(sizeNumber))
      throw new HostedError('upload failed: no file_authorized or metadata event', res.status, events);
    const large = sizeNumber > 650;
    if (waitProcessed) {
      if (large) await this.waitCompressed(key);
      await this.waitProcessed(key);
    }
    return { key, sizeNumber, large, events };
  }

  /** Local file: pre-upload (token + name in `index`), PUT of the raw file, then the status poll. */
  async uploadFile(path: string, index: string, waitProcessed = true): Promise<{ key: string; url: string }> {
    const ext = extname(path).toLowerCase();
    if (!LOCAL_EXTENSIONS.includes(ext)) throw new Error(`not a video file: ${path}`);
    if (!(await this.exists(index))) throw new Error('index does not exist');
    const pre = await this.preUpload(path, index);
    await this.put(pre.url, path);
    if (waitProcessed) {
      if (statSync(path).size > 1e9) await this.waitCompressed(pre.key);
      await this.waitProcessed(pre.key);
    }
    return pre;
  }

  async preUpload(path: string, index: string): Promise<{ key: string; url: string }> {
    const ext = extname(path).toLowerCase();
    return this.call('POST', '/api-pre-upload', {
      filename: basename(path),
      index: this.token + index,
      duration: 10.0,
      fps: 30.0,
      filesize: statSync(path).size,
      content: MEDIA_TYPES[ext],
    });
  }

  /** The PUT: raw bytes, Content-Type of the file; 2xx expected. */
  async put(url: string, path: string): Promise<void> {
    const res = await fetch(url, {
      method: 'PUT',
      headers: { 'Content-Type': MEDIA_TYPES[extname(path).toLowerCase()]! },
      body: readFileSync(path),
    });
    const text = await res.text();
    if (!res.ok) throw new HostedError(`PUT: ${res.status}`, res.status, JSON.parse(text));
  }

  /** Polls the fixed status URL until the integer average of the `status` list reaches 100. */
  async waitProcessed(key: string, maxPolls = 1200): Promise<number[][]> {
    const seen: number[][] = [];
    for (let i = 0; i < maxPolls; i++) {
      const r = await this.call('GET', `?file_id=${encodeURIComponent(key)}`, undefined, this.statusUrl);
      const list = r.status as number[];
      if (!Array.isArray(list)) throw new Error(`status is not a list: ${JSON.stringify(r.status)}`);
      seen.push(list);
      const avg = Math.floor(list.reduce((a, b) => a + b, 0) / list.length);
      if (avg >= 100) return seen;
      await Bun.sleep(this.pollMs);
    }
    throw new Error(`not processed after ${maxPolls} polls: ${JSON.stringify(seen.at(-1))}`);
  }

  async waitCompressed(key: string): Promise<void> {
    for (;;) {
      const r = await this.call('GET', `/compress-status?video=${encodeURIComponent(key.split('.')[0]!)}`);
      if (r.status >= 100) return;
      await Bun.sleep(this.pollMs);
    }
  }

  /** inquire: token + name as `project_id`; returns `output`. */
  async inquire(
    index: string,
    prompt: string,
    opts: { subindex?: string[]; guidance?: string; target?: number; target_video?: string; json?: string } = {},
  ): Promise<string> {
    const r = await this.call('POST', '/inquire', { project_id: this.token + index, prompt, ...opts });
    return r.output;
  }

  /** /inquire-stream (reference pages): the `chunk`s of the `data:` objects, joined. */
  async inquireStream(index: string, prompt: string): Promise<{ text: string; events: any[] }> {
    const res = await fetch(`${this.base}/inquire-stream`, {
      method: 'POST',
      headers: this.json,
      body: JSON.stringify({ project_id: this.token + index, prompt }),
    });
    if (!res.ok) throw new HostedError(`inquire-stream: ${res.status}`, res.status, await res.json());
    const events = (await res.text())
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)));
    return { text: events.map((e) => (typeof e.chunk === 'string' ? e.chunk : '')).join(''), events };
  }

  /** remove: a 400 reads "invalid token", a 404 shows the body's `error`. */
  async remove(index: string, videoId: string): Promise<any> {
    try {
      return await this.call('POST', '/remove-from-index', { token: this.token, project_id: index, video_id: videoId });
    } catch (e) {
      if (e instanceof HostedError && e.status === 400) throw new HostedError('invalid token', 400, e.body);
      if (e instanceof HostedError && e.status === 404) throw new HostedError(String(e.body?.error), 404, e.body);
      throw e;
    }
  }
}
