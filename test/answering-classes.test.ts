/**
 * Classes of answer-quality failure (issue 19), on a fake index (no models): a part of the scene
 * (the sky, the floor) is not the measured background; the thing a question asks about decides
 * whether labels can answer it (a known label, or a thing no label names).
 */
import { afterAll, describe, expect, test } from 'bun:test';
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
