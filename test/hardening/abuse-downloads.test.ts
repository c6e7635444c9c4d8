/**
 * Issue 16, downloads that cannot be held hostage and per-user quotas. The slow source is a raw
 * TCP server on 127.0.0.1 that answers 200 with a Content-Length and then drips one byte at a
 * time (Bun.serve would buffer; a raw socket sends exactly what it is told). Each scenario ends
 * with the invariant checker once the downloads are over.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { statSync } from 'node:fs';
import { until } from '../factories';
import { clip, postJson, startOrigin, startTestServer, type Origin, type TestServer } from '../helpers';
import { checkInvariants } from './invariants';

interface Drip {
  url: string;
  /** Connections open right now, and the most ever open at once. */
  open(): number;
  peak(): number;
  stop(): void;
}

/** Answers every request with 200, a 10 MB Content-Length, then one byte every `everyMs`. */
function startDrip(everyMs: number): Drip {
  let open = 0;
  let peak = 0;
  const timers = new Set<ReturnType<typeof setInterval>>();
  const server = Bun.listen<{ timer?: ReturnType<typeof setInterval> }>({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      open(socket) {
        open++;
        peak = Math.max(peak, open);
        socket.data = {};
      },
      data(socket) {
        if (socket.data.timer) return;
        socket.write('HTTP/1.1 200 OK\r\nContent-Type: video/mp4\r\nContent-Length: 10000000\r\n\r\n');
        const timer = setInterval(() => socket.write('x'), everyMs);
        timers.add(timer);
        socket.data.timer = timer;
      },
      close(socket) {
        open--;
        if (socket.data.timer) {
          clearInterval(socket.data.timer);
          timers.delete(socket.data.timer);
        }
      },
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/slow.mp4`,
    open: () => open,
    peak: () => peak,
    stop() {
      for (const t of timers) clearInterval(t);
      server.stop(true);
    },
  };
}

let origin: Origin;
beforeAll(() => {
  origin = startOrigin();
});
afterAll(() => origin.stop());

/** The invariant checker on the idle server, then stop it (which deletes its data directory). */
async function finish(srv: TestServer): Promise<void> {
  try {
    expect((await checkInvariants(srv.dataDir)).violations).toEqual([]);
  } finally {
    await srv.stop();
  }
}

const downloading = (s: TestServer) =>
  (
    s.server.service.db.$client.query("SELECT count(*) AS n FROM videos WHERE status = 'downloading'").get() as {
      n: number;
    }
  ).n;

describe('slow sources', () => {
  test('a source slower than --min-download-rate is dropped (502) although it never pauses for the idle timeout', async () => {
    const drip = startDrip(200);
    const srv = await startTestServer({ 'idle-timeout-ms': '1000', 'min-download-rate': '100' });
    try {
      const t0 = performance.now();
      const r = await Promise.race([
        postJson(srv.url, '/remote-upload', { token: srv.token, index: 'slow', url: drip.url }),
        Bun.sleep(10_000).then(() => ({ status: 0, body: null })),
      ]);
      expect(r.status).toBe(502);
      expect(r.body.message).toContain('--min-download-rate');
      expect(performance.now() - t0).toBeLessThan(5000);
      expect(await until(() => drip.open() === 0, Boolean, 3000, 'drip.open() === 0')).toBe(true);
    } finally {
      drip.stop();
      await finish(srv);
    }
  });

  test('--download-deadline-ms bounds the whole download (504)', async () => {
    const drip = startDrip(20);
    const srv = await startTestServer({ 'min-download-rate': '0', 'download-deadline-ms': '1500' });
    try {
      const r = await Promise.race([
        postJson(srv.url, '/remote-upload', { token: srv.token, index: 'slow', url: drip.url }),
        Bun.sleep(10_000).then(() => ({ status: 0, body: null })),
      ]);
      expect(r.status).toBe(504);
      expect(r.body.message).toContain('--download-deadline-ms');
      expect(downloading(srv)).toBe(0);
    } finally {
      drip.stop();
      await finish(srv);
    }
  });

  test('a JSON upload whose client left is cancelled, and the stuck check stops downloads that outlive it', async () => {
    const drip = startDrip(500);
    const srv = await startTestServer({ 'min-download-rate': '0' });
    try {
      // The download's connection is closed and no video is left downloading.
      const released = () =>
        until(
          () => drip.open() === 0 && downloading(srv) === 0,
          Boolean,
          3000,
          'drip.open() === 0 && downloading(srv) === 0',
        );
      const ctrl = new AbortController();
      const gone = fetch(srv.url + '/remote-upload', {
        method: 'POST',
        signal: ctrl.signal,
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ token: srv.token, index: 'left', url: drip.url }),
      }).catch(() => null);
      expect(await until(() => drip.open() === 1, Boolean, 3000, 'drip.open() === 1')).toBe(true);
      ctrl.abort();
      await gone;
      expect(await released()).toBe(true);

      // Over server-sent events the upload carries on without its client; the stuck check ends it.
      const sse = await fetch(srv.url + '/remote-upload', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ token: srv.token, index: 'left', url: drip.url }),
      });
      await sse.body!.cancel();
      expect(await until(() => drip.open() === 1, Boolean, 3000, 'drip.open() === 1')).toBe(true);
      expect(downloading(srv)).toBe(1);
      await srv.server.service.maintenance.run(new Date(Date.now() + 3 * 3_600_000));
      expect(await released()).toBe(true);
    } finally {
      drip.stop();
      await finish(srv);
    }
  });

  test("300 slow uploads by one user (clients gone at once) leave another user's upload unharmed", async () => {
    const drip = startDrip(2000);
    // The default limits, but a short connect timeout so that the failure before the fix is quick.
    const srv = await startTestServer({ 'connect-timeout-ms': '5000' });
    try {
      const mallory = await srv.server.service.accounts.createUser('mallory', 0);
      const bob = await srv.server.service.accounts.createUser('bob', 0);
      const attacks = Array.from({ length: 300 }, async () => {
        const ctrl = new AbortController();
        const p = fetch(srv.url + '/remote-upload', {
          method: 'POST',
          signal: ctrl.signal,
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          body: JSON.stringify({ token: mallory.token, index: 'drip', url: drip.url }),
        })
          .then((r) => r.arrayBuffer())
          .catch(() => {});
        setTimeout(() => ctrl.abort(), 100);
        return p;
      });
      await Bun.sleep(300);
      const t0 = performance.now();
      const r = await postJson(srv.url, '/remote-upload', {
        token: bob.token,
        index: 'bob',
        url: `${origin.url}/media/bottles.mp4`,
      });
      const latency = performance.now() - t0;
      expect(r.status).toBe(200);
      await Promise.all(attacks);
      console.log(
        `another user's upload while 300 slow uploads were sent: ${latency.toFixed(0)} ms; slow connections at most ${drip.peak()} at once (loaded machine)`,
      );
      expect(drip.peak()).toBeLessThanOrEqual(srv.server.service.config.userMaxDownloads);
      expect(
        await until(
          () => drip.open() === 0 && downloading(srv) === 0,
          Boolean,
          5000,
          'drip.open() === 0 && downloading(srv) === 0',
        ),
      ).toBe(true);
    } finally {
      drip.stop();
      await finish(srv);
    }
  }, 60_000);
});

