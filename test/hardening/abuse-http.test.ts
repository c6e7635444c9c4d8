/**
 * Issue 16, the HTTP layer: one error path for malformed and foreign Host headers (no Bun
 * development page, no query string in the log), cheap refusals of unauthenticated bodies,
 * security headers, own-property lookups of /swagger-assets, bidi controls in names, the whole
 * ::/96 range in the URL guard, and owner-only database files. Each scenario ends with the
 * invariant checker. Requests with a hand-written Host go over a raw TCP socket (fetch would fix
 * the header).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config';
import { isPublicAddress } from '../../src/ingest/url-guard';
import { startServer } from '../../src/server';
import { postJson, startOrigin, startTestServer, type Origin, type TestServer } from '../helpers';
import { checkInvariants } from './invariants';

let srv: TestServer;
let origin: Origin;
const logLines: string[] = [];

beforeAll(async () => {
  origin = startOrigin();
  srv = await startTestServer({ 'log-level': 'debug' }, { logSink: (l) => logLines.push(l) });
});

afterAll(async () => {
  await srv.stop();
  origin.stop();
});

const healthy = async () => expect((await checkInvariants(srv.dataDir)).violations).toEqual([]);

/** One HTTP/1.1 request written byte for byte; resolves with the status, headers and body text. */
function raw(port: number, head: string, body = ''): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    sock.on('connect', () => sock.write(head + body));
    sock.on('data', (d: Buffer) => chunks.push(d));
    sock.on('error', reject);
    sock.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [h, ...rest] = text.split('\r\n\r\n');
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(h ?? '')?.[1] ?? 0),
        headers: (h ?? '').toLowerCase(),
        body: rest.join('\r\n\r\n'),
      });
    });
    setTimeout(() => sock.end(), 3000);
  });
}

