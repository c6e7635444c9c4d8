/**
 * Bring your own models (issue 11), end to end: the real server with a real analysis worker
 * process, configured with `--captioner openai` and `--stt openai` against a STAND-IN
 * OpenAI-compatible model server on 127.0.0.1 (test/model-stand-in.ts; a real one cannot run here).
 * First the server fails (500): the video is still ready, the metadata says why the kinds were
 * skipped. Then `POST /videos/{file_id}/reanalyze` fills them in, keeping the other segments, and
 * answers (/inquire and /inquire-stream) quote the captions with citations. The keys never show.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config';
import { startServer, type RunningServer } from '../src/server';
import { waitVideoReady } from './factories';
import { getJson, postJson, startOrigin, type Origin } from './helpers';
import { ModelStandIn } from './model-stand-in';

const CAPTION_KEY = 'sk-caption-SECRET-0123456789abcdef';
const STT_KEY = 'sk-stt-SECRET-0123456789abcdef';
const EMBED_KEY = 'sk-embed-SECRET-0123456789abcdef';
const CAPTION = 'A purple kayak drifts past a striped lighthouse on a calm lake.';
const WORDS = 'we will paint the lighthouse before the winter storms';

let origin: Origin;
let stand: ModelStandIn;
let server: RunningServer;
let dataDir: string;
let token: string;
let indexId: string;
let fileId: string;
const logs: string[] = [];
const bodies: string[] = [];

async function call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(server.url + path, {
    method,
    headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${token}` },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  bodies.push(text);
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

async function resource(): Promise<any> {
  return (await call('GET', `/index-resources?index=${indexId}`)).body.find((r: any) => r.file_id === fileId);
}

/** The video's row once ready; every listing polled joins the bodies checked for leaked keys. */
const waitReady = (): Promise<any> =>
  waitVideoReady({ url: server.url, token }, indexId, fileId, { onPoll: (rows) => bodies.push(JSON.stringify(rows)) });

beforeAll(async () => {
  origin = startOrigin();
  stand = new ModelStandIn({
    caption: () => CAPTION,
    transcript: (_, d) => [{ start: 0.4, end: Math.min(d, 3.4), text: WORDS }],
  });
  stand.misbehave = '500';
  dataDir = mkdtempSync(join(tmpdir(), 'vidq-models-e2e-'));
  const config = loadConfig(
    {
      'data-dir': dataDir,
      port: '0',
      'allow-private-urls': true,
      'log-level': 'info',
      'min-free-bytes': '0',
      'analysis-workers': '1',
      analyzers: 'visual,speech,embeddings',
      captioner: 'openai',
      'captioner-url': stand.url,
      'captioner-model': 'qwen2.5vl',
      stt: 'openai',
      'stt-url': stand.url + '/v1',
      'stt-model': 'whisper-1',
      'model-retries': '1',
    },
    { VIDQ_CAPTIONER_API_KEY: CAPTION_KEY, VIDQ_STT_API_KEY: STT_KEY },
  );
  server = await startServer(
    config,
    () => {},
    (line) => logs.push(line),
  );
  token = (await server.service.accounts.createUser('owner', null)).token;
});

