/**
 * The web page's own-files features in headless Chromium (Debian's `chromium`, via playwright-core):
 * drag and drop of two files at once onto the upload zone (each with its progress row, then the
 * analysis to ready), the index page's search box with its grid of moments (a click opens the
 * video at that moment), and the video page's download links. Screenshots go to
 * test-artifacts/ui/ (files-*.png). Skipped without Chromium, like test/ui.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CHROMIUM, haveChromium, launchChromium, signIn } from './factories';
import type { Browser } from 'playwright-core';
import { clip, startTestServer, type TestServer } from './helpers';

declare const document: any, DataTransfer: any, File: any, Uint8Array: any, atob: any;

const ART = resolve(import.meta.dir, '../test-artifacts/ui');
if (!haveChromium) console.warn(`test/ui-files.test.ts: skipped — no Chromium at ${CHROMIUM}`);

let srv: TestServer;
let browser: Browser;

describe.skipIf(!haveChromium)('own files in the web page (headless Chromium)', () => {
  beforeAll(async () => {
    mkdirSync(ART, { recursive: true });
    [srv, browser] = await Promise.all([
      startTestServer({ 'analysis-workers': '1', analyzers: 'visual,ocr,embeddings' }),
      launchChromium(),
    ]);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await srv?.stop();
  });

  test('drop two files, follow both to ready, search the index, open a moment, download its insights', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    const shot = (name: string) => page.screenshot({ path: join(ART, `files-${name}.png`), fullPage: true });

    await signIn(page, srv.url, srv.token);
    await page.getByRole('heading', { name: 'Upload from this computer' }).waitFor();
    await page.getByLabel('Index', { exact: true }).fill('dropped');

    // Drop two real clips at once (a DataTransfer with two Files, as a file manager sends).
    const files = ['big-buck-bunny-intro.webm', 'chaplin-bw.mp4'].map((name) => ({
      name,
      type: name.endsWith('.webm') ? 'video/webm' : 'video/mp4',
      b64: readFileSync(clip(name)).toString('base64'),
    }));
    const dt = await page.evaluateHandle((files: { name: string; type: string; b64: string }[]) => {
      const dt = new DataTransfer();
      for (const f of files) {
        const bin = atob(f.b64);
        const bytes = new Uint8Array(bin.length);
        for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
        dt.items.add(new File([bytes], f.name, { type: f.type }));
      }
      return dt;
    }, files);
    await page.dispatchEvent('.drop', 'dragenter', { dataTransfer: dt });
    await page.dispatchEvent('.drop', 'drop', { dataTransfer: dt });
    // One row per file, each with its own progress or status.
    await page.locator('.uploads li', { hasText: 'big-buck-bunny-intro.webm' }).waitFor();
    await page.locator('.uploads li', { hasText: 'chaplin-bw.mp4' }).waitFor();
    await shot('01-dropped');
    const open = page.getByRole('link', { name: 'Open video' });
    await page.waitForFunction(() => document.querySelectorAll('.uploads li.ready').length === 2, null, {
      timeout: 90_000,
    });
    expect(await open.count()).toBe(2);
    expect(await page.locator('.uploads li.failed').count()).toBe(0);
    await shot('02-ready');

    // The index page: search moments, a grid with frames; a click opens the video at that moment.
    await page.getByRole('link', { name: 'dropped' }).first().click();
    await page.getByRole('heading', { name: 'Search moments' }).waitFor();
    await page.getByLabel('Find').fill('open movie project');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    const first = page.locator('.moments .moment a').first();
    await first.waitFor();
    const label = (await first.getAttribute('aria-label')) ?? '';
    expect(label).toContain('big-buck-bunny-intro.webm');
    expect(label.toLowerCase()).toContain('open movie project');
    await page
      .locator('.moments img')
      .first()
      .evaluate((img: any) => img.decode());
    await shot('03-search-grid');
    const href = (await first.getAttribute('href')) ?? '';
    const t = Number(/[?&]t=(\d+)/.exec(href)?.[1]);
    expect(t).toBeGreaterThan(17);
    await first.click();
    await page.waitForFunction(
      (t: number) => {
        const v = document.querySelector('video');
        return !!v && v.readyState >= 1 && Math.abs(v.currentTime - t) <= 1;
      },
      t,
      { timeout: 10_000 },
    );

    // The video page's downloads: insights as a file; no subtitles for a clip without a transcript.
    const download = page.waitForEvent('download');
    await page.getByRole('link', { name: 'everything found (JSON)' }).click();
    const saved = await (await download).path();
    const insights = JSON.parse(readFileSync(saved!, 'utf8'));
    expect(insights.file_name).toBe('big-buck-bunny-intro.webm');
    expect(insights.segments.ocr.length).toBeGreaterThan(0);
    // This clip has no transcript (no speech engine here): nothing to export, so no subtitle links
    // that could only answer an error.
    await expect(page.locator('.downloads').textContent()).resolves.toContain('everything found');
    expect(await page.getByRole('link', { name: /subtitles/ }).count()).toBe(0);
    await shot('04-video-downloads');
    expect(problems).toEqual([]);
    await context.close();
  }, 150_000);
});
