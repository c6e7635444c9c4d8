/**
 * Fair turns: one user's backlog does not starve another's, a per-user cap holds, and a short
 * video is not stuck behind a long one (the short lane: the worker's second job slot, sharing its
 * models), through the real server and workers; a worker killed with both slots busy loses no job.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config';
import { resolveBinaries } from '../../src/media/binaries';
import { createService } from '../../src/service';
import { jobs, segments, videos } from '../../src/storage/schema';
import { uploadAndWaitReady } from '../factories';
import { clip, getJson, postJson, startTestServer } from '../helpers';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'vidq-fair-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('the queue takes users in turns, short videos first within a user, and honours a per-user cap', async () => {
  const dataDir = join(dir, 'q');
  const s = await createService(
    loadConfig(
      { 'data-dir': dataDir, port: '0', 'log-level': 'error', 'min-free-bytes': '0', 'analysis-workers': '0' },
      {},
    ),
  );
  try {
    const a = (await s.accounts.createUser('a', null)).user;
    const b = (await s.accounts.createUser('b', null)).user;
    const ia = (await s.indexes.findOrCreateByName(s.catalog, a, 'x')).index;
    const ib = (await s.indexes.findOrCreateByName(s.catalog, b, 'x')).index;
    const add = async (id: string, user: typeof a, indexId: string, durationSec: number, t: number) => {
      const at = new Date(1_700_000_000_000 + t * 1000);
      s.db
        .insert(videos)
        .values({
          id,
          indexId,
          userId: user.id,
          sourceUrl: 'http://x/v.mp4',
          fileName: 'v.mp4',
          storagePath: `media/${id}/source.mp4`,
          durationSec,
          status: 'processing',
          progress: 0,
          uploadedAt: at,
          updatedAt: at,
        })
        .run();
      await s.queue.enqueue(id, at);
    };
    // User a queued a backlog of long videos first; b added one later.
    await add('a1', a, ia.id, 3600, 0);
    await add('a2', a, ia.id, 3600, 1);
    await add('a3', a, ia.id, 3600, 2);
    await add('a4', a, ia.id, 10, 3);
    await add('b1', b, ib.id, 3600, 4);
    const line = await s.queue.placesInLine(1);
    // The places are the turns the claims below take.
    expect(['a4', 'b1', 'a1', 'a2', 'a3'].map((id) => line.get(id)!.position)).toEqual([1, 2, 3, 4, 5]);
    expect(line.get('a3')!.etaSec!).toBeGreaterThan(line.get('a1')!.etaSec!);
    const order: string[] = [];
    for (let i = 0; i < 5; i++) {
      const j = (await s.queue.claim(`w_${i}`, new Date(1_700_000_100_000 + i * 1000)))!;
      order.push(j.videoId);
      await s.queue.finish(j.videoId, `w_${i}`, new Date(1_700_000_100_500 + i * 1000));
    }
    // a's short one first, then b (never served) before a's backlog, then a's in age order.
    expect(order).toEqual(['a4', 'b1', 'a1', 'a2', 'a3']);

    // A cap of one running analysis per user: b's job is taken while a's first one runs.
    await add('a5', a, ia.id, 100, 10);
    await add('a6', a, ia.id, 100, 11);
    await add('b2', b, ib.id, 100, 12);
    const first = (await s.queue.claim('w_c1', new Date(), { perUserCap: 1 }))!;
    const second = (await s.queue.claim('w_c2', new Date(), { perUserCap: 1 }))!;
    expect([first.videoId, second.videoId].sort()).toEqual(first.videoId === 'b2' ? ['a5', 'b2'] : ['a5', 'b2']);
    expect(await s.queue.claim('w_c3', new Date(), { perUserCap: 1 })).toBeNull();
    // The short lane only takes short videos.
    expect(await s.queue.claim('w_lane', new Date(), { maxVideoSec: 60 })).toBeNull();
    expect((await s.queue.claim('w_any', new Date()))!.videoId).toBe('a6');

    // Waiting in line for hours is not being stuck: the maintenance job leaves a pending job's video alone.
    await add('b3', b, ib.id, 100, 20);
    const later = new Date(Date.now() + 10 * 3600_000);
    await s.maintenance.failStuck(later);
    expect(
      s.db
        .select()
        .from(videos)
        .all()
        .find((v) => v.id === 'b3')!.status,
    ).toBe('processing');
  } finally {
    s.close();
  }
});

test('a short video added while a long one is analysed is ready within a bound (short lane), and waits as "queued" with its place', async () => {
  const { ffmpeg } = await resolveBinaries(join(dir, 'bin'));
  // 20 minutes of video, made by repeating a clip without re-encoding.
  const long = join(dir, 'long.mp4');
  const p = Bun.spawnSync([
    ffmpeg,
    '-hide_banner',
    '-loglevel',
    'error',
    '-y',
    '-stream_loop',
    '29',
    '-i',
    clip('bottles.mp4'),
    '-c',
    'copy',
    long,
  ]);
  expect(p.exitCode).toBe(0);
  const files: Record<string, string> = { 'long.mp4': long, 'short.mp4': clip('chaplin-bw.mp4') };
  const origin = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (req) => new Response(Bun.file(files[new URL(req.url).pathname.slice(1)] ?? '/nonexistent')),
  });
  const srv = await startTestServer({ 'analysis-workers': '1', analyzers: 'visual' });
  const list = async () => (await getJson(srv.url, `/index-resources?token=${srv.token}&index=fair`)).body as any[];
  try {
    expect(
      (
        await postJson(srv.url, '/remote-upload', {
          token: srv.token,
          index: 'fair',
          url: `http://127.0.0.1:${origin.port}/long.mp4`,
        })
      ).status,
    ).toBe(200);
    const longKey = (await list())[0].file_id;
    // Wait until the worker has taken the long one.
    for (let i = 0; i < 600; i++) {
      if ((await list())[0].stage !== 'queued') break;
      await Bun.sleep(100);
    }
    const t0 = performance.now();
    const up = await postJson(srv.url, '/remote-upload', {
      token: srv.token,
      index: 'fair',
      url: `http://127.0.0.1:${origin.port}/short.mp4`,
    });
    expect(up.status).toBe(200);
    const shortKey = up.body.data.key;
    const seen: any[] = [];
    let ready = false;
    let processesWhileBoth = 0;
    while (performance.now() - t0 < 90_000) {
      const rows = await list();
      const short = rows.find((r) => r.file_id === shortKey);
      seen.push(short);
      if (short.status === 'processing' && short.stage !== 'queued') processesWhileBoth = workerRss().size;
      if (short.status === 'ready') {
        ready = true;
        // The long one is still being analysed: the short one did not wait for it.
        expect(rows.find((r) => r.file_id === longKey).status).toBe('processing');
        break;
      }
      await Bun.sleep(100);
    }
    const waitedSec = (performance.now() - t0) / 1000;
    console.log(
      `short video ready ${waitedSec.toFixed(1)} s after upload while a 20-minute one was analysed (loaded machine)`,
    );
    expect(ready).toBe(true);
    expect(waitedSec).toBeLessThan(60);
    // Both were analysed by the one worker process (two slots, one copy of the models).
    if (processesWhileBoth) expect(processesWhileBoth).toBe(1);
    expect(workerRss().size).toBe(1);
    // A row read between the claim and the server hearing of it may still say queued, without a place.
    const queued = seen.find((v) => v.stage === 'queued' && v.queue_position !== undefined);
    if (queued) {
      expect(queued.queue_position).toBe(1);
      expect(typeof queued.eta_sec).toBe('number');
    }
  } finally {
    await srv.stop();
    origin.stop();
  }
});

/** Resident memory of the analysis worker processes this test process started (MiB by pid). */
function workerRss(): Map<number, number> {
  const out = new Map<number, number>();
  for (const pid of new Bun.Glob('[0-9]*').scanSync({ cwd: '/proc', onlyFiles: false })) {
    try {
      const status = require('node:fs').readFileSync(`/proc/${pid}/status`, 'utf8') as string;
      const cmd = require('node:fs').readFileSync(`/proc/${pid}/cmdline`, 'utf8') as string;
      if (Number(/PPid:\s+(\d+)/.exec(status)?.[1]) !== process.pid || !cmd.includes('worker')) continue;
      out.set(Number(pid), Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024));
    } catch {
      /* gone */
    }
  }
  return out;
}

