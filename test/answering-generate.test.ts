/**
 * The generative answer path and /inquire-stream, end to end: the real server on an ephemeral port
 * talking to a fake OpenAI-compatible server (Bun.serve on 127.0.0.1 that speaks
 * /v1/chat/completions, plain JSON and `stream: true` SSE). Evidence comes from segments inserted
 * straight into the database for a stored clip, and once from the real analysis pipeline.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { COMPOSER_NAME, AnsweringService } from '../src/answering/service';
import { createGenerator, type Generator } from '../src/answering/generate/contracts';
import { OpenAiGenerator } from '../src/answering/generate/openai';
import { SYSTEM_PROMPT } from '../src/answering/generate/prompt';
import { TimeGuard, timeExpressions, ungroundedTimes } from '../src/answering/generate/times';
import { TransformersGenerator } from '../src/answering/generate/transformers';
import type { Evidence } from '../src/answering/evidence';
import { ConfigError, loadConfig } from '../src/config';
import { frames, segments } from '../src/storage/schema';
import { uploadAndWaitReady } from './factories';
import { getJson, postJson, startOrigin, startTestServer, type Origin, type TestServer } from './helpers';

// ---- a fake OpenAI-compatible server ---------------------------------------------------------

type Mode = 'ok' | 'slow' | 'http500' | 'garbage' | 'no-done' | 'drip';
interface FakeRequest {
  path: string;
  authorization: string | null;
  body: any;
}
interface FakeOpenAi {
  url: string;
  requests: FakeRequest[];
  mode: Mode;
  /** What the "model" answers, given the request body. */
  answer: (body: any) => string;
  /** Characters per streamed chunk (small, so times are split across chunks). */
  chunk: number;
  /** Requests whose connection the client (the service) closed before the answer was complete. */
  aborted: number;
  stop(): void;
}

/** The answer a well-behaved model gives: the first evidence line's span, cited as written. */
function citeFirstEvidence(body: any): string {
  const user = body.messages.at(-1).content;
  const text = typeof user === 'string' ? user : user.find((p: any) => p.type === 'text').text;
  const m = /^\[1\] (\d+:\d\d)(?:–(\d+:\d\d))? · [^·]+ · ([^·]+) · "([^"]*)"/m.exec(text);
  if (!m) return 'I could not find the answer in the indexed video.';
  return m[2]
    ? `Per the evidence, the ${m[4]} is visible from ${m[1]} to ${m[2]} in ${m[3]!.trim()}.`
    : `Per the evidence, the ${m[4]} is visible at ${m[1]} in ${m[3]!.trim()}.`;
}

function startFakeOpenAi(): FakeOpenAi {
  const fake: FakeOpenAi = {
    url: '',
    requests: [],
    mode: 'ok',
    answer: citeFirstEvidence,
    chunk: 3,
    aborted: 0,
    stop: () => {},
  };
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 30,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      if (req.method !== 'POST' || path !== '/v1/chat/completions')
        return new Response('{"error":{"message":"not found"}}', { status: 404 });
      const body = (await req.json()) as any;
      fake.requests.push({ path, authorization: req.headers.get('authorization'), body });
      let done = false;
      req.signal.addEventListener('abort', () => !done && fake.aborted++);
      const mode = fake.mode;
      if (mode === 'slow') await Bun.sleep(2500);
      if (mode === 'http500')
        return new Response('{"error":{"message":"model is not loaded"}}', {
          status: 500,
          headers: { 'content-type': 'application/json' },
        });
      if (mode === 'garbage' && !body.stream)
        return new Response('{"choices": [ {"message": oops', { headers: { 'content-type': 'application/json' } });
      const text = fake.answer(body);
      if (!body.stream) {
        return Response.json({
          id: 'c1',
          object: 'chat.completion',
          model: body.model,
          choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
        });
      }
      const enc = new TextEncoder();
      const event = (o: unknown) => enc.encode(`data: ${JSON.stringify(o)}\n\n`);
      return new Response(
        new ReadableStream({
          async start(c) {
            c.enqueue(event({ choices: [{ index: 0, delta: { role: 'assistant' } }] }));
            if (mode === 'garbage') {
              c.enqueue(enc.encode('data: {"choices": oops\n\n'));
              c.close();
              return;
            }
            for (let i = 0; i < text.length; i += fake.chunk) {
              if (req.signal.aborted) return;
              c.enqueue(event({ choices: [{ index: 0, delta: { content: text.slice(i, i + fake.chunk) } }] }));
              await Bun.sleep(mode === 'drip' ? 100 : 1);
            }
            done = true;
            c.enqueue(event({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }));
            if (mode !== 'no-done') c.enqueue(enc.encode('data: [DONE]\n\n'));
            c.close();
          },
        }),
        { headers: { 'content-type': 'text/event-stream' } },
      );
    },
  });
  fake.url = `http://127.0.0.1:${server.port}`;
  fake.stop = () => server.stop(true);
  return fake;
}

