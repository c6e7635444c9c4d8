/**
 * API documentation: /openapi.json (generated from the route schemas) and Swagger UI at /swagger,
 * whose assets are served by the service itself (embedded in the executable), so the page works
 * offline. The plugin's default would load them from a CDN.
 */
import { openapi } from '@elysiajs/openapi';
import { Elysia } from 'elysia';
// Imported as files: Bun embeds them in the compiled executable and gives back their path.
import swaggerBundle from 'swagger-ui-dist/swagger-ui-bundle.js' with { type: 'file' };
import swaggerCss from 'swagger-ui-dist/swagger-ui.css' with { type: 'file' };
import { API_DESCRIPTION } from './api-description';

const ASSETS: Record<string, { path: string; type: string }> = {
  'swagger-ui-bundle.js': { path: swaggerBundle as unknown as string, type: 'text/javascript; charset=utf-8' },
  'swagger-ui.css': { path: swaggerCss as unknown as string, type: 'text/css; charset=utf-8' },
};

export function docsPlugin() {
  return new Elysia({ name: 'docs' })
    .use(
      openapi({
        path: '/swagger',
        specPath: '/openapi.json',
        provider: 'swagger-ui',
        openapiVersion: '3.0.3',
        // Routes with a dot are documented too (GET /videos/{file_id}/transcript.vtt …); the
        // page's own files are hidden by their routes.
        exclude: { staticFile: false },
        swagger: { cdn: '/swagger-assets/swagger-ui-bundle.js', theme: '/swagger-assets/swagger-ui.css', autoDarkMode: false },
        documentation: {
          info: { title: 'vidq — self-hosted video understanding API', version: '1.0.0', description: API_DESCRIPTION },
          tags: [
            { name: 'ingest', description: 'Adding and removing videos' },
            { name: 'inquire', description: 'Questions about indexed videos' },
            { name: 'indexes', description: 'Indexes and their media resources' },
            { name: 'media', description: 'Streaming stored files' },
            { name: 'exports', description: "A video's analysis as files: subtitles and insights" },
          ],
        },
      }),
    )
    .get(
      '/swagger-assets/:name',
      ({ params, set }) => {
        const asset = ASSETS[params.name];
        if (!asset) {
          set.status = 404;
          return { error: 404, message: 'no such asset' };
        }
        return new Response(Bun.file(asset.path), { headers: { 'content-type': asset.type, 'cache-control': 'public, max-age=86400' } });
      },
      { detail: { hide: true } },
    );
}
