/**
 * Model servers (issue 11) at the stage level: the shared client, the caption stage and the
 * OpenAI speech-to-text engine, against a STAND-IN OpenAI-compatible server (test/model-stand-in.ts;
 * a real model server cannot run here) on 127.0.0.1, with real frames and real audio of the
 * shared clips.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CaptionAnalyzer, cleanCaption, frameGroups, groupSpans } from '../../src/analysis/stages/captions';
import type { StageContext, StageResult } from '../../src/analysis/contracts';
import type { SampledFrame } from '../../src/analysis/frame-stream';
import { Limiter, ModelServerClient, ModelServerError } from '../../src/analysis/engines/model-server/client';
import { OpenAiEmbedder } from '../../src/analysis/engines/model-server/embedder-openai';
import { withOllama } from '../../src/analysis/engines/model-server/ollama';
import { loadConfig } from '../../src/config';
import { encodeWav, OpenAiSpeechToText, transcriptionPieces } from '../../src/analysis/engines/model-server/stt-openai';
import { SpeechAnalyzer } from '../../src/analysis/stages/speech';
import { DEFAULT_VISUAL, VisualAnalyzer } from '../../src/analysis/stages/visual';
import type { Segment } from '../../src/storage/schema';
import { createLogger } from '../../src/log';
import { resolveBinaries } from '../../src/media/binaries';
import { probeFile } from '../../src/media/probe';
import { clip } from '../helpers';
import { stageContext } from '../factories';
import { ModelStandIn } from '../model-stand-in';

const tmp = mkdtempSync(join(tmpdir(), 'vidq-models-'));
const SECRET = 'sk-test-SECRET-key-0123456789';
let server: ModelStandIn;
const logLines: string[] = [];
const log = createLogger('debug', {}, (line) => logLines.push(line));

beforeAll(() => {
  server = new ModelStandIn({ caption: (k, n) => `Stand-in caption ${k}: a scene seen in ${n} frame(s).` });
});
afterAll(() => {
  server.stop();
  rmSync(tmp, { recursive: true, force: true });
});

const client = (url = server.url, opts: Partial<ConstructorParameters<typeof ModelServerClient>[0]> = {}) =>
  new ModelServerClient({
    url,
    apiKey: SECRET,
    timeoutMs: 2_000,
    retries: 1,
    backoffMs: 20,
    limiter: new Limiter(4),
    ...opts,
  });

/** Frames and shots of a clip from the real visual stage, as later stages see them. */
async function visual(name: string) {
  const dir = mkdtempSync(join(tmp, 'v-'));
  const { ffmpeg, ffprobe } = await resolveBinaries(join(tmp, 'bin'));
  const info = await probeFile(ffprobe, clip(name), { maxDurationSec: 3600 });
  const video = {
    id: name,
    path: clip(name),
    dir,
    durationSec: info.durationSec,
    fps: info.fps,
    width: info.width,
    height: info.height,
    hasAudio: info.hasAudio,
  };
  const r = await new VisualAnalyzer(DEFAULT_VISUAL).run(stageContext({ video, ffmpeg, log }));
  const frames: SampledFrame[] = r.frames!.map((f) => ({ ...f, path: join(dir, 'frames', f.file) }));
  const shots = r.segments!.map(
    (s, k) =>
      ({
        id: k,
        videoId: name,
        kind: s.kind,
        start: s.start,
        end: s.end,
        text: s.text,
        confidence: null,
        extra: null,
        embedding: null,
      }) as Segment,
  );
  const ctx = (signal = new AbortController().signal): StageContext =>
    stageContext({
      video,
      ffmpeg,
      log,
      signal,
      frames: () => frames,
      segments: (kinds) => shots.filter((s) => !kinds || kinds.includes(s.kind)),
    });
  return { ctx, frames, shots };
}

