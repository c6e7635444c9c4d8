/**
 * Time said relative to now (issue 21): "in the last 10 minutes", "in the past hour", "is anyone
 * there now", "right now", read as a window or moment of a live stream by its clock (a function
 * given to the answering, here a test clock), or of a finished file's end. Fake index, no models.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { readRelativeTime, type StreamClock } from '../src/answering/relative-time';
import { FakeIndex, objectSpan } from './fake-index';

describe('reading relative time', () => {
  test('windows and moments said relative to now', () => {
    expect(readRelativeTime('What happened in the last 10 minutes?')).toEqual({ last: 600 });
    expect(readRelativeTime('anything unusual in the past hour')).toEqual({ last: 3600 });
    expect(readRelativeTime('who came by over the last minute')).toEqual({ last: 60 });
    expect(readRelativeTime('what went on in the previous thirty seconds?')).toEqual({ last: 30 });
    expect(readRelativeTime('the last half hour, any cars?')).toEqual({ last: 1800 });
    expect(readRelativeTime('Is anyone there now?')).toEqual({ now: true });
    expect(readRelativeTime('what is on the table right now')).toEqual({ now: true });
    expect(readRelativeTime('is the car still there?')).toEqual({ now: true });
  });

  test('no relative time: a question about the last of something, or "now" as quoted text', () => {
    expect(readRelativeTime('When did the last person leave?')).toBeNull();
    expect(readRelativeTime('Who says "now"?')).toBeNull();
    expect(readRelativeTime('How many cars are there?')).toBeNull();
  });
});

/** A camera's 700 s so far: a person 0–100 s, a cup 300–400 s, a person again from 650 s. */
const index = new FakeIndex([
  {
    fileName: 'door camera',
    duration: 695,
    segments: [
      objectSpan('person', 0, 100, 1, 0.9),
      objectSpan('cup', 300, 400, 1, 0.8),
      objectSpan('person', 650, 695, 1, 0.9),
    ],
  },
  {
    fileName: 'old.mp4',
    duration: 60,
    segments: [objectSpan('dog', 0, 20, 1, 0.9), objectSpan('cat', 50, 60, 1, 0.9)],
  },
]);
afterAll(() => index.close());
const cam = index.videos[0]!.id;
/** The camera is live: 700 s since it started, frames analysed up to 695 s. */
const live: StreamClock = async (id) => (id === cam ? { nowT: 700, latestT: 695 } : null);

describe('relative time on a live stream and on a finished file', () => {
  test('"is anyone there now": the latest moment of the stream, not its start', async () => {
    const a = await index.ask('Is anyone there now?', { clock: live });
    expect(a.output).not.toMatch(/could not find/);
    expect(a.evidence.length).toBeGreaterThan(0);
    for (const e of a.evidence) {
      expect(e.video_id).toBe(cam);
      expect(e.end).toBeGreaterThanOrEqual(690);
    }
  });

  test('"what happened in the last minute / 10 minutes": only what the window holds', async () => {
    const minute = await index.ask('What happened in the last minute?', { clock: live });
    expect(minute.output).not.toMatch(/\bcup\b/);
    expect(minute.evidence.every((e) => e.end >= 640 && e.video_id === cam)).toBe(true);
    const ten = await index.ask('what was seen in the last 10 minutes?', { clock: live });
    expect(ten.output).toMatch(/\bcup\b/);
    expect(ten.evidence.every((e) => e.end >= 100)).toBe(true);
  });

  test('a stalled stream is not described from its last frame as if it were now', async () => {
    const stalled: StreamClock = async (id) => (id === cam ? { nowT: 5000, latestT: 695 } : null);
    const a = await index.ask('Is anyone there now?', { clock: stalled });
    expect(a.evidence.filter((e) => e.start < 4990)).toEqual([]);
  });

  test('on a finished file "now" is its end', async () => {
    const a = await index.ask('what animal is there now?', { video: 'old.mp4', clock: async () => null });
    expect(a.output).toMatch(/\bcat\b/);
    expect(a.output).not.toMatch(/\bdog\b/);
  });
});

test("a sender's clock ahead of ours: the frames already analysed are not in the future", async () => {
  const ahead: StreamClock = async (id) => (id === cam ? { nowT: 100, latestT: 695 } : null);
  const a = await index.ask('what was seen in the last minute?', { clock: ahead });
  expect(a.evidence.length).toBeGreaterThan(0);
  expect(a.evidence.every((e) => e.end >= 635)).toBe(true);
});
