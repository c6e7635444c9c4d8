/**
 * The HTTP application: error mapping (every error is the spec's `{error, message}`), API docs,
 * and one plugin per feature. Routes stay thin: they validate, authenticate and call a service.
 */
import { clusterHealth } from '../cluster/health';
import { Elysia } from 'elysia';
import { ApiError, errorBody } from '../errors';
import { setOrigin } from './auth';
import { bodyLimitOf, checkParsedBody, drainBody, limitBody, NATIVE_BODY_LIMIT } from './body';
import { hostCheck, pathOf } from './host';
import type { Service } from '../service';
import { decoderHealth, decoderInfo } from '../media/decoder';
import { docsPlugin } from './docs';
import type { HttpOptions } from './options';
import { exportRoutes } from './routes/exports';
import { fileUploadRoutes } from './routes/file-upload';
import type { RouteLike } from './openapi/document';
import { hostedRoutes } from './routes/hosted';
import { indexRoutes } from './routes/indexes';
import { inquireRoutes } from './routes/inquire';
import { liveRoutes } from './routes/live';
import { mediaRoutes } from './routes/media';
import { mcpRoutes } from '../mcp/http';
import { searchRoutes } from './routes/search';
import { sdkSearchRoutes } from './routes/sdk-search';
import { flowRoutes } from './routes/flows';
import { peopleRoutes } from './routes/people';
import { uiRoutes } from './routes/ui';
import { uploadRoutes } from './routes/upload';
import { videoRoutes } from './routes/videos';
import { webhookRoutes } from './routes/webhooks';

export function createHttpApp(s: Service, opts: HttpOptions) {
  const hosts = hostCheck(s.config);
  // The document is built from the finished app's routes, registered after the docs plugin.
  let routes: () => readonly RouteLike[] = () => [];
  // development: false, always: Bun's development error page shows paths and source lines.
  const app = new Elysia({ serve: { maxRequestBodySize: NATIVE_BODY_LIMIT, development: false } })
    .onRequest((c) => {
      // Headers first, so that refusals carry them too.
      c.set.headers['x-content-type-options'] = 'nosniff';
      if (/^\/swagger(\/|$)/.test(pathOf(c.request))) {
        c.set.headers['content-security-policy'] =
          "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'";
        c.set.headers['x-frame-options'] = 'DENY';
      }
      const origin = hosts.check(c.request);
      // Bodies are limited here, not by Bun, so that a refusal has the error shape (see body.ts).
      c.request = limitBody(c.request, bodyLimitOf(c.request, s.config));
      setOrigin(c.request, origin);
    })
    .onTransform(({ body }) => checkParsedBody(body))
    // The path only: query strings carry tokens and link signatures.
    .onAfterResponse(({ request, set }) =>
      s.log.debug('request', { method: request.method, path: pathOf(request), status: set.status }),
    )
    .onError(async ({ code, error, set, request }) => {
      let { status, message } = toStatusMessage(code, error);
      // A path that exists for other methods: 405 with the methods it has (not "no such endpoint").
      const allowed = status === 404 && code === 'NOT_FOUND' ? allowedMethods(routes(), pathOf(request)) : [];
      if (allowed.length) {
        status = 405;
        message = `${request.method} is not allowed here; this endpoint takes ${allowed.join(', ')}`;
        set.headers.allow = allowed.join(', ');
      }
      // Clients that send the whole body before reading (Python's urllib) read the refusal only
      // if the body was read: what is left of it is read and dropped, within limits (body.ts).
      await drainBody(request);
      if (status === 500)
        s.log.error('request failed', {
          method: request.method,
          path: pathOf(request),
          status,
          reason: message,
          // The details the client is told are here (never sent to it).
          error: error instanceof Error ? (error.stack ?? error.message) : String(error),
        });
      set.status = status;
      set.headers['content-type'] = 'application/json';
      return errorBody(status, message);
    })
    .use(docsPlugin(() => routes(), s.config))
    .get(
      '/health',
      async () => ({
        status: 'ok',
        search_index: s.retrieval.annState(),
        // Which ffmpeg decodes uploads and live sources, and a warning when it is not maintained.
        decoder: await decoderInfo(s.files.binDir).then(decoderHealth, () => ({
          error: 'ffmpeg or ffprobe could not be run',
        })),
        // The database, the job queue and the nodes (issue 33).
        cluster: await clusterHealth(s).catch((e) => ({
          error: `the catalog could not be read: ${(e as Error).message}`,
        })),
      }),
      { detail: { hide: true } },
    )
    .use(uploadRoutes(s))
    .use(hostedRoutes(s))
    .use(fileUploadRoutes(s))
    .use(searchRoutes(s))
    .use(sdkSearchRoutes(s))
    .use(flowRoutes(s))
    .use(exportRoutes(s))
    .use(webhookRoutes(s))
    .use(inquireRoutes(s))
    .use(indexRoutes(s, opts))
    .use(mediaRoutes(s))
    .use(videoRoutes(s))
    .use(peopleRoutes(s))
    .use(liveRoutes(s))
    .use(mcpRoutes(s))
    .use(uiRoutes());
  routes = () => app.routes;
  return app;
}

