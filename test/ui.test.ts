/**
 * The web page end to end: the real service (with an analysis worker) and a real clip, driven in
 * headless Chromium (Debian's `chromium` package, through playwright-core; no browser download).
 * Signs in, adds a video by URL and follows it to ready (and an audio-only file to its failure),
 * reads the timeline, asks about the video and about a moment, clicks a citation and checks that
 * the player moved there, asks about the whole index and follows a citation to its video, works a timeline mark with the keyboard, looks at a narrow window, and
 * deletes and restores the index. Screenshots of every screen go to test-artifacts/ui/, with the
 * page's transfer size and time to interactive in test-artifacts/ui/metrics.json.
 *
 * Skipped (with a message) when Chromium is not installed: `apt-get install -y chromium`. Without a
 * browser: how the page and its assets are served, and who may read GET /videos/{id}/segments.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CHROMIUM, haveChromium, launchChromium } from './factories';
import type { Browser, Page } from 'playwright-core';
import { getJson, startOrigin, startTestServer, type Origin, type TestServer } from './helpers';

// The functions given to page.evaluate run in the browser; this project's TypeScript has no DOM types.
declare const document: any, window: any, sessionStorage: any, location: any;

const ART = resolve(import.meta.dir, '../test-artifacts/ui');
if (!haveChromium)
  console.warn(
    `test/ui.test.ts: skipped — no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set VIDQ_CHROMIUM)`,
  );

let srv: TestServer;
let origin: Origin;
let browser: Browser;

describe.skipIf(!haveChromium)('web page in headless Chromium', () => {
  beforeAll(async () => {
    mkdirSync(ART, { recursive: true });
    origin = startOrigin();
    [srv, browser] = await Promise.all([
      startTestServer({ 'analysis-workers': '1' }),
      launchChromium(['--disable-quic']),
    ]);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await srv?.stop();
    origin?.stop();
  });

  test('sign in, add a clip by URL, watch it get ready, ask, click a citation to seek', async () => {
    const t0 = Date.now();
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on(
      'console',
      (m) => m.type() === 'error' && !/status of 4\d\d/.test(m.text()) && problems.push(`console: ${m.text()}`),
    );
    const shot = (name: string, fullPage = false) => page.screenshot({ path: join(ART, `${name}.png`), fullPage });
    const currentTime = () => page.evaluate(() => document.querySelector('video').currentTime);
    const waitForTime = (t: number) =>
      page.waitForFunction((t) => Math.abs(document.querySelector('video').currentTime - t) <= 1, t, { timeout: 5000 });

    // --- sign in (a bad token first), and what the first load cost
    await page.goto(srv.url + '/');
    await page.waitForFunction(() => performance.getEntriesByName('vidq-interactive').length > 0);
    const metrics = await pageMetrics(page);
    console.log(
      `ui: first load ${metrics.transferBytes} bytes transferred (${metrics.decodedBytes} decoded) in ${metrics.requests} requests; interactive after ${metrics.interactiveMs} ms`,
    );
    expect(metrics.external).toEqual([]);
    await page.getByLabel('Access token').fill('not-a-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('not valid');
    await shot('01-sign-in');
    await page.getByLabel('Access token').fill(srv.token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Add a video' }).waitFor();
    expect(page.url()).not.toContain(srv.token);
    expect(await page.evaluate(() => sessionStorage.getItem('vidq.token'))).toBe(srv.token);

    // --- add by URL: an audio-only file fails with its reason; the clip streams its progress, then is analysed
    await page.getByLabel('Index', { exact: true }).fill('e2e');
    await page.getByLabel('Video URL').fill(`${origin.url}/media/jfk-speech.wav`);
    await page.getByRole('button', { name: 'Add video' }).click();
    await page.getByText(/^Failed: .*video/).waitFor({ timeout: 15_000 });
    await page.getByLabel('Video URL').fill(`${origin.url}/media/big-buck-bunny-intro.webm`);
    await page.getByRole('button', { name: 'Add video' }).click();
    await page
      .getByText(/^Analysing: .* — \d+ %/)
      .first()
      .waitFor({ timeout: 15_000 });
    // For the screenshot: the estimate of the time left, once there is one (the clip may be done first).
    await page
      .getByText(/ left$/)
      .first()
      .waitFor({ timeout: 8_000 })
      .catch(() => {});
    await shot('02-upload-progress');
    const open = page.getByRole('link', { name: 'Open video' });
    await open.waitFor({ timeout: 45_000 });
    await shot('03-upload-ready');
    console.log(`ui: clip ready after ${((Date.now() - t0) / 1000).toFixed(1)} s`);

    // --- the video page: player and timeline, with details on hover
    const opened = Date.now();
    await open.click();
    await page.locator('.seg.object').first().waitFor();
    metrics.videoPageMs = Date.now() - opened;
    await page.waitForFunction(() => document.querySelector('video').readyState >= 1);
    await page.evaluate(() => window.scrollTo(0, 0));
    const bird = page.getByRole('button', { name: /^Object .*: bird$/ });
    await bird.hover();
    await expect(page.getByRole('tooltip').textContent()).resolves.toContain('bird');
    await page
      .getByRole('tooltip')
      .locator('img')
      .evaluate((img: any) => img.decode());
    await shot('04-video-timeline', true);

    // --- ask about the video; the answer streams in with citation chips; a chip seeks the player
    await page.getByLabel('Question').fill('When is the bird visible?');
    await page.getByRole('radio', { name: 'This video' }).check();
    await page.getByRole('button', { name: 'Ask', exact: true }).click();
    await page.locator('.answer[aria-busy="false"]:not(:empty)').waitFor({ timeout: 15_000 });
    expect(await page.locator('.answer').textContent()).toContain('bird');
    const chip = page.locator('.chips .chip', { hasText: 'bird' }).first();
    const start = Number(await chip.getAttribute('data-start'));
    expect(start).toBeGreaterThan(14);
    expect(start).toBeLessThan(23);
    expect(await currentTime()).toBeLessThan(start - 2);
    await chip.click();
    await waitForTime(start);
    expect(Math.abs((await currentTime()) - start)).toBeLessThanOrEqual(1);
    await page.waitForFunction(() => document.querySelector('video').readyState >= 2);
    await shot('05-answer-seeked', true);

    // --- the keyboard: a timeline mark (the on-screen text, ~21 s) plays from its start on Enter
    const text = page.locator('.seg.ocr').first();
    await text.focus();
    await page.keyboard.press('Enter');
    await waitForTime(21);
    // ... and a question about this moment of the player (target = currentTime)
    await page.getByRole('radio', { name: /^This moment \(0:2[01]\)$/ }).check();
    await page.getByLabel('Question').fill('What is written on screen?');
    await page.getByLabel('Question').press('Enter');
    await page.locator('.answer[aria-busy="false"]:not(:empty)').waitFor({ timeout: 15_000 });
    expect(await page.locator('.answer').textContent()).toContain('PEACH');
    await page.waitForFunction(() => document.querySelector('video').readyState >= 2);
    await shot('06-answer-at-moment', true);

    // --- a narrow window: nothing wider than the screen
    await page.setViewportSize({ width: 375, height: 812 });
    await page.evaluate(() => window.scrollTo(0, 0));
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await shot('07-narrow-video', true);
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.emulateMedia({ colorScheme: 'dark' });
    await shot('08-dark-video', true);
    await page.emulateMedia({ colorScheme: 'light' });

    // --- the index page, then delete and restore the index from the list
    await page.getByRole('link', { name: 'e2e' }).click();
    await page.getByRole('link', { name: 'big-buck-bunny-intro.webm' }).waitFor();
    // ... where a question is about every video; its citation opens the video at that moment
    await page.getByLabel('Question').fill('When is the bird visible?');
    await page.getByRole('button', { name: 'Ask', exact: true }).click();
    await page.locator('.answer[aria-busy="false"]:not(:empty)').waitFor({ timeout: 15_000 });
    await shot('09-index');
    const indexChip = page.locator('.chips .chip', { hasText: 'bird' }).first();
    const at = Number(await indexChip.getAttribute('data-start'));
    await indexChip.click();
    await page.waitForFunction(() => document.querySelector('video')?.readyState >= 1);
    await waitForTime(at);
    await page.getByRole('link', { name: 'e2e' }).click();
    await page.getByRole('link', { name: 'big-buck-bunny-intro.webm' }).waitFor();
    await page.getByRole('link', { name: 'Indexes' }).first().click();
    await page.getByRole('button', { name: 'Delete e2e' }).click();
    await page.getByRole('status').getByText('Deleted “e2e”.').waitFor();
    await page.getByLabel('Show deleted').check();
    await page.getByRole('button', { name: 'Restore e2e' }).waitFor();
    await shot('10-indexes-deleted');
    expect((await getJson(srv.url, '/indexes', { authorization: `Bearer ${srv.token}` })).body).toEqual([]);
    await page.getByRole('button', { name: 'Restore e2e' }).click();
    await page.getByRole('button', { name: 'Delete e2e' }).waitFor();
    expect(
      (await getJson(srv.url, '/indexes', { authorization: `Bearer ${srv.token}` })).body.map(
        (i: { name: string }) => i.name,
      ),
    ).toEqual(['e2e']);
    await page.setViewportSize({ width: 375, height: 812 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await shot('11-narrow-indexes', true);

    // --- signing out forgets the token
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Access token').waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('vidq.token'))).toBeNull();

    expect(problems).toEqual([]);
    await context.close();
    writeFileSync(join(ART, 'metrics.json'), JSON.stringify(metrics, null, 2));
    console.log(`ui: video page (player + timeline) shown ${metrics.videoPageMs} ms after the click`);
    console.log(`ui: done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }, 90_000);
});

describe('the page and its timeline endpoint, without a browser', () => {
  let api: TestServer;
  let from: Origin;
  beforeAll(async () => {
    from = startOrigin();
    api = await startTestServer();
  });
  afterAll(async () => {
    await api.stop();
    from.stop();
  });

  test('/ is the page, its assets are versioned by content, gzipped, and allowed only from this origin', async () => {
    const page = await fetch(api.url + '/');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await page.text();
    const js = /src="(\/ui\/app\.js\?v=[\w-]+)"/.exec(html)?.[1];
    const css = /href="(\/ui\/app\.css\?v=[\w-]+)"/.exec(html)?.[1];
    expect(js).toBeDefined();
    expect(css).toBeDefined();
    expect(html).not.toMatch(/https?:\/\//); // nothing from elsewhere
    const res = await fetch(api.url + js!, {
      headers: { 'accept-encoding': 'gzip' },
      decompress: false,
    } as RequestInit);
    expect(res.headers.get('content-encoding')).toBe('gzip');
    expect(res.headers.get('cache-control')).toContain('immutable');
    const etag = res.headers.get('etag')!;
    expect((await fetch(api.url + '/ui/app.js', { headers: { 'if-none-match': etag } })).status).toBe(304);
    expect((await fetch(api.url + css!)).headers.get('content-type')).toContain('text/css');
    expect((await fetch(api.url + '/ui/secret.txt')).status).toBe(404);
  });

  test('GET /videos/{file_id}/segments: the owner only (Bearer or token), 404 for anyone else', async () => {
    const up = await fetch(api.url + '/remote-upload', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${api.token}` },
      body: JSON.stringify({ index: 'seg', url: `${from.url}/media/skateboarding-dog.mp4` }),
    });
    const key = ((await up.json()) as { data: { key: string } }).data.key;
    const own = await getJson(api.url, `/videos/${key}/segments`, { authorization: `Bearer ${api.token}` });
    expect(own.status).toBe(200);
    expect(own.body).toEqual({ segments: [], frames: [] }); // no analysis workers in this server
    expect((await getJson(api.url, `/videos/${key}/segments?token=${api.token}`)).status).toBe(200);
    expect((await getJson(api.url, `/videos/${key}/segments`)).status).toBe(401);
    const other = await api.server.service.accounts.createUser('other', null);
    expect((await getJson(api.url, `/videos/${key}/segments`, { authorization: `Bearer ${other.token}` })).status).toBe(
      404,
    );
    expect((await getJson(api.url, `/videos/nope/segments`, { authorization: `Bearer ${api.token}` })).status).toBe(
      404,
    );
  });
});

/** What the first load (the sign-in screen, cold cache) cost: bytes over the wire, time to interactive. */
interface Metrics {
  requests: number;
  transferBytes: number;
  encodedBytes: number;
  decodedBytes: number;
  files: { url: string; transfer: number; decoded: number }[];
  external: string[];
  domContentLoadedMs: number;
  loadMs: number;
  /** performance.mark('vidq-interactive'): the first view is rendered and its handlers attached. */
  interactiveMs: number;
  /** From the click on "Open video" to the timeline shown (filled in by the test). */
  videoPageMs?: number;
}

async function pageMetrics(page: Page): Promise<Metrics> {
  return page.evaluate(() => {
    const perf = (globalThis as any).performance;
    const nav = perf.getEntriesByType('navigation')[0];
    const all: any[] = [nav, ...perf.getEntriesByType('resource')];
    const sum = (k: string) => all.reduce((s, e) => s + e[k], 0);
    return {
      requests: all.length,
      transferBytes: sum('transferSize'),
      encodedBytes: sum('encodedBodySize'),
      decodedBytes: sum('decodedBodySize'),
      files: all.map((e) => ({ url: new URL(e.name).pathname, transfer: e.transferSize, decoded: e.decodedBodySize })),
      external: all.filter((e) => new URL(e.name).origin !== location.origin).map((e) => e.name),
      domContentLoadedMs: Math.round(nav.domContentLoadedEventEnd),
      loadMs: Math.round(nav.loadEventEnd),
      interactiveMs: Math.round(perf.getEntriesByName('vidq-interactive')[0].startTime),
    };
  });
}
