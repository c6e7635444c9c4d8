/**
 * The hosted API's search and flows as its SDK uses them (../shared/spec/moonshine-sdk.md): a client
 * written from that page — its field names and types, only `Content-Type: application/json` (no
 * Accept beyond fetch's default, no Authorization), `project_id` = token + index name — against the
 * real server with three clips analysed for real (visual, OCR, objects, faces).
 *
 * Checked: POST /search by text (the match arrays, frame numbers at the video's fps, numargs,
 * threshold, subindex) and by image (base64 of a full-HD PNG, and a URL on a 127.0.0.1 origin),
 * body limits per endpoint, and the flows: search, clipping (lengths and shot boundaries),
 * scene-detection (descriptions), content-moderation (flags name their model), an unknown flow.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NSFW_MODEL } from '../src/flows/moderation';
import { resolveBinaries } from '../src/media/binaries';
import { clip, startOrigin, startTestServer, type Origin, type TestServer } from './helpers';

type Obj = Record<string, any>;
type Match = [string, number, number, string, string];

let srv: TestServer;
let origin: Origin;
let images: ReturnType<typeof Bun.serve>;
let work: string;
let ffmpeg: string;
const INDEX = 'sdk-search';
const ids: Record<string, string> = {};
const fps: Record<string, number> = {};
/** A full-HD PNG of a frame of big-buck-bunny (the title), and one of GRID's man at 7 s. */
let titlePng: Buffer;
let facePng: Buffer;

/** The SDK's `search`: its fields, its defaults, its headers; a non-2xx is raised with the JSON body. */
async function sdkSearch(
  fields: { query?: string; image?: string; numargs?: number; threshold?: number; subindex?: string[] },
  token = srv.token,
  index = INDEX,
): Promise<{ status: number; body: Obj }> {
  const body: Obj = {
    project_id: token + index,
    api: token,
    numargs: fields.numargs ?? 5,
    threshold: fields.threshold ?? 1000,
  };
  if (fields.query !== undefined) body.query = fields.query;
  if (fields.image !== undefined) body.image = fields.image;
  if (fields.subindex !== undefined) body.subindex = fields.subindex;
  const res = await fetch(srv.url + '/search', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Obj };
}

