/**
 * The OpenAPI 3.1 document, built from the routes themselves (their `t` schemas and `detail`), so
 * it cannot drift from what the server validates. Rules every operation follows (checked by
 * test/openapi.test.ts): a camelCase operationId, JSON request bodies only, every response with
 * its content, named components for shared schemas.
 */
import { ErrorBody } from '../models';
import { nameOf, SchemaConverter, type JsonSchema } from './schema';

export interface RouteLike {
  method: string;
  path: string;
  hooks?: {
    body?: unknown;
    query?: unknown;
    params?: unknown;
    response?: unknown;
    detail?: Record<string, unknown> & { hide?: boolean; operationId?: string; responses?: Record<string, unknown> };
  };
}

export interface DocumentInfo {
  title: string;
  version: string;
  description: string;
  tags: { name: string; description: string }[];
}

type Obj = Record<string, any>;

const OPTIONAL = Symbol.for('TypeBox.Optional');
const KIND = Symbol.for('TypeBox.Kind');

const STATUS_TEXT: Record<string, string> = {
  200: 'OK',
  206: 'the requested byte range',
  400: 'invalid request (the message names the field), or insufficient credits',
  401: 'missing, unknown or revoked token',
  403: "another user's id, a refused URL, or an invalid or expired link",
  404: 'unknown index, video or file (also for another user\'s)',
  413: 'the request body or the file is too large',
  415: 'not a media file, or a still image',
  416: 'the range cannot be satisfied',
  422: 'no video stream, an unusable duration, or a file cut short',
  502: 'the source is unreachable or misbehaving',
  507: 'not enough free disk space',
};

/** A request body that the server takes: JSON only (anything else is a 400). */
const JSON_TYPE = 'application/json';

export function buildDocument(routes: readonly RouteLike[], info: DocumentInfo): Obj {
  const conv = new SchemaConverter();
  const paths: Obj = {};
  for (const route of routes) {
    const hooks = route.hooks ?? {};
    const detail = hooks.detail ?? {};
    const method = route.method.toLowerCase();
    if (detail.hide || !['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
    const path = route.path.replace(/:([^/]+)/g, '{$1}');
    const { hide: _hide, responses: extraResponses, operationId, ...rest } = detail;
    const op: Obj = { operationId: operationId ?? defaultOperationId(method, route.path), ...rest };

    const given = (rest.parameters as Obj[] | undefined) ?? []; // e.g. a header the handler reads itself
    const parameters = [...parametersOf(conv, hooks.params, 'path'), ...parametersOf(conv, hooks.query, 'query'), ...given];
    if (parameters.length) op.parameters = parameters;

    if (hooks.body !== undefined && method !== 'get') {
      const body = hooks.body as Obj;
      const media: Obj = { schema: conv.convert(body) };
      const example = (body.examples as unknown[] | undefined)?.[0];
      if (example !== undefined) media.example = example;
      op.requestBody = { required: !(OPTIONAL in body), content: { [JSON_TYPE]: media } };
    }

    op.responses = responsesOf(conv, hooks.response, extraResponses);
    // Every body passes the same size and shape checks (src/http/body.ts) before the handler.
    if (op.requestBody) {
      op.responses[400] ??= errorResponse(conv, 400);
      op.responses[413] ??= errorResponse(conv, 413);
    }
    op.responses = Object.fromEntries(Object.entries(op.responses).sort(([a], [b]) => a.localeCompare(b)));
    (paths[path] ??= {})[method] = op;
  }
  return {
    openapi: '3.1.0',
    info: { title: info.title, version: info.version, description: info.description },
    tags: info.tags,
    paths,
    components: { schemas: Object.fromEntries([...conv.components].sort(([a], [b]) => a.localeCompare(b))) },
  };
}

/** `POST /remote-upload` → `postRemoteUpload`; `DELETE /indexes/:index_id` → `deleteIndexesIndexId`. */
export function defaultOperationId(method: string, path: string): string {
  const words = path.split(/[^A-Za-z0-9]+/).filter(Boolean);
  return method.toLowerCase() + words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');
}

function parametersOf(conv: SchemaConverter, schema: unknown, where: 'path' | 'query'): Obj[] {
  if (!schema) return [];
  const s = conv.inline(schema);
  const required = new Set((s.required as string[] | undefined) ?? []);
  return Object.entries((s.properties ?? {}) as Record<string, JsonSchema>).map(([name, prop]) => {
    const { description, ...rest } = prop;
    return { name, in: where, required: where === 'path' || required.has(name), ...(description !== undefined && { description }), schema: rest };
  });
}

function responsesOf(conv: SchemaConverter, response: unknown, extra: Record<string, unknown> | undefined): Obj {
  const out: Obj = {};
  if (response && typeof response === 'object') {
    const single = KIND in response || 'type' in response || '$ref' in response;
    const map = (single ? { 200: response } : response) as Record<string, unknown>;
    for (const [status, schema] of Object.entries(map)) {
      out[status] = { description: describe(status, schema), content: { [JSON_TYPE]: { schema: conv.convert(schema), ...errorExample(status, schema) } } };
    }
  }
  // Hand-written responses (streams, files, images) are merged in; schemas inside are converted.
  for (const [status, r] of Object.entries(extra ?? {})) {
    // A bare schema (e.g. `404: ErrorBody`) stands for a JSON body of that schema.
    const given = (r !== null && typeof r === 'object' && KIND in r ? { content: { [JSON_TYPE]: { schema: r } } } : r) as Obj;
    const content = given.content ? Object.fromEntries(Object.entries(given.content as Obj).map(([type, m]) => [type, { ...convertMedia(conv, m), ...errorExample(status, m.schema) }])) : undefined;
    out[status] = {
      ...out[status],
      ...given,
      description: given.description ?? out[status]?.description ?? describe(status, undefined),
      ...(content && { content: { ...out[status]?.content, ...content } }),
    };
  }
  return out;
}

/** `schema`, and `x-event-data` (the JSON in each `data:` of an event stream), are schemas. */
function convertMedia(conv: SchemaConverter, media: Obj): Obj {
  const out = { ...media };
  for (const k of ['schema', 'x-event-data']) if (out[k]) out[k] = conv.convert(out[k]);
  return out;
}

/** Swagger UI shows `"error": 404`, not a made-up 0, on an error response. */
function errorExample(status: string, schema: unknown): Obj {
  return nameOf(schema) === 'Error' ? { example: { error: Number(status), message: STATUS_TEXT[status] ?? 'what went wrong' } } : {};
}

function describe(status: string, schema: unknown): string {
  if (nameOf(schema) === 'Error' || !schema) return STATUS_TEXT[status] ?? `status ${status}`;
  return ((schema as Obj).description as string | undefined) ?? STATUS_TEXT[status] ?? `status ${status}`;
}

function errorResponse(conv: SchemaConverter, status: number): Obj {
  return { description: STATUS_TEXT[status]!, content: { [JSON_TYPE]: { schema: conv.convert(ErrorBody), ...errorExample(String(status), ErrorBody) } } };
}
