/**
 * Issue 25 (an outside review acting as a hostile user), the upload findings, and issue 23's
 * "Forms and uploads": a form whose second file part stalled the parser, the whole multipart body
 * under --max-upload-bytes, the storage quota under parallel uploads, reanalyses under
 * --user-max-queued; form fields for the token and index, early refusals that clients which send
 * the whole body first (Python's urllib) can read, and 405 for a wrong method. Each scenario ends
 * with the invariant checker.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { ReanalyzeService } from '../../src/jobs/reanalyze';
import { clip, leftovers, startTestServer, type TestServer } from '../helpers';
import { checkInvariants } from './invariants';

let srv: TestServer;
const warnings: string[] = [];
const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);

beforeAll(async () => {
  process.on('warning', onWarning);
  srv = await startTestServer({ 'idle-timeout-ms': '1500' });
});

afterAll(async () => {
  process.off('warning', onWarning);
  await srv.stop();
});

const healthy = async (s: TestServer = srv) => expect((await checkInvariants(s.dataDir)).violations).toEqual([]);
const BOUNDARY = 'vidqReviewBoundary';
const filePart = (name: string, filename: string, type = 'video/mp4') =>
  Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\nContent-Type: ${type}\r\n\r\n`,
  );
const CRLF = Buffer.from('\r\n');
const closing = Buffer.from(`--${BOUNDARY}--\r\n`);

interface RawAnswer {
  status: number;
  headers: string;
  body: string;
  ms: number;
}

/** One request written in a single write over TCP; `null` when no answer came within `ms`. */
function rawRequest(port: number, request: Buffer, ms: number): Promise<RawAnswer | null> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const sock = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let settled = false;
    const done = (v: RawAnswer | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      sock.destroy();
      resolve(v);
    };
    sock.on('connect', () => sock.write(request));
    sock.on('data', (d: Buffer) => {
      chunks.push(d);
      const text = Buffer.concat(chunks).toString('utf8');
      const [head, ...rest] = text.split('\r\n\r\n');
      const length = Number(/content-length: (\d+)/i.exec(head ?? '')?.[1] ?? -1);
      const body = rest.join('\r\n\r\n');
      if (length >= 0 && Buffer.byteLength(body) >= length)
        done({
          status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head ?? '')?.[1] ?? 0),
          headers: (head ?? '').toLowerCase(),
          body,
          ms: performance.now() - t0,
        });
    });
    sock.on('error', () => done(null));
    sock.on('end', () => done(null));
    const timer = setTimeout(() => done(null), ms);
  });
}

const formRequest = (path: string, body: Buffer, token?: string) =>
  Buffer.concat([
    Buffer.from(
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${token ? `Authorization: Bearer ${token}\r\n` : ''}Content-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
    ),
    body,
  ]);

const rowsOf = (s: TestServer, userId: string) =>
  s.server.service.db.$client
    .query("SELECT id, status, size_bytes FROM videos WHERE user_id = ? AND status != 'failed'")
    .all(userId) as { id: string; status: string; size_bytes: number | null }[];

describe('issue 25 item 1: a form with a second file part', () => {
  test('a file part plus a 5 MB second file part, sent in one write, is answered (the extra part is dropped)', async () => {
    const video = readFileSync(clip('talking-head.mp4'));
    const junk = Buffer.alloc(5_000_000, 1);
    const shapes = {
      'file, then extra': [filePart('file', 'a.mp4'), video, CRLF, filePart('extra', 'b.bin'), junk, CRLF, closing],
      'extra, then file': [
        filePart('extra', 'b.bin'),
        junk.subarray(0, 200_000),
        CRLF,
        filePart('file', 'a.mp4'),
        video,
        CRLF,
        closing,
      ],
      'file twice': [filePart('file', 'a.mp4'), video, CRLF, filePart('file', 'b.mp4'), junk, CRLF, closing],
    };
    for (const [shape, parts] of Object.entries(shapes)) {
      const r = await rawRequest(
        srv.server.port,
        formRequest(`/upload?index=second-part`, Buffer.concat(parts), srv.token),
        20_000,
      );
      expect(r, `${shape}: no answer`).not.toBeNull();
      expect(r!.status, `${shape}: ${r!.body}`).toBe(200);
      expect(JSON.parse(r!.body).data.file_size_bytes).toBe(video.length);
      console.log(`issue 25 item 1 (${shape}): answered in ${r!.ms.toFixed(0)} ms (shared machine)`);
    }
    expect(leftovers(srv.dataDir).tmp).toEqual([]);
    // The parser's backpressure waits no longer add a listener at each wait.
    expect(warnings.filter((w) => w.includes('MaxListeners'))).toEqual([]);
    await healthy();
  }, 60_000);

  test('a form that stops arriving is refused after --idle-timeout-ms, leaving no row and no .part file', async () => {
    const video = readFileSync(clip('bottles.mp4'));
    const body = Buffer.concat([filePart('file', 'a.mp4'), video, CRLF, closing]);
    const request = formRequest('/upload?index=stalled', body, srv.token);
    // All but the last 100 kB: the server waits for bytes that never come.
    const r = await rawRequest(srv.server.port, request.subarray(0, request.length - 100_000), 15_000);
    expect(r?.status).toBe(408);
    expect(JSON.parse(r!.body).message).toContain('stalled');
    expect(leftovers(srv.dataDir).tmp).toEqual([]);
    expect(
      srv.server.service.db.$client.query("SELECT count(*) AS n FROM videos WHERE status = 'downloading'").get(),
    ).toEqual({ n: 0 });
    await healthy();
  }, 30_000);
});

