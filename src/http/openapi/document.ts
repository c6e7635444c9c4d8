/**
 * The normalisation pass over the document that @elysiajs/openapi generates from the routes
 * (see docs.ts for why each step is needed). The plugin gives the paths, operations, operationIds,
 * tags, summaries, parameters, request bodies and response schemas; this pass only rewrites the
 * schemas (named components, integers as integers), keeps request bodies to JSON, and merges back
 * what the plugin leaves out (`detail.responses`, `detail.parameters`, error examples). Rules every
 * operation follows (checked by test/openapi.test.ts): a camelCase operationId, JSON request bodies
 * only, every response with its content, named components for shared schemas.
 */
import { SECURITY_SCHEMES } from '../auth';
import { ErrorBody } from '../models';
import { nameOf, SchemaConverter } from './schema';

export interface RouteLike {
  method: string;
  path: string;
  hooks?: {
    body?: unknown;
    detail?: Record<string, unknown> & {
      hide?: boolean;
      operationId?: string;
      responses?: Record<string, unknown>;
      parameters?: unknown[];
    };
  };
}

type Obj = Record<string, any>;

const OPTIONAL = Symbol.for('TypeBox.Optional');
const KIND = Symbol.for('TypeBox.Kind');

const isSchema = (r: unknown): boolean =>
  r !== null && typeof r === 'object' && (KIND in r || '$ref' in r || 'type' in r);

const STATUS_TEXT: Record<string, string> = {
  200: 'OK',
  206: 'the requested byte range',
  400: 'invalid request (the message names the field), or insufficient credits',
  401: 'missing, unknown or revoked token',
  403: "another user's id, a refused URL, or an invalid or expired link",
  404: "unknown index, video or file (also for another user's)",
  413: 'the request body or the file is too large',
  415: 'not a media file, or a still image',
  416: 'the range cannot be satisfied',
  422: 'no video stream, an unusable duration, or a file cut short',
  502: 'the source is unreachable or misbehaving',
  507: 'not enough free disk space',
};

/** A request body that the server takes: JSON only (anything else is a 400). */
const JSON_TYPE = 'application/json';

/** `generated`: the plugin's document; `routes` give each operation's `detail` and body schema. */
export function normaliseDocument(generated: Obj, routes: readonly RouteLike[], description: string): Obj {
  const conv = new SchemaConverter();
  const byKey = new Map(routes.map((r) => [`${r.method.toLowerCase()} ${r.path.replace(/:([^/]+)/g, '{$1}')}`, r]));
  const paths: Obj = {};
  for (const [path, item] of Object.entries(generated.paths as Obj)) {
    for (const [method, given] of Object.entries(item as Obj)) {
      const hooks = byKey.get(`${method} ${path}`)?.hooks ?? {};
      const detail = hooks.detail ?? {};
      const {
        responses: generatedResponses,
        parameters: generatedParameters,
        requestBody,
        hide: _hide,
        ...rest
      } = given as Obj;
      const op: Obj = { ...rest };
      // Set by the authentication macro (auth.ts) or by the route; none: the endpoint is open.
      op.security = (detail.security as unknown[] | undefined) ?? [];
      // The plugin's own ids keep the path's hyphens (`postRemote-upload`).
      if (!/^[a-z][A-Za-z0-9]*$/.test(op.operationId ?? '')) op.operationId = defaultOperationId(method, path);

      // The plugin replaces `detail.parameters` (e.g. a header the handler reads itself) with its own.
      const parameters = [
        ...((generatedParameters as Obj[] | undefined) ?? []).map((p) => parameter(conv, p)),
        ...((detail.parameters as Obj[] | undefined) ?? []),
      ];
      if (parameters.length) op.parameters = parameters;

      if (requestBody && hooks.body === undefined) {
        op.requestBody = requestBody; // a hand-written `detail.requestBody` (a file upload) as it is
      } else if (requestBody) {
        // The route's own schema, which keeps TypeBox's Optional mark.
        const body = hooks.body as Obj;
        const media: Obj = { schema: conv.convert(body) };
        const example = (body.examples as unknown[] | undefined)?.[0];
        if (example !== undefined) media.example = example;
        op.requestBody = { required: !(OPTIONAL in body), content: { [JSON_TYPE]: media } };
      }

      // Without a response schema the plugin passes `detail.responses` through as they are; they are merged below.
      const generatedJson =
        generatedResponses === detail.responses ? undefined : (generatedResponses as Obj | undefined);
      op.responses = responsesOf(conv, generatedJson, detail.responses);
      // Every body passes the same size and shape checks (src/http/body.ts) before the handler.
      if (op.requestBody) {
        op.responses[400] ??= errorResponse(conv, 400);
        op.responses[413] ??= errorResponse(conv, 413);
      }
      op.responses = Object.fromEntries(Object.entries(op.responses).sort(([a], [b]) => a.localeCompare(b)));
      (paths[path] ??= {})[method] = op;
    }
  }
  const { components: _components, info, paths: _paths, ...top } = generated;
  return {
    ...top,
    info: { ...info, description },
    paths,
    components: {
      schemas: Object.fromEntries([...conv.components].sort(([a], [b]) => a.localeCompare(b))),
      securitySchemes: SECURITY_SCHEMES,
    },
  };
}

