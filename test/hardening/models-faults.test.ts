/**
 * Reanalysis under a kill -9 (issue 11): the real server as a child process, captions from a
 * STAND-IN OpenAI-compatible model server (test/model-stand-in.ts; a real one cannot run here) that
 * answers slowly, and a kill while the reanalysis waits on it. The invariant checker finds nothing
 * dangling; after a restart the reanalysis resumes and ends ready, with one caption per window and
 * the other segments untouched.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getJson, postJson, startOrigin, type Origin } from '../helpers';
import { ModelStandIn } from '../model-stand-in';
import { checkInvariants } from './invariants';
import { kill9, spawnServer, stopAll, stopServer, type ServerProc } from './proc';
import { until } from '../factories';

let origin: Origin;
let stand: ModelStandIn;
const dirs: string[] = [];
beforeAll(() => {
  origin = startOrigin();
  stand = new ModelStandIn({ delayMs: { chat: 400 } });
});
afterAll(async () => {
  await stopAll();
  stand.stop();
  origin.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const resource = async (s: ServerProc) => (await getJson(s.url, `/index-resources?token=${s.token}&index=re`)).body[0];
const expectHealthy = async (dir: string, settled = true) =>
  expect((await checkInvariants(dir, { settled })).violations).toEqual([]);

test('kill -9 while a reanalysis waits on the model server: nothing dangles; after a restart it resumes and ends ready without duplicates', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vidq-models-faults-'));
  dirs.push(dir);
  const args = [
    '--analysis-workers',
    '1',
    '--analyzers',
    'visual,embeddings',
    '--captioner',
    'openai',
    '--captioner-url',
    stand.url,
    '--captioner-model',
    'm',
    '--model-concurrency',
    '1',
  ];
  let s = await spawnServer(dir, args);
  expect(
    (
      await postJson(s.url, '/remote-upload', {
        token: s.token,
        index: 're',
        url: `${origin.url}/media/big-buck-bunny-intro.webm`,
      })
    ).status,
  ).toBe(200);
  const first = await until(
    () => resource(s),
    (r) => r?.status === 'ready' || r?.status === 'failed',
    120_000,
    'the first analysis',
    250,
  );
  expect(first.status).toBe('ready');
  const db = () => new Database(join(dir, 'vidq.db'), { readonly: true });
  const read = () => {
    const d = db();
    try {
      return {
        shots: d.query("SELECT id, start, end FROM segments WHERE kind = 'shot' ORDER BY id").all(),
        captions: d.query("SELECT start, end FROM segments WHERE kind = 'caption' ORDER BY start").all(),
      };
    } finally {
      d.close();
    }
  };
  const before = read();
  expect(before.captions.length).toBeGreaterThan(1);

  stand.resetCounts();
  const re = await postJson(s.url, `/videos/${first.file_id}/reanalyze`, { token: s.token, analyzers: ['captions'] });
  expect(re.status).toBe(202);
  // The kill lands while the worker waits on the (slow) model server, mid-stage.
  await until(
    () => stand.requests.length,
    (n) => n >= 2,
    30_000,
    'caption requests of the reanalysis',
  );
  const during = await resource(s);
  expect(during.status).toBe('processing');
  await kill9(s);
  await expectHealthy(dir, false);

  s = await spawnServer(dir, args);
  const done = await until(
    () => resource(s),
    (r) => r?.status === 'ready' || r?.status === 'failed',
    120_000,
    'the resumed reanalysis',
    250,
  );
  expect(done.status).toBe('ready');
  await stopServer(s);
  await expectHealthy(dir);
  const after = read();
  expect(after.shots).toEqual(before.shots);
  expect(after.captions).toEqual(before.captions); // the same windows, each captioned once
}, 240_000);
