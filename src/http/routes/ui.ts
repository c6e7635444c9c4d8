/**
 * The web page at `/`: one HTML file, one ES module and one stylesheet (src/http/ui/). The HTML and
 * the stylesheet are imported as files so that Bun embeds them in the compiled executable, as it
 * does the Swagger UI assets; the ES module is the page's TypeScript bundled by Bun (page-script.ts). No
 * CDN, no fonts, no framework. The assets are read once, gzipped once, and served with a
 * content-hash version (`?v=`) so the browser caches them until they change; the HTML itself is
 * revalidated (ETag). A strict Content-Security-Policy allows only this origin.
 */
import { createHash } from 'node:crypto';
import { Elysia } from 'elysia';
// Imported as files: Bun embeds them in the compiled executable and gives back their path.
import css from '../ui/app.css' with { type: 'file' };
import html from '../ui/index.html' with { type: 'file' };
import { pageScript } from '../page-script';

interface Asset {
  body: Uint8Array<ArrayBuffer>;
  gz: Uint8Array<ArrayBuffer>;
  type: string;
  etag: string;
}

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  // blob: the live tile plays a stream's clip fetched with the token in a header (never in a URL).
  "media-src 'self' blob:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

let loaded: Promise<Map<string, Asset>> | null = null;

async function load(): Promise<Map<string, Asset>> {
  const read = async (p: string) => new Uint8Array(await Bun.file(p).arrayBuffer());
  const make = (body: Uint8Array<ArrayBuffer>, type: string): Asset => {
    const hash = createHash('sha256').update(body).digest('base64url').slice(0, 16);
    return { body, gz: Bun.gzipSync(body, { level: 9 }), type, etag: `"${hash}"` };
  };
  const assets = new Map<string, Asset>();
  assets.set('app.js', make(new TextEncoder().encode(await pageScript()), 'text/javascript; charset=utf-8'));
  assets.set('app.css', make(await read(css as unknown as string), 'text/css; charset=utf-8'));
  // The page names its assets with their content hash, so they can be cached for good.
  const page = new TextDecoder()
    .decode(await read(html as unknown as string))
    .replace(/\{\{v:([\w.]+)\}\}/g, (_, name: string) => assets.get(name)?.etag.slice(1, -1) ?? '0');
  assets.set('index.html', make(new TextEncoder().encode(page), 'text/html; charset=utf-8'));
  return assets;
}

function serve(request: Request, a: Asset, cache: string, extra: Record<string, string> = {}): Response {
  const headers: Record<string, string> = {
    'content-type': a.type,
    'cache-control': cache,
    etag: a.etag,
    vary: 'accept-encoding',
    'x-content-type-options': 'nosniff',
    ...extra,
  };
  if (request.headers.get('if-none-match') === a.etag) return new Response(null, { status: 304, headers });
  const gzip = /\bgzip\b/.test(request.headers.get('accept-encoding') ?? '');
  return new Response(gzip ? a.gz : a.body, { headers: gzip ? { ...headers, 'content-encoding': 'gzip' } : headers });
}

export function uiRoutes() {
  const assets = () => (loaded ??= load());
  return new Elysia({ name: 'routes/ui' })
    .get(
      '/',
      async ({ request }) =>
        serve(request, (await assets()).get('index.html')!, 'no-cache', {
          'content-security-policy': CSP,
          'referrer-policy': 'no-referrer',
          'x-frame-options': 'DENY',
        }),
      { detail: { hide: true } },
    )
    .get(
      '/ui/:name',
      async ({ params, query, request, set }) => {
        const a = params.name === 'index.html' ? undefined : (await assets()).get(params.name);
        if (!a) {
          set.status = 404;
          return { error: 404, message: 'no such asset' };
        }
        // A request for the current version may be cached for good; anything else is revalidated.
        const current = query.v === a.etag.slice(1, -1);
        return serve(request, a, current ? 'public, max-age=31536000, immutable' : 'no-cache');
      },
      { detail: { hide: true } },
    );
}