afterAll(async () => {
  await server?.stop();
  stand?.stop();
  origin?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

test('a model server answering 500 never fails the video: ready, with why captions and transcripts were skipped', async () => {
  const up = await call('POST', '/remote-upload', {
    token,
    index: 'models',
    url: `${origin.url}/media/speech-over-bottles.mp4`,
  });
  expect(up.status).toBe(200);
  fileId = up.body.data.key;
  indexId = (await call('GET', '/indexes')).body.find((i: any) => i.name === 'models').index_id;
  const r = await waitReady();
  expect(r.status).toBe('ready');
  const a = r.metadata.analysis;
  expect(a.captions.skipped).toStartWith(`captions: skipped — HTTP 500 from ${stand.url}/v1/chat/completions`);
  expect(a.captions.producer).toBe(`openai:qwen2.5vl via ${stand.url}/v1`);
  expect(a.speech.transcripts_skipped).toStartWith(
    `transcripts: skipped — HTTP 500 from ${stand.url}/v1/audio/transcriptions`,
  );
  expect(a.speech.segments).toBeGreaterThan(0); // the speech spans themselves are kept
  // The transcript export says why there is none, and that a reanalysis fills it in.
  const vtt = await call('GET', `/videos/${fileId}/transcript.vtt`);
  expect(vtt.status).toBe(404);
  expect(vtt.body.message).toContain('HTTP 500');
  expect(vtt.body.message).toContain(`POST /videos/${fileId}/reanalyze`);
  expect(vtt.body.message).not.toContain('add the video again');
  // Every request carried its own server's key.
  expect(
    stand.requests
      .filter((q) => q.path.endsWith('/chat/completions'))
      .every((q) => q.authorization === `Bearer ${CAPTION_KEY}`),
  ).toBe(true);
  expect(
    stand.requests
      .filter((q) => q.path.endsWith('/transcriptions'))
      .every((q) => q.authorization === `Bearer ${STT_KEY}`),
  ).toBe(true);
});

test('reanalyze (default: the stages that were skipped) fills in captions and transcripts and keeps the other segments', async () => {
  const db = server.service.db.$client;
  const shotsBefore = db
    .query("SELECT id, start, end FROM segments WHERE video_id = ? AND kind = 'shot' ORDER BY id")
    .all(fileId);
  expect(shotsBefore.length).toBeGreaterThan(0);
  stand.misbehave = 'none';
  stand.resetCounts();
  const re = await call('POST', `/videos/${fileId}/reanalyze`, {});
  expect(re.status).toBe(202);
  expect(re.body).toEqual({ file_id: fileId, status: 'processing', analyzers: ['speech', 'captions', 'embeddings'] });
  expect((await resource()).status).toBe('processing');
  // While it waits or runs, a second one is refused.
  const again = await call('POST', `/videos/${fileId}/reanalyze`, { analyzers: ['captions'] });
  if (again.status !== 202)
    expect(again).toMatchObject({
      status: 409,
      body: { error: 409, message: expect.stringContaining('being analysed') },
    });
  const r = await waitReady();
  expect(r.status).toBe('ready');
  expect(r.metadata.analysis.captions).toMatchObject({
    captions: expect.any(Number),
    model: 'qwen2.5vl',
    producer: `openai:qwen2.5vl via ${stand.url}/v1`,
  });
  expect(r.metadata.analysis.captions.skipped).toBeUndefined();
  expect(r.metadata.analysis.speech.producer).toContain(`openai:whisper-1 via ${stand.url}/v1`);
  expect(
    db.query("SELECT id, start, end FROM segments WHERE video_id = ? AND kind = 'shot' ORDER BY id").all(fileId),
  ).toEqual(shotsBefore);

  const segs = (await call('GET', `/videos/${fileId}/segments`)).body.segments as any[];
  const captions = segs.filter((s) => s.kind === 'caption');
  expect(captions.length).toBeGreaterThan(0);
  expect(captions.every((c) => c.text === CAPTION)).toBe(true);
  const transcripts = segs.filter((s) => s.kind === 'transcript');
  expect(transcripts.map((t) => t.text)).toEqual([WORDS]);
  // …and so does the export that was 404 before the reanalysis.
  const vtt = await fetch(`${server.url}/videos/${fileId}/transcript.vtt`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(vtt.status).toBe(200);
  expect(await vtt.text()).toContain(WORDS);
  const speech = segs.filter((s) => s.kind === 'speech');
  expect(transcripts[0].start).toBeCloseTo(Math.max(0, speech[0].start - 0.2) + 0.4, 1);
  // Every caption and transcript got its vector.
  const unembedded = db
    .query(
      "SELECT count(*) AS n FROM segments WHERE video_id = ? AND kind IN ('caption', 'transcript') AND vector_id IS NULL",
    )
    .get(fileId) as { n: number };
  expect(unembedded.n).toBe(0);
  expect(stand.requests.flatMap((q) => q.problems)).toEqual([]);
});

test('answers quote the captions with a citation, in /inquire and /inquire-stream', async () => {
  // A question about what is seen: the reader answers it from the captions (visual facts of the moment).
  const body = { token, index: indexId, prompt: 'What can we see in this video?' };
  const res = await call('POST', '/inquire', body);
  expect(res.status).toBe(200);
  const cited = (res.body.evidence as any[]).find((e) => e.kind === 'caption');
  expect(cited).toMatchObject({ video_id: fileId, text: CAPTION });
  expect(res.body.output).toContain('kayak');
  // Something no detector label names is found through the caption that names it.
  const kayak = await call('POST', '/inquire', { ...body, prompt: 'Is there a kayak?' });
  expect(kayak.body.output).toContain('kayak');
  expect(kayak.body.evidence.some((e: any) => e.kind === 'caption' && e.text === CAPTION)).toBe(true);

  const stream = await fetch(server.url + '/inquire-stream', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await stream.text();
  bodies.push(text);
  const evidence = text
    .split('\n\n')
    .map((b) => b.split('\n').find((l) => l.startsWith('data: ')))
    .filter((l): l is string => !!l)
    .map((l) => JSON.parse(l.slice(6)))
    .find((d) => d.type === 'evidence');
  expect(evidence.evidence.some((e: any) => e.kind === 'caption' && e.text === CAPTION)).toBe(true);
});

test('reanalyze refuses what it cannot do with the spec error shape, and another user sees nothing', async () => {
  const nothing = await call('POST', `/videos/${fileId}/reanalyze`, {});
  expect(nothing.status).toBe(409);
  expect(nothing.body.message).toContain('nothing to reanalyze');
  const unknown = await call('POST', `/videos/${fileId}/reanalyze`, { analyzers: ['bogus'] });
  expect(unknown).toMatchObject({
    status: 400,
    body: { error: 400, message: expect.stringContaining('choose from ocr, objects, speech, captions, embeddings') },
  });
  const off = await call('POST', `/videos/${fileId}/reanalyze`, { analyzers: ['ocr'] });
  expect(off).toMatchObject({
    status: 400,
    body: { error: 400, message: 'analyzers: ocr is not configured on this server' },
  });
  const other = (await server.service.accounts.createUser('other', 5)).token;
  const res = await fetch(`${server.url}/videos/${fileId}/reanalyze`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token: other }),
  });
  expect(res.status).toBe(404);
  expect(await res.json()).toEqual({ error: 404, message: 'no such video' });
  expect((await postJson(server.url, `/videos/${fileId}/reanalyze`, {})).status).toBe(401);
  expect((await getJson(server.url, `/videos/${fileId}/segments?token=${other}`)).status).toBe(404);
});

test("vidq reanalyze --index NAME queues the index's videos on the data directory; the running server's worker does them", async () => {
  const flags = [
    '--data-dir',
    dataDir,
    '--captioner',
    'openai',
    '--captioner-url',
    stand.url,
    '--captioner-model',
    'qwen2.5vl',
    '--stt',
    'openai',
    '--stt-url',
    stand.url,
    '--stt-model',
    'whisper-1',
    '--log-level',
    'error',
  ];
  const vidq = (...args: string[]) => {
    const p = Bun.spawnSync([process.execPath, join(import.meta.dir, '../src/main.ts'), ...args, ...flags], {
      stdout: 'pipe',
      stderr: 'pipe',
      env: { ...process.env, VIDQ_ANALYZERS: 'visual,speech,embeddings', VIDQ_CAPTIONER_API_KEY: CAPTION_KEY },
    });
    logs.push(p.stdout.toString(), p.stderr.toString());
    return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
  };
  expect(vidq('reanalyze', '--index', 'no-such-index')).toMatchObject({ code: 1, err: 'no index "no-such-index"\n' });
  const before = stand.requests.length;
  const r = vidq('reanalyze', '--index', 'models', '--analyzers', 'captions', '--json');
  expect(r.err).toBe('');
  expect(r.code).toBe(0);
  expect(JSON.parse(r.out)).toEqual({
    queued: [{ file_id: fileId, analyzers: ['captions', 'embeddings'] }],
    skipped: [],
  });
  // The server's listing cache learns of the job only once its worker (polling every 2 s) claims it.
  const captioned = Date.now() + 30_000;
  while (stand.requests.length === before && Date.now() < captioned) await Bun.sleep(100);
  expect(stand.requests.length).toBeGreaterThan(before);
  expect((await waitReady()).status).toBe('ready');
  expect(stand.requests.slice(before).every((q) => q.path === '/v1/chat/completions')).toBe(true);
});

test('switching the embedder to a model server: questions never mix the two models; the re-embedding job redoes the vectors', async () => {
  const db = () => server.service.db.$client;
  const useBlob = db()
    .query('SELECT length(vector) AS n FROM segment_vectors WHERE video_id = ? LIMIT 1')
    .get(fileId) as { n: number };
  expect(useBlob.n).toBe(512); // the built-in encoder's vectors (int8)
  await server.stop();
  const start = async (workers: string) => {
    const config = loadConfig(
      {
        'data-dir': dataDir,
        port: '0',
        'log-level': 'info',
        'min-free-bytes': '0',
        'analysis-workers': workers,
        analyzers: 'visual,speech,embeddings',
        embedder: 'openai',
        'embedder-url': stand.url,
        'embedder-model': 'nomic-embed-text',
      },
      { VIDQ_EMBEDDER_API_KEY: EMBED_KEY },
    );
    server = await startServer(
      config,
      () => {},
      (line) => logs.push(line),
    );
  };
  // No worker yet: the old vectors stay, and a question must not compare them with the new model's.
  await start('0');
  stand.resetCounts();
  const asked = await call('POST', '/inquire', { token, index: indexId, prompt: 'What can we see in this video?' });
  expect(asked.status).toBe(200);
  expect(asked.body.evidence.some((e: any) => e.kind === 'caption')).toBe(true); // answered without the old vectors
  // The question (and the question reader's examples) were embedded by the new model.
  const embedCalls = stand.requests.filter((q) => q.path === '/v1/embeddings');
  expect(embedCalls.length).toBeGreaterThanOrEqual(1);
  expect(embedCalls.every((q) => q.authorization === `Bearer ${EMBED_KEY}` && q.problems.length === 0)).toBe(true);
  await server.stop();

  // With a worker: the start-up queues the re-embedding of the ready video.
  await start('1');
  const r = await waitReady();
  expect(r.status).toBe('ready');
  expect(r.metadata.analysis.embeddings.producer).toBe(`openai:nomic-embed-text via ${stand.url}/v1`);
  const sizes = db()
    .query(
      'SELECT DISTINCT length(v.vector) AS n FROM segments s JOIN segment_vectors v ON v.id = s.vector_id WHERE s.video_id = ?',
    )
    .all(fileId) as { n: number }[];
  expect(sizes).toEqual([{ n: 16 }]); // the stand-in's 16-d vectors (int8), and only those
  expect(logs.some((l) => l.includes('re-embedding videos'))).toBe(true);
  const again = await call('POST', '/inquire', { token, index: indexId, prompt: 'What can we see in this video?' });
  expect(again.status).toBe(200);
  expect(again.body.evidence.find((e: any) => e.kind === 'caption')).toMatchObject({ text: CAPTION });
});

test('the OpenAPI description covers the reanalyze endpoint and the caption segment kind', async () => {
  const doc = (await call('GET', '/openapi.json')).body;
  const op = doc.paths['/videos/{file_id}/reanalyze'].post;
  expect(op.operationId).toBe('reanalyzeVideo');
  expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['202', '400', '401', '404', '409']));
  expect(op.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/ReanalyzeRequest');
  expect(doc.components.schemas.ReanalyzeRequest.properties.analyzers.type).toBe('array');
  expect(doc.components.schemas.Segment.properties.kind.description).toContain('caption');
  expect(doc.info.description).toContain('caption');
});

test('the model-server keys never appear in a log line or a response', () => {
  expect(logs.length).toBeGreaterThan(0);
  for (const key of [CAPTION_KEY, STT_KEY, EMBED_KEY]) {
    expect(logs.some((l) => l.includes(key))).toBe(false);
    expect(bodies.some((b) => b.includes(key))).toBe(false);
  }
});