describe('model-server client', () => {
  test('adds /v1 when missing, keeps it when present, and never shows the key', () => {
    expect(client('http://127.0.0.1:11434').base).toBe('http://127.0.0.1:11434/v1');
    expect(client('http://127.0.0.1:8000/v1/').base).toBe('http://127.0.0.1:8000/v1');
    expect(client('https://api.example.com/openai/v1').base).toBe('https://api.example.com/openai/v1');
    const c = client();
    expect(JSON.stringify(c)).not.toContain(SECRET);
    expect(Bun.inspect(c)).not.toContain(SECRET);
  });

  test('sends the key as a bearer token; a 500 is retried (bounded), then a ModelServerError naming the URL', async () => {
    server.resetCounts();
    server.misbehave = '500';
    const err = (await client()
      .postJson('/chat/completions', { model: 'm', messages: [] }, new AbortController().signal)
      .catch((e: unknown) => e)) as ModelServerError;
    server.misbehave = 'none';
    expect(err).toBeInstanceOf(ModelServerError);
    expect(err.message).toBe(`HTTP 500 from ${server.url}/v1/chat/completions: {"error":{"message":"model crashed"}}`);
    expect(err.message).not.toContain(SECRET);
    expect(server.requests).toHaveLength(2); // 1 try + 1 retry
    expect(server.requests.every((r) => r.authorization === `Bearer ${SECRET}`)).toBe(true);
  });

  test('connection refused and a timeout are unreachable errors with a plain reason', async () => {
    const closed = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') });
    const deadUrl = `http://127.0.0.1:${closed.port}`;
    closed.stop(true);
    const down = (await client(deadUrl)
      .postJson('/embeddings', {}, new AbortController().signal)
      .catch((e: unknown) => e)) as ModelServerError;
    expect(down).toBeInstanceOf(ModelServerError);
    expect(down.unreachable).toBe(true);
    expect(down.message).toBe(`connection refused at ${deadUrl}/v1/embeddings`);

    server.misbehave = 'slow';
    const t0 = performance.now();
    const slow = (await client(server.url, { timeoutMs: 200, retries: 1 })
      .postJson('/chat/completions', {}, new AbortController().signal)
      .catch((e: unknown) => e)) as ModelServerError;
    server.misbehave = 'none';
    expect(slow.message).toBe(`no reply within 200 ms from ${server.url}/v1/chat/completions`);
    expect(performance.now() - t0).toBeLessThan(2_000);
  });

  test('the limiter holds requests of every client to its maximum, first come first served', async () => {
    const limiter = new Limiter(3);
    const stand = new ModelStandIn({ delayMs: { embeddings: 80 } });
    try {
      const a = client(stand.url, { limiter });
      const b = client(stand.url, { limiter });
      const signal = new AbortController().signal;
      await Promise.all(
        Array.from({ length: 12 }, (_, k) =>
          (k % 2 ? a : b).postJson('/embeddings', { model: 'e', input: ['x'] }, signal),
        ),
      );
      expect(stand.peak).toBe(3);
      expect(limiter.peak).toBe(3);
      expect(limiter.running).toBe(0);
    } finally {
      stand.stop();
    }
  });
});

