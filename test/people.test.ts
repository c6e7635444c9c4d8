/**
 * Faces → people through the real server and a real analysis worker (visual + faces analyzers on
 * real clips): grouping on GRID (ten people, the man at 6 s and 21 s one of them), talking-head
 * (one), a clip cut in the test from GRID shots in the order A B A C B (three, A and B recurring);
 * naming, merge, split, isolation between indexes and users, removal and purge.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveBinaries } from '../src/media/binaries';
import { checkInvariants } from './hardening/invariants';
import { userWithToken, waitIndexReady } from './factories';
import {
  clip,
  getJson,
  postJson,
  readEvents,
  startOrigin,
  startTestServer,
  type Origin,
  type TestServer,
} from './helpers';

let srv: TestServer;
let origin: Origin;
let made: ReturnType<typeof Bun.serve>;
let workDir: string;
const idx: Record<string, string> = {};
const keys: Record<string, string> = {};

/** GRID shots (3 s each): A = 0–3, B = 6–9 (the man who comes back at 21–24), C = 12–15. */
async function makeAbacb(dir: string): Promise<string> {
  const { ffmpeg } = await resolveBinaries(join(dir, 'bin'));
  const out = join(dir, 'abacb.mp4');
  const parts = [
    [0, 3],
    [6, 9],
    [0, 3],
    [12, 15],
    [21, 24],
  ];
  const filter =
    parts.map(([a, b], i) => `[0:v]trim=${a}:${b},setpts=PTS-STARTPTS[v${i}]`).join(';') +
    ';' +
    parts.map((_, i) => `[v${i}]`).join('') +
    `concat=n=${parts.length}:v=1:a=0[out]`;
  const p = Bun.spawn(
    [
      ffmpeg,
      '-hide_banner',
      '-loglevel',
      'error',
      '-y',
      '-i',
      clip('grid-speakers-33s.mp4'),
      '-filter_complex',
      filter,
      '-map',
      '[out]',
      '-c:v',
      'libx264',
      '-preset',
      'veryfast',
      out,
    ],
    { stderr: 'pipe' },
  );
  if ((await p.exited) !== 0) throw new Error(await new Response(p.stderr).text());
  return out;
}

async function upload(index: string, url: string, token = srv.token): Promise<string> {
  const r = await postJson(srv.url, '/remote-upload', { token, index, url });
  expect(r.status).toBe(200);
  return r.body.data.key;
}

const peopleOf = async (index: string, token = srv.token) =>
  getJson(srv.url, `/indexes/${index}/people?token=${token}`);
const personOf = async (index: string, id: string) =>
  (await getJson(srv.url, `/indexes/${index}/people/${id}?token=${srv.token}`)).body;
const put = async (path: string, body: unknown) => {
  const res = await fetch(srv.url + path, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
};
/** The person whose appearances cover second t of the video. */
const whoAt = (people: any[], details: Map<string, any>, video: string, t: number) =>
  people.find((p) =>
    details.get(p.person_id).appearances.some((a: any) => a.video_id === video && a.start <= t && t <= a.end),
  )?.person_id;

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'vidq-people-'));
  const abacb = await makeAbacb(workDir);
  made = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response(Bun.file(abacb)) });
  origin = startOrigin();
  srv = await startTestServer({ 'analysis-workers': '1', analyzers: 'visual,faces' });
  keys.grid = await upload('grid', `${origin.url}/media/grid-speakers-33s.mp4`);
  keys.talk = await upload('talk', `${origin.url}/media/talking-head.mp4`);
  keys.abacb = await upload('mix', `http://127.0.0.1:${made.port}/abacb.mp4`);
  // Both in one index: the cut's people must join GRID's (across videos).
  keys.bothGrid = await upload('both', `${origin.url}/media/grid-speakers-33s.mp4`);
  keys.bothCut = await upload('both', `http://127.0.0.1:${made.port}/abacb.mp4`);
  for (const i of (await getJson(srv.url, `/indexes?token=${srv.token}`)).body) idx[i.name] = i.index_id;
  // Every index ready, within one deadline for all.
  const end = Date.now() + 170_000;
  for (const id of Object.values(idx)) await waitIndexReady(srv, id, { timeoutMs: end - Date.now() });
}, 200_000);