// ---- evidence: a stored clip with segments inserted directly -----------------------------------

/** Bytes that start like a JPEG (the service sends frames as they are stored). */
const FAKE_JPEG = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3, 4, 5, 6, 0xff, 0xd9]);

interface Seeded {
  indexId: string;
  videoId: string;
}

/** Uploads bottles.mp4 (no analysis on this server) and gives it a few segments and frames. */
async function seed(srv: TestServer, origin: Origin, token: string, index: string): Promise<Seeded> {
  const up = await postJson(srv.url, '/remote-upload', { token, index, url: origin.url + '/media/bottles.mp4' });
  expect(up.status).toBe(200);
  const videoId = up.body.data.key as string;
  const indexId = (await getJson(srv.url, `/indexes?token=${token}`)).body.find((i: any) => i.name === index)
    .index_id as string;
  const db = srv.server.service.db;
  db.insert(segments)
    .values([
      { videoId, kind: 'object', start: 3, end: 12.5, text: 'bottle', confidence: 0.9 },
      { videoId, kind: 'ocr', start: 20.2, end: 24.8, text: 'FRESH MILK', confidence: 0.95 },
      { videoId, kind: 'shot', start: 0, end: 39.9, text: 'shot 1', confidence: 1 },
    ])
    .run();
  const dir = join(srv.dataDir, 'media', videoId, 'frames');
  mkdirSync(dir, { recursive: true });
  for (const [i, t] of [7.5, 22].entries()) {
    const file = `00000${i}.jpg`;
    writeFileSync(join(dir, file), FAKE_JPEG);
    db.insert(frames).values({ videoId, t, shot: 0, file }).run();
  }
  return { indexId, videoId };
}

let origin: Origin;
let fake: FakeOpenAi;
let plain: TestServer; // no generator: the composer answers
let gen: TestServer; // --generator openai → the fake server
let plainData: Seeded;
let genData: Seeded;
const QUESTION = 'When is a bottle visible?';

beforeAll(async () => {
  origin = startOrigin();
  fake = startFakeOpenAi();
  plain = await startTestServer({ analyzers: 'visual' });
  gen = await startTestServer({
    analyzers: 'visual',
    generator: 'openai',
    'generator-url': fake.url,
    'generator-model': 'fake-llm',
    'generator-api-key': 'sk-test-secret-123',
    'generator-timeout-ms': '1000',
  });
  plainData = await seed(plain, origin, plain.token, 'kitchen');
  genData = await seed(gen, origin, gen.token, 'kitchen');
});
afterAll(async () => {
  await plain?.stop();
  await gen?.stop();
  fake?.stop();
  origin?.stop();
});

const ask = (srv: TestServer, body: Record<string, unknown>) => postJson(srv.url, '/inquire', body);

/** The composed answer the service falls back to, straight from the composer. */
async function composedAnswer(
  srv: TestServer,
  req: { index: string; prompt: string; guidance?: string },
): Promise<string> {
  const a = srv.server.service.answering;
  const user = (await srv.server.service.accounts.getUser(srv.userId))!;
  return (await a.compose(req, await a.scope(user, req))).output;
}

