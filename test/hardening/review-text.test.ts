/**
 * Issue 25 (an outside review acting as a hostile user), the text findings: terminal control
 * sequences in subtitle cues stored verbatim and printed by the CLI (item 3), bidi and C1 controls
 * in person names (item 4), and a CLI without timeouts, size caps or readable errors that sent its
 * token in URLs (item 10). The hostile servers here are real HTTP servers on 127.0.0.1 speaking the
 * vidq API's shapes. Each scenario with a data directory ends with the invariant checker.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { SubtitlesAnalyzer } from '../../src/analysis/stages/subtitles';
import { askCommand, ClientError, lsCommand, type ClientOptions } from '../../src/cli/client';
import { resolveBinaries } from '../../src/media/binaries';
import { clip, startTestServer, type TestServer } from '../helpers';
import { stageContext } from '../factories';
import { checkInvariants } from './invariants';

/** Everything a terminal would act on: ESC, BEL, C1 controls (U+009B is a one-byte CSI), bidi controls. */
const TERMINAL_CONTROLS = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]/;
const CLIPBOARD = '\u001b]52;c;ZWNobyBvd25lZA==\u0007';
const CLEAR = '\u001b[2J';
const HOSTILE = `${CLIPBOARD}${CLEAR}\u009b31m\u202eevil`;

/** A stream that records what the CLI writes. */
function capture(): NodeJS.WriteStream & { text: () => string } {
  const parts: string[] = [];
  return {
    isTTY: false,
    write(chunk: string | Uint8Array) {
      parts.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      return true;
    },
    text: () => parts.join(''),
  } as unknown as NodeJS.WriteStream & { text: () => string };
}

interface Seen {
  url: string;
  authorization: string | null;
}

/** A server of our choosing on 127.0.0.1 that records each request. */
function hostile(fetch: (req: Request, url: URL) => Response | Promise<Response>) {
  const seen: Seen[] = [];
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 0,
    fetch(req) {
      seen.push({ url: req.url, authorization: req.headers.get('authorization') });
      return fetch(req, new URL(req.url));
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, seen, stop: () => server.stop(true) };
}

const TOKEN = 'T'.repeat(64);
const opts = (server: string, out = capture(), extra: Partial<ClientOptions> = {}) => ({
  server,
  token: TOKEN,
  out,
  ...extra,
});
const sse = (events: unknown[] | string) =>
  new Response(typeof events === 'string' ? events : events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join(''), {
    headers: { 'content-type': 'text/event-stream' },
  });

