/**
 * Programs written for the hosted API work against vidq with only the base URL changed (issue 20):
 * every call of ../shared/spec/moonshine-sdk.md made by HostedClient (test/hosted-client.ts, written
 * from that page) against the real server, with real uploads, analysis and questions.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { statSync } from 'node:fs';
import { hashToken, randomId } from '../src/ids';
import { tokens } from '../src/storage/schema';
import { clip, postJson, startOrigin, startTestServer, type Origin, type TestServer } from './helpers';
import { HostedClient, HostedError } from './hosted-client';

let srv: TestServer;
let origin: Origin;
let sdk: HostedClient;
/** Another user, with an index of the same name as one of ours. */
let other: HostedClient;
const keys = { countdown: '', chaplin: '', pancake: '', theirs: '' };

/** A token of the length vidq issued before (64), stored the way tokens are stored. */
function oldStyleToken(userId: string): string {
  const token = randomId(64);
  srv.server.service.db
    .insert(tokens)
    .values({
      id: `t_${randomId(16)}`,
      userId,
      hash: hashToken(token),
      prefix: token.slice(0, 6),
      createdAt: new Date(),
    })
    .run();
  return token;
}

/** Serves one .vtt file: the chaplin clip's words, so that questions have evidence to cite. */
let subs: ReturnType<typeof Bun.serve>;
const SUBTITLES = 'WEBVTT\n\n00:00:01.000 --> 00:00:04.000\nThe red umbrella stays by the stone gate.\n';

beforeAll(async () => {
  origin = startOrigin();
  subs = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response(SUBTITLES) });
  srv = await startTestServer({ 'analysis-workers': '1', analyzers: 'visual,subtitles' });
  sdk = new HostedClient(srv.url, srv.token, `${srv.url}/status`);
  const bob = await srv.server.service.accounts.createUser('bob', null);
  other = new HostedClient(srv.url, bob.token, `${srv.url}/status`);
}, 60_000);
afterAll(async () => {
  await srv?.stop();
  origin?.stop();
  subs?.stop(true);
});

describe('identity and account calls', () => {
  test('new tokens are 60 characters; check-token says valid, and false for an unknown or revoked token', async () => {
    expect(srv.token).toHaveLength(60);
    expect(await sdk.checkToken()).toBe(true);
    expect(await new HostedClient(srv.url, randomId(60), '').checkToken()).toBe(false);
    const spare = await srv.server.service.accounts.createToken(srv.userId);
    await srv.server.service.accounts.revokeToken(spare);
    expect(await new HostedClient(srv.url, spare, '').checkToken()).toBe(false);
    // Only a missing token is an error (401, as everywhere), as JSON.
    const r = await fetch(`${srv.url}/check-token`);
    expect(r.status).toBe(401);
    expect(await r.json()).toMatchObject({ error: 401, message: expect.stringContaining('token') });
  });

  test('does-group-exist and create-index: the SDK asks, creates, and then sees it', async () => {
    expect(await sdk.exists('home')).toBe(false);
    const made = await sdk.create('home');
    expect(made).toMatchObject({ status: 'success', name: 'home', type: 'standard', created: true });
    expect(made.index_id).toHaveLength(64);
    expect(await sdk.exists('home')).toBe(true);
    expect(await sdk.exists(made.index_id)).toBe(true); // by index_id too
    await expect(sdk.create('home')).rejects.toThrow('index already exists');
    // Another user does not see it, and can have one of the same name.
    expect(await other.exists('home')).toBe(false);
    expect((await other.create('home')).created).toBe(true);
    // Asked twice on the wire: the same index answers, not a second one.
    const again = await fetch(`${srv.url}/create-index?token=${srv.token}&index=home`);
    expect(await again.json()).toMatchObject({ index_id: made.index_id, created: false });
    // A bad token is an error the SDK raises.
    const bad = await postJson(srv.url, '/does-group-exist', { token: randomId(60), index: 'home' });
    expect(bad).toMatchObject({ status: 401, body: { error: 401 } });
  });

  test("create-index type=performance makes a live-frames index; a plain one answers live calls with the SDK's error", async () => {
    const live = await sdk.create('cams', true);
    expect(live).toMatchObject({ type: 'performance', created: true });
    const s = srv.server.service;
    const user = await s.accounts.authenticate(srv.token);
    expect('index' in (await s.indexes.forStreaming(user, 'cams'))).toBe(true);
    expect(await s.indexes.forStreaming(user, 'home')).toEqual({
      error: 'this index is not compatible with streaming',
    });
    expect(await s.indexes.forStreaming(user, 'nowhere')).toEqual({ error: 'index does not exist' });
    // The same name as a plain index is a conflict, not a silent change of type.
    const clash = await fetch(`${srv.url}/create-index?token=${srv.token}&index=home&type=performance`);
    expect(clash.status).toBe(409);
    expect(await clash.json()).toMatchObject({ error: 409 });
    const badType = await fetch(`${srv.url}/create-index?token=${srv.token}&index=x&type=fast`);
    expect(badType.status).toBe(400);
  });

  test('a 64-character token issued before still works: check, index calls, and inside a project_id', async () => {
    const old = new HostedClient(srv.url, oldStyleToken(srv.userId), `${srv.url}/status`);
    expect(old.token).toHaveLength(64);
    expect(await old.checkToken()).toBe(true);
    expect(await old.exists('home')).toBe(true);
    const pre = await old.preUpload(clip('chaplin-bw.mp4'), 'home');
    expect(pre.key).toMatch(/^[A-Za-z0-9_-]{32}$/);
    // /inquire with token(64) + name: a question about an (empty so far) index is answered.
    expect(typeof (await old.inquire('home', 'what happens?'))).toBe('string');
  });
});

