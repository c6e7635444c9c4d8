/**
 * Webhooks end to end: a real receiver on 127.0.0.1, the real server (in-process, and as a child
 * process for kill -9). Delivery and its HMAC-SHA256 signature, retries after failures, order per
 * video, the private-address policy on the URL, and delivery after a restart.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kill9, spawnServer, stopAll, stopServer } from './hardening/proc';
import { until } from './factories';
import { clip, getJson, postJson, startTestServer, type TestServer } from './helpers';

interface Delivery {
  body: any;
  raw: string;
  headers: Record<string, string>;
}

/** A receiver that records deliveries and answers `fail` times with 500 before succeeding. */
function receiver(fail = 0) {
  const got: Delivery[] = [];
  let failures = 0;
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const raw = await req.text();
      if (failures < fail) {
        failures++;
        got.push({ body: JSON.parse(raw), raw, headers: Object.fromEntries(req.headers) });
        return new Response('busy', { status: 500 });
      }
      got.push({ body: JSON.parse(raw), raw, headers: Object.fromEntries(req.headers) });
      return new Response('ok');
    },
  });
  return { url: `http://127.0.0.1:${server.port}/hook`, got, stop: () => server.stop(true), port: server.port };
}

const sign = (secret: string, raw: string) => 'sha256=' + createHmac('sha256', secret).update(raw).digest('hex');