describe('issue 25 item 3: terminal control sequences', () => {
  let srv: TestServer;
  let subtitleOrigin: ReturnType<typeof hostile>;
  beforeAll(async () => {
    srv = await startTestServer();
    subtitleOrigin = hostile((_req, url) =>
      url.pathname === '/clip.mp4'
        ? new Response(Bun.file(clip('bottles.mp4')))
        : new Response(
            `1\n00:00:01,000 --> 00:00:03,000\nhello ${CLIPBOARD}world${CLEAR}\n\n2\n00:00:04,000 --> 00:00:06,000\n\u202eright to left\u009b31m and red\n`,
            { headers: { 'content-type': 'application/x-subrip' } },
          ),
    );
  });
  afterAll(async () => {
    subtitleOrigin.stop();
    await srv.stop();
  });

  test('subtitle cues are stored without control sequences, and the .vtt/.srt exports carry none', async () => {
    const up = await fetch(`${srv.url}/remote-upload`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${srv.token}` },
      body: JSON.stringify({
        index: 'subs',
        url: `${subtitleOrigin.url}/clip.mp4`,
        subtitles_url: `${subtitleOrigin.url}/cues.srt`,
      }),
    });
    expect(up.status).toBe(200);
    const key = ((await up.json()) as { data: { key: string } }).data.key;
    const db = srv.server.service.db;
    const row = db.$client.query('SELECT storage_path FROM videos WHERE id = ?').get(key) as { storage_path: string };
    const path = join(srv.dataDir, row.storage_path);
    // The subtitles stage of the analysis, run here (this server runs no analysis worker).
    const bins = await resolveBinaries(srv.server.service.files.binDir);
    const result = await new SubtitlesAnalyzer(async () => bins.ffprobe).run(
      stageContext({
        video: {
          id: key,
          path,
          dir: join(path, '..'),
          durationSec: 40,
          fps: 30,
          width: 640,
          height: 360,
          hasAudio: true,
        },
        ffmpeg: bins.ffmpeg,
      }),
    );
    await srv.server.service.catalog.write((tx) => result.apply!(tx));
    db.$client.query("UPDATE videos SET status = 'ready' WHERE id = ?").run(key);
    const texts = (db.$client.query('SELECT text FROM segments WHERE video_id = ?').all(key) as { text: string }[]).map(
      (r) => r.text,
    );
    expect(texts.length).toBe(2);
    expect(texts.join(' ')).toContain('hello');
    expect(texts.join(' ')).toContain('right to left');
    for (const t of texts) expect(t).not.toMatch(TERMINAL_CONTROLS);
    for (const format of ['vtt', 'srt']) {
      const res = await fetch(`${srv.url}/videos/${key}/transcript.${format}`, {
        headers: { authorization: `Bearer ${srv.token}` },
      });
      expect(res.status).toBe(200);
      const body = await res.text();
      expect(body).toContain('hello');
      expect(body).not.toMatch(TERMINAL_CONTROLS);
    }
    expect((await checkInvariants(srv.dataDir)).violations).toEqual([]);
  }, 60_000);

  test("a hostile server's names, messages and answers reach the terminal without control sequences (ls, ask)", async () => {
    const h = hostile((_req, url) => {
      if (url.pathname === '/indexes')
        return Response.json([
          { index_id: `idx${HOSTILE}`, name: `name${HOSTILE}`, count: 1, total_duration: 5, deleted: false },
        ]);
      if (url.pathname === '/index-resources')
        return Response.json([
          {
            file_id: `f${HOSTILE}`,
            file_name: `clip${HOSTILE}.mp4`,
            status: 'failed',
            progress: 0,
            error: `bad\n${HOSTILE}`,
            metadata: { duration: 3 },
          },
        ]);
      if (url.pathname === '/inquire-stream')
        return sse([
          {
            type: 'evidence',
            evidence: [{ video_id: 'v', file_name: `x${HOSTILE}`, start: 1, end: 2, kind: 'ocr', text: HOSTILE }],
          },
          { type: 'token', text: `the answer ${HOSTILE}` },
          { type: 'complete', output: 'x' },
        ]);
      return Response.json({ error: 400, message: `refused ${HOSTILE}` }, { status: 400 });
    });
    try {
      const out = capture();
      expect(await lsCommand(opts(h.url, out), undefined)).toBe(0);
      expect(await lsCommand(opts(h.url, out), 'some-index')).toBe(0);
      expect(await askCommand(opts(h.url, out), `idx${HOSTILE}`, 'what?', {})).toBe(0);
      const text = out.text();
      expect(text).toContain('the answer');
      expect(text).toContain('clip');
      expect(text).not.toMatch(TERMINAL_CONTROLS);
      // An error message from the server, as the CLI shows it.
      const err = await askCommand(opts(h.url), 'nope', 'what?', {}).catch((e) => e);
      expect(err).toBeInstanceOf(ClientError);
      expect((err as Error).message).not.toMatch(TERMINAL_CONTROLS);
    } finally {
      h.stop();
    }
  });
});

describe('issue 25 item 4: person names', () => {
  test('bidi and C1 controls in a person name are refused like in an index name', async () => {
    const srv = await startTestServer();
    try {
      const svc = srv.server.service;
      const user = (await svc.accounts.getUser(srv.userId))!;
      const index = (await svc.indexes.findOrCreateByName(svc.catalog, user, 'people')).index;
      // A person of the index (face grouping needs the face models; the rows are what it writes).
      svc.db.$client
        .query('INSERT INTO people (id, index_id, user_id, name, created_at) VALUES (?, ?, ?, NULL, ?)')
        .run('p1', index.id, user.id, Date.now());
      for (const bad of ['Ann\u202Eeve', 'Ann\u2066x\u2069', 'Ann\u0085', 'Ann\u009B31m']) {
        let status = 0;
        try {
          await svc.people.rename(user, index.id, 'p1', bad);
        } catch (e) {
          status = (e as { status: number }).status;
        }
        expect(status, JSON.stringify(bad)).toBe(400);
      }
      const named = svc.db.$client.query('SELECT name FROM people WHERE id = ?').get('p1') as { name: string | null };
      expect(named.name).toBeNull();
      svc.db.$client.query('DELETE FROM people WHERE id = ?').run('p1');
      expect((await checkInvariants(srv.dataDir)).violations).toEqual([]);
    } finally {
      await srv.stop();
    }
  });
});

describe('issue 25 item 10: the CLI as a client of any server', () => {
  test('a server that never answers: a readable timeout, not a hang', async () => {
    const h = hostile(() => new Promise<Response>(() => {}));
    try {
      const t0 = performance.now();
      const err = await lsCommand(opts(h.url, capture(), { timeoutMs: 500 }), undefined).catch((e) => e);
      expect(err).toBeInstanceOf(ClientError);
      expect((err as Error).message).toContain('did not answer within');
      expect(performance.now() - t0).toBeLessThan(5000);
    } finally {
      h.stop();
    }
  });

  test('an endless JSON listing and an event stream without blank lines stop at a cap with a readable error', async () => {
    const chunk = new TextEncoder().encode(`{"index_id":"x","name":"${'n'.repeat(1000)}","count":1},`);
    const h = hostile((_req, url) => {
      if (url.pathname === '/indexes' && url.search === '')
        return new Response(
          new ReadableStream({
            start(c) {
              c.enqueue(new TextEncoder().encode('['));
            },
            pull(c) {
              c.enqueue(chunk);
            },
          }),
          { headers: { 'content-type': 'application/json' } },
        );
      return new Response('not used', { status: 500 });
    });
    const stream = hostile((_req, url) => {
      if (url.pathname === '/indexes')
        return Response.json([{ index_id: 'i', name: 'i', count: 0, total_duration: 0 }]);
      const line = new TextEncoder().encode(`data: ${'x'.repeat(64 * 1024)}\n`);
      return new Response(
        new ReadableStream({
          pull(c) {
            c.enqueue(line);
          },
        }),
        { headers: { 'content-type': 'text/event-stream' } },
      );
    });
    try {
      const listing = await lsCommand(opts(h.url), undefined).catch((e) => e);
      expect(listing).toBeInstanceOf(ClientError);
      expect((listing as Error).message).toContain('larger than');
      const events = await askCommand(opts(stream.url), 'i', 'what?', {}).catch((e) => e);
      expect(events).toBeInstanceOf(ClientError);
      expect((events as Error).message).toContain('larger than');
    } finally {
      h.stop();
      stream.stop();
    }
  }, 60_000);

  test('a malformed event is a one-line error from `vidq ask` (exit 1), not a dump of the source', async () => {
    const h = hostile((_req, url) =>
      url.pathname === '/indexes'
        ? Response.json([{ index_id: 'i', name: 'i', count: 0, total_duration: 0 }])
        : sse('data: {"type": "token", "text": \n\n'),
    );
    try {
      const p = Bun.spawn(
        [
          process.execPath,
          join(import.meta.dir, '../../src/main.ts'),
          'ask',
          '--index',
          'i',
          'what?',
          '--server',
          h.url,
          '--token',
          TOKEN,
        ],
        { stdout: 'pipe', stderr: 'pipe', stdin: 'ignore' },
      );
      const [err, code] = await Promise.all([new Response(p.stderr).text(), p.exited]);
      expect(code).toBe(1);
      expect(err.trim().split('\n')).toHaveLength(1);
      expect(err).toContain('not JSON');
    } finally {
      h.stop();
    }
  });

  test('the token goes as a header, never in a URL, and not along a redirect to another origin', async () => {
    const other = hostile(() => Response.json([]));
    const h = hostile((_req, url) =>
      url.pathname === '/index-resources'
        ? Response.redirect(`${other.url}/index-resources${url.search}`, 302)
        : url.pathname === '/indexes'
          ? Response.json([{ index_id: 'i', name: 'i', count: 0, total_duration: 0 }])
          : sse([{ type: 'complete', output: 'ok' }]),
    );
    try {
      await lsCommand(opts(h.url), undefined);
      await askCommand(opts(h.url), 'i', 'what?', {});
      const redirected = await lsCommand(opts(h.url), 'i').catch((e) => e);
      expect(redirected).toBeInstanceOf(ClientError);
      expect((redirected as Error).message).toContain('redirected');
      expect(h.seen.length).toBeGreaterThanOrEqual(4);
      for (const s of h.seen) {
        expect(s.url).not.toContain(TOKEN);
        expect(s.authorization).toBe(`Bearer ${TOKEN}`);
      }
      expect(other.seen).toEqual([]);
    } finally {
      h.stop();
      other.stop();
    }
  });
});