describe('URL uploads', () => {
  test('POST /remote-upload streams events by default; the SDK reads key and size and returns when the server closes', async () => {
    const up = await sdk.uploadUrl(`${origin.url}/media/countdown-living-room.mp4`, 'home');
    keys.countdown = up.key;
    const bytes = statSync(clip('countdown-living-room.mp4')).size;
    // fileSize: a number and a three-character unit; the SDK's number is megabytes.
    const meta = up.events.find((e) => e.type === 'metadata');
    expect(meta.fileSize).toMatch(/^\d+\.\d{2} MB$/);
    expect(up.sizeNumber).toBeCloseTo(bytes / 1048576, 2);
    expect(meta.file_size_bytes).toBe(bytes);
    expect(up.large).toBe(false);
    expect(typeof meta.fps).toBe('string');
    expect(meta.duration).toBeCloseTo(6.1, 0);
    // The order on the facts page: file_authorized first; metadata, then progress, then complete.
    const types = up.events.map((e) => e.type);
    expect(types[0]).toBe('file_authorized');
    expect(types.slice(-3)).toEqual(['metadata', 'progress', 'complete']);
    expect(up.events.at(-2).percentage).toBe(100);
    // After the SDK's status poll (averaged to 100) the video is analysed and listed ready.
    const res = await fetch(`${srv.url}/index-resources?token=${srv.token}&index=home`);
    const rows = (await res.json()) as any[];
    expect(rows.find((r) => r.file_id === up.key)?.status).toBe('ready');
  }, 90_000);

  test("clients that ask for application/json get the spec's {data: {...}} with the same fileSize", async () => {
    const r = await postJson(
      srv.url,
      '/remote-upload',
      {
        token: srv.token,
        index: 'home',
        url: `${origin.url}/media/chaplin-bw.mp4`,
        subtitles_url: `http://127.0.0.1:${subs.port}/chaplin.vtt`,
      },
      { accept: 'application/json' },
    );
    expect(r.status).toBe(200);
    const bytes = statSync(clip('chaplin-bw.mp4')).size;
    expect(r.body.data).toMatchObject({
      type: 'metadata',
      fileSize: `${(bytes / 1048576).toFixed(2)} MB`,
      file_size_bytes: bytes,
      percentage: 100,
    });
    keys.chaplin = r.body.data.key;
    await sdk.waitProcessed(keys.chaplin);
  }, 90_000);

  test('a failing source ends the stream with an error event, which the SDK raises; nothing is left behind', async () => {
    const err = await sdk.uploadUrl(`${origin.url}/html`, 'home').catch((e) => e);
    expect(err).toBeInstanceOf(HostedError);
    expect(err.body).toMatchObject({ type: 'error', error: expect.any(Number), message: expect.any(String) });
    // An index that does not exist: the SDK refuses before sending (it asks does-group-exist).
    await expect(sdk.uploadUrl(`${origin.url}/media/bottles.mp4`, 'nowhere')).rejects.toThrow('index does not exist');
  });
});