/** POSTs to /inquire-stream and reads every event as {event, data}. */
async function streamEvents(
  srv: TestServer,
  body: Record<string, unknown>,
): Promise<{ status: number; type: string; events: { event: string; data: any }[]; json?: any }> {
  const res = await fetch(srv.url + '/inquire-stream', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const type = res.headers.get('content-type') ?? '';
  if (!type.includes('text/event-stream'))
    return { status: res.status, type, events: [], json: await res.json().catch(() => null) };
  const text = await res.text();
  const events = text
    .split('\n\n')
    .filter((b) => b.trim())
    .map((block) => {
      const lines = block.split('\n');
      return {
        event: lines.find((l) => l.startsWith('event: '))!.slice(7),
        data: JSON.parse(lines.find((l) => l.startsWith('data: '))!.slice(6)),
      };
    });
  return { status: res.status, type, events };
}

// ---- tests ------------------------------------------------------------------------------------

describe('time check (every time in an answer comes from the evidence)', () => {
  const ev = (start: number, end: number, text = 'dog'): Evidence => ({
    video_id: 'v',
    file_name: 'a.mp4',
    start,
    end,
    kind: 'object',
    text,
    score: 1,
    frame_url: null,
  });
  const evidence = [ev(3, 12.5), ev(62.4, 65), ev(20, 24, 'the clock shows 10:30')];

  test('finds clock times, numbers with units and "second N"', () => {
    const found = timeExpressions(
      'At 0:03, then 1:02:05 and 0:42.5; 12 s, 12 seconds, 1 min 5 s, 1m05s, 2 minutes, second 14. Not 16:9 or 3 bottles.',
    );
    expect(found.map((t) => [t.text, t.seconds])).toEqual([
      ['0:03', 3],
      ['1:02:05', 3725],
      ['0:42.5', 42.5],
      ['12 s', 12],
      ['12 seconds', 12],
      ['1 min 5 s', 65],
      ['1m05s', 65],
      ['2 minutes', 120],
      ['second 14', 14],
    ]);
  });

  test('accepts evidence starts/ends (±0.5 s, or truncated to the second), durations after "for", and quoted text', () => {
    expect(ungroundedTimes('From 0:03 to 0:12, again at 1:02 (62.4 s), until 65 seconds.', evidence)).toEqual([]);
    expect(ungroundedTimes('It stays for 9.5 seconds.', evidence)).toEqual([]);
    expect(ungroundedTimes('The clock on the wall reads 10:30.', evidence)).toEqual([]);
    expect(ungroundedTimes('The dog appears at 0:30 and leaves at 2 minutes.', evidence)).toEqual([
      '0:30',
      '2 minutes',
    ]);
    expect(ungroundedTimes('It is visible at 0:04.', evidence)).toEqual(['0:04']);
  });

  test('while streaming, holds back what may still grow into a time and stops at an invented one', () => {
    const guard = new TimeGuard(evidence);
    const out: string[] = [];
    for (const piece of ['The dog ', 'is seen at 0', ':0', '3 and ', 'again ', 'at 1', ':0', '2.']) {
      const r = guard.push(piece);
      expect(r.ok).toBe(true);
      if (r.ok) out.push(r.text);
    }
    expect(out.every((t) => !/[\d:]$/.test(t))).toBe(true); // never a half-written time
    const end = guard.end();
    expect(end.ok && out.join('') + end.text).toBe('The dog is seen at 0:03 and again at 1:02.');
    const bad = new TimeGuard(evidence);
    const first = bad.push('The dog is seen at 0:');
    expect(first.ok && first.text).toBe('The dog is seen at ');
    expect(bad.push('59 too.')).toEqual({ ok: false, bad: '0:59' });
  });
});

describe('configuration', () => {
  test('the generator options are validated at load time', () => {
    const load = (flags: Record<string, string | boolean>) => () =>
      loadConfig({ 'data-dir': '/tmp/vidq-none', ...flags }, {});
    expect(load({ generator: 'gpt' })).toThrow(ConfigError);
    expect(load({ generator: 'openai', 'generator-model': 'm' })).toThrow(/--generator-url/);
    expect(load({ generator: 'openai', 'generator-url': 'ftp://h', 'generator-model': 'm' })).toThrow(/http/);
    expect(load({ generator: 'openai', 'generator-url': 'http://u:p@h:1', 'generator-model': 'm' })).toThrow(
      /credentials/,
    );
    expect(load({ generator: 'openai', 'generator-url': 'http://h:1' })).toThrow(/--generator-model/);
    expect(load({ generator: 'transformers' })).toThrow(/--generator-model/);
    expect(load({ generator: 'transformers', 'generator-model': 'x', 'generator-vision': true })).toThrow(
      /openai only/,
    );
    expect(load({ 'generator-vision': true })).toThrow(/needs --generator openai/);
    expect(load({ 'generator-timeout-ms': '5' })).toThrow(/at least 100/);
    const c = loadConfig(
      {
        'data-dir': '/tmp/vidq-none',
        generator: 'openai',
        'generator-url': 'http://127.0.0.1:11434',
        'generator-model': 'llama3.1',
      },
      { VIDQ_GENERATOR_API_KEY: 'sk-from-env' },
    );
    expect(c.generator).toEqual({
      type: 'openai',
      url: 'http://127.0.0.1:11434',
      model: 'llama3.1',
      vision: false,
      timeoutMs: 20000,
    } as typeof c.generator); // the key is not enumerable
    expect(c.generator.type === 'openai' && c.generator.apiKey).toBe('sk-from-env');
    // Never serialised (logs, the analysis worker's inherited config).
    expect(JSON.stringify(c)).not.toContain('sk-from-env');
    expect(Bun.inspect(c)).not.toContain('sk-from-env');
    expect(loadConfig({ 'data-dir': '/tmp/vidq-none' }, {}).generator).toEqual({ type: 'none', timeoutMs: 20000 });
  });

  test('createGenerator: none is no generator; the endpoint gets /v1 once', () => {
    expect(createGenerator({ type: 'none' })).toBeNull();
    expect(createGenerator({ type: 'openai', url: 'http://127.0.0.1:11434', model: 'llama3.1' })!.info.name).toBe(
      'openai:llama3.1 via http://127.0.0.1:11434',
    );
    const g = new OpenAiGenerator({ type: 'openai', url: 'http://127.0.0.1:8080/v1/', model: 'm', vision: true });
    expect(g.info.name).toBe('openai:m via http://127.0.0.1:8080/v1');
    expect(g.supports).toEqual({ vision: true, streaming: true });
  });
});

describe('the generative path (fake OpenAI-compatible server)', () => {
  test('receives the system prompt, question, guidance and numbered evidence; its answer is used and named in `model`', async () => {
    fake.mode = 'ok';
    fake.requests.length = 0;
    const r = await ask(gen, {
      token: gen.token,
      index: genData.indexId,
      prompt: QUESTION,
      guidance: 'answer in one short sentence',
    });
    expect(r.status).toBe(200);
    expect(r.body.output).toBe('Per the evidence, the bottle is visible from 0:03 to 0:12 in bottles.mp4.');
    expect(r.body.model).toBe(`openai:fake-llm via ${fake.url}`);
    expect(r.body.credits_used).toBe(1);
    expect(r.body.evidence[0]).toMatchObject({ kind: 'object', start: 3, end: 12.5, text: 'bottle' });
    expect(r.body.evidence[0].frame_url).toStartWith(`${gen.url}/media/${genData.videoId}/frames/`);
    expect(fake.requests).toHaveLength(1);
    const { body, authorization, path } = fake.requests[0]!;
    expect(path).toBe('/v1/chat/completions');
    expect(authorization).toBe('Bearer sk-test-secret-123');
    expect(body.model).toBe('fake-llm');
    expect(body.stream).toBe(false);
    expect(body.messages[0]).toEqual({ role: 'system', content: SYSTEM_PROMPT });
    expect(body.messages[0].content).toContain('only from the evidence');
    expect(body.messages[0].content).toContain('could not find');
    const user = body.messages[1];
    expect(user.role).toBe('user');
    expect(typeof user.content).toBe('string'); // no images without --generator-vision
    expect(user.content).toContain(`Question: ${QUESTION}`);
    expect(user.content).toContain('Guidance: answer in one short sentence');
    expect(user.content).toMatch(/^\[1\] 0:03–0:12 · object detected in view · bottles\.mp4 · "bottle"$/m);
    expect(user.content).toContain('Draft answer');
  });

  test('sends the cited frames as images when the model reads images (--generator-vision)', async () => {
    const vision = await startTestServer({
      analyzers: 'visual',
      generator: 'openai',
      'generator-url': fake.url + '/v1',
      'generator-model': 'fake-vl',
      'generator-vision': true,
      'generator-timeout-ms': '1000',
    });
    try {
      const data = await seed(vision, origin, vision.token, 'kitchen');
      fake.mode = 'ok';
      fake.requests.length = 0;
      const r = await ask(vision, { token: vision.token, index: data.indexId, prompt: QUESTION });
      expect(r.body.model).toBe(`openai:fake-vl via ${fake.url}/v1`);
      const content = fake.requests[0]!.body.messages[1].content;
      expect(Array.isArray(content)).toBe(true);
      expect(content[0].type).toBe('text');
      expect(content[0].text).toContain('Attached images, in order: frames of evidence [1]');
      const images = content.filter((p: any) => p.type === 'image_url');
      expect(images.length).toBeGreaterThanOrEqual(1);
      expect(images[0].image_url.url).toBe(`data:image/jpeg;base64,${Buffer.from(FAKE_JPEG).toString('base64')}`);
    } finally {
      await vision.stop();
    }
  });

  test.each([
    ['a slow server (> timeout)', 'slow' as Mode, /timed out after 1000 ms/],
    ['an HTTP 500', 'http500' as Mode, /HTTP 500 .*model is not loaded/],
    ['garbage JSON', 'garbage' as Mode, /not JSON/],
  ])('%s falls back to the composed answer and says why', async (_name, mode, reason) => {
    fake.mode = mode;
    const t0 = Date.now();
    const r = await ask(gen, { token: gen.token, index: genData.indexId, prompt: QUESTION });
    fake.mode = 'ok';
    expect(r.status).toBe(200);
    expect(r.body.output).toBe(await composedAnswer(gen, { index: genData.indexId, prompt: QUESTION }));
    expect(r.body.model).toStartWith(`${COMPOSER_NAME} (fallback: openai:fake-llm via ${fake.url}: `);
    expect(r.body.model).toMatch(reason);
    expect(r.body.model).not.toContain('sk-test-secret');
    expect(r.body.credits_used).toBe(1);
    if (mode === 'slow') expect(Date.now() - t0).toBeLessThan(2400);
  });

  test('an answer citing an invented timestamp falls back to the composed answer', async () => {
    fake.answer = () => 'The bottle is visible at 0:30 and again at 0:03.';
    try {
      const r = await ask(gen, { token: gen.token, index: genData.indexId, prompt: QUESTION });
      expect(r.body.output).toBe(await composedAnswer(gen, { index: genData.indexId, prompt: QUESTION }));
      expect(r.body.output).not.toContain('0:30');
      expect(r.body.model).toContain('(fallback: ');
      expect(r.body.model).toContain('not in the evidence ("0:30")');
      // A time the evidence has, in another notation, is fine.
      fake.answer = () => 'The bottle stands there from 3 s to 12.5 s.';
      const ok = await ask(gen, { token: gen.token, index: genData.indexId, prompt: QUESTION });
      expect(ok.body.output).toBe('The bottle stands there from 3 s to 12.5 s.');
      expect(ok.body.model).toBe(`openai:fake-llm via ${fake.url}`);
    } finally {
      fake.answer = citeFirstEvidence;
    }
  });

  test('"not found" never calls the model', async () => {
    fake.requests.length = 0;
    const r = await ask(gen, { token: gen.token, index: genData.indexId, prompt: 'Is there a giraffe?' });
    expect(r.body.output).toStartWith('I could not find a giraffe');
    expect(r.body.model).toBe(COMPOSER_NAME);
    expect(r.body.evidence).toEqual([]);
    expect(fake.requests).toHaveLength(0);
  });
});

describe('POST /inquire-stream', () => {
  test('composer backend: evidence → tokens (the composed answer word by word) → complete', async () => {
    const body = { token: plain.token, index: plainData.indexId, prompt: QUESTION };
    const s = await streamEvents(plain, body);
    expect(s.status).toBe(200);
    expect(s.type).toContain('text/event-stream');
    const names = s.events.map((e) => e.event);
    expect(names[0]).toBe('evidence');
    expect(names.at(-1)).toBe('complete');
    // Each token is followed by its `chunk` twin, the hosted API's form (moonshine-sdk.md).
    const middle = names.slice(1, -1);
    expect(middle.every((n, i) => n === (i % 2 === 0 ? 'token' : 'chunk'))).toBe(true);
    expect(names.length).toBeGreaterThan(4);
    for (const e of s.events) expect(e.data.type).toBe(e.event);
    const evidence = s.events[0]!.data.evidence;
    expect(evidence[0]).toMatchObject({ kind: 'object', start: 3, end: 12.5 });
    expect(evidence[0].frame_url).toStartWith(`${plain.url}/media/`);
    const complete = s.events.at(-1)!.data;
    expect(complete).toEqual({
      type: 'complete',
      status: 'complete',
      output: expect.any(String),
      model: COMPOSER_NAME,
      credits_used: 1,
    });
    expect(
      s.events
        .filter((e) => e.event === 'token')
        .map((e) => e.data.text)
        .join(''),
    ).toBe(complete.output);
    // The same answer as /inquire.
    const json = await ask(plain, body);
    expect(json.body.output).toBe(complete.output);
    expect(json.body.evidence).toEqual(evidence);
  });

  test('model backend (fake OpenAI-compatible server): the model streams its tokens', async () => {
    fake.mode = 'ok';
    fake.requests.length = 0;
    const s = await streamEvents(gen, { token: gen.token, index: genData.indexId, prompt: QUESTION });
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]!.body.stream).toBe(true);
    const names = s.events.map((e) => e.event);
    expect(names[0]).toBe('evidence');
    expect(names.at(-1)).toBe('complete');
    expect(names).not.toContain('reset');
    const tokens = s.events.filter((e) => e.event === 'token').map((e) => e.data.text);
    expect(tokens.length).toBeGreaterThan(5);
    const complete = s.events.at(-1)!.data;
    expect(complete).toMatchObject({
      status: 'complete',
      output: 'Per the evidence, the bottle is visible from 0:03 to 0:12 in bottles.mp4.',
      model: `openai:fake-llm via ${fake.url}`,
      credits_used: 1,
    });
    expect(tokens.join('')).toBe(complete.output);
    // Times are never split across tokens (each was checked before it was sent).
    expect(tokens.some((t) => t.includes('0:03'))).toBe(true);
  });

  test('a model that invents a time mid-stream: a reset event, then the composed answer', async () => {
    fake.answer = () => 'The first bottle appears right away, and the last one leaves at 0:37 when the hand takes it.';
    try {
      const s = await streamEvents(gen, { token: gen.token, index: genData.indexId, prompt: QUESTION });
      const names = s.events.map((e) => e.event);
      const reset = names.indexOf('reset');
      expect(reset).toBeGreaterThan(1); // some model tokens went out first
      expect(s.events[reset]!.data.reason).toContain('"0:37"');
      const before = s.events
        .slice(1, reset)
        .map((e) => e.data.text)
        .join('');
      expect(before).toStartWith('The first bottle appears');
      expect(before).not.toContain('0:37');
      const after = s.events
        .slice(reset + 1, -1)
        .map((e) => e.data.text)
        .join('');
      const complete = s.events.at(-1)!.data;
      expect(after).toBe(complete.output);
      expect(complete.output).toBe(await composedAnswer(gen, { index: genData.indexId, prompt: QUESTION }));
      expect(complete.model).toContain('(fallback: ');
    } finally {
      fake.answer = citeFirstEvidence;
    }
  });

  test.each([
    ['an HTTP 500', 'http500' as Mode],
    ['garbage in the stream', 'garbage' as Mode],
    ['a stream without [DONE]', 'no-done' as Mode],
  ])('%s: the composed answer streams instead', async (_name, mode) => {
    fake.mode = mode;
    try {
      const s = await streamEvents(gen, { token: gen.token, index: genData.indexId, prompt: QUESTION });
      const complete = s.events.at(-1)!.data;
      expect(s.events[0]!.event).toBe('evidence');
      expect(complete.model).toContain('(fallback: ');
      expect(complete.output).toBe(await composedAnswer(gen, { index: genData.indexId, prompt: QUESTION }));
      const afterReset = s.events
        .slice(s.events.findLastIndex((e) => e.event === 'reset') + 1, -1)
        .filter((e) => e.event === 'token');
      expect(afterReset.map((e) => e.data.text).join('')).toBe(complete.output);
    } finally {
      fake.mode = 'ok';
    }
  });

  test('a client that goes away stops the model (fake OpenAI-compatible server)', async () => {
    fake.mode = 'drip';
    fake.aborted = 0;
    try {
      const ctl = new AbortController();
      const res = await fetch(gen.url + '/inquire-stream', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token: gen.token, index: genData.indexId, prompt: QUESTION }),
        signal: ctl.signal,
      });
      const reader = res.body!.getReader();
      let seen = '';
      while (!seen.includes('event: token')) seen += new TextDecoder().decode((await reader.read()).value);
      ctl.abort();
      const until = Date.now() + 3000;
      while (fake.aborted === 0 && Date.now() < until) await Bun.sleep(50);
      expect(fake.aborted).toBe(1);
    } finally {
      fake.mode = 'ok';
    }
  });

  test('errors before the stream starts are plain HTTP errors, and are not charged', async () => {
    const acc = gen.server.service.accounts;
    const { user, token } = await acc.createUser('streamer', 3);
    const own = await seed(gen, origin, token, 'mine');
    const bad = await streamEvents(gen, { token, index: own.indexId, prompt: 'x', target: 'yesterday' });
    expect(bad.status).toBe(400);
    expect(bad.json).toEqual({ error: 400, message: expect.stringContaining('mm:ss') });
    expect((await streamEvents(gen, { token, index: own.indexId, prompt: '' })).status).toBe(400);
    expect((await streamEvents(gen, { index: own.indexId, prompt: 'x' })).status).toBe(401);
    expect((await streamEvents(gen, { token, index: 'y'.repeat(64), prompt: 'x' })).status).toBe(404);
    expect(
      (await streamEvents(gen, { token, index: own.indexId, prompt: 'x', target_video: 'A'.repeat(32) })).status,
    ).toBe(404);
    expect((await acc.getUser(user.id))!.credits).toBe(3);
    // One charge per streamed question, fallback or not.
    fake.mode = 'ok';
    expect(
      (await streamEvents(gen, { token, index: own.indexId, prompt: QUESTION })).events.at(-1)!.data.credits_used,
    ).toBe(1);
    fake.mode = 'http500';
    expect(
      (await streamEvents(gen, { token, index: own.indexId, prompt: QUESTION })).events.at(-1)!.data.model,
    ).toContain('fallback');
    fake.mode = 'ok';
    expect((await acc.getUser(user.id))!.credits).toBe(1);
    expect((await streamEvents(gen, { token, index: own.indexId, prompt: QUESTION })).status).toBe(200);
    const broke = await streamEvents(gen, { token, index: own.indexId, prompt: QUESTION });
    expect(broke.status).toBe(400);
    expect(broke.json.message).toContain('insufficient credits');
    expect((await acc.getUser(user.id))!.credits).toBe(0);
  });

  test('is documented in the OpenAPI description', async () => {
    const doc = await getJson(gen.url, '/openapi.json');
    const op = doc.body.paths['/inquire-stream'].post;
    const ref = op.requestBody.content['application/json'].schema.$ref as string;
    expect(doc.body.components.schemas[ref.split('/').pop()!].properties.prompt.minLength).toBe(1);
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '404']));
    expect(Object.keys(op.responses['200'].content)).toContain('text/event-stream');
    expect(op.description).toContain('`evidence`');
    expect(op.description).toContain('`complete`');
  });
});

