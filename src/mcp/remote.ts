/**
 * The tools' backend of `vidq mcp` (stdio): the HTTP API of a running vidq, with the user's token
 * as a Bearer header, so the server applies its own rules (credits, isolation, quotas, admission).
 * A refusal is thrown with the API's own message.
 */
import { existsSync, statSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { ApiError } from '../errors';
import type { IndexView } from '../indexes/service';
import type { SearchPage } from '../search/service';
import type { ClientOptions } from '../cli/client';
import type { AskAnswer, Backend, Cue, PersonRow, ResourceRow, UploadFailures } from './backend';

/** How long add_video waits for the server to admit an upload (file_authorized) before giving up. */
const ADMIT_TIMEOUT_MS = 60_000;

export function remoteBackend(o: ClientOptions, failures: UploadFailures): Backend {
  const server = o.server.replace(/\/+$/, '');

  async function send(path: string, init: RequestInit = {}): Promise<Response> {
    try {
      return await fetch(server + path, {
        ...init,
        headers: { authorization: `Bearer ${o.token}`, ...(init.headers as Record<string, string>) },
      });
    } catch (e) {
      if ((e as Error).name === 'AbortError' || (e as Error).name === 'TimeoutError') throw e;
      throw new ApiError(
        502,
        `cannot reach the vidq service at ${server} (${(e as Error).message}); is \`vidq serve\` running?`,
      );
    }
  }

  /** The error of a refused request, with the API's message. */
  async function refusal(res: Response): Promise<ApiError> {
    const body = (await res.json().catch(() => null)) as { message?: unknown } | null;
    return new ApiError(res.status, typeof body?.message === 'string' ? body.message : `HTTP ${res.status}`);
  }

  async function json<T>(path: string, init: RequestInit = {}): Promise<T> {
    const res = await send(path, init);
    if (!res.ok) throw await refusal(res);
    return (await res.json()) as T;
  }

  const post = <T>(path: string, body: unknown, signal?: AbortSignal) =>
    json<T>(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal,
    });

  /**
   * Reads an upload's event stream until the server admits it (file_authorized), and goes on
   * reading it behind the tool's answer: an `error` event later is kept as the upload's failure.
   */
  async function admitted(
    res: Response,
    index: string,
  ): Promise<{ file_id: string; index_id: string; file_name: string }> {
    if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) throw await refusal(res);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buf = '';
    let key: string | null = null;
    const next = async (): Promise<Record<string, any> | null> => {
      for (;;) {
        const i = buf.indexOf('\n\n');
        if (i >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const line = block.split('\n').find((l) => l.startsWith('data:'));
          if (line) return JSON.parse(line.slice(5).trim());
          continue;
        }
        const { value, done } = await reader.read();
        if (done) return null;
        buf += value;
      }
    };
    const timer = setTimeout(() => void reader.cancel(), ADMIT_TIMEOUT_MS);
    try {
      for (;;) {
        const e = await next();
        if (!e) throw new ApiError(502, 'the service closed the upload without admitting it');
        if (e.type === 'error') throw new ApiError(Number(e.error) || 500, String(e.message));
        if (e.type === 'file_authorized') {
          key = String(e.key);
          const added = { file_id: key, index_id: String(e.index_id ?? index), file_name: String(e.file_name ?? '') };
          clearTimeout(timer);
          // The rest of the stream: only a failure matters (the row is deleted with it).
          void (async () => {
            for (let ev = await next(); ev; ev = await next())
              if (ev.type === 'error') failures.record(added.file_id, o.token, String(ev.message));
          })().catch(() => {});
          return added;
        }
      }
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    localFiles: true,
    listIndexes: () => json<IndexView[]>('/indexes'),
    async resolveIndex(ref) {
      const all = await json<IndexView[]>('/indexes');
      const hit = all.find((i) => i.index_id === ref) ?? all.find((i) => i.name === ref.trim());
      if (hit) return hit;
      // Not there: the API says why in its own words (the listing by name answers 404).
      const res = await send(`/index-resources?index=${encodeURIComponent(ref)}`);
      throw res.ok ? new ApiError(404, `index ${JSON.stringify(ref.slice(0, 80))} was not found`) : await refusal(res);
    },
    resources: (indexId) => json<ResourceRow[]>(`/index-resources?index=${encodeURIComponent(indexId)}`),
    async search(req) {
      const q = new URLSearchParams({ index: req.index, q: req.q });
      if (req.video !== undefined) q.set('video', req.video);
      if (req.kinds !== undefined) q.set('kinds', req.kinds);
      if (req.limit !== undefined) q.set('limit', String(req.limit));
      if (req.offset !== undefined) q.set('offset', String(req.offset));
      // GET /search gives signed paths; /inquire gives absolute links: the tools give links.
      const page = await json<SearchPage>(`/search?${q}`);
      return {
        ...page,
        moments: page.moments.map((m) => ({ ...m, frame_url: m.frame_url && new URL(m.frame_url, server).href })),
      };
    },
    ask: (req, signal) => post<AskAnswer>('/inquire', req, signal),
    async transcript(fileId) {
      const id = encodeURIComponent(fileId);
      const insights = await json<{ segments: Record<string, Cue[]> }>(`/videos/${id}/insights.json`);
      const cues = (insights.segments.transcript ?? []).map(({ start, end, text }) => ({ start, end, text }));
      if (cues.length) return cues;
      // None: the subtitles endpoint says why (not transcribed, or not ready yet).
      const res = await send(`/videos/${id}/transcript.vtt`);
      if (!res.ok) throw await refusal(res);
      return [];
    },
    people: (indexId) => json<PersonRow[]>(`/indexes/${encodeURIComponent(indexId)}/people`),
    async remove(indexId, fileId) {
      await post('/remove-from-index', { project_id: indexId, video_id: fileId });
    },
    async addUrl(index, url, subtitlesUrl) {
      const res = await send('/remote-upload', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ index, url, ...(subtitlesUrl !== undefined && { subtitles_url: subtitlesUrl }) }),
      });
      return admitted(res, index);
    },
    async addFile(index, path) {
      const abs = resolve(path);
      if (!existsSync(abs) || !statSync(abs).isFile())
        throw new ApiError(400, `${path}: no such file on this machine (give the path of a video file)`);
      const q = new URLSearchParams({ index, file_name: basename(abs) });
      const res = await send(`/upload?${q}`, {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream', accept: 'text/event-stream' },
        body: Bun.file(abs),
      });
      return admitted(res, index);
    },
    uploadFailure: (fileId) => failures.get(fileId, o.token),
    async frame(url) {
      // Always from this server (the link's host may be a --public-url this machine cannot reach).
      const u = new URL(url, server);
      if (!u.pathname.startsWith('/media/')) return null;
      try {
        const res = await fetch(server + u.pathname + u.search, { signal: AbortSignal.timeout(15_000) });
        if (!res.ok || !(res.headers.get('content-type') ?? '').startsWith('image/jpeg')) return null;
        return new Uint8Array(await res.arrayBuffer());
      } catch {
        return null;
      }
    },
  };
}
