// The HTTP API as the page uses it: the token in an `Authorization: Bearer` header, errors as ApiError.
import { S, signOut } from './state';

/** JSON from the API (shapes in the spec); the views read the fields they show. */
export type Json = any;

export class ApiError extends Error {
  status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

interface ApiOptions {
  method?: string;
  body?: unknown;
  accept?: string;
  signal?: AbortSignal;
}

export async function api(path: string, { method = 'GET', body, accept, signal }: ApiOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { authorization: `Bearer ${S.token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (accept) headers.accept = accept;
  let res: Response;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal });
  } catch (e: any) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(0, 'the service cannot be reached');
  }
  if (!res.ok) {
    const j = await res.json().catch(() => null);
    const err = new ApiError(res.status, j?.message ?? `${res.status} ${res.statusText}`);
    if (res.status === 401 && S.token) signOut('The service did not accept the token; sign in again.');
    throw err;
  }
  return res;
}
export const getJson = async (path: string, opts?: ApiOptions): Promise<Json> => (await api(path, opts)).json();

/** The parsed `data:` objects of a server-sent-event response, as they arrive. */
export async function* events(res: Response): AsyncGenerator<Json> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += value.replace(/\r\n/g, '\n');
    let i: number;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      const data = block
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).replace(/^ /, ''))
        .join('\n');
      if (!data) continue;
      try {
        yield JSON.parse(data);
      } catch {
        /* not JSON: ignore */
      }
    }
  }
}