test("300 slow uploads by one user whose clients stay: 429 past the per-user cap, another user's upload unharmed", async () => {
  const drip = startDrip(2000);
  const srv = await startTestServer({ 'connect-timeout-ms': '5000' });
  try {
    const mallory = await srv.server.service.accounts.createUser('mallory', 0);
    const bob = await srv.server.service.accounts.createUser('bob', 0);
    const ctrl = new AbortController();
    const statuses: number[] = [];
    const attacks = Array.from({ length: 300 }, () =>
      fetch(srv.url + '/remote-upload', {
        method: 'POST',
        signal: ctrl.signal,
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ token: mallory.token, index: 'drip', url: drip.url }),
      })
        .then(async (r) => {
          statuses.push(r.status);
          await r.arrayBuffer();
        })
        .catch(() => {}),
    );
    const cap = srv.server.service.config.userMaxDownloads;
    expect(await until(() => statuses.length >= 300 - cap, Boolean, 20_000, 'statuses.length >= 300 - cap')).toBe(true);
    expect(statuses.filter((x) => x === 429).length).toBe(300 - cap);
    const t0 = performance.now();
    const r = await postJson(srv.url, '/remote-upload', {
      token: bob.token,
      index: 'bob',
      url: `${origin.url}/media/bottles.mp4`,
    });
    const latency = performance.now() - t0;
    expect(r.status).toBe(200);
    console.log(
      `another user's upload while ${cap} slow downloads are held and ${300 - cap} were refused with 429: ${latency.toFixed(0)} ms (loaded machine)`,
    );
    expect(drip.peak()).toBeLessThanOrEqual(cap);
    ctrl.abort();
    await Promise.all(attacks);
    expect(
      await until(
        () => drip.open() === 0 && downloading(srv) === 0,
        Boolean,
        5000,
        'drip.open() === 0 && downloading(srv) === 0',
      ),
    ).toBe(true);
  } finally {
    drip.stop();
    await finish(srv);
  }
}, 60_000);

