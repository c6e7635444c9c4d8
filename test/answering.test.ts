/**
 * Answers on real, really analysed clips (the default offline analyzers), through POST /inquire:
 * each question type, target and target_video, "not found", guidance, and the rule that every
 * time in an answer is the time of a cited evidence item.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { waitIndexReady } from './factories';
import { getJson, postJson, startOrigin, startTestServer, type Origin, type TestServer } from './helpers';

let srv: TestServer;
let origin: Origin;
let indexId: string;
const keys: Record<string, string> = {};
const CLIPS = [
  'bottles.mp4',
  'skateboarding-dog.mp4',
  'big-buck-bunny-intro.webm',
  'speech-over-bottles.mp4',
  'smpte-timecode-1080p.mp4',
];

beforeAll(async () => {
  origin = startOrigin();
  srv = await startTestServer({ 'analysis-workers': '1' });
  for (const c of CLIPS) {
    const r = await postJson(srv.url, '/remote-upload', {
      token: srv.token,
      index: 'answers',
      url: `${origin.url}/media/${c}`,
    });
    keys[c] = r.body.data.key;
  }
  indexId = (await getJson(srv.url, `/indexes?token=${srv.token}`)).body[0].index_id;
  await waitIndexReady(srv, indexId, { timeoutMs: 170_000 });
}, 180_000);
afterAll(async () => {
  await srv.stop();
  origin.stop();
});

async function ask(prompt: string, extra: Record<string, string> = {}) {
  const r = await postJson(srv.url, '/inquire', { token: srv.token, index: indexId, prompt, ...extra });
  expect(r.status).toBe(200);
  return r.body as {
    output: string;
    evidence: {
      video_id: string;
      file_name: string;
      start: number;
      end: number;
      kind: string;
      text: string;
      frame_url: string | null;
    }[];
    model: string;
  };
}

const overlaps = (e: { start: number; end: number }, a: number, b: number) => e.start <= b + 1 && e.end >= a - 1;

/** Every m:ss in the answer (outside quoted on-screen text) is the start or end of a cited evidence item. */
function timesAreCited(a: Awaited<ReturnType<typeof ask>>) {
  const times = [...a.output.replace(/"[^"]*"/g, '""').matchAll(/\b(\d+):(\d\d)\b/g)].map(
    (m) => Number(m[1]) * 60 + Number(m[2]),
  );
  for (const t of times)
    expect(a.evidence.some((e) => Math.floor(e.start) === t || Math.floor(e.end) === t)).toBe(true);
}

