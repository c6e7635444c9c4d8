/**
 * `vidq add`, `vidq ls`, `vidq ask` and `vidq search` as a script runs them: the CLI as a child process (stdout a
 * pipe, so plain lines) against the real server on 127.0.0.1, with real clips copied into a folder.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { segments, videos } from '../src/storage/schema';
import { clip, getJson, startTestServer, type TestServer } from './helpers';

let srv: TestServer;
const dir = mkdtempSync(join(tmpdir(), 'vidq-cli-add-'));

beforeAll(async () => {
  srv = await startTestServer();
  mkdirSync(join(dir, 'sub', 'deeper'), { recursive: true });
  copyFileSync(clip('chaplin-bw.mp4'), join(dir, 'chaplin.mp4'));
  copyFileSync(clip('countdown-living-room.mp4'), join(dir, 'sub', 'deeper', 'countdown.mp4'));
  writeFileSync(join(dir, 'sub', 'notes.txt'), 'not a video, and not picked up from a folder');
  copyFileSync(clip('jfk-speech.wav'), join(dir, 'speech.wav'));
});
afterAll(async () => {
  await srv.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function vidq(args: string[], env: Record<string, string> = {}) {
  const p = Bun.spawn([process.execPath, join(import.meta.dir, '../src/main.ts'), ...args], {
    stdout: 'pipe',
    stderr: 'pipe',
    stdin: 'ignore',
    env: { PATH: process.env.PATH ?? '', HOME: dir, ...env },
  });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, out, err };
}

test('vidq add DIR uploads every video in it recursively, with plain progress lines, says what it skipped and why, and exits 0', async () => {
  const r = await vidq(['add', dir, '--index', 'home', '--server', srv.url, '--token', srv.token]);
  expect(r.err).toBe('');
  expect(r.code).toBe(0);
  expect(r.out).toContain('chaplin.mp4: uploading');
  expect(r.out).toMatch(/chaplin\.mp4: ready \([A-Za-z0-9_-]{32}\)/);
  expect(r.out).toMatch(/countdown\.mp4: ready/);
  // Files that are not videos are not sent, and each is named with the reason.
  expect(r.out).not.toContain('notes.txt: uploading');
  expect(r.out).toMatch(/sub\/notes\.txt: skipped, not a video file \(\.txt\)/);
  expect(r.out).toMatch(/speech\.wav: skipped, an audio file/);
  // No terminal: no bar drawing.
  expect(r.out).not.toContain('\x1b[');
  const res = await getJson(srv.url, `/index-resources?token=${srv.token}&index=home`);
  expect(res.body.map((x: any) => x.file_name).sort()).toEqual(['chaplin.mp4', 'countdown.mp4']);
});

test('vidq add skips files the index already has by content (VIDQ_SERVER and VIDQ_TOKEN)', async () => {
  copyFileSync(clip('chaplin-bw.mp4'), join(dir, 'sub', 'same-bytes-other-name.mp4'));
  const r = await vidq(['add', dir, '--index', 'home'], { VIDQ_SERVER: srv.url, VIDQ_TOKEN: srv.token });
  expect(r.code).toBe(0);
  expect(r.out).toMatch(/same-bytes-other-name\.mp4: already in the index as [A-Za-z0-9_-]{32} \(ready\), skipped/);
  expect(r.out).toMatch(/chaplin\.mp4: already in the index/);
  expect(r.out).not.toContain('uploading');
  rmSync(join(dir, 'sub', 'same-bytes-other-name.mp4'));
});

test('vidq add exits 1 with the reason per failed file; the good ones still land', async () => {
  const bad = join(dir, 'broken.mp4');
  writeFileSync(bad, 'this is text pretending to be a video\n'.repeat(100));
  try {
    const r = await vidq([
      'add',
      bad,
      clip('bottles.mp4'),
      join(dir, 'missing.mp4'),
      '--index',
      'mixed',
      '--server',
      srv.url,
      '--token',
      srv.token,
    ]);
    // A name that does not exist is refused before anything is sent.
    expect(r.code).toBe(1);
    expect(r.err).toContain('missing.mp4: no such file');
    const r2 = await vidq([
      'add',
      bad,
      clip('bottles.mp4'),
      '--index',
      'mixed',
      '--server',
      srv.url,
      '--token',
      srv.token,
    ]);
    expect(r2.code).toBe(1);
    expect(r2.err).toContain('1 of 2 failed');
    expect(r2.err).toMatch(/broken\.mp4: .*(not a|media|video)/i);
    expect(r2.out).toMatch(/bottles\.mp4: ready/);
  } finally {
    rmSync(bad);
  }
});

test('vidq ls lists indexes, and the videos of one with their status', async () => {
  const all = await vidq(['ls', '--server', srv.url, '--token', srv.token]);
  expect(all.code).toBe(0);
  expect(all.out).toMatch(/^home\t2 videos\t/m);
  const one = await vidq(['ls', '--index', 'home', '--server', srv.url, '--token', srv.token]);
  expect(one.out).toMatch(/^[A-Za-z0-9_-]{32}\tchaplin\.mp4\t0:09\tready$/m);
  const wrong = await vidq(['ls', '--index', 'home', '--server', srv.url, '--token', 'x'.repeat(64)]);
  expect(wrong.code).toBe(1);
  expect(wrong.err).toContain('token');
});

test('vidq ask streams the answer; a bad target or a dead server exits non-zero with the reason', async () => {
  const r = await vidq([
    'ask',
    '--index',
    'home',
    'what is written on screen?',
    '--server',
    srv.url,
    '--token',
    srv.token,
  ]);
  expect(r.code).toBe(0);
  expect(r.out.trim().length).toBeGreaterThan(10);
  const bad = await vidq([
    'ask',
    '--index',
    'home',
    'what happens?',
    '--at',
    'noon',
    '--server',
    srv.url,
    '--token',
    srv.token,
  ]);
  expect(bad.code).toBe(1);
  expect(bad.err).toContain('target');
  const none = await vidq(['ask', '--index', 'nope', 'hi', '--server', srv.url, '--token', srv.token]);
  expect(none.code).toBe(1);
  expect(none.err).toContain('no index named');
  const dead = await vidq(['ls', '--server', 'http://127.0.0.1:9', '--token', srv.token]);
  expect(dead.code).toBe(1);
  expect(dead.err).toContain('cannot reach');
  const usage = await vidq(['add', dir, '--server', srv.url]);
  expect(usage.code).toBe(2);
  expect(usage.err).toContain('--index');
});

test('vidq search lists moments one per line as ask lists its moments; errors exit non-zero with the reason', async () => {
  const auth = ['--server', srv.url, '--token', srv.token];
  // The server here runs no analysis: text on screen is written in as the OCR stage stores it.
  const db = srv.server.service.db;
  const chaplin = db.select().from(videos).where(eq(videos.fileName, 'chaplin.mp4')).get()!;
  db.insert(segments)
    .values({ videoId: chaplin.id, kind: 'ocr', start: 1, end: 4.5, text: 'GATE OPENS AT NINE', confidence: 0.9 })
    .run();
  const r = await vidq(['search', '--index', 'home', 'gate opens', ...auth]);
  expect(r.err).toBe('');
  expect(r.code).toBe(0);
  expect(r.out).toMatch(/^moments:$/m);
  expect(r.out).toContain('  chaplin.mp4 0:01–0:04 [ocr] GATE OPENS AT NINE\n');
  const nothing = await vidq(['search', '--index', 'home', 'zebra crossing', '--kinds', 'speech', ...auth]);
  expect(nothing.code).toBe(0);
  expect(nothing.out).toBe('no moments found\n');
  const none = await vidq(['search', '--index', 'nope', 'anything', ...auth]);
  expect(none.code).toBe(1);
  expect(none.err).toContain('nope');
  const bare = await vidq(['search', '--index', 'home', ...auth]);
  expect(bare.code).toBe(2);
});
