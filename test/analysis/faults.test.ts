/**
 * Analysis under faults, with real processes: kill -9 of the server in the middle of analysis and a
 * restart (the job resumes, nothing is duplicated), removal of a video while it is analysed (its job
 * stops, its files go, the worker goes on with the next), and a video that cannot be analysed
 * (failed, with a sentence saying why).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Database } from 'bun:sqlite';
import { until } from '../factories';
import { getJson, postJson, startOrigin, startTestServer, type Origin } from '../helpers';

let origin: Origin;
beforeAll(() => {
  origin = startOrigin();
});
afterAll(() => origin.stop());

const MAIN = join(import.meta.dir, '../../src/main.ts');

/** The real server as a separate process (so it can be killed with SIGKILL). */
async function spawnServer(dataDir: string) {
  const proc = Bun.spawn(
    [
      process.execPath,
      MAIN,
      'serve',
      '--data-dir',
      dataDir,
      '--port',
      '0',
      '--allow-private-urls',
      '--log-level',
      'error',
      '--min-free-bytes',
      '0',
    ],
    { stdout: 'pipe', stderr: 'inherit' },
  );
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  let out = '';
  const dec = new TextDecoder();
  while (!/listening on (http:\/\/\S+)/.test(out)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`server exited: ${out}`);
    out += dec.decode(value);
  }
  reader.releaseLock();
  const url = /listening on (http:\/\/\S+)/.exec(out)![1]!;
  const token =
    /^\s+([A-Za-z0-9_-]{60}|[A-Za-z0-9_-]{64})$/m.exec(out)?.[1] ??
    (await Bun.file(join(dataDir, 'default-token.txt')).text()).trim();
  return { proc, url, token };
}

async function resource(url: string, token: string, index: string) {
  return ((await getJson(url, `/index-resources?token=${token}&index=${index}`)).body as any[])[0];
}

test('kill -9 during analysis, restart: the job resumes at its stage and ends ready without duplicates', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'vidq-kill-'));
  try {
    let s = await spawnServer(dataDir);
    const token = s.token;
    const up = await postJson(s.url, '/remote-upload', {
      token,
      index: 'k',
      url: origin.url + '/media/people-one-by-one.mp4',
    });
    expect(up.status).toBe(200);
    // Kill while the analyzers after the visual stage are at work.
    const mid = await until(
      () => resource(s.url, token, 'k'),
      (v) => v.status === 'processing' && v.stage !== 'analyzing:visual' && v.stage !== 'queued',
      60_000,
      'analysis to be under way',
    );
    s.proc.kill('SIGKILL');
    await s.proc.exited;
    await Bun.sleep(500); // the orphaned worker notices its parent is gone and exits
    expect(mid.progress).toBeLessThan(100);

    s = await spawnServer(dataDir);
    const done = await until(
      () => resource(s.url, token, 'k'),
      (v) => v.status === 'ready' || v.status === 'failed',
      120_000,
      'the resumed job',
    );
    expect(done.status).toBe('ready');
    s.proc.kill('SIGTERM');
    await s.proc.exited;

    const db = new Database(join(dataDir, 'vidq.db'), { readonly: true });
    const dupes = db
      .query('SELECT kind, start, "end", text, count(*) n FROM segments GROUP BY kind, start, "end", text HAVING n > 1')
      .all();
    expect(dupes).toEqual([]);
    const job = db.query('SELECT state, attempts FROM jobs').get() as { state: string; attempts: number };
    expect(job).toEqual({ state: 'done', attempts: 2 });
    const frames = (db.query('SELECT file FROM frames').all() as { file: string }[]).map((f) => f.file).sort();
    const dir = join(dataDir, 'media', up.body.data.key);
    expect(readdirSync(join(dir, 'frames')).sort()).toEqual(frames);
    expect(existsSync(join(dir, 'frames.partial'))).toBe(false);
    // Every analyzer is recorded once, and each kind of segment is there.
    const kinds = (db.query('SELECT DISTINCT kind FROM segments').all() as { kind: string }[])
      .map((k) => k.kind)
      .sort();
    expect(kinds).toEqual(expect.arrayContaining(['object', 'shot']));
    db.close();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}, 240_000);

test('removing a video while it is analysed stops its job and removes its files; the worker goes on', async () => {
  const srv = await startTestServer({ 'analysis-workers': '1' });
  try {
    const up = await postJson(srv.url, '/remote-upload', {
      token: srv.token,
      index: 'c',
      url: origin.url + '/media/people-one-by-one.mp4',
    });
    const indexId = (await getJson(srv.url, `/indexes?token=${srv.token}`)).body[0].index_id;
    await until(
      () => resource(srv.url, srv.token, 'c'),
      (v) => v.status === 'processing' && v.stage !== 'queued',
      60_000,
      'analysis to start',
    );
    expect(
      (
        await postJson(srv.url, '/remove-from-index', {
          token: srv.token,
          project_id: indexId,
          video_id: up.body.data.key,
        })
      ).status,
    ).toBe(200);
    const db = srv.server.service.db.$client;
    await until(
      async () => existsSync(join(srv.dataDir, 'media', up.body.data.key)),
      (exists) => !exists,
      20_000,
      'the video folder to go',
    );
    expect((db.query('SELECT count(*) n FROM segments').get() as { n: number }).n).toBe(0);
    expect((db.query('SELECT count(*) n FROM jobs').get() as { n: number }).n).toBe(0);
    // The worker is free for the next video.
    await postJson(srv.url, '/remote-upload', {
      token: srv.token,
      index: 'c',
      url: origin.url + '/media/chaplin-bw.mp4',
    });
    const next = await until(
      () => resource(srv.url, srv.token, 'c'),
      (v) => v?.status === 'ready' || v?.status === 'failed',
      60_000,
      'the next video',
    );
    expect(next.status).toBe('ready');
    await Bun.sleep(300);
    expect(existsSync(join(srv.dataDir, 'media', up.body.data.key))).toBe(false); // nothing written back after removal
  } finally {
    await srv.stop();
  }
}, 180_000);

test('a video that cannot be analysed ends failed with a sentence saying why', async () => {
  const srv = await startTestServer({ 'analysis-workers': '1', analyzers: 'visual' });
  try {
    // Stored, then its file disappears before the worker gets to it (a disk problem, a manual delete):
    // the test's own switch turns the wake-up off, so the worker finds the job at its next poll.
    srv.server.service.workers.wake = () => {};
    const up = await postJson(srv.url, '/remote-upload', {
      token: srv.token,
      index: 'f',
      url: origin.url + '/media/chaplin-bw.mp4',
    });
    const dir = join(srv.dataDir, 'media', up.body.data.key);
    for (const f of readdirSync(dir)) rmSync(join(dir, f), { recursive: true, force: true });
    const v = await until(
      () => resource(srv.url, srv.token, 'f'),
      (x) => x.status === 'failed' || x.status === 'ready',
      30_000,
      'the job',
    );
    expect(v.status).toBe('failed');
    expect(v.error).toMatch(/missing/);
  } finally {
    await srv.stop();
  }
}, 60_000);
