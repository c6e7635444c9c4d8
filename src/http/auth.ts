/** The token of a request: the spec's `token` field/parameter, or an Authorization: Bearer header. */
export function tokenOf(explicit: unknown, request: Request): string | undefined {
  if (typeof explicit === 'string' && explicit !== '') return explicit;
  const h = request.headers.get('authorization');
  const m = h ? /^Bearer\s+(\S+)$/i.exec(h) : null;
  return m?.[1];
}

/** Base URL of this server as the client reached it (for absolute `src` links). */
export function originOf(request: Request): string {
  return new URL(request.url).origin;
}
