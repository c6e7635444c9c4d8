/**
 * Search moments and exports on really analysed clips, through the real server: GET /search
 * (ranking, paging, filters, free of charge, isolation) and GET /videos/{id}/transcript.vtt|.srt
 * and insights.json. The transcript comes from the Whisper code path with the tests' own tiny
 * Whisper (test/analysis/tiny-whisper.ts: every speech span reads "hello world").
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TINY_WHISPER_TEXT, writeTinyWhisper } from './analysis/tiny-whisper';
import { clip, getJson, postJson, startTestServer, type TestServer } from './helpers';
import { userWithToken, waitIndexReady, waitVideoReady } from './factories';

let srv: TestServer;
const modelsDir = mkdtempSync(join(tmpdir(), 'vidq-moments-models-'));
const keys: Record<string, string> = {};
let other: { token: string; userId: string };

async function uploadAs(token: string, index: string, name: string): Promise<string> {
  const res = await fetch(`${srv.url}/upload?index=${index}&file_name=${name}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'video/mp4' },
    body: readFileSync(clip(name)),
  });
  const body = (await res.json()) as any;
  if (res.status !== 200) throw new Error(JSON.stringify(body));
  return body.data.key;
}

beforeAll(async () => {
  writeTinyWhisper(modelsDir, 'tests/tiny-whisper');
  srv = await startTestServer({
    'analysis-workers': '1',
    analyzers: 'visual,ocr,speech,embeddings',
    'models-dir': modelsDir,
    stt: 'whisper',
    'whisper-model': 'tests/tiny-whisper',
  });
  for (const c of ['big-buck-bunny-intro.webm', 'speech-over-bottles.mp4', 'birthday-no-audio.mp4'])
    keys[c] = await uploadAs(srv.token, 'moments', c);
  await waitIndexReady(srv, 'moments', { timeoutMs: 200_000, intervalMs: 300 });
  other = await userWithToken(srv, 'limited', 3);
}, 240_000);
afterAll(async () => {
  await srv.stop();
  rmSync(modelsDir, { recursive: true, force: true });
});

const search = (params: Record<string, string>, token = srv.token) =>
  getJson(srv.url, '/search?' + new URLSearchParams(params).toString(), { authorization: `Bearer ${token}` });

describe('GET /search', () => {
  test('ranks the moment whose words match first, with its video, span, frame and why it matched', async () => {
    const r = await search({ index: 'moments', q: 'open movie project' });
    expect(r.status).toBe(200);
    expect(r.body.credits_used).toBe(0);
    const top = r.body.moments[0];
    expect(top).toMatchObject({
      video_id: keys['big-buck-bunny-intro.webm'],
      file_name: 'big-buck-bunny-intro.webm',
      kind: 'ocr',
    });
    expect(top.text.toLowerCase()).toContain('open movie project');
    // "THE PEACH OPEN MOVIE PROJECT PRESENTS" is on screen from about 20 s to 22 s (MANIFEST.md).
    expect(top.start).toBeGreaterThan(18);
    expect(top.end).toBeLessThan(25);
    expect(['keyword', 'both']).toContain(top.matched);
    expect(top.frame_url).toMatch(/^\/media\/.+\/frames\/.+\?expires=\d+&sig=/);
    const frame = await fetch(srv.url + top.frame_url);
    expect(frame.status).toBe(200);
    expect(frame.headers.get('content-type')).toContain('image/jpeg');
    for (let i = 1; i < r.body.moments.length; i++)
      expect(r.body.moments[i].score).toBeLessThanOrEqual(r.body.moments[i - 1].score);
  });

  test('pages through the ranked moments with limit and offset', async () => {
    const all = await search({ index: 'moments', q: 'hello world peach trees', limit: '50' });
    expect(all.body.total).toBeGreaterThan(3);
    const p1 = await search({ index: 'moments', q: 'hello world peach trees', limit: '2' });
    expect(p1.body.moments).toHaveLength(2);
    expect(p1.body.next_offset).toBe(2);
    const p2 = await search({ index: 'moments', q: 'hello world peach trees', limit: '2', offset: '2' });
    expect(p2.body.offset).toBe(2);
    const seen = (m: any) => `${m.video_id}:${m.kind}:${m.start}:${m.text}`;
    expect([...p1.body.moments, ...p2.body.moments].map(seen)).toEqual(all.body.moments.slice(0, 4).map(seen));
    const last = await search({
      index: 'moments',
      q: 'hello world peach trees',
      limit: '2',
      offset: String(all.body.total - 1),
    });
    expect(last.body.moments).toHaveLength(1);
    expect(last.body.next_offset).toBeNull();
  });

  test('narrows to one video and to kinds', async () => {
    const speech = keys['speech-over-bottles.mp4']!;
    const one = await search({ index: 'moments', q: 'hello world', video: speech });
    expect(one.body.moments.length).toBeGreaterThan(0);
    expect(one.body.moments.every((m: any) => m.video_id === speech)).toBe(true);
    expect(one.body.moments[0]).toMatchObject({ kind: 'transcript', text: TINY_WHISPER_TEXT });
    const shots = await search({ index: 'moments', q: 'trees meadow sky', kinds: 'shot,ocr' });
    expect(shots.body.moments.every((m: any) => m.kind === 'shot' || m.kind === 'ocr')).toBe(true);
  });

  test('is free: balances and the credit ledger do not move; a question still costs one', async () => {
    await uploadAs(other.token, 'mine', 'chaplin-bw.mp4');
    const events = () =>
      (
        srv.server.service.db.$client
          .query('SELECT count(*) AS n FROM credit_events WHERE user_id = ?')
          .get(other.userId) as { n: number }
      ).n;
    const before = events();
    for (let i = 0; i < 3; i++)
      expect((await search({ index: 'mine', q: 'two men talking' }, other.token)).status).toBe(200);
    expect((await srv.server.service.accounts.getUser(other.userId))!.credits).toBe(3);
    expect(events()).toBe(before);
    const idx = (await getJson(srv.url, `/indexes?token=${other.token}`)).body[0].index_id;
    expect(
      (await postJson(srv.url, '/inquire', { token: other.token, index: idx, prompt: 'what happens?' })).status,
    ).toBe(200);
    expect((await srv.server.service.accounts.getUser(other.userId))!.credits).toBe(2);
  });

  test("validates its parameters, and another user's index or video is 404", async () => {
    expect((await search({ index: 'moments', q: '  ' })).status).toBe(400);
    const bads: Record<string, string>[] = [
      { limit: '0' },
      { limit: '51' },
      { limit: 'ten' },
      { offset: '-1' },
      { kinds: 'shot,faces' },
    ];
    for (const bad of bads) {
      const r = await search({ index: 'moments', q: 'x', ...bad });
      expect(r.status).toBe(400);
      expect(r.body.error).toBe(400);
    }
    expect((await getJson(srv.url, '/search?index=moments&q=x')).status).toBe(401);
    expect((await search({ index: 'moments', q: 'peach' }, other.token)).status).toBe(404);
    const id = (await getJson(srv.url, `/indexes?token=${srv.token}`)).body.find(
      (i: any) => i.name === 'moments',
    ).index_id;
    expect((await search({ index: id, q: 'peach' }, other.token)).body).toMatchObject({ error: 404 });
    expect((await search({ index: 'moments', q: 'peach', video: 'x'.repeat(32) })).status).toBe(404);
  });
});

/** Parses WebVTT strictly enough to catch a broken file: header, numbered cues, ordered valid times. */
function parseVtt(text: string): { start: number; end: number; text: string }[] {
  expect(text.startsWith('WEBVTT\n\n')).toBe(true);
  const t = (s: string) => {
    const m = /^(\d{2}):(\d{2}):(\d{2})\.(\d{3})$/.exec(s)!;
    expect(m).not.toBeNull();
    return Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]) + Number(m[4]) / 1000;
  };
  return text
    .slice(8)
    .trim()
    .split('\n\n')
    .map((block) => {
      const [id, timing, ...lines] = block.split('\n');
      expect(id).toMatch(/^\d+$/);
      const [a, b] = timing!.split(' --> ');
      const cue = { start: t(a!), end: t(b!), text: lines.join('\n') };
      expect(cue.end).toBeGreaterThan(cue.start);
      expect(cue.text).not.toContain('-->');
      return cue;
    });
}