describe('credits with a generator (fake OpenAI-compatible server)', () => {
  test('one charge per question, fallback or not; none when validation fails', async () => {
    const acc = gen.server.service.accounts;
    const { user, token } = await acc.createUser('asker', 4);
    const own = await seed(gen, origin, token, 'mine');
    fake.mode = 'ok';
    expect((await ask(gen, { token, index: own.indexId, prompt: QUESTION })).body.credits_used).toBe(1);
    fake.mode = 'http500';
    expect((await ask(gen, { token, index: own.indexId, prompt: QUESTION })).body.model).toContain('fallback');
    fake.mode = 'ok';
    expect((await acc.getUser(user.id))!.credits).toBe(2);
    expect((await ask(gen, { token, index: own.indexId, prompt: 'x', target: 'bad' })).status).toBe(400);
    expect((await ask(gen, { token, index: own.indexId, prompt: '' })).status).toBe(400);
    expect((await acc.getUser(user.id))!.credits).toBe(2);
  });
});

describe('transformers generator', () => {
  // No text-generation weights are available here: this checks the missing-model path only.
  test('a missing local model is a clear error, and the service falls back to the composed answer', async () => {
    const g = new TransformersGenerator({
      type: 'transformers',
      model: 'onnx-community/no-such-chat-model',
      modelsDir: join(gen.dataDir, 'models'),
    });
    expect(g.supports).toEqual({ vision: false, streaming: true });
    expect(g.missingFiles()).toContain('config.json');
    await expect(
      g.generate({ system: 's', messages: [{ role: 'user', content: 'hi' }] }, { signal: AbortSignal.timeout(5000) }),
    ).rejects.toThrow(/"onnx-community\/no-such-chat-model" is not in .*missing config\.json/);
    const s = gen.server.service;
    const answering = new AnsweringService({
      catalog: s.catalog,
      config: s.config,
      accounts: s.accounts,
      indexes: s.indexes,
      links: s.links,
      files: s.files,
      embedder: null,
      retrieval: s.retrieval,
      generator: g as Generator,
    });
    const user = (await s.accounts.getUser(gen.userId))!;
    const r = await answering.inquire(user, { index: genData.indexId, prompt: QUESTION });
    expect(r.model).toStartWith(
      `${COMPOSER_NAME} (fallback: transformers:onnx-community/no-such-chat-model: the text-generation model`,
    );
    expect(r.output).toBe(await composedAnswer(gen, { index: genData.indexId, prompt: QUESTION }));
  });
});

