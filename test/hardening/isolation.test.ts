/**
 * Isolation and secrets. Two users on one server: every endpoint refuses the other user's ids
 * (403/404) and its answer says nothing about them; tokens (and their hashes) never appear in the
 * log (captured at debug level, the analysis worker's lines included) or in any response; signed
 * media links expire and a tampered one is refused.
 *
 * Alice's clip is analysed for real (the `visual` analyzer only, one worker) so that it has frames;
 * her second index holds talking-head.mp4, analysed with `faces` too, so that it has a person.
 * Everything runs twice (issue 33): on the SQLite file, and on a fresh PostgreSQL database.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createHash } from 'node:crypto';
import { clip, startOrigin, startTestServer, type Origin, type TestServer } from '../helpers';
import { waitVideoReady } from '../factories';
import { writeCatalog } from './fixtures';
import { dropDatabases, SERVER_DIALECTS, type ServerDialect } from './proc';

const TTL_SEC = 2;

let srv: TestServer;
let origin: Origin;
const logLines: string[] = [];
/** Every response body this file reads, to search for secrets at the end. */
const bodies: string[] = [];

const alice = {
  token: '',
  userId: '',
  indexId: '',
  indexName: 'alice-private-index',
  key: '',
  fileName: 'chaplin-bw.mp4',
  deletedIndexId: '',
  deletedKey: '',
  frameUrl: '',
  frame: '',
  facesIndexId: '',
  facesKey: '',
  personId: '',
  thumbnail: '',
};
const bob = { token: '', userId: '', indexId: '', key: '' };

async function call(
  path: string,
  init: RequestInit & { json?: unknown } = {},
): Promise<{ status: number; text: string; body: any; headers: Headers }> {
  const { json, ...rest } = init;
  const res = await fetch(
    srv.url + path,
    json === undefined
      ? rest
      : {
          method: 'POST',
          ...rest,
          headers: { 'content-type': 'application/json', accept: 'application/json', ...rest.headers },
          body: JSON.stringify(json),
        },
  );
  const type = res.headers.get('content-type') ?? '';
  const text =
    type.startsWith('image/') || type.startsWith('video/')
      ? `<${type} ${(await res.arrayBuffer()).byteLength} bytes>`
      : await res.text();
  bodies.push(text);
  let body: any = null;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, text, body, headers: res.headers };
}

beforeAll(() => {
  origin = startOrigin();
});
afterAll(() => origin?.stop());

/** The server, Alice's analysed clips and Bob, on `dialect`'s catalog. */
async function setup(dialect: ServerDialect): Promise<void> {
  logLines.length = 0;
  bodies.length = 0;
  const database = await dialect.catalog();
  srv = await startTestServer(
    {
      'log-level': 'debug',
      'media-link-ttl-sec': String(TTL_SEC),
      'analysis-workers': '1',
      analyzers: 'visual,faces',
      ...(database && { database }),
    },
    { logSink: (line) => logLines.push(line) },
  );
  alice.token = srv.token;
  alice.userId = srv.userId;
  const b = await srv.server.service.accounts.createUser('bob', 20);
  bob.token = b.token;
  bob.userId = b.user.id;

  const a1 = await call('/remote-upload', {
    json: { token: alice.token, index: alice.indexName, url: `${origin.url}/media/${alice.fileName}` },
  });
  expect(a1.status).toBe(200);
  alice.key = a1.body.data.key;
  const b1 = await call('/remote-upload', {
    json: { token: bob.token, index: 'bobs', url: `${origin.url}/media/countdown-living-room.mp4` },
  });
  expect(b1.status).toBe(200);
  bob.key = b1.body.data.key;
  alice.indexId = (await call(`/indexes?token=${alice.token}`)).body.find(
    (i: any) => i.name === alice.indexName,
  ).index_id;
  bob.indexId = (await call(`/indexes?token=${bob.token}`)).body[0].index_id;
  const a2 = await call('/remote-upload', {
    json: { token: alice.token, index: 'alice-trash', url: `${origin.url}/media/pancake.mkv` },
  });
  expect(a2.status).toBe(200);
  alice.deletedKey = a2.body.data.key;
  alice.deletedIndexId = (await call(`/indexes?token=${alice.token}`)).body.find(
    (i: any) => i.name === 'alice-trash',
  ).index_id;
  expect((await call(`/indexes/${alice.deletedIndexId}?token=${alice.token}`, { method: 'DELETE' })).status).toBe(200);

  const a3 = await call('/remote-upload', {
    json: { token: alice.token, index: 'alice-faces', url: `${origin.url}/media/talking-head.mp4` },
  });
  expect(a3.status).toBe(200);
  alice.facesKey = a3.body.data.key;
  alice.facesIndexId = (await call(`/indexes?token=${alice.token}`)).body.find(
    (i: any) => i.name === 'alice-faces',
  ).index_id;

  // Wait for the analysis of Alice's clips: their frames are what answers cite.
  for (const [index, key] of [
    [alice.indexId, alice.key],
    [alice.facesIndexId, alice.facesKey],
  ] as const) {
    await waitVideoReady(srv, index, key, { token: alice.token, timeoutMs: 60_000 });
  }
  const people = await call(`/indexes/${alice.facesIndexId}/people?token=${alice.token}`);
  expect(people.body.length).toBe(1);
  alice.personId = people.body[0].person_id;
  alice.thumbnail = people.body[0].thumbnail_url;
  const segs = await call(`/videos/${alice.key}/segments?token=${alice.token}`);
  expect(segs.status).toBe(200);
  expect(segs.body.frames.length).toBeGreaterThan(0);
  alice.frameUrl = segs.body.frames[0].url;
  alice.frame = new URL(alice.frameUrl, srv.url).pathname.split('/').pop()!;
}

