/**
 * Classes of answer-quality failure (issue 19), on a fake index (no models): a part of the scene
 * (the sky, the floor) is not the measured background; the thing a question asks about decides
 * whether labels can answer it (a known label, or a thing no label names).
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { readAsked, unlabelledAsked } from '../src/answering/reader';
import { FakeIndex, objectSpan } from './fake-index';

const NAMES_MODEL = /vision model server \(--captioner openai\)/;
const BACKGROUND = { objects: { background: [{ start: 0, end: 20, colours: ['white', 'green'] }] } };

const index = new FakeIndex([
  {
    fileName: 'meadow-walk.mp4',
    duration: 20,
    analysis: BACKGROUND,
    segments: [objectSpan('dog', 2, 12, 1, 0.8), { kind: 'shot', start: 0, end: 20, text: 'shot 1' }],
  },
  {
    fileName: 'street-cafe.mp4',
    duration: 20,
    segments: [
      objectSpan('person', 0, 19, 1, 0.9),
      { ...objectSpan('cup', 2, 14, 1, 0.8), extra: { counts: [[2, 1]], max_count: 1, colours: ['red'] } },
      // A wrong label: what the detector calls a motorcycle is no answer to "which tool".
      objectSpan('motorcycle', 4, 16, 1, 0.45),
      { kind: 'ocr', start: 3, end: 9, text: 'HAPPY HOUR 5-7' },
      { kind: 'ocr', start: 12, end: 15, text: 'www.cafe-street.example' },
      { kind: 'shot', start: 0, end: 20, text: 'shot 1' },
    ],
  },
  {
    fileName: 'harbour-captioned.mp4',
    duration: 20,
    analysis: BACKGROUND,
    segments: [
      objectSpan('boat', 0, 19, 1, 0.8),
      { kind: 'caption', start: 0, end: 10, text: 'An orange sky at dusk over a harbour with fishing boats.' },
    ],
  },
]);
afterAll(() => index.close());

describe('a part of the scene is not the measured background', () => {
  test('without descriptions of the pictures: cannot tell, names what would answer, states no colour as the sky', async () => {
    for (const q of [
      'What colour is the sky?',
      'which colour was the floor in the first shot',
      'what color is the ground',
    ]) {
      const a = await index.ask(q, { video: 'meadow-walk.mp4' });
      expect(a.found, q).toBe(false);
      expect(a.output, q).toMatch(NAMES_MODEL);
      expect(a.output, q).not.toMatch(/\b(white|green)\b/);
    }
  });

  test('the background as a whole is still the measured one', async () => {
    const a = await index.ask('What colour is the background?', { video: 'meadow-walk.mp4' });
    expect(a.found).toBe(true);
    expect(a.output).toMatch(/white and green/);
  });

  test('with a caption, the caption answers the colour of the sky', async () => {
    const a = await index.ask('what colour is the sky?', { video: 'harbour-captioned.mp4' });
    expect(a.output).toContain('orange sky');
    expect(a.evidence.some((e) => e.kind === 'caption')).toBe(true);
  });
});

describe('the thing asked about decides whether labels can answer', () => {
  test('the asked thing is read from the words: the kind after what/which, the things named, an activity', () => {
    const cases: [string, string | null][] = [
      ['What is the lady carrying?', null], // a person: what is seen with her can answer
      ['which colour is the mug on the counter', null], // a mug is a cup
      ['What kind of animal walks past?', null], // a category of labels
      ['At what moment does the kitten appear?', null], // a kind of answer (a time), then a label
      ['Which sort of tool is she using?', 'tool'],
      ['What does the banner say?', 'banner'],
      ['What is the weather like?', 'weather'],
      ['what colour is his drum kit', 'kit'],
      ['Is there a kettle on the stove?', 'kettle'],
      ['Can I spot a bottle anywhere?', null], // what follows a known noun is no other thing
      ['Give me an overview of the recording, please.', null], // a kind of answer the facts give
      ['What are the children building?', 'building'],
      ['What does the man cook?', 'cook'],
    ];
    for (const [q, want] of cases) expect(unlabelledAsked(readAsked(q)), q).toBe(want);
  });

  test('a thing no label names: cannot tell, names what would answer, lists no unrelated label', async () => {
    for (const q of ['Which tool is she using?', 'What is the weather like?', 'what is the waiter preparing?']) {
      const a = await index.ask(q, { video: 'street-cafe.mp4' });
      expect(a.output, q).toMatch(NAMES_MODEL);
      expect(a.output, q).not.toMatch(/motorcycle/);
    }
  });

  test('a thing no label names, asked what it says or reads: the text answers', async () => {
    for (const q of ['What does the chalkboard read?', 'what does the banner read at 0:05']) {
      const a = await index.ask(q, { video: 'street-cafe.mp4' });
      expect(a.output, q).toContain('HAPPY HOUR');
      expect(a.output, q).not.toMatch(NAMES_MODEL);
    }
  });

  test('a known label asked about is answered from the detections, without the vision-model note', async () => {
    for (const q of ['What is the mug standing next to?', 'what colour is the mug', 'When can I see a mug?']) {
      const a = await index.ask(q, { video: 'street-cafe.mp4' });
      expect(a.found, q).toBe(true);
      expect(a.output, q).not.toMatch(NAMES_MODEL);
      expect(a.output.toLowerCase(), q).toMatch(/\bcup|\bred\b/);
    }
  });
});

describe('a number asked for', () => {
  test('text that holds no number is no answer to "which number is shown"; text with one is', async () => {
    const none = await index.ask('Which number is written on the door at the end?', { video: 'street-cafe.mp4' });
    expect(none.found).toBe(false);
    expect(none.output).toMatch(/could not find a number/);
    expect(none.output).not.toContain('cafe-street');
    const some = await index.ask('what number is written on the sign at the start?', { video: 'street-cafe.mp4' });
    expect(some.output).toContain('5-7');
  });
});

describe('a word that places the answer in time is not the text asked for', () => {
  for (const [prompt, at] of [
    ['When does text appear on screen for the last time?', '0:12'],
    ['What is the final text shown?', '0:12'],
    ['What text is on screen at the end?', '0:12'],
    ['When is text first shown?', '0:03'],
  ] as const)
    test(prompt, async () => {
      const a = await index.ask(prompt, { video: 'street-cafe.mp4' });
      expect(a.output).not.toMatch(/could not find/i);
      expect(a.output).toContain(at);
    });
});