describe('issue 25 item 6: --max-upload-bytes bounds the whole multipart body', () => {
  test('bytes in skipped parts count: a chunked form far over the cap is refused early, reading about the cap', async () => {
    const s = await startTestServer({ 'max-upload-bytes': '1000000' });
    try {
      const video = readFileSync(clip('bottles.mp4'));
      let sent = 0;
      const junk = new Uint8Array(256 * 1024).fill(3);
      // Chunked (no Content-Length): the file, then an endless skipped part.
      let step = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(c) {
          const next =
            step === 0 ? Buffer.concat([filePart('file', 'a.mp4'), video, CRLF, filePart('extra', 'x.bin')]) : junk;
          step++;
          sent += next.length;
          if (sent > 210_000_000) c.close();
          else c.enqueue(next);
        },
      });
      const res = await fetch(`${s.url}/upload?index=capped`, {
        method: 'POST',
        headers: { authorization: `Bearer ${s.token}`, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
        body,
      });
      expect(res.status).toBe(413);
      expect(((await res.json()) as { message: string }).message).toContain('--max-upload-bytes');
      // Stopped near the cap (plus the form's allowance and what was in the pipes), not at 210 MB.
      expect(sent).toBeLessThan(20_000_000);
      // Bytes before the file part are bounded too (before a token in the form could be checked).
      const before = await fetch(`${s.url}/upload?index=capped`, {
        method: 'POST',
        headers: { authorization: `Bearer ${s.token}`, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
        body: Buffer.concat([
          filePart('extra', 'x.bin'),
          Buffer.alloc(1_200_000, 2),
          CRLF,
          filePart('file', 'a.mp4'),
          video,
          CRLF,
          closing,
        ]),
      });
      expect(before.status).toBe(400);
      expect(((await before.json()) as { message: string }).message).toContain('before its "file" part');
      expect(rowsOf(s, s.userId)).toEqual([]);
      await healthy(s);
    } finally {
      await s.stop();
    }
  }, 60_000);
});