const get = (path: string, host: string) =>
  raw(srv.server.port, `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);

describe('Host header', () => {
  test('a malformed Host is 400 with the error shape: no development page, no query string in the log', async () => {
    for (const host of ['a b', 'a%20b', '[::1', 'exa mple.com:80', 'x:99999']) {
      const r = await get('/indexes?token=SECRET-QUERY-VALUE', host);
      expect(r.status).toBe(400);
      expect(r.headers).toContain('application/json');
      expect(JSON.parse(r.body)).toMatchObject({ error: 400 });
      expect(r.body).not.toContain(process.cwd());
      expect(r.body.length).toBeLessThan(300);
    }
    const r = await raw(
      srv.server.port,
      `POST /inquire?token=SECRET-QUERY-VALUE HTTP/1.1\r\nHost: a b\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n`,
      '{}',
    );
    expect(r.status).toBe(400);
    expect(logLines.join('\n')).not.toContain('SECRET-QUERY-VALUE');
    await healthy();
  });

  test('a question sent with a malformed Host is refused before the charge (the balance is unchanged)', async () => {
    const payer = await srv.server.service.accounts.createUser('payer', 5);
    const up = await postJson(srv.url, '/remote-upload', {
      token: payer.token,
      index: 'paid',
      url: `${origin.url}/media/bottles.mp4`,
    });
    expect(up.status).toBe(200);
    const index = (
      srv.server.service.db.$client.query('SELECT index_id FROM videos WHERE id = ?').get(up.body.data.key) as {
        index_id: string;
      }
    ).index_id;
    const body = JSON.stringify({ token: payer.token, index, prompt: 'what is in the video?' });
    for (const host of ['a b', 'attacker.example']) {
      const r = await raw(
        srv.server.port,
        `POST /inquire HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`,
        body,
      );
      expect(r.status).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(500);
    }
    expect((await srv.server.service.accounts.getUser(payer.user.id))?.credits).toBe(5);
    await healthy();
  });

  test('the server never runs in development mode (whatever NODE_ENV says)', () => {
    expect(process.env.NODE_ENV).not.toBe('production');
    expect(srv.server.development).toBe(false);
  });

  test('a Host name that is not configured is 421 (DNS rebinding of the anonymous listing)', async () => {
    const port = srv.server.port;
    const listing = `/indexes?user_id=${srv.userId}`;
    const foreign = await get(listing, `attacker.example:${port}`);
    expect(foreign.status).toBe(421);
    expect(JSON.parse(foreign.body).message).toContain('--allowed-hosts');
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, 'LOCALHOST', 'localhost.'])
      expect((await get(listing, host)).status).toBe(200);
    // A container name with an underscore is well-formed, just not configured.
    expect((await get(listing, 'my_service:8420')).status).toBe(421);
    await healthy();
  });

  test('links are built from --public-url when set, never from the request', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vidq-pub-'));
    const config = loadConfig(
      {
        'data-dir': dir,
        port: '0',
        host: '127.0.0.1',
        'min-free-bytes': '0',
        'analysis-workers': '0',
        'allow-private-urls': true,
        'public-url': 'https://vidq.example',
        'log-level': 'error',
      },
      {},
    );
    const server = await startServer(config, () => {});
    try {
      const { token } = await server.service.accounts.createUser('p', null);
      const up = await postJson(server.url, '/remote-upload', {
        token,
        index: 'pub',
        url: `${origin.url}/media/bottles.mp4`,
      });
      expect(up.status).toBe(200);
      const res = await fetch(`${server.url}/index-resources?index=pub&token=${token}`);
      const [resource] = (await res.json()) as { src: string }[];
      expect(resource!.src.startsWith('https://vidq.example/media/')).toBe(true);
    } finally {
      await server.stop();
      expect((await checkInvariants(dir)).violations).toEqual([]);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('headers', () => {
  test('nosniff on every answer; /swagger has a CSP with frame-ancestors none', async () => {
    for (const path of [
      '/health',
      '/no-such-path',
      '/indexes?token=x',
      '/openapi.json',
      '/swagger-assets/swagger-ui.css',
    ]) {
      const res = await fetch(srv.url + path);
      await res.arrayBuffer();
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    }
    const sw = await fetch(srv.url + '/swagger');
    expect(sw.status).toBe(200);
    await sw.text();
    expect(sw.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(sw.headers.get('x-frame-options')).toBe('DENY');
    await healthy();
  });

  test('/swagger-assets/<Object member> is 404, not a 500', async () => {
    const before = logLines.filter((l) => l.includes('"level":"error"')).length;
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) {
      const res = await fetch(`${srv.url}/swagger-assets/${name}`);
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ error: 404 });
    }
    expect(logLines.filter((l) => l.includes('"level":"error"')).length).toBe(before);
    expect((await fetch(`${srv.url}/swagger-assets/swagger-ui.css`)).status).toBe(200);
  });
});

describe('cheap refusals', () => {
  test('an unauthenticated 1 MiB body is refused before it is read; a wide body stops the check early', async () => {
    const wide = JSON.stringify({ index: 'x', url: 'http://a/', extra: new Array(500_000).fill(0) }); // ~1 MiB
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      const res = await fetch(srv.url + '/remote-upload', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: wide,
      });
      times.push(performance.now() - t0);
      expect(res.status).toBe(413);
      expect(((await res.json()) as { error: number }).error).toBe(413);
    }
    // Within the limit: 60k elements are refused at the count, not walked and validated.
    const narrow = JSON.stringify({ index: 'x', url: 'http://a/', extra: new Array(60_000).fill(0) });
    expect(narrow.length).toBeLessThan(srv.server.service.config.maxBodyBytes);
    const res = await fetch(srv.url + '/remote-upload', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: narrow,
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toContain('values');
    console.log(`unauthenticated 1 MiB body: median ${times.sort((a, b) => a - b)[2]!.toFixed(1)} ms (loaded machine)`);
    await healthy();
  });

  test('the largest legitimate body (an /inquire at its field limits, \\u-escaped) fits the default limit', () => {
    const body = JSON.stringify({
      token: 'x'.repeat(64),
      index: 'y'.repeat(64),
      prompt: 'é'.repeat(8000),
      guidance: 'é'.repeat(8000),
      target: '00:00:00-23:59:59',
      target_video: 'z'.repeat(64),
    }).replace(/é/g, '\\u00e9');
    expect(body.length).toBeLessThan(srv.server.service.config.maxBodyBytes);
  });
});

describe('names and addresses', () => {
  test('bidi controls are refused in index names', async () => {
    for (const ch of ['\u202a', '\u202e', '\u2066', '\u2069']) {
      const r = await postJson(srv.url, '/remote-upload', {
        token: srv.token,
        index: `invoice${ch}4pm.exe`,
        url: `${origin.url}/media/bottles.mp4`,
      });
      expect(r.status).toBe(400);
      expect(r.body.message).toContain('bidi');
    }
    await healthy();
  });

  test('the whole ::/96 range is judged by its embedded IPv4 address', async () => {
    for (const a of ['::7f00:1', '::127.0.0.1', '::a00:1', '::192.168.1.1', '::', '::1', '::a9fe:a9fe'])
      expect(isPublicAddress(a)).toBe(false);
    expect(isPublicAddress('::808:808')).toBe(true);
    const strict = await startTestServer({ 'allow-private-urls': false });
    try {
      const port = new URL(origin.url).port;
      for (const host of ['[::7f00:1]', '[::127.0.0.1]']) {
        const r = await postJson(strict.url, '/remote-upload', {
          token: strict.token,
          index: 'v6',
          url: `http://${host}:${port}/media/bottles.mp4`,
        });
        expect(r.status).toBe(403);
      }
    } finally {
      await strict.stop();
    }
    await healthy();
  });

  test('database files are 0600, and a data directory made with mkdir (0755) is tightened to 0700 without a warning', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'vidq-mode-')), 'data');
    mkdirSync(dir, { mode: 0o755 });
    chmodSync(dir, 0o755);
    const lines: string[] = [];
    const config = loadConfig(
      {
        'data-dir': dir,
        port: '0',
        host: '127.0.0.1',
        'min-free-bytes': '0',
        'analysis-workers': '0',
        'log-level': 'warn',
      },
      {},
    );
    const old = process.umask(0o022);
    try {
      const server = await startServer(
        config,
        () => {},
        (l) => lines.push(l),
      );
      await server.service.accounts.createUser('m', null);
      for (const f of ['vidq.db', 'vidq.db-wal', 'vidq.db-shm'])
        expect((statSync(join(dir, f)).mode & 0o777).toString(8)).toBe('600');
      await server.stop();
    } finally {
      process.umask(old);
    }
    expect((statSync(dir).mode & 0o777).toString(8)).toBe('700');
    expect(lines.filter((l) => l.includes('"level":"warn"') && l.includes('chmod'))).toEqual([]);
    expect((await checkInvariants(dir)).violations).toEqual([]);
    rmSync(dir, { recursive: true, force: true });
  });
});
