/**
 * Test factories: the set-ups many tests share, written once.
 * - waitIndexReady / waitVideoReady: poll GET /index-resources until the analysis ends;
 * - uploadAndWaitReady: POST /remote-upload, then wait for that video;
 * - userWithToken: one more user of a test server, with their token;
 * - stageContext: a hand-built StageContext for running one analysis stage on its own.
 * Live sources (test/live/, ui-live):
 * - liveWorkDir: a throw-away folder and the ffmpeg the server uses;
 * - clipFrames: one frame a second of a shared clip, as a camera client would push them;
 * - loopClip / hlsLive: a shared clip looped in real time into a live source (RTMP, RTSP, HLS…);
 * - serveFolder: a local HTTP origin for a live playlist's files (optionally behind a password);
 * - freePort: a TCP port nothing listens on yet;
 * - liveClient: the live API as a JSON client (indexes, streams, waiting for a stream's state).
 * The web page in headless Chromium (ui*, openapi):
 * - CHROMIUM / haveChromium: the browser, and whether it is installed (the tests skip without it);
 * - launchChromium: it started headless; signIn: the page opened and signed in with a token.
 * Media files made for a test:
 * - ffmpegSync: one ffmpeg run, quiet and overwriting, that throws with ffmpeg's message.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { StageContext } from '../src/analysis/contracts';
import { eq } from 'drizzle-orm';
import { createLogger } from '../src/log';
import type { Db } from '../src/storage/db';
import type { DataDir } from '../src/storage/files';
import { videos, type Video } from '../src/storage/schema';
import { resolveBinaries } from '../src/media/binaries';
import { clip, getJson, postJson, type TestServer } from './helpers';

type Srv = Pick<TestServer, 'url' | 'token'>;

interface WaitOptions {
  /** Whose token lists the index (default: the test server's user). */
  token?: string;
  timeoutMs?: number;
  intervalMs?: number;
  /** Called with every listing polled (for tests that also check what the listing showed). */
  onPoll?: (rows: any[]) => void;
}

const listOf = async (srv: Srv, index: string, token: string) =>
  (await getJson(srv.url, `/index-resources?index=${encodeURIComponent(index)}`, { authorization: `Bearer ${token}` }))
    .body as any[];

/**
 * The one polling helper of the tests: calls `fn` every `everyMs` until `ok` holds for what it
 * returns, and returns that value; once `ms` have passed (after one last look) it throws, naming
 * `what` and the last value seen.
 */
export async function until<T>(
  fn: () => Promise<T> | T,
  ok: (v: T) => boolean,
  ms: number,
  what: string,
  everyMs = 50,
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const last = await fn();
    if (ok(last)) return last;
    if (Date.now() >= end)
      throw new Error(`timed out after ${ms} ms waiting for ${what}; last: ${JSON.stringify(last)?.slice(0, 500)}`);
    await Bun.sleep(everyMs);
  }
}

/**
 * Polls the index (a name or id) until every video in it is ready and there is at least one: the
 * rows. Throws with the failed rows as soon as one fails, or when the time is up.
 */
export async function waitIndexReady(
  srv: Srv,
  index: string,
  { token = srv.token, timeoutMs = 120_000, intervalMs = 250, onPoll }: WaitOptions = {},
): Promise<any[]> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const rows = await listOf(srv, index, token);
    onPoll?.(rows);
    if (rows.length && rows.every((r) => r.status === 'ready')) return rows;
    if (rows.some((r) => r.status === 'failed'))
      throw new Error(JSON.stringify(rows.filter((r) => r.status === 'failed')));
    if (Date.now() > end) throw new Error('analysis did not finish in time');
    await Bun.sleep(intervalMs);
  }
}

/** Polls the index until the video with this key is ready: its row. Throws with the row if it fails or the time is up. */
export async function waitVideoReady(
  srv: Srv,
  index: string,
  key: string,
  { token = srv.token, timeoutMs = 90_000, intervalMs = 200, onPoll }: WaitOptions = {},
): Promise<any> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const rows = await listOf(srv, index, token);
    onPoll?.(rows);
    const v = rows.find((r) => r.file_id === key);
    if (v?.status === 'ready') return v;
    if (v?.status === 'failed' || Date.now() > end) throw new Error(JSON.stringify(v));
    await Bun.sleep(intervalMs);
  }
}

/** Adds the video at `url` to the index (POST /remote-upload) and waits until it is ready: its key and row. */
export async function uploadAndWaitReady(
  srv: Srv,
  index: string,
  url: string,
  opts: WaitOptions & { body?: Record<string, unknown> } = {},
): Promise<{ key: string; row: any }> {
  const token = opts.token ?? srv.token;
  const up = await postJson(srv.url, '/remote-upload', { token, index, url, ...opts.body });
  if (up.status !== 200) throw new Error(`remote-upload answered ${up.status}: ${JSON.stringify(up.body)}`);
  const key = up.body.data.key as string;
  return { key, row: await waitVideoReady(srv, index, key, opts) };
}