async function teardown(): Promise<void> {
  await srv?.stop();
  await dropDatabases();
}

/** What Bob must never learn from an answer about Alice's things. */
function expectNoLeak(text: string, sent: string[] = []): void {
  for (const secret of [alice.indexName, alice.fileName, alice.userId, 'alice-trash', alice.token])
    if (!sent.includes(secret)) expect(text).not.toContain(secret);
}

for (const dialect of SERVER_DIALECTS)
  describe(dialect.name, () => {
    beforeAll(() => setup(dialect), 90_000);
    afterAll(teardown);

    describe("one user cannot reach the other's indexes, videos or files", () => {
      /** `echoes`: what Bob sent himself and may be quoted back (her index name, when he guessed it). */
      type Probe = {
        name: string;
        run: () => Promise<{ status: number; text: string; body: any }>;
        status: number[];
        echoes?: () => string[];
      };
      const probes: Probe[] = [
        {
          name: "POST /remote-upload into Alice's index (by id)",
          run: () =>
            call('/remote-upload', {
              json: { token: bob.token, index: alice.indexId, url: `${origin.url}/media/bottles.mp4` },
            }),
          status: [404],
        },
        {
          name: 'POST /inquire on her index',
          run: () => call('/inquire', { json: { token: bob.token, index: alice.indexId, prompt: 'what is in it?' } }),
          status: [404],
        },
        // --- the hosted API's forms (issue 20): token + index written together, names, subindex
        ...(['/inquire', '/inquire-stream'] as const).flatMap((path) => [
          {
            name: `POST ${path} with project_id = his token + her index name`,
            run: () => call(path, { json: { project_id: bob.token + alice.indexName, prompt: 'what is in it?' } }),
            status: [404],
            echoes: () => [alice.indexName],
          },
          {
            name: `POST ${path} with project_id = his token + her index_id`,
            run: () => call(path, { json: { project_id: bob.token + alice.indexId, prompt: 'what is in it?' } }),
            status: [404],
          },
          {
            name: `POST ${path} with project_id = her token's first 59 characters + her index name`,
            run: () =>
              call(path, {
                json: { project_id: alice.token.slice(0, 59) + alice.indexName, prompt: 'what is in it?' },
              }),
            status: [401],
          },
        ]),
        {
          name: 'POST /inquire with project_id on his index, her video in subindex',
          run: () =>
            call('/inquire', {
              json: { project_id: `${bob.token}bobs`, prompt: 'what is in it?', subindex: [bob.key, alice.key] },
            }),
          status: [404],
        },
        {
          name: 'POST /inquire on her index by name (his token)',
          run: () => call('/inquire', { json: { token: bob.token, index: alice.indexName, prompt: 'what is in it?' } }),
          status: [404],
          echoes: () => [alice.indexName],
        },
        {
          name: 'POST /api-pre-upload with his token + her index_id',
          run: () =>
            call('/api-pre-upload', { json: { index: bob.token + alice.indexId, filename: 'x.mp4', filesize: 1000 } }),
          status: [404],
        },
        {
          name: 'POST /remove-from-index of her video by her bare index name',
          run: () =>
            call('/remove-from-index', {
              json: { token: bob.token, project_id: alice.indexName, video_id: alice.key },
            }),
          status: [404],
          echoes: () => [alice.indexName],
        },
        {
          name: 'POST /remove-from-index of her video from his index by name',
          run: () =>
            call('/remove-from-index', { json: { token: bob.token, project_id: 'bobs', video_id: alice.key } }),
          status: [404],
        },
        {
          name: 'POST /inquire on his index with her target_video',
          run: () =>
            call('/inquire', {
              json: { token: bob.token, index: bob.indexId, prompt: 'what is in it?', target_video: alice.key },
            }),
          status: [404],
        },
        {
          name: 'POST /inquire on her index (his Bearer header, no token field)',
          run: () =>
            call('/inquire', {
              json: { index: alice.indexId, prompt: 'what is in it?' },
              headers: { authorization: `Bearer ${bob.token}` },
            }),
          status: [404],
        },
        {
          name: 'POST /inquire-stream on her index (his Bearer header, no token field)',
          run: () =>
            call('/inquire-stream', {
              json: { index: alice.indexId, prompt: 'what is in it?' },
              headers: { authorization: `Bearer ${bob.token}` },
            }),
          status: [404],
        },
        {
          name: 'POST /inquire-stream on her index',
          run: () =>
            call('/inquire-stream', { json: { token: bob.token, index: alice.indexId, prompt: 'what is in it?' } }),
          status: [404],
        },
        {
          name: 'POST /inquire-stream with her target_video',
          run: () =>
            call('/inquire-stream', {
              json: { token: bob.token, index: bob.indexId, prompt: 'what is in it?', target_video: alice.key },
            }),
          status: [404],
        },
        {
          name: 'POST /remove-from-index of her video from her index',
          run: () =>
            call('/remove-from-index', { json: { token: bob.token, project_id: alice.indexId, video_id: alice.key } }),
          status: [404],
        },
        {
          name: 'POST /remove-from-index of her video from his index',
          run: () =>
            call('/remove-from-index', { json: { token: bob.token, project_id: bob.indexId, video_id: alice.key } }),
          status: [404],
        },
        {
          name: 'GET /indexes with her user_id and his token',
          run: () => call(`/indexes?user_id=${alice.userId}&token=${bob.token}`),
          status: [403],
        },
        {
          name: 'GET /indexes with her user_id, include_deleted, his token',
          run: () => call(`/indexes?user_id=${alice.userId}&token=${bob.token}&include_deleted=true`),
          status: [403],
        },
        {
          name: 'GET /index-resources of her index (by id)',
          run: () => call(`/index-resources?token=${bob.token}&index=${alice.indexId}`),
          status: [404],
        },
        {
          name: 'GET /index-resources of her index (by name)',
          run: () => call(`/index-resources?token=${bob.token}&index=${alice.indexName}`),
          status: [404],
          echoes: () => [alice.indexName],
        },
        {
          name: 'GET /index-resources with her user_id',
          run: () => call(`/index-resources?token=${bob.token}&index=${bob.indexId}&user_id=${alice.userId}`),
          status: [403],
        },
        {
          name: 'DELETE /indexes/{her index}',
          run: () => call(`/indexes/${alice.indexId}?token=${bob.token}`, { method: 'DELETE' }),
          status: [404],
        },
        {
          name: 'POST /indexes/{her deleted index}/restore',
          run: () => call(`/indexes/${alice.deletedIndexId}/restore`, { json: { token: bob.token } }),
          status: [404],
        },
        {
          name: 'POST /indexes/{her index}/restore (Bearer)',
          run: () =>
            call(`/indexes/${alice.indexId}/restore`, {
              method: 'POST',
              headers: { authorization: `Bearer ${bob.token}` },
            }),
          status: [404],
        },
        {
          name: 'GET /media/{her file} with his token',
          run: () => call(`/media/${alice.key}?token=${bob.token}`),
          status: [404],
        },
        {
          name: 'GET /media/{her file} with his Bearer header',
          run: () => call(`/media/${alice.key}`, { headers: { authorization: `Bearer ${bob.token}` } }),
          status: [404],
        },
        {
          name: 'GET /media/{her file}/playback with his token',
          run: () => call(`/media/${alice.key}/playback?token=${bob.token}`),
          status: [404],
        },
        {
          name: 'GET /media/{her file}/frames/{n}.jpg with his token',
          run: () => call(`/media/${alice.key}/frames/${alice.frame}?token=${bob.token}`),
          status: [404],
        },
        {
          name: 'GET /videos/{her file}/segments with his token',
          run: () => call(`/videos/${alice.key}/segments?token=${bob.token}`),
          status: [404],
        },
        {
          name: 'GET /videos/{her file}/segments with his Bearer header',
          run: () => call(`/videos/${alice.key}/segments`, { headers: { authorization: `Bearer ${bob.token}` } }),
          status: [404],
        },
        {
          name: 'POST /videos/{her file}/reanalyze with his token',
          run: () => call(`/videos/${alice.key}/reanalyze`, { json: { token: bob.token } }),
          status: [404],
        },
        {
          name: 'POST /videos/{her file}/reanalyze with his Bearer header and a stage',
          run: () =>
            call(`/videos/${alice.key}/reanalyze`, {
              json: { analyzers: ['speech'] },
              headers: { authorization: `Bearer ${bob.token}` },
            }),
          status: [404],
        },
        {
          name: 'POST /videos/{her file in her deleted index}/reanalyze with her own token',
          run: () => call(`/videos/${alice.deletedKey}/reanalyze`, { json: { token: alice.token } }),
          status: [404],
        },
        // --- issue 14: direct upload, search, exports
        {
          name: "POST /upload into Alice's index (by id)",
          run: () =>
            call(`/upload?index=${alice.indexId}&file_name=x.mp4`, {
              method: 'POST',
              headers: { authorization: `Bearer ${bob.token}`, 'content-type': 'video/mp4' },
              body: Bun.file(clip('bottles.mp4')),
            }),
          status: [404],
        },
        {
          name: 'GET /search on her index (by id)',
          run: () => call(`/search?token=${bob.token}&index=${alice.indexId}&q=men`),
          status: [404],
        },
        {
          name: 'GET /search on her index (by name)',
          run: () => call(`/search?token=${bob.token}&index=${alice.indexName}&q=men`),
          status: [404],
          echoes: () => [alice.indexName],
        },
        {
          name: 'GET /search on his index with her video',
          run: () => call(`/search?token=${bob.token}&index=${bob.indexId}&q=men&video=${alice.key}`),
          status: [404],
        },
        {
          name: 'GET /videos/{her file}/transcript.vtt',
          run: () => call(`/videos/${alice.key}/transcript.vtt?token=${bob.token}`),
          status: [404],
        },
        {
          name: 'GET /videos/{her file}/transcript.srt (Bearer)',
          run: () => call(`/videos/${alice.key}/transcript.srt`, { headers: { authorization: `Bearer ${bob.token}` } }),
          status: [404],
        },
        {
          name: 'GET /videos/{her file}/insights.json',
          run: () => call(`/videos/${alice.key}/insights.json?token=${bob.token}`),
          status: [404],
        },
        {
          name: 'PUT /indexes/{her index}/webhook',
          run: () =>
            call(`/indexes/${alice.indexId}/webhook`, {
              method: 'PUT',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ token: bob.token, url: `${origin.url}/hook`, rotate_secret: true }),
            }),
          status: [404],
        },
        {
          name: 'GET /indexes/{her index}/people',
          run: () => call(`/indexes/${alice.facesIndexId}/people?token=${bob.token}`),
          status: [404],
        },
        {
          name: 'GET /indexes/{her index}/people/{her person}',
          run: () => call(`/indexes/${alice.facesIndexId}/people/${alice.personId}?token=${bob.token}`),
          status: [404],
        },
        {
          name: 'GET /indexes/{his index}/people/{her person}',
          run: () => call(`/indexes/${bob.indexId}/people/${alice.personId}?token=${bob.token}`),
          status: [404],
        },
        {
          name: 'GET her person thumbnail with his token',
          run: () => call(`/indexes/${alice.facesIndexId}/people/${alice.personId}/thumbnail?token=${bob.token}`),
          status: [404],
        },
        {
          name: "GET her person thumbnail with her link's signature on another path",
          run: () =>
            call(`/indexes/${bob.indexId}/people/${alice.personId}/thumbnail${new URL(alice.thumbnail).search}`),
          status: [403],
        },
        {
          name: 'PUT a name on her person',
          run: () =>
            call(`/indexes/${alice.facesIndexId}/people/${alice.personId}`, {
              method: 'PUT',
              json: { token: bob.token, name: 'Mallory' },
            }),
          status: [404],
        },
        {
          name: "POST /search (the SDK's shape) with his token + her index name as project_id",
          run: () =>
            call('/search', { json: { project_id: bob.token + alice.indexName, api: bob.token, query: 'men' } }),
          status: [404],
          echoes: () => [alice.indexName],
        },
        {
          name: 'POST /search with his token + her index_id as project_id',
          run: () => call('/search', { json: { project_id: bob.token + alice.indexId, api: bob.token, query: 'men' } }),
          status: [404],
        },
        {
          name: 'POST /search on his index with her video in subindex',
          run: () =>
            call('/search', { json: { project_id: bob.token + bob.indexId, query: 'men', subindex: [alice.key] } }),
          status: [404],
        },
        ...(['clipping', 'scene-detection', 'content-moderation'] as const).flatMap((flow) => [
          {
            name: `POST /core/${flow} on her index and video`,
            run: () =>
              call(`/core/${flow}`, {
                json: { token: bob.token, index: alice.indexId, video_id: alice.key, prompt: 'men' },
              }),
            status: [404],
          },
          {
            name: `POST /core/${flow} on his index with her video`,
            run: () =>
              call(`/core/${flow}`, {
                json: { token: bob.token, index: bob.indexId, video_id: alice.key, prompt: 'men' },
              }),
            status: [404],
          },
        ]),
        {
          name: 'POST /core/search on her index by name',
          run: () => call('/core/search', { json: { token: bob.token, index: alice.indexName, query: 'men' } }),
          status: [404],
          echoes: () => [alice.indexName],
        },
        {
          name: 'PUT a name on her person through his index',
          run: () =>
            call(`/indexes/${bob.indexId}/people/${alice.personId}`, {
              method: 'PUT',
              json: { token: bob.token, name: 'Mallory' },
            }),
          status: [404],
        },
        {
          name: 'POST merge of her person',
          run: () =>
            call(`/indexes/${alice.facesIndexId}/people/${alice.personId}/merge`, {
              json: { token: bob.token, into: alice.personId },
            }),
          status: [404],
        },
        {
          name: 'POST split of her person',
          run: () =>
            call(`/indexes/${alice.facesIndexId}/people/${alice.personId}/split`, {
              json: { token: bob.token, appearance_id: 1 },
            }),
          status: [404],
        },
      ];

      for (const p of probes) {
        test(p.name, async () => {
          const r = await p.run();
          expect(p.status).toContain(r.status);
          expect(r.body).toEqual({ error: r.status, message: expect.any(String) });
          expectNoLeak(r.text, p.echoes?.() ?? []);
        });
      }

      test("the hosted API's index calls do not see her indexes; /status of her file says only numbers", async () => {
        for (const index of [alice.indexName, alice.indexId]) {
          const r = await call('/does-group-exist', { json: { token: bob.token, index } });
          expect(r.body).toEqual({ exists: false });
        }
        // His index of her index's name is his own (a new, empty one), not hers.
        const mine = await call(`/create-index?token=${bob.token}&index=${alice.indexName}`);
        expect(mine.body).toMatchObject({ created: true, name: alice.indexName });
        expect(mine.body.index_id).not.toBe(alice.indexId);
        const listed = await call(`/index-resources?token=${bob.token}&index=${encodeURIComponent(alice.indexName)}`);
        expect(listed.body).toEqual([]);
        // Gone again (rows only: it never held anything), so that his listings below stay as they were.
        await writeCatalog(srv, 'DELETE FROM media_indexes WHERE id = ?', [mine.body.index_id]);
        // The SDK polls /status with the file id alone: a number list, nothing about the video.
        const st = await call(`/status?file_id=${alice.key}`);
        expect(Object.keys(st.body).sort()).toEqual(['stages', 'state', 'status']);
        expectNoLeak(st.text);
      });

      test("afterwards Alice's things are untouched and Bob's listings show none of them", async () => {
        // None of his refused questions was charged.
        expect((await srv.server.service.accounts.getUser(bob.userId))!.credits).toBe(20);
        const mine = await call(`/indexes?token=${alice.token}&include_deleted=true`);
        expect(mine.body.find((i: any) => i.index_id === alice.indexId)).toMatchObject({ deleted: false, count: 1 });
        expect(mine.body.find((i: any) => i.index_id === alice.deletedIndexId)).toMatchObject({ deleted: true });
        expect(
          (await call(`/index-resources?token=${alice.token}&index=${alice.indexId}`)).body.map((v: any) => v.file_id),
        ).toEqual([alice.key]);
        expect(
          (await call(`/media/${alice.key}?token=${alice.token}`, { headers: { range: 'bytes=0-15' } })).status,
        ).toBe(206);
        expect((await call(`/media/${alice.key}/frames/${alice.frame}?token=${alice.token}`)).status).toBe(200);
        expect((await call(`/videos/${alice.key}/segments?token=${alice.token}`)).status).toBe(200);
        const person = await call(`/indexes/${alice.facesIndexId}/people/${alice.personId}?token=${alice.token}`);
        expect(person.body).toMatchObject({ person_id: alice.personId, name: null, appearance_count: 1 });
        expect((await call(`/indexes/${bob.indexId}/people?token=${bob.token}`)).body).toEqual([]);
        const his = await call(`/indexes?token=${bob.token}&include_deleted=true`);
        expect(his.body.map((i: any) => i.index_id)).toEqual([bob.indexId]);
        expectNoLeak(his.text);
        expectNoLeak((await call(`/index-resources?token=${bob.token}&index=${bob.indexId}`)).text);
        // Bob's own question never cites Alice's video.
        const q = await call('/inquire', {
          json: { token: bob.token, index: bob.indexId, prompt: 'what is shown on screen?' },
        });
        expect(q.status).toBe(200);
        expectNoLeak(q.text);
        expect(q.body.evidence.every((e: any) => e.video_id === bob.key)).toBe(true);
      });
    });

    describe('signed media links', () => {
      const srcOf = async (token: string, index: string, key: string) =>
        (await call(`/index-resources?token=${token}&index=${index}`)).body.find((v: any) => v.file_id === key)
          .src as string;
      const pathAndQuery = (u: string) => {
        const x = new URL(u, srv.url);
        return { path: x.pathname, expires: x.searchParams.get('expires')!, sig: x.searchParams.get('sig')! };
      };

      test('a tampered, moved or partial signature is refused (403)', async () => {
        const src = pathAndQuery(await srcOf(alice.token, alice.indexId, alice.key));
        const bobs = pathAndQuery(await srcOf(bob.token, bob.indexId, bob.key));
        const frame = pathAndQuery(alice.frameUrl);
        const flip = (s: string) => (s[0] === 'A' ? 'B' : 'A') + s.slice(1);
        const refused = [
          `${src.path}?expires=${src.expires}&sig=${flip(src.sig)}`, // one character changed
          `${src.path}?expires=${Number(src.expires) + 3600}&sig=${src.sig}`, // lifetime extended
          `${src.path}?expires=${src.expires}&sig=${src.sig.slice(0, -1)}`, // truncated
          `${src.path}?expires=${src.expires}`, // no signature
          `${src.path}?sig=${src.sig}`, // no expiry
          `/media/${alice.key}?expires=${bobs.expires}&sig=${bobs.sig}`, // Bob's signature on Alice's file
          `${frame.path.replace(/\d{6}\.jpg$/, '000999.jpg')}?expires=${frame.expires}&sig=${frame.sig}`, // another frame
          `/media/${alice.key}?expires=${frame.expires}&sig=${frame.sig}`, // a frame's signature on the video
        ];
        for (const u of refused) {
          const r = await call(u);
          expect(r.status).toBe(403);
          expect(r.body).toEqual({ error: 403, message: expect.stringContaining('not valid') });
        }
      });

      test(`links expire after --media-link-ttl-sec (${TTL_SEC} s), then answer 403`, async () => {
        const src = await srcOf(alice.token, alice.indexId, alice.key);
        const { expires } = pathAndQuery(src);
        // The expiry is the lifetime from now, rounded up by at most a tenth of it (at least 1 s).
        expect(Number(expires)).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + TTL_SEC + 1);
        expect(
          (await call(new URL(src).pathname + new URL(src).search, { headers: { range: 'bytes=0-15' } })).status,
        ).toBe(206);
        const frameUrl = (await call(`/videos/${alice.key}/segments?token=${alice.token}`)).body.frames[0]
          .url as string;
        expect((await call(new URL(frameUrl, srv.url).pathname + new URL(frameUrl, srv.url).search)).status).toBe(200);
        const last = Math.max(Number(expires), Number(pathAndQuery(frameUrl).expires));
        while (Date.now() <= last * 1000 + 50) await Bun.sleep(100);
        for (const u of [src, frameUrl]) {
          const x = new URL(u, srv.url);
          const r = await call(x.pathname + x.search);
          expect(r.status).toBe(403);
          expect(r.body).toEqual({ error: 403, message: expect.stringContaining('expired') });
        }
      });
    });

    describe('tokens stay secret', () => {
      test('no token (nor its SHA-256) appears in the debug log or in any response', async () => {
        const wrong = 'W'.repeat(64);
        // A mix of failing and succeeding requests, tokens in bodies, queries and headers.
        await call(`/indexes?token=${alice.token}&include_deleted=maybe`);
        await call(`/indexes?token=${wrong}`);
        await call(`/index-resources?token=${bob.token}&index=${alice.indexId}`);
        await call('/inquire', { json: { token: alice.token, index: alice.indexId, prompt: 'what is happening?' } });
        await call('/inquire', { json: { token: alice.token, index: alice.indexId, prompt: 'x', target: 'soon' } });
        await call('/inquire-stream', { json: { token: bob.token, index: bob.indexId, prompt: 'what is happening?' } });
        await call('/remote-upload', { json: { token: alice.token, index: 'logs', url: `${origin.url}/status/500` } });
        await call('/remote-upload', {
          json: { token: alice.token, index: 'logs', url: `http://user:${alice.token}@127.0.0.1:1/a.mp4` },
        });
        await call('/remote-upload', {
          json: { token: alice.token, index: 'logs', url: `${origin.url}/media/jfk-speech.wav?token=${alice.token}` },
        });
        await call('/remote-upload', {
          json: { token: bob.token, index: 'logs', url: `${origin.url}/media/bottles.mp4` },
        });
        await call(`/media/${alice.key}`, { headers: { authorization: `Bearer ${alice.token}` } });
        await call(`/media/${alice.key}?token=${bob.token}`);
        await call(`/videos/${alice.key}/segments`, { headers: { authorization: `Bearer ${alice.token}` } });
        await call('/remove-from-index', { json: { token: bob.token, project_id: bob.indexId, video_id: 'nope' } });
        await call(`/indexes/${alice.indexId}?token=${wrong}`, { method: 'DELETE' });
        await call(`/nope?token=${alice.token}`);

        const log = logLines.join('\n');
        // The log did capture the requests (at debug), so the search below means something.
        expect(logLines.filter((l) => JSON.parse(l).msg === 'request').length).toBeGreaterThan(10);
        expect(log).toContain('"path":"/inquire"');
        expect(log).toContain('upload failed');
        expect(log).toContain('"msg":"job finished"'); // the analysis worker's lines are in it too
        const everything = [log, ...bodies].join('\n');
        for (const token of [alice.token, bob.token, wrong]) {
          expect(everything).not.toContain(token);
          expect(everything).not.toContain(createHash('sha256').update(token).digest('hex'));
          expect(everything).not.toContain(createHash('sha256').update(token).digest('base64url'));
        }
      });
    });
  });