describe('issue 25 item 5: the storage quota under parallel uploads', () => {
  test('8 parallel uploads with room for one store at most the quota (raw, chunked, form and URL uploads)', async () => {
    const video = readFileSync(clip('bottles.mp4')); // 505 kB
    const quota = 2_000_000;
    const s = await startTestServer({ 'user-max-storage-bytes': String(quota), 'user-max-downloads': '16' });
    try {
      const seed = readFileSync(clip('chaplin-bw.mp4')); // 761 kB
      /** A user whose stored videos leave 738 kB of the quota, as in the review. */
      const userWithRoom = async (name: string) => {
        const made = await s.server.service.accounts.createUser(name, null);
        const res = await fetch(`${s.url}/upload?index=seed`, {
          method: 'POST',
          headers: { authorization: `Bearer ${made.token}`, 'content-type': 'video/mp4' },
          body: seed,
        });
        expect(res.status).toBe(200);
        s.server.service.db.$client
          .query('UPDATE videos SET size_bytes = size_bytes + 500000 WHERE user_id = ?')
          .run(made.user.id);
        return made;
      };
      expect(quota - seed.length - 500_000).toBe(738_555);
      const shapes: Record<string, () => RequestInit> = {
        raw: () => ({ headers: { 'content-type': 'video/mp4' }, body: video }),
        chunked: () => ({
          headers: { 'content-type': 'video/mp4' },
          body: new ReadableStream({
            start(c) {
              for (let o = 0; o < video.length; o += 64 * 1024) c.enqueue(video.subarray(o, o + 64 * 1024));
              c.close();
            },
          }),
        }),
        form: () => {
          const f = new FormData();
          f.append('file', new Blob([video], { type: 'video/mp4' }), 'b.mp4');
          return { body: f };
        },
      };
      // The same admission covers URL uploads: an origin that serves the clip (with its length).
      const origin = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response(video) });
      const shapesAndRemote: Record<string, (() => RequestInit) | null> = { ...shapes, remote: null };
      for (const [shape, init] of Object.entries(shapesAndRemote)) {
        const { user, token } = await userWithRoom(`quota-${shape}`);
        const answers = await Promise.all(
          Array.from({ length: 8 }, (_, i) => {
            const req: RequestInit = init
              ? init()
              : {
                  headers: { 'content-type': 'application/json', accept: 'application/json' },
                  body: JSON.stringify({ index: `remote-${i}`, url: `http://127.0.0.1:${origin.port}/b.mp4` }),
                };
            return fetch(init ? `${s.url}/upload?index=${shape}-${i}` : `${s.url}/remote-upload`, {
              method: 'POST',
              body: req.body,
              headers: { authorization: `Bearer ${token}`, ...(req.headers as Record<string, string>) },
            }).then(async (r) => ({ status: r.status, body: (await r.json()) as { message?: string } }));
          }),
        );
        const stored = rowsOf(s, user.id).reduce((sum, r) => sum + (r.size_bytes ?? 0), 0);
        const ok = answers.filter((a) => a.status === 200).length;
        console.log(
          `issue 25 item 5 (${shape}): ${ok} of 8 stored; ${stored} bytes stored against a quota of ${quota} (shared machine)`,
        );
        expect(stored).toBeLessThanOrEqual(quota);
        expect(ok).toBeLessThanOrEqual(1);
        for (const a of answers) if (a.status !== 200) expect(a.status).toBe(507);
        // Declared sizes: exactly one fits, the others are refused at admission.
        if (shape === 'raw') expect(ok).toBe(1);
      }
      origin.stop(true);
      expect(leftovers(s.dataDir).tmp).toEqual([]);
      await healthy(s);
    } finally {
      await s.stop();
    }
  }, 60_000);
});

describe('issue 25 item 7: reanalyses count under --user-max-queued', () => {
  test('21 reanalysis requests with a cap of 5: 5 are queued, the rest are 429', async () => {
    const s = await startTestServer({ 'user-max-queued': '5' });
    try {
      const up = await fetch(`${s.url}/upload?index=re`, {
        method: 'POST',
        headers: { authorization: `Bearer ${s.token}`, 'content-type': 'video/mp4' },
        body: Bun.file(clip('bottles.mp4')),
      });
      expect(up.status).toBe(200);
      const key = ((await up.json()) as { data: { key: string } }).data.key;
      const db = s.server.service.db.$client;
      // 20 more ready videos of the same user (copies of the row: no analysis runs on this server).
      const row = db.query('SELECT * FROM videos WHERE id = ?').get(key) as Record<string, unknown>;
      const cols = Object.keys(row);
      for (let i = 0; i < 20; i++)
        db.query(`INSERT INTO videos (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`).run(
          ...(cols.map((c) => (c === 'id' ? `copy-${i}-${key}` : c === 'sha256' ? `sha-${i}` : row[c])) as string[]),
        );
      const ids = (db.query("SELECT id FROM videos WHERE status = 'ready'").all() as { id: string }[]).map((r) => r.id);
      expect(ids.length).toBe(21);
      const svc = s.server.service;
      // The server itself runs no analysis worker; a service with one shares its queue and database.
      const reanalyze = new ReanalyzeService({
        catalog: svc.catalog,
        queue: svc.queue,
        stages: () => [{ stage: 'analyzing:ocr', info: { kind: 'ocr', name: 'tesseract' } }],
        workers: 1,
        userMaxQueued: svc.config.userMaxQueued,
      });
      const user = (await svc.accounts.getUser(s.userId))!;
      const outcomes = await Promise.all(
        ids.map(async (id) => {
          try {
            await reanalyze.request(user, id, ['ocr']);
            return 200;
          } catch (e) {
            return (e as { status: number }).status;
          }
        }),
      );
      expect(outcomes.filter((o) => o === 200).length).toBe(5);
      expect(outcomes.filter((o) => o === 429).length).toBe(16);
      // And an upload now waits too.
      const more = await fetch(`${s.url}/upload?index=re`, {
        method: 'POST',
        headers: { authorization: `Bearer ${s.token}`, 'content-type': 'video/mp4' },
        body: Bun.file(clip('chaplin-bw.mp4')),
      });
      expect(more.status).toBe(429);
      // The queued ones are processing with a live job: not settled, but otherwise sound.
      expect((await checkInvariants(s.dataDir, { settled: false })).violations).toEqual([]);
    } finally {
      await s.stop();
    }
  }, 60_000);
});