/** One more user of the test server (credits: null for unlimited), with their token. */
export async function userWithToken(srv: TestServer, name: string, credits: number | null = null) {
  const { user, token } = await srv.server.service.accounts.createUser(name, credits);
  return { userId: user.id, token };
}

/**
 * A StageContext for running one stage by hand: no frames or segments stored, a quiet log, no
 * progress reports, a signal never aborted; `video` and `ffmpeg` given, anything else overridden.
 */
export function stageContext(
  fields: Pick<StageContext, 'video' | 'ffmpeg'> & Partial<Omit<StageContext, 'video' | 'ffmpeg'>>,
): StageContext {
  return {
    signal: new AbortController().signal,
    log: createLogger('error'),
    progress: () => {},
    frames: () => [],
    segments: () => [],
    ...fields,
  };
}

/** A throw-away folder `vidq-<name>-…` for a live test's files, and the ffmpeg the server uses. */
export async function liveWorkDir(name: string): Promise<{ work: string; ffmpeg: string }> {
  const work = mkdtempSync(join(tmpdir(), `vidq-${name}-`));
  const { ffmpeg } = await resolveBinaries(join(work, 'bin'));
  return { work, ffmpeg };
}

/**
 * One frame a second of `seconds` of the shared clip `name` (from `from` s), written to `dir` as
 * `<prefix>01.png`, `<prefix>02.png`…: their base64, in time order (what a camera client pushes).
 */
export async function clipFrames(
  ffmpeg: string,
  name: string,
  dir: string,
  { seconds, from = 0, prefix = 'f' }: { seconds: number; from?: number; prefix?: string },
): Promise<string[]> {
  const seek = from > 0 ? ['-ss', String(from)] : [];
  const p = Bun.spawn(
    [
      ffmpeg,
      '-v',
      'error',
      ...seek,
      '-i',
      clip(name),
      '-t',
      String(seconds),
      '-vf',
      'fps=1',
      join(dir, `${prefix}%02d.png`),
    ],
    { stdout: 'ignore', stderr: 'pipe' },
  );
  if ((await p.exited) !== 0) throw new Error(`ffmpeg failed: ${await new Response(p.stderr).text()}`);
  return readdirSync(dir)
    .filter((n) => n.startsWith(prefix) && n.endsWith('.png'))
    .sort()
    .map((n) => readFileSync(join(dir, n)).toString('base64'));
}

/**
 * The shared clip `name` looped in real time as H.264 (with AAC sound when `audio`), written to
 * `target` by ffmpeg's muxer `format`; `extra` are more output options (e.g. `-listen 1`).
 */
export function loopClip(
  ffmpeg: string,
  name: string,
  format: string,
  target: string,
  { audio = false, extra = [] }: { audio?: boolean; extra?: string[] } = {},
): ReturnType<typeof Bun.spawn> {
  return Bun.spawn(
    [ffmpeg, '-v', 'error', '-re', '-stream_loop', '-1', '-i', clip(name)].concat(
      audio ? ['-c:a', 'aac', '-ar', '44100'] : ['-an'],
      ['-c:v', 'libx264', '-preset', 'ultrafast', '-g', '25', ...extra, '-f', format, target],
    ),
    { stdin: 'ignore', stdout: 'ignore', stderr: 'ignore' },
  );
}

/** A live HLS playlist `live.m3u8` in `dir` (1 s segments, the last 6 kept, no end list), from the looped clip. */
export const hlsLive = (ffmpeg: string, name: string, dir: string) =>
  loopClip(ffmpeg, name, 'hls', join(dir, 'live.m3u8'), {
    extra: ['-hls_time', '1', '-hls_list_size', '6', '-hls_flags', 'delete_segments+omit_endlist'],
  });

/**
 * An HTTP origin on 127.0.0.1 serving the files of `dir` by plain name (404 for anything else or a
 * file that is gone); with `basic`, only to requests that carry that `user:password`.
 */
export function serveFolder(dir: string, { basic }: { basic?: string } = {}): ReturnType<typeof Bun.serve> {
  const expected = basic && `Basic ${Buffer.from(basic).toString('base64')}`;
  return Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      if (expected && req.headers.get('authorization') !== expected)
        return new Response('who?', { status: 401, headers: { 'www-authenticate': 'Basic realm="cam"' } });
      const name = new URL(req.url).pathname.slice(1);
      if (!/^[\w.-]+$/.test(name)) return new Response('no', { status: 404 });
      const f = Bun.file(join(dir, name));
      return (await f.exists()) ? new Response(f) : new Response('gone', { status: 404 });
    },
  });
}