/** The SDK's `run(flow, **fields)`: the fields plus `token`, to /core/<flow>. */
async function sdkRun(flow: string, fields: Obj): Promise<{ status: number; body: Obj }> {
  const res = await fetch(`${srv.url}/core/${flow}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...fields, token: srv.token }),
  });
  return { status: res.status, body: (await res.json()) as Obj };
}

/** "m min, s sec" → seconds, as a client of the SDK reads it. */
const secondsOf = (s: string) => {
  const m = /^(\d+) min, (\d+) sec$/.exec(s);
  if (!m) throw new Error(`not "m min, s sec": ${s}`);
  return Number(m[1]) * 60 + Number(m[2]);
};

function expectMatchShape(m: Match) {
  expect(m).toHaveLength(5);
  const [file, a, b, from, to] = m;
  expect(typeof file).toBe('string');
  expect(Number.isInteger(a) && Number.isInteger(b)).toBe(true);
  expect(b).toBeGreaterThanOrEqual(a);
  // The frame numbers and the times agree at the video's own frame rate.
  expect(secondsOf(from)).toBe(Math.floor(a / fps[file]! + 1e-6));
  expect(Math.abs(secondsOf(to) - b / fps[file]!)).toBeLessThan(1.001);
}

async function png(input: string, at: number, out: string): Promise<Buffer> {
  const p = join(work, out);
  const proc = Bun.spawn(
    [ffmpeg, '-v', 'error', '-y', '-ss', String(at), '-i', input, '-frames:v', '1', '-vf', 'scale=1920:1080', p],
    { stderr: 'pipe' },
  );
  if ((await proc.exited) !== 0) throw new Error(await new Response(proc.stderr).text());
  return readFileSync(p);
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'vidq-sdk-search-'));
  ffmpeg = (await resolveBinaries(join(work, 'bin'))).ffmpeg;
  origin = startOrigin();
  srv = await startTestServer({ 'analysis-workers': '1', analyzers: 'visual,ocr,objects,faces' });
  for (const name of ['big-buck-bunny-intro.webm', 'grid-speakers-33s.mp4', 'countdown-living-room.mp4']) {
    const res = await fetch(srv.url + '/remote-upload', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ token: srv.token, index: INDEX, url: `${origin.url}/media/${name}` }),
    });
    const text = await res.text();
    // JSON (the spec's {data}) or events: the key is in either.
    ids[name] = /"key":"([^"]+)"/.exec(text)![1]!;
  }
  for (let i = 0; ; i++) {
    const list = (await (await fetch(`${srv.url}/index-resources?token=${srv.token}&index=${INDEX}`)).json()) as Obj[];
    if (list.length === 3 && list.every((r) => r.status === 'ready')) {
      for (const r of list) fps[r.file_id] = r.metadata.fps;
      break;
    }
    const failed = list.find((r) => r.status === 'failed');
    if (failed) throw new Error(`analysis failed: ${failed.error}`);
    if (i > 600) throw new Error('the clips were not analysed within 5 minutes');
    await Bun.sleep(500);
  }
  titlePng = await png(clip('big-buck-bunny-intro.webm'), 27, 'title.png');
  facePng = await png(clip('grid-speakers-33s.mp4'), 7.5, 'face.png');
  images = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (req) =>
      new URL(req.url).pathname === '/title.png'
        ? new Response(titlePng, { headers: { 'content-type': 'image/png' } })
        : new Response('no', { status: 404 }),
  });
}, 400_000);

afterAll(async () => {
  await srv?.stop();
  origin?.stop();
  images?.stop(true);
  rmSync(work, { recursive: true, force: true });
});

describe('POST /search by text', () => {
  test('answers {status: "complete", output: {embeddings, transcript, ocr}} with five-element matches', async () => {
    const r = await sdkSearch({ query: 'bunny' });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('complete');
    expect(Object.keys(r.body.output).sort()).toEqual(['embeddings', 'ocr', 'transcript']);
    for (const list of Object.values(r.body.output) as Match[][]) for (const m of list) expectMatchShape(m);
    // The title "Big Buck BUNNY" is on screen from about 25 s: an OCR match of that clip.
    const bunny = ids['big-buck-bunny-intro.webm']!;
    const hit = (r.body.output.ocr as Match[]).find((m) => m[0] === bunny);
    expect(hit).toBeDefined();
    expect(secondsOf(hit![3])).toBeGreaterThanOrEqual(22);
    expect(r.body.output.ocr.length).toBeLessThanOrEqual(5); // numargs' default
  });

  test('is served by the same retrieval core as GET /search: its best moment is among the matches', async () => {
    const get = (await (
      await fetch(`${srv.url}/search?token=${srv.token}&index=${INDEX}&q=${encodeURIComponent('bunny')}&limit=1`)
    ).json()) as Obj;
    const best = get.moments[0];
    const r = await sdkSearch({ query: 'bunny', numargs: 20 });
    const all = [...r.body.output.embeddings, ...r.body.output.ocr, ...r.body.output.transcript] as Match[];
    expect(
      all.some(
        (m) =>
          m[0] === best.video_id && m[3] === `${Math.floor(best.start / 60)} min, ${Math.floor(best.start) % 60} sec`,
      ),
    ).toBe(true);
  });

  test('numargs caps each list; threshold 0 keeps only the best; subindex limits the videos', async () => {
    const one = await sdkSearch({ query: 'person', numargs: 1 });
    for (const list of Object.values(one.body.output) as Match[][]) expect(list.length).toBeLessThanOrEqual(1);
    const many = await sdkSearch({ query: 'person', numargs: 50 });
    const count = (b: Obj) => Object.values(b.output as Obj).reduce((n: number, l) => n + (l as Match[]).length, 0);
    const strict = await sdkSearch({ query: 'person', numargs: 50, threshold: 0 });
    expect(count(strict.body)).toBeGreaterThan(0);
    // Matches tied with the best (every "person" detection scores alike) all stay at threshold 0.
    expect(count(strict.body)).toBeLessThanOrEqual(count(many.body));
    const manyKeys = new Set((Object.values(many.body.output) as Match[][]).flat().map((m) => m.join('|')));
    for (const m of (Object.values(strict.body.output) as Match[][]).flat())
      expect(manyKeys.has(m.join('|'))).toBe(true);
    // A query naming two things, whose matches differ in strength: threshold 0 keeps fewer.
    const loose = await sdkSearch({ query: 'bunny person', numargs: 50 });
    const tight = await sdkSearch({ query: 'bunny person', numargs: 50, threshold: 0 });
    expect(count(tight.body)).toBeGreaterThan(0);
    expect(count(tight.body)).toBeLessThan(count(loose.body));
    const grid = ids['grid-speakers-33s.mp4']!;
    const only = await sdkSearch({ query: 'person', numargs: 50, subindex: [grid] });
    const files = new Set((Object.values(only.body.output) as Match[][]).flat().map((m) => m[0]));
    expect([...files]).toEqual([grid]);
    // The SDK may keep the hosted product's extension on an id.
    expect((await sdkSearch({ query: 'person', subindex: [`${grid}.mp4`] })).status).toBe(200);
  });

  test('errors are JSON bodies the SDK raises: no query, bad numargs, an unknown subindex, a bad token', async () => {
    const cases: [Obj, number][] = [
      [{}, 400],
      [{ query: 'x', numargs: 0 }, 400],
      [{ query: 'x', subindex: ['NOSUCHFILE'] }, 404],
    ];
    for (const [fields, status] of cases) {
      const r = await sdkSearch(fields);
      expect(r.status).toBe(status);
      expect(r.body).toEqual({ error: status, message: expect.any(String) });
    }
    const bad = await sdkSearch({ query: 'x' }, 'z'.repeat(60));
    expect(bad.status).toBe(401);
    expect((await sdkSearch({ query: 'x' }, srv.token, 'no-such-index')).status).toBe(404);
  });
});

describe('POST /search by image', () => {
  test('a full-HD PNG as base64 gets through, finds its frame and its text, and says what matched', async () => {
    const b64 = titlePng.toString('base64');
    expect(b64.length).toBeGreaterThan(srv.server.service.config.maxBodyBytes); // more than any other endpoint takes
    const r = await sdkSearch({ image: b64, numargs: 10 });
    expect(r.status).toBe(200);
    expect(r.body.matched_by).toContain('frame');
    expect(r.body.matched_by).toContain('text');
    expect(r.body.image.text.toLowerCase()).toContain('bunny');
    const bunny = ids['big-buck-bunny-intro.webm']!;
    const seen = (r.body.output.embeddings as Match[]).filter((m) => m[0] === bunny);
    // The picture is of 27 s: the near-identical sampled frames are there, not elsewhere.
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.some((m) => secondsOf(m[3]) <= 27 && 27 <= secondsOf(m[4]) + 1)).toBe(true);
    expect((r.body.output.ocr as Match[]).some((m) => m[0] === bunny)).toBe(true);
  }, 120_000);

  test('an http URL (127.0.0.1 origin, private URLs allowed in this config) is fetched and matched alike', async () => {
    const r = await sdkSearch({ image: `http://127.0.0.1:${images.port}/title.png` });
    expect(r.status).toBe(200);
    expect(r.body.matched_by).toContain('frame');
    const missing = await sdkSearch({ image: `http://127.0.0.1:${images.port}/none.png` });
    expect(missing.status).toBe(502);
    expect(missing.body).toEqual({ error: 502, message: expect.any(String) });
  }, 120_000);

  test('a face finds the same person elsewhere in the index (the GRID man at 6–9 s and 21–24 s)', async () => {
    const r = await sdkSearch({ image: facePng.toString('base64'), numargs: 10 });
    expect(r.status).toBe(200);
    expect(r.body.image.faces).toBe(1);
    expect(r.body.matched_by).toContain('faces');
    const grid = ids['grid-speakers-33s.mp4']!;
    const starts = (r.body.output.embeddings as Match[]).filter((m) => m[0] === grid).map((m) => secondsOf(m[3]));
    expect(starts.some((s) => s >= 5 && s <= 9)).toBe(true);
    expect(starts.some((s) => s >= 20 && s <= 24)).toBe(true);
  }, 120_000);

  test('the image wins over query; bytes that are no image are a 400', async () => {
    const r = await sdkSearch({ image: facePng.toString('base64'), query: 'bunny' });
    expect(r.body.matched_by).not.toContain('text'); // no query words: only what the image gave
    const bad = await sdkSearch({ image: Buffer.from('not a picture at all').toString('base64') });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain('image');
  }, 60_000);
});

