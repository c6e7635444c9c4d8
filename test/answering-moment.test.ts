/**
 * A moment (a time in the question, or a point `target`) is judged AT the moment: counts, yes/no
 * presence and "what is on screen" count what covers the moment, not a span that ended a sampled
 * frame before it. Fake index (no models); the spans are laid out as the objects analysis lays them
 * (a sampled frame every 5 s stands for the time halfway to its neighbours).
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { momentWindow } from '../src/answering/series';
import type { Video } from '../src/storage/schema';
import { FakeIndex, type FakeSegment } from './fake-index';

/** A detection run as the analysis writes it: frames every 5 s from `first` to `last`, padded halfway. */
function sampled(label: string, first: number, last: number, n: (t: number) => number = () => 1): FakeSegment {
  const counts: [number, number][] = [];
  for (let t = first; t <= last; t += 5) counts.push([t, n(t)]);
  return {
    kind: 'object',
    start: Math.max(0, first - 2.5),
    end: last + 2.5,
    text: label,
    confidence: 0.8,
    extra: { counts, max_count: Math.max(...counts.map(([, c]) => c)) },
  };
}

const index = new FakeIndex([
  {
    // Frames at 1, 6, 11, …, 56: twelve frames over a minute.
    fileName: 'reception-desk.mp4',
    duration: 60,
    analysis: { objects: { frames: 12 } },
    segments: [
      sampled('person', 11, 21),
      sampled('person', 36, 41),
      sampled('cup', 1, 56, (t) => (t < 30 ? 2 : 1)),
      { kind: 'shot', start: 0, end: 60, text: 'shot 1' },
    ],
  },
]);
afterAll(() => index.close());

const v = 'reception-desk.mp4';
const saysPerson = (s: string) => /\b(person|people|someone|somebody)\b/i.test(s);

describe('a moment counts what is there at the moment', () => {
  test('yes/no presence: nobody 1.5 s after the last person left, whether the time is in the words or the target', async () => {
    for (const [q, target] of [
      ['Is someone in view at 0:45?', undefined],
      ['is there a person in the picture at 45 seconds', undefined],
      ['Can we see anybody here?', '45'],
      ['Is anyone at the desk at this moment?', '0:25'],
    ] as const) {
      const a = await index.ask(q, { video: v, target });
      expect(a.found, q).toBe(false);
      expect(a.output, q).not.toMatch(/^Yes/);
      expect(
        a.evidence.some((e) => e.kind === 'object' && e.text === 'person'),
        q,
      ).toBe(false);
    }
  });

  test('yes/no presence: someone inside a span is there', async () => {
    const a = await index.ask('Is someone in view at 0:40?', { video: v });
    expect(a.found).toBe(true);
    expect(a.output).toMatch(/^Yes/);
    expect(a.evidence.some((e) => e.text === 'person' && e.start <= 40 && e.end >= 40)).toBe(true);
  });

  test('a count at a moment is the count of the frame that covers it, not of a span that ended before', async () => {
    const gone = await index.ask('How many people are visible at 0:45?', { video: v });
    expect(gone.output).not.toMatch(/\bone person\b/);
    const here = await index.ask('how many people can be seen at 0:38', { video: v });
    expect(here.output).toMatch(/\bone person\b/);
    const cups = await index.ask('How many cups are on the desk?', { video: v, target: '50' });
    expect(cups.output).toMatch(/\bone cup\b/);
    expect(cups.evidence.every((e) => e.start >= 30)).toBe(true);
  });

  test('"what is on screen" at a moment names what covers it only', async () => {
    const a = await index.ask('What is on screen at 0:45?', { video: v });
    expect(a.output.toLowerCase()).toContain('cup');
    expect(saysPerson(a.output)).toBe(false);
    const b = await index.ask('What can be seen right there?', { video: v, target: '0:16' });
    expect(saysPerson(b.output)).toBe(true);
  });
});

describe('the moment window follows the sampling of the scope', () => {
  const video = (durationSec: number, frames: number | null) =>
    ({ durationSec, analysis: frames ? { objects: { frames } } : {} }) as unknown as Video;
  test('a quarter of the sampling interval, never reaching the previous sampled frame', () => {
    expect(momentWindow(45, [video(60, 12)])).toEqual({ start: 43.75, end: 46.25 });
    // One frame a second: a quarter second either side; several videos: the finest sampling.
    expect(momentWindow(10, [video(60, 60)])).toEqual({ start: 9.75, end: 10.25 });
    expect(momentWindow(10, [video(60, 12), video(60, 30)])).toEqual({ start: 9.5, end: 10.5 });
    // Unknown sampling: one second.
    expect(momentWindow(0.5, [video(60, null)])).toEqual({ start: 0, end: 1.5 });
  });
});

describe('a moment written in the question reads the text at that moment', () => {
  const clocks = new FakeIndex([
    {
      fileName: 'stopwatch.mp4',
      duration: 12,
      segments: [
        { kind: 'ocr', start: 1, end: 6, text: 'TIME 00:01' },
        { kind: 'ocr', start: 6, end: 11, text: 'TIME 00:06' },
      ],
    },
    { fileName: 'lobby.mp4', duration: 12, segments: [{ kind: 'ocr', start: 0, end: 12, text: 'WELCOME' }] },
  ]);
  afterAll(() => clocks.close());
  /** The OCR moment reader's stand-in: the stopwatch shows the second it is at. */
  const readAt = (_v: Video, t: number) => [
    { text: `TIME 00:${String(Math.floor(t)).padStart(2, '0')}`, confidence: 0.9 },
  ];

  test('"what does the display read at 4 seconds": the frame at 4 s, not the sampled frame at 1 s', async () => {
    for (const q of ['What does the display read at 4 seconds?', 'which time is shown on screen at 0:04']) {
      const a = await clocks.ask(q, { video: 'stopwatch.mp4', textAt: readAt });
      expect(a.output, q).toContain('TIME 00:04');
      expect(
        a.evidence.some((e) => e.kind === 'ocr' && e.start === 4 && e.text === 'TIME 00:04'),
        q,
      ).toBe(true);
    }
  });

  test('the moment is read in the one video the question names, and only there', async () => {
    const named = await clocks.ask('what does the stopwatch video display at 0:09?', { textAt: readAt });
    expect(named.output).toContain('TIME 00:09');
    // Two videos and none named: no single frame to read; the sampled text answers.
    const both = await clocks.ask('What text is on screen at 0:09?', { textAt: readAt });
    expect(both.output).not.toContain('TIME 00:09');
  });
});
