/**
 * --media-dir (issue 33): originals, playback copies and frames live under the media folder, which
 * may be another file system than the data directory (a shared mount); the data directory keeps
 * only the database, the secrets and its own working folders.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, ConfigError } from '../../src/config';
import { DataDir } from '../../src/storage/files';
import { uploadAndWaitReady } from '../factories';
import { getJson, postJson, startOrigin, startTestServer, type Origin, type TestServer } from '../helpers';

/** Every file under dir, as paths relative to it. */
const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
    .sort();

describe('--media-dir', () => {
  let srv: TestServer;
  let origin: Origin;
  let mediaRoot: string;

  beforeAll(async () => {
    // Another file system than the data directory where the machine has one (tmpfs), as a shared
    // mount would be: a finished download cannot be renamed across, it is copied.
    mediaRoot = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'vidq-media-'));
    origin = startOrigin();
    srv = await startTestServer({ 'media-dir': mediaRoot, 'analysis-workers': '1', analyzers: 'visual' });
  });
  afterAll(async () => {
    await srv?.stop();
    origin?.stop();
    rmSync(mediaRoot, { recursive: true, force: true });
  });

  test('a stored and analysed video lands in the media folder; the data directory holds nothing of it', async () => {
    console.log(
      `media folder on ${statSync(mediaRoot).dev === statSync(srv.dataDir).dev ? 'the same' : 'another'} file system`,
    );
    const { key } = await uploadAndWaitReady(srv, 'shared', `${origin.url}/media/chaplin-bw.mp4`);
    const mine = filesUnder(join(mediaRoot, 'media', key));
    expect(mine).toContain('source.mp4');
    expect(mine.filter((f) => f.startsWith('frames/') && f.endsWith('.jpg')).length).toBeGreaterThan(0);
    // The data directory: database, secrets, its working folders; no media/ with files, no video folder.
    const inData = filesUnder(srv.dataDir);
    expect(inData.filter((f) => f.includes(key))).toEqual([]);
    expect(inData.filter((f) => f.startsWith('media/'))).toEqual([]);
    expect(inData).toContain('vidq.db');
    expect(readdirSync(join(srv.dataDir, 'tmp'))).toEqual([]);

    // The original is served from there.
    const res = await fetch(`${srv.url}/media/${key}?token=${srv.token}`);
    expect(res.status).toBe(200);
    expect(Bun.hash(new Uint8Array(await res.arrayBuffer()))).toBe(
      Bun.hash(new Uint8Array(await Bun.file(join(mediaRoot, 'media', key, 'source.mp4')).arrayBuffer())),
    );

    const idx = (await getJson(srv.url, `/indexes?token=${srv.token}`)).body.find((i: any) => i.name === 'shared');
    const rm = await postJson(srv.url, '/remove-from-index', {
      token: srv.token,
      project_id: idx.index_id,
      video_id: key,
    });
    expect(rm).toEqual({ status: 200, body: { status: 'complete' } });
    expect(existsSync(join(mediaRoot, 'media', key))).toBe(false);
  }, 180_000);
});

describe('media folder layout', () => {
  test('storage paths kept in the database resolve under the media root; the default root is the data directory', () => {
    const plain = new DataDir('/srv/data');
    const shared = new DataDir('/srv/data', '/mnt/shared');
    const rel = plain.sourceRelPath('0123456789abcdef0123456789abcdef', 'mp4');
    expect(plain.abs(rel)).toBe('/srv/data/media/0123456789abcdef0123456789abcdef/source.mp4');
    expect(shared.abs(rel)).toBe('/mnt/shared/media/0123456789abcdef0123456789abcdef/source.mp4');
    expect(shared.dbFile).toBe('/srv/data/vidq.db');
    expect(shared.tmpDir).toBe('/srv/data/tmp');
    expect(() => shared.abs('../etc/passwd')).toThrow();
  });

  test('--media-dir / VIDQ_MEDIA_DIR: resolved to an absolute path; unset, it is the data directory', () => {
    const data = mkdtempSync(join(tmpdir(), 'vidq-cfg-'));
    try {
      expect(loadConfig({ 'data-dir': data }, {}).mediaDir).toBe(data);
      expect(loadConfig({ 'data-dir': data }, { VIDQ_MEDIA_DIR: '/mnt/media' }).mediaDir).toBe('/mnt/media');
      expect(loadConfig({ 'data-dir': data, 'media-dir': 'rel/m' }, {}).mediaDir).toBe(join(process.cwd(), 'rel/m'));
      expect(() => loadConfig({ 'data-dir': data, 'media-dir': '' }, {})).toThrow(ConfigError);
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  });

  test('a media folder belongs to one catalog: a second data directory on it is refused at start, the first starts again', () => {
    const media = mkdtempSync(join(tmpdir(), 'vidq-media-'));
    const first = mkdtempSync(join(tmpdir(), 'vidq-data-'));
    const second = mkdtempSync(join(tmpdir(), 'vidq-data-'));
    const userCreate = (data: string) =>
      Bun.spawnSync(
        [
          process.execPath,
          join(import.meta.dir, '../../src/main.ts'),
          'user',
          'create',
          '--name',
          'ann',
          '--data-dir',
          data,
          '--media-dir',
          media,
        ],
        { env: { ...process.env, VIDQ_WORKER_CONFIG: '' }, timeout: 30_000 },
      );
    try {
      expect(userCreate(first).exitCode).toBe(0);
      const refused = userCreate(second);
      expect(refused.exitCode).toBe(2);
      expect(refused.stderr.toString()).toContain('holds the media of another vidq catalog');
      expect(userCreate(first).exitCode).toBe(0);
      // The default layout (media inside the data directory) has no marker.
      expect(new DataDir(first).claimMediaRoot()).toBeNull();
      expect(existsSync(join(first, 'media', '.vidq-catalog'))).toBe(false);
    } finally {
      for (const d of [media, first, second]) rmSync(d, { recursive: true, force: true });
    }
  });
});
