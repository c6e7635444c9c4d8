/**
 * Classes of failure found by a new user's own questions (bench/newuser.ts), on a fake index (no
 * models): words that pick a video are scope, not what is asked; a place is not the subject; a
 * yes/no question about a number asks when that many are seen; a video named the way files are
 * named that the index lacks is "not in this index"; what a detector cannot tell (an activity, a
 * kind of thing it has no label for, the colour of an unlabelled thing, the writing on an unseen
 * thing) is said so, naming what would answer; a silent video says nothing.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { FakeIndex, objectSpan } from './fake-index';

const NAMES_MODEL = /vision model server \(--captioner openai\)/;

/** Cups on a counter: two, one taken away at 5, back at 9. */
const cups = (t: number) => (t < 5 ? 2 : t < 9 ? 1 : 2);

const index = new FakeIndex([
  {
    fileName: 'kitten-yard.mp4',
    duration: 20,
    segments: [
      objectSpan('bird', 3, 9, 1, 0.7),
      { kind: 'ocr', start: 12, end: 15, text: 'KITTEN YARD' },
      { kind: 'shot', start: 0, end: 20, text: 'shot 1' },
    ],
  },
  {
    fileName: 'office-desk.mp4',
    duration: 15,
    hasAudio: false,
    segments: [
      objectSpan('laptop', 0, 14, 1, 0.8),
      objectSpan('cup', 0, 14, cups, 0.7),
      objectSpan('person', 2, 6, 1, 0.9),
      objectSpan('person', 8, 14, 1, 0.9),
      { kind: 'ocr', start: 1, end: 4, text: 'QUARTERLY PLAN' },
    ],
  },
  {
    fileName: 'music-room.mp4',
    duration: 12,
    segments: [objectSpan('person', 0, 11, 1, 0.9), objectSpan('motorcycle', 1, 8, 1, 0.42)],
  },
  {
    fileName: 'kitchen-cam.mp4',
    duration: 10,
    segments: [
      objectSpan('person', 0, 9, 1, 0.9),
      { kind: 'caption', start: 0, end: 9, text: 'A woman flips a pancake in a frying pan in a home kitchen.' },
    ],
  },
]);
afterAll(() => index.close());

describe('scope read from the words', () => {
  test('the words that name a video pick it and are not asked about ("the kitten video" is no kitten)', async () => {
    const a = await index.ask('is there any animal in the kitten video?', { video: 'kitten-yard.mp4' });
    expect(a.output.toLowerCase()).toContain('bird');
    expect(a.output).not.toContain('KITTEN YARD');
    expect(a.evidence.some((e) => e.kind === 'object' && e.start <= 9 && e.end >= 3)).toBe(true);
  });

  test('a video named like a file that the index lacks is not in this index, with nothing cited', async () => {
    const a = await index.ask('what happens in the garden-party video?');
    expect(a.output).toMatch(/not in this index/);
    expect(a.evidence).toEqual([]);
    // A description with dashes names no file.
    const b = await index.ask('is the kitchen-cam clip black-and-white footage?');
    expect(b.output).not.toMatch(/not in this index/);
  });
});

describe('what the question is about', () => {
  test('a place is not the subject: "a laptop on the desk" asks about the laptop', async () => {
    const a = await index.ask('is there a laptop on the desk?', { video: 'office-desk.mp4' });
    expect(a.output.toLowerCase()).toContain('laptop');
    expect(a.output).not.toMatch(/could not find/);
  });

  test('"who … at the table" asks about people, not about a table nobody detected', async () => {
    const a = await index.ask('who stays at the table the longest?', { video: 'office-desk.mp4' });
    expect(a.output).not.toMatch(/could not find a table/);
    expect(a.evidence.some((e) => e.start <= 14 && e.end >= 8)).toBe(true);
  });

  test('a yes/no question about a number of things asks when that many are seen', async () => {
    const a = await index.ask('is there ever only one cup left?', { video: 'office-desk.mp4' });
    expect(a.output).toMatch(/0:05/);
    expect(a.evidence.some((e) => e.start <= 8 && e.end >= 5 && e.text.startsWith('1'))).toBe(true);
  });
});