test('a worker restarts after a video of --worker-recycle-sec or longer, giving its memory back, and the next one analyses', async () => {
  const lines: string[] = [];
  const srv = await startTestServer(
    { 'analysis-workers': '1', analyzers: 'visual,speech', 'worker-recycle-sec': '5', 'log-level': 'info' },
    { logSink: (l) => lines.push(l) },
  );
  const list = async () => (await getJson(srv.url, `/index-resources?token=${srv.token}&index=recycle`)).body as any[];
  const origin = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (req) => new Response(Bun.file(clip(new URL(req.url).pathname.slice(1)))),
  });
  const uploadAndWait = (name: string) =>
    uploadAndWaitReady(srv, 'recycle', `http://127.0.0.1:${origin.port}/${name}`, {
      timeoutMs: 120_000,
      intervalMs: 100,
    });
  try {
    await uploadAndWait('chaplin-bw.mp4');
    let recycled: any;
    for (let i = 0; i < 100 && !recycled; i++) {
      recycled = lines
        .map((l) => JSON.parse(l))
        .find((l) => l.msg === 'analysis worker restarts to give its memory back');
      await Bun.sleep(100);
    }
    expect(recycled).toBeDefined();
    await Bun.sleep(1500); // the fresh worker starts
    const fresh = [...workerRss().values()];
    console.log(
      `worker RSS before its restart ${recycled.rss_mb} MB; the fresh worker idles at ${fresh.join(', ')} MB (short clip, loaded machine)`,
    );
    expect(fresh).toHaveLength(1);
    await uploadAndWait('countdown-living-room.mp4');
    expect((await list()).every((r) => r.status === 'ready')).toBe(true);
    // A planned restart is not a crash.
    expect(lines.some((l) => l.includes('analysis worker exited; restarting it'))).toBe(false);
  } finally {
    await srv.stop();
    origin.stop();
  }
});

