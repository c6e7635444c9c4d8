/**
 * The MCP server through both of its transports, driven by the SDK's own Client: streamable HTTP
 * at the server's /mcp (in-process services) and `vidq mcp` over stdio (a child process that calls
 * the HTTP API). A real server on 127.0.0.1 analyses a real clip (visual + subtitles: the clip's
 * subtitle file, served here, is its transcript). Every structured result is checked against the
 * tool's declared output schema with ajv; every refusal against the HTTP API's message.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { clip, getJson, postJson, startOrigin, startTestServer, type Origin, type TestServer } from './helpers';
import { waitIndexReady } from './factories';

const TOOLS = [
  'add_video',
  'ask',
  'describe_video',
  'get_transcript',
  'get_video_status',
  'list_indexes',
  'list_people',
  'list_videos',
  'remove_video',
  'search_moments',
];
const VTT = `WEBVTT

00:00:01.000 --> 00:00:03.000
The countdown begins in the living room

00:00:03.500 --> 00:00:05.500
Five four three two one
`;

let srv: TestServer;
let origin: Origin;
let subs: ReturnType<typeof Bun.serve>;
const dir = mkdtempSync(join(tmpdir(), 'vidq-mcp-'));
/** A: the test server's user (unlimited); B: another user; broke: no credits. */
const users = { b: { token: '', userId: '' }, broke: { token: '' } };
const ids = { index: '', file: '', bIndex: '', bFile: '' };
// The SDK lists schemas as JSON Schema draft-07 (ajv's default draft).
const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);

const waitReady = (token: string, index: string) => waitIndexReady(srv, index, { token, intervalMs: 300 });

beforeAll(async () => {
  origin = startOrigin();
  subs = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response(VTT) });
  srv = await startTestServer({ 'analysis-workers': '1', analyzers: 'visual,subtitles' });
  const accounts = srv.server.service.accounts;
  const b = await accounts.createUser('b', null);
  users.b = { token: b.token, userId: b.user.id };
  users.broke = { token: (await accounts.createUser('broke', 0)).token };
  const up = await postJson(srv.url, '/remote-upload', {
    token: srv.token,
    index: 'home',
    url: `${origin.url}/media/countdown-living-room.mp4`,
    subtitles_url: `http://127.0.0.1:${subs.port}/countdown.vtt`,
  });
  expect(up.status).toBe(200);
  ids.file = up.body.data.key;
  const upB = await postJson(srv.url, '/remote-upload', {
    token: users.b.token,
    index: 'b-private',
    url: `${origin.url}/media/chaplin-bw.mp4`,
  });
  ids.bFile = upB.body.data.key;
  await waitReady(srv.token, 'home');
  await waitReady(users.b.token, 'b-private');
  ids.index = (await getJson(srv.url, `/indexes?token=${srv.token}`)).body[0].index_id;
  ids.bIndex = (await getJson(srv.url, `/indexes?token=${users.b.token}`)).body[0].index_id;
  copyFileSync(clip('chaplin-bw.mp4'), join(dir, 'chaplin local.mp4'));
}, 180_000);

afterAll(async () => {
  await srv?.stop();
  origin?.stop();
  subs?.stop(true);
  rmSync(dir, { recursive: true, force: true });
});

// ---------------------------------------------------------------- clients

type Kind = 'http' | 'stdio';

function transportFor(kind: Kind, token: string) {
  if (kind === 'http')
    return new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    });
  return new StdioClientTransport({
    command: process.execPath,
    args: [join(import.meta.dir, '../src/main.ts'), 'mcp', '--server', srv.url, '--token', token],
    env: { PATH: process.env.PATH ?? '', HOME: dir },
    stderr: 'pipe',
  });
}

/** What each stdio child wrote to stderr, to say why one closed the connection. */
const childErrors = new WeakMap<Client, () => string>();

