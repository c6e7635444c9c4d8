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
  const r = await downloadToFile(url, join(dir, 'a.part'), { ...opts, policy: { allowPrivate: true, resolve: dns.resolve } });
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
  const err = await downloadToFile(url, join(dir, 'b.part'), { ...opts, policy: { allowPrivate: false, resolve: dns.resolve } }).catch((e) => e);
  expect(err.status).toBe(502);
  expect(seen.evil).toEqual([]);
  expect(dns.queries).toEqual(['videos.example']);
});

test('a name that resolves to a private address on the check is refused (403) before any connection', async () => {
  seen.good.length = seen.evil.length = 0;
  const dns = rebindingResolver('127.0.0.2', '8.8.8.8');
  const err = await downloadToFile(new URL(`http://videos.example:${good.port}/clip.mp4`), join(dir, 'c.part'), { ...opts, policy: { allowPrivate: false, resolve: dns.resolve } }).catch((e) => e);
  expect(err.status).toBe(403);
  expect(seen.evil).toEqual([]);
});