test('an idle worker restarts without its models after --worker-idle-release-sec, once, and the next video is analysed', async () => {
  const lines: string[] = [];
  const srv = await startTestServer(
    {
      'analysis-workers': '1',
      analyzers: 'visual,objects',
      'worker-idle-release-sec': '2',
      'log-level': 'info',
    },
    { logSink: (l) => lines.push(l) },
  );
  const list = async () => (await getJson(srv.url, `/index-resources?token=${srv.token}&index=idle`)).body as any[];
  const origin = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (req) => new Response(Bun.file(clip(new URL(req.url).pathname.slice(1)))),
  });
  const uploadAndWait = (name: string) =>
    uploadAndWaitReady(srv, 'idle', `http://127.0.0.1:${origin.port}/${name}`, { timeoutMs: 120_000, intervalMs: 100 });
  const released = () =>
    lines
      .map((l) => JSON.parse(l))
      .filter((l) => l.msg === 'analysis worker restarts to give its memory back' && l.reason === 'idle');
  try {
    await uploadAndWait('countdown-living-room.mp4');
    for (let i = 0; i < 100 && released().length === 0; i++) await Bun.sleep(100);
    expect(released()).toHaveLength(1);
    await Bun.sleep(1500); // the fresh worker starts
    const fresh = [...workerRss().values()];
    console.log(
      `worker RSS with its models ${released()[0].rss_mb} MB; the fresh worker idles at ${fresh.join(', ')} MB (loaded machine)`,
    );
    expect(fresh).toHaveLength(1);
    expect(fresh[0]!).toBeLessThan(released()[0].rss_mb);
    // A worker that has loaded nothing has nothing to give back: it waits, it does not restart again.
    await Bun.sleep(3500);
    expect(released()).toHaveLength(1);
    await uploadAndWait('chaplin-bw.mp4');
    expect((await list()).every((r) => r.status === 'ready')).toBe(true);
    expect(lines.some((l) => l.includes('analysis worker exited; restarting it'))).toBe(false);
  } finally {
    await srv.stop();
    origin.stop();
  }
});

