/**
 * DNS pinning: a download resolves the host once, checks the address, and connects to that very
 * address with the original Host header. The resolver is a stand-in (the only part that cannot
 * run here: a DNS server that changes its answer) that answers differently on the second query;
 * the servers are real, on two loopback addresses with the same port.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { downloadToFile } from '../src/ingest/download';
import { clip } from './helpers';

const dir = mkdtempSync(join(tmpdir(), 'vidq-pin-'));
let good: ReturnType<typeof Bun.serve>;
let evil: ReturnType<typeof Bun.serve>;
const seen = { good: [] as string[], evil: [] as string[] };
const video = readFileSync(clip('chaplin-bw.mp4'));

beforeAll(() => {
  good = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      seen.good.push(req.headers.get('host') ?? '');
      return new Response(video, { headers: { 'content-type': 'video/mp4' } });
    },
  });
  // The rebinding target: same port, another loopback address (a "private" service).
  evil = Bun.serve({
    hostname: '127.0.0.2',
    port: good.port,
    fetch(req) {
      seen.evil.push(req.headers.get('host') ?? '');
      return new Response('secret internal data', { headers: { 'content-type': 'video/mp4' } });
    },
  });
});
afterAll(() => {
  good.stop(true);
  evil.stop(true);
  rmSync(dir, { recursive: true, force: true });
});

/** Answers `first` to the first query and `later` to every query after it. */
function rebindingResolver(first: string, later: string) {
  const queries: string[] = [];
  return {
    queries,
    resolve: async (host: string) => {
      queries.push(host);
      return [queries.length === 1 ? first : later];
    },
  };
}

const opts = { maxBytes: 10 << 20, connectTimeoutMs: 1500, idleTimeoutMs: 5000, maxRedirects: 2 };

test('the connection goes to the checked address, with the original Host, though the name now resolves elsewhere', async () => {
  seen.good.length = seen.evil.length = 0;
  const dns = rebindingResolver('127.0.0.1', '127.0.0.2');
  const url = new URL(`http://videos.example:${good.port}/clip.mp4`);
  const r = await downloadToFile(url, join(dir, 'a.part'), {
    ...opts,
    policy: { allowPrivate: true, resolve: dns.resolve },
  });
  expect(r.bytes).toBe(video.length);
  expect(readFileSync(join(dir, 'a.part')).equals(video)).toBe(true);
  expect(seen.good).toEqual([`videos.example:${good.port}`]);
  expect(seen.evil).toEqual([]);
  expect(dns.queries).toEqual(['videos.example']);
});

test('with the default policy, a name that rebinds to a private address after the check never reaches it', async () => {
  seen.good.length = seen.evil.length = 0;
  // Public on the check, loopback afterwards: the download may only ever talk to the public one
  // (unreachable from here, so it fails), never to 127.0.0.2.
  const dns = rebindingResolver('8.8.8.8', '127.0.0.2');
  const url = new URL(`http://videos.example:${good.port}/clip.mp4`);
  const err = await downloadToFile(url, join(dir, 'b.part'), {
    ...opts,
    policy: { allowPrivate: false, resolve: dns.resolve },
  }).catch((e) => e);
  expect(err.status).toBe(502);
  expect(seen.evil).toEqual([]);
  expect(dns.queries).toEqual(['videos.example']);
});

test('a name that resolves to a private address on the check is refused (403) before any connection', async () => {
  seen.good.length = seen.evil.length = 0;
  const dns = rebindingResolver('127.0.0.2', '8.8.8.8');
  const err = await downloadToFile(new URL(`http://videos.example:${good.port}/clip.mp4`), join(dir, 'c.part'), {
    ...opts,
    policy: { allowPrivate: false, resolve: dns.resolve },
  }).catch((e) => e);
  expect(err.status).toBe(403);
  expect(seen.evil).toEqual([]);
});

/**
 * https: connected to the checked address, the certificate is still checked against the name (its
 * only subject name is videos.example, never 127.0.0.1). A child process trusts the test's own CA
 * through NODE_EXTRA_CA_CERTS (read at start-up).
 */
test('https: the TLS certificate is checked against the host name while connecting to the pinned address', async () => {
  const tls = join(dir, 'tls');
  const sh = (cmd: string) => {
    const p = Bun.spawnSync(['sh', '-c', cmd], { cwd: tls, stderr: 'pipe' });
    if (p.exitCode !== 0) throw new Error(`${cmd}: ${p.stderr.toString()}`);
  };
  require('node:fs').mkdirSync(tls, { recursive: true });
  sh(
    'openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj "/CN=vidq test CA" 2>/dev/null',
  );
  const issue = (name: string) => {
    sh(`openssl req -newkey rsa:2048 -nodes -keyout ${name}.key -out ${name}.csr -subj "/CN=${name}" 2>/dev/null`);
    require('node:fs').writeFileSync(join(tls, `${name}.ext`), `subjectAltName=DNS:${name}\n`);
    sh(
      `openssl x509 -req -in ${name}.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out ${name}.pem -days 2 -extfile ${name}.ext 2>/dev/null`,
    );
  };
  issue('videos.example');
  issue('other.example');
  const serve = (name: string) =>
    Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      tls: { key: Bun.file(join(tls, `${name}.key`)), cert: Bun.file(join(tls, `${name}.pem`)) },
      fetch: () => new Response(video, { headers: { 'content-type': 'video/mp4' } }),
    });
  const right = serve('videos.example');
  const wrong = serve('other.example');
  try {
    const script = join(dir, 'fetch-pinned.ts');
    require('node:fs').writeFileSync(
      script,
      `import { downloadToFile } from ${JSON.stringify(join(import.meta.dir, '../src/ingest/download.ts'))};
const queries = [];
const resolve = async (host) => (queries.push(host), [queries.length === 1 ? '127.0.0.1' : '127.0.0.2']);
const url = new URL(process.argv[2]);
const r = await downloadToFile(url, process.argv[3], { policy: { allowPrivate: true, resolve }, maxBytes: 10 << 20, connectTimeoutMs: 3000, idleTimeoutMs: 5000, maxRedirects: 0 }).then((r) => ({ bytes: r.bytes }), (e) => ({ status: e.status, message: e.message }));
console.log(JSON.stringify({ ...r, queries }));`,
    );
    const run = async (port: number) => {
      const p = Bun.spawn(
        [process.execPath, script, `https://videos.example:${port}/clip.mp4`, join(dir, `tls-${port}.part`)],
        { env: { ...process.env, NODE_EXTRA_CA_CERTS: join(tls, 'ca.pem') }, stdout: 'pipe', stderr: 'pipe' },
      );
      const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
      if (!out.trim()) throw new Error(err);
      return JSON.parse(out.trim().split('\n').pop()!);
    };
    expect(await run(right.port!)).toEqual({ bytes: video.length, queries: ['videos.example'] });
    // A certificate for another name is refused, though the address is the checked one.
    const refused = await run(wrong.port!);
    expect(refused.status).toBe(502);
  } finally {
    right.stop(true);
    wrong.stop(true);
  }
});
