/**
 * The analysis pipeline through the real server: a worker process picks up stored videos, the
 * resource moves processing → ready with progress, stages resume after a crash without duplicates,
 * and frames are served only to their owner.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config';
import { startServer } from '../../src/server';
import { createService } from '../../src/service';
import { videos } from '../../src/storage/schema';
import { userWithToken, waitIndexReady, waitVideoReady } from '../factories';
import { clip, getJson, postJson, startOrigin, startTestServer, type Origin } from '../helpers';

let origin: Origin;
beforeAll(() => {
  origin = startOrigin();
});
afterAll(() => origin.stop());

test('a stored video is analysed by the worker: processing with progress, then ready with its shots', async () => {
  const srv = await startTestServer({ 'analysis-workers': '1', analyzers: 'visual' });
  try {
    const up = await postJson(srv.url, '/remote-upload', {
      token: srv.token,
      index: 'a',
      url: origin.url + '/media/big-buck-bunny-intro.webm',
    });
    expect(up.status).toBe(200);
    const seen: any[] = [];
    const v = await waitVideoReady(srv, 'a', up.body.data.key, {
      timeoutMs: 60_000,
      intervalMs: 100,
      onPoll: (rows) => seen.push(rows[0]),
    });
    expect(v.status).toBe('ready');
    expect(seen[0].status).toBe('processing'); // listed before the worker finished
    expect(v.metadata.analysis.shots).toMatchObject({ shots: 4 });
    const db = srv.server.service.db.$client;
    const shots = db.query("SELECT start FROM segments WHERE kind = 'shot' ORDER BY start").all() as {
      start: number;
    }[];
    expect(shots).toHaveLength(4);
    const frame = db.query('SELECT file FROM frames ORDER BY t LIMIT 1').get() as { file: string };
    const frameUrl = `${srv.url}/media/${v.file_id}/frames/${frame.file}`;
    const img = await fetch(`${frameUrl}?token=${srv.token}`);
    expect(img.status).toBe(200);
    expect(img.headers.get('content-type')).toBe('image/jpeg');
    const other = await userWithToken(srv, 'other', 1);
    expect((await fetch(`${frameUrl}?token=${other.token}`)).status).toBe(404);
    expect((await fetch(`${srv.url}/media/${v.file_id}/frames/..%2F..%2Fvidq.db?token=${srv.token}`)).status).toBe(404);
    const signed = srv.server.service.links.sign(`/media/${v.file_id}/frames/${frame.file}`);
    expect((await fetch(srv.url + signed)).status).toBe(200);
  } finally {
    await srv.stop();
  }
});

test('after a crash mid-stage the job resumes at its stage, without duplicate segments or stale files', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'vidq-resume-'));
  const config = loadConfig(
    {
      'data-dir': dataDir,
      port: '0',
      'log-level': 'error',
      'min-free-bytes': '0',
      analyzers: 'visual',
      'analysis-workers': '1',
    },
    {},
  );
  // The state a kill -9 leaves: a stored video whose job a (now dead) worker was running.
  const s = await createService(config);
  const { user, token } = await s.accounts.createUser('u', null);
  const { index } = await s.indexes.findOrCreateByName(s.catalog, user, 'resume');
  const id = 'R'.repeat(32);
  mkdirSync(join(dataDir, 'media', id), { recursive: true });
  copyFileSync(clip('big-buck-bunny-intro.webm'), join(dataDir, 'media', id, 'source.webm'));
  mkdirSync(join(dataDir, 'media', id, 'frames.partial'));
  writeFileSync(join(dataDir, 'media', id, 'frames.partial', '000001.jpg'), 'half-written');
  const now = new Date();
  s.db
    .insert(videos)
    .values({
      id,
      indexId: index.id,
      userId: user.id,
      sourceUrl: 'http://x/b.webm',
      fileName: 'b.webm',
      fileType: 'video/webm',
      storagePath: `media/${id}/source.webm`,
      sizeBytes: 1,
      durationSec: 30,
      fps: 24,
      width: 1280,
      height: 720,
      hasAudio: true,
      status: 'processing',
      progress: 10,
      uploadedAt: now,
      updatedAt: now,
    })
    .run();
  await s.queue.enqueue(id);
  expect(await s.queue.claim('w_999999_dead')).not.toBeNull();
  s.close();

  const server = await startServer(config, () => {});
  try {
    const v = await waitVideoReady({ url: server.url, token }, 'resume', id, { timeoutMs: 60_000, intervalMs: 100 });
    expect(v.status).toBe('ready');
    const db = server.service.db.$client;
    expect((db.query("SELECT count(*) n FROM segments WHERE kind = 'shot'").get() as { n: number }).n).toBe(4);
    expect(existsSync(join(dataDir, 'media', id, 'frames.partial'))).toBe(false);
    expect((db.query('SELECT attempts FROM jobs').get() as { attempts: number }).attempts).toBe(2);
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('removing a video takes its job, segments and frames with it', async () => {
  const srv = await startTestServer({ 'analysis-workers': '1', analyzers: 'visual' });
  try {
    const up = await postJson(srv.url, '/remote-upload', {
      token: srv.token,
      index: 'rm',
      url: origin.url + '/media/chaplin-bw.mp4',
    });
    await waitIndexReady(srv, 'rm', { timeoutMs: 60_000, intervalMs: 100 });
    const indexId = (await getJson(srv.url, `/indexes?token=${srv.token}`)).body[0].index_id;
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
    for (const table of ['jobs', 'segments', 'frames', 'segments_fts'])
      expect((db.query(`SELECT count(*) n FROM ${table}`).get() as { n: number }).n).toBe(0);
    expect(existsSync(join(srv.dataDir, 'media', up.body.data.key))).toBe(false);
  } finally {
    await srv.stop();
  }
});
