/**
 * Test harness: the real server on an ephemeral port with a throw-away data directory, and a real
 * HTTP origin on 127.0.0.1 that serves the shared test clips (plus a few misbehaving routes).
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadConfig, type Config } from '../src/config';
import { startServer, type RunningServer } from '../src/server';

export const MEDIA_DIR = process.env.VIDQ_TEST_MEDIA ?? resolve(import.meta.dir, '../../shared/media');

export function clip(name: string): string {
  const p = join(MEDIA_DIR, name);
  if (!existsSync(p)) throw new Error(`test clip missing: ${p} (set VIDQ_TEST_MEDIA)`);
  return p;
}

export interface TestServer {
  url: string;
  server: RunningServer;
  dataDir: string;
  /** The catalog's --database URL (undefined: the SQLite file in dataDir). */
  database?: string;
  /** A user with unlimited credits and their token. */
  userId: string;
  token: string;
  stop(): Promise<void>;
}

/** `logSink` receives every log line of the server (and its analysis workers). */
export async function startTestServer(
  overrides: Record<string, string | boolean> = {},
  opts: { logSink?: (line: string) => void } = {},
): Promise<TestServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'vidq-test-'));
  const config: Config = loadConfig(
    {
      'data-dir': dataDir,
      port: '0',
      host: '127.0.0.1',
      'allow-private-urls': true,
      'log-level': 'error',
      'min-free-bytes': '0',
      'analysis-workers': '0',
      ...overrides,
    },
    {},
  );
  const server = await startServer(config, () => {}, opts.logSink);
  const { user, token } = await server.service.accounts.createUser('tester', null);
  return {
    url: server.url,
    server,
    dataDir,
    ...(typeof overrides.database === 'string' && overrides.database && { database: overrides.database }),
    userId: user.id,
    token,
    async stop() {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface Origin {
  url: string;
  stop(): void;
}

/**
 * Serves MEDIA_DIR at /media/<name>, and misbehaving sources:
 *   /html            200 with an HTML error page
 *   /redirect/<n>    redirects n times, then to /media/bottles.mp4
 *   /loop            redirects to itself
 *   /endless         streams forever (for size caps)
 *   /empty           200 with no bytes
 *   /status/<code>   answers that status
 *   /to-private      redirects to http://127.0.0.1:<port>/media/bottles.mp4 (for redirect checks)
 */
export function startOrigin(): Origin {
  const server: ReturnType<typeof Bun.serve> = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req): Promise<Response> {
      const u = new URL(req.url);
      const p = u.pathname;
      if (p.startsWith('/media/')) {
        const name = decodeURIComponent(p.slice('/media/'.length));
        if (name.includes('/') || name.includes('..')) return new Response('no', { status: 400 });
        const f = Bun.file(join(MEDIA_DIR, name));
        if (!(await f.exists())) return new Response('not found', { status: 404 });
        return new Response(f);
      }
      if (p === '/html')
        return new Response('<html><body><h1>Error</h1><p>Something went wrong</p></body></html>', {
          headers: { 'content-type': 'text/html' },
        });
      if (p.startsWith('/redirect/')) {
        const n = Number(p.split('/')[2]);
        return Response.redirect(n > 1 ? `/redirect/${n - 1}` : '/media/bottles.mp4', 302);
      }
      if (p === '/loop') return Response.redirect('/loop', 302);
      if (p === '/to-private') return Response.redirect(`http://127.0.0.1:${server.port}/media/bottles.mp4`, 302);
      if (p.startsWith('/status/')) return new Response('x', { status: Number(p.split('/')[2]) });
      if (p === '/empty') return new Response('', { headers: { 'content-type': 'video/mp4' } });
      if (p === '/endless') {
        const chunk = new Uint8Array(64 * 1024).fill(7);
        return new Response(
          new ReadableStream({
            pull(c) {
              c.enqueue(chunk);
            },
          }),
          { headers: { 'content-type': 'video/mp4' } },
        );
      }
      return new Response('not found', { status: 404 });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) };
}

/**
 * A raw TCP server for what Bun.serve would correct: answers every connection with `head` and
 * `body` exactly as given, then closes (e.g. a Content-Length larger than the body).
 */
export function startRawServer(head: string, body: Uint8Array): Origin {
  const server = Bun.listen({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      data(socket) {
        socket.write(head);
        socket.write(body);
        socket.end();
      },
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) };
}

export async function postJson(
  base: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any }> {
  const res = await fetch(base + path, {
    method: 'POST',
    // A JSON client says so: /remote-upload answers with events unless JSON is asked for.
    headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json().catch(() => null) };
}

export async function getJson(
  base: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any }> {
  const res = await fetch(base + path, { headers });
  return { status: res.status, body: await res.json().catch(() => null) };
}

/** Files left in the data directory's tmp/ and media/ folders. */
export function leftovers(dataDir: string): { tmp: string[]; media: string[] } {
  const list = (d: string) => (existsSync(d) ? readdirSync(d) : []);
  return { tmp: list(join(dataDir, 'tmp')), media: list(join(dataDir, 'media')) };
}

/** Reads a server-sent-event stream into its parsed `data:` objects. */
export async function readEvents(res: Response): Promise<any[]> {
  const text = await res.text();
  return text
    .split('\n\n')
    .map((block) => block.split('\n').find((l) => l.startsWith('data: ')))
    .filter((l): l is string => !!l)
    .map((l) => JSON.parse(l.slice(6)));
}
