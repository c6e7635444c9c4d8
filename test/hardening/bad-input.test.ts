/**
 * Bad input, table-driven: every case is a request that must be refused with the right status,
 * the spec's error body `{error: <status>, message}`, a message that says what to fix, and no
 * trace: no new row in any table and no new file in the data directory (media/ and tmp/ included).
 *
 * Real servers on 127.0.0.1, real ffmpeg/ffprobe. Two servers: `srv` lets the downloader reach
 * 127.0.0.1 (so the local origin can serve bad files), `strict` is the default policy (private
 * addresses refused) for the URL cases. Everything runs twice (issue 33): on the SQLite file, and
 * on PostgreSQL with a fresh database per server (the PostgreSQL pass adds about 2 s).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { downloadToFile } from '../../src/ingest/download';
import { getJson, postJson, startTestServer, type TestServer } from '../helpers';
import {
  closeSnapshotReaders,
  makeFixtures,
  mediaAndTmp,
  snapshot,
  startFixtureOrigin,
  type FixtureOrigin,
  type Fixtures,
} from './fixtures';
import { dropDatabases, SERVER_DIALECTS, type ServerDialect } from './proc';

const MAX_BODY = 64 * 1024;

let srv: TestServer;
let strict: TestServer;
let fx: Fixtures;
let origin: FixtureOrigin;
/** User A's live index (by id and name) with one video; a video removed from it; a deleted index. */
const seed = {
  indexId: '',
  indexName: 'seeded',
  key: '',
  removedKey: '',
  deletedIndexId: '',
  deletedKey: '',
  deletedSrc: '',
  eveToken: '',
  eveIndexId: '',
  eveKey: '',
  brokeToken: '',
  brokeIndexId: '',
  clashOldId: '',
  strictIndexId: '',
  /** Signed upload URLs (POST /api-pre-upload) for chaplin-bw.mp4's size: one live, one expired. */
  putPath: '',
  expiredPutPath: '',
  putSize: 0,
};

beforeAll(async () => {
  fx = await makeFixtures();
  origin = startFixtureOrigin(fx);
});

afterAll(async () => {
  origin?.stop();
  fx?.remove();
});

/** The two servers and the seeded rows, on `dialect`'s catalog (a fresh database each on PostgreSQL). */
async function setup(dialect: ServerDialect): Promise<void> {
  const on = async (): Promise<Record<string, string>> => {
    const database = await dialect.catalog();
    return database ? { database } : {};
  };
  [srv, strict] = await Promise.all([
    on().then((db) => startTestServer({ 'max-body-bytes': String(MAX_BODY), ...db })),
    on().then((db) => startTestServer({ 'allow-private-urls': false, ...db })),
  ]);
  const up = async (token: string, index: string, clipName: string) => {
    const r = await postJson(srv.url, '/remote-upload', { token, index, url: `${origin.url}/media/${clipName}` });
    if (r.status !== 200) throw new Error(`seed upload failed: ${JSON.stringify(r.body)}`);
    return r.body.data.key as string;
  };
  const indexId = async (token: string, name: string) =>
    (await getJson(srv.url, `/indexes?token=${token}&include_deleted=true`)).body.find((i: any) => i.name === name)
      .index_id as string;
  seed.key = await up(srv.token, 'seeded', 'chaplin-bw.mp4');
  seed.indexId = await indexId(srv.token, 'seeded');
  seed.removedKey = await up(srv.token, 'seeded', 'countdown-living-room.mp4');
  expect(
    (
      await postJson(srv.url, '/remove-from-index', {
        token: srv.token,
        project_id: seed.indexId,
        video_id: seed.removedKey,
      })
    ).status,
  ).toBe(200);
  seed.deletedKey = await up(srv.token, 'gone', 'countdown-living-room.mp4');
  seed.deletedIndexId = await indexId(srv.token, 'gone');
  const src = new URL((await getJson(srv.url, `/index-resources?token=${srv.token}&index=gone`)).body[0].src);
  seed.deletedSrc = src.pathname + src.search;
  expect(
    (await fetch(`${srv.url}/indexes/${seed.deletedIndexId}?token=${srv.token}`, { method: 'DELETE' })).status,
  ).toBe(200);
  const eve = await srv.server.service.accounts.createUser('eve', 5);
  seed.eveToken = eve.token;
  seed.eveKey = await up(eve.token, 'eves', 'chaplin-bw.mp4');
  seed.eveIndexId = await indexId(eve.token, 'eves');
  // A user without credits, with an index of their own (uploads are free).
  const broke = await srv.server.service.accounts.createUser('broke', 0);
  seed.brokeToken = broke.token;
  await up(broke.token, 'brokes', 'countdown-living-room.mp4');
  seed.brokeIndexId = await indexId(broke.token, 'brokes');
  // A deleted index whose name a live index has taken since.
  await up(srv.token, 'clash', 'countdown-living-room.mp4');
  seed.clashOldId = await indexId(srv.token, 'clash');
  expect((await fetch(`${srv.url}/indexes/${seed.clashOldId}?token=${srv.token}`, { method: 'DELETE' })).status).toBe(
    200,
  );
  await up(srv.token, 'clash', 'countdown-living-room.mp4');
  // Signed upload URLs: one live, one that expired an hour ago.
  {
    const s = srv.server.service;
    const { user, tokenId } = await s.accounts.authenticateToken(srv.token);
    seed.putSize = Bun.file(join(fx.dir, 'notes.mp4')).size;
    seed.putPath = (
      await s.grants.issue(user, { index: 'seeded', filename: 'a.mp4', filesize: seed.putSize, tokenId })
    ).path;
    seed.expiredPutPath = (
      await s.grants.issue(
        user,
        { index: 'seeded', filename: 'a.mp4', filesize: seed.putSize, tokenId },
        new Date(Date.now() - 2 * 3600_000),
      )
    ).path;
  }
  // An index on the strict server (for its webhook URL policy).
  seed.strictIndexId = (
    await strict.server.service.indexes.findOrCreateByName(
      strict.server.service.catalog,
      (await strict.server.service.accounts.getUser(strict.userId))!,
      'strict-seed',
    )
  ).index.id;
}

async function teardown(): Promise<void> {
  await Promise.all([srv?.stop(), strict?.stop()]);
  await closeSnapshotReaders();
  await dropDatabases();
}

type Send = (base: string) => Promise<Response>;

interface Case {
  name: string;
  /** Which server answers (default: srv). */
  on?: 'strict';
  send: Send;
  status: number;
  /** Part of the message that tells the caller what to fix. */
  says: string | RegExp;
}

