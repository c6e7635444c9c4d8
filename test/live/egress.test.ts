/**
 * Every request of a pulled live source is checked (issue 37), not only its first hop. The server
 * runs with --allow-private-urls (the test's origin is on 127.0.0.1), which lets a source reach a
 * private address only at the host and port the user gave. A real HLS origin on 127.0.0.1 answers:
 * - a redirect to another port of 127.0.0.1;
 * - a master playlist whose variant playlist lies on that other port;
 * - a media playlist whose segments lie on that other port;
 * - a media playlist whose segments are https:// URLs on a third port (ffmpeg's TLS goes through
 *   the proxy as CONNECT), a plain TCP server there counting the connections it accepts.
 * The other port is a real HTTP server that counts the requests it sees: it must see none, and each
 * stream fails with the reason. An RTSP server answering 302 with another port's address is not
 * followed either (a TCP server there counts connections). A same-origin redirect to a real playlist still goes live. The
 * proxy's policy is also checked on its own with a stand-in resolver (public names, a name that
 * resolves to a private address, the metadata address).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { EgressProxy } from '../../src/live/egress';
import { ffmpegSync, liveClient, liveWorkDir } from '../factories';
import { clip, startTestServer, type TestServer } from '../helpers';

let srv: TestServer;
let work: string;
let target: ReturnType<typeof Bun.serve>;
let origin: ReturnType<typeof Bun.serve>;
/** Requests the refused server saw. */
const seenByTarget: string[] = [];
/** A TCP server on a third port: the connections it accepted. */
let tlsTarget: Server;
let tlsTargetPort = 0;
const tlsConnections: number[] = [];
const logs: string[] = [];
const answers: string[] = [];

beforeAll(async () => {
  let ffmpeg: string;
  ({ work, ffmpeg } = await liveWorkDir('live-egress'));
  // A finished playlist of 1 s segments of a real clip.
  ffmpegSync(ffmpeg, [
    '-i',
    clip('bottles.mp4'),
    '-t',
    '6',
    '-an',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-g',
    '25',
    '-f',
    'hls',
    '-hls_time',
    '1',
    '-hls_list_size',
    '0',
    join(work, 'ok.m3u8'),
  ]);
  target = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      seenByTarget.push(new URL(req.url).pathname);
      return new Response(readFileSync(join(work, 'ok.m3u8')), {
        headers: { 'content-type': 'application/vnd.apple.mpegurl' },
      });
    },
  });
  const other = `http://127.0.0.1:${target.port}`;
  tlsTarget = createServer((sock) => {
    tlsConnections.push(Date.now());
    sock.destroy();
  });
  await new Promise<void>((ok) => tlsTarget.listen(0, '127.0.0.1', ok));
  tlsTargetPort = (tlsTarget.address() as { port: number }).port;
  const playlist = readFileSync(join(work, 'ok.m3u8'), 'utf8');
  origin = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname;
      const m3u8 = (text: string) =>
        new Response(text, { headers: { 'content-type': 'application/vnd.apple.mpegurl' } });
      switch (path) {
        case '/redirect.m3u8':
          return Response.redirect(`${other}/live.m3u8`, 302);
        case '/same-origin.m3u8':
          return Response.redirect('/ok.m3u8', 302);
        case '/variant.m3u8':
          return m3u8(`#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=200000\n${other}/variant/live.m3u8\n`);
        case '/segments.m3u8':
          return m3u8(playlist.replace(/^(ok\d+\.ts)$/gm, `${other}/segments/$1`));
        case '/tls-segments.m3u8':
          return m3u8(playlist.replace(/^(ok\d+\.ts)$/gm, `https://127.0.0.1:${tlsTargetPort}/$1`));
      }
      const name = path.slice(1);
      if (!/^ok[\w.]+$/.test(name)) return new Response('no', { status: 404 });
      return new Response(Bun.file(join(work, name)));
    },
  });
  srv = await startTestServer(
    { analyzers: 'subtitles', 'log-level': 'info', 'live-stall-sec': '5' },
    { logSink: (l) => logs.push(l) },
  );
}, 60_000);

afterAll(async () => {
  await srv?.stop();
  target?.stop(true);
  origin?.stop(true);
  tlsTarget?.close();
  rmSync(work, { recursive: true, force: true });
});

const live = liveClient(() => srv, answers);

async function addStream(path: string): Promise<string> {
  const added = await live.post('/add-stream', {
    token: srv.token,
    index: 'cams',
    url: `http://127.0.0.1:${origin.port}${path}`,
    fps: 1,
  });
  expect(added.status).toBe('success');
  return added.stream_id;
}