async function upload(base: string, token: string, index: string, name: string, query = ''): Promise<string> {
  const res = await fetch(`${base}/upload?index=${encodeURIComponent(index)}&file_name=${name}${query}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'video/mp4' },
    body: readFileSync(clip(name)),
  });
  const b = (await res.json()) as any;
  if (res.status !== 200) throw new Error(JSON.stringify(b));
  return b.data.key;
}

const put = (base: string, token: string, indexId: string, body: Record<string, unknown>) =>
  fetch(`${base}/indexes/${indexId}/webhook`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));

describe('webhooks (in-process server)', () => {
  let srv: TestServer;
  let strict: TestServer;
  beforeAll(async () => {
    [srv, strict] = await Promise.all([
      startTestServer({ 'webhook-retry-ms': '200' }),
      startTestServer({ 'allow-private-urls': false }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([srv.stop(), strict.stop()]);
  });

  test('video.ready and video.removed reach the index URL, signed with the secret shown once, in order', async () => {
    const rx = receiver();
    try {
      const key = await upload(srv.url, srv.token, 'hooked', 'chaplin-bw.mp4');
      const indexId = (await getJson(srv.url, `/indexes?token=${srv.token}`)).body.find(
        (i: any) => i.name === 'hooked',
      ).index_id;
      // Set after that first upload: its event had nowhere to go and was dropped.
      const first = await put(srv.url, srv.token, indexId, { url: rx.url });
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({ index_id: indexId, url: rx.url });
      expect(first.body.secret).toMatch(/^[0-9a-f]{64}$/);
      const again = await put(srv.url, srv.token, indexId, { url: rx.url });
      expect(again.body.secret).toBeUndefined();
      const second = await upload(srv.url, srv.token, 'hooked', 'countdown-living-room.mp4');
      expect(
        (await postJson(srv.url, '/remove-from-index', { token: srv.token, project_id: indexId, video_id: second }))
          .status,
      ).toBe(200);
      await until(
        () => rx.got.length,
        (n) => n >= 2,
        10_000,
        'two deliveries',
      );
      await Bun.sleep(300);
      expect(rx.got.map((d) => [d.body.type, d.body.video_id])).toEqual([
        ['video.ready', second],
        ['video.removed', second],
      ]);
      const [ready] = rx.got;
      expect(ready!.body).toMatchObject({
        index_id: indexId,
        file_id: second,
        file_name: 'countdown-living-room.mp4',
        status: 'ready',
        error: null,
      });
      expect(ready!.headers['x-vidq-event']).toBe('video.ready');
      expect(ready!.headers['x-vidq-signature']).toBe(sign(first.body.secret, ready!.raw));
      expect(rx.got[1]!.headers['x-vidq-signature']).toBe(sign(first.body.secret, rx.got[1]!.raw));
      expect(ready!.headers['x-vidq-signature']).not.toBe(sign('0'.repeat(64), ready!.raw));
      expect(key).not.toBe(second);
      // Rotating shows a new secret; deliveries are signed with it from then on.
      const rotated = await put(srv.url, srv.token, indexId, { url: rx.url, rotate_secret: true });
      expect(rotated.body.secret).toMatch(/^[0-9a-f]{64}$/);
      expect(rotated.body.secret).not.toBe(first.body.secret);
      expect(
        (await postJson(srv.url, '/remove-from-index', { token: srv.token, project_id: indexId, video_id: key }))
          .status,
      ).toBe(200);
      await until(
        () => rx.got.length,
        (n) => n >= 3,
        10_000,
        'the third delivery',
      );
      expect(rx.got[2]!.headers['x-vidq-signature']).toBe(sign(rotated.body.secret, rx.got[2]!.raw));
    } finally {
      rx.stop();
    }
  });

  test('a failing receiver gets the same delivery again with backoff until it accepts; later events wait for it', async () => {
    const rx = receiver(2);
    try {
      const key = await upload(
        srv.url,
        srv.token,
        'retry',
        'bottles.mp4',
        `&webhook_url=${encodeURIComponent(rx.url)}`,
      );
      const indexId = (await getJson(srv.url, `/indexes?token=${srv.token}`)).body.find(
        (i: any) => i.name === 'retry',
      ).index_id;
      expect(
        (await postJson(srv.url, '/remove-from-index', { token: srv.token, project_id: indexId, video_id: key }))
          .status,
      ).toBe(200);
      await until(
        () => rx.got.length,
        (n) => n >= 4,
        15_000,
        'retries then both events',
      );
      const seq = rx.got.map((d) => [d.body.type, d.body.delivery_id]);
      const readyId = seq[0]![1];
      // Two refusals and the success are the same delivery; removal only after it.
      expect(seq.slice(0, 3)).toEqual([
        ['video.ready', readyId],
        ['video.ready', readyId],
        ['video.ready', readyId],
      ]);
      expect(seq[3]![0]).toBe('video.removed');
      // The receiver has the last delivery before the server records its answer: wait for the record.
      const rows = await until(
        () =>
          srv.server.service.db.$client
            .query('SELECT state, attempts FROM webhook_events WHERE video_id = ? ORDER BY id')
            .all(key) as { state: string; attempts: number }[],
        (r) => r.every((e) => e.state !== 'pending'),
        5_000,
        'the deliveries recorded',
      );
      expect(rows).toEqual([
        { state: 'delivered', attempts: 3 },
        { state: 'delivered', attempts: 1 },
      ]);
    } finally {
      rx.stop();
    }
  });

  test('a delivery still refused 24 hours after its event is given up (failed), and the next event of the video goes out', async () => {
    const rx = receiver(1_000_000); // refuses everything
    try {
      const key = await upload(
        srv.url,
        srv.token,
        'give-up',
        'chaplin-bw.mp4',
        `&webhook_url=${encodeURIComponent(rx.url)}`,
      );
      const row = () =>
        srv.server.service.db.$client
          .query('SELECT id, state, attempts FROM webhook_events WHERE video_id = ? ORDER BY id')
          .all(key) as { id: number; state: string; attempts: number }[];
      await until(row, (r) => r[0]!.attempts >= 1, 10_000, 'a first refused attempt');
      // As if the event were a day old: the next refusal is the last.
      srv.server.service.db.$client
        .query('UPDATE webhook_events SET created_at = created_at - ?, next_attempt_at = 0 WHERE video_id = ?')
        .run(25 * 3600 * 1000, key);
      await until(row, (r) => r[0]!.state === 'failed', 10_000, 'the delivery to be given up');
      const indexId = (await getJson(srv.url, `/indexes?token=${srv.token}`)).body.find(
        (i: any) => i.name === 'give-up',
      ).index_id;
      expect(
        (await postJson(srv.url, '/remove-from-index', { token: srv.token, project_id: indexId, video_id: key }))
          .status,
      ).toBe(200);
      await until(
        () => rx.got.filter((d) => d.body.type === 'video.removed').length,
        (n) => n >= 1,
        10_000,
        'the removal to be attempted',
      );
    } finally {
      rx.stop();
    }
  });

  test('the URL follows the private-address policy and is validated; another user cannot set it', async () => {
    await upload(strict.url, strict.token, 'strict', 'chaplin-bw.mp4');
    const indexId = (await getJson(strict.url, `/indexes?token=${strict.token}`)).body[0].index_id;
    const priv = await put(strict.url, strict.token, indexId, { url: 'http://127.0.0.1:9/hook' });
    expect(priv.status).toBe(403);
    expect(priv.body.message).toContain('--allow-private-urls');
    const bad = await put(strict.url, strict.token, indexId, { url: 'ftp://example.com/x' });
    expect(bad).toMatchObject({ status: 400, body: { error: 400 } });
    const eve = await strict.server.service.accounts.createUser('eve', 1);
    expect((await put(strict.url, eve.token, indexId, { url: null })).status).toBe(404);
    const viaUpload = await fetch(
      `${strict.url}/upload?index=new-one&webhook_url=${encodeURIComponent('http://10.0.0.1/x')}`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${strict.token}`, 'content-type': 'video/mp4' },
        body: readFileSync(clip('chaplin-bw.mp4')),
      },
    );
    expect(viaUpload.status).toBe(403);
    expect((await getJson(strict.url, `/indexes?token=${strict.token}`)).body.map((i: any) => i.name)).toEqual([
      'strict',
    ]);
  });
});

