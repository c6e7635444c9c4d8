/**
 * Start-up after an unclean stop: interrupted downloads become `failed` with the reason, their
 * partial files go, and folders whose rows were already deleted are swept.
 */
import { expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config';
import { startServer } from '../src/server';
import { createService } from '../src/service';
import { videos } from '../src/storage/schema';
import { getJson, leftovers } from './helpers';

test('a restart fails interrupted downloads with a reason and removes partial and orphan files', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'vidq-recover-'));
  const config = loadConfig({ 'data-dir': dataDir, port: '0', 'log-level': 'error', 'min-free-bytes': '0' }, {});
  // State as a crash would leave it: a row mid-download, its .part file, and an orphan folder.
  const before = await createService(config);
  const { user, token } = await before.accounts.createUser('u', null);
  const { index } = await before.indexes.findOrCreateByName(before.catalog, user, 'crashy');
  const now = new Date();
  before.db
    .insert(videos)
    .values({
      id: 'A'.repeat(32),
      indexId: index.id,
      userId: user.id,
      sourceUrl: 'http://x/a.mp4',
      fileName: 'a.mp4',
      status: 'downloading',
      stage: 'downloading',
      progress: 40,
      uploadedAt: now,
      updatedAt: now,
    })
    .run();
  before.close();
  writeFileSync(join(dataDir, 'tmp', 'abc.part'), 'partial');
  mkdirSync(join(dataDir, 'media', 'B'.repeat(32)));
  writeFileSync(join(dataDir, 'media', 'B'.repeat(32), 'source.mp4'), 'orphan');

  const server = await startServer(config, () => {});
  try {
    expect(leftovers(dataDir)).toEqual({ tmp: [], media: [] });
    const res = await getJson(server.url, `/index-resources?token=${token}&index=crashy`);
    expect(res.body).toHaveLength(1);
    expect(res.body[0]).toMatchObject({ status: 'failed', error: expect.stringContaining('interrupted by a restart') });
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('the first start creates a default user with unlimited credits and a 0600 token file', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'vidq-first-'));
  const lines: string[] = [];
  const server = await startServer(loadConfig({ 'data-dir': dataDir, port: '0', 'log-level': 'error' }, {}), (l) =>
    lines.push(l),
  );
  try {
    const file = join(dataDir, 'default-token.txt');
    const token = (await Bun.file(file).text()).trim();
    expect(token).toMatch(/^[A-Za-z0-9_-]{60}$/);
    expect((await import('node:fs')).statSync(file).mode & 0o777).toBe(0o600);
    expect(lines.join('\n')).toContain(token); // printed once
    const user = await server.service.accounts.authenticate(token);
    expect(user.credits).toBeNull();
    // The database stores only the token's hash.
    const raw = server.service.db.$client.query('SELECT hash FROM tokens').all() as { hash: string }[];
    expect(raw.some((r) => r.hash.includes(token))).toBe(false);
  } finally {
    await server.stop();
  }
  // A second start creates no second default user.
  const again = await startServer(loadConfig({ 'data-dir': dataDir, port: '0', 'log-level': 'error' }, {}), () => {});
  try {
    expect(await again.service.accounts.userCount()).toBe(1);
  } finally {
    await again.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