/** `POST /remote-upload` → `postRemoteUpload`; `DELETE /indexes/:index_id` → `deleteIndexesIndexId`. */
export function defaultOperationId(method: string, path: string): string {
  const words = path.split(/[^A-Za-z0-9]+/).filter(Boolean);
  return method.toLowerCase() + words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');
}

/** The plugin's parameter with its schema converted; the schema's description moves up to the parameter. */
function parameter(conv: SchemaConverter, p: Obj): Obj {
  const { description, ...schema } = conv.inline(p.schema);
  return { ...p, ...(description !== undefined && { description }), schema };
}

/** The plugin's JSON responses (schemas converted, error examples added), then `detail.responses` merged in. */
function responsesOf(
  conv: SchemaConverter,
  generated: Obj | undefined,
  extra: Record<string, unknown> | undefined,
): Obj {
  const out: Obj = {};
  for (const [status, r] of Object.entries(generated ?? {}) as [string, Obj][]) {
    const schema = r.content?.[JSON_TYPE]?.schema ?? (Object.values(r.content ?? {})[0] as Obj | undefined)?.schema;
    out[status] = {
      description: describe(status, schema),
      content: { [JSON_TYPE]: { schema: conv.convert(schema), ...errorExample(status, schema) } },
    };
  }
  // Hand-written responses (streams, files, images) are merged in; schemas inside are converted.
  for (const [status, r] of Object.entries(extra ?? {})) {
    // A schema given as the response itself (`401: ErrorBody`) is its JSON body.
    const given = isSchema(r) ? { content: { [JSON_TYPE]: { schema: r } } } : (r as Obj);
    const content = given.content
      ? Object.fromEntries(
          Object.entries(given.content as Obj).map(([type, m]) => [
            type,
            { ...convertMedia(conv, m), ...errorExample(status, m.schema) },
          ]),
        )
      : undefined;
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
  return nameOf(schema) === 'Error'
    ? { example: { error: Number(status), message: STATUS_TEXT[status] ?? 'what went wrong' } }
    : {};
}

function describe(status: string, schema: unknown): string {
  if (nameOf(schema) === 'Error' || !schema) return STATUS_TEXT[status] ?? `status ${status}`;
  return ((schema as Obj).description as string | undefined) ?? STATUS_TEXT[status] ?? `status ${status}`;
}

function errorResponse(conv: SchemaConverter, status: number): Obj {
  return {
    description: STATUS_TEXT[status]!,
    content: { [JSON_TYPE]: { schema: conv.convert(ErrorBody), ...errorExample(String(status), ErrorBody) } },
  };
}
