/**
 * POST /upload end to end through the real server: raw bodies and multipart forms streamed to
 * disk, the same answers and event stream as /remote-upload, the size cap, and bodies cut off
 * mid-way (client gone) leaving no row and no file. A kill -9 mid-upload is checked with the
 * hardening invariants on a server run as a child process.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkInvariants } from './hardening/invariants';
import { kill9, spawnServer, stopAll } from './hardening/proc';
import { until } from './factories';
import { clip, getJson, leftovers, readEvents, startTestServer, type TestServer } from './helpers';

let srv: TestServer;
const CAP = 3 * 1024 * 1024;

beforeAll(async () => {
  srv = await startTestServer({ 'max-upload-bytes': String(CAP) });
});
afterAll(async () => {
  await srv.stop();
  await stopAll();
});

const auth = () => ({ authorization: `Bearer ${srv.token}` });
const q = (params: Record<string, string>) => '?' + new URLSearchParams(params).toString();
const rows = () =>
  srv.server.service.db.$client.query('SELECT id, status, file_name FROM videos').all() as {
    id: string;
    status: string;
    file_name: string;
  }[];

/**
 * Sends `head` and then `body` over a raw socket, waits until the upload has its row (it was
 * admitted and is receiving), then closes the socket mid-way (a client that goes away).
 */
async function sendAndCut(head: string, body: Uint8Array, how: 'close' | 'reset' = 'close'): Promise<void> {
  const u = new URL(srv.url);
  const before = rows().length;
  await new Promise<void>((resolve, reject) => {
    const sock = connect(Number(u.port), u.hostname, () => {
      sock.write(head);
      sock.write(body, () =>
        until(
          () => rows().length,
          (n) => n === before + 1,
          5000,
          'the upload to be admitted',
        ).then(
          () => (how === 'reset' ? sock.resetAndDestroy() : sock.destroy()),
          (e) => {
            sock.destroy();
            reject(e);
          },
        ),
      );
    });
    sock.on('close', () => resolve());
    sock.on('error', reject);
  });
}

async function settledEmpty(before: number): Promise<void> {
  await until(
    () => rows().length,
    (n) => n === before,
    5000,
    'the cut-off upload to leave no row',
  );
  await until(
    () => leftovers(srv.dataDir).tmp.length,
    (n) => n === 0,
    5000,
    'the cut-off upload to leave no temp file',
  );
}