describe('issue 23: forms and uploads', () => {
  test('a form with token and index as fields (curl -F token=… -F index=… -F file=@clip.mp4) is stored', async () => {
    const p = Bun.spawn(
      [
        'curl',
        '-sS',
        '-F',
        `token=${srv.token}`,
        '-F',
        'index=form-fields',
        '-F',
        `file=@${clip('bottles.mp4')}`,
        `${srv.url}/upload`,
      ],
      { stdout: 'pipe', stderr: 'pipe' },
    );
    const out = await new Response(p.stdout).text();
    expect(await p.exited).toBe(0);
    const body = JSON.parse(out);
    expect(body.data.file_size_bytes).toBe(readFileSync(clip('bottles.mp4')).length);
    const row = srv.server.service.db.$client
      .query('SELECT v.user_id, i.name FROM videos v JOIN media_indexes i ON i.id = v.index_id WHERE v.id = ?')
      .get(body.data.key) as { user_id: string; name: string };
    expect(row).toEqual({ user_id: srv.userId, name: 'form-fields' });
    // A wrong token in the form is a 401, and a form without index says where it goes.
    const bad = await fetch(`${srv.url}/upload`, {
      method: 'POST',
      body: (() => {
        const f = new FormData();
        f.append('token', 'not-a-token');
        f.append('index', 'x');
        f.append('file', new Blob([readFileSync(clip('bottles.mp4'))]), 'a.mp4');
        return f;
      })(),
    });
    expect(bad.status).toBe(401);
    const noIndex = await fetch(`${srv.url}/upload`, {
      method: 'POST',
      body: (() => {
        const f = new FormData();
        f.append('token', srv.token);
        f.append('file', new Blob([readFileSync(clip('bottles.mp4'))]), 'a.mp4');
        return f;
      })(),
    });
    expect(noIndex.status).toBe(400);
    expect(((await noIndex.json()) as { message: string }).message).toContain('"index" is required');
    await healthy();
  }, 30_000);

  test("a client that sends the whole body before reading (Python's urllib) reads the early refusal", async () => {
    const s = await startTestServer({ 'max-upload-bytes': '1000000' });
    try {
      const script = `
import sys, urllib.request, urllib.error
req = urllib.request.Request(sys.argv[1], data=b'\\0' * int(sys.argv[2]), headers={'Content-Type': sys.argv[3]}, method='POST')
try:
    print(urllib.request.urlopen(req, timeout=30).status)
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode())
except Exception as e:
    print('broken', type(e).__name__, e)
`;
      const py = async (path: string, bytes: number, type = 'video/mp4') => {
        const p = Bun.spawn(['python3', '-c', script, s.url + path, String(bytes), type], { stdout: 'pipe' });
        return (await new Response(p.stdout).text()).trim();
      };
      // No token, a bad token, over the upload cap, over the JSON body cap: each answer is read.
      expect(await py('/upload?index=x', 20_000_000)).toStartWith('401 {"error":401');
      expect(await py('/upload?index=x&token=nope', 20_000_000)).toStartWith('401 {"error":401');
      expect(await py(`/upload?index=x&token=${s.token}`, 20_000_000)).toStartWith('413 {"error":413');
      expect(await py('/remote-upload', 5_000_000, 'application/json')).toStartWith('413 {"error":413');
      expect(
        await py(`/upload?index=x&token=${s.token}`, 1_500_000, `multipart/form-data; boundary=${BOUNDARY}`),
      ).toStartWith('400 {"error":400');
      expect(rowsOf(s, s.userId)).toEqual([]);
      await healthy(s);
    } finally {
      await s.stop();
    }
  }, 60_000);

  test('GET on a POST-only endpoint is 405 with Allow, an unknown path is still 404', async () => {
    for (const path of ['/upload', '/remote-upload', '/inquire', '/remove-from-index']) {
      const r = await fetch(srv.url + path);
      expect(r.status).toBe(405);
      expect(r.headers.get('allow')).toContain('POST');
      expect(((await r.json()) as { error: number }).error).toBe(405);
    }
    const put = await fetch(`${srv.url}/indexes/abc/webhook`, { method: 'GET' });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toContain('PUT');
    const none = await fetch(`${srv.url}/no-such-thing`);
    expect(none.status).toBe(404);
    await healthy();
  });
});
