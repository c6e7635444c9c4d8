/** The token of a request: the spec's `token` field/parameter, or an Authorization: Bearer header. */
export function tokenOf(explicit: unknown, request: Request): string | undefined {
  if (typeof explicit === 'string' && explicit !== '') return explicit;
  const h = request.headers.get('authorization');
  const m = h ? /^Bearer\s+(\S+)$/i.exec(h) : null;
  return m?.[1];
}

import { badRequest } from '../errors';

/** Origins of requests whose Host the HTTP layer checked (see host.ts), for links. */
const checkedOrigins = new WeakMap<Request, string>();

export function setOrigin(request: Request, origin: string): void {
  checkedOrigins.set(request, origin);
}

/** Base URL for absolute `src`/`frame_url` links: --public-url, or the request's checked Host. */
export function originOf(request: Request): string {
  const origin = checkedOrigins.get(request);
  if (origin === undefined) throw badRequest('the Host header was not checked');
  return origin;
}
