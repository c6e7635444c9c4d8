/**
 * The answering core on fake indexes (test/fake-index.ts): segments in, answer out, no models.
 * Every fact plug-in and question form, the choice between evidence kinds (structured facts,
 * captions, transcripts, on-screen text), and the wording rules. Every answer any test here gets
 * is also checked against the rules that hold for all answers (times cited, no colour before a
 * word for a person).
 */
import { afterAll, describe, expect, test } from 'bun:test';
import type { Composed } from '../src/answering/compose';
import { CELLS, FACTS } from '../src/answering/facts';
import { checkModelJson, fillFields, jsonModeRequest, parseJsonFields } from '../src/answering/json-output';
import { colourBeforePerson, colourOnClothing } from '../src/answering/vocabulary';
import { FakeIndex, type FakeSegment, objectSpan } from './fake-index';

const NOT_FOUND = /\b(could not find|cannot tell)\b/i;

/** Counts of the bottles scene: three, one lifted at 6, two lifted at 16, back one by one. */
const bottles = (t: number) => (t < 6 ? 3 : t < 18 ? 2 : t < 22 ? 1 : t < 36 ? 2 : 3);

const index = new FakeIndex([
  {
    fileName: 'bottles.mp4',
    duration: 40,
    hasAudio: false,
    segments: [
      objectSpan('bottle', 0, 39, bottles, 0.6),
      { kind: 'shot', start: 0, end: 40, text: 'shot 1' },
      { kind: 'ocr', start: 30, end: 33, text: 'SPRING SALE', confidence: 0.9 },
    ],
  },
  {
    fileName: 'big-buck-bunny-intro.webm',
    duration: 30,
    segments: [
      // Wrong labels: the detector calls the meadow's shapes a sheep and a person, with low confidence.
      objectSpan('sheep', 2, 11, 1, 0.36),
      objectSpan('bird', 16, 22, 1, 0.67),
      { kind: 'caption', start: 2, end: 11, text: 'A pink sky with clouds over a green meadow and pine trees.' },
      { kind: 'caption', start: 16, end: 22, text: 'A purple bird sits on a tree branch, flapping its wings.' },
      { kind: 'ocr', start: 25, end: 29, text: 'Big Buck\nBUNNY' },
      { kind: 'shot', start: 0, end: 12, text: 'shot 1' },
      { kind: 'shot', start: 12, end: 16, text: 'shot 2' },
      { kind: 'shot', start: 16, end: 30, text: 'shot 3' },
    ],
  },
  {
    fileName: 'restaurant-kitchen.mp4',
    duration: 20,
    segments: [
      objectSpan('person', 0, 19, 1, 0.9),
      objectSpan('cup', 1, 4, 1, 0.8),
      objectSpan('wine glass', 2, 5, 1, 0.7),
      {
        kind: 'caption',
        start: 0,
        end: 10,
        text: 'A woman in a purple dress stands behind a counter, above a table covered with a white tablecloth.',
      },
      { kind: 'caption', start: 10, end: 20, text: 'The woman pours coffee into a cup for a customer.' },
      { kind: 'speech', start: 1, end: 9, text: 'speech' },
      { kind: 'transcript', start: 1, end: 5, text: 'Good evening, ladies and gentlemen, and welcome.' },
      { kind: 'transcript', start: 5, end: 9, text: 'Tonight the chef cooks a mushroom risotto.' },
    ],
  },
  {
    fileName: 'people-one-by-one.mp4',
    duration: 140,
    hasAudio: false,
    segments: [
      { ...objectSpan('person', 3, 17, 1, 0.7), extra: { counts: [[3, 1]], max_count: 1, upper_colours: ['grey'] } },
      { ...objectSpan('person', 23, 41, 1, 0.8), extra: { counts: [[23, 1]], max_count: 1, upper_colours: ['black'] } },
    ],
  },
  {
    fileName: 'lecture.mp4',
    duration: 12,
    segments: [
      // Speech without a transcriber, and no captioner: only people and the speech spans are known.
      objectSpan('person', 0, 12, 1, 0.9),
      { kind: 'speech', start: 0.5, end: 11, text: 'speech' },
    ],
  },
]);
/** People told apart by their faces (Anna is named, the other is not yet); cars and clothes with their colours. */
const faces = new FakeIndex([
  {
    fileName: 'interview.mp4',
    duration: 40,
    analysis: { faces: { people: 2 } },
    segments: [
      { kind: 'face', start: 0, end: 8, text: 'face', person: { id: 'p1', name: 'Anna' } },
      { kind: 'face', start: 10, end: 18, text: 'face', person: { id: 'p2' } },
      { kind: 'face', start: 25, end: 33, text: 'face', person: { id: 'p1', name: 'Anna' } },
      objectSpan('person', 0, 33, 1, 0.9),
      { kind: 'speech', start: 1, end: 5, text: 'speech' },
      { kind: 'transcript', start: 1, end: 5, text: 'I build wooden boats in my workshop.' },
    ],
  },
  {
    fileName: 'street.mp4',
    duration: 30,
    analysis: { objects: { background: [{ start: 0, end: 30, colours: ['grey', 'white'] }] } },
    segments: [
      coloured(objectSpan('car', 2, 8, 1, 0.8), { colours: ['red'] }),
      coloured(objectSpan('car', 12, 20, 1, 0.8), { colours: ['blue'] }),
      coloured(objectSpan('person', 22, 28, 1, 0.8), { upper_colours: ['black'] }),
    ],
  },
]);
afterAll(() => {
  index.close();
  faces.close();
});

