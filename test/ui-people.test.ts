/**
 * The People panel in headless Chromium (Debian's `chromium`, through playwright-core): GRID
 * analysed for real (visual + faces), its ten people as face thumbnails on the index page; naming a
 * person by clicking their name, merging two, a lane per person on the video's timeline, a name in
 * an answer, and splitting a wrongly grouped appearance out from the person's list of appearances. Screenshots go to test-artifacts/ui/. Skipped without Chromium.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { haveChromium, launchChromium, signIn } from './factories';
import type { Browser } from 'playwright-core';
import { getJson, postJson, startOrigin, startTestServer, type Origin, type TestServer } from './helpers';

declare const document: any;

const ART = resolve(import.meta.dir, '../test-artifacts/ui');

let srv: TestServer;
let origin: Origin;
let browser: Browser;
let indexId = '';
let key = '';

describe.skipIf(!haveChromium)('People panel in headless Chromium', () => {
  beforeAll(async () => {
    mkdirSync(ART, { recursive: true });
    origin = startOrigin();
    [srv, browser] = await Promise.all([
      startTestServer({ 'analysis-workers': '1', analyzers: 'visual,faces' }),
      launchChromium(),
    ]);
    key = (
      await postJson(srv.url, '/remote-upload', {
        token: srv.token,
        index: 'people',
        url: `${origin.url}/media/grid-speakers-33s.mp4`,
      })
    ).body.data.key;
    indexId = (await getJson(srv.url, `/indexes?token=${srv.token}`)).body[0].index_id;
    const end = Date.now() + 120_000;
    while (
      (await getJson(srv.url, `/index-resources?token=${srv.token}&index=${indexId}`)).body[0].status !== 'ready'
    ) {
      if (Date.now() > end) throw new Error('analysis did not finish in time');
      await Bun.sleep(250);
    }
  }, 150_000);
  afterAll(async () => {
    await browser?.close();
    await srv?.stop();
    origin?.stop();
  });

  test('thumbnails, click to name, merge, a lane per person, names in answers', async () => {
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    await signIn(page, srv.url, srv.token);
    await page.goto(`${srv.url}/#/i/${indexId}`);
    const people = page.locator('ul.people li.person');
    await people.first().waitFor();
    expect(await people.count()).toBe(10);
    // Every thumbnail loaded as an image.
    await page.waitForFunction(() =>
      [...document.querySelectorAll('ul.people img')].every((i: any) => i.complete && i.naturalWidth > 0),
    );

    // Name the first person by clicking their name (the browser's prompt answers "Ada").
    page.once('dialog', (d) => d.accept('Ada'));
    await page.getByRole('button', { name: 'Name Person 1', exact: true }).click();
    await page.getByRole('button', { name: 'Name Ada' }).waitFor();
    const named = (await getJson(srv.url, `/indexes/${indexId}/people?token=${srv.token}`)).body.filter(
      (p: any) => p.name === 'Ada',
    );
    expect(named.length).toBe(1);
    // Listed by seconds on screen: Person 1 is the man seen twice (6–9 s and 21–24 s).
    expect(named[0].appearance_count).toBe(2);

    // Merge Person 2 into Ada: nine people left, Ada with three appearances.
    await page.getByLabel('Merge Person 2 into', { exact: true }).selectOption({ label: 'Ada' });
    await page.waitForFunction(() => document.querySelectorAll('ul.people li.person').length === 9);
    const ada = (await getJson(srv.url, `/indexes/${indexId}/people?token=${srv.token}`)).body.find(
      (p: any) => p.name === 'Ada',
    );
    expect(ada.appearance_count).toBe(3);
    await page.screenshot({ path: join(ART, 'people-01-panel.png'), fullPage: true });

    // The video's timeline has a lane per person; Ada's has three marks.
    await page.goto(`${srv.url}/#/v/${indexId}/${key}`);
    await page.locator('.seg.face').first().waitFor();
    expect(await page.getByRole('group', { name: 'People: Ada' }).locator('.seg').count()).toBe(3);
    expect(await page.locator('.track[aria-label^="People: "]').count()).toBe(9);
    await page.screenshot({ path: join(ART, 'people-02-timeline.png'), fullPage: true });

    // An answer names her.
    await page.getByLabel('Question').fill('When does Ada appear?');
    await page.getByRole('button', { name: 'Ask', exact: true }).click();
    await page.locator('.answer[aria-busy="false"]:not(:empty)').waitFor({ timeout: 15_000 });
    expect(await page.locator('.answer').textContent()).toContain('Ada appears 3 times');
    await page.screenshot({ path: join(ART, 'people-03-answer.png'), fullPage: true });

    // Back on the index: click Ada's face for her appearances; split the last one out again: ten people.
    await page.goto(`${srv.url}/#/i/${indexId}`);
    await people.first().waitFor();
    await page.getByRole('button', { name: 'Appearances of Ada', exact: true }).click();
    const splits = page.getByRole('button', { name: /^Split .* out of Ada$/ });
    await splits.first().waitFor();
    expect(await splits.count()).toBe(3);
    await splits.last().click();
    await page.waitForFunction(() => document.querySelectorAll('ul.people li.person').length === 10);
    expect(
      (await getJson(srv.url, `/indexes/${indexId}/people?token=${srv.token}`)).body.find((p: any) => p.name === 'Ada')
        .appearance_count,
    ).toBe(2);
    await page.screenshot({ path: join(ART, 'people-04-split.png'), fullPage: true });
    expect(problems).toEqual([]);
  }, 90_000);
});