async function connect(kind: Kind, token: string): Promise<Client> {
  const client = new Client({ name: 'vidq-test', version: '1.0.0' });
  const transport = transportFor(kind, token);
  let stderr = '';
  if (transport instanceof StdioClientTransport)
    transport.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
  childErrors.set(client, () => stderr);
  try {
    await client.connect(transport);
  } catch (e) {
    throw new Error(`${(e as Error).message}; the child's stderr: ${stderr || '(empty)'}`);
  }
  return client;
}

/** Calls a tool; a success's structured result must match the tool's declared output schema. */
async function call(client: Client, tools: Tool[], name: string, args: Record<string, unknown>) {
  const res = (await client.callTool({ name, arguments: args })) as CallToolResult;
  if (!res.isError) {
    const tool = tools.find((t) => t.name === name)!;
    const check = ajv.compile(tool.outputSchema as object);
    if (!check(res.structuredContent))
      throw new Error(`${name}: ${ajv.errorsText(check.errors)}\n${JSON.stringify(res.structuredContent)}`);
    // The same object as text, for clients that read only text.
    expect(JSON.parse((res.content[0] as { text: string }).text)).toEqual(res.structuredContent as object);
  }
  return { res, out: res.structuredContent as any, images: res.content.filter((c) => c.type === 'image') as any[] };
}

const errorText = (res: CallToolResult) => {
  expect(res.isError).toBe(true);
  return (res.content[0] as { text: string }).text;
};

/** The JPEG magic number, from base64 image content. */
const isJpeg = (img: { data: string; mimeType: string }) =>
  img.mimeType === 'image/jpeg' &&
  Buffer.from(img.data, 'base64')
    .subarray(0, 3)
    .equals(Buffer.from([0xff, 0xd8, 0xff]));

// ---------------------------------------------------------------- both transports