describe('body limits per endpoint', () => {
  test('elsewhere a body of the PNG size is refused with 413 and the error shape', async () => {
    const big = JSON.stringify({ token: srv.token, index: INDEX, prompt: 'x', guidance: 'y'.repeat(titlePng.length) });
    for (const path of ['/inquire', '/core/clipping', '/remote-upload']) {
      const res = await fetch(srv.url + path, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: big,
      });
      expect(res.status).toBe(413);
      expect(await res.json()).toEqual({ error: 413, message: expect.stringContaining('larger than the limit') });
    }
  });

  test('POST /search above --max-image-body-bytes is a 413 too', async () => {
    const max = srv.server.service.config.maxImageBodyBytes;
    const res = await fetch(srv.url + '/search', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ project_id: srv.token + INDEX, image: 'A'.repeat(max) }),
    });
    expect(res.status).toBe(413);
    expect(((await res.json()) as Obj).error).toBe(413);
  });
});

describe('flows: POST /core/<name>', () => {
  test('an unknown flow is 404 with {error, message}', async () => {
    const r = await sdkRun('no-such-flow', { index: INDEX });
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ error: 404, message: expect.stringContaining('no flow named') });
  });

  test('search: output as /search; num_args is the count', async () => {
    const r = await sdkRun('search', { index: INDEX, query: 'bunny', num_args: 2 });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('complete');
    expect(r.body.output.ocr.length).toBeGreaterThan(0);
    for (const list of Object.values(r.body.output) as Match[][]) expect(list.length).toBeLessThanOrEqual(2);
  });

  test('clipping: clips within min_length/max_length, cut at shot boundaries, with an overview', async () => {
    const bunny = ids['big-buck-bunny-intro.webm']!;
    const segs = (await (
      await fetch(`${srv.url}/videos/${bunny}/segments?token=${srv.token}&kinds=shot`)
    ).json()) as Obj;
    const bounds = new Set<number>(
      (segs.segments as Obj[]).filter((s) => s.kind === 'shot').flatMap((s) => [s.start, s.end]),
    );
    expect(bounds.size).toBeGreaterThan(2);
    const r = await sdkRun('clipping', {
      index: INDEX,
      video_id: bunny,
      prompt: 'bunny',
      num_clips: 2,
      min_length: 3,
      max_length: 10,
    });
    expect(r.status).toBe(200);
    expect(r.body.video_id).toBe(bunny);
    const clips = Object.entries(r.body.output as Obj);
    expect(clips.length).toBeGreaterThan(0);
    expect(clips[0]![0]).toBe('clip_1');
    for (const [, c] of clips) {
      expect(c.video_id).toBe(bunny);
      expect(c.start_time).toMatch(/^\d\d:\d\d$/);
      expect(c.end_time).toMatch(/^\d\d:\d\d$/);
      expect(c.end - c.start).toBeGreaterThanOrEqual(3 - 1e-6);
      expect(c.end - c.start).toBeLessThanOrEqual(10 + 1e-6);
      if (!c.cut_within_shot) {
        expect(bounds.has(c.start)).toBe(true);
        expect(bounds.has(c.end)).toBe(true);
      }
      expect(c.overview.length).toBeGreaterThan(10);
    }
    // The best clip holds the title.
    const best = r.body.output.clip_1;
    expect(best.end).toBeGreaterThan(25);
    expect(best.overview.toLowerCase()).toContain('bunny');
    const bad = await sdkRun('clipping', { index: INDEX, video_id: bunny, prompt: 'x', min_length: 20, max_length: 5 });
    expect(bad.status).toBe(400);
    // The number asked for, or a note that says why fewer (issue 34, class 9); clips never overlap.
    const many = await sdkRun('clipping', {
      index: INDEX,
      video_id: bunny,
      prompt: 'bunny',
      num_clips: 6,
      max_length: 8,
    });
    expect(many.status).toBe(200);
    const got = Object.values(many.body.output as Obj) as Obj[];
    if (got.length < 6) expect(many.body.note).toMatch(/only \d+ moments? of big-buck-bunny-intro\.webm match/);
    else expect(many.body.note).toBeUndefined();
    const sorted = [...got].sort((x, y) => x.start - y.start);
    for (let k = 1; k < sorted.length; k++) expect(sorted[k]!.start).toBeGreaterThanOrEqual(sorted[k - 1]!.end - 1e-6);
    // Sure to return fewer: ten clips of at least 8 s cannot fit in 30 s without overlapping.
    const full = await sdkRun('clipping', {
      index: INDEX,
      video_id: bunny,
      prompt: 'bunny',
      num_clips: 10,
      min_length: 8,
      max_length: 10,
    });
    expect(full.status).toBe(200);
    const fewer = Object.values(full.body.output as Obj) as Obj[];
    expect(fewer.length).toBeGreaterThan(0);
    expect(fewer.length).toBeLessThanOrEqual(3);
    expect(full.body.note).toMatch(
      new RegExp(
        `^10 clips were asked for; only ${fewer.length} moments? of big-buck-bunny-intro\\.webm match "bunny"`,
      ),
    );
  }, 60_000);

  test('scene-detection: scenes cover the video in order, each described from what was seen, read and said', async () => {
    const bunny = ids['big-buck-bunny-intro.webm']!;
    const r = await sdkRun('scene-detection', { index: INDEX, video_id: bunny });
    expect(r.status).toBe(200);
    const scenes = r.body.output.scenes as Obj[];
    expect(scenes.length).toBeGreaterThan(1);
    scenes.forEach((s, k) => {
      expect(s.scene_id).toBe(k + 1);
      expect(s.start_time).toMatch(/^\d\d:\d\d:\d\d$/);
      expect(s.end).toBeGreaterThan(s.start);
      if (k > 0) expect(s.start).toBeCloseTo(scenes[k - 1]!.end, 3);
      expect(typeof s.description).toBe('string');
      expect(s.description.length).toBeGreaterThan(5);
      expect(Array.isArray(s.cues) && Array.isArray(s.characters_or_subjects)).toBe(true);
    });
    // The title is read in the last scene, and said so.
    expect(scenes.at(-1)!.description.toLowerCase()).toContain('bunny');
    expect(scenes.at(-1)!.type).toBe('text on screen');
    // GRID: eleven 3-second head shots on one blue background are one setting with people in it.
    const grid = await sdkRun('scene-detection', { index: INDEX, video_id: ids['grid-speakers-33s.mp4'] });
    const gs = grid.body.output.scenes as Obj[];
    expect(gs.length).toBeLessThan(11);
    expect(gs.some((s) => s.characters_or_subjects.some((c: string) => c.startsWith('person')))).toBe(true);
  }, 60_000);

  test('content-moderation: frames judged by the local model, which each answer names', async () => {
    const r = await sdkRun('content-moderation', { index: INDEX, video_id: ids['countdown-living-room.mp4'] });
    expect(r.status).toBe(200);
    const out = r.body.output;
    expect(out.models).toEqual([NSFW_MODEL]);
    expect(out.frames_checked).toBeGreaterThan(0);
    expect(out.skipped).toEqual({});
    // A living room with a baby: nothing to flag.
    expect(out.flagged).toBe(false);
    for (const f of out.flags) expect(f.model).toBe(NSFW_MODEL);
  }, 120_000);

  test('a flow on a video of another index, or an unknown one, is 404', async () => {
    expect((await sdkRun('clipping', { index: INDEX, video_id: 'NOPE', prompt: 'x' })).status).toBe(404);
    expect((await sdkRun('scene-detection', { index: 'other', video_id: ids['grid-speakers-33s.mp4'] })).status).toBe(
      404,
    );
  });
});