/** A detection with the colours the analysis stores (the span's and its best frame's box). */
function coloured(s: FakeSegment, colours: { colours?: string[]; upper_colours?: string[] }): FakeSegment {
  return { ...s, extra: { ...s.extra, ...colours, boxes: [colours] } };
}

/** Asks, and checks what every answer must hold. */
async function ask(prompt: string, opts: { video?: string; target?: string } = {}, of = index): Promise<Composed> {
  const a = await of.ask(prompt, opts);
  // No colour word right before a word for a person.
  expect(colourBeforePerson(a.output)).toBe(false);
  // Every m:ss outside quotes is a start or end of a cited item.
  const times = [...a.output.replace(/"[^"]*"/g, '""').matchAll(/\b(\d+):(\d\d)\b/g)].map(
    (m) => Number(m[1]) * 60 + Number(m[2]),
  );
  for (const t of times)
    expect(a.evidence.some((e) => Math.floor(e.start) === t || Math.floor(e.end) === t)).toBe(true);
  return a;
}
const B = { video: 'bottles.mp4' };
const BBB = { video: 'big-buck-bunny-intro.webm' };
const K = { video: 'restaurant-kitchen.mp4' };

describe('the fact table is a list of plug-ins', () => {
  test('each plug-in owns forms with answers and example questions', () => {
    expect(FACTS.length).toBeGreaterThanOrEqual(10);
    for (const f of FACTS) expect(Object.keys(f.forms).length).toBeGreaterThan(0);
    for (const c of CELLS) {
      expect(typeof c.answer).toBe('function');
      expect(c.examples.length).toBeGreaterThanOrEqual(2);
    }
  });
});

describe('objects: counts over time and at a moment', () => {
  test('at the start', async () => {
    const a = await ask('How many bottles are on the table at the start?', B);
    expect(a.output).toMatch(/\bthree\b/);
  });
  test('a moment in the text governs the count', async () => {
    const a = await ask('How many bottles are standing at 19 seconds?', B);
    expect(a.output).toMatch(/\bone bottle\b/);
  });
  test('a moment in `target` governs the count', async () => {
    const a = await ask('How many bottles are there?', { ...B, target: '19' });
    expect(a.output).toMatch(/\bone bottle\b/);
    const b = await ask('How many bottles are there?', { ...B, target: '9' });
    expect(b.output).toMatch(/\btwo bottles\b/);
  });
  test('when a count holds', async () => {
    const a = await ask('When is only one bottle left?', B);
    expect(a.output).toContain('0:18');
  });
  test('most at once', async () => {
    const a = await ask('What is the largest number of bottles visible at once?', B);
    expect(a.output).toMatch(/\bthree\b/);
  });
});

