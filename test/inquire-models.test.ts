/**
 * Answers from caption and transcript evidence, end to end: a clip analysed with a captioner and a
 * transcriber configured against the model-server STAND-IN (test/model-stand-in.ts; a real model
 * server cannot run here), asked through POST /inquire with the index given by its name, in prose
 * and as structured output (`json`). The stand-in's caption and transcript hold the answers; the
 * object detector is off, so nothing else does.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config';
import { type RunningServer, startServer } from '../src/server';
import { uploadAndWaitReady } from './factories';
import { type Origin, postJson, startOrigin } from './helpers';
import { ModelStandIn } from './model-stand-in';

const CAPTION =
  'Three plastic water bottles with blue caps stand on a table covered with a plain linen cloth, against a grey wall.';
const WORDS = 'And so my fellow Americans, ask not what your country can do for you.';

let origin: Origin;
let stand: ModelStandIn;
let server: RunningServer;
let dataDir: string;
let token: string;

beforeAll(async () => {
  origin = startOrigin();
  stand = new ModelStandIn({
    caption: () => CAPTION,
    transcript: (_, d) => [{ start: 0.4, end: Math.min(d, 9.5), text: WORDS }],
  });
  dataDir = mkdtempSync(join(tmpdir(), 'vidq-inquire-models-'));
  const config = loadConfig(
    {
      'data-dir': dataDir,
      port: '0',
      'allow-private-urls': true,
      'log-level': 'error',
      'min-free-bytes': '0',
      'analysis-workers': '1',
      analyzers: 'visual,speech,embeddings',
      captioner: 'openai',
      'captioner-url': stand.url,
      'captioner-model': 'qwen2.5vl',
      stt: 'openai',
      'stt-url': `${stand.url}/v1`,
      'stt-model': 'whisper-1',
    },
    {},
  );
  server = await startServer(config, () => {});
  token = (await server.service.accounts.createUser('owner', null)).token;
  await uploadAndWaitReady({ url: server.url, token }, 'speeches', `${origin.url}/media/speech-over-bottles.mp4`, {
    timeoutMs: 240_000,
    intervalMs: 250,
  });
}, 300_000);

afterAll(async () => {
  await server?.stop();
  stand?.stop();
  origin?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const ask = (body: Record<string, unknown>) => postJson(server.url, '/inquire', { token, index: 'speeches', ...body });

test('open questions are answered from the caption and the transcript, by the index name', async () => {
  const table = await ask({ prompt: 'What covers the table?' });
  expect(table.status).toBe(200);
  expect(table.body.output).toContain('plain linen cloth');
  expect(table.body.evidence[0].kind).toBe('caption');
  const whom = await ask({ prompt: 'Whom does the speaker address?' });
  expect(whom.body.output).toContain('fellow Americans');
  expect(whom.body.evidence[0].kind).toBe('transcript');
  const nothing = await ask({ prompt: 'Is there a birthday cake?' });
  expect(nothing.body.output).toMatch(/could not find/i);
  expect((await ask({ prompt: 'What is said?', index: 'no-such-index' })).status).toBe(404);
});

test('structured output: exactly the keys asked, filled from the evidence, null where nothing supports a value', async () => {
  const json = {
    request: 'what does the speaker ask his fellow Americans',
    table: 'what covers the table',
    cake: 'is there a birthday cake',
  };
  for (const form of [JSON.stringify(json), json]) {
    const r = await ask({ prompt: 'Tell me about this clip.', json: form });
    expect(r.status).toBe(200);
    const out = JSON.parse(r.body.output);
    expect(Object.keys(out).sort()).toEqual(['cake', 'request', 'table']);
    expect(out.request).toContain('country');
    expect(out.table).toContain('linen cloth');
    expect(out.cake).toBeNull();
    expect(r.body.evidence.some((e: any) => e.kind === 'transcript')).toBe(true);
  }
  const bad = await ask({ prompt: 'Tell me about this clip.', json: '{"a": 1' });
  expect(bad.status).toBe(400);
  expect(bad.body.message).toContain('json');
});