describe.each(['http', 'stdio'] as const)('MCP over %s', (kind) => {
  let a: Client;
  let tools: Tool[];
  beforeAll(async () => {
    a = await connect(kind, srv.token);
    try {
      tools = (await a.listTools()).tools;
    } catch (e) {
      throw new Error(`${(e as Error).message}; the child's stderr: ${childErrors.get(a)?.() || '(none)'}`);
    }
  }, 30_000);
  afterAll(async () => {
    await a?.close();
  });

  test('lists the ten tools, each described, with JSON-schema input and output', () => {
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS);
    for (const t of tools) {
      expect(t.description!.length).toBeGreaterThan(60);
      expect(t.inputSchema.type).toBe('object');
      expect(t.outputSchema?.type).toBe('object');
      expect(ajv.validateSchema(t.outputSchema as object)).toBe(true);
    }
    // A local file is read only by the stdio server, on the machine it runs on.
    const add = tools.find((t) => t.name === 'add_video')!;
    expect(Object.keys(add.inputSchema.properties ?? {}).includes('path')).toBe(kind === 'stdio');
  });

  test("list_indexes and list_videos: the user's own, with status, paged", async () => {
    const { out } = await call(a, tools, 'list_indexes', {});
    // Other tests of this file add indexes; B's is never among them.
    expect(out.indexes.map((i: any) => i.name)).toContain('home');
    expect(out.indexes.map((i: any) => i.index_id)).not.toContain(ids.bIndex);
    expect(out).toMatchObject({ total: out.indexes.length, offset: 0, next_offset: null });
    const v = await call(a, tools, 'list_videos', { index: 'home' });
    expect(v.out.index_id).toBe(ids.index);
    expect(v.out.videos).toEqual([
      expect.objectContaining({
        file_id: ids.file,
        file_name: 'countdown-living-room.mp4',
        status: 'ready',
        progress: 100,
      }),
    ]);
    expect((await call(a, tools, 'list_videos', { index: ids.index, status: 'failed' })).out.videos).toEqual([]);
    const first = await call(a, tools, 'list_indexes', { limit: 1 });
    expect(first.out.indexes).toHaveLength(1);
    expect(first.out.next_offset).toBe(out.total > 1 ? 1 : null);
    // The API's own message for an unknown index.
    const http = await getJson(srv.url, '/index-resources?index=nowhere', { authorization: `Bearer ${srv.token}` });
    expect(http.status).toBe(404);
    expect(errorText((await call(a, tools, 'list_videos', { index: 'nowhere' })).res)).toBe(http.body.message);
  });

  test('get_video_status: stage, progress; unknown file is a tool error', async () => {
    const { out } = await call(a, tools, 'get_video_status', { index: 'home', file_id: ids.file });
    expect(out).toMatchObject({ index_id: ids.index, file_id: ids.file, status: 'ready', progress: 100, error: null });
    expect(out.duration_sec).toBeCloseTo(6.1, 0);
    const bad = await call(a, tools, 'get_video_status', { index: 'home', file_id: 'x'.repeat(32) });
    expect(errorText(bad.res)).toBe(`video "${'x'.repeat(32)}" is not in this index`);
  });

  test('search_moments: the matching moment with its file, span, kind, text, score, frame link and JPEG', async () => {
    const { out, images } = await call(a, tools, 'search_moments', { index: 'home', query: 'countdown living room' });
    expect(out.credits_used).toBe(0);
    const top = out.moments[0];
    expect(top).toMatchObject({ file_id: ids.file, file_name: 'countdown-living-room.mp4', kind: 'transcript' });
    expect(top.text).toContain('countdown begins');
    expect(top.start).toBeCloseTo(1, 1);
    expect(top.end).toBeCloseTo(3, 1);
    expect(top.frame_url).toStartWith(`${srv.url}/media/${ids.file}/frames/`);
    expect(images.length).toBeGreaterThan(0);
    expect(images.length).toBeLessThanOrEqual(3);
    for (const img of images) expect(isJpeg(img)).toBe(true);
    // Paged, and frames on request only.
    const one = await call(a, tools, 'search_moments', { index: 'home', query: 'countdown', limit: 1, frames: 0 });
    expect(one.out.moments).toHaveLength(1);
    expect(one.images).toEqual([]);
    if (one.out.total > 1) expect(one.out.next_offset).toBe(1);
    // Filters: an unknown kind is refused by the input schema, a kind with nothing finds nothing.
    expect(
      (await call(a, tools, 'search_moments', { index: 'home', query: 'countdown', kinds: ['ocr'] })).out.moments,
    ).toEqual([]);
    expect((await call(a, tools, 'search_moments', { index: 'home', query: 'x', kinds: ['bogus'] })).res.isError).toBe(
      true,
    );
    const http = await getJson(srv.url, `/search?index=home&q=${encodeURIComponent('  ')}`, {
      authorization: `Bearer ${srv.token}`,
    });
    expect(errorText((await call(a, tools, 'search_moments', { index: 'home', query: '  ' })).res)).toBe(
      http.body.message,
    );
  });

  test("ask: an answer with citations and their frames, charged as /inquire; errors are the API's", async () => {
    const { out, images } = await call(a, tools, 'ask', {
      index: 'home',
      question: 'What is said about the countdown?',
      file_id: ids.file,
    });
    expect(out.answer.length).toBeGreaterThan(0);
    expect(out.credits_used).toBe(1);
    expect(out.fields).toBeNull();
    expect(out.citations.length).toBeGreaterThan(0);
    expect(out.citations[0].file_id).toBe(ids.file);
    expect(out.model).toContain('vidq-composer');
    for (const img of images) expect(isJpeg(img)).toBe(true);
    expect(images.length).toBeGreaterThan(0);
    const http = await postJson(
      srv.url,
      '/inquire',
      { index: ids.index, prompt: 'x', target: 'soon' },
      { authorization: `Bearer ${srv.token}` },
    );
    expect(http.status).toBe(400);
    expect(errorText((await call(a, tools, 'ask', { index: 'home', question: 'x', target: 'soon' })).res)).toBe(
      http.body.message,
    );
  });

  test('ask with json: /inquire takes it; `fields`, when the answer is an object, has the keys asked for', async () => {
    const json = { spoken: 'the words said about the countdown', room: 'where it happens' };
    const { out } = await call(a, tools, 'ask', { index: 'home', question: 'What is said?', json, frames: 0 });
    expect(out.credits_used).toBe(1);
    expect(out.answer.length).toBeGreaterThan(0);
    if (out.fields !== null) expect(Object.keys(out.fields).sort()).toEqual(Object.keys(json).sort());
  });

  test('get_transcript: cues with times, paged; a video without one says why', async () => {
    const { out } = await call(a, tools, 'get_transcript', { file_id: ids.file });
    expect(out.cues).toEqual([
      { start: 1, end: 3, text: 'The countdown begins in the living room' },
      { start: 3.5, end: 5.5, text: 'Five four three two one' },
    ]);
    const second = await call(a, tools, 'get_transcript', { file_id: ids.file, offset: 1, limit: 1 });
    expect(second.out).toMatchObject({ total: 2, offset: 1, next_offset: null, cues: [{ start: 3.5 }] });
    const unknown = await call(a, tools, 'get_transcript', { file_id: 'y'.repeat(32) });
    expect(errorText(unknown.res)).toBe('no such video');
  });

  test('describe_video: the ordered account with times, charged as a question', async () => {
    const { out, images } = await call(a, tools, 'describe_video', { index: 'home', file_id: ids.file });
    expect(out).toMatchObject({ index_id: ids.index, file_id: ids.file, credits_used: 1 });
    expect(out.account.length).toBeGreaterThan(0);
    expect(out.moments.length).toBeGreaterThan(0);
    const starts = out.moments.map((m: any) => m.start);
    expect(starts).toEqual([...starts].sort((x: number, y: number) => x - y));
    expect(images.length).toBeLessThanOrEqual(4);
  });

  test('list_people: a page (empty: the faces analyzer is off)', async () => {
    const { out } = await call(a, tools, 'list_people', { index: 'home' });
    expect(out).toEqual({ index_id: ids.index, people: [], total: 0, offset: 0, limit: 50, next_offset: null });
  });

  test('add_video returns at once with the file id; status follows it to ready; remove_video removes it', async () => {
    const args =
      kind === 'stdio'
        ? { index: `added-${kind}`, path: join(dir, 'chaplin local.mp4') }
        : { index: `added-${kind}`, url: `${origin.url}/media/chaplin-bw.mp4` };
    const added = await call(a, tools, 'add_video', args);
    expect(added.out.file_id).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(added.out.next).toContain('get_video_status');
    let status: any;
    for (let i = 0; i < 300; i++) {
      status = (await call(a, tools, 'get_video_status', { index: `added-${kind}`, file_id: added.out.file_id })).out;
      if (status.status === 'ready' || status.status === 'failed') break;
      expect(['downloading', 'processing']).toContain(status.status);
      await Bun.sleep(300);
    }
    expect(status.status).toBe('ready');
    expect(status.file_name).toBe(kind === 'stdio' ? 'chaplin local.mp4' : 'chaplin-bw.mp4');
    const removed = await call(a, tools, 'remove_video', { index: `added-${kind}`, file_id: added.out.file_id });
    expect(removed.out).toEqual({ index_id: added.out.index_id, file_id: added.out.file_id, removed: true });
    const again = await call(a, tools, 'remove_video', { index: `added-${kind}`, file_id: added.out.file_id });
    const http = await postJson(
      srv.url,
      '/remove-from-index',
      { project_id: added.out.index_id, video_id: added.out.file_id },
      { authorization: `Bearer ${srv.token}` },
    );
    expect(http.status).toBe(404);
    expect(errorText(again.res)).toBe(http.body.message);
  }, 90_000);

  test("add_video: refusals are the API's; a fetch that fails later shows as failed with its reason", async () => {
    const http = await postJson(
      srv.url,
      '/remote-upload',
      { index: 'home', url: 'ftp://example.com/a.mp4' },
      { authorization: `Bearer ${srv.token}` },
    );
    expect(http.status).toBe(400);
    expect(errorText((await call(a, tools, 'add_video', { index: 'home', url: 'ftp://example.com/a.mp4' })).res)).toBe(
      http.body.message,
    );
    expect(errorText((await call(a, tools, 'add_video', { index: 'home' })).res)).toContain('url');
    // An HTML page: admitted at once, refused once its bytes arrive (the row is gone then).
    const added = await call(a, tools, 'add_video', { index: 'home', url: `${origin.url}/html` });
    let status: any;
    for (let i = 0; i < 100; i++) {
      status = (await call(a, tools, 'get_video_status', { index: 'home', file_id: added.out.file_id })).out;
      if (status.status === 'failed') break;
      await Bun.sleep(200);
    }
    expect(status.status).toBe('failed');
    expect(status.error.length).toBeGreaterThan(10);
  }, 30_000);

  test("isolation: B's token cannot list, search, ask about, describe or remove A's videos", async () => {
    const b = await connect(kind, users.b.token);
    try {
      const bTools = (await b.listTools()).tools;
      const listed = await call(b, bTools, 'list_indexes', {});
      expect(listed.out.indexes.map((i: any) => i.index_id)).toEqual([ids.bIndex]);
      const notFound = `index "${ids.index}" was not found`;
      for (const [name, args] of [
        ['list_videos', { index: ids.index }],
        ['search_moments', { index: ids.index, query: 'countdown' }],
        ['ask', { index: ids.index, question: 'what is said?' }],
        ['describe_video', { index: ids.index, file_id: ids.file }],
        ['get_video_status', { index: ids.index, file_id: ids.file }],
        ['remove_video', { index: ids.index, file_id: ids.file }],
        ['list_people', { index: ids.index }],
      ] as const)
        expect(errorText((await call(b, bTools, name, args)).res), name).toBe(notFound);
      // A's video named inside B's own index is not there either.
      expect(errorText((await call(b, bTools, 'remove_video', { index: ids.bIndex, file_id: ids.file })).res)).toBe(
        `video "${ids.file}" is not in this index`,
      );
      expect(
        errorText((await call(b, bTools, 'ask', { index: ids.bIndex, question: 'what?', file_id: ids.file })).res),
      ).toBe(`target_video "${ids.file}" is not in this index`);
      expect(errorText((await call(b, bTools, 'get_transcript', { file_id: ids.file })).res)).toBe('no such video');
      // B's own search works; A's video is still there.
      expect((await call(b, bTools, 'search_moments', { index: 'b-private', query: 'men' })).res.isError).toBeFalsy();
      expect((await call(a, tools, 'list_videos', { index: 'home' })).out.videos.map((v: any) => v.file_id)).toContain(
        ids.file,
      );
    } finally {
      await b.close();
    }
  }, 30_000);

  test("a 0-credit user gets a tool error from ask (the API's message); searching stays free", async () => {
    const broke = await connect(kind, users.broke.token);
    try {
      const bt = (await broke.listTools()).tools;
      // Their own index, made through the API (uploads cost no credits).
      const up = await postJson(
        srv.url,
        '/remote-upload',
        { index: 'mine', url: `${origin.url}/media/countdown-living-room.mp4` },
        { authorization: `Bearer ${users.broke.token}` },
      );
      expect(up.status).toBe(200);
      const r = await call(broke, bt, 'ask', { index: 'mine', question: 'what is on screen?' });
      expect(errorText(r.res)).toBe('insufficient credits: the balance is 0 and a question costs 1');
      expect((await call(broke, bt, 'search_moments', { index: 'mine', query: 'room' })).res.isError).toBeFalsy();
    } finally {
      await broke.close();
    }
  }, 60_000);
});