describe('objects: when, which video, what', () => {
  test('when a thing is seen', async () => {
    const a = await ask('When can we see the bird?', BBB);
    expect(a.output).toContain('0:16');
    expect(a.found).toBe(true);
  });
  test('which video shows a thing', async () => {
    const a = await ask('Which video shows a bird?');
    expect(a.output).toContain('big-buck-bunny-intro.webm');
  });
  test('what animal', async () => {
    const a = await ask('Which animal can be seen?', BBB);
    expect(a.output).toContain('bird');
  });
});

describe('trust: low confidence and contradicting captions', () => {
  test('a detection under the threshold is said with "possibly"; the caption that contradicts it is quoted', async () => {
    const a = await ask('Is there a sheep?', BBB);
    expect(a.output).toContain('possibly a sheep');
    expect(a.output).toContain('green meadow');
    expect(a.output).toMatch(/label may be wrong/);
    expect(a.evidence.some((e) => e.kind === 'caption')).toBe(true);
  });
  test('a confident detection the caption confirms is stated plainly', async () => {
    const a = await ask('When does the bird appear?', BBB);
    expect(a.output).not.toContain('possibly');
    expect(a.output).not.toContain('may be wrong');
  });
});

describe('open questions answered from captions and transcripts (the answer is only there)', () => {
  test('what someone wears: the caption, not the cups the detector saw', async () => {
    const a = await ask('What is the woman wearing?', K);
    expect(a.output).toContain('purple dress');
    expect(a.evidence[0]!.kind).toBe('caption');
    expect(a.output).toContain('0:00');
  });
  test('what covers the table', async () => {
    const a = await ask('What covers the table?', K);
    expect(a.output).toContain('white tablecloth');
    expect(a.output).not.toMatch(NOT_FOUND);
  });
  test('whom the speaker addresses: the transcript line', async () => {
    const a = await ask('Who does the speaker address?', K);
    expect(a.output).toContain('ladies and gentlemen');
    expect(a.evidence[0]!.kind).toBe('transcript');
  });
  test('what is said about a thing: the transcript line that names it', async () => {
    const a = await ask('What does the speaker say about the risotto?', K);
    expect(a.output).toContain('mushroom risotto');
  });
  test('a thing only a caption names beats "not found"', async () => {
    const a = await ask('Is there any coffee?', K);
    expect(a.output).toContain('pours coffee');
    expect(a.found).toBe(true);
  });
  test('a thing nothing names is still "not found"', async () => {
    const a = await ask('Is there a kayak?', K);
    expect(a.output).toMatch(NOT_FOUND);
  });
});

describe('missing models are named, not papered over with labels', () => {
  test('what is said, with speech but no transcriber', async () => {
    const a = await ask('What does the lecturer say?', { video: 'lecture.mp4' });
    expect(a.output).toMatch(NOT_FOUND);
    expect(a.output).toMatch(/transcri/);
  });
  test('what someone does, with no captioner', async () => {
    const a = await ask('What is the man cooking?', { video: 'lecture.mp4' });
    expect(a.output).toMatch(NOT_FOUND);
    expect(a.output).toContain('vision model server');
    expect(a.output).not.toContain('shows people');
  });
});

