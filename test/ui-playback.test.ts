/**
 * The video page of a video no browser plays as stored (issue 23): a QuickTime HEVC phone video,
 * stored on its side with a rotate tag, made here with the project's ffmpeg. Opened while it is
 * still being analysed, the page ends up playing the H.264 copy (never left on the original), at
 * the displayed portrait size, and offers no subtitle downloads (there is no transcript). Headless
 * Chromium (Debian's `chromium`, via playwright-core); skipped without it, like test/ui.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHROMIUM, ffmpegSync, haveChromium, launchChromium, signIn } from './factories';
import type { Browser } from 'playwright-core';
import { resolveBinaries } from '../src/media/binaries';
import { clip, startTestServer, type TestServer } from './helpers';

declare const document: any;

if (!haveChromium) console.warn(`test/ui-playback.test.ts: skipped — no Chromium at ${CHROMIUM}`);

let srv: TestServer;
let browser: Browser;
let dir: string;
let phone: string;

describe.skipIf(!haveChromium)('the video page of an HEVC phone video (headless Chromium)', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'vidq-ui-playback-'));
    const { ffmpeg } = await resolveBinaries(join(dir, 'bin'));
    const run = (args: string[]) => ffmpegSync(ffmpeg, args);
    const side = join(dir, 'side.mov');
    phone = join(dir, 'phone.mov');
    run([
      '-t',
      '3',
      '-i',
      clip('skateboarding-dog.mp4'),
      '-vf',
      'transpose=2',
      '-c:v',
      'libx265',
      '-preset',
      'ultrafast',
      '-x265-params',
      'log-level=error',
      '-tag:v',
      'hvc1',
      '-c:a',
      'aac',
      side,
    ]);
    // This ffmpeg drops a rotate tag set while encoding: it is set in a second, copying step.
    run(['-i', side, '-c', 'copy', '-metadata:s:v', 'rotate=90', '-f', 'mov', phone]);
    [srv, browser] = await Promise.all([
      startTestServer({ 'analysis-workers': '1', analyzers: 'visual' }),
      launchChromium(),
    ]);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await srv?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('opened during the analysis, the page plays the portrait H.264 copy and offers no subtitles', async () => {
    const up = await fetch(`${srv.url}/upload?index=phones&file_name=phone.mov`, {
      method: 'POST',
      headers: { authorization: `Bearer ${srv.token}`, 'content-type': 'video/quicktime' },
      body: readFileSync(phone),
    });
    expect(up.status).toBe(200);
    const key = ((await up.json()) as { data: { key: string } }).data.key;
    const index = (
      (await (await fetch(`${srv.url}/indexes?token=${srv.token}`)).json()) as { index_id: string; name: string }[]
    ).find((i) => i.name === 'phones')!.index_id;

    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    await signIn(page, srv.url, srv.token);
    await page.getByRole('heading', { name: 'Upload from this computer' }).waitFor();
    await page.goto(`${srv.url}/#/v/${index}/${key}`);

    const playing = await page.waitForFunction(
      () => {
        const v = document.querySelector('video');
        if (!v || v.readyState < 1 || !new URL(v.src).pathname.endsWith('/playback')) return null;
        return { width: v.videoWidth, height: v.videoHeight };
      },
      undefined,
      { timeout: 120_000, polling: 250 },
    );
    const size = (await playing.jsonValue()) as { width: number; height: number };
    expect([size.width, size.height]).toEqual([576, 1024]);
    expect(await page.locator('.downloads').textContent()).toContain('everything found');
    expect(await page.getByRole('link', { name: /subtitles/ }).count()).toBe(0);
    expect(problems).toEqual([]);
    await context.close();
  }, 150_000);
});