// ---------------------------------------------------------------- add_video admission

describe('add_video goes through the upload admission (--user-max-downloads 1)', () => {
  let limited: TestServer;
  beforeAll(async () => {
    limited = await startTestServer({ 'user-max-downloads': '1' });
  });
  afterAll(async () => {
    await limited?.stop();
  });

  test.each(['http', 'stdio'] as const)(
    "%s: a second download while one is in flight is the API's 429",
    async (kind) => {
      const saved = srv;
      srv = limited; // the clients connect to the server in `srv`
      const client = await connect(kind, limited.token);
      try {
        const tools = (await client.listTools()).tools;
        // An endless source holds the one download slot.
        const first = await call(client, tools, 'add_video', { index: 'slow', url: `${origin.url}/endless` });
        expect(first.res.isError).toBeFalsy();
        const http = await postJson(
          limited.url,
          '/remote-upload',
          { index: 'slow', url: `${origin.url}/media/chaplin-bw.mp4` },
          { authorization: `Bearer ${limited.token}` },
        );
        expect(http.status).toBe(429);
        const second = await call(client, tools, 'add_video', {
          index: 'slow',
          url: `${origin.url}/media/chaplin-bw.mp4`,
        });
        expect(errorText(second.res)).toBe(http.body.message);
        // Removing the first stops its download and frees the slot.
        await call(client, tools, 'remove_video', { index: 'slow', file_id: first.out.file_id });
      } finally {
        await client.close();
        srv = saved;
      }
    },
    30_000,
  );
});