describe('local files: pre-upload, signed PUT, status', () => {
  test('a local .mkv goes up through the signed URL and is analysed; status is a list the SDK averages', async () => {
    const up = await sdk.uploadFile(clip('pancake.mkv'), 'home', false);
    keys.pancake = up.key;
    expect(new URL(up.url).origin).toBe(srv.url);
    const polls = await sdk.waitProcessed(up.key);
    for (const list of polls) {
      expect(Array.isArray(list)).toBe(true);
      for (const n of list) expect(Number.isInteger(n) && n >= 0 && n <= 100).toBe(true);
    }
    expect(polls.at(-1)).toEqual([100, 100]);
    expect((await fetch(`${srv.url}/compress-status?video=${up.key}`).then((r) => r.json())) as any).toEqual({
      status: 100,
    });
    const rows = (await (await fetch(`${srv.url}/index-resources?token=${srv.token}&index=home`)).json()) as any[];
    expect(rows.find((r) => r.file_id === up.key)).toMatchObject({ file_name: 'pancake.mkv', status: 'ready' });
  }, 90_000);

  test('a signed URL works once: the second PUT is 410 and changes nothing', async () => {
    const pre = await sdk.preUpload(clip('bottles.mp4'), 'home');
    await sdk.put(pre.url, clip('bottles.mp4'));
    const again = await sdk.put(pre.url, clip('bottles.mp4')).catch((e) => e);
    expect(again).toBeInstanceOf(HostedError);
    expect(again.status).toBe(410);
    expect(again.body).toMatchObject({ error: 410, message: expect.stringContaining('used already') });
    await sdk.waitProcessed(pre.key);
  }, 90_000);

  test('an expired URL is 410; an altered one 403; a wrong size 400 and the URL stays usable', async () => {
    const s = srv.server.service;
    const { user, tokenId } = await s.accounts.authenticateToken(srv.token);
    const size = statSync(clip('chaplin-bw.mp4')).size;
    const past = await s.grants.issue(
      user,
      { index: 'home', filename: 'old.mp4', filesize: size, tokenId },
      new Date(Date.now() - 7200_000),
    );
    const expired = await sdk.put(srv.url + past.path, clip('chaplin-bw.mp4')).catch((e) => e);
    expect(expired.status).toBe(410);
    expect(expired.body.message).toContain('expired');

    const pre = await sdk.preUpload(clip('chaplin-bw.mp4'), 'home');
    const u = new URL(pre.url);
    const forged = `${u.origin}${u.pathname}?expires=${Number(u.searchParams.get('expires')) + 3600_000}&token_id=${u.searchParams.get('token_id')}&sig=${u.searchParams.get('sig')}`;
    expect((await sdk.put(forged, clip('chaplin-bw.mp4')).catch((e) => e)).status).toBe(403);
    // Another file than the one announced (another size): refused before it is read.
    expect((await sdk.put(pre.url, clip('countdown-living-room.mp4')).catch((e) => e)).status).toBe(400);
    // The URL itself still works for the announced file (it is the same bytes as a stored video: the same key comes back).
    const ok = await fetch(pre.url, {
      method: 'PUT',
      headers: { 'Content-Type': 'video/mp4' },
      body: Bun.file(clip('chaplin-bw.mp4')),
    });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as any).data.key).toBe(keys.chaplin);
  }, 90_000);

  test('a signed URL dies with the token that asked for it: after revoking, the PUT is 403 and stores nothing', async () => {
    const accounts = srv.server.service.accounts;
    const spare = await accounts.createToken(srv.userId);
    const pre = await postJson(srv.url, '/api-pre-upload', {
      filename: 'late.mp4',
      index: `${spare}revoked-home`,
      filesize: statSync(clip('bottles.mp4')).size,
    });
    expect(pre.status).toBe(200);
    expect(await accounts.revokeToken(spare)).toBe(true);
    const put = await fetch(pre.body.url, {
      method: 'PUT',
      headers: { 'Content-Type': 'video/mp4' },
      body: Bun.file(clip('bottles.mp4')),
    });
    expect(put.status).toBe(403);
    expect(await put.json()).toMatchObject({ error: 403, message: expect.stringContaining('revoked') });
    // Nothing was stored: no video under the URL's key, no index made for it.
    expect((await fetch(`${srv.url}/status?file_id=${pre.body.key}`)).status).toBe(404);
    expect(await sdk.exists('revoked-home')).toBe(false);
  });

  test('unused signed URLs are capped per user at --user-max-queued (429), other users unaffected', async () => {
    const s = srv.server.service;
    const cap = s.config.userMaxQueued;
    expect(cap).toBeGreaterThan(0);
    const carol = await s.accounts.createUser('carol', null);
    const ask = (token: string) =>
      postJson(srv.url, '/api-pre-upload', { filename: 'a.mp4', index: `${token}grants`, filesize: 1000 });
    const answers = await Promise.all(Array.from({ length: cap + 5 }, () => ask(carol.token)));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((x) => x === 200)).toHaveLength(cap);
    expect(statuses.filter((x) => x === 429)).toHaveLength(5);
    expect(answers.find((a) => a.status === 429)!.body).toMatchObject({
      error: 429,
      message: expect.stringContaining('--user-max-queued'),
    });
    // The cap is per user: another user still gets a URL.
    expect((await ask((await s.accounts.createUser('dave', null)).token)).status).toBe(200);
  });

  test('pre-upload errors the SDK raises: 400 and 401 as JSON', async () => {
    const bad = await postJson(srv.url, '/api-pre-upload', {
      filename: 'a.mp4',
      index: `${srv.token}home`,
      duration: 1,
      fps: 30,
      filesize: -5,
      content: 'video/mp4',
    });
    expect(bad).toMatchObject({ status: 400, body: { error: 400, message: expect.stringContaining('filesize') } });
    const noToken = await postJson(srv.url, '/api-pre-upload', {
      filename: 'a.mp4',
      index: `${randomId(60)}home`,
      filesize: 10,
    });
    expect(noToken).toMatchObject({ status: 401, body: { error: 401 } });
    const unknown = await fetch(`${srv.url}/status?file_id=${randomId(32)}`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: 404 });
  });
});