const json =
  (path: string, body: unknown, headers: Record<string, string> = {}): Send =>
  (base) =>
    fetch(base + path, {
      method: 'POST',
      // JSON asked for: /remote-upload answers with events unless it is.
      headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
const raw =
  (path: string, body: string, contentType: string): Send =>
  (base) =>
    fetch(base + path, { method: 'POST', headers: { 'content-type': contentType }, body });
const get =
  (path: () => string): Send =>
  (base) =>
    fetch(base + path());
const del =
  (path: () => string): Send =>
  (base) =>
    fetch(base + path(), { method: 'DELETE' });
/** A body built when the case runs (tokens and ids exist only after beforeAll). */
const lazy =
  (path: string, body: () => Record<string, unknown>): Send =>
  (base) =>
    json(path, body())(base);

const A = () => srv.token;
const inquire = (fields: Record<string, unknown>) =>
  lazy('/inquire', () => ({ token: A(), index: seed.indexId, prompt: 'what is here?', ...fields }));
const upload = (fields: Record<string, unknown>, tokenOf: () => string = A) =>
  lazy('/remote-upload', () => ({
    token: tokenOf(),
    index: 'fresh',
    url: `${origin.url}/media/chaplin-bw.mp4`,
    ...fields,
  }));
const strictUpload = (url: string) => lazy('/remote-upload', () => ({ token: strict.token, index: 'fresh', url }));

const putJson =
  (path: () => string, body: () => Record<string, unknown>): Send =>
  (base) =>
    fetch(base + path(), {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body()),
    });
/** An index of the strict server's user (for the webhook URL policy). */
const strictIndex = () => seed.strictIndexId;

/** POST /upload with a body built when the case runs (Bearer token unless `token` is ''). */
const fileUpload =
  (query: () => string, body: () => Blob | FormData | string, contentType = 'video/mp4', token?: string): Send =>
  (base) => {
    const b = body();
    const headers: Record<string, string> = {};
    if ((token ?? A()) !== '') headers.authorization = `Bearer ${token ?? A()}`;
    if (!(b instanceof FormData)) headers['content-type'] = contentType;
    return fetch(`${base}/upload?${query()}`, { method: 'POST', headers, body: b });
  };
const form = (file: Blob | null) => {
  const f = new FormData();
  f.append('note', 'hello');
  if (file) f.append('file', file, 'clip.mp4');
  return f;
};

const cases: Case[] = [
  // --- malformed bodies
  { name: 'malformed JSON (/inquire)', send: json('/inquire', '{"token": '), status: 400, says: 'not valid JSON' },
  {
    name: 'malformed JSON (/remote-upload)',
    send: json('/remote-upload', "{'token': 'x'}"),
    status: 400,
    says: 'not valid JSON',
  },
  {
    name: 'body is a JSON array',
    send: json('/remove-from-index', '[1, 2]'),
    status: 400,
    says: 'must be a JSON object',
  },
  { name: 'body is JSON null', send: json('/inquire', 'null'), status: 400, says: 'must be a JSON object' },
  {
    name: 'body is a JSON string',
    send: json('/remote-upload', '"hello"'),
    status: 400,
    says: 'must be a JSON object',
  },
  {
    name: 'body sent as text/plain',
    send: raw('/inquire', '{"prompt":"x"}', 'text/plain'),
    status: 400,
    says: 'Content-Type: application/json',
  },
  {
    name: 'body sent as a form',
    send: raw('/remote-upload', 'token=x&index=y&url=z', 'application/x-www-form-urlencoded'),
    status: 400,
    says: 'Content-Type: application/json',
  },
  // One rule for every POST: a JSON body without a Content-Type is refused the same way, before the token is looked at.
  ...['/inquire', '/inquire-stream', '/remote-upload', '/remove-from-index', '/indexes/x/restore'].map(
    (path): Case => ({
      name: `JSON body without a Content-Type (${path})`,
      send: (base) =>
        fetch(base + path, {
          method: 'POST',
          body: new Blob([JSON.stringify({ token: srv.token, index: seed.indexId, prompt: 'x' })]),
        }),
      status: 400,
      says: 'Content-Type: application/json',
    }),
  ),
  { name: 'empty body', send: json('/remote-upload', ''), status: 400, says: 'must be a JSON object' },
  {
    name: 'body over --max-body-bytes (Content-Length)',
    send: lazy('/inquire', () => ({ token: A(), index: seed.indexId, prompt: 'x'.repeat(MAX_BODY + 10) })),
    status: 413,
    says: `limit of ${MAX_BODY} bytes`,
  },
  {
    name: 'body over --max-body-bytes (/remove-from-index)',
    send: json('/remove-from-index', { project_id: 'p'.repeat(MAX_BODY), video_id: 'v' }),
    status: 413,
    says: '--max-body-bytes',
  },

  {
    name: 'JSON nested 20000 levels deep',
    send: (base) =>
      json(
        '/inquire',
        `{"token":"${A()}","index":"${seed.indexId}","prompt":${'['.repeat(20000)}${']'.repeat(20000)}}`,
      )(base),
    status: 400,
    says: 'nests deeper than 16 levels',
  },
  {
    name: 'a token under "__proto__" does not authenticate',
    send: (base) => json('/inquire', `{"__proto__":{"token":"${A()}"},"index":"${seed.indexId}","prompt":"x"}`)(base),
    status: 400,
    says: '"__proto__"',
  },
  {
    name: 'a "__proto__" key nested in a field',
    send: (base) => json('/remote-upload', `{"token":"${A()}","index":"fresh","url":{"__proto__":{"href":"x"}}}`)(base),
    status: 400,
    says: '"__proto__"',
  },
  {
    name: 'a token under "constructor.prototype" does not authenticate',
    send: (base) =>
      json('/inquire', `{"constructor":{"prototype":{"token":"${A()}"}},"index":"${seed.indexId}","prompt":"x"}`)(base),
    status: 401,
    says: 'token',
  },

  // --- wrong types and missing fields
  { name: 'index is a number', send: inquire({ index: 5 }), status: 400, says: 'field "index" must be a string' },
  {
    name: 'prompt is an array',
    send: inquire({ prompt: ['what'] }),
    status: 400,
    says: 'field "prompt" must be a string',
  },
  { name: 'token is a number', send: inquire({ token: 1234 }), status: 400, says: 'field "token" must be a string' },
  {
    name: 'guidance is an object',
    send: inquire({ guidance: { length: 'short' } }),
    status: 400,
    says: 'field "guidance" must be a string',
  },
  {
    name: 'url is an object',
    send: upload({ url: { href: 'http://x/' } }),
    status: 400,
    says: 'field "url" must be a string',
  },
  {
    name: 'index missing (/remote-upload)',
    send: lazy('/remote-upload', () => ({ token: A(), url: `${origin.url}/media/chaplin-bw.mp4` })),
    status: 400,
    says: 'field "index" is required',
  },
  {
    name: 'url missing',
    send: lazy('/remote-upload', () => ({ token: A(), index: 'fresh' })),
    status: 400,
    says: 'field "url" is required',
  },
  {
    name: 'subtitles_url with a file: scheme',
    send: upload({ subtitles_url: 'file:///etc/passwd.srt' }),
    status: 400,
    says: 'subtitles_url: scheme "file" is not allowed',
  },
  {
    name: 'subtitles_url not a .vtt or .srt',
    send: upload({ subtitles_url: 'http://127.0.0.1/subs.txt' }),
    status: 400,
    says: 'subtitles_url must name a .vtt or .srt file',
  },
  {
    name: 'prompt missing',
    send: lazy('/inquire', () => ({ token: A(), index: seed.indexId })),
    status: 400,
    says: 'field "prompt" is required',
  },
  {
    name: 'video_id missing',
    send: lazy('/remove-from-index', () => ({ token: A(), project_id: seed.indexId })),
    status: 400,
    says: 'field "video_id" is required',
  },
  {
    name: 'video_id empty',
    send: lazy('/remove-from-index', () => ({ token: A(), project_id: seed.indexId, video_id: '' })),
    status: 400,
    says: 'video_id is required',
  },
  {
    name: 'token missing',
    send: lazy('/inquire', () => ({ index: seed.indexId, prompt: 'x' })),
    status: 401,
    says: 'token',
  },

  // --- minimum lengths (spec: token ≥ 60, index ≥ 60, prompt ≥ 1)
  {
    name: 'token of 59 characters',
    send: inquire({ token: 't'.repeat(59) }),
    status: 400,
    says: 'field "token" must be at least 60 characters',
  },
  {
    name: 'token of 60 characters (unknown)',
    send: inquire({ token: 't'.repeat(60) }),
    status: 401,
    says: 'unknown or revoked',
  },
  {
    name: 'token of 61 characters (unknown)',
    send: inquire({ token: 't'.repeat(61) }),
    status: 401,
    says: 'unknown or revoked',
  },
  {
    // Names are taken as well as ids (the hosted API's form), so a short one is looked up.
    name: 'index of 59 characters (unknown name)',
    send: inquire({ index: 'i'.repeat(59) }),
    status: 404,
    says: 'was not found',
  },
  {
    name: 'index of 60 characters (unknown)',
    send: inquire({ index: 'i'.repeat(60) }),
    status: 404,
    says: 'was not found',
  },
  {
    name: 'index of 65 characters (unknown)',
    send: inquire({ index: 'i'.repeat(65) }),
    status: 404,
    says: 'was not found',
  },
  {
    name: 'empty prompt',
    send: inquire({ prompt: '' }),
    status: 400,
    says: 'field "prompt" must be at least 1 characters',
  },
  {
    name: 'prompt over 8000 characters',
    send: inquire({ prompt: 'p'.repeat(8001) }),
    status: 400,
    says: 'field "prompt" must be at most 8000 characters',
  },
  {
    name: 'target_video over 64 characters',
    send: inquire({ target_video: 'v'.repeat(65) }),
    status: 400,
    says: 'field "target_video" must be at most 64 characters',
  },
  {
    name: 'target over 64 characters',
    send: inquire({ target: '1'.repeat(65) }),
    status: 400,
    says: 'field "target" must be at most 64 characters',
  },

  // --- target formats
  { name: 'target "yesterday"', send: inquire({ target: 'yesterday' }), status: 400, says: 'mm:ss' },
  { name: 'target negative', send: inquire({ target: '-5' }), status: 400, says: 'mm:ss' },
  { name: 'target 1:75 (seconds ≥ 60)', send: inquire({ target: '1:75' }), status: 400, says: 'mm:ss' },
  { name: 'target in exponent notation', send: inquire({ target: '1e3' }), status: 400, says: 'mm:ss' },
  {
    name: 'target range ending before it starts',
    send: inquire({ target: '0:20-0:10' }),
    status: 400,
    says: 'before it starts',
  },
  {
    name: 'target past the end of target_video',
    send: () => inquire({ target_video: seed.key, target: '10:00' })(srv.url),
    status: 400,
    says: 'past the end of the video',
  },

  // --- credentials in the wrong form
  {
    name: 'Authorization: Basic instead of Bearer',
    send: (base) =>
      fetch(`${base}/index-resources?index=seeded`, { headers: { authorization: `Basic ${btoa('u:' + A())}` } }),
    status: 401,
    says: 'token',
  },
  {
    name: 'Authorization: Bearer with no token',
    send: (base) => fetch(`${base}/index-resources?index=seeded`, { headers: { authorization: 'Bearer ' } }),
    status: 401,
    says: 'token',
  },
  {
    name: 'a revoked-looking token (64 unknown characters)',
    send: get(() => `/index-resources?index=seeded&token=${'Z'.repeat(64)}`),
    status: 401,
    says: 'unknown or revoked',
  },
  {
    name: 'anonymous listing of an unknown user_id "../../etc"',
    send: get(() => '/indexes?user_id=../../etc'),
    status: 404,
    says: 'does not exist',
  },
  {
    name: 'insufficient credits (nothing charged, nothing recorded)',
    send: () =>
      lazy('/inquire', () => ({ token: seed.brokeToken, index: seed.brokeIndexId, prompt: 'what is here?' }))(srv.url),
    status: 400,
    says: 'insufficient credits',
  },
  {
    name: 'restoring an index whose name a live index took',
    send: () => lazy(`/indexes/${seed.clashOldId}/restore`, () => ({ token: A() }))(srv.url),
    status: 400,
    says: 'already named "clash"',
  },

  // --- byte ranges
  {
    name: 'Range "bytes=abc"',
    send: (base) => fetch(`${base}/media/${seed.key}?token=${A()}`, { headers: { range: 'bytes=abc' } }),
    status: 416,
    says: 'not satisfiable',
  },
  {
    name: 'Range past the end of the file',
    send: (base) => fetch(`${base}/media/${seed.key}?token=${A()}`, { headers: { range: 'bytes=99999999-' } }),
    status: 416,
    says: 'not satisfiable',
  },
  {
    name: '/playback: Range past the end of the file',
    send: (base) => fetch(`${base}/media/${seed.key}/playback?token=${A()}`, { headers: { range: 'bytes=99999999-' } }),
    status: 416,
    says: 'not satisfiable',
  },
  {
    name: '/playback: no token or signature',
    send: (base) => fetch(`${base}/media/${seed.key}/playback`),
    status: 401,
    says: 'signed link or a token',
  },
  {
    name: '/playback: forged signature',
    send: (base) => fetch(`${base}/media/${seed.key}/playback?expires=9999999999&sig=AAAA`),
    status: 403,
    says: 'not valid',
  },

  // --- /inquire-stream refuses before its stream starts, as plain JSON errors
  {
    name: '/inquire-stream: malformed JSON',
    send: json('/inquire-stream', '{"prompt": "x",'),
    status: 400,
    says: 'not valid JSON',
  },
  {
    name: '/inquire-stream: bad target',
    send: lazy('/inquire-stream', () => ({ token: A(), index: seed.indexId, prompt: 'x', target: '12:99:99' })),
    status: 400,
    says: 'mm:ss',
  },
  {
    name: '/inquire-stream: body over the limit',
    send: lazy('/inquire-stream', () => ({ token: A(), index: seed.indexId, prompt: 'p'.repeat(MAX_BODY) })),
    status: 413,
    says: '--max-body-bytes',
  },
  {
    name: '/inquire-stream: insufficient credits',
    send: () =>
      lazy('/inquire-stream', () => ({ token: seed.brokeToken, index: seed.brokeIndexId, prompt: 'what is here?' }))(
        srv.url,
      ),
    status: 400,
    says: 'insufficient credits',
  },

  // --- include_deleted takes only true or false
  ...['yes', 'TRUE', '1', ''].map(
    (v): Case => ({
      name: `include_deleted=${JSON.stringify(v)}`,
      send: get(() => `/indexes?token=${A()}&include_deleted=${v}`),
      status: 400,
      says: '"true" or "false"',
    }),
  ),

  // --- index names: control characters, length, the id shape
  { name: 'index name with NUL', send: upload({ index: 'bad\u0000name' }), status: 400, says: 'control characters' },
  { name: 'index name with a newline', send: upload({ index: 'bad\nname' }), status: 400, says: 'control characters' },
  {
    name: 'index name with a C1 control (NEL)',
    send: upload({ index: 'bad\u0085name' }),
    status: 400,
    says: 'control characters',
  },
  {
    name: 'index name with a lone surrogate',
    send: (base) =>
      json(
        '/remote-upload',
        `{"token":"${A()}","index":"bad\\ud800name","url":"${origin.url}/media/chaplin-bw.mp4"}`,
      )(base),
    status: 400,
    says: 'index',
  },
  {
    name: 'index name of 201 characters',
    send: upload({ index: 'n'.repeat(201) }),
    status: 400,
    says: 'longer than 200 characters',
  },
  { name: 'index name of spaces only', send: upload({ index: '   ' }), status: 400, says: 'must not be empty' },
  {
    name: 'unknown id-shaped index name',
    send: upload({ index: 'A'.repeat(64) }),
    status: 404,
    says: 'reserved for index ids',
  },

  // --- path traversal in every string that could reach the disk
  {
    name: 'index "../../etc" (/index-resources)',
    send: get(() => `/index-resources?token=${A()}&index=../../etc`),
    status: 404,
    says: 'was not found',
  },
  {
    name: 'index "../../etc" (/inquire, padded to 60)',
    send: inquire({ index: '../../etc/'.padEnd(60, '.') }),
    status: 404,
    says: 'was not found',
  },
  {
    name: 'project_id "../../etc" (/remove-from-index)',
    send: lazy('/remove-from-index', () => ({ token: A(), project_id: '../../etc', video_id: seed.key })),
    status: 404,
    says: 'was not found',
  },
  {
    name: 'video_id "../../vidq.db"',
    send: lazy('/remove-from-index', () => ({ token: A(), project_id: seed.indexId, video_id: '../../vidq.db' })),
    status: 404,
    says: 'is not in this index',
  },
  {
    name: 'target_video "../../etc/passwd"',
    send: inquire({ target_video: '../../etc/passwd' }),
    status: 404,
    says: 'is not in this index',
  },
  {
    name: '/media/..%2f..%2fetc%2fpasswd (token)',
    send: get(() => `/media/..%2f..%2fetc%2fpasswd?token=${A()}`),
    status: 404,
    says: 'no such file',
  },
  {
    name: '/media/..%2f..%2fetc%2fpasswd (forged signature)',
    send: get(() => `/media/..%2f..%2fetc%2fpasswd?expires=9999999999&sig=AAAA`),
    status: 403,
    says: 'not valid',
  },
  {
    name: '/media/%2e%2e/%2e%2e/vidq.db',
    send: get(() => `/media/%2e%2e/%2e%2e/vidq.db?token=${A()}`),
    status: 404,
    says: 'no such',
  },
  {
    name: 'frame ..%2fsource.mp4 of a real video',
    send: get(() => `/media/${seed.key}/frames/..%2fsource.mp4?token=${A()}`),
    status: 404,
    says: 'no such frame',
  },
  {
    name: 'frame ..%2f..%2f..%2fvidq.db',
    send: get(() => `/media/${seed.key}/frames/..%2f..%2f..%2fvidq.db?token=${A()}`),
    status: 404,
    says: 'no such frame',
  },
  {
    name: '/videos/..%2f..%2fetc/segments',
    send: get(() => `/videos/..%2f..%2fetc/segments?token=${A()}`),
    status: 404,
    says: 'no such video',
  },
  {
    name: 'DELETE /indexes/..%2f..%2fetc',
    send: del(() => `/indexes/..%2f..%2fetc?token=${A()}`),
    status: 404,
    says: 'was not found',
  },

  // --- POST /videos/{file_id}/reanalyze (issue 11; this server runs no analysis worker)
  {
    name: 'reanalyze: analyzers is a string',
    send: (base) => lazy(`/videos/${seed.key}/reanalyze`, () => ({ token: A(), analyzers: 'captions' }))(base),
    status: 400,
    says: 'field "analyzers"',
  },
  {
    name: 'reanalyze: an analyzer is a number',
    send: (base) => lazy(`/videos/${seed.key}/reanalyze`, () => ({ token: A(), analyzers: [5] }))(base),
    status: 400,
    says: 'analyzers',
  },
  {
    name: 'reanalyze: 9 analyzers',
    send: (base) =>
      lazy(`/videos/${seed.key}/reanalyze`, () => ({ token: A(), analyzers: Array(9).fill('ocr') }))(base),
    status: 400,
    says: 'analyzers',
  },
  {
    name: 'reanalyze: unknown analyzer',
    send: (base) => lazy(`/videos/${seed.key}/reanalyze`, () => ({ token: A(), analyzers: ['magic'] }))(base),
    status: 400,
    says: 'choose from ocr, objects, speech, captions, embeddings',
  },
  {
    name: 'reanalyze: captions without a captioner',
    send: (base) => lazy(`/videos/${seed.key}/reanalyze`, () => ({ token: A(), analyzers: ['captions'] }))(base),
    status: 400,
    says: '--captioner openai',
  },
  {
    name: 'reanalyze: token missing',
    send: (base) => json(`/videos/${seed.key}/reanalyze`, {})(base),
    status: 401,
    says: 'token',
  },
  {
    name: 'reanalyze: no body',
    send: (base) =>
      fetch(`${base}/videos/${seed.key}/reanalyze`, { method: 'POST', headers: { authorization: `Bearer ${A()}` } }),
    status: 400,
    says: 'must be a JSON object',
  },
  {
    name: 'reanalyze: malformed JSON',
    send: (base) => json(`/videos/${seed.key}/reanalyze`, '{"analyzers": [')(base),
    status: 400,
    says: 'not valid JSON',
  },
  {
    name: 'reanalyze: unknown file_id',
    send: lazy('/videos/nope/reanalyze', () => ({ token: A() })),
    status: 404,
    says: 'no such video',
  },
  {
    name: 'reanalyze: ..%2f..%2fetc',
    send: lazy('/videos/..%2f..%2fetc/reanalyze', () => ({ token: A() })),
    status: 404,
    says: 'no such video',
  },
  {
    name: "reanalyze: another user's video",
    send: (base) => lazy(`/videos/${seed.eveKey}/reanalyze`, () => ({ token: A() }))(base),
    status: 404,
    says: 'no such video',
  },
  {
    name: 'reanalyze: a removed video',
    send: (base) => lazy(`/videos/${seed.removedKey}/reanalyze`, () => ({ token: A() }))(base),
    status: 404,
    says: 'no such video',
  },
  {
    name: 'reanalyze: a video in a deleted index',
    send: (base) => lazy(`/videos/${seed.deletedKey}/reanalyze`, () => ({ token: A() }))(base),
    status: 404,
    says: 'no such video',
  },
  {
    name: 'reanalyze: analysis is off on this server',
    send: (base) => lazy(`/videos/${seed.key}/reanalyze`, () => ({ token: A(), analyzers: ['speech'] }))(base),
    status: 409,
    says: '--analysis-workers 0',
  },

  // --- deleted indexes and removed videos
  {
    name: 'question to a deleted index',
    send: () => inquire({ index: seed.deletedIndexId })(srv.url),
    status: 404,
    says: 'was not found',
  },
  {
    name: 'upload into a deleted index (by id)',
    send: () => upload({ index: seed.deletedIndexId })(srv.url),
    status: 404,
    says: 'no index has this id',
  },
  {
    name: 'resources of a deleted index',
    send: get(() => `/index-resources?token=${A()}&index=${seed.deletedIndexId}`),
    status: 404,
    says: 'was not found',
  },
  {
    name: 'deleting a deleted index again',
    send: del(() => `/indexes/${seed.deletedIndexId}?token=${A()}`),
    status: 404,
    says: 'was not found',
  },
  {
    name: 'file of a video in a deleted index (token)',
    send: get(() => `/media/${seed.deletedKey}?token=${A()}`),
    status: 404,
    says: 'no such file',
  },
  {
    name: 'file of a video in a deleted index (signed link)',
    send: get(() => seed.deletedSrc),
    status: 404,
    says: 'no such file',
  },
  {
    name: 'question about a removed video',
    send: () => inquire({ target_video: seed.removedKey })(srv.url),
    status: 404,
    says: 'is not in this index',
  },
  {
    name: 'removing a removed video',
    send: () =>
      lazy('/remove-from-index', () => ({ token: A(), project_id: seed.indexId, video_id: seed.removedKey }))(srv.url),
    status: 404,
    says: 'is not in this index',
  },
  {
    name: 'file of a removed video',
    send: get(() => `/media/${seed.removedKey}?token=${A()}`),
    status: 404,
    says: 'no such file',
  },
  {
    name: "another user's index id",
    send: () => inquire({ index: seed.eveIndexId })(srv.url),
    status: 404,
    says: 'was not found',
  },

  // --- people of an index (issue 12): ids, bodies, another user's and deleted indexes
  ...((): Case[] => {
    const people =
      (index: () => string, rest = '') =>
      () =>
        `/indexes/${index()}/people${rest}`;
    const put =
      (path: () => string, body: () => unknown): Send =>
      (base) =>
        fetch(base + path(), {
          method: 'PUT',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body()),
        });
    const mine = () => seed.indexId;
    return [
      { name: 'people: no token', send: get(people(mine)), status: 401, says: 'token' },
      {
        name: 'people: unknown index',
        send: get(() => `/indexes/${'i'.repeat(64)}/people?token=${A()}`),
        status: 404,
        says: 'was not found',
      },
      {
        name: "people: another user's index",
        send: get(() => `/indexes/${seed.eveIndexId}/people?token=${A()}`),
        status: 404,
        says: 'was not found',
      },
      {
        name: 'people: a deleted index',
        send: get(() => `/indexes/${seed.deletedIndexId}/people?token=${A()}`),
        status: 404,
        says: 'was not found',
      },
      {
        name: 'person: unknown id',
        send: get(() => `/indexes/${mine()}/people/p_nobody?token=${A()}`),
        status: 404,
        says: 'no such person',
      },
      {
        name: 'person: id "..%2f..%2fvidq.db"',
        send: get(() => `/indexes/${mine()}/people/..%2f..%2fvidq.db?token=${A()}`),
        status: 404,
        says: 'no such person',
      },
      {
        name: 'person thumbnail: forged signature',
        send: get(() => `/indexes/${mine()}/people/p_nobody/thumbnail?expires=9999999999&sig=AAAA`),
        status: 403,
        says: 'not valid',
      },
      {
        name: 'person thumbnail: no token or link',
        send: get(people(mine, '/p_nobody/thumbnail')),
        status: 401,
        says: 'token',
      },
      {
        name: 'name: field missing',
        send: put(people(mine, '/p_nobody'), () => ({ token: A() })),
        status: 400,
        says: 'field "name" is required',
      },
      {
        name: 'name: a number',
        send: put(people(mine, '/p_nobody'), () => ({ token: A(), name: 5 })),
        status: 400,
        says: '"name"',
      },
      {
        name: 'name: unknown person',
        send: put(people(mine, '/p_nobody'), () => ({ token: A(), name: 'Ann' })),
        status: 404,
        says: 'no such person',
      },
      {
        name: 'merge: "into" missing',
        send: lazy(`/indexes/x/people/p_nobody/merge`, () => ({ token: A() })),
        status: 400,
        says: 'field "into" is required',
      },
      {
        name: 'merge: unknown person',
        send: () => lazy(`/indexes/${mine()}/people/p_nobody/merge`, () => ({ token: A(), into: 'p_other' }))(srv.url),
        status: 404,
        says: 'no such person',
      },
      {
        name: 'split: appearance_id a word',
        send: lazy(`/indexes/x/people/p_nobody/split`, () => ({ token: A(), appearance_id: 'seven' })),
        status: 400,
        says: '"appearance_id"',
      },
      {
        name: 'split: appearance_id a fraction',
        send: lazy(`/indexes/x/people/p_nobody/split`, () => ({ token: A(), appearance_id: 1.5 })),
        status: 400,
        says: '"appearance_id"',
      },
      {
        name: "merge in another user's index",
        send: () =>
          lazy(`/indexes/${seed.eveIndexId}/people/p_nobody/merge`, () => ({ token: A(), into: 'p_other' }))(srv.url),
        status: 404,
        says: 'was not found',
      },
    ];
  })(),

  // --- URL shape (any policy)
  ...(
    [
      ['file:///etc/passwd', 'scheme "file" is not allowed'],
      ['ftp://example.com/a.mp4', 'scheme "ftp" is not allowed'],
      ['data:video/mp4;base64,AAAAIGZ0eXA=', 'scheme "data" is not allowed'],
      ['javascript:alert(1)', 'scheme "javascript" is not allowed'],
      ['http://user:secret@example.com/a.mp4', 'must not contain credentials'],
      ['http://user@example.com/a.mp4', 'must not contain credentials'],
      ['not a url', 'not a valid absolute URL'],
      ['', 'url is required'],
      [`http://example.com/${'a'.repeat(5000)}.mp4`, 'longer than 4096 characters'],
    ] as const
  ).map(
    ([url, says]): Case => ({
      name: `url ${JSON.stringify(url.slice(0, 40))}`,
      on: 'strict',
      send: strictUpload(url),
      status: 400,
      says,
    }),
  ),

  // --- private addresses in every notation (default policy)
  ...[
    'http://127.0.0.1:9/a.mp4',
    'http://localhost:9/a.mp4',
    'http://LOCALHOST:9/a.mp4',
    'http://[::]/a.mp4',
    'http://[0:0:0:0:0:ffff:7f00:1]/a.mp4',
    'http://127.1/a.mp4',
    'http://2130706433/a.mp4',
    'http://0x7f.0.0.1/a.mp4',
    'http://0177.0.0.1/a.mp4',
    'http://0/a.mp4',
    'http://[::1]/a.mp4',
    'http://[::ffff:127.0.0.1]/a.mp4',
    'http://[::ffff:7f00:1]/a.mp4',
    'http://[64:ff9b::7f00:1]/a.mp4',
    'http://10.1.2.3/a.mp4',
    'http://172.16.0.1/a.mp4',
    'http://192.168.1.1/a.mp4',
    'http://169.254.169.254/latest/meta-data',
    'http://100.64.0.1/a.mp4',
    'http://[fe80::1]/a.mp4',
    'http://[fd00::1]/a.mp4',
    'http://224.0.0.1/a.mp4',
    'http://255.255.255.255/a.mp4',
  ].map(
    (url): Case => ({
      name: `private ${url}`,
      on: 'strict',
      send: strictUpload(url),
      status: 403,
      says: '--allow-private-urls',
    }),
  ),

  // --- redirects are checked on every hop
  {
    name: 'redirect to file:',
    send: () => upload({ url: `${origin.url}/redirect?to=${encodeURIComponent('file:///etc/passwd')}` })(srv.url),
    status: 403,
    says: 'redirected to a URL that is refused',
  },
  {
    name: 'redirect to a URL with credentials',
    send: () =>
      upload({ url: `${origin.url}/redirect?to=${encodeURIComponent('http://u:p@127.0.0.1:9/a.mp4')}` })(srv.url),
    status: 403,
    says: 'redirected to a URL that is refused',
  },

  // --- files that are not usable videos (fetched, refused, nothing kept)
  {
    name: 'PNG renamed .mp4',
    send: () => upload({ url: `${origin.url}/fx/picture.mp4` })(srv.url),
    status: 415,
    says: 'still image',
  },
  {
    name: 'JPEG renamed .mp4',
    send: () => upload({ url: `${origin.url}/fx/photo.mp4` })(srv.url),
    status: 415,
    says: 'still image',
  },
  {
    name: 'text renamed .mp4',
    send: () => upload({ url: `${origin.url}/fx/notes.mp4` })(srv.url),
    status: 415,
    says: 'not a readable media file',
  },
  {
    name: 'zero-byte file',
    send: () => upload({ url: `${origin.url}/fx/zero.mp4` })(srv.url),
    status: 422,
    says: 'empty file',
  },
  {
    name: 'audio only (jfk-speech.wav)',
    send: () => upload({ url: `${origin.url}/media/jfk-speech.wav` })(srv.url),
    status: 422,
    says: 'no video stream',
  },
  {
    name: 'truncated mp4, index at the end',
    send: () => upload({ url: `${origin.url}/fx/cut-tail.mp4` })(srv.url),
    status: 415,
    says: 'not a readable media file',
  },
  {
    name: 'truncated mp4, index first (probes as whole)',
    send: () => upload({ url: `${origin.url}/fx/cut-head.mp4` })(srv.url),
    status: 422,
    says: 'the file is incomplete',
  },
  {
    name: 'duration of 84 hours (over --max-duration-sec)',
    send: () => upload({ url: `${origin.url}/fx/long.mp4` })(srv.url),
    status: 422,
    says: 'the limit is 86400 s',
  },
  {
    name: 'upload into an existing index: bad file',
    send: () => upload({ index: 'seeded', url: `${origin.url}/fx/picture.mp4` })(srv.url),
    status: 415,
    says: 'still image',
  },

  // --- issue 14: POST /upload (the file as the body), GET /search, exports
  ...(
    [
      ['PNG renamed .mp4', 'picture.mp4', 415, 'still image'],
      ['text renamed .mp4', 'notes.mp4', 415, 'not a readable media file'],
      ['truncated mp4, index first', 'cut-head.mp4', 422, 'the file is incomplete'],
      ['84-hour duration', 'long.mp4', 422, 'the limit is 86400 s'],
    ] as const
  ).map(
    ([what, file, status, says]): Case => ({
      name: `/upload raw: ${what}`,
      send: fileUpload(
        () => `index=fresh`,
        () => Bun.file(join(fx.dir, file)),
      ),
      status,
      says,
    }),
  ),
  {
    name: '/upload multipart: PNG renamed .mp4',
    send: fileUpload(
      () => 'index=fresh',
      () => form(Bun.file(join(fx.dir, 'picture.mp4'))),
    ),
    status: 415,
    says: 'still image',
  },
  {
    name: '/upload without index',
    send: fileUpload(
      () => '',
      () => Bun.file(join(fx.dir, 'notes.mp4')),
    ),
    status: 400,
    says: '"index" is required',
  },
  {
    name: '/upload with an empty body',
    send: fileUpload(
      () => 'index=fresh',
      () => '',
    ),
    status: 400,
    says: 'body is empty',
  },
  {
    name: '/upload of a JSON body',
    send: fileUpload(
      () => 'index=fresh',
      () => '{"url":"http://example.com/a.mp4"}',
      'application/json',
    ),
    status: 415,
    says: '/remote-upload',
  },
  {
    name: '/upload multipart without a file part',
    send: fileUpload(
      () => 'index=fresh',
      () => form(null),
    ),
    status: 400,
    says: 'no "file" part',
  },
  {
    name: '/upload multipart without a boundary',
    send: fileUpload(
      () => 'index=fresh',
      () => 'x',
      'multipart/form-data',
    ),
    status: 400,
    says: 'boundary',
  },
  {
    name: '/upload without a token',
    send: fileUpload(
      () => 'index=fresh',
      () => Bun.file(join(fx.dir, 'notes.mp4')),
      'video/mp4',
      '',
    ),
    status: 401,
    says: 'token',
  },
  {
    name: '/upload into a deleted index',
    send: fileUpload(
      () => `index=${seed.deletedIndexId}`,
      () => Bun.file(join(fx.dir, 'notes.mp4')),
    ),
    status: 404,
    says: 'no index has this id',
  },
  {
    name: '/search without q',
    send: get(() => `/search?token=${A()}&index=seeded`),
    status: 400,
    says: '"q" is required',
  },
  {
    name: '/search with an empty q',
    send: get(() => `/search?token=${A()}&index=seeded&q=%20`),
    status: 400,
    says: 'must not be empty',
  },
  {
    name: '/search with limit 0',
    send: get(() => `/search?token=${A()}&index=seeded&q=x&limit=0`),
    status: 400,
    says: '"limit" must be between 1 and 50',
  },
  {
    name: '/search with a word as limit',
    send: get(() => `/search?token=${A()}&index=seeded&q=x&limit=many`),
    status: 400,
    says: '"limit" must be a whole number',
  },
  {
    name: '/search with an unknown kind',
    send: get(() => `/search?token=${A()}&index=seeded&q=x&kinds=shot,faces`),
    status: 400,
    says: 'unknown kind',
  },
  {
    name: '/search on a deleted index',
    send: get(() => `/search?token=${A()}&index=${seed.deletedIndexId}&q=x`),
    status: 404,
    says: 'not found',
  },
  {
    name: '/search with a removed video',
    send: get(() => `/search?token=${A()}&index=seeded&q=x&video=${seed.removedKey}`),
    status: 404,
    says: 'not in this index',
  },
  {
    name: 'transcript.vtt of a video without a transcript',
    send: get(() => `/videos/${seed.key}/transcript.vtt?token=${A()}`),
    status: 404,
    says: 'no transcript',
  },
  {
    name: 'transcript.srt of a removed video',
    send: get(() => `/videos/${seed.removedKey}/transcript.srt?token=${A()}`),
    status: 404,
    says: 'no such video',
  },
  {
    name: 'insights.json of a video in a deleted index',
    send: get(() => `/videos/${seed.deletedKey}/insights.json?token=${A()}`),
    status: 404,
    says: 'no such video',
  },
  {
    name: 'PUT webhook without url',
    send: putJson(
      () => `/indexes/${seed.indexId}/webhook`,
      () => ({ token: A() }),
    ),
    status: 400,
    says: '"url" is required',
  },
  {
    name: 'PUT webhook with an ftp URL',
    send: putJson(
      () => `/indexes/${seed.indexId}/webhook`,
      () => ({ token: A(), url: 'ftp://example.com/hook' }),
    ),
    status: 400,
    says: 'scheme "ftp" is not allowed',
  },
  {
    name: 'PUT webhook with credentials in the URL',
    send: putJson(
      () => `/indexes/${seed.indexId}/webhook`,
      () => ({ token: A(), url: 'http://u:p@example.com/hook' }),
    ),
    status: 400,
    says: 'credentials',
  },
  {
    name: 'PUT webhook to a private address (default policy)',
    on: 'strict',
    send: putJson(
      () => `/indexes/${strictIndex()}/webhook`,
      () => ({ token: strict.token, url: 'http://169.254.169.254/latest' }),
    ),
    status: 403,
    says: '--allow-private-urls',
  },
  {
    name: 'PUT webhook on a deleted index',
    send: putJson(
      () => `/indexes/${seed.deletedIndexId}/webhook`,
      () => ({ token: A(), url: null }),
    ),
    status: 404,
    says: 'not found',
  },
  {
    name: 'PUT webhook with rotate_secret "yes"',
    send: putJson(
      () => `/indexes/${seed.indexId}/webhook`,
      () => ({ token: A(), url: null, rotate_secret: 'yes' }),
    ),
    status: 400,
    says: 'rotate_secret',
  },
  {
    name: '/upload with a private webhook_url (default policy)',
    on: 'strict',
    send: (base) =>
      fetch(`${base}/upload?index=fresh&webhook_url=${encodeURIComponent('http://10.0.0.1/hook')}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${strict.token}`, 'content-type': 'video/mp4' },
        body: Bun.file(join(fx.dir, 'notes.mp4')),
      }),
    status: 403,
    says: '--allow-private-urls',
  },
  // --- the hosted API's calls (issue 20): account and index calls, signed uploads, status, project_id
  { name: 'check-token without a token', send: get(() => '/check-token'), status: 401, says: 'token' },
  {
    name: 'check-token with a token of 1001 characters',
    send: get(() => `/check-token?token=${'t'.repeat(1001)}`),
    status: 400,
    says: 'token',
  },
  {
    name: 'does-group-exist without index',
    send: lazy('/does-group-exist', () => ({ token: A() })),
    status: 400,
    says: '"index" is required',
  },
  {
    name: 'does-group-exist with a numeric index',
    send: lazy('/does-group-exist', () => ({ token: A(), index: 7 })),
    status: 400,
    says: 'index',
  },
  {
    name: 'does-group-exist with an empty index',
    send: lazy('/does-group-exist', () => ({ token: A(), index: ' ' })),
    status: 400,
    says: 'must not be empty',
  },
  {
    name: 'does-group-exist with an unknown token',
    send: lazy('/does-group-exist', () => ({ token: 'u'.repeat(60), index: 'seeded' })),
    status: 401,
    says: 'unknown or revoked',
  },
  {
    name: 'create-index without index',
    send: get(() => `/create-index?token=${A()}`),
    status: 400,
    says: 'index',
  },
  {
    name: 'create-index with type=fast',
    send: get(() => `/create-index?token=${A()}&index=new-one&type=fast`),
    status: 400,
    says: 'type',
  },
  {
    name: 'create-index with a control character in the name',
    send: get(() => `/create-index?token=${A()}&index=bad%07name`),
    status: 400,
    says: 'control characters',
  },
  {
    name: 'create-index with a name shaped like an index id',
    send: get(() => `/create-index?token=${A()}&index=${'n'.repeat(64)}`),
    status: 400,
    says: 'reserved',
  },
  {
    name: 'create-index with an unknown token',
    send: get(() => `/create-index?token=${'u'.repeat(60)}&index=new-one`),
    status: 401,
    says: 'unknown or revoked',
  },
  {
    name: 'create-index type=performance over a plain index of that name',
    send: get(() => `/create-index?token=${A()}&index=seeded&type=performance`),
    status: 409,
    says: 'exists already',
  },
  ...(
    [
      ['without filesize', { filename: 'a.mp4' }, 400, 'filesize'],
      ['with filesize 0', { filename: 'a.mp4', filesize: 0 }, 400, 'filesize'],
      ['with filesize "lots"', { filename: 'a.mp4', filesize: 'lots' }, 400, 'filesize'],
      ['with a filesize over --max-upload-bytes', { filename: 'a.mp4', filesize: 1e14 }, 413, '--max-upload-bytes'],
      ['without filename', { filesize: 10 }, 400, 'filename'],
      ['with duration as an object', { filename: 'a.mp4', filesize: 10, duration: {} }, 400, 'duration'],
    ] as const
  ).map(
    ([what, fields, status, says]): Case => ({
      name: `api-pre-upload ${what}`,
      send: lazy('/api-pre-upload', () => ({ index: `${A()}seeded`, ...fields })),
      status,
      says,
    }),
  ),
  {
    name: 'api-pre-upload with the token alone in index (no index name)',
    send: lazy('/api-pre-upload', () => ({ index: A(), filename: 'a.mp4', filesize: 10 })),
    status: 400,
    says: 'token followed by the name',
  },
  {
    name: 'api-pre-upload with an unknown token in index',
    send: lazy('/api-pre-upload', () => ({ index: `${'u'.repeat(60)}seeded`, filename: 'a.mp4', filesize: 10 })),
    status: 401,
    says: 'unknown or revoked',
  },
  {
    name: 'api-pre-upload with index shorter than a token',
    send: lazy('/api-pre-upload', () => ({ index: 'seeded', filename: 'a.mp4', filesize: 10 })),
    status: 401,
    says: 'token',
  },
  {
    name: 'api-pre-upload with a control character in the index name',
    send: lazy('/api-pre-upload', () => ({ index: `${A()}bad\u0007name`, filename: 'a.mp4', filesize: 10 })),
    status: 400,
    says: 'control characters',
  },
  ...(
    [
      ['without its signature', () => seed.putPath.split('?')[0]!, 403, 'not valid'],
      ['with another signature', () => seed.putPath.replace(/sig=[^&]+/, `sig=${'A'.repeat(43)}`), 403, 'not valid'],
      [
        'with its expiry moved',
        () => seed.putPath.replace(/expires=(\d+)/, (_, e: string) => `expires=${Number(e) + 1000}`),
        403,
        'not valid',
      ],
      [
        'to an unknown key',
        () => seed.putPath.replace(/api-upload\/[^?]+/, `api-upload/${'k'.repeat(32)}`),
        403,
        'not valid',
      ],
      ['after it expired', () => seed.expiredPutPath, 410, 'expired'],
    ] as const
  ).map(
    ([what, path, status, says]): Case => ({
      name: `signed PUT ${what}`,
      send: (base) =>
        fetch(base + path(), {
          method: 'PUT',
          headers: { 'content-type': 'video/mp4' },
          body: Bun.file(join(fx.dir, 'notes.mp4')),
        }),
      status,
      says,
    }),
  ),
  {
    name: 'signed PUT of another size than signed',
    send: (base) =>
      fetch(base + seed.putPath, { method: 'PUT', headers: { 'content-type': 'video/mp4' }, body: 'x'.repeat(10) }),
    status: 400,
    says: 'exactly',
  },
  {
    name: 'signed PUT without a Content-Length (chunked)',
    send: (base) =>
      fetch(base + seed.putPath, {
        method: 'PUT',
        headers: { 'content-type': 'video/mp4' },
        body: new ReadableStream({
          start(c) {
            c.enqueue(new Uint8Array(10));
            c.close();
          },
        }),
        duplex: 'half',
      } as RequestInit),
    status: 400,
    says: 'Content-Length',
  },
  { name: 'status without file_id', send: get(() => '/status'), status: 400, says: 'file_id' },
  {
    name: 'status of an unknown file',
    send: get(() => `/status?file_id=${'f'.repeat(32)}`),
    status: 404,
    says: 'not found',
  },
  {
    name: 'status of a removed file',
    send: get(() => `/status?file_id=${seed.removedKey}`),
    status: 404,
    says: 'not found',
  },
  { name: 'compress-status without video', send: get(() => '/compress-status'), status: 400, says: 'video' },
  {
    name: 'compress-status of an unknown file',
    send: get(() => `/compress-status?video=${'f'.repeat(32)}`),
    status: 404,
    says: 'not found',
  },
  {
    name: 'inquire with neither index nor project_id',
    send: lazy('/inquire', () => ({ token: A(), prompt: 'what is here?' })),
    status: 400,
    says: '"index" is required',
  },
  {
    name: 'inquire with project_id = the token alone',
    send: lazy('/inquire', () => ({ project_id: A(), prompt: 'what is here?' })),
    status: 400,
    says: 'project_id',
  },
  {
    name: 'inquire with project_id of an unknown token',
    send: lazy('/inquire', () => ({ project_id: `${'u'.repeat(60)}seeded`, prompt: 'what is here?' })),
    status: 401,
    says: 'unknown or revoked',
  },
  {
    name: 'inquire-stream with project_id of an unknown token',
    send: lazy('/inquire-stream', () => ({ project_id: `${'u'.repeat(60)}seeded`, prompt: 'what is here?' })),
    status: 401,
    says: 'unknown or revoked',
  },
  { name: 'inquire with an empty subindex', send: inquire({ subindex: [] }), status: 400, says: 'subindex' },
  { name: 'inquire with subindex a string', send: inquire({ subindex: 'abc' }), status: 400, says: 'subindex' },
  {
    name: 'inquire with a subindex id of a removed video',
    send: lazy('/inquire', () => ({
      token: A(),
      index: seed.indexId,
      prompt: 'what is here?',
      subindex: [seed.removedKey],
    })),
    status: 404,
    says: 'subindex',
  },
  { name: 'inquire with a negative numeric target', send: inquire({ target: -1 }), status: 400, says: 'target' },
  { name: 'inquire with target true', send: inquire({ target: true }), status: 400, says: 'target' },
  { name: 'inquire with json a number', send: inquire({ json: 5 }), status: 400, says: 'json' },
  { name: 'inquire with json not JSON', send: inquire({ json: '{oops' }), status: 400, says: '"json"' },
  { name: 'inquire with json a JSON array', send: inquire({ json: '["a"]' }), status: 400, says: '"json"' },
  {
    name: 'insights.json with download=maybe',
    send: get(() => `/videos/${seed.key}/insights.json?token=${A()}&download=maybe`),
    status: 400,
    says: 'download',
  },
  // --- POST /search in the hosted API's shape, and the flows (POST /core/<name>)
  ...((): Case[] => {
    const search = (fields: () => Record<string, unknown>) => lazy('/search', () => fields());
    const pid = () => A() + 'seeded';
    const flow = (name: string, fields: () => Record<string, unknown>) =>
      lazy(`/core/${name}`, () => ({ token: A(), index: 'seeded', ...fields() }));
    return [
      { name: '/search without project_id', send: search(() => ({ query: 'x' })), status: 400, says: 'project_id' },
      {
        name: '/search with an unknown token in project_id',
        send: search(() => ({ project_id: 'q'.repeat(60) + 'seeded', query: 'x' })),
        status: 401,
        says: 'token',
      },
      {
        name: '/search with a project_id that is only the token',
        send: search(() => ({ project_id: A(), query: 'x' })),
        status: 400,
        says: 'followed by the index name',
      },
      {
        name: '/search with neither query nor image',
        send: search(() => ({ project_id: pid() })),
        status: 400,
        says: 'image',
      },
      {
        name: '/search with numargs 0',
        send: search(() => ({ project_id: pid(), query: 'x', numargs: 0 })),
        status: 400,
        says: 'numargs',
      },
      {
        name: '/search with numargs that is no number',
        send: search(() => ({ project_id: pid(), query: 'x', numargs: 'many' })),
        status: 400,
        says: 'numargs',
      },
      {
        name: '/search with a negative threshold',
        send: search(() => ({ project_id: pid(), query: 'x', threshold: -1 })),
        status: 400,
        says: 'threshold',
      },
      {
        name: '/search with an image that is not base64',
        send: search(() => ({ project_id: pid(), image: '!!! not base64 !!!' })),
        status: 400,
        says: 'image',
      },
      {
        name: '/search with the base64 of something that is not a picture',
        send: search(() => ({ project_id: pid(), image: Buffer.from('%PDF-1.4 not a picture').toString('base64') })),
        status: 400,
        says: 'image',
      },
      {
        name: '/search with an ftp image URL',
        send: search(() => ({ project_id: pid(), image: 'ftp://example.com/a.png' })),
        status: 400,
        says: 'scheme',
      },
      {
        name: '/search with a private image URL (default policy)',
        on: 'strict',
        send: lazy('/search', () => ({ project_id: strict.token + 'strict-seed', image: 'http://127.0.0.1:9/a.png' })),
        status: 403,
        says: '--allow-private-urls',
      },
      {
        name: '/search with a file of another index in subindex',
        send: search(() => ({ project_id: pid(), query: 'x', subindex: [seed.eveKey] })),
        status: 404,
        says: 'not in this index',
      },
      {
        name: '/search with subindex as a string',
        send: search(() => ({ project_id: pid(), query: 'x', subindex: seed.key })),
        status: 400,
        says: 'subindex',
      },
      {
        name: '/core/<unknown flow>',
        send: flow('summarise-everything', () => ({})),
        status: 404,
        says: 'no flow named',
      },
      {
        name: '/core/clipping without index',
        send: lazy('/core/clipping', () => ({ token: A(), video_id: seed.key, prompt: 'x' })),
        status: 400,
        says: 'index',
      },
      {
        name: '/core/clipping without a token',
        send: lazy('/core/clipping', () => ({ index: 'seeded', video_id: seed.key, prompt: 'x' })),
        status: 401,
        says: 'token',
      },
      {
        name: '/core/clipping without video_id',
        send: flow('clipping', () => ({ prompt: 'x' })),
        status: 400,
        says: 'video_id',
      },
      {
        name: '/core/clipping with an unknown video',
        send: flow('clipping', () => ({ video_id: 'NOPE', prompt: 'x' })),
        status: 404,
        says: 'not in this index',
      },
      {
        name: '/core/clipping with a negative min_length',
        send: flow('clipping', () => ({ video_id: seed.key, prompt: 'x', min_length: -3 })),
        status: 400,
        says: 'min_length',
      },
      {
        name: '/core/scene-detection with video_id as a number',
        send: flow('scene-detection', () => ({ video_id: 12 })),
        status: 400,
        says: 'video_id',
      },
      {
        name: '/core/clipping with a body over --max-body-bytes (only /search takes images)',
        send: flow('clipping', () => ({ video_id: seed.key, prompt: 'x', image: 'A'.repeat(MAX_BODY) })),
        status: 413,
        says: 'larger than the limit',
      },
    ];
  })(),
];

