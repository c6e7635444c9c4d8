/**
 * Colours of detections, from their pixels, and colour questions through /inquire on really
 * analysed clips (visual + objects + faces): the black television and the blue armchair of
 * countdown-living-room, the people in grey of people-one-by-one, the grey asphalt of
 * cars-parking-lot; "not found" for a colour no such thing had. (The red car of cars-parking-lot was
 * the example until frames were sampled at their true times: on those the detector calls it a
 * parking meter, and at this interval sees no car at all.) people-one-by-one also shows people counted without faces (all are seen from behind).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import { join } from 'node:path';
import { coloursOf, nameOf } from '../src/analysis/stages/colours';
import { getJson, postJson, startOrigin, startTestServer, type Origin, type TestServer } from './helpers';
import { waitIndexReady } from './factories';

let srv: TestServer;
let origin: Origin;
let indexId: string;
const keys: Record<string, string> = {};

beforeAll(async () => {
  origin = startOrigin();
  srv = await startTestServer({
    'analysis-workers': '1',
    analyzers: 'visual,objects,faces',
    'frame-interval-sec': '3',
  });
  for (const c of ['cars-parking-lot.mp4', 'countdown-living-room.mp4', 'people-one-by-one.mp4']) {
    const r = await postJson(srv.url, '/remote-upload', {
      token: srv.token,
      index: 'colours',
      url: `${origin.url}/media/${c}`,
    });
    keys[c] = r.body.data.key;
  }
  indexId = (await getJson(srv.url, `/indexes?token=${srv.token}`)).body[0].index_id;
  await waitIndexReady(srv, indexId, { timeoutMs: 170_000 });
}, 180_000);
afterAll(async () => {
  await srv?.stop();
  origin?.stop();
});

async function ask(prompt: string, extra: Record<string, string> = {}) {
  const r = await postJson(srv.url, '/inquire', { token: srv.token, index: indexId, prompt, ...extra });
  expect(r.status).toBe(200);
  for (const m of (r.body.output as string).matchAll(/\b(\d+):(\d\d)\b/g)) {
    const t = Number(m[1]) * 60 + Number(m[2]);
    expect(r.body.evidence.some((e: any) => Math.floor(e.start) === t || Math.floor(e.end) === t)).toBe(true);
  }
  return r.body as { output: string; evidence: any[] };
}

describe('colour names from pixels', () => {
  test('the palette names plain colours as people do', () => {
    expect(nameOf(200, 30, 30)).toBe('red');
    expect(nameOf(235, 150, 165)).toBe('red'); // a bright, desaturated red (the red car lit from above)
    expect(nameOf(240, 100, 200)).toBe('pink');
    expect(nameOf(30, 60, 200)).toBe('blue');
    expect(nameOf(40, 160, 60)).toBe('green');
    expect(nameOf(240, 240, 235)).toBe('white');
    expect(nameOf(128, 128, 130)).toBe('grey');
    expect(nameOf(20, 20, 25)).toBe('black');
    expect(nameOf(120, 70, 30)).toBe('brown');
    expect(nameOf(250, 140, 20)).toBe('orange');
    expect(nameOf(240, 220, 40)).toBe('yellow');
    expect(nameOf(120, 40, 170)).toBe('purple');
  });

  test("a box's colours are the names covering at least a quarter of its middle", () => {
    // 10×10: left half red, right half blue; the middle (inset 20 %) is 6×6 → 3 columns each.
    const rgb = new Uint8Array(10 * 10 * 3);
    for (let y = 0; y < 10; y++)
      for (let x = 0; x < 10; x++) rgb.set(x < 5 ? [200, 20, 20] : [20, 40, 200], (y * 10 + x) * 3);
    expect(coloursOf(rgb, 10, 10, [0, 0, 1, 1]).sort()).toEqual(['blue', 'red']);
    expect(coloursOf(rgb, 10, 10, [0, 0, 0.5, 1])).toEqual(['red']);
  });

  test('colours are stored with the detections', () => {
    const db = new Database(join(srv.dataDir, 'vidq.db'), { readonly: true });
    try {
      const rows = db
        .query("SELECT text, extra FROM segments WHERE kind = 'object' AND video_id = ?")
        .all(keys['countdown-living-room.mp4']!) as { text: string; extra: string }[];
      const tv = rows.map((r) => ({ label: r.text, extra: JSON.parse(r.extra) })).find((r) => r.label === 'tv');
      expect(tv?.extra.colours).toContain('black');
      expect(tv?.extra.boxes[0].colours).toContain('black');
    } finally {
      db.close();
    }
  });
});

describe('colour questions', () => {
  test('what colour is the television: black, cited where it is seen', async () => {
    const a = await ask('What colour is the television?', { target_video: keys['countdown-living-room.mp4']! });
    expect(a.output).toContain('black');
    expect(a.evidence.some((e) => e.kind === 'object' && e.start <= 3 && e.end >= 3)).toBe(true);
  });

  test('when does the black television appear; how many black televisions', async () => {
    const when = await ask('When does the black television appear?');
    expect(when.evidence.length).toBeGreaterThan(0);
    expect(when.evidence.every((e) => e.file_name === 'countdown-living-room.mp4' && e.start <= 3)).toBe(true);
    const many = await ask('How many black televisions are there?');
    expect(many.output).toMatch(/^1 black (tv|television|TV)\b/);
  });

  test('the blue armchair of the living room', async () => {
    const a = await ask('What color is the armchair?', { target_video: keys['countdown-living-room.mp4']! });
    expect(a.output).toContain('blue');
  });

  test('the colour of the background: the wet asphalt is grey', async () => {
    const a = await ask('What colour is the background?', { target_video: keys['cars-parking-lot.mp4']! });
    expect(a.output).toContain('grey');
    expect(a.evidence[0].kind).toBe('shot');
  });

  test('a colour no such thing had is "not found", with the colours that were seen', async () => {
    const a = await ask('When does the green television appear?');
    expect(a.output).toMatch(/could not find a green (tv|television|TV)/);
    expect(a.output).toContain('black');
    expect(a.evidence).toEqual([]);
  });
});

describe('people without visible faces', () => {
  test('"how many different people" counts the appearances of people seen from behind, and says so', async () => {
    const a = await ask('How many different people appear in this video?', {
      target_video: keys['people-one-by-one.mp4']!,
    });
    // Six people walk up one at a time (MANIFEST); no face is visible.
    expect(a.output).toMatch(/whose faces were not visible appear 6 times/);
    expect(a.output).not.toMatch(/told apart by their faces/);
    expect(a.evidence.filter((e) => e.kind === 'object').length).toBe(6);
  });

  test('the walls behind the table are white', async () => {
    const a = await ask('What colour are the walls?', { target_video: keys['people-one-by-one.mp4']! });
    expect(a.output).toContain('white');
  });

  test('the person in the grey cardigan: the spans of people dressed in grey', async () => {
    const a = await ask('When does the woman in the grey cardigan appear?', {
      target_video: keys['people-one-by-one.mp4']!,
    });
    // 3–17 a woman in a grey cardigan (and 90–117 one in a grey sweater, 123–132 a man in a grey shirt).
    expect(a.evidence.some((e) => e.start <= 10 && e.end >= 10)).toBe(true);
    // Not the man in the black hoodie (23–41).
    expect(a.evidence.some((e) => e.start <= 32 && e.end >= 32)).toBe(false);
  });
});