describe('what the detector cannot tell is said so', () => {
  test('an activity or a kind of thing no label names: cannot tell, and what would answer', async () => {
    for (const q of ['what instrument is the guy playing?', 'what is the man doing?']) {
      const a = await index.ask(q, { video: 'music-room.mp4' });
      expect(a.output).toMatch(NAMES_MODEL);
      expect(a.output).not.toMatch(/motorcycle/);
    }
  });

  test('"what/which" followed by a word that is no thing ("at what point", "which piece of") still asks about the label or category named after it', async () => {
    const bird = await index.ask('at what point can we see a bird?', { video: 'kitten-yard.mp4' });
    expect(bird.output).not.toMatch(NAMES_MODEL);
    expect(bird.evidence.some((e) => e.kind === 'object' && e.start <= 9 && e.end >= 3)).toBe(true);
    const device = await index.ask('which piece of electronics sits on the desk?', { video: 'office-desk.mp4' });
    expect(device.output.toLowerCase()).toContain('laptop');
    expect(device.output).not.toMatch(NAMES_MODEL);
  });
  test('with a caption, the caption answers the activity', async () => {
    const a = await index.ask('what is she making in the pan?', { video: 'kitchen-cam.mp4' });
    expect(a.output.toLowerCase()).toContain('pancake');
    expect(a.evidence.some((e) => e.kind === 'caption')).toBe(true);
  });

  test('the colour of a thing no label names is not the colour of the thing it sits on', async () => {
    const a = await index.ask('what colour are the lids on the cups?', { video: 'office-desk.mp4' });
    expect(a.output).toMatch(/cannot tell the colour of the lids/);
    expect(a.output).toMatch(NAMES_MODEL);
    expect(a.evidence).toEqual([]);
  });

  test('writing on a thing nothing shows is not that thing\'s writing; text "on the screen" still is', async () => {
    const a = await index.ask('what is written on the whiteboard?', { video: 'office-desk.mp4' });
    expect(a.output).toMatch(/could not find a whiteboard/);
    const b = await index.ask('what is written on the screen?', { video: 'office-desk.mp4' });
    expect(b.output).toContain('QUARTERLY PLAN');
    expect(b.output).not.toMatch(/could not find/);
  });

  test('a video without a sound track: nothing is said in it (no transcriber would change that)', async () => {
    const a = await index.ask('what does he say?', { video: 'office-desk.mp4' });
    expect(a.output).toMatch(/Nothing is said in office-desk\.mp4: it has no audio track/);
    expect(a.output).not.toMatch(/transcriber/);
  });
});

describe('free text by the core relevance', () => {
  const shop = new FakeIndex([
    {
      fileName: 'shop.mp4',
      duration: 30,
      segments: [
        objectSpan('person', 0, 29, 1, 0.9),
        { kind: 'ocr', start: 2, end: 5, text: 'ESPRESSO BAR' },
        {
          kind: 'transcript',
          start: 10,
          end: 14,
          text: 'This is our new espresso machine, it grinds the beans itself.',
        },
        { kind: 'caption', start: 20, end: 29, text: 'A man wipes the espresso bar next to a shiny grinder.' },
      ],
    },
  ]);
  afterAll(() => shop.close());

  test('the sentence holding more of what is asked wins across kinds, and beats "not found"', async () => {
    const a = await shop.ask('is there an espresso machine?');
    expect(a.output).not.toMatch(/could not find/);
    expect(a.evidence[0]!.kind).toBe('transcript');
    expect(a.evidence[0]!.start).toBe(10);
  });

  test('each kind answers what it bears on: the grinder from the caption, the sign from the on-screen text', async () => {
    const a = await shop.ask('what is next to the espresso bar?');
    expect(a.evidence[0]!.kind).toBe('caption');
    expect(a.output).toContain('grinder');
    const b = await shop.ask('what does the sign say about espresso?');
    expect(b.output).toContain('ESPRESSO BAR');
  });
});
