/**
 * The fake index of the evidence classes (issue 34): captions, transcripts, on-screen text and
 * detections written so that each class of question has one right piece of evidence among wrong
 * ones (a caption of another moment, a credit line, a person who does not speak).
 */
import { FakeIndex, objectSpan, type FakeVideo } from './fake-index';

export const EVIDENCE_VIDEOS: FakeVideo[] = [
  {
    fileName: 'garden-party.mp4',
    duration: 30,
    segments: [
      objectSpan('person', 0, 30, (t) => (t < 12 ? 1 : 2), 0.9),
      objectSpan('sports ball', 5, 12, 1, 0.7),
      { kind: 'caption', start: 0, end: 4, text: 'A title card with white letters on a black background.' },
      { kind: 'caption', start: 5, end: 12, text: 'A man kicks the ball with the side of his foot across the lawn.' },
      {
        kind: 'caption',
        start: 12,
        end: 20,
        text: 'A woman in a yellow raincoat holds a coffee mug near a wooden fence.',
      },
      { kind: 'caption', start: 20, end: 30, text: 'A grassy field with tall trees under a cloudy sky.' },
      { kind: 'transcript', start: 0, end: 6, text: 'Welcome everyone to our little garden party.' },
      { kind: 'transcript', start: 6, end: 12, text: 'Please help yourselves to the food on the table.' },
      { kind: 'transcript', start: 12, end: 20, text: 'Later on we will play a round of croquet by the pond.' },
      { kind: 'speech', start: 0, end: 20, text: 'speech', confidence: 0.9 },
      { kind: 'shot', start: 0, end: 30, text: 'shot 1' },
    ],
  },
  {
    fileName: 'office-chat.mp4',
    duration: 20,
    segments: [
      objectSpan('person', 0, 20, 2, 0.9),
      objectSpan('laptop', 0, 20, 1, 0.8),
      { kind: 'caption', start: 0, end: 20, text: 'Two people sit at a desk in an office talking.' },
      { kind: 'speech', start: 1, end: 18, text: 'speech', confidence: 0.9 },
      { kind: 'shot', start: 0, end: 20, text: 'shot 1' },
    ],
  },
  {
    fileName: 'kitchen-tour.mp4',
    duration: 20,
    segments: [
      objectSpan('oven', 3, 20, 1, 0.8),
      { kind: 'caption', start: 0, end: 3, text: 'A title card reading Kitchen Tour in white letters.' },
      {
        kind: 'caption',
        start: 3,
        end: 10,
        text: 'A bright kitchen with a checkered black and white tile floor and wooden cabinets.',
      },
      { kind: 'caption', start: 10, end: 20, text: 'A pot of water boils on the stove.' },
      { kind: 'shot', start: 0, end: 3, text: 'shot 1' },
      { kind: 'shot', start: 3, end: 20, text: 'shot 2' },
    ],
  },
  {
    fileName: 'cups-on-table.mp4',
    duration: 40,
    segments: [
      objectSpan('cup', 0, 40, (t) => (t < 12 ? 3 : t < 25 ? 2 : 1), 0.8),
      objectSpan('dining table', 0, 40, 1, 0.8),
      { kind: 'shot', start: 0, end: 40, text: 'shot 1' },
    ],
  },
  {
    fileName: 'show-opening.mp4',
    duration: 20,
    segments: [
      { kind: 'ocr', start: 0, end: 1.5, text: 'a film by jane doe', extra: { box: [0.3, 0.9, 0.4, 0.04] } },
      { kind: 'ocr', start: 3, end: 10, text: 'SUNSET STORIES', extra: { box: [0.15, 0.35, 0.7, 0.2] } },
      { kind: 'ocr', start: 11, end: 12, text: 'episode four', extra: { box: [0.4, 0.8, 0.2, 0.04] } },
      { kind: 'shot', start: 0, end: 20, text: 'shot 1' },
    ],
  },
  {
    fileName: 'countdown-living-room.mp4',
    duration: 12,
    segments: [
      { kind: 'ocr', start: 0, end: 1, text: '5' },
      { kind: 'ocr', start: 2, end: 3, text: '4' },
      { kind: 'ocr', start: 4, end: 5, text: '3' },
      { kind: 'ocr', start: 0, end: 12, text: 'sttck', confidence: 0.6 },
      objectSpan('couch', 0, 12, 1, 0.8),
      { kind: 'shot', start: 0, end: 12, text: 'shot 1' },
    ],
  },
  {
    fileName: 'bottles-shelf.mp4',
    duration: 20,
    hasAudio: false,
    segments: [objectSpan('bottle', 0, 20, 3, 0.8), { kind: 'shot', start: 0, end: 20, text: 'shot 1' }],
  },
  {
    fileName: 'meadow-birds.mp4',
    duration: 20,
    segments: [
      objectSpan('sheep', 4, 9, 1, 0.37),
      objectSpan('bird', 10, 18, 1, 0.8),
      // Birdsong and music: the voice detector fired, unsure, and the loudness barely swings.
      { kind: 'speech', start: 0, end: 20, text: 'speech, not transcribed', confidence: 0.58, extra: { swing: 0.6 } },
      { kind: 'shot', start: 0, end: 20, text: 'shot 1' },
    ],
  },
  {
    fileName: 'shoe-shop.mp4',
    duration: 10,
    segments: [
      {
        kind: 'caption',
        start: 0,
        end: 6,
        text: 'A red Nike running shoe stands on a white shelf beside a leather boot.',
      },
      { kind: 'caption', start: 6, end: 10, text: 'A shop window with a striped awning.' },
      // A watermark in a corner, read on every sampled frame, and a fragment of it.
      { kind: 'ocr', start: 0, end: 3, text: 'SHOPCAM', confidence: 0.7 },
      { kind: 'ocr', start: 3, end: 6, text: 'SHOPCAM', confidence: 0.7 },
      { kind: 'ocr', start: 6, end: 10, text: 'SHOPCAM', confidence: 0.7 },
      { kind: 'ocr', start: 4, end: 5, text: 'shpcm', confidence: 0.4 },
      { kind: 'ocr', start: 7, end: 9, text: 'SALE 50%', confidence: 0.9 },
      { kind: 'shot', start: 0, end: 10, text: 'shot 1' },
    ],
  },
  {
    // Two men talk on a pavement; at 0:06 the detector also puts two faint boxes (0.37) on a
    // gate post far off: "four people at once" is what summed detections would say.
    fileName: 'pavement-talk.mp4',
    duration: 10,
    segments: [
      {
        ...objectSpan('person', 0, 9, (t) => (t === 6 ? 4 : t < 2 ? 1 : 2), 0.67),
        extra: {
          counts: [
            [0, 1],
            [1, 1],
            [2, 2],
            [4, 2],
            [6, 4],
            [8, 2],
          ],
          max_count: 4,
          best_t: 6,
          boxes: [
            { score: 0.72, box: [0.19, 0.1, 0.15, 0.83] },
            { score: 0.61, box: [0.56, 0.02, 0.15, 0.98] },
            { score: 0.37, box: [0.82, 0.16, 0.03, 0.13] },
            { score: 0.36, box: [0.81, 0.16, 0.03, 0.13] },
          ],
        },
      },
      { kind: 'shot', start: 0, end: 10, text: 'shot 1' },
    ],
  },
];

export function evidenceIndex(): FakeIndex {
  return new FakeIndex(EVIDENCE_VIDEOS);
}