/** A TCP port on 127.0.0.1 that nothing listens on (for a server the test starts itself). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/**
 * The live API of a test server as a JSON client. `server` is read at each call (a test that
 * restarts its server hands the current one); `answers`, when given, collects the text of every
 * answer (for checks that a secret never appears in one).
 */
export function liveClient(server: () => { url: string; token: string }, answers?: string[]) {
  const api = async (path: string, init?: RequestInit): Promise<any> => {
    const text = await (await fetch(server().url + path, init)).text();
    answers?.push(text);
    return JSON.parse(text);
  };
  const post = (path: string, body: unknown) =>
    api(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const token = () => server().token;
  /** The stream's row of GET /streams (undefined until it is listed). */
  const stream = async (id: string): Promise<any> =>
    (await api(`/streams?token=${token()}`)).find((s: { stream_id: string }) => s.stream_id === id);
  return {
    api,
    post,
    /** GET /create-index of a live (performance) index. */
    performanceIndex: (index: string) => api(`/create-index?token=${token()}&index=${index}&type=performance`),
    stream,
    /** Polls the stream's row until `ok` holds: that row; throws with the last row when the time is up. */
    waitStream: (id: string, ok: (row: any) => boolean, timeoutMs: number, what: string, intervalMs = 250) =>
      until(() => stream(id), ok, timeoutMs, what, intervalMs),
  };
}

/** Debian's `chromium` (apt-get install -y chromium), or VIDQ_CHROMIUM; no browser is downloaded. */
export const CHROMIUM = process.env.VIDQ_CHROMIUM ?? '/usr/bin/chromium';
export const haveChromium = existsSync(CHROMIUM);

/** Headless Chromium through playwright-core, quiet (no background traffic); `extraArgs` add switches. */
export async function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...extraArgs,
    ],
  });
}

/** Opens the web page at `url` and signs in with `token` through its form. */
export async function signIn(page: Page, url: string, token: string): Promise<void> {
  await page.goto(url + '/');
  await page.getByLabel('Access token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/**
 * Runs `ffmpeg -hide_banner -loglevel error -y …args` to its end (to make a test file): its
 * stdout. Throws with ffmpeg's message when it fails.
 */
export function ffmpegSync(ffmpeg: string, args: string[]): Uint8Array {
  const p = Bun.spawnSync([ffmpeg, '-hide_banner', '-loglevel', 'error', '-y', ...args]);
  if (p.exitCode !== 0) throw new Error(`ffmpeg could not make ${args.at(-1)}: ${p.stderr.toString()}`);
  return p.stdout;
}

/**
 * A `ready` video row of `place`'s index with no file behind it, for tests that insert segments
 * or vectors directly; `analysis` is the row's analysis record (e.g. which embedder made its vectors).
 */
export function insertReadyVideo(
  db: Db,
  place: { indexId: string; userId: string },
  name: string,
  analysis?: Record<string, unknown>,
): Video {
  const id = `vid_${name}_${Math.random().toString(36).slice(2, 10)}`;
  const now = new Date();
  db.insert(videos)
    .values({
      id,
      indexId: place.indexId,
      userId: place.userId,
      sourceUrl: `https://example.test/${name}`,
      fileName: name,
      storagePath: `media/${id}/source`,
      status: 'ready',
      ...(analysis && { analysis }),
      uploadedAt: now,
      updatedAt: now,
    } as typeof videos.$inferInsert)
    .run();
  return db.select().from(videos).where(eq(videos.id, id)).get()!;
}

/**
 * A video row of `place`'s index with its source file (a copy of `source`) where an upload stores
 * it, `processing` unless `row` says otherwise; for tests that run the worker's steps in-process.
 */
export function insertStoredVideo(
  svc: { db: Db; files: DataDir },
  place: { indexId: string; userId: string },
  id: string,
  source: string,
  row: Partial<typeof videos.$inferInsert> = {},
): void {
  const ext = extname(source).slice(1);
  mkdirSync(svc.files.videoDir(id), { recursive: true });
  const rel = svc.files.sourceRelPath(id, ext);
  copyFileSync(source, svc.files.abs(rel));
  const now = new Date();
  svc.db
    .insert(videos)
    .values({
      id,
      indexId: place.indexId,
      userId: place.userId,
      sourceUrl: `http://x/v.${ext}`,
      fileName: `v.${ext}`,
      storagePath: rel,
      sizeBytes: 1000,
      status: 'processing',
      progress: 0,
      uploadedAt: now,
      updatedAt: now,
      ...row,
    })
    .run();
}