describe('captions', () => {
  test("caption windows: one per shot, long shots cut every interval (from the shot's first frame), spans without gaps", () => {
    const f = (t: number, shot: number): SampledFrame => ({ t, shot, file: `${t}.jpg`, path: '' });
    const frames = [f(1, 0), f(6, 1), f(11, 1), f(16, 1), f(21, 1), f(26, 1), f(31, 1)];
    const groups = frameGroups(frames, 10);
    expect(groups.map((g) => g.frames.map((x) => x.t))).toEqual([[1], [6, 11], [16, 21], [26, 31]]);
    expect(
      groupSpans(
        groups,
        [
          { start: 0, end: 4 },
          { start: 4, end: 34 },
        ],
        34,
      ),
    ).toEqual([
      { start: 0, end: 4 },
      { start: 4, end: 16 },
      { start: 16, end: 26 },
      { start: 26, end: 34 },
    ]);
    // No shots (shot detection off): the windows split the whole video.
    expect(groupSpans(frameGroups([f(2, 0), f(14, 0)], 10), [], 20)).toEqual([
      { start: 0, end: 14 },
      { start: 14, end: 20 },
    ]);
    expect(cleanCaption('  "**A dog** runs\n on grass."  ')).toBe('A dog runs on grass.');
  });

  test('every shot of Big Buck Bunny gets a caption at its times, from base64 JPEG image parts, with the model in extra', async () => {
    const { ctx, shots } = await visual('big-buck-bunny-intro.webm');
    // A server of its own: the slow replies of earlier tests may still be pending on the shared one.
    const server = new ModelStandIn({
      caption: (k, n) => `Stand-in caption ${k}: a scene seen in ${n} frame(s).`,
      delayMs: { chat: 50 },
    });
    try {
      const a = new CaptionAnalyzer({
        client: client(server.url, { limiter: new Limiter(2) }),
        model: 'qwen2.5vl',
        intervalSec: 10,
      });
      expect(a.info.name).toBe(`openai:qwen2.5vl via ${server.url}/v1`);
      const r = await a.run(ctx());
      const caps = r.segments!;
      // Windows: every shot is covered from its start to its end, without gaps, at most ~10 s each.
      expect(caps.length).toBeGreaterThanOrEqual(shots.length);
      for (const s of shots) {
        const inShot = caps.filter((c) => c.start >= s.start - 1e-3 && c.end <= s.end + 1e-3);
        expect(inShot.length).toBeGreaterThanOrEqual(1);
        expect(inShot[0]!.start).toBeCloseTo(s.start, 2);
        expect(inShot.at(-1)!.end).toBeCloseTo(s.end, 2);
        for (let k = 1; k < inShot.length; k++) expect(inShot[k]!.start).toBe(inShot[k - 1]!.end);
        for (const c of inShot.slice(0, -1)) expect(c.end - c.start).toBeLessThanOrEqual(10 + 5);
      }
      expect(
        caps.every(
          (c) => c.kind === 'caption' && /^Stand-in caption \d+: a scene seen in [12] frame\(s\)\.$/.test(c.text),
        ),
      ).toBe(true);
      expect(caps[0]!.extra).toMatchObject({ model: 'qwen2.5vl', engine: 'openai' });
      expect(server.requests).toHaveLength(caps.length);
      expect(server.peak).toBe(2); // the windows go concurrently, never more than the limit
      expect(server.requests.flatMap((q) => q.problems)).toEqual([]);
      const body = server.requests[0]!.body as { model: string; messages: { content: { type: string }[] }[] };
      expect(body.model).toBe('qwen2.5vl');
      expect(body.messages[0]!.content[0]!.type).toBe('text');
      expect(r.summary).toMatchObject({
        engine: 'openai',
        model: 'qwen2.5vl',
        captions: caps.length,
        windows: caps.length,
      });
      expect(r.summary!.skipped).toBeUndefined();
    } finally {
      server.stop();
    }
  });

  for (const mode of ['500', 'garbage', 'empty', 'wrong-shape', 'slow'] as const) {
    test(`a server answering ${mode} never fails the video: no captions, and the metadata says why`, async () => {
      const { ctx } = await visual('pancake.mkv');
      server.misbehave = mode;
      logLines.length = 0;
      let r: StageResult;
      try {
        r = await new CaptionAnalyzer({ client: client(server.url, { timeoutMs: 300 }), model: 'm' }).run(ctx());
      } finally {
        server.misbehave = 'none';
      }
      expect(r.segments).toEqual([]);
      const why = String(r.summary!.skipped);
      expect(why).toStartWith('captions: skipped — ');
      const expected = {
        '500': 'HTTP 500 from',
        garbage: 'a reply that is not JSON from',
        empty: 'an empty caption from',
        'wrong-shape': 'a reply without choices[0].message.content from',
        slow: 'no reply within 300 ms from',
      }[mode];
      expect(why).toContain(expected);
      expect(why).toContain(server.url);
      // Logged once per video, never with the key.
      expect(logLines.filter((l) => l.includes('caption skipped'))).toHaveLength(1);
      expect(logLines.join('\n')).not.toContain(SECRET);
    });
  }

  test('a server that is down: the remaining windows are not sent after the first gives up', async () => {
    const { ctx } = await visual('big-buck-bunny-intro.webm');
    const closed = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') });
    const deadUrl = `http://127.0.0.1:${closed.port}`;
    closed.stop(true);
    const r = await new CaptionAnalyzer({ client: client(deadUrl, { limiter: new Limiter(1) }), model: 'm' }).run(
      ctx(),
    );
    expect(r.segments).toEqual([]);
    expect(r.summary!.skipped).toBe(`captions: skipped — connection refused at ${deadUrl}/v1/chat/completions`);
  });
});