describe('wording: colours describe clothing, never a person', () => {
  test('the rule rewrites any such phrase outside quotes', () => {
    expect(colourOnClothing('The black person appears at 0:23.')).toBe('The person in black appears at 0:23.');
    expect(colourOnClothing('A caption reads "a white man".')).toBe('A caption reads "a white man".');
    expect(colourBeforePerson('a man in black')).toBe(false);
    expect(colourBeforePerson('a black man')).toBe(true);
  });
  test('a person by the colour of their clothes', async () => {
    const a = await ask('When does the person in black appear?', { video: 'people-one-by-one.mp4' });
    expect(a.output).toContain('person in black');
    expect(a.output).toContain('0:23');
    const b = await ask('When does the black person appear?', { video: 'people-one-by-one.mp4' });
    expect(b.output).not.toMatch(/black person/i);
  });
});

describe('describe: the changes in order, with times', () => {
  test('counts going down and up, text appearing', async () => {
    const a = await ask('What happens in this video?', B);
    expect(a.output).toContain('three bottles');
    expect(a.output).toMatch(/0:06 the bottles go from three to two/);
    expect(a.output).toMatch(/go from two to one/);
    expect(a.output).toContain('"SPRING SALE" appears');
    const at = (s: string) => a.output.indexOf(s);
    expect(at('0:06')).toBeLessThan(at('0:18'));
  });
  test('captions, speech and cuts in order', async () => {
    const a = await ask('Describe the video.', K);
    expect(a.output).toContain('purple dress');
    expect(a.output).toContain('ladies and gentlemen');
    const b = await ask('Describe the video.', BBB);
    expect(b.output).toContain('new shot');
    expect(b.output.indexOf('0:12')).toBeLessThan(b.output.indexOf('0:16'));
  });
});

describe('scope follows the words', () => {
  test('a video by a distinctive word of its name', async () => {
    const a = await ask('What is written in the bunny video?');
    expect(a.output).toContain('Big Buck BUNNY');
    expect(a.evidence.every((e) => e.file_name === 'big-buck-bunny-intro.webm')).toBe(true);
  });
  test('a video by its name without the extension', async () => {
    const a = await ask('How long is people-one-by-one?');
    expect(a.output).toContain('people-one-by-one.mp4');
    expect(a.output).toContain('2 minutes 20 seconds');
  });
  test('a video that is not in the index', async () => {
    const a = await ask('What is written in birthday.mp4?');
    expect(a.output).toContain('not in this index');
    expect(a.evidence).toEqual([]);
  });
  test('text on a thing that was never seen is not some other text', async () => {
    const a = await ask('What is written on the cake?', B);
    expect(a.output).toMatch(NOT_FOUND);
    expect(a.output).not.toContain('SPRING SALE');
  });
});

describe('file facts, shots, speech and text plug-ins', () => {
  test('duration and comparison', async () => {
    expect((await ask('How long is the video?', B)).output).toContain('40 seconds');
    expect((await ask('Which video is the longest?')).output).toMatch(/^people-one-by-one\.mp4 is the longest/);
  });
  test('audio track', async () => {
    expect((await ask('Does the video have sound?', B)).output).toMatch(/^No/);
  });
  test('shots', async () => {
    expect((await ask('How many shots are there?', BBB)).output).toMatch(/\bthree shots\b/);
    expect((await ask('When does the scene change?', BBB)).output).toContain('0:12');
  });
  test('speech: when someone speaks', async () => {
    expect((await ask('When does someone speak?', { video: 'lecture.mp4' })).output).toContain('0:00');
  });
  test('text: what is written, and when', async () => {
    expect((await ask('What does the title say?', BBB)).output).toContain('Big Buck BUNNY');
    expect((await ask('When does the text SPRING SALE appear?', B)).output).toContain('0:30');
  });
  test('videos of the index', async () => {
    expect((await ask('How many videos are in the index?')).output).toMatch(/\bfive videos\b/);
  });
});