test('a worker killed while both its slots hold a job: both jobs go back to the queue and end ready', async () => {
  const { ffmpeg } = await resolveBinaries(join(dir, 'bin'));
  // 80 s of video (longer than the short lane takes here), made without re-encoding.
  const long = join(dir, 'long-80s.mp4');
  expect(
    Bun.spawnSync([
      ffmpeg,
      '-hide_banner',
      '-loglevel',
      'error',
      '-y',
      '-stream_loop',
      '1',
      '-i',
      clip('bottles.mp4'),
      '-c',
      'copy',
      long,
    ]).exitCode,
  ).toBe(0);
  const files: Record<string, string> = { 'long.mp4': long, 'short.mp4': clip('chaplin-bw.mp4') };
  const origin = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (req) => new Response(Bun.file(files[new URL(req.url).pathname.slice(1)] ?? '/nonexistent')),
  });
  const lines: string[] = [];
  const srv = await startTestServer(
    { 'analysis-workers': '1', analyzers: 'visual,speech', 'short-lane-sec': '60', 'log-level': 'info' },
    { logSink: (l) => lines.push(l) },
  );
  const db = srv.server.service.db;
  const running = () =>
    db
      .select()
      .from(jobs)
      .all()
      .filter((j) => j.state === 'running');
  const list = async () => (await getJson(srv.url, `/index-resources?token=${srv.token}&index=kill`)).body as any[];
  const upload = async (name: string) =>
    (
      await postJson(srv.url, '/remote-upload', {
        token: srv.token,
        index: 'kill',
        url: `http://127.0.0.1:${origin.port}/${name}`,
      })
    ).status;
  try {
    expect(await upload('long.mp4')).toBe(200);
    for (let i = 0; i < 600 && running().length < 1; i++) await Bun.sleep(100);
    expect(await upload('short.mp4')).toBe(200);
    // The short one is taken by the second slot while the first analyses the long one.
    for (let i = 0; i < 600 && running().length < 2; i++) await Bun.sleep(100);
    const held = running();
    expect(held).toHaveLength(2);
    const [pid] = [...workerRss().keys()];
    expect(workerRss().size).toBe(1);
    // Both slots' jobs name the one process.
    for (const j of held) expect(j.workerId!.startsWith(`w_${pid}_`)).toBe(true);
    process.kill(pid!, 'SIGKILL');
    let released: any;
    for (let i = 0; i < 100 && !released; i++) {
      released = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'released the jobs of a dead worker');
      await Bun.sleep(100);
    }
    expect(released).toMatchObject({ requeued: 2, failed: 0 });
    const t0 = performance.now();
    for (let i = 0; i < 3000 && !(await list()).every((r) => r.status === 'ready'); i++) await Bun.sleep(100);
    const rows = await list();
    console.log(`both ready ${((performance.now() - t0) / 1000).toFixed(1)} s after the kill (loaded machine)`);
    expect(rows.map((r) => r.status)).toEqual(['ready', 'ready']);
    // Each was claimed twice: once by the killed worker, once by the fresh one.
    expect(
      db
        .select()
        .from(jobs)
        .all()
        .map((j) => j.attempts),
    ).toEqual([2, 2]);
    // Nothing was stored twice by the interrupted and the resumed run.
    const segs = db.select().from(segments).all();
    expect(segs.length).toBeGreaterThan(0);
    expect(new Set(segs.map((g) => JSON.stringify([g.videoId, g.kind, g.start, g.end, g.text]))).size).toBe(
      segs.length,
    );
  } finally {
    await srv.stop();
    origin.stop();
  }
}, 240_000);
