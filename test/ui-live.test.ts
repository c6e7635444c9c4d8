/**
 * The live tile of the web page (issue 21), in headless Chromium (Debian's `chromium`, via
 * playwright-core; skipped without it, like test/ui.test.ts): an index page opened before a
 * pushed stream sends its frames (the bottles scene, analysed by the real object detector) shows
 * the stream's state, its latest frame as it refreshes, a rolling timeline with the bottles, and
 * the bottle alert when it fires (server-sent events); clicking the alert or a timeline moment
 * plays the stream's clip; pause and resume change the state shown; on the stream's own page a
 * timeline moment plays its clip.
 * VIDQ_SCREENSHOT_DIR=<dir> keeps a screenshot of the tile there.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { CHROMIUM, clipFrames, haveChromium, launchChromium, liveClient, liveWorkDir, signIn } from './factories';
import { startTestServer, type TestServer } from './helpers';

declare const document: any;

if (!haveChromium) console.warn(`test/ui-live.test.ts: skipped — no Chromium at ${CHROMIUM}`);

let srv: TestServer;
let browser: Browser;
let dir: string;
let pngs: string[] = [];

const { post } = liveClient(() => srv);

describe.skipIf(!haveChromium)('the live tile of an index page (headless Chromium)', () => {
  beforeAll(async () => {
    let ffmpeg: string;
    ({ work: dir, ffmpeg } = await liveWorkDir('ui-live'));
    // 8 s of the bottles scene, one frame a second, as a camera client would push them.
    pngs = await clipFrames(ffmpeg, 'bottles.mp4', dir, { seconds: 8 });
    [srv, browser] = await Promise.all([startTestServer({ analyzers: 'objects' }), launchChromium()]);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await srv?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('state, latest frame, rolling timeline and alerts as they fire; a clicked moment plays', async () => {
    expect((await fetch(`${srv.url}/create-index?token=${srv.token}&index=cam&type=performance`)).status).toBe(200);
    const alert = await post('/alerts', { token: srv.token, index: 'cam', kind: 'object', query: 'bottle' });
    expect(alert.alert_id).toBeString();
    const added = await post('/add-stream', { token: srv.token, index: 'cam', name: 'desk camera' });
    expect(added.status).toBe('success');
    const index = (
      (await (await fetch(`${srv.url}/indexes?token=${srv.token}`)).json()) as { index_id: string; name: string }[]
    ).find((i) => i.name === 'cam')!.index_id;

    const context = await browser.newContext({ viewport: { width: 1100, height: 1000 } });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    await signIn(page, srv.url, srv.token);
    await page.getByRole('heading', { name: 'Upload from this computer' }).waitFor();
    await page.goto(`${srv.url}/#/i/${index}`);
    const tile = page.locator('li.live-tile');
    await tile.waitFor({ timeout: 30_000 });
    expect(await tile.locator('.name').textContent()).toBe('desk camera');
    expect(await tile.getByText('No frame yet').isVisible()).toBe(true);
    expect(await tile.getByText('No alert has fired.').isVisible()).toBe(true);

    // The frames go in while the page is open, about once a second as a client sends them.
    const t0 = Math.floor(Date.now() / 1000);
    for (let i = 0; i < pngs.length; i++) {
      expect(await post('/stream', { base64_image: pngs[i], stream_id: added.stream_id, time: t0 + i })).toEqual({
        success: true,
      });
      if (i === 1) {
        // The latest frame shows while the stream is still sending.
        await tile.locator('.badge', { hasText: 'Live' }).waitFor({ timeout: 60_000 });
        await page.waitForFunction(
          () => (document.querySelector('li.live-tile img.live-frame') as any)?.naturalWidth > 0,
          undefined,
          { timeout: 60_000, polling: 250 },
        );
      }
      await Bun.sleep(400);
    }

    // The newest frame (stream second 7), bottles on the timeline, the alert pushed by the server.
    await tile.locator('.live-frame-note', { hasText: 'Stream time 0:07' }).waitFor({ timeout: 120_000 });
    await tile
      .getByRole('button', { name: /^Play Object .*bottle/ })
      .first()
      .waitFor({ timeout: 60_000 });
    const alertBtn = tile.locator('ul.live-alerts').getByRole('button', { name: /^Play the alert bottle at 0:0\d/ });
    await alertBtn.waitFor({ timeout: 60_000 });
    expect(await tile.locator('ul.live-alerts li').count()).toBe(1);
    expect(await tile.getByText('No alert has fired.').isVisible()).toBe(false);
    expect(await tile.locator('.live-head').textContent()).toContain('8 frames analysed');
    const frameSrc = await tile.locator('img.live-frame').getAttribute('src');
    expect(frameSrc).toContain(`/frames/000000007000.jpg`);
    expect(frameSrc).toContain('sig=');

    // The alert plays its moment: the clip made from the pushed frames.
    await alertBtn.click();
    const played = await page.waitForFunction(
      () => {
        const v = document.querySelector('li.live-tile .live-clip video');
        if (!v || v.readyState < 1 || !String(v.src).startsWith('blob:')) return null;
        return { duration: v.duration, width: v.videoWidth };
      },
      undefined,
      { timeout: 60_000, polling: 250 },
    );
    const media = (await played.jsonValue()) as { duration: number; width: number };
    expect(media.duration).toBeGreaterThan(2);
    expect(media.width).toBeGreaterThan(0);
    expect(await tile.locator('.live-clip-bar').textContent()).toContain('Alert: bottle');

    if (process.env.VIDQ_SCREENSHOT_DIR)
      await tile.screenshot({ path: join(process.env.VIDQ_SCREENSHOT_DIR, 'live-tile.png') });

    // A timeline moment plays too; the clip closes.
    await tile
      .getByRole('button', { name: /^Play Object .*bottle/ })
      .first()
      .click();
    await tile.locator('.live-clip-bar', { hasText: 'Object: bottle' }).waitFor({ timeout: 60_000 });
    await tile.getByRole('button', { name: 'Close' }).click();
    expect(await tile.locator('.live-clip').isHidden()).toBe(true);

    // Pause and resume from the tile.
    await tile.getByRole('button', { name: 'Pause desk camera' }).click();
    await tile.locator('.badge', { hasText: 'Paused' }).waitFor({ timeout: 10_000 });
    expect((await post('/stream', { base64_image: pngs[0], stream_id: added.stream_id, time: t0 + 9 })).action).toBe(
      'paused',
    );
    await tile.getByRole('button', { name: 'Resume desk camera' }).click();
    await tile.locator('.badge', { hasText: 'Live' }).waitFor({ timeout: 10_000 });

    // The stream's own page: its timeline's moments play as clips (there is no single file).
    await tile.getByRole('link', { name: 'desk camera' }).click();
    await page.locator('.timeline .seg.object').first().click();
    await page.waitForFunction(
      () => {
        const v = document.querySelector('#player');
        return v && v.readyState >= 1 && String(v.src).startsWith('blob:') && v.duration > 2;
      },
      undefined,
      { timeout: 60_000, polling: 250 },
    );
    expect(await page.locator('.status').textContent()).toContain('A clip of the live stream from 0:0');

    expect(problems).toEqual([]);
    await context.close();
  }, 300_000);
});
