/**
 * The HTTP contract end to end: the real server on an ephemeral port, a real origin on 127.0.0.1
 * serving the shared clips, real ffprobe, real SQLite.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { statSync } from 'node:fs';
import {
  clip,
  getJson,
  leftovers,
  postJson,
  readEvents,
  startOrigin,
  startRawServer,
  startTestServer,
  type Origin,
  type TestServer,
} from './helpers';

let srv: TestServer;
let origin: Origin;
let bottles: { key: string; indexId: string };

beforeAll(async () => {
  origin = startOrigin();
  srv = await startTestServer({ 'max-download-bytes': String(8 * 1024 * 1024) });
});
afterAll(async () => {
  await srv.stop();
  origin.stop();
});

const upload = (index: string, path: string, token = srv.token) =>
  postJson(srv.url, '/remote-upload', { token, index, url: origin.url + path });

describe('POST /remote-upload', () => {
  test('downloads, probes and stores a clip; answers the spec metadata', async () => {
    const r = await upload('kitchen', '/media/bottles.mp4');
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ type: 'metadata', percentage: 100 });
    expect(typeof r.body.data.fps).toBe('string');
    expect(Number(r.body.data.fps)).toBeCloseTo(29.8, 0);
    expect(r.body.data.duration).toBeCloseTo(39.9, 0);
    // fileSize the hosted product's way (megabytes and " MB"); the byte count beside it.
    const bytes = statSync(clip('bottles.mp4')).size;
    expect(r.body.data.fileSize).toBe(`${(bytes / 1048576).toFixed(2)} MB`);
    expect(r.body.data.file_size_bytes).toBe(bytes);
    expect(r.body.data.key).toMatch(/^[A-Za-z0-9_-]{32}$/);
    const list = await getJson(srv.url, `/indexes?token=${srv.token}`);
    const idx = list.body.find((i: any) => i.name === 'kitchen');
    expect(idx).toMatchObject({ count: 1, deleted: false });
    expect(idx.index_id).toHaveLength(64);
    bottles = { key: r.body.data.key, indexId: idx.index_id };
  });

  test('the same bytes twice in one index return the existing key', async () => {
    const again = await upload('kitchen', '/media/bottles.mp4');
    expect(again.status).toBe(200);
    expect(again.body.data.key).toBe(bottles.key);
    const res = await getJson(srv.url, `/index-resources?token=${srv.token}&index=kitchen`);
    expect(res.body).toHaveLength(1);
  });

  test('accepts the index by its id as well as by its name', async () => {
    const r = await upload(bottles.indexId, '/media/chaplin-bw.mp4');
    expect(r.status).toBe(200);
    const res = await getJson(srv.url, `/index-resources?token=${srv.token}&index=${bottles.indexId}`);
    expect(res.body.map((v: any) => v.file_name).sort()).toEqual(['bottles.mp4', 'chaplin-bw.mp4']);
  });

  test('streams server-sent events by default (no Accept): file_authorized, progress, metadata, progress, complete', async () => {
    const res = await fetch(srv.url + '/remote-upload', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: srv.token, index: 'sse', url: origin.url + '/media/big-buck-bunny-intro.webm' }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const events = await readEvents(res);
    const types = events.map((e) => e.type);
    expect(types[0]).toBe('file_authorized');
    expect(types.slice(-3)).toEqual(['metadata', 'progress', 'complete']);
    expect(types.filter((t) => t === 'progress').length).toBeGreaterThanOrEqual(1);
    const meta = events.find((e) => e.type === 'metadata');
    expect(meta).toMatchObject({ type: 'metadata', percentage: 100, key: events[0].key });
    expect(meta.duration).toBeCloseTo(30, 0);
    for (const p of events.filter((e) => e.type === 'progress')) {
      expect(p.percentage).toBeGreaterThanOrEqual(0);
      expect(p.percentage).toBeLessThanOrEqual(100);
    }
  });

  test('an error after the stream started arrives as an error event, and nothing is kept', async () => {
    const res = await fetch(srv.url + '/remote-upload', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ token: srv.token, index: 'sse-bad', url: origin.url + '/media/jfk-speech.wav' }),
    });
    const events = await readEvents(res);
    expect(events.at(-1)).toMatchObject({ type: 'error', error: 422 });
    const list = await getJson(srv.url, `/indexes?token=${srv.token}`);
    expect(list.body.find((i: any) => i.name === 'sse-bad')).toBeUndefined();
  });

  test('refuses an audio-only file (422) and leaves no file or row behind', async () => {
    const r = await upload('kitchen', '/media/jfk-speech.wav');
    expect(r.status).toBe(422);
    expect(r.body).toEqual({ error: 422, message: expect.stringContaining('no video stream') });
    expect(leftovers(srv.dataDir).tmp).toEqual([]);
    const res = await getJson(srv.url, `/index-resources?token=${srv.token}&index=kitchen`);
    expect(res.body.every((v: any) => v.file_name !== 'jfk-speech.wav')).toBe(true);
  });

  test('refuses a file over the size cap (413) with nothing left on disk', async () => {
    const before = leftovers(srv.dataDir).media.length;
    const r = await upload('caps', '/endless');
    expect(r.status).toBe(413);
    expect(r.body.message).toContain('limit');
    expect(leftovers(srv.dataDir).tmp).toEqual([]);
    expect(leftovers(srv.dataDir).media.length).toBe(before);
    // The index this failed upload would have created does not linger either.
    const list = await getJson(srv.url, `/indexes?token=${srv.token}`);
    expect(list.body.find((i: any) => i.name === 'caps')).toBeUndefined();
  });

  test('an HTML error page is not a video (415)', async () => {
    const r = await upload('kitchen', '/html');
    expect(r.status).toBe(415);
    expect(r.body.error).toBe(415);
  });

  test('the source failing gives 502 with the cause', async () => {
    expect((await upload('kitchen', '/status/500')).body).toEqual({
      error: 502,
      message: expect.stringContaining('HTTP 500'),
    });
    const liar = startRawServer(
      'HTTP/1.1 200 OK\r\nContent-Type: video/mp4\r\nContent-Length: 5000\r\nConnection: close\r\n\r\n',
      new Uint8Array(1000).fill(1),
    );
    try {
      const short = await postJson(srv.url, '/remote-upload', {
        token: srv.token,
        index: 'kitchen',
        url: liar.url + '/clip.mp4',
      });
      expect(short.body).toEqual({
        error: 502,
        message: expect.stringMatching(/closed the connection before the end of the file, after \d+ of 5000 bytes/),
      });
    } finally {
      liar.stop();
    }
    expect((await upload('kitchen', '/loop')).body).toEqual({
      error: 502,
      message: expect.stringContaining('too many redirects'),
    });
    expect((await upload('kitchen', '/empty')).status).toBe(422);
    const dead = await postJson(srv.url, '/remote-upload', {
      token: srv.token,
      index: 'kitchen',
      url: 'http://127.0.0.1:1/x.mp4',
    });
    expect(dead.status).toBe(502);
    expect(leftovers(srv.dataDir).tmp).toEqual([]);
  });

  test('follows up to 5 redirects', async () => {
    const r = await upload('redirects', '/redirect/3');
    expect(r.status).toBe(200);
    expect((await upload('redirects', '/redirect/7')).status).toBe(502);
  });

  test('validates its fields', async () => {
    expect(
      (await postJson(srv.url, '/remote-upload', { token: srv.token, url: origin.url + '/media/bottles.mp4' })).body,
    ).toEqual({ error: 400, message: 'field "index" is required' });
    expect((await postJson(srv.url, '/remote-upload', { token: srv.token, index: 'x' })).body).toEqual({
      error: 400,
      message: 'field "url" is required',
    });
    expect(
      (await postJson(srv.url, '/remote-upload', { token: srv.token, index: 'x', url: 'ftp://h/a.mp4' })).status,
    ).toBe(400);
    expect(
      (await postJson(srv.url, '/remote-upload', { token: srv.token, index: 'x', url: 'http://u:p@h/a.mp4' })).status,
    ).toBe(400);
    expect(
      (
        await postJson(srv.url, '/remote-upload', {
          token: srv.token,
          index: '   ',
          url: origin.url + '/media/bottles.mp4',
        })
      ).status,
    ).toBe(400);
    expect(
      (await postJson(srv.url, '/remote-upload', { index: 'x', url: origin.url + '/media/bottles.mp4' })).status,
    ).toBe(401);
    expect(
      (await postJson(srv.url, '/remote-upload', { token: 'nope', index: 'x', url: origin.url + '/media/bottles.mp4' }))
        .status,
    ).toBe(401);
    const bad = await fetch(srv.url + '/remote-upload', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"token": ',
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: 400, message: expect.any(String) });
  });
});

describe('private addresses', () => {
  test('are refused by default, on the first hop and after a redirect', async () => {
    const strict = await startTestServer({ 'allow-private-urls': false });
    try {
      const direct = await postJson(strict.url, '/remote-upload', {
        token: strict.token,
        index: 'x',
        url: origin.url + '/media/bottles.mp4',
      });
      expect(direct.status).toBe(403);
      expect(direct.body.message).toContain('--allow-private-urls');
      for (const u of [
        'http://localhost:9/a.mp4',
        'http://[::1]:9/a.mp4',
        'http://2130706433/a.mp4',
        'http://169.254.169.254/latest',
        'http://10.0.0.1/a.mp4',
        'http://[::ffff:127.0.0.1]/a.mp4',
      ]) {
        const r = await postJson(strict.url, '/remote-upload', { token: strict.token, index: 'x', url: u });
        expect(r.status).toBe(403);
      }
      expect(leftovers(strict.dataDir)).toEqual({ tmp: [], media: [] });
      expect((await getJson(strict.url, `/indexes?token=${strict.token}`)).body).toEqual([]);
    } finally {
      await strict.stop();
    }
  });
});

describe('GET /indexes and GET /index-resources', () => {
  test('resources carry the spec fields, a status, progress, and a playable src', async () => {
    const res = await getJson(srv.url, `/index-resources?token=${srv.token}&index=kitchen&user_id=${srv.userId}`);
    expect(res.status).toBe(200);
    const v = res.body.find((x: any) => x.file_id === bottles.key);
    expect(v).toMatchObject({
      file_name: 'bottles.mp4',
      status: 'ready',
      file_type: 'video/mp4',
      is_large: false,
      progress: 100,
    });
    expect(typeof v.metadata.fps).toBe('number');
    expect(new Date(v.upload_time).toISOString()).toBe(v.upload_time);
    expect(v.src).toStartWith(`${srv.url}/media/${bottles.key}?expires=`);
  });

  test('src streams the file with Range support', async () => {
    const res = await getJson(srv.url, `/index-resources?token=${srv.token}&index=kitchen`);
    const src = res.body.find((x: any) => x.file_id === bottles.key).src;
    const size = statSync(clip('bottles.mp4')).size;
    const whole = await fetch(src);
    expect(whole.status).toBe(200);
    expect(whole.headers.get('accept-ranges')).toBe('bytes');
    expect((await whole.arrayBuffer()).byteLength).toBe(size);
    const part = await fetch(src, { headers: { range: 'bytes=100-199' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 100-199/${size}`);
    const original = new Uint8Array(await Bun.file(clip('bottles.mp4')).slice(100, 200).arrayBuffer());
    expect(new Uint8Array(await part.arrayBuffer())).toEqual(original);
    const tail = await fetch(src, { headers: { range: 'bytes=-10' } });
    expect(tail.headers.get('content-range')).toBe(`bytes ${size - 10}-${size - 1}/${size}`);
    expect((await fetch(src, { headers: { range: `bytes=${size + 5}-` } })).status).toBe(416);
    // A tampered or missing signature is refused; the token works instead.
    expect((await fetch(src.replace(/sig=(.)/, (_: string, c: string) => `sig=${c === 'X' ? 'Y' : 'X'}`))).status).toBe(
      403,
    ); // always a different character
    expect((await fetch(`${srv.url}/media/${bottles.key}`)).status).toBe(401);
    expect((await fetch(`${srv.url}/media/${bottles.key}?token=${srv.token}`)).status).toBe(200);
    expect(
      (await fetch(`${srv.url}/media/${bottles.key}`, { headers: { authorization: `Bearer ${srv.token}` } })).status,
    ).toBe(200);
  });

  test('expired media links are refused', async () => {
    const path = `/media/${bottles.key}`;
    const old = srv.server.service.links.sign(path, Date.now() - 3 * 86_400_000);
    const r = await fetch(srv.url + old);
    expect(r.status).toBe(403);
    expect(((await r.json()) as { message: string }).message).toContain('expired');
  });

  test('include_deleted only takes true or false; unknown index is 404', async () => {
    expect((await getJson(srv.url, `/indexes?token=${srv.token}&include_deleted=yes`)).body).toEqual({
      error: 400,
      message: 'query parameter "include_deleted" must be "true" or "false"',
    });
    expect((await getJson(srv.url, `/index-resources?token=${srv.token}&index=nope`)).status).toBe(404);
    expect((await getJson(srv.url, `/index-resources?token=${srv.token}`)).status).toBe(400);
    expect((await getJson(srv.url, `/index-resources?index=kitchen`)).status).toBe(401);
  });

  test('anonymous listing on loopback needs user_id; a token must match it', async () => {
    const anon = await getJson(srv.url, `/indexes?user_id=${srv.userId}`);
    expect(anon.status).toBe(200);
    expect(anon.body.some((i: any) => i.name === 'kitchen')).toBe(true);
    expect((await getJson(srv.url, '/indexes')).status).toBe(400);
    expect((await getJson(srv.url, '/indexes?user_id=u_nobody')).status).toBe(404);
    const other = await srv.server.service.accounts.createUser('other', 5);
    expect((await getJson(srv.url, `/indexes?user_id=${srv.userId}&token=${other.token}`)).status).toBe(403);
  });

  test('anonymous listing can be switched off', async () => {
    const closed = await startTestServer({ 'anonymous-listing': false });
    try {
      expect((await getJson(closed.url, `/indexes?user_id=${closed.userId}`)).status).toBe(401);
      expect((await getJson(closed.url, `/indexes?user_id=${closed.userId}&token=${closed.token}`)).status).toBe(200);
    } finally {
      await closed.stop();
    }
  });
});

describe('deleting and restoring indexes', () => {
  test('a deleted index is hidden, refuses uploads and questions, and comes back on restore', async () => {
    await upload('trash', '/media/chaplin-bw.mp4');
    const id = (await getJson(srv.url, `/indexes?token=${srv.token}`)).body.find(
      (i: any) => i.name === 'trash',
    ).index_id;
    const del = await fetch(`${srv.url}/indexes/${id}?token=${srv.token}`, { method: 'DELETE' });
    expect(del.status).toBe(200);
    expect(((await del.json()) as { deleted: boolean }).deleted).toBe(true);
    expect((await getJson(srv.url, `/indexes?token=${srv.token}`)).body.some((i: any) => i.index_id === id)).toBe(
      false,
    );
    const withDeleted = (await getJson(srv.url, `/indexes?token=${srv.token}&include_deleted=true`)).body.find(
      (i: any) => i.index_id === id,
    );
    expect(withDeleted).toMatchObject({ deleted: true, count: 1 });
    expect((await upload(id, '/media/bottles.mp4')).status).toBe(404);
    expect((await postJson(srv.url, '/inquire', { token: srv.token, index: id, prompt: 'anything?' })).status).toBe(
      404,
    );
    expect((await getJson(srv.url, `/index-resources?token=${srv.token}&index=${id}`)).status).toBe(404);
    const restored = await postJson(srv.url, `/indexes/${id}/restore`, { token: srv.token });
    expect(restored.status).toBe(200);
    expect(restored.body.deleted).toBe(false);
    expect((await postJson(srv.url, '/inquire', { token: srv.token, index: id, prompt: 'anything?' })).status).toBe(
      200,
    );
  });

  test('the purge removes indexes deleted longer than the retention, with their files', async () => {
    await upload('old', '/media/pancake.mkv');
    const idx = (await getJson(srv.url, `/indexes?token=${srv.token}`)).body.find((i: any) => i.name === 'old');
    const key = (await getJson(srv.url, `/index-resources?token=${srv.token}&index=old`)).body[0].file_id;
    expect(leftovers(srv.dataDir).media).toContain(key);
    await fetch(`${srv.url}/indexes/${idx.index_id}?token=${srv.token}`, { method: 'DELETE' });
    const m = srv.server.service.maintenance;
    expect((await m.run(new Date())).purgedIndexes).toBe(0); // within the retention
    expect((await m.run(new Date(Date.now() + 8 * 86_400_000))).purgedIndexes).toBe(1);
    expect(leftovers(srv.dataDir).media).not.toContain(key);
    expect(
      (await getJson(srv.url, `/indexes?token=${srv.token}&include_deleted=true`)).body.some(
        (i: any) => i.index_id === idx.index_id,
      ),
    ).toBe(false);
  });
});

describe('POST /remove-from-index', () => {
  test('removes the file and the row; the listing never shows it again', async () => {
    const r = await upload('removal', '/media/countdown-living-room.mp4');
    const key = r.body.data.key;
    const idx = (await getJson(srv.url, `/indexes?token=${srv.token}`)).body.find((i: any) => i.name === 'removal');
    // warm the listing cache first: removal must invalidate it
    expect((await getJson(srv.url, `/index-resources?token=${srv.token}&index=removal`)).body).toHaveLength(1);
    const rm = await postJson(srv.url, '/remove-from-index', {
      token: srv.token,
      project_id: idx.index_id,
      video_id: key,
    });
    expect(rm).toEqual({ status: 200, body: { status: 'complete' } });
    expect((await getJson(srv.url, `/index-resources?token=${srv.token}&index=removal`)).body).toEqual([]);
    expect(leftovers(srv.dataDir).media).not.toContain(key);
    expect(
      (await getJson(srv.url, `/indexes?token=${srv.token}`)).body.find((i: any) => i.name === 'removal'),
    ).toMatchObject({ count: 0, total_duration: 0 });
    expect((await fetch(`${srv.url}/media/${key}?token=${srv.token}`)).status).toBe(404);
    expect(
      (await postJson(srv.url, '/remove-from-index', { token: srv.token, project_id: idx.index_id, video_id: key }))
        .status,
    ).toBe(404);
    expect(
      (await postJson(srv.url, '/remove-from-index', { token: srv.token, project_id: 'nope', video_id: key })).status,
    ).toBe(404);
    expect((await postJson(srv.url, '/remove-from-index', { token: srv.token, project_id: idx.index_id })).status).toBe(
      400,
    );
  });
});

describe('POST /inquire', () => {
  test('answers with status complete and never invents: it says what it knows', async () => {
    const r = await postJson(srv.url, '/inquire', {
      token: srv.token,
      index: bottles.indexId,
      prompt: 'How many bottles are there?',
    });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('complete');
    // This server runs no analysis: the answer says so and cites nothing.
    expect(r.body.output).toStartWith('I could not find');
    expect(r.body.output).toContain('bottles.mp4');
    expect(r.body.output).toContain('not been analysed');
    expect(r.body.evidence).toEqual([]);
    expect(r.body.model).toContain('composer');
    expect(r.body.credits_used).toBe(1);
  });

  test('narrows to target_video and checks target', async () => {
    const one = await postJson(srv.url, '/inquire', {
      token: srv.token,
      index: bottles.indexId,
      prompt: 'what is here?',
      target_video: bottles.key,
      target: '0:05',
    });
    expect(one.status).toBe(200);
    expect(one.body.output).toContain('bottles.mp4 at 0:05'); // judged at the target moment (series.momentWindow)
    expect(one.body.output).not.toContain('chaplin');
    const bad = await postJson(srv.url, '/inquire', {
      token: srv.token,
      index: bottles.indexId,
      prompt: 'x',
      target: 'yesterday',
    });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain('mm:ss');
    expect(
      (
        await postJson(srv.url, '/inquire', {
          token: srv.token,
          index: bottles.indexId,
          prompt: 'x',
          target_video: bottles.key,
          target: '10:00',
        })
      ).status,
    ).toBe(400);
    expect(
      (
        await postJson(srv.url, '/inquire', {
          token: srv.token,
          index: bottles.indexId,
          prompt: 'x',
          target_video: 'A'.repeat(32),
        })
      ).status,
    ).toBe(404);
  });

  test("applies the spec's minimum lengths (an index may also be named, as everywhere a token comes with it)", async () => {
    expect((await postJson(srv.url, '/inquire', { token: srv.token, index: 'short', prompt: 'x' })).body).toEqual({
      error: 404,
      message: 'index "short" was not found',
    });
    expect((await postJson(srv.url, '/inquire', { token: 'short', index: bottles.indexId, prompt: 'x' })).body).toEqual(
      { error: 400, message: 'field "token" must be at least 60 characters' },
    );
    expect(
      (await postJson(srv.url, '/inquire', { token: srv.token, index: bottles.indexId, prompt: '' })).body,
    ).toEqual({ error: 400, message: 'field "prompt" must be at least 1 characters' });
    expect((await postJson(srv.url, '/inquire', { index: bottles.indexId, prompt: 'x' })).status).toBe(401);
    expect(
      (await postJson(srv.url, '/inquire', { token: 'x'.repeat(64), index: bottles.indexId, prompt: 'x' })).status,
    ).toBe(401);
    expect((await postJson(srv.url, '/inquire', { token: srv.token, index: 'y'.repeat(64), prompt: 'x' })).status).toBe(
      404,
    );
  });

  test('charges credits; concurrent questions never overspend; insufficient credits is 400', async () => {
    const acc = srv.server.service.accounts;
    const { user, token } = await acc.createUser('spender', 7);
    const own = await postJson(srv.url, '/remote-upload', {
      token,
      index: 'mine',
      url: origin.url + '/media/chaplin-bw.mp4',
    });
    expect(own.status).toBe(200);
    const indexId = (await getJson(srv.url, `/indexes?token=${token}`)).body[0].index_id;
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        postJson(srv.url, '/inquire', { token, index: indexId, prompt: 'who is in it?' }),
      ),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(7);
    const refused = results.filter((r) => r.status === 400);
    expect(refused).toHaveLength(13);
    expect(refused[0]!.body.message).toContain('insufficient credits');
    expect((await acc.getUser(user.id))!.credits).toBe(0);
    // A question that fails validation is not charged.
    acc.addCredits(user.id, 1);
    expect((await postJson(srv.url, '/inquire', { token, index: indexId, prompt: 'x', target: 'bad' })).status).toBe(
      400,
    );
    expect((await acc.getUser(user.id))!.credits).toBe(1);
  });
});

describe('two users', () => {
  test("one user never sees or touches the other's indexes, videos or files", async () => {
    const acc = srv.server.service.accounts;
    const eve = await acc.createUser('eve', 10);
    const ids = { index: bottles.indexId, video: bottles.key };
    expect((await getJson(srv.url, `/indexes?token=${eve.token}`)).body).toEqual([]);
    expect((await getJson(srv.url, `/index-resources?token=${eve.token}&index=${ids.index}`)).status).toBe(404);
    expect((await getJson(srv.url, `/index-resources?token=${eve.token}&index=kitchen`)).status).toBe(404);
    expect(
      (await getJson(srv.url, `/index-resources?token=${eve.token}&index=kitchen&user_id=${srv.userId}`)).status,
    ).toBe(403);
    expect((await postJson(srv.url, '/inquire', { token: eve.token, index: ids.index, prompt: 'x' })).status).toBe(404);
    expect(
      (await postJson(srv.url, '/remove-from-index', { token: eve.token, project_id: ids.index, video_id: ids.video }))
        .status,
    ).toBe(404);
    expect((await fetch(`${srv.url}/media/${ids.video}?token=${eve.token}`)).status).toBe(404);
    expect((await fetch(`${srv.url}/indexes/${ids.index}?token=${eve.token}`, { method: 'DELETE' })).status).toBe(404);
    expect((await postJson(srv.url, `/indexes/${ids.index}/restore`, { token: eve.token })).status).toBe(404);
    // Uploading into "kitchen" as eve creates eve's own index of that name.
    const mine = await postJson(srv.url, '/remote-upload', {
      token: eve.token,
      index: 'kitchen',
      url: origin.url + '/media/chaplin-bw.mp4',
    });
    expect(mine.status).toBe(200);
    const eveIdx = (await getJson(srv.url, `/indexes?token=${eve.token}`)).body;
    expect(eveIdx).toHaveLength(1);
    expect(eveIdx[0].index_id).not.toBe(ids.index);
    expect(
      (await getJson(srv.url, `/index-resources?token=${srv.token}&index=kitchen`)).body.some(
        (v: any) => v.file_id === mine.body.data.key,
      ),
    ).toBe(false);
  });
});

describe('API docs', () => {
  test('/openapi.json describes every route; /swagger loads its assets from this server', async () => {
    const doc = await getJson(srv.url, '/openapi.json');
    expect(doc.status).toBe(200);
    expect(doc.body.openapi).toStartWith('3.');
    for (const p of [
      '/remote-upload',
      '/inquire',
      '/remove-from-index',
      '/indexes',
      '/index-resources',
      '/indexes/{index_id}',
      '/indexes/{index_id}/restore',
      '/media/{file_id}',
    ]) {
      expect(Object.keys(doc.body.paths)).toContain(p);
    }
    const inquire = doc.body.paths['/inquire'].post;
    const ref = inquire.requestBody.content['application/json'].schema.$ref as string;
    const schema = doc.body.components.schemas[ref.split('/').pop()!];
    expect(schema.properties.token.minLength).toBe(60);
    expect(schema.properties.project_id).toBeDefined();
    // token may instead come as `Authorization: Bearer` (docs/API.md, "Tokens"); a request with neither is 401
    expect(schema.required).toEqual(['prompt']);
    expect(Object.keys(inquire.responses)).toEqual(expect.arrayContaining(['200', '400', '404']));
    expect(doc.body.info.description).toContain('index_id');
    const page = await fetch(srv.url + '/swagger');
    const html = await page.text();
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(assets.length).toBeGreaterThanOrEqual(2);
    for (const a of assets) {
      const u = new URL(a, srv.url + '/swagger');
      expect(u.origin).toBe(srv.url); // no CDN
      expect((await fetch(u)).status).toBe(200);
    }
  });

  test('unknown routes answer the error shape', async () => {
    expect(await getJson(srv.url, '/nope')).toEqual({ status: 404, body: { error: 404, message: expect.any(String) } });
  });
});

describe('GET /health', () => {
  test('has the cluster block: the embedded database, the job queue, and this server as its one node', async () => {
    const r = await getJson(srv.url, '/health');
    expect(r.status).toBe(200);
    const { cluster } = r.body;
    expect(cluster.database).toBe('sqlite');
    expect(cluster.queue).toEqual({
      waiting: expect.any(Number),
      active: expect.any(Number),
      failed: expect.any(Number),
    });
    expect(cluster.nodes).toHaveLength(1);
    expect(cluster.nodes[0]).toMatchObject({ id: cluster.node, role: expect.stringMatching(/^(all|api)$/), jobs: 0 });
    expect(Date.now() - Date.parse(cluster.nodes[0].last_seen)).toBeLessThan(30_000);
  });
});