export type HttpApp = ReturnType<typeof createHttpApp>;

/** The methods routed for a path (`:param` segments match any one segment); HEAD goes with GET. */
function allowedMethods(routes: readonly RouteLike[], path: string): string[] {
  const methods = new Set<string>();
  for (const r of routes) {
    const pattern = new RegExp(
      `^${r.path
        .split('/')
        .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg === '*' ? '.*' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
        .join('/')}/?$`,
    );
    if (pattern.test(path)) methods.add(r.method.toUpperCase());
  }
  if (methods.has('GET')) methods.add('HEAD');
  return [...methods].sort();
}

function toStatusMessage(code: string | number, error: unknown): { status: number; message: string } {
  if (error instanceof ApiError) return { status: error.status, message: error.message };
  // Elysia wraps what a body parser throws (ours: 400 invalid JSON, 413 too large).
  const cause = (error as { cause?: unknown } | null)?.cause;
  if (cause instanceof ApiError) return { status: cause.status, message: cause.message };
  switch (code) {
    case 'VALIDATION':
      return validationMessage(error as ValidationLike);
    case 'PARSE':
      return {
        status: 400,
        message: 'the request body is not valid JSON; send a JSON object with the documented fields',
      };
    case 'NOT_FOUND':
      return { status: 404, message: 'no such endpoint; see /swagger for the API' };
    case 'INVALID_COOKIE_SIGNATURE':
      return { status: 400, message: 'invalid cookie' };
  }
  const e = error as { status?: number; message?: string };
  if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500)
    return { status: e.status, message: e.message || 'bad request' };
  if (e?.message && /body.*(too large|exceed)|payload too large|request entity too large/i.test(e.message))
    return { status: 413, message: 'the request body is too large' };
  return { status: 500, message: 'internal error; the server log has details' };
}

interface UnionBranch {
  type?: string;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
}

/**
 * What a value that fits no branch of a union did wrong: the limit of the branch of its own type
 * (a string over `maxLength`, a number under `minimum`), else the types the field takes.
 */
function unionMessage(schema: unknown, given: unknown, field: string): string {
  const branches = (schema as { anyOf?: UnionBranch[] } | undefined)?.anyOf ?? [];
  if (branches.some((s) => s.type === 'integer') && !branches.some((s) => s.type === 'object'))
    return 'must be a whole number';
  // `given` is the top-level field; a nested field's value is not at hand.
  const value = field.includes('.') ? undefined : given;
  const own = branches.find((s) => s.type === (typeof value === 'number' ? 'number' : typeof value));
  if (typeof value === 'string' && own?.maxLength !== undefined && value.length > own.maxLength)
    return `must be at most ${own.maxLength}`;
  if (typeof value === 'number' && own?.minimum !== undefined && value < own.minimum) return `must be ≥ ${own.minimum}`;
  if (typeof value === 'number' && own?.maximum !== undefined && value > own.maximum) return `must be ≤ ${own.maximum}`;
  const types = [...new Set(branches.map((s) => s.type).filter((t): t is string => !!t && t !== 'null'))];
  return types.length
    ? `must be ${types.map((t) => (/^[aeiou]/.test(t) ? 'an ' : 'a ') + t).join(' or ')}`
    : 'has an unexpected type';
}

interface ValidationLike {
  type?: string;
  value?: unknown;
  valueError?: { path: string; message: string; schema?: { description?: string } };
}

/** A missing token is 401 (unauthenticated); any other schema failure is 400 naming the field. */
function validationMessage(err: ValidationLike): { status: number; message: string } {
  const ve = err.valueError;
  const where = err.type === 'query' ? 'query parameter' : 'field';
  if (!ve) return { status: 400, message: `invalid ${err.type ?? 'request'}` };
  const field = ve.path.replace(/^\//, '').replace(/\//g, '.');
  const value = err.value as Record<string, unknown> | undefined;
  if (field === 'token' && (value == null || typeof value !== 'object' || value.token === undefined)) {
    return { status: 401, message: 'a valid token is required (field "token")' };
  }
  if (!field)
    return {
      status: 400,
      message:
        err.type === 'query'
          ? 'the request query is not valid; see /swagger for the parameters'
          : 'the request body must be a JSON object with the documented fields (Content-Type: application/json)',
    };
  const given =
    value && typeof value === 'object' ? (value as Record<string, unknown>)[field.split('.')[0]!] : undefined;
  if (given === undefined && !field.includes('.')) return { status: 400, message: `${where} "${field}" is required` };
  const msg = ve.message
    .replace('Expected string length greater or equal to', 'must be at least')
    .replace('Expected string length less or equal to', 'must be at most')
    .replace(/^Expected required property$/, 'is required')
    .replace(
      /^Expected (string|number|integer|boolean|object|array)$/,
      (_, type: string) => `must be ${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`,
    )
    // A t.Integer query parameter is checked as "a numeric string or an integer".
    .replace(/^Expected union value$/, () => unionMessage(ve.schema, given, field));
  const units = /must be at (least|most) \d+$/.test(msg) ? ' characters' : '';
  return { status: 400, message: `${where} "${field}" ${msg.charAt(0).toLowerCase()}${msg.slice(1)}${units}` };
}
