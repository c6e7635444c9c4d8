/**
 * API documentation through the product's stack, the @elysiajs/openapi plugin: it generates
 * /openapi.json from the routes (OpenAPI 3.1.2) and serves Swagger UI at /swagger, with the
 * Swagger UI assets served by this service (embedded in the executable), so the page works offline.
 *
 * The plugin's document is not valid as it comes for this API's users (issue 15), so a thin pass
 * of ours (openapi/document.ts) runs over it once; what it fixes and why:
 * - named components (`Error`, `Index`, …): the plugin inlines every TypeBox schema, so generated
 *   clients would get no named types; our `named()` schemas become `$ref`s;
 * - integers: Elysia's t.Integer/t.Numeric are "string or integer" unions (for query strings);
 *   the plugin keeps both, generated types become `string | number`;
 * - request bodies: the plugin lists JSON, urlencoded and multipart; the server takes JSON only
 *   (orval then sends no Content-Type); and it marks every body required (restoreIndex's is not);
 * - `detail.responses` and `detail.parameters`: the plugin drops them when a route has a response
 *   schema or parameters (the SSE answer of /remote-upload, the Range header of /media);
 * - errors: examples carrying their status (`"error": 404`, not 0), descriptions per status, and
 *   the 400/413 every body can get;
 * - `servers`: the address each request came to, so "Try it out" calls this server.
 */
import { Elysia } from 'elysia';
import { openapi } from '@elysiajs/openapi';
// Imported as files: Bun embeds them in the compiled executable and gives back their path.
import swaggerBundle from 'swagger-ui-dist/swagger-ui-bundle.js' with { type: 'file' };
import swaggerCss from 'swagger-ui-dist/swagger-ui.css' with { type: 'file' };
import { apiDescription } from './api-description';
import { originOf } from './auth';
import { normaliseDocument, type RouteLike } from './openapi/document';

const ASSETS: Record<string, { path: string; type: string }> = {
  'swagger-ui-bundle.js': { path: swaggerBundle as unknown as string, type: 'text/javascript; charset=utf-8' },
  'swagger-ui.css': { path: swaggerCss as unknown as string, type: 'text/css; charset=utf-8' },
};

const TITLE = 'vidq — self-hosted video understanding API';
const TAGS = [
  { name: 'ingest', description: 'Adding and removing videos' },
  { name: 'inquire', description: 'Questions about indexed videos' },
  { name: 'indexes', description: 'Indexes and their media resources' },
  { name: 'media', description: 'Streaming stored files' },
  { name: 'people', description: 'People of an index (faces grouped by likeness)' },
  { name: 'exports', description: "A video's analysis as files: subtitles and insights" },
  { name: 'accounts', description: "Tokens (the hosted API's token check)" },
  { name: 'flows', description: "The hosted API's flows: search, clipping, scene detection, content moderation" },
  {
    name: 'live',
    description: 'Live streams (pushed frames, cameras, live playlists) and standing questions (alerts)',
  },
];

/** The plugin's `exclude`: routes with a dot in their path (transcript.vtt) are API operations here, not static files. */
export const EXCLUDE = { staticFile: false };

type Doc = Record<string, unknown>;

/** `routes` gives the app's routes (their `detail`) when the document is first asked for. */
export function docsPlugin(routes: () => readonly RouteLike[], limits: { maxBodyBytes: number }) {
  const description = apiDescription(limits);
  const normalised = new WeakMap<object, Doc>();
  return (
    new Elysia({ name: 'docs' })
      // The plugin's page resolves its relative URLs against /swagger; /swagger/ (the same route) is sent there.
      .onBeforeHandle(({ request }) =>
        new URL(request.url).pathname.endsWith('/swagger/')
          ? new Response(null, { status: 308, headers: { location: '../swagger' } })
          : undefined,
      )
      // Registered before the plugin, so that it applies to the plugin's routes (and ours) only.
      .onAfterHandle(({ request, response }) => {
        if (
          new URL(request.url).pathname !== '/openapi.json' ||
          !response ||
          typeof response !== 'object' ||
          response instanceof Response
        )
          return;
        // The plugin hands back the same object until a route is added: normalise it once.
        let doc = normalised.get(response);
        if (!doc) normalised.set(response, (doc = normaliseDocument(response as Doc, routes(), description)));
        // `servers` follows the address this request came to, so "Try it out" calls this server.
        const { openapi: version, info, ...rest } = doc;
        return Response.json({ openapi: version, info, servers: [{ url: originOf(request) }], ...rest });
      })
      .use(
        openapi({
          provider: 'swagger-ui',
          path: '/swagger',
          specPath: '/openapi.json',
          exclude: EXCLUDE,
          // The page's <meta description> takes info.description unescaped: a plain line here, the
          // full Markdown description is set by normaliseDocument.
          documentation: { info: { title: TITLE, version: '1.0.0', description: 'The vidq HTTP API' }, tags: TAGS },
          // Relative URLs (the page is /swagger): this server's copies, never a CDN.
          swagger: {
            cdn: 'swagger-assets/swagger-ui-bundle.js',
            theme: 'swagger-assets/swagger-ui.css',
            autoDarkMode: false,
            deepLinking: true,
          },
        }),
      )
      .get(
        '/swagger-assets/:name',
        ({ params, set }) => {
          // Own properties only: `constructor`, `__proto__` or `toString` would find Object's members (a 500).
          const asset = Object.hasOwn(ASSETS, params.name) ? ASSETS[params.name] : undefined;
          if (!asset) {
            set.status = 404;
            return { error: 404, message: 'no such asset' };
          }
          return new Response(Bun.file(asset.path), {
            headers: { 'content-type': asset.type, 'cache-control': 'public, max-age=86400' },
          });
        },
        { detail: { hide: true } },
      )
  );
}