describe('end to end on a real clip (fake OpenAI-compatible server)', () => {
  test('skateboarding-dog.mp4 analysed by the real pipeline; the model gets its evidence and frames and answers', async () => {
    const e2e = await startTestServer({
      'analysis-workers': '1',
      analyzers: 'visual,objects',
      generator: 'openai',
      'generator-url': fake.url,
      'generator-model': 'fake-vl',
      'generator-vision': true,
      'generator-timeout-ms': '5000',
    });
    try {
      const { row } = await uploadAndWaitReady(e2e, 'dogs', origin.url + '/media/skateboarding-dog.mp4', {
        timeoutMs: 50_000,
        intervalMs: 500,
      });
      expect(row.status).toBe('ready');
      const indexId = (await getJson(e2e.url, `/indexes?token=${e2e.token}`)).body[0].index_id;
      fake.mode = 'ok';
      fake.requests.length = 0;
      const r = await ask(e2e, { token: e2e.token, index: indexId, prompt: 'When is the dog visible?' });
      expect(r.status).toBe(200);
      expect(r.body.model).toBe(`openai:fake-vl via ${fake.url}`);
      const first = r.body.evidence[0];
      expect(first).toMatchObject({ kind: 'object', text: 'dog', file_name: 'skateboarding-dog.mp4' });
      expect(r.body.output).toContain('the dog is visible');
      for (const t of timeExpressions(r.body.output)) expect(ungroundedTimes(t.text, r.body.evidence)).toEqual([]);
      const content = fake.requests[0]!.body.messages[1].content;
      expect(content[0].text).toContain('skateboarding-dog.mp4 · "dog"');
      const image = content.find((p: any) => p.type === 'image_url');
      const bytes = Buffer.from(image.image_url.url.replace(/^data:image\/jpeg;base64,/, ''), 'base64');
      expect([bytes[0], bytes[1]]).toEqual([0xff, 0xd8]); // a real stored frame
      expect(bytes.length).toBeGreaterThan(1000);
      // And streamed.
      const s = await streamEvents(e2e, { token: e2e.token, index: indexId, prompt: 'When is the dog visible?' });
      expect(s.events.map((e) => e.event)[0]).toBe('evidence');
      expect(s.events.at(-1)!.data).toMatchObject({ status: 'complete', output: r.body.output, model: r.body.model });
    } finally {
      await e2e.stop();
    }
  }, 60_000);
});