for (const dialect of SERVER_DIALECTS)
  describe(dialect.name, () => {
    beforeAll(() => setup(dialect), 120_000);
    afterAll(teardown);

    describe('bad input is refused clearly and leaves nothing behind', () => {
      test('the table has enough cases', () => {
        expect(cases.length).toBeGreaterThanOrEqual(60);
        expect(new Set(cases.map((c) => c.name)).size).toBe(cases.length);
      });

      for (const c of cases) {
        test(c.name, async () => {
          const server = c.on === 'strict' ? strict : srv;
          const before = await snapshot(server);
          const res = await c.send(server.url);
          const text = await res.text();
          let body: any;
          try {
            body = JSON.parse(text);
          } catch {
            throw new Error(`not JSON (${res.status}, ${res.headers.get('content-type')}): ${text.slice(0, 200)}`);
          }
          expect({ status: res.status, body }).toEqual({
            status: c.status,
            body: { error: c.status, message: expect.any(String) },
          });
          expect(res.headers.get('content-type')).toContain('application/json');
          if (typeof c.says === 'string') expect(body.message).toContain(c.says);
          else expect(body.message).toMatch(c.says);
          const after = await snapshot(server);
          expect(after.rows).toEqual(before.rows);
          expect(after.files).toEqual(before.files);
          expect(mediaAndTmp(after).filter((f) => f.startsWith('tmp/'))).toEqual([]);
        });
      }
    });

    describe('a NUL character in an id or a name', () => {
      // PostgreSQL's text holds no NUL, so a lookup given one failed there with a 500; on SQLite it
      // matches nothing. Either way: a clear 4xx with the error shape, and nothing written.
      test('is refused (400 or 404), never a server error, nothing written', async () => {
        const before = await snapshot(srv);
        const t = srv.token;
        const sent: [string, Response][] = [];
        const get = async (p: string) => sent.push([`GET ${p}`, await fetch(srv.url + p)]);
        const post = async (p: string, body: Record<string, unknown>) =>
          sent.push([
            `POST ${p} ${JSON.stringify(body).replace(t, 'TOKEN')}`,
            await fetch(srv.url + p, {
              method: 'POST',
              headers: { 'content-type': 'application/json', accept: 'application/json' },
              body: JSON.stringify(body),
            }),
          ]);
        await get(`/index-resources?token=${t}&index=a%00b`);
        await get(`/status?file_id=a%00b`);
        await get(`/videos/a%00b/segments?token=${t}`);
        await get(`/media/a%00b?token=${t}`);
        await get(`/indexes/a%00b/people?token=${t}`);
        await post('/inquire', { token: t, index: 'a\u0000b', prompt: 'what is here?' });
        await post('/remove-from-index', { token: t, project_id: 'a\u0000b', video_id: 'x' });
        await post('/remove-from-index', { token: t, project_id: seed.indexId, video_id: 'a\u0000b' });
        for (const [what, res] of sent) {
          const body = await res.json();
          expect({ what, status: [400, 404].includes(res.status) }).toEqual({ what, status: true });
          expect(body).toEqual({ error: res.status, message: expect.any(String) });
        }
        // The hosted API answers these in a 200's `error` field (moonshine-sdk.md), as for any unknown name.
        const stream = await postJson(srv.url, '/add-stream', {
          token: t,
          index: 'a\u0000b',
          url: 'rtsp://127.0.0.1:9/x',
        });
        expect(stream).toMatchObject({ status: 200, body: { error: expect.any(String) } });
        expect(await postJson(srv.url, '/does-group-exist', { token: t, index: 'a\u0000b' })).toEqual({
          status: 200,
          body: { exists: false },
        });
        const after = await snapshot(srv);
        expect(after.rows).toEqual(before.rows);
        expect(after.files).toEqual(before.files);
      });
    });

    describe('huge bodies are refused before they are read whole', () => {
      test('a chunked body with no Content-Length is cut off at the limit (413, error shape)', async () => {
        const before = await snapshot(srv);
        const TOTAL = 64 * 1024 * 1024;
        const chunk = new TextEncoder().encode(' '.repeat(64 * 1024));
        let sent = 0;
        const body = new ReadableStream<Uint8Array>({
          pull(c) {
            if (sent === 0) {
              const start = new TextEncoder().encode(
                `{"token":"${srv.token}","index":"chunked","url":"${origin.url}/media/chaplin-bw.mp4","pad":"`,
              );
              sent += start.byteLength;
              c.enqueue(start);
              return;
            }
            if (sent >= TOTAL) return c.close();
            sent += chunk.byteLength;
            c.enqueue(chunk);
          },
        });
        const res = await fetch(srv.url + '/remote-upload', {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          body,
          duplex: 'half',
        } as RequestInit);
        expect(res.status).toBe(413);
        expect(await res.json()).toEqual({ error: 413, message: expect.stringContaining('--max-body-bytes') });
        // The server answered long before the client could send it all.
        expect(sent).toBeLessThan(TOTAL);
        const after = await snapshot(srv);
        expect(after).toEqual(before);
      });

      test('a declared Content-Length of 10 GB is refused without waiting for the body', async () => {
        const answer = await new Promise<string>((resolve, reject) => {
          let got = '';
          const guard = setTimeout(() => reject(new Error('no answer: the server is waiting for the body')), 20_000);
          Bun.connect({
            hostname: '127.0.0.1',
            port: srv.server.port,
            socket: {
              open(s) {
                s.write(
                  `POST /inquire HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${10 * 1024 ** 3}\r\n\r\n{"token":"`,
                );
              },
              data(s, d) {
                got += new TextDecoder().decode(d);
                const end = got.indexOf('\r\n\r\n');
                const len = /content-length: (\d+)/i.exec(got)?.[1];
                if (end >= 0 && len !== undefined && got.length >= end + 4 + Number(len)) {
                  clearTimeout(guard);
                  s.end();
                  resolve(got);
                }
              },
              close() {
                clearTimeout(guard);
                resolve(got);
              },
              error(_s, e) {
                clearTimeout(guard);
                reject(e);
              },
            },
          }).catch(reject);
        });
        expect(answer).toStartWith('HTTP/1.1 413');
        const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
        expect(body).toEqual({ error: 413, message: expect.stringContaining(`limit of ${MAX_BODY} bytes`) });
      });
    });

    describe('oversized request heads', () => {
      test('a 100 kB query string or header is refused (431), nothing written, the server keeps serving', async () => {
        const before = await snapshot(srv);
        expect((await fetch(`${srv.url}/indexes?token=${'a'.repeat(100_000)}`)).status).toBe(431);
        expect((await fetch(`${srv.url}/health`, { headers: { 'x-padding': 'a'.repeat(100_000) } })).status).toBe(431);
        expect(await snapshot(srv)).toEqual(before);
        expect((await getJson(srv.url, '/health')).body).toMatchObject({ status: 'ok', search_index: { ready: true } });
      });
      // Bun's HTTP parser answers 431 itself, before the application sees the request, with an empty
      // body; Bun.serve has no hook for it (only the runtime flag --max-http-header-size).
      test.todo('the 431 answer to an oversized request head has the error shape {error, message}');
    });

    describe('unusual but harmless input is accepted safely', () => {
      const names = [
        'Ünïcödé 🎬 индекс 映像',
        '../../etc',
        '..\\..\\windows',
        '/absolute/path',
        '%2e%2e%2f',
        'name with "quotes" & <tags>',
        'rtl\u200fmark' /* bidi overrides (U+202A–202E, U+2066–2069) are refused: abuse-http.test.ts */,
        'zero\u200bwidth',
      ];
      test('index names are labels: stored as given, shown as given, never a path', async () => {
        for (const name of names) {
          const r = await postJson(srv.url, '/remote-upload', {
            token: srv.token,
            index: name,
            url: `${origin.url}/media/countdown-living-room.mp4`,
          });
          expect(r.status).toBe(200);
          const listed = (await getJson(srv.url, `/indexes?token=${srv.token}`)).body.find((i: any) => i.name === name);
          expect(listed).toMatchObject({ name, count: 1 });
          const res = await getJson(srv.url, `/index-resources?token=${srv.token}&index=${encodeURIComponent(name)}`);
          expect(res.status).toBe(200);
          expect(res.body.map((v: any) => v.file_id)).toEqual([r.body.data.key]);
        }
        // Every stored file sits in media/<generated 32-character id>/, nothing anywhere else.
        for (const f of mediaAndTmp(await snapshot(srv)))
          expect(f).toMatch(/^media\/[A-Za-z0-9_-]{32}\/source\.(mp4|webm|mkv)$/);
        expect(
          (await snapshot(srv)).files.every((f) =>
            /^(media\/[A-Za-z0-9_-]{32}\/|secret\.key$|default-token\.txt$)/.test(f),
          ),
        ).toBe(true);
      });

      test('prompts and guidance with control characters, unicode and query syntax are answered', async () => {
        for (const prompt of [
          'what is\u0000 here?',
          'что здесь? 🎬',
          '"unbalanced * NEAR( OR',
          'a\u202e\u200b\ud800b',
          '\n\t\r',
          "'; DROP TABLE videos; --",
        ]) {
          const r = await postJson(srv.url, '/inquire', {
            token: srv.token,
            index: seed.indexId,
            prompt,
            guidance: prompt,
          });
          expect(r.status).toBe(200);
          expect(r.body.status).toBe('complete');
          expect(typeof r.body.output).toBe('string');
        }
        expect((await getJson(srv.url, `/index-resources?token=${srv.token}&index=seeded`)).body.length).toBe(1);
      });
    });

    describe('a failed upload over server-sent events', () => {
      test('ends with an error event giving the reason, and keeps nothing', async () => {
        const before = await snapshot(srv);
        const res = await fetch(srv.url + '/remote-upload', {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
          body: JSON.stringify({ token: srv.token, index: 'sse-cut', url: `${origin.url}/fx/cut-head.mp4` }),
        });
        expect(res.status).toBe(200);
        const events = (await res.text())
          .split('\n\n')
          .map((b) => b.split('\n').find((l) => l.startsWith('data: ')))
          .filter((l): l is string => !!l)
          .map((l) => JSON.parse(l.slice(6)));
        expect(events[0].type).toBe('file_authorized');
        expect(events.at(-1)).toEqual({
          type: 'error',
          error: 422,
          message: expect.stringContaining('the file is incomplete'),
        });
        expect(await snapshot(srv)).toEqual(before);
      });
    });
  });

describe('redirects are checked again on every hop', () => {
  // Offline there is no public host to start from, so the policy itself lets the first hop through
  // and refuses private addresses from then on: a public page redirecting to a private address.
  test('a redirect from an allowed host to a private address is refused (403), nothing written', async () => {
    let checks = 0;
    const policy = {
      get allowPrivate() {
        return checks++ === 0;
      },
    };
    const dest = join(fx.dir, 'hop.part');
    const start = new URL(
      `${origin.url}/redirect?to=${encodeURIComponent(`http://127.0.0.1:${new URL(origin.url).port}/media/chaplin-bw.mp4`)}`,
    );
    const got = downloadToFile(start, dest, {
      policy,
      maxBytes: 10 * 1024 * 1024,
      connectTimeoutMs: 5000,
      idleTimeoutMs: 5000,
      maxRedirects: 5,
    });
    await expect(got).rejects.toMatchObject({ status: 403, message: expect.stringContaining('--allow-private-urls') });
    expect(checks).toBe(2);
    expect(existsSync(dest)).toBe(false);
  });
});