describe('answers from the analysed clips', () => {
  test('counting: how many bottles at the start (three), from the detections', async () => {
    const a = await ask('How many bottles can be seen when the clip starts?', { target_video: keys['bottles.mp4']! });
    expect(a.output).toMatch(/\bthree\b|\b3\b/);
    expect(a.evidence.some((e) => overlaps(e, 0, 5))).toBe(true);
    timesAreCited(a);
  });

  test('counting over time: when only one bottle is left', async () => {
    const a = await ask('At which moments is exactly one bottle on the table?', { target_video: keys['bottles.mp4']! });
    expect(a.output).toMatch(/\bone\b/i);
    expect(a.evidence.some((e) => overlaps(e, 18, 21))).toBe(true);
    timesAreCited(a);
  });

  test('"when" gives the spans of a detected animal', async () => {
    const a = await ask('When can we see the bird?', { target_video: keys['big-buck-bunny-intro.webm']! });
    expect(a.output).toContain('bird');
    expect(a.evidence.some((e) => e.kind === 'object' && overlaps(e, 16, 22))).toBe(true);
    timesAreCited(a);
  });

  test('"what does it say" quotes the on-screen text, and a target narrows to that moment', async () => {
    const all = await ask('What text is written on the screen?', { target_video: keys['big-buck-bunny-intro.webm']! });
    expect(all.output).toContain('PEACH OPEN MOVIE PROJECT');
    const at = await ask('What is written on screen at this moment?', {
      target_video: keys['big-buck-bunny-intro.webm']!,
      target: '0:21',
    });
    expect(at.output).toContain('PEACH');
    for (const e of at.evidence) expect(overlaps(e, 19, 23)).toBe(true);
    timesAreCited(at);
  });

  test('a moment between the sampled frames is read from the frame at that moment', async () => {
    // The SMPTE clip's numbers change every frame; no sampled frame is at 7.5 s.
    const a = await ask('What is displayed on screen at this moment?', {
      target_video: keys['smpte-timecode-1080p.mp4']!,
      target: '7.5',
    });
    expect(a.output).toContain('00:00:07;');
    expect(a.output).toMatch(/\b7\.[45]\d\d\b/); // the seconds counter, bottom left
    expect(a.evidence.some((e) => e.kind === 'ocr' && e.start === 7.5 && e.text.includes('00:00:07;'))).toBe(true);
    timesAreCited(a);
    // Another moment gives that moment's numbers, not the nearest sampled frame's.
    const b = await ask('What is displayed on screen at this moment?', {
      target_video: keys['smpte-timecode-1080p.mp4']!,
      target: '2.5',
    });
    expect(b.output).toContain('00:00:02;');
  });

  test('across the index it names the file; target_video restricts to one video', async () => {
    const a = await ask('Which video has a dog in it?');
    expect(a.output).toContain('skateboarding-dog.mp4');
    expect(a.evidence[0]!.file_name).toBe('skateboarding-dog.mp4');
    const restricted = await ask('Is there a dog?', { target_video: keys['bottles.mp4']! });
    expect(restricted.output).toStartWith('I could not find');
  });

  test('json fields of a prompt that names a video are about that video only, as with target_video (issue 34, class 7)', async () => {
    const json = {
      has_sound: 'Does it have sound?',
      things: 'What objects are visible?',
      people: 'How many people are seen?',
    };
    const a = await ask('Tell me about the skateboarding-dog video', { json: JSON.stringify(json) });
    const fields = JSON.parse(a.output) as Record<string, unknown>;
    expect(Object.keys(fields).sort()).toEqual(['has_sound', 'people', 'things']);
    expect(a.evidence.length).toBeGreaterThan(0);
    expect(a.evidence.every((e) => e.file_name === 'skateboarding-dog.mp4')).toBe(true);
    expect(String(fields.things)).toMatch(/dog/);
    expect(String(fields.things)).not.toMatch(/bottle/);
  });

  test('what co-occurs with a named object: the dog is on a skateboard', async () => {
    const a = await ask('What is the dog riding?', { target_video: keys['skateboarding-dog.mp4']! });
    expect(a.output).toContain('skateboard');
    expect(a.evidence.some((e) => e.text === 'skateboard')).toBe(true);
  });

  test('"not found" instead of an invented answer, with what the video does contain', async () => {
    for (const q of [
      'When does the cat jump onto the sofa?',
      'What colour is the car?',
      'What does the sign in the background say?',
    ]) {
      const a = await ask(q, { target_video: keys['skateboarding-dog.mp4']! });
      expect(a.output).toStartWith('I could not find');
      expect(a.evidence).toEqual([]);
      expect(a.output).not.toMatch(/\d+:\d\d/); // nothing cited, so no times
    }
    const dog = await ask('What colour is the car?', { target_video: keys['skateboarding-dog.mp4']! });
    expect(dog.output).toContain('dog'); // says what is there instead
  });

  test('speech without a transcriber: says it was not transcribed, and cites the speech spans', async () => {
    const a = await ask('What does the speaker say?', { target_video: keys['speech-over-bottles.mp4']! });
    expect(a.output).toStartWith('I could not find what is said');
    expect(a.output).toContain('not transcribed');
    expect(a.evidence.length).toBeGreaterThan(0);
    expect(a.evidence.every((e) => e.kind === 'speech')).toBe(true);
    timesAreCited(a);
  });

  test('"what happens" walks through the shots in order', async () => {
    const a = await ask('What happens in this video?', { target_video: keys['big-buck-bunny-intro.webm']! });
    const shots = a.evidence
      .filter((e) => e.kind === 'shot')
      .map((e) => e.start)
      .sort((x, y) => x - y);
    expect(shots.length).toBeGreaterThanOrEqual(2);
    const positions = shots.map((s) =>
      a.output.indexOf(`${Math.floor(s / 60)}:${String(Math.floor(s % 60)).padStart(2, '0')}`),
    );
    expect(positions.every((p, i) => p >= 0 && (i === 0 || p > positions[i - 1]!))).toBe(true);
  });

  test('guidance controls the length', async () => {
    const long = await ask('What happens in this video?', {
      target_video: keys['big-buck-bunny-intro.webm']!,
      guidance: 'give a detailed answer',
    });
    const short = await ask('What happens in this video?', {
      target_video: keys['big-buck-bunny-intro.webm']!,
      guidance: 'answer in one short sentence',
    });
    expect(short.output.length).toBeLessThan(long.output.length);
    expect(short.output.split(/(?<=[.!?])\s/).length).toBe(1);
  });

  test('evidence carries frame URLs that serve the cited frame', async () => {
    const a = await ask('When can we see the bird?', { target_video: keys['big-buck-bunny-intro.webm']! });
    const url = a.evidence.find((e) => e.frame_url)!.frame_url!;
    const img = await fetch(url);
    expect(img.status).toBe(200);
    expect(img.headers.get('content-type')).toBe('image/jpeg');
  });
});