afterAll(async () => {
  await srv?.stop();
  origin?.stop();
  made?.stop(true);
  rmSync(workDir, { recursive: true, force: true });
});

describe('grouping faces into people', () => {
  test('GRID: ten people, the man at 6–9 s and at 21–24 s is one of them', async () => {
    const { status, body } = await peopleOf(idx.grid!);
    expect(status).toBe(200);
    expect(body.length).toBe(10);
    const details = new Map<string, any>();
    for (const p of body) details.set(p.person_id, await personOf(idx.grid!, p.person_id));
    const at = (t: number) => whoAt(body, details, keys.grid!, t);
    expect(at(7.5)).toBeDefined();
    expect(at(22.5)).toBe(at(7.5));
    // Every other shot is someone else, seen once.
    const others = [1.5, 4.5, 10.5, 13.5, 16.5, 19.5, 25.5, 28.5, 31.5].map(at);
    expect(new Set([...others, at(7.5)]).size).toBe(10);
    const man = body.find((p: any) => p.person_id === at(7.5));
    expect(man.appearance_count).toBe(2);
    expect(man.videos).toEqual([keys.grid]);
    expect(man.seconds).toBeGreaterThan(5);
  });

  test('talking-head: one person', async () => {
    const { body } = await peopleOf(idx.talk!);
    expect(body.length).toBe(1);
    expect(body[0].seconds).toBeGreaterThan(7);
  });

  test('A B A C B cut from GRID: three people, A and B recurring', async () => {
    const { body } = await peopleOf(idx.mix!);
    expect(body.length).toBe(3);
    const details = new Map<string, any>();
    for (const p of body) details.set(p.person_id, await personOf(idx.mix!, p.person_id));
    const [a1, b1, a2, c, b2] = [1.5, 4.5, 7.5, 10.5, 13.5].map((t) => whoAt(body, details, keys.abacb!, t));
    expect(a1).toBe(a2);
    expect(b1).toBe(b2);
    expect(new Set([a1, b1, c]).size).toBe(3);
  });

  test('across videos: GRID and the A B A C B cut in one index are still ten people (pairwise precision/recall 1)', async () => {
    const { body } = await peopleOf(idx.both!);
    const details = new Map<string, any>();
    for (const p of body) details.set(p.person_id, await personOf(idx.both!, p.person_id));
    // Who each appearance truly is: GRID shot k is person k, except shot 7 (21–24 s), the man of shot 2.
    const gridWho = (t: number) => (Math.floor(t / 3) === 7 ? 2 : Math.floor(t / 3));
    const cutWho = (t: number) => [0, 2, 0, 4, 2][Math.floor(t / 3)]!;
    const apps = [...details.values()].flatMap((d) =>
      d.appearances.map((a: any) => ({
        person: d.person_id,
        truth: (a.video_id === keys.bothGrid ? gridWho : cutWho)((a.start + a.end) / 2),
      })),
    );
    expect(apps.length).toBe(16);
    let tp = 0;
    let fp = 0;
    let fn = 0;
    for (let i = 0; i < apps.length; i++)
      for (let j = i + 1; j < apps.length; j++) {
        const same = apps[i]!.person === apps[j]!.person;
        const truly = apps[i]!.truth === apps[j]!.truth;
        if (same && truly) tp++;
        else if (same) fp++;
        else if (truly) fn++;
      }
    console.log(
      `people grouping over GRID + A B A C B (16 appearances, 10 people): pairwise precision ${(tp / (tp + fp)).toFixed(3)}, recall ${(tp / (tp + fn)).toFixed(3)} (${tp} same-person pairs found, ${fp} wrong, ${fn} missed)`,
    );
    expect(fp).toBe(0);
    expect(fn).toBe(0);
    expect(body.length).toBe(10);
  });

  test('the thumbnail is a JPEG of the face, by signed link or token; a bad signature is refused', async () => {
    const { body } = await peopleOf(idx.talk!);
    const res = await fetch(body[0].thumbnail_url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/jpeg');
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect([bytes[0], bytes[1]]).toEqual([0xff, 0xd8]);
    const bad = await fetch(body[0].thumbnail_url.replace(/sig=[^&]+/, 'sig=AAAA'));
    expect(bad.status).toBe(403);
    expect(((await bad.json()) as any).error).toBe(403);
  });
});

describe('naming, merge and split', () => {
  test('a name is kept, trimmed, and removed with null; nothing else changes', async () => {
    const [p] = (await peopleOf(idx.talk!)).body;
    const named = await put(`/indexes/${idx.talk}/people/${p.person_id}`, { token: srv.token, name: '  Anna   Berg ' });
    expect(named.status).toBe(200);
    expect(named.body.name).toBe('Anna Berg');
    expect((await peopleOf(idx.talk!)).body[0].name).toBe('Anna Berg');
    const cleared = await put(`/indexes/${idx.talk}/people/${p.person_id}`, { token: srv.token, name: null });
    expect(cleared.body.name).toBeNull();
    const after = (await peopleOf(idx.talk!)).body;
    expect(after.length).toBe(1);
    expect(after[0].appearance_count).toBe(p.appearance_count);
  });

  test('bad names are refused with the error shape and change nothing', async () => {
    const [p] = (await peopleOf(idx.talk!)).body;
    for (const name of ['   ', 'x'.repeat(101), 42]) {
      const r = await put(`/indexes/${idx.talk}/people/${p.person_id}`, { token: srv.token, name });
      expect(r.status).toBe(400);
      expect(r.body.error).toBe(400);
      expect(r.body.message).toContain('name');
    }
    expect((await peopleOf(idx.talk!)).body[0].name).toBeNull();
  });

  test('split moves one appearance out; merge brings it back and keeps the only name', async () => {
    const { body } = await peopleOf(idx.grid!);
    const man = body.find((p: any) => p.appearance_count === 2);
    const detail = await personOf(idx.grid!, man.person_id);
    const second = detail.appearances[1];
    const split = await postJson(srv.url, `/indexes/${idx.grid}/people/${man.person_id}/split`, {
      token: srv.token,
      appearance_id: second.appearance_id,
    });
    expect(split.status).toBe(200);
    expect(split.body.appearance_count).toBe(1);
    expect((await peopleOf(idx.grid!)).body.length).toBe(11);
    // The only appearance cannot be split from itself.
    const again = await postJson(srv.url, `/indexes/${idx.grid}/people/${split.body.person_id}/split`, {
      token: srv.token,
      appearance_id: second.appearance_id,
    });
    expect(again.status).toBe(400);
    await put(`/indexes/${idx.grid}/people/${split.body.person_id}`, { token: srv.token, name: 'Bram' });
    const merged = await postJson(srv.url, `/indexes/${idx.grid}/people/${split.body.person_id}/merge`, {
      token: srv.token,
      into: man.person_id,
    });
    expect(merged.status).toBe(200);
    expect(merged.body.person_id).toBe(man.person_id);
    expect(merged.body.appearance_count).toBe(2);
    expect(merged.body.name).toBe('Bram');
    const list = (await peopleOf(idx.grid!)).body;
    expect(list.length).toBe(10);
    expect(
      (await getJson(srv.url, `/indexes/${idx.grid}/people/${split.body.person_id}?token=${srv.token}`)).status,
    ).toBe(404);
  });

  test('merging into itself or into a person of another index is refused', async () => {
    const [g] = (await peopleOf(idx.grid!)).body;
    const [tk] = (await peopleOf(idx.talk!)).body;
    const self = await postJson(srv.url, `/indexes/${idx.grid}/people/${g.person_id}/merge`, {
      token: srv.token,
      into: g.person_id,
    });
    expect(self.status).toBe(400);
    const cross = await postJson(srv.url, `/indexes/${idx.grid}/people/${g.person_id}/merge`, {
      token: srv.token,
      into: tk.person_id,
    });
    expect(cross.status).toBe(404);
    expect(cross.body.message).toContain('into');
    expect((await peopleOf(idx.grid!)).body.length).toBe(10);
  });
});

describe('questions about people through /inquire and /inquire-stream', () => {
  const ask = async (index: string, prompt: string, extra: Record<string, string> = {}) => {
    const r = await postJson(srv.url, '/inquire', { token: srv.token, index, prompt, ...extra });
    expect(r.status).toBe(200);
    // Every m:ss in the answer is the start or end of a cited item.
    for (const m of r.body.output.matchAll(/\b(\d+):(\d\d)\b/g)) {
      const t = Number(m[1]) * 60 + Number(m[2]);
      expect(r.body.evidence.some((e: any) => Math.floor(e.start) === t || Math.floor(e.end) === t)).toBe(true);
    }
    return r.body as { output: string; evidence: any[] };
  };

  test('how many different people: ten on GRID, told apart by faces', async () => {
    const a = await ask(idx.grid!, 'How many different people appear in this video?');
    expect(a.output).toMatch(/\b10 different people\b/);
    expect(a.evidence.filter((e) => e.kind === 'face').length).toBe(10);
  });

  test('when does <name> appear, which videos show them, who is on screen at a moment', async () => {
    // "Bram" was given to the GRID man by the merge test above.
    const when = await ask(idx.grid!, 'When does Bram appear?');
    expect(when.output).toContain('Bram appears 2 times');
    expect(when.evidence.map((e) => Math.round(e.start))).toEqual([6, 21]);
    const which = await ask(idx.grid!, 'Which videos show Bram?');
    expect(which.evidence.every((e) => e.file_name === 'grid-speakers-33s.mp4')).toBe(true);
    expect(which.output).toContain('in 1 video: in grid-speakers-33s.mp4');
    const is = await ask(idx.grid!, 'Is Bram in this video?', { target_video: keys.grid! });
    expect(is.output).toContain('Bram appears');
    const who = await ask(idx.grid!, 'Who is on screen at this moment?', { target_video: keys.grid!, target: '0:22' });
    expect(who.output).toContain('Bram');
    const other = await ask(idx.grid!, 'Who is on screen?', { target_video: keys.grid!, target: '0:01' });
    expect(other.output).not.toContain('Bram');
    expect(other.output).toContain('unnamed person');
  });

  test('an unknown name is "not found", and says who is named', async () => {
    const a = await ask(idx.grid!, 'When does Zelda appear?');
    expect(a.output).toContain('could not find anyone named "Zelda"');
    expect(a.output).toContain('Bram');
    expect(a.evidence).toEqual([]);
  });

  test('the person from the start appears again (A B A C B: at 0:06)', async () => {
    const a = await ask(idx.mix!, 'When does the person from the start appear again?');
    expect(a.output).toMatch(/appears again at 0:0[56]/);
    expect(a.evidence.map((e) => Math.round(e.start))).toEqual([0, 6]);
  });

  test('/inquire-stream answers the same, with the appearances as evidence', async () => {
    const res = await fetch(`${srv.url}/inquire-stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: srv.token, index: idx.grid, prompt: 'When does Bram appear?' }),
    });
    expect(res.status).toBe(200);
    const events = await readEvents(res);
    expect(events[0].type).toBe('evidence');
    expect(events[0].evidence.map((e: any) => e.kind)).toEqual(['face', 'face']);
    const done = events.at(-1);
    expect(done.type).toBe('complete');
    expect(done.output).toContain('Bram appears 2 times');
    expect(
      events
        .filter((e) => e.type === 'token')
        .map((e) => e.text)
        .join(''),
    ).toBe(done.output);
  });
});

describe('the OpenAPI document', () => {
  test('describes the people endpoints, with operation ids, integer ids and their error statuses', async () => {
    const doc = (await getJson(srv.url, '/openapi.json')).body;
    const ops = {
      '/indexes/{index_id}/people': { get: 'listPeople' },
      '/indexes/{index_id}/people/{person_id}': { get: 'getPerson', put: 'namePerson' },
      '/indexes/{index_id}/people/{person_id}/merge': { post: 'mergePeople' },
      '/indexes/{index_id}/people/{person_id}/split': { post: 'splitPerson' },
      '/indexes/{index_id}/people/{person_id}/thumbnail': { get: 'personThumbnail' },
    } as Record<string, Record<string, string>>;
    for (const [path, methods] of Object.entries(ops)) {
      for (const [method, id] of Object.entries(methods)) {
        const op = doc.paths[path]?.[method];
        expect(op?.operationId).toBe(id);
        expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '401', '404']));
      }
    }
    const ref =
      doc.paths['/indexes/{index_id}/people/{person_id}/split'].post.requestBody.content['application/json'].schema;
    const split = ref.$ref ? doc.components.schemas[ref.$ref.split('/').pop()] : ref;
    expect(split.properties.appearance_id.type).toBe('integer');
    const put = doc.paths['/indexes/{index_id}/people/{person_id}'].put;
    expect(Object.keys(put.responses)).toContain('400');
  });
});

describe('isolation, removal and purge', () => {
  test('indexes never share people; another user sees none of them', async () => {
    const ids = await Promise.all(
      ['grid', 'talk', 'mix'].map(async (n) => (await peopleOf(idx[n]!)).body.map((p: any) => p.person_id)),
    );
    const all = ids.flat();
    expect(new Set(all).size).toBe(all.length);
    const other = await userWithToken(srv, 'other');
    const [g] = (await peopleOf(idx.grid!)).body;
    for (const path of [
      `/indexes/${idx.grid}/people`,
      `/indexes/${idx.grid}/people/${g.person_id}`,
      `/indexes/${idx.grid}/people/${g.person_id}/thumbnail`,
    ]) {
      const r = await getJson(srv.url, `${path}?token=${other.token}`);
      expect(r.status).toBe(404);
      expect(JSON.stringify(r.body)).not.toContain(g.person_id);
    }
    const rename = await put(`/indexes/${idx.grid}/people/${g.person_id}`, { token: other.token, name: 'Mallory' });
    expect(rename.status).toBe(404);
    // The person of one index is not found through another of the same user.
    expect((await getJson(srv.url, `/indexes/${idx.talk}/people/${g.person_id}?token=${srv.token}`)).status).toBe(404);
  });

  test('removing a video removes its appearances and the people left without any', async () => {
    const r = await postJson(srv.url, '/remove-from-index', {
      token: srv.token,
      project_id: idx.talk,
      video_id: keys.talk,
    });
    expect(r.status).toBe(200);
    expect((await peopleOf(idx.talk!)).body).toEqual([]);
    const db = new Database(join(srv.dataDir, 'vidq.db'), { readonly: true });
    try {
      expect(db.query('SELECT count(*) AS n FROM people WHERE index_id = ?').get(idx.talk!)).toEqual({ n: 0 });
    } finally {
      db.close();
    }
  });

  test('purging an index purges its people', async () => {
    const del = await fetch(`${srv.url}/indexes/${idx.mix}?token=${srv.token}`, { method: 'DELETE' });
    expect(del.status).toBe(200);
    expect((await peopleOf(idx.mix!)).status).toBe(404);
    await srv.server.service.maintenance.purge(new Date(Date.now() + 30 * 86_400_000));
    const db = new Database(join(srv.dataDir, 'vidq.db'), { readonly: true });
    try {
      expect(db.query('SELECT count(*) AS n FROM people WHERE index_id = ?').get(idx.mix!)).toEqual({ n: 0 });
      expect(db.query('SELECT count(*) AS n FROM person_appearances WHERE index_id = ?').get(idx.mix!)).toEqual({
        n: 0,
      });
    } finally {
      db.close();
    }
    expect((await checkInvariants(srv.dataDir)).violations).toEqual([]);
  });
});
