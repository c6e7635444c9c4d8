import { Elysia } from 'elysia';
import type { AccountService } from '../accounts/service';
import { badRequest, unauthorized } from '../errors';
import type { User } from '../storage/rows';

/** The token of a request: the spec's `token` field/parameter, or an Authorization: Bearer header. */
export function tokenOf(explicit: unknown, request: Request): string | undefined {
  if (typeof explicit === 'string' && explicit !== '') return explicit;
  const h = request.headers.get('authorization');
  const m = h ? /^Bearer\s+(\S+)$/i.exec(h) : null;
  return m?.[1];
}

/** The `token` a request names: the body's field for a JSON body, the query parameter otherwise. */
function namedToken(body: unknown, query: unknown): unknown {
  if (body !== null && typeof body === 'object' && 'token' in body) return (body as { token?: unknown }).token;
  return (query as { token?: unknown } | undefined)?.token;
}

/** OpenAPI security of a route that takes a token: a Bearer header, or the `token` field/parameter. */
export const SECURITY_SCHEMES = {
  bearer: { type: 'http', scheme: 'bearer', description: 'the user token as `Authorization: Bearer <token>`' },
  token: {
    type: 'apiKey',
    in: 'query',
    name: 'token',
    description: 'the user token as the `token` query parameter (in a JSON body: its `token` field)',
  },
} as const;
export const TOKEN_REQUIRED: Record<string, string[]>[] = [{ bearer: [] }, { token: [] }];
/** Also answered without a token (a signed link, a stream id, anonymous listing on loopback). */
export const TOKEN_OPTIONAL: Record<string, string[]>[] = [{}, ...TOKEN_REQUIRED];

/**
 * Authentication, written once: a route that sets `auth: true` gets `user` (401 before the
 * handler runs when the token is missing, unknown or revoked); `maybeAuth: true` gets `user` or
 * null when no token was sent (a token that was sent must still be valid); `linkOrAuth: true` gets
 * null for a request with a signed link's `sig`/`expires` (the route checks the link), else the
 * token's user. Runs after the
 * request's schema is checked, so a malformed request is a 400 whatever its token.
 */
export function authentication(accounts: AccountService) {
  return new Elysia().macro({
    auth: {
      detail: { security: TOKEN_REQUIRED },
      resolve: async ({ body, query, request }) => ({
        user: await accounts.authenticate(tokenOf(namedToken(body, query), request)),
      }),
    },
    // A signed link (checked by the route: it is for one path) or the owner's token.
    linkOrAuth: {
      detail: { security: TOKEN_OPTIONAL },
      resolve: async ({ query, request }) => {
        const q = query as { token?: unknown; sig?: unknown; expires?: unknown } | undefined;
        if (q?.sig !== undefined || q?.expires !== undefined) return { user: null };
        const token = tokenOf(q?.token, request);
        if (token === undefined) throw unauthorized('a signed link or a token is required');
        return { user: (await accounts.authenticate(token)) as User | null };
      },
    },
    maybeAuth: {
      detail: { security: TOKEN_OPTIONAL },
      resolve: async ({ body, query, request }) => {
        const token = tokenOf(namedToken(body, query), request);
        return { user: token === undefined ? null : await accounts.authenticate(token) };
      },
    },
  });
}

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