function parseSrt(text: string): { start: number; end: number; text: string }[] {
  const t = (s: string) => {
    const m = /^(\d{2}):(\d{2}):(\d{2}),(\d{3})$/.exec(s)!;
    expect(m).not.toBeNull();
    return Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]) + Number(m[4]) / 1000;
  };
  return text
    .trim()
    .split('\n\n')
    .map((block, i) => {
      const [n, timing, ...lines] = block.split('\n');
      expect(n).toBe(String(i + 1));
      const [a, b] = timing!.split(' --> ');
      return { start: t(a!), end: t(b!), text: lines.join('\n') };
    });
}

describe('exports', () => {
  test('transcript.vtt and transcript.srt parse, in time order, with the transcribed text', async () => {
    const id = keys['speech-over-bottles.mp4']!;
    const vtt = await fetch(`${srv.url}/videos/${id}/transcript.vtt?download=true`, {
      headers: { authorization: `Bearer ${srv.token}` },
    });
    expect(vtt.status).toBe(200);
    expect(vtt.headers.get('content-type')).toContain('text/vtt');
    expect(vtt.headers.get('content-disposition')).toContain('speech-over-bottles.vtt');
    const cues = parseVtt(await vtt.text());
    expect(cues.length).toBeGreaterThan(0);
    expect(cues.every((c) => c.text === TINY_WHISPER_TEXT)).toBe(true);
    for (let i = 1; i < cues.length; i++) expect(cues[i]!.start).toBeGreaterThanOrEqual(cues[i - 1]!.start);
    const srt = await fetch(`${srv.url}/videos/${id}/transcript.srt?token=${srv.token}`);
    expect(srt.headers.get('content-type')).toContain('application/x-subrip');
    const srtCues = parseSrt(await srt.text());
    expect(srtCues.map((c) => [c.start, c.end, c.text])).toEqual(cues.map((c) => [c.start, c.end, c.text]));
    // The same spans as the transcript segments the timeline shows.
    const segs = (await getJson(srv.url, `/videos/${id}/segments?token=${srv.token}`)).body.segments.filter(
      (s: any) => s.kind === 'transcript',
    );
    expect(cues.map((c) => c.start)).toEqual(segs.map((s: any) => Math.round(s.start * 1000) / 1000));
  });

  test('a video without a transcript (no sound track) is 404 with the error shape', async () => {
    const r = await getJson(srv.url, `/videos/${keys['birthday-no-audio.mp4']}/transcript.vtt?token=${srv.token}`);
    expect(r.status).toBe(404);
    expect(r.body.error).toBe(404);
    expect(r.body.message).toContain('transcript');
    expect(r.body.message).toContain('no sound track');
  });

  test('insights.json has every segment kind, metadata and engines', async () => {
    const id = keys['big-buck-bunny-intro.webm']!;
    const r = await getJson(srv.url, `/videos/${id}/insights.json?token=${srv.token}`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ video_id: id, file_name: 'big-buck-bunny-intro.webm', status: 'ready' });
    expect(r.body.metadata.duration).toBeCloseTo(30, 0);
    expect(r.body.people).toEqual([]); // no faces analyzer here
    expect(Object.keys(r.body.engines)).toEqual(expect.arrayContaining(['ocr', 'speech']));
    expect(r.body.segments.shot.length).toBeGreaterThan(1);
    expect(r.body.segments.ocr.some((s: any) => /open movie project/i.test(s.text))).toBe(true);
    const segs = (await getJson(srv.url, `/videos/${id}/segments?token=${srv.token}`)).body.segments;
    expect(Object.values(r.body.segments).flat().length).toBe(segs.length);
  });

  test("another user's video, an unknown id, and no token are refused without leaking", async () => {
    const id = keys['speech-over-bottles.mp4']!;
    for (const path of ['transcript.vtt', 'transcript.srt', 'insights.json']) {
      const r = await getJson(srv.url, `/videos/${id}/${path}?token=${other.token}`);
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ error: 404, message: 'no such video' });
      expect((await getJson(srv.url, `/videos/${'y'.repeat(32)}/${path}?token=${srv.token}`)).status).toBe(404);
      expect((await getJson(srv.url, `/videos/${id}/${path}`)).status).toBe(401);
    }
  });
});

describe('insights.json with people', () => {
  let faces: TestServer;
  beforeAll(async () => {
    faces = await startTestServer({ 'analysis-workers': '1', analyzers: 'visual,faces' });
  }, 60_000);
  afterAll(async () => {
    await faces?.stop();
  });

  test('lists the people of the index seen in the video, with their spans', async () => {
    const res = await fetch(`${faces.url}/upload?index=faces&file_name=talking-head.mp4`, {
      method: 'POST',
      headers: { authorization: `Bearer ${faces.token}`, 'content-type': 'video/mp4' },
      body: readFileSync(clip('talking-head.mp4')),
    });
    const key = ((await res.json()) as any).data.key;
    await waitVideoReady(faces, 'faces', key, { timeoutMs: 120_000, intervalMs: 300 });
    const ins = (await getJson(faces.url, `/videos/${key}/insights.json?token=${faces.token}`)).body;
    expect(ins.people.length).toBe(1);
    expect(ins.people[0].person_id).toEqual(expect.any(String));
    expect(ins.people[0].appearances.length).toBeGreaterThan(0);
    expect(ins.people[0].appearances[0].end).toBeGreaterThan(ins.people[0].appearances[0].start);
  }, 150_000);
});