// ---------------------------------------------------------------- refusals before any tool runs

describe('a bad token is refused before any tool runs', () => {
  test('HTTP: 401 with the error shape; the SDK client cannot connect', async () => {
    const res = await fetch(`${srv.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${'z'.repeat(64)}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'list_indexes', arguments: {} },
      }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain('Bearer');
    expect(((await res.json()) as any).error).toBe(401);
    await expect(connect('http', 'z'.repeat(64))).rejects.toThrow();
    const none = await fetch(`${srv.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{}',
    });
    expect(none.status).toBe(401);
  });

  test('stdio: vidq mcp exits 1 and says the token was refused', async () => {
    const p = Bun.spawn(
      [
        process.execPath,
        join(import.meta.dir, '../src/main.ts'),
        'mcp',
        '--server',
        srv.url,
        '--token',
        'z'.repeat(64),
      ],
      { stdin: 'pipe', stdout: 'pipe', stderr: 'pipe', env: { PATH: process.env.PATH ?? '', HOME: dir } },
    );
    const [out, err, code] = await Promise.all([
      new Response(p.stdout).text(),
      new Response(p.stderr).text(),
      p.exited,
    ]);
    expect(code).toBe(1);
    expect(out).toBe('');
    expect(err).toContain('refused the token');
  });

  test('HTTP: Host and Origin rules; GET is 405; a body that is not JSON is 400', async () => {
    const headers = {
      authorization: `Bearer ${srv.token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    };
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    const cross = await fetch(`${srv.url}/mcp`, {
      method: 'POST',
      headers: { ...headers, origin: 'https://evil.example' },
      body,
    });
    expect(cross.status).toBe(403);
    const same = await fetch(`${srv.url}/mcp`, { method: 'POST', headers: { ...headers, origin: srv.url }, body });
    expect(same.status).toBe(200);
    expect(((await same.json()) as any).result.tools).toHaveLength(10);
    const badHost = await fetch(`${srv.url}/mcp`, { method: 'POST', headers: { ...headers, host: 'a b' }, body });
    expect(badHost.status).toBe(400);
    expect((await fetch(`${srv.url}/mcp`, { headers })).status).toBe(405);
    const text = await fetch(`${srv.url}/mcp`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'text/plain' },
      body,
    });
    expect(text.status).toBe(400);
  });
});
