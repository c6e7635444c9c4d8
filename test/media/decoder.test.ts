/**
 * The decoder (issue 37): which ffmpeg decodes uploads and live sources is reported in /health and
 * `vidq --version`, with a warning while it is older than FFmpeg 5.0 (the npm package's 2018
 * snapshot). Real binaries: the npm packages' static builds, and a system ffmpeg (Debian's
 * security-maintained 5.1) where one is installed — .ci/run installs it.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { resolveBinaries } from '../../src/media/binaries';
import { describeDecoder, isMaintained, parseVersion } from '../../src/media/decoder';
import { getJson, startTestServer, type TestServer } from '../helpers';

const require = createRequire(import.meta.url);
const npm = {
  ffmpeg: (require('@ffmpeg-installer/ffmpeg') as { path: string }).path,
  ffprobe: (require('@ffprobe-installer/ffprobe') as { path: string }).path,
  source: 'npm' as const,
};
const system = { ffmpeg: Bun.which('ffmpeg'), ffprobe: Bun.which('ffprobe') };

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(async () => {
  await srv?.stop();
});

describe('the decoder in use', () => {
  test("the npm package's ffmpeg is the 2018 snapshot: not maintained, and the warning says what to do", async () => {
    const d = await describeDecoder(npm);
    expect(d.ffmpeg.version).toStartWith('N-47683');
    expect(d.ffmpeg.libavformat).toStartWith('58.');
    expect(d.maintained).toBe(false);
    expect(d.warning).toContain('ffmpeg N-47683');
    expect(d.warning).toContain('apt-get install ffmpeg');
    expect(d.warning).toContain('VIDQ_FFMPEG');
  });

  test.skipIf(!system.ffmpeg || !system.ffprobe)(
    'a system ffmpeg of a maintained line (5.0 or newer) gives no warning',
    async () => {
      const d = await describeDecoder({ ffmpeg: system.ffmpeg!, ffprobe: system.ffprobe!, source: 'system' });
      expect(Number(d.ffmpeg.libavformat!.split('.')[0])).toBeGreaterThanOrEqual(59);
      expect(d.maintained).toBe(true);
      expect(d.warning).toBeUndefined();
    },
  );

  test('versions are read from what the tools print', () => {
    const debian = parseVersion(
      'ffmpeg version 5.1.9-0+deb12u1 Copyright (c) 2000-2026 the FFmpeg developers\nlibavutil      57. 28.100 / 57. 28.100\nlibavformat    59. 27.100 / 59. 27.100\n',
    );
    expect(debian).toEqual({ version: '5.1.9-0+deb12u1', libavformat: '59.27.100' });
    expect(isMaintained(debian)).toBe(true);
    expect(
      isMaintained(parseVersion('ffmpeg version N-47683-g0e8eb07980-static\nlibavformat    58. 24.100 / 58. 24.100')),
    ).toBe(false);
    expect(isMaintained(parseVersion('something else'))).toBe(false);
  });

  test('/health reports the decoder the server uses, and warns exactly when it is not maintained', async () => {
    const inUse = await describeDecoder(await resolveBinaries(srv.server.service.files.binDir));
    const health = await getJson(srv.url, '/health');
    expect(health.status).toBe(200);
    expect(health.body.decoder).toMatchObject({
      ffmpeg: inUse.ffmpeg.version,
      ffprobe: inUse.ffprobe.version,
      libavformat: { ffmpeg: inUse.ffmpeg.libavformat, ffprobe: inUse.ffprobe.libavformat },
      source: inUse.source,
      maintained: inUse.maintained,
    });
    expect(health.body.decoder.warning).toBe(inUse.warning);
    // No paths of the server's disk in an answer given without a token.
    expect(JSON.stringify(health.body)).not.toContain(inUse.ffmpeg.path);
  });

  test('vidq --version prints the version, then the decoder; a warning on stderr when it is not maintained', async () => {
    const p = Bun.spawn([process.execPath, join(import.meta.dir, '../../src/main.ts'), '--version'], {
      stdout: 'pipe',
      stderr: 'pipe',
      env: { ...process.env, VIDQ_DATA_DIR: srv.dataDir },
    });
    const [out, err, code] = await Promise.all([
      new Response(p.stdout).text(),
      new Response(p.stderr).text(),
      p.exited,
    ]);
    expect(code).toBe(0);
    const inUse = await describeDecoder(await resolveBinaries(srv.server.service.files.binDir));
    const [version, decoder] = out.trim().split('\n');
    expect(version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(decoder).toStartWith(`decoder: ffmpeg ${inUse.ffmpeg.version}`);
    if (inUse.maintained) expect(err).toBe('');
    else expect(err).toContain(`warning: ${inUse.warning}`);
  });
});