describe('webhooks and kill -9', () => {
  afterAll(stopAll);

  test('an upload cut off by a kill -9 is announced as video.failed (with its reason) after the restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'vidq-hook-failed-'));
    const rx = receiver();
    try {
      const s = await spawnServer(dataDir, ['--analysis-workers', '0', '--webhook-url', rx.url]);
      const bytes = readFileSync(clip('bottles.mp4'));
      let i = 0;
      const body = new ReadableStream<Uint8Array>({
        async pull(c) {
          await Bun.sleep(20);
          if (i < bytes.length) c.enqueue(bytes.subarray(i, (i += 16 * 1024)));
        },
      });
      const pending = fetch(`${s.url}/upload?index=cut&file_name=bottles.mp4`, {
        method: 'POST',
        headers: { authorization: `Bearer ${s.token}`, 'content-type': 'video/mp4' },
        body,
      }).catch(() => null);
      const rows = () => {
        const { Database } = require('bun:sqlite') as typeof import('bun:sqlite');
        const d = new Database(join(dataDir, 'vidq.db'), { readonly: true });
        try {
          return (d.query("SELECT count(*) AS n FROM videos WHERE status = 'downloading'").get() as { n: number }).n;
        } finally {
          d.close();
        }
      };
      await until(rows, (n) => n === 1, 10_000, 'the upload to start');
      await kill9(s);
      await pending;
      const again = await spawnServer(dataDir, ['--analysis-workers', '0', '--webhook-url', rx.url]);
      await until(
        () => rx.got.length,
        (n) => n >= 1,
        15_000,
        'the video.failed delivery',
      );
      expect(rx.got[0]!.body).toMatchObject({ type: 'video.failed', file_name: 'bottles.mp4', status: 'failed' });
      expect(rx.got[0]!.body.error).toContain('interrupted');
      await stopServer(again);
    } finally {
      rx.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('events pending at a crash are delivered after the restart (--webhook-url)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'vidq-hook-kill-'));
    const rx = receiver();
    const down = rx.port;
    rx.stop(); // nothing listens at the URL while the first server runs
    try {
      const url = `http://127.0.0.1:${down}/hook`;
      const s = await spawnServer(dataDir, [
        '--analysis-workers',
        '0',
        '--webhook-url',
        url,
        '--webhook-retry-ms',
        '200',
      ]);
      const key = await upload(s.url, s.token, 'crash', 'chaplin-bw.mp4');
      const db = () => {
        const { Database } = require('bun:sqlite') as typeof import('bun:sqlite');
        const d = new Database(join(dataDir, 'vidq.db'), { readonly: true });
        try {
          return d.query('SELECT state, attempts FROM webhook_events WHERE video_id = ?').get(key) as {
            state: string;
            attempts: number;
          } | null;
        } finally {
          d.close();
        }
      };
      await until(db, (r) => !!r && r.attempts >= 1, 10_000, 'a failed attempt');
      await kill9(s);
      // The receiver comes up on the same port; the restarted server delivers the pending event.
      const got: Delivery[] = [];
      const up = Bun.serve({
        hostname: '127.0.0.1',
        port: down,
        async fetch(req) {
          const raw = await req.text();
          got.push({ body: JSON.parse(raw), raw, headers: Object.fromEntries(req.headers) });
          return new Response('ok');
        },
      });
      try {
        const again = await spawnServer(dataDir, [
          '--analysis-workers',
          '0',
          '--webhook-url',
          url,
          '--webhook-retry-ms',
          '200',
        ]);
        await until(
          () => got.length,
          (n) => n >= 1,
          15_000,
          'the delivery after the restart',
        );
        expect(got[0]!.body).toMatchObject({ type: 'video.ready', video_id: key, file_name: 'chaplin-bw.mp4' });
        await stopServer(again);
        expect(db()).toMatchObject({ state: 'delivered' });
      } finally {
        up.stop(true);
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
