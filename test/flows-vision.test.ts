/**
 * Search by image and content moderation with a vision model server configured. The server is a
 * STAND-IN (test/model-stand-in.ts: OpenAI's published chat-completions shape; it sees nothing and
 * says what the test tells it), since no vision model can run here.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { readFileSync, rmSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NSFW_MODEL } from '../src/flows/moderation';
import { resolveBinaries } from '../src/media/binaries';
import { ModelStandIn } from './model-stand-in';
import { clip, startOrigin, startTestServer, type Origin, type TestServer } from './helpers';
import { uploadAndWaitReady } from './factories';

type Obj = Record<string, any>;
let srv: TestServer;
let origin: Origin;
let stand: ModelStandIn;
let work: string;
let key = '';
/** What the stand-in says next: a caption while the clip is analysed, then what each test sets. */
let say: (k: number) => string = () => 'A living room with a blue armchair, a television and a balloon.';

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'vidq-flows-vision-'));
  origin = startOrigin();
  stand = new ModelStandIn({ caption: (k) => say(k) });
  srv = await startTestServer({
    'analysis-workers': '1',
    analyzers: 'visual',
    captioner: 'openai',
    'captioner-url': stand.url,
    'captioner-model': 'vision-stand-in',
  });
  ({ key } = await uploadAndWaitReady(srv, 'v', `${origin.url}/media/countdown-living-room.mp4`, {
    timeoutMs: 120_000,
    intervalMs: 500,
  }));
}, 180_000);

afterAll(async () => {
  await srv?.stop();
  stand?.stop();
  origin?.stop();
  rmSync(work, { recursive: true, force: true });
});

const run = async (flow: string, fields: Obj) => {
  const res = await fetch(`${srv.url}/core/${flow}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...fields, token: srv.token }),
  });
  return { status: res.status, body: (await res.json()) as Obj };
};

test('content-moderation asks the vision model too; each flag names the model that raised it', async () => {
  stand.resetCounts();
  let n = 0;
  say = () =>
    n++ === 0
      ? '{"unsafe": true, "category": "violence", "reason": "stand-in told to flag this frame"}'
      : '{"unsafe": false, "category": "none", "reason": ""}';
  const r = await run('content-moderation', { index: 'v', video_id: key });
  expect(r.status).toBe(200);
  const out = r.body.output;
  const vision = `vision-stand-in via ${stand.url}/v1`;
  expect(out.models).toEqual([NSFW_MODEL, vision]);
  expect(out.flagged).toBe(true);
  const byVision = out.flags.filter((f: Obj) => f.model === vision);
  expect(byVision).toHaveLength(1);
  expect(byVision[0]).toMatchObject({ category: 'violence', start: 0, reason: expect.stringContaining('stand-in') });
  expect(out.flags.filter((f: Obj) => f.model === NSFW_MODEL)).toEqual([]);
  // One request per frame checked, each in the published shape (a base64 JPEG image_url part).
  const chats = stand.requests.filter((q) => q.path.endsWith('/chat/completions'));
  expect(chats).toHaveLength(out.frames_checked);
  expect(chats.flatMap((q) => q.problems)).toEqual([]);
}, 120_000);

test('search by image includes the vision model caption of the image, and says so', async () => {
  say = () => 'A blue armchair.';
  const ffmpeg = (await resolveBinaries(join(work, 'bin'))).ffmpeg;
  const p = join(work, 'q.png');
  await Bun.spawn([ffmpeg, '-v', 'error', '-y', '-ss', '3', '-i', clip('bottles.mp4'), '-frames:v', '1', p]).exited;
  const res = await fetch(srv.url + '/search', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ project_id: srv.token + 'v', api: srv.token, image: readFileSync(p).toString('base64') }),
  });
  const body = (await res.json()) as Obj;
  expect(res.status).toBe(200);
  expect(body.image.caption).toBe('A blue armchair.');
  expect(body.matched_by).toContain('caption');
  expect(body.matched_by).not.toContain('frame'); // a picture of bottles is no frame of this clip
  expect(body.output.embeddings.length).toBeGreaterThan(0);
  expect(body.output.embeddings[0][0]).toBe(key);
}, 60_000);