describe('structured output (json)', () => {
  test('the fields: an object or its JSON string; anything else is a 400', () => {
    expect(parseJsonFields('{"n": "how many bottles"}')).toEqual({ n: 'how many bottles' });
    expect(parseJsonFields({ n: 'how many bottles' })).toEqual({ n: 'how many bottles' });
    expect(parseJsonFields(undefined)).toBeNull();
    expect(() => parseJsonFields('[1]')).toThrow(/object/);
    expect(() => parseJsonFields('{"n": 3}')).toThrow(/not a string/);
  });
  test('filled from the facts and evidence: numbers, yes/no, text, null', async () => {
    const filled = await fillFields(
      {
        bottles: 'how many bottles are there at the start',
        sound: 'does the video have sound',
        title: 'what text appears',
        kayak: 'is there a kayak',
      },
      (q) => index.ask(q, B),
    );
    expect(JSON.parse(filled.output)).toEqual({
      bottles: 3,
      sound: false,
      title: expect.stringContaining('SPRING SALE'),
      kayak: null,
    });
  });
  test("the generator's JSON: exactly the keys asked, times only from the evidence", () => {
    const fields = { a: 'x', b: 'y' };
    const ev = [
      {
        video_id: 'v',
        file_name: 'f',
        start: 6,
        end: 8,
        kind: 'object' as const,
        text: 't',
        score: 1,
        frame_url: null,
      },
    ];
    expect(checkModelJson('{"a": "at 0:06", "c": 1}', fields, ev)).toBe('{"a":"at 0:06","b":null}');
    expect(checkModelJson('{"a": "at 0:09"}', fields, ev)).toBeNull();
    expect(checkModelJson('not json', fields, ev)).toBeNull();
    const req = jsonModeRequest({ system: 's', messages: [{ role: 'user', content: 'q' }] }, fields);
    expect(req.json).toBe(true);
    expect(req.messages[0]!.content).toContain('"b": y');
  });
});

describe('describe a moment', () => {
  test('what is in view when the window starts, then what changes in it', async () => {
    const a = await ask('Summarise the clip.', { ...B, target: '15-20' });
    expect(a.output).toMatch(/0:15 two bottles in view/);
    expect(a.output).toMatch(/go from two to one/);
  });
});