describe('speech-to-text on a model server', () => {
  async function speechCtx(name: string): Promise<StageContext> {
    const { ffmpeg, ffprobe } = await resolveBinaries(join(tmp, 'bin'));
    const info = await probeFile(ffprobe, clip(name), { maxDurationSec: 3600 });
    return stageContext({
      video: {
        id: name,
        path: clip(name),
        dir: tmp,
        durationSec: info.durationSec,
        fps: info.fps,
        width: info.width,
        height: info.height,
        hasAudio: info.hasAudio,
      },
      ffmpeg,
      log,
    });
  }

  test('grid-speakers: the 11 speech spans go as one joined chunk (≤ 60 s, multipart verbose_json), transcripts at absolute times', async () => {
    const stand = new ModelStandIn({
      transcript: (_, d) => [
        { start: 0.5, end: 1.5, text: 'first words' },
        { start: d - 1.5, end: d - 0.5, text: 'last words' },
      ],
    });
    try {
      const stt = new OpenAiSpeechToText(client(stand.url), 'whisper-1');
      const r = await new SpeechAnalyzer({ stt }).run(await speechCtx('grid-speakers-33s.mp4'));
      const speech = r.segments!.filter((s) => s.kind === 'speech');
      const transcripts = r.segments!.filter((s) => s.kind === 'transcript');
      expect(speech.length).toBeGreaterThanOrEqual(9);
      expect(stand.requests).toHaveLength(1);
      const form = stand.requests[0]!.form!;
      expect(form).toMatchObject({
        model: 'whisper-1',
        response_format: 'verbose_json',
        'timestamp_granularities[]': 'segment',
      });
      expect(stand.requests[0]!.problems).toEqual([]);
      expect(stand.requests[0]!.authorization).toBe(`Bearer ${SECRET}`);
      // The chunk runs from the first span (less 0.2 s of padding) to the last (plus padding).
      const from = Math.max(0, speech[0]!.start - 0.2);
      expect(transcripts.map((t) => t.text)).toEqual(['first words', 'last words']);
      expect(transcripts[0]!.start).toBeCloseTo(from + 0.5, 1);
      expect(transcripts[1]!.end).toBeCloseTo(speech.at(-1)!.end + 0.2 - 0.5, 0);
      expect(transcripts[0]!.extra).toMatchObject({ engine: `openai:whisper-1 via ${stand.url}/v1` });
      expect(r.summary).toMatchObject({ transcripts: 2 });
    } finally {
      stand.stop();
    }
  });

  test('chunks are cut between speech spans and stay within the chunk length (10 s here), sent concurrently', async () => {
    // Long replies, so that successive chunks surely overlap however slowly the audio decodes here.
    const stand = new ModelStandIn({ delayMs: { transcription: 1500 } });
    try {
      class TenSecondChunks extends OpenAiSpeechToText {
        override readonly chunkSec = 10;
      }
      const r = await new SpeechAnalyzer({
        stt: new TenSecondChunks(client(stand.url, { timeoutMs: 20_000 }), 'whisper-1'),
      }).run(await speechCtx('grid-speakers-33s.mp4'));
      const speech = r.segments!.filter((s) => s.kind === 'speech');
      const chunks = r.segments!.filter((s) => s.kind === 'transcript'); // the stand-in answers one segment spanning each chunk
      expect(chunks.length).toBeGreaterThanOrEqual(3);
      expect(chunks.length).toBe(stand.requests.length);
      for (const c of chunks) {
        expect(c.end - c.start).toBeLessThanOrEqual(10 + 0.01);
        // No speech span is cut by a chunk boundary: each lies inside one chunk.
        for (const sp of speech)
          expect(sp.end <= c.start + 0.21 || sp.start >= c.end - 0.21 || (sp.start >= c.start && sp.end <= c.end)).toBe(
            true,
          );
      }
      expect(stand.peak).toBeGreaterThan(1);
    } finally {
      stand.stop();
    }
  });

  test('a silence longer than 3 s ends a chunk: two speeches 6 s apart go as two requests, no silence between them is sent', async () => {
    const { ffmpeg } = await resolveBinaries(join(tmp, 'bin'));
    const file = join(tmp, 'two-speeches.wav');
    const made = Bun.spawnSync([
      ffmpeg,
      '-y',
      '-loglevel',
      'error',
      '-i',
      clip('jfk-speech.wav'),
      '-f',
      'lavfi',
      '-t',
      '6',
      '-i',
      'anullsrc=r=16000:cl=mono',
      '-i',
      clip('jfk-speech.wav'),
      '-filter_complex',
      '[0:a][1:a][2:a]concat=n=3:v=0:a=1',
      '-ar',
      '16000',
      '-ac',
      '1',
      file,
    ]);
    expect(made.exitCode).toBe(0);
    const stand = new ModelStandIn();
    try {
      const ctx: StageContext = {
        ...(await speechCtx('speech-over-bottles.mp4')),
        video: { id: 'two', path: file, dir: tmp, durationSec: 28, fps: 0, width: 0, height: 0, hasAudio: true },
      };
      const r = await new SpeechAnalyzer({ stt: new OpenAiSpeechToText(client(stand.url), 'whisper-1') }).run(ctx);
      const chunks = r.segments!.filter((s) => s.kind === 'transcript'); // one stand-in segment spans each chunk
      expect(stand.requests).toHaveLength(2);
      expect(chunks).toHaveLength(2);
      // The 6 s of silence (11–17 s) is in neither chunk (less the 0.2 s padding and the VAD's hangover).
      expect(chunks[0]!.end).toBeLessThan(12.5);
      expect(chunks[1]!.start).toBeGreaterThan(16);
    } finally {
      stand.stop();
    }
  });

  test('the plain json shape ({text}) becomes one piece spanning the chunk; bad shapes are refused', () => {
    expect(transcriptionPieces({ text: ' hello there ' }, 12.5, 'x')).toEqual([
      { start: 0, end: 12.5, text: 'hello there' },
    ]);
    expect(transcriptionPieces({ text: '', segments: [] }, 3, 'x')).toEqual([]);
    expect(transcriptionPieces({ segments: [{ start: 1, end: 99, text: 'a' }] }, 3, 'x')).toEqual([
      { start: 1, end: 3, text: 'a' },
    ]);
    expect(() => transcriptionPieces({ foo: 1 }, 3, 'http://h/v1')).toThrow(
      'a transcription reply with neither segments nor text from http://h/v1',
    );
    const wav = encodeWav(new Float32Array([0, 0.5, -1]));
    expect(new TextDecoder().decode(wav.subarray(0, 4))).toBe('RIFF');
    expect(wav.length).toBe(44 + 6);
  });

  test('a json-only server and a failing server: speech spans stay, transcripts come from the json text or are skipped with a reason', async () => {
    const stand = new ModelStandIn({ transcript: () => [{ start: 0, end: 1, text: 'and so my fellow americans' }] });
    try {
      stand.misbehave = 'json';
      const stt = new OpenAiSpeechToText(client(stand.url), 'whisper-1');
      const ctx = await speechCtx('speech-over-bottles.mp4');
      const r = await new SpeechAnalyzer({ stt }).run(ctx);
      const speech = r.segments!.filter((s) => s.kind === 'speech');
      const t = r.segments!.filter((s) => s.kind === 'transcript');
      expect(t).toHaveLength(1);
      expect(t[0]!.text).toBe('and so my fellow americans');
      expect(t[0]!.start).toBeCloseTo(Math.max(0, speech[0]!.start - 0.2), 2);

      stand.misbehave = '500';
      const failed = await new SpeechAnalyzer({ stt }).run(ctx);
      expect(failed.segments!.filter((s) => s.kind === 'speech').length).toBe(speech.length);
      expect(failed.segments!.filter((s) => s.kind === 'transcript')).toHaveLength(0);
      expect(String(failed.summary!.transcripts_skipped)).toStartWith(
        `transcripts: skipped — HTTP 500 from ${stand.url}/v1/audio/transcriptions`,
      );
    } finally {
      stand.stop();
    }
  });
});