describe('POST /upload', () => {
  test('a raw body is stored, probed and answered with the spec metadata', async () => {
    const bytes = readFileSync(clip('chaplin-bw.mp4'));
    const res = await fetch(srv.url + '/upload' + q({ index: 'desk', file_name: 'my/../chaplin.mp4' }), {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'video/mp4' },
      body: bytes,
    });
    const body = (await res.json()) as any;
    expect(res.status).toBe(200);
    expect(body.data).toMatchObject({
      type: 'metadata',
      percentage: 100,
      fileSize: `${(bytes.length / 1048576).toFixed(2)} MB`,
      file_size_bytes: bytes.length,
    });
    expect(body.data.duration).toBeCloseTo(9.6, 0);
    const list = await getJson(srv.url, `/index-resources?token=${srv.token}&index=desk`);
    expect(list.body).toHaveLength(1);
    // A name from outside is a label, never a path.
    expect(list.body[0].file_name).toBe('chaplin.mp4');
    expect(list.body[0].status).toBe('ready');
  });

  test("a multipart form with a file part is stored under the part's file name; the same bytes again give the same key", async () => {
    const form = () => {
      const f = new FormData();
      f.append('note', 'ignored');
      f.append('file', Bun.file(clip('countdown-living-room.mp4')), 'count down.mp4');
      return f;
    };
    const first = await fetch(srv.url + '/upload' + q({ index: 'forms' }), {
      method: 'POST',
      headers: auth(),
      body: form(),
    });
    expect(first.status).toBe(200);
    const a = (await first.json()) as any;
    expect(a.data.file_size_bytes).toBe(statSync(clip('countdown-living-room.mp4')).size);
    const again = await fetch(srv.url + '/upload' + q({ index: 'forms', token: srv.token }), {
      method: 'POST',
      body: form(),
    });
    expect(((await again.json()) as any).data.key).toBe(a.data.key);
    const list = await getJson(srv.url, `/index-resources?token=${srv.token}&index=forms`);
    expect(list.body.map((r: any) => r.file_name)).toEqual(['count down.mp4']);
  });

  test('streams server-sent events: file_authorized, uploading progress, metadata, complete', async () => {
    const bytes = readFileSync(clip('bottles.mp4'));
    // A slow body, so that progress events go out while it arrives.
    let i = 0;
    const step = 64 * 1024;
    const stream = new ReadableStream<Uint8Array>({
      async pull(c) {
        if (i >= bytes.length) return c.close();
        await Bun.sleep(30);
        c.enqueue(bytes.subarray(i, i + step));
        i += step;
      },
    });
    const res = await fetch(srv.url + '/upload' + q({ index: 'sse', file_name: 'bottles.mp4' }), {
      method: 'POST',
      headers: { ...auth(), accept: 'text/event-stream', 'content-type': 'application/octet-stream' },
      body: stream,
    });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const events = await readEvents(res);
    const types = events.map((e) => e.type);
    expect(types[0]).toBe('file_authorized');
    expect(events.some((e) => e.type === 'progress' && e.stage === 'uploading' && e.bytes > 0)).toBe(true);
    expect(types.slice(-3)).toEqual(['metadata', 'progress', 'complete']);
    expect(events.at(-1)).toMatchObject({ status: 'ready', duplicate: false });
  });

  test('refuses a file over --max-upload-bytes (413), declared or chunked, leaving nothing', async () => {
    const before = rows().length;
    const big = new Uint8Array(CAP + 1);
    const declared = await fetch(srv.url + '/upload' + q({ index: 'big' }), {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'video/mp4' },
      body: big,
    });
    expect(declared.status).toBe(413);
    expect(((await declared.json()) as any).message).toContain('--max-upload-bytes');
    let sent = 0;
    const chunked = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent > CAP * 2) return c.close();
        sent += 256 * 1024;
        c.enqueue(new Uint8Array(256 * 1024));
      },
    });
    const res = await fetch(srv.url + '/upload' + q({ index: 'big' }), {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'video/mp4' },
      body: chunked,
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ error: 413 });
    expect(rows().length).toBe(before);
    expect(leftovers(srv.dataDir).tmp).toEqual([]);
    const idx = await getJson(srv.url, `/indexes?token=${srv.token}`);
    expect(idx.body.some((i: any) => i.name === 'big')).toBe(false);
  });

  test('bad requests: no index, a JSON body, an empty body, no token, not a video, a form without a file part', async () => {
    const before = rows().length;
    const post = (query: string, init: RequestInit) =>
      fetch(srv.url + '/upload' + query, { method: 'POST', ...init }).then(async (r) => ({
        status: r.status,
        body: (await r.json()) as any,
      }));
    const noIndex = await post('', { headers: auth(), body: new Uint8Array(10) });
    expect(noIndex.status).toBe(400);
    expect(noIndex.body.message).toContain('index');
    const json = await post(q({ index: 'x' }), {
      headers: { ...auth(), 'content-type': 'application/json' },
      body: '{"url":"http://x/y.mp4"}',
    });
    expect(json.status).toBe(415);
    expect(json.body.message).toContain('/remote-upload');
    const empty = await post(q({ index: 'x' }), { headers: { ...auth(), 'content-type': 'video/mp4' }, body: '' });
    expect(empty.status).toBe(400);
    const noToken = await post(q({ index: 'x' }), {
      headers: { 'content-type': 'video/mp4' },
      body: new Uint8Array(10),
    });
    expect(noToken.status).toBe(401);
    const notVideo = await post(q({ index: 'x' }), {
      headers: { ...auth(), 'content-type': 'application/octet-stream' },
      body: 'just some text, not a video at all\n'.repeat(50),
    });
    expect(notVideo.status).toBe(415);
    const form = new FormData();
    form.append('other', 'value');
    const noFile = await post(q({ index: 'x' }), { headers: auth(), body: form });
    expect(noFile.status).toBe(400);
    expect(noFile.body.message).toContain('"file"');
    expect(rows().length).toBe(before);
    expect(leftovers(srv.dataDir).tmp).toEqual([]);
  });

  test('a raw upload cut off mid-way (client gone) leaves no row and no file', async () => {
    const before = rows().length;
    const bytes = readFileSync(clip('bottles.mp4'));
    const u = new URL(srv.url);
    const head = `POST /upload?index=cut&file_name=b.mp4 HTTP/1.1\r\nHost: ${u.host}\r\nAuthorization: Bearer ${srv.token}\r\nContent-Type: video/mp4\r\nContent-Length: ${bytes.length}\r\n\r\n`;
    await sendAndCut(head, bytes.subarray(0, Math.floor(bytes.length / 2)));
    await settledEmpty(before);
    expect(leftovers(srv.dataDir).media.length).toBe(rows().length);
  });

  test('a raw upload whose connection is reset (RST) mid-way leaves no row and no file', async () => {
    const before = rows().length;
    const bytes = readFileSync(clip('bottles.mp4'));
    const u = new URL(srv.url);
    const head = `POST /upload?index=reset&file_name=b.mp4 HTTP/1.1\r\nHost: ${u.host}\r\nAuthorization: Bearer ${srv.token}\r\nContent-Type: video/mp4\r\nContent-Length: ${bytes.length}\r\n\r\n`;
    await sendAndCut(head, bytes.subarray(0, 100_000), 'reset');
    await settledEmpty(before);
  });

  test('a multipart upload cut off before its closing boundary leaves no row and no file', async () => {
    const before = rows().length;
    const bytes = readFileSync(clip('bottles.mp4'));
    const u = new URL(srv.url);
    const boundary = 'vidqcut';
    const partHead = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="b.mp4"\r\nContent-Type: video/mp4\r\n\r\n`;
    // Chunked, so only the missing boundary tells that the body is incomplete.
    const chunk = Buffer.concat([Buffer.from(partHead), bytes.subarray(0, 200_000)]);
    const head = `POST /upload?index=cut2 HTTP/1.1\r\nHost: ${u.host}\r\nAuthorization: Bearer ${srv.token}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nTransfer-Encoding: chunked\r\n\r\n${chunk.length.toString(16)}\r\n`;
    await sendAndCut(head, chunk);
    await settledEmpty(before);
    const idx = await getJson(srv.url, `/indexes?token=${srv.token}`);
    expect(idx.body.some((i: any) => i.name === 'cut2' || i.name === 'cut')).toBe(false);
  });
});

describe('POST /upload and kill -9', () => {
  test('a server killed mid-upload restarts with the invariants intact', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'vidq-upload-kill-'));
    try {
      const s = await spawnServer(dataDir, ['--analysis-workers', '0']);
      const bytes = readFileSync(clip('bottles.mp4'));
      let i = 0;
      // A body that never finishes: the server is killed while it arrives.
      const body = new ReadableStream<Uint8Array>({
        async pull(c) {
          await Bun.sleep(20);
          if (i < bytes.length) c.enqueue(bytes.subarray(i, (i += 32 * 1024)));
        },
      });
      const pending = fetch(s.url + '/upload?index=k', {
        method: 'POST',
        headers: { authorization: `Bearer ${s.token}`, 'content-type': 'video/mp4' },
        body,
      }).catch(() => null);
      const db = () => {
        const { Database } = require('bun:sqlite') as typeof import('bun:sqlite');
        const d = new Database(join(dataDir, 'vidq.db'), { readonly: true });
        try {
          return d.query("SELECT count(*) AS n FROM videos WHERE status = 'downloading'").get() as { n: number };
        } finally {
          d.close();
        }
      };
      await until(db, (r) => r.n === 1, 10_000, 'the upload to start');
      await Bun.sleep(200);
      await kill9(s);
      await pending;
      const again = await spawnServer(dataDir, ['--analysis-workers', '0']);
      const res = await getJson(again.url, `/indexes?token=${again.token}`);
      expect(res.status).toBe(200);
      await kill9(again);
      expect((await checkInvariants(dataDir)).violations).toEqual([]);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('OpenAPI', () => {
  test("issue 14's endpoints are documented with their operationIds and error statuses", async () => {
    const doc = (await (await fetch(`${srv.url}/openapi.json`)).json()) as any;
    const ops: [string, string, string][] = [
      ['/upload', 'post', 'uploadFile'],
      ['/search', 'get', 'searchMoments'],
      ['/videos/{file_id}/transcript.vtt', 'get', 'exportTranscriptVtt'],
      ['/videos/{file_id}/transcript.srt', 'get', 'exportTranscriptSrt'],
      ['/videos/{file_id}/insights.json', 'get', 'exportInsights'],
      ['/indexes/{index_id}/webhook', 'put', 'setIndexWebhook'],
    ];
    for (const [path, method, id] of ops) {
      const op = doc.paths[path]?.[method];
      expect(op?.operationId).toBe(id);
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '404']));
    }
    expect(Object.keys(doc.paths['/upload'].post.requestBody.content)).toEqual(
      expect.arrayContaining(['application/octet-stream', 'multipart/form-data']),
    );
  });
});