describe('inquire with project_id', () => {
  test('plain, with a numeric target, with target_video, and with subindex', async () => {
    const plain = await sdk.inquire('home', 'What is on screen?');
    expect(plain.length).toBeGreaterThan(0);
    expect(
      typeof (await sdk.inquire('home', 'What is on screen?', { target: 2.5, target_video: keys.countdown })),
    ).toBe('string');
    // subindex limits the videos considered: the chaplin clip's words are found with it in the
    // list, and not with only the other videos in it.
    const ask = (subindex: string[]) =>
      postJson(srv.url, '/inquire', { project_id: `${srv.token}home`, prompt: 'What does the speaker say?', subindex });
    const within = await ask([keys.chaplin, keys.pancake]);
    expect(within.status).toBe(200);
    expect(within.body.evidence.length).toBeGreaterThan(0);
    for (const e of within.body.evidence) expect([keys.chaplin, keys.pancake]).toContain(e.video_id);
    expect(within.body.evidence.some((e: any) => e.video_id === keys.chaplin)).toBe(true);
    const without = await ask([keys.countdown, keys.pancake]);
    expect(without.status).toBe(200);
    expect(without.body.evidence.some((e: any) => e.video_id === keys.chaplin)).toBe(false);
    expect(await sdk.inquire('home', 'What does the speaker say?', { subindex: [keys.chaplin] })).toContain('0:0');
    // By the spec's fields too, with the index by name.
    const spec = await postJson(srv.url, '/inquire', { token: srv.token, index: 'home', prompt: 'What is on screen?' });
    expect(spec.status).toBe(200);
  }, 60_000);

  test('json: an object or a JSON-encoded object is taken; anything else is a 400', async () => {
    const ask = (json: unknown) =>
      postJson(srv.url, '/inquire', { project_id: `${srv.token}home`, prompt: 'What is on screen?', json });
    expect((await ask(JSON.stringify({ subject: 'what the video shows' }))).status).toBe(200);
    expect((await ask({ subject: 'what the video shows' })).status).toBe(200);
    expect((await ask('not json')).body).toMatchObject({ error: 400, message: expect.stringContaining('"json"') });
    expect((await ask('[1,2]')).status).toBe(400);
  });

  test("errors the SDK raises: unknown or other users' ids in subindex, another user's index, a bad target", async () => {
    const theirs = await other.uploadUrl(`${origin.url}/media/bottles.mp4`, 'home', false);
    keys.theirs = theirs.key;
    for (const subindex of [[randomId(32)], [keys.countdown, theirs.key]]) {
      const err = await sdk.inquire('home', 'What is on screen?', { subindex }).catch((e) => e);
      expect(err.status).toBe(404);
      expect(err.body).toMatchObject({ error: 404, message: expect.stringContaining('subindex') });
      expect(JSON.stringify(err.body)).not.toContain('bottles');
    }
    // A name only another user has: 404, the same as a name nobody has.
    const lonely = await other.create('bobs-only');
    expect(lonely.created).toBe(true);
    const notMine = await sdk.inquire('bobs-only', 'What is on screen?').catch((e) => e);
    const nobody = await sdk.inquire('nobody-has-this', 'What is on screen?').catch((e) => e);
    expect(notMine.status).toBe(404);
    expect(nobody.status).toBe(404);
    expect(notMine.body.message.replace('bobs-only', 'X')).toBe(nobody.body.message.replace('nobody-has-this', 'X'));
    expect((await sdk.inquire('home', 'x', { target: -3 }).catch((e) => e)).status).toBe(400);
    expect((await sdk.inquire('home', 'x', { subindex: [] as string[] }).catch((e) => e)).status).toBe(400);
  }, 60_000);

  test('/inquire-stream with project_id emits chunk events whose text is the answer', async () => {
    const { text, events } = await sdk.inquireStream('home', 'What is on screen?');
    const complete = events.find((e) => e.type === 'complete');
    expect(events.some((e) => e.type === 'chunk')).toBe(true);
    expect(text).toBe(complete.output);
    // Our own events are there beside them.
    expect(events.map((e) => e.type)).toContain('token');
  });
});

describe('remove-from-index with the bare index name', () => {
  test("removes our video; another user's index name or video is the 404 the SDK shows", async () => {
    const err = await sdk.remove('home', keys.theirs).catch((e) => e);
    expect(err.status).toBe(404);
    expect(err.body).toMatchObject({ error: 404, message: expect.any(String) });
    expect((await other.remove('bobs-only', keys.countdown).catch((e) => e)).status).toBe(404);
    expect(await sdk.remove('home', keys.countdown)).toEqual({ status: 'complete' });
    expect((await fetch(`${srv.url}/status?file_id=${keys.countdown}`)).status).toBe(404);
    // Bob's video is untouched.
    expect((await fetch(`${srv.url}/status?file_id=${keys.theirs}`)).status).toBe(200);
  });
});