describe('people by face: a plug-in that competes in the same reading', () => {
  const I = { video: 'interview.mp4' };
  test('how many different people: told apart by their faces, the named one by name', async () => {
    const a = await ask('How many different people appear in this video?', I, faces);
    expect(a.reading).toBe('faces.count');
    expect(a.output).toMatch(/\b2 different people\b/);
    expect(a.output).toContain('Anna and 1 not named yet');
    expect(a.evidence.filter((e) => e.kind === 'face').length).toBe(2);
    const b = await ask('How many people are there?', I, faces);
    expect(b.reading).toBe('faces.count');
    // "At once" is a count at a moment: the person detections' answer.
    const c = await ask('How many people are there at once?', I, faces);
    expect(c.reading).toMatch(/^people\./);
  });
  test('across videos, people whose faces were not seen are counted apart', async () => {
    const a = await ask('How many different people appear?', {}, faces);
    expect(a.output).toMatch(/\b2 different people\b/);
    expect(a.output).toMatch(/whose faces were not visible appear 1 time\b/);
  });
  test('when a named person appears, and which videos show them', async () => {
    const a = await ask('When does Anna appear?', {}, faces);
    expect(a.reading).toBe('faces.when');
    expect(a.output).toContain('Anna appears 2 times');
    expect(a.evidence.map((e) => e.start)).toEqual([0, 25]);
    const b = await ask('Which videos show Anna?', {}, faces);
    expect(b.output).toContain('in 1 video: in interview.mp4');
    const c = await ask('Is Anna in this video?', { video: 'street.mp4' }, faces);
    expect(c.found).toBe(false);
    expect(c.output).toContain('Anna does not appear in this video');
  });
  test('who is on screen at a moment', async () => {
    const a = await ask('Who is on screen?', { ...I, target: '27' }, faces);
    expect(a.reading).toBe('faces.visible');
    expect(a.output).toContain('Anna');
    const b = await ask('Who is on screen at this moment?', { ...I, target: '12' }, faces);
    expect(b.output).toContain('unnamed person');
    expect(b.output).not.toContain('Anna');
  });
  test('a person whose face is not seen: on screen at a moment, and counted in a window with no face', async () => {
    const a = await ask('Who is on screen?', { video: 'street.mp4', target: '25' }, faces);
    expect(a.output).toContain('A person is on screen then (0:22–0:28), but their face is not visible');
    expect(a.evidence).toMatchObject([{ kind: 'object', start: 22, end: 28, text: 'person (face not visible)' }]);
    // Between Anna's two appearances no face is seen: the person detected then is counted apart.
    const b = await ask('How many different people appear?', { ...I, target: '19-22' }, faces);
    expect(b.output).toMatch(
      /^People whose faces were not visible appear 1 time \(from the person detections: 0:00–0:33\)/,
    );
    // Over the whole video the faces overlap that detection: only the two people by face.
    const c = await ask('How many different people appear?', I, faces);
    expect(c.output).not.toContain('not visible');
  });
  test('a name nobody carries is "not found", naming who is named', async () => {
    const a = await ask('When does Zelda appear?', {}, faces);
    expect(a.output).toContain('could not find anyone named "Zelda"');
    expect(a.output).toContain('Anna');
    expect(a.evidence).toEqual([]);
  });
  test('the person from the start appears again', async () => {
    const a = await ask('When does the person from the start appear again?', I, faces);
    expect(a.output).toMatch(/appears again at 0:25/);
    expect(a.evidence.map((e) => e.start)).toEqual([0, 25]);
  });
  test('a name does not take over a question about something else: what Anna says is the transcript', async () => {
    const a = await ask('What does Anna say?', I, faces);
    expect(a.reading).toBe('speech.what');
    expect(a.output).toContain('wooden boats');
  });
  test("a question about a person with none of its cues is the detections' (people), not this plug-in", async () => {
    const a = await ask('When does a person appear?', I, faces);
    expect(a.reading).toMatch(/^people\./);
  });
});

describe('colours: a plug-in that competes in the same reading', () => {
  const S = { video: 'street.mp4' };
  test('what colour a thing is', async () => {
    const a = await ask('What colour is the car?', S, faces);
    expect(a.reading).toBe('colours.what');
    expect(a.output).toContain('red');
    expect(a.output).toContain('blue');
  });
  test('the red car: only its spans, not every car', async () => {
    const a = await ask('When does the red car appear?', S, faces);
    expect(a.reading).toBe('colours.when');
    expect(a.evidence.length).toBeGreaterThan(0);
    expect(a.evidence.every((e) => e.start >= 2 && e.end <= 8)).toBe(true);
    // Without a colour the same question is the objects' (both cars).
    const b = await ask('When does the car appear?', S, faces);
    expect(b.reading).toBe('objects.when');
    expect(b.output).toContain('0:12');
  });
  test('how many of a colour', async () => {
    const a = await ask('How many red cars are there?', S, faces);
    expect(a.output).toMatch(/^1 red car\b/);
  });
  test('a colour no such thing had: "not found", with the colours seen', async () => {
    const a = await ask('When does the green car appear?', S, faces);
    expect(a.found).toBe(false);
    expect(a.output).toContain('could not find a green car');
    expect(a.output).toContain('red');
    expect(a.evidence).toEqual([]);
  });
  test('a person by the colour of their clothes, never a coloured person', async () => {
    const a = await ask('When does the man in the black hoodie appear?', S, faces);
    expect(a.reading).toMatch(/^colours\./);
    expect(a.output).toContain('0:22');
    expect(a.output).not.toMatch(/black (man|person)/i);
  });
  test('the colour of the background', async () => {
    const a = await ask('What colour is the background?', S, faces);
    expect(a.output).toContain('grey');
    expect(a.evidence[0]!.kind).toBe('shot');
  });
});
