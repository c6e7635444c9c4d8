/**
 * API documentation: /openapi.json (built from the route schemas, see openapi/document.ts) and
 * Swagger UI at /swagger (and /swagger/), whose assets are served by the service itself (embedded
 * in the executable), so the page works offline.
 */
import { Elysia } from 'elysia';
// Imported as files: Bun embeds them in the compiled executable and gives back their path.
import swaggerBundle from 'swagger-ui-dist/swagger-ui-bundle.js' with { type: 'file' };
import swaggerCss from 'swagger-ui-dist/swagger-ui.css' with { type: 'file' };
import { API_DESCRIPTION } from './api-description';
import { originOf } from './auth';
import { buildDocument, type RouteLike } from './openapi/document';

const ASSETS: Record<string, { path: string; type: string }> = {
  'swagger-ui-bundle.js': { path: swaggerBundle as unknown as string, type: 'text/javascript; charset=utf-8' },
  'swagger-ui.css': { path: swaggerCss as unknown as string, type: 'text/css; charset=utf-8' },
};

const INFO = {
  title: 'vidq — self-hosted video understanding API',
  version: '1.0.0',
  description: API_DESCRIPTION,
  tags: [
    { name: 'ingest', description: 'Adding and removing videos' },
    { name: 'inquire', description: 'Questions about indexed videos' },
    { name: 'indexes', description: 'Indexes and their media resources' },
    { name: 'media', description: 'Streaming stored files' },
    { name: 'people', description: 'People of an index (faces grouped by likeness)' },
    { name: 'exports', description: "A video's analysis as files: subtitles and insights" },
  ],
};

/** The page: relative URLs, so it works at /swagger and /swagger/ (and behind a path prefix). */
const page = (up: string) => `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${INFO.title}</title>
<link rel="stylesheet" href="${up}swagger-assets/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${up}swagger-assets/swagger-ui-bundle.js"></script>
<script>window.onload = () => { window.ui = SwaggerUIBundle({ url: '${up}openapi.json', dom_id: '#swagger-ui', deepLinking: true }); };</script>
</body>
</html>`;

/** `routes` gives the app's routes when the document is first asked for (all are registered by then). */
export function docsPlugin(routes: () => readonly RouteLike[]) {
  let doc: Record<string, unknown> | undefined;
  return new Elysia({ name: 'docs' })
    .get(
      '/openapi.json',
      ({ request }) => {
        doc ??= buildDocument(routes(), INFO);
        // `servers` follows the address this request came to, so "Try it out" calls this server.
        const { openapi, info, ...rest } = doc;
        return { openapi, info, servers: [{ url: originOf(request) }], ...rest };
      },
      { detail: { hide: true } },
    )
    .get(
      '/swagger',
      ({ request }) =>
        new Response(page(new URL(request.url).pathname.endsWith('/') ? '../' : ''), { headers: { 'content-type': 'text/html; charset=utf-8' } }),
      { detail: { hide: true } },
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
        return new Response(Bun.file(asset.path), { headers: { 'content-type': asset.type, 'cache-control': 'public, max-age=86400' } });
      },
      { detail: { hide: true } },
    );
}