describe('embeddings on a model server', () => {
  test('one request per 64 texts, vectors normalised and in input order, empty texts get the zero vector', async () => {
    const stand = new ModelStandIn({ embed: (t) => [t.length, 1, 0] });
    try {
      const e = new OpenAiEmbedder(client(stand.url), 'nomic-embed-text');
      expect(e.info.name).toBe(`openai:nomic-embed-text via ${stand.url}/v1`);
      const texts = Array.from({ length: 70 }, (_, k) => (k === 3 ? '' : 'x'.repeat(k + 1)));
      const v = await e.embed(texts);
      expect(stand.requests).toHaveLength(2);
      expect((stand.requests[0]!.body as { input: string[] }).input).toHaveLength(63); // the empty text is not sent
      expect(e.dims).toBe(3);
      expect([...v[3]!]).toEqual([0, 0, 0]);
      const n = Math.hypot(5, 1);
      expect(v[4]![0]).toBeCloseTo(5 / n, 5);
      expect(v[69]![0]).toBeCloseTo(70 / Math.hypot(70, 1), 5);
      expect(stand.requests.every((q) => q.problems.length === 0 && q.authorization === `Bearer ${SECRET}`)).toBe(true);
    } finally {
      stand.stop();
    }
  });

  test('a wrong shape or a failing server is a ModelServerError (the stage then skips, never fails the video)', async () => {
    const stand = new ModelStandIn();
    try {
      const e = new OpenAiEmbedder(client(stand.url), 'm');
      stand.misbehave = 'wrong-shape';
      expect(await e.embed(['a']).catch((x: unknown) => (x as Error).message)).toBe(
        `an embeddings reply without one data[] item per input from ${stand.url}/v1`,
      );
      stand.misbehave = '500';
      expect(await e.embed(['a']).catch((x: unknown) => x)).toBeInstanceOf(ModelServerError);
    } finally {
      stand.stop();
    }
  });
});