describe('quotas (one admission check)', () => {
  test('downloads in flight per user and on the server are capped (429 naming the option)', async () => {
    const drip = startDrip(300);
    const srv = await startTestServer({ 'min-download-rate': '0', 'user-max-downloads': '2', 'max-downloads': '3' });
    const pending: Promise<unknown>[] = [];
    try {
      const a = await srv.server.service.accounts.createUser('a', null);
      const b = await srv.server.service.accounts.createUser('b', null);
      const start = (token: string) => {
        const ctrl = new AbortController();
        pending.push(
          fetch(srv.url + '/remote-upload', {
            method: 'POST',
            signal: ctrl.signal,
            headers: { 'content-type': 'application/json', accept: 'application/json' },
            body: JSON.stringify({ token, index: 'q', url: drip.url }),
          }).catch(() => null),
        );
        return ctrl;
      };
      const held = [start(a.token), start(a.token)];
      expect(await until(() => drip.open() === 2, Boolean, 3000, 'drip.open() === 2')).toBe(true);
      const third = await postJson(srv.url, '/remote-upload', { token: a.token, index: 'q', url: drip.url });
      expect(third.status).toBe(429);
      expect(third.body.message).toContain('--user-max-downloads');
      held.push(start(b.token));
      expect(await until(() => drip.open() === 3, Boolean, 3000, 'drip.open() === 3')).toBe(true);
      const full = await postJson(srv.url, '/remote-upload', { token: b.token, index: 'q', url: drip.url });
      expect(full.status).toBe(429);
      expect(full.body.message).toContain('--max-downloads');
      for (const c of held) c.abort();
      await Promise.all(pending);
      expect(await until(() => downloading(srv) === 0, Boolean, 3000, 'downloading(srv) === 0')).toBe(true);
    } finally {
      drip.stop();
      await finish(srv);
    }
  });

  test('videos downloading or waiting for analysis per user are capped (429)', async () => {
    const drip = startDrip(300);
    const srv = await startTestServer({ 'min-download-rate': '0', 'user-max-queued': '1' });
    try {
      const ctrl = new AbortController();
      const p = fetch(srv.url + '/remote-upload', {
        method: 'POST',
        signal: ctrl.signal,
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ token: srv.token, index: 'q', url: drip.url }),
      }).catch(() => null);
      expect(await until(() => downloading(srv) === 1, Boolean, 3000, 'downloading(srv) === 1')).toBe(true);
      const r = await postJson(srv.url, '/remote-upload', {
        token: srv.token,
        index: 'q',
        url: `${origin.url}/media/bottles.mp4`,
      });
      expect(r.status).toBe(429);
      expect(r.body.message).toContain('--user-max-queued');
      ctrl.abort();
      await p;
      expect(await until(() => downloading(srv) === 0, Boolean, 3000, 'downloading(srv) === 0')).toBe(true);
    } finally {
      drip.stop();
      await finish(srv);
    }
  });

  test('stored bytes per user are capped (507 naming the option), also for a file that would cross the limit', async () => {
    const size = statSync(clip('bottles.mp4')).size;
    const srv = await startTestServer({ 'user-max-storage-bytes': String(size + 1000) });
    try {
      const first = await postJson(srv.url, '/remote-upload', {
        token: srv.token,
        index: 'q',
        url: `${origin.url}/media/bottles.mp4`,
      });
      expect(first.status).toBe(200);
      const crossing = await postJson(srv.url, '/remote-upload', {
        token: srv.token,
        index: 'q',
        url: `${origin.url}/media/countdown-living-room.mp4`,
      });
      expect(crossing.status).toBe(507);
      expect(crossing.body.message).toContain('--user-max-storage-bytes');
      srv.server.service.db.$client.run('UPDATE videos SET size_bytes = size_bytes + 1000');
      const full = await postJson(srv.url, '/remote-upload', {
        token: srv.token,
        index: 'q',
        url: `${origin.url}/media/countdown-living-room.mp4`,
      });
      expect(full.status).toBe(507);
      expect(full.body.message).toContain('--user-max-storage-bytes');
      // Another user is not affected.
      const other = await srv.server.service.accounts.createUser('other', null);
      expect(
        (
          await postJson(srv.url, '/remote-upload', {
            token: other.token,
            index: 'q',
            url: `${origin.url}/media/bottles.mp4`,
          })
        ).status,
      ).toBe(200);
    } finally {
      await finish(srv);
    }
  });
});