describe('every request of a pulled source is checked', () => {
  test('a same-origin redirect to a real playlist goes live (through the egress proxy)', async () => {
    await live.performanceIndex('cams');
    const id = await addStream('/same-origin.m3u8');
    const s = await live.waitStream(id, (x) => x.status === 'live', 30_000, 'the same-origin stream live', 200);
    expect(s.status).toBe('live');
    await live.post(`/streams/${id}/stop?token=${srv.token}`, {});
  }, 60_000);

  for (const [what, path] of [
    ['a redirect', '/redirect.m3u8'],
    ['a variant playlist', '/variant.m3u8'],
    ['segment URLs', '/segments.m3u8'],
  ] as const) {
    test(`${what} naming another private port is refused; that server sees no request`, async () => {
      const id = await addStream(path);
      const s = await live.waitStream(id, (x) => x.status === 'failed', 30_000, `${what} refused`, 200);
      expect(s.reason).toContain(`127.0.0.1:${target.port} was refused`);
      console.log(`${what}: requests seen by the refused server: ${seenByTarget.length}`);
      expect(seenByTarget).toEqual([]);
      expect(logs.join('\n')).toContain('live source request refused');
    }, 60_000);
  }

  test('https segment URLs naming another private port are refused before any connection', async () => {
    const id = await addStream('/tls-segments.m3u8');
    const s = await live.waitStream(id, (x) => x.status === 'failed', 30_000, 'https segments refused', 200);
    expect(s.reason).toContain(`127.0.0.1:${tlsTargetPort} was refused`);
    console.log(`https segments: connections seen by the refused server: ${tlsConnections.length}`);
    expect(tlsConnections).toEqual([]);
  }, 60_000);
});

describe('RTSP', () => {
  test('an RTSP redirect to another address is not followed; the stream fails with the reason', async () => {
    const connections: number[] = [];
    const other = createServer((sock) => {
      connections.push(Date.now());
      sock.destroy();
    });
    await new Promise<void>((ok) => other.listen(0, '127.0.0.1', ok));
    const otherPort = (other.address() as { port: number }).port;
    // Answers every request with a redirect to the other server.
    const camera = createServer((sock) =>
      sock.on('data', (d) => {
        const cseq = /CSeq: *(\d+)/i.exec(d.toString('latin1'))?.[1] ?? '1';
        sock.write(`RTSP/1.0 302 Moved\r\nCSeq: ${cseq}\r\nLocation: rtsp://127.0.0.1:${otherPort}/cam\r\n\r\n`);
      }),
    );
    await new Promise<void>((ok) => camera.listen(0, '127.0.0.1', ok));
    try {
      const cameraPort = (camera.address() as { port: number }).port;
      const added = await live.post('/add-stream', {
        token: srv.token,
        index: 'cams',
        url: `rtsp://127.0.0.1:${cameraPort}/cam`,
        fps: 1,
      });
      expect(added.status).toBe('success');
      const s = await live.waitStream(
        added.stream_id,
        (x) => x.status === 'failed',
        30_000,
        'the redirect refused',
        200,
      );
      expect(s.reason).toContain('redirect');
      console.log(`RTSP redirect: connections seen by the other server: ${connections.length}`);
      expect(connections).toEqual([]);
    } finally {
      camera.close();
      other.close();
    }
  }, 60_000);
});

describe('the egress policy', () => {
  const names: Record<string, string[]> = {
    'cdn.example': ['93.184.216.34'],
    'rebind.example': ['127.0.0.1'],
    'cam.lan': ['10.0.0.5'],
    'other.lan': ['10.0.0.5'],
  };
  const resolve = async (host: string) => names[host] ?? [];
  const refused = (p: Promise<string>) =>
    p.then(
      () => 'allowed',
      (e) => `refused ${e.status}`,
    );

  test('default mode: public hosts only, on every hop', async () => {
    const proxy = await EgressProxy.start(
      { allowPrivate: false, source: new URL('https://cdn.example/live.m3u8'), resolve },
      () => {},
    );
    try {
      expect(await proxy.check('cdn.example', 443)).toBe('93.184.216.34');
      expect(await refused(proxy.check('rebind.example', 443))).toBe('refused 403');
      expect(await refused(proxy.check('169.254.169.254', 80))).toBe('refused 403');
      expect(await refused(proxy.check('127.0.0.1', 8420))).toBe('refused 403');
      expect(await refused(proxy.check('[::ffff:127.0.0.1]', 80))).toBe('refused 403');
    } finally {
      proxy.close();
    }
  });

  test('--allow-private-urls: a private address only at the source URL’s own host and port', async () => {
    const proxy = await EgressProxy.start(
      { allowPrivate: true, source: new URL('http://cam.lan:8080/live.m3u8'), resolve },
      () => {},
    );
    try {
      expect(await proxy.check('cam.lan', 8080)).toBe('10.0.0.5');
      expect(await proxy.check('CAM.lan', 8080)).toBe('10.0.0.5');
      expect(await proxy.check('cdn.example', 443)).toBe('93.184.216.34');
      expect(await refused(proxy.check('cam.lan', 8081))).toBe('refused 403');
      expect(await refused(proxy.check('other.lan', 8080))).toBe('refused 403');
      expect(await refused(proxy.check('10.0.0.5', 8080))).toBe('refused 403');
      expect(await refused(proxy.check('169.254.169.254', 80))).toBe('refused 403');
    } finally {
      proxy.close();
    }
  });
});