describe("--ollama (stand-in for Ollama's /api/tags and /api/show)", () => {
  test('picks a vision model as captioner, a chat model as generator, an embedding model as embedder, and says so', async () => {
    const stand = new ModelStandIn({
      ollamaModels: [
        { name: 'qwen2.5vl:7b', capabilities: ['completion', 'vision'] },
        { name: 'llama3.1:8b', capabilities: ['completion', 'tools'] },
        { name: 'nomic-embed-text:latest', capabilities: ['embedding'] },
      ],
    });
    try {
      const lines: string[] = [];
      const base = loadConfig({ ollama: stand.url, 'data-dir': tmp }, { VIDQ_CAPTIONER_API_KEY: SECRET });
      const c = await withOllama(base, (l) => lines.push(l));
      expect(c).toMatchObject({
        captioner: { type: 'openai', url: stand.url, model: 'qwen2.5vl:7b', intervalSec: 10 },
        generator: { type: 'openai', url: stand.url, model: 'llama3.1:8b' },
        embedder: { type: 'openai', url: stand.url, model: 'nomic-embed-text:latest' },
      });
      expect(c.captioner.type === 'openai' && c.captioner.apiKey).toBe(SECRET); // keys survive, still out of JSON
      expect(JSON.stringify(c)).not.toContain(SECRET);
      expect(lines).toContain('  captioner: qwen2.5vl:7b');
      expect(lines).toContain('  embedder: nomic-embed-text:latest');
      expect(lines.some((l) => l.includes('Ollama serves no speech-to-text'))).toBe(true);
    } finally {
      stand.stop();
    }
  });

  test('an explicit choice is kept, a missing kind is named with what to pull, an unreachable Ollama changes nothing', async () => {
    const stand = new ModelStandIn({ ollamaModels: [{ name: 'llama3.1', capabilities: ['completion'] }] });
    try {
      const lines: string[] = [];
      const base = loadConfig(
        {
          ollama: stand.url,
          'data-dir': tmp,
          embedder: 'openai',
          'embedder-url': 'http://127.0.0.1:9/v1',
          'embedder-model': 'mine',
        },
        {},
      );
      const c = await withOllama(base, (l) => lines.push(l));
      expect(c).toMatchObject({
        captioner: { type: 'none' },
        generator: { type: 'openai', model: 'llama3.1' },
        embedder: { type: 'openai', model: 'mine' },
      });
      expect(lines).toContain(
        '  captioner: none — no vision model installed: `ollama pull qwen2.5vl` would add captions',
      );
      expect(lines).toContain('  embedder: openai mine (set explicitly; kept)');
    } finally {
      stand.stop();
    }
    const closed = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') });
    const dead = `http://127.0.0.1:${closed.port}`;
    closed.stop(true);
    const lines: string[] = [];
    const base = loadConfig({ ollama: dead, 'data-dir': tmp }, {});
    expect(await withOllama(base, (l) => lines.push(l))).toBe(base);
    expect(lines[0]).toStartWith(`Ollama at ${dead} cannot be reached`);
  });
});
