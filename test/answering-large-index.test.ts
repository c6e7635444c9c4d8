/**
 * Questions over an index of many videos read only what bears on them: what a subject is seen with
 * comes from the subject's own videos (not the first spans of the whole index), a keyword search in
 * a few videos finds every match of theirs however their rows lie among the others, the kinds each
 * video holds follow its changes, a name is looked up as words, and a question text asked again is
 * not embedded again.
 * A real SQLite database (FakeIndex), no models.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import type { Embedder } from '../src/analysis/engines/embedder';
import { RecentVectors } from '../src/search/question-vectors';
import { RetrievalCore } from '../src/search/retrieval';
import { frames, segments, type Video } from '../src/storage/schema';
import { FakeIndex, type FakeVideo, objectSpan } from './fake-index';

// 600 videos whose chairs start at 0:00 (the first 600 object spans of the index by time), and one
// video where a dog rides a skateboard from 1:40.
const crowd: FakeVideo[] = Array.from({ length: 600 }, (_, i) => ({
  fileName: `room-${String(i).padStart(3, '0')}.mp4`,
  duration: 30,
  segments: [objectSpan('chair', 0, 20, 1), { kind: 'transcript', start: 1, end: 4, text: `the room number ${i}` }],
}));
const index = new FakeIndex([
  ...crowd,
  {
    fileName: 'ride.mp4',
    duration: 180,
    segments: [
      objectSpan('chair', 0, 10, 1),
      objectSpan('dog', 100, 120, 1),
      objectSpan('skateboard', 101, 119, 1),
      objectSpan('car', 150, 170, 1),
    ],
  },
]);
afterAll(() => index.close());

describe('a large index', () => {
  test('what a subject is seen with comes from its own videos, however many spans come before it', async () => {
    const a = await index.ask('What is the dog riding?');
    expect(a.output).toContain('skateboard');
    expect(a.output).not.toContain('chair');
    expect(a.output).not.toContain('car');
    expect(a.evidence.map((e) => e.file_name)).toEqual(['ride.mp4', 'ride.mp4']);
  });

  test('a keyword search in a few videos finds all their matches, their rows among other videos', async () => {
    const core = new RetrievalCore({ catalog: index.catalog, embedder: null });
    // Rows of two videos written alternately (as two analyses writing at once would).
    const [a, b] = index.videos.slice(0, 2) as [(typeof index.videos)[0], (typeof index.videos)[0]];
    for (let i = 0; i < 20; i++)
      for (const v of [a, b])
        index.db
          .insert(segments)
          .values({ videoId: v.id, kind: 'ocr', start: i, end: i + 1, text: `the sign ${i}`, confidence: 0.9 })
          .run();
    const inA = (ids: number[]) =>
      index.db
        .select({ id: segments.id, videoId: segments.videoId })
        .from(segments)
        .all()
        .filter((s) => ids.includes(s.id))
        .every((s) => s.videoId === a.id);
    const one = await core.finder.keyword({ videos: [a], window: null }, ['sign'], 100);
    expect(one).toHaveLength(20);
    expect(inA(one)).toBe(true);
    // A common word too (ranked over its first matches in the scope).
    const common = await core.finder.keyword({ videos: [a], window: null }, ['the'], 100);
    expect(common).toHaveLength(21); // its 20 signs and its transcript line
    expect(inA(common)).toBe(true);
    // The same matches as a search over more videos than are bounded, kept to this video.
    const wide = await core.finder.keyword({ videos: index.videos.slice(0, 40), window: null }, ['sign'], 100);
    expect(wide.filter((id) => one.includes(id))).toHaveLength(20);
    expect(await core.finder.keyword({ videos: [index.videos.at(-1)!], window: null }, ['sign'], 100)).toEqual([]);
  });

  test('the kinds a video holds follow its changes', async () => {
    const core = new RetrievalCore({ catalog: index.catalog, embedder: null });
    const v = index.videos.at(-1)!;
    const scope = { videos: [v], window: null };
    expect(await core.finder.has(scope, ['caption'])).toBe(false);
    expect(await core.finder.byKind(scope, ['caption'])).toEqual([]);
    expect(await core.finder.has(scope, ['object'])).toBe(true);
    index.db
      .insert(segments)
      .values({ videoId: v.id, kind: 'caption', start: 0, end: 5, text: 'a dog on a skateboard', confidence: 0.9 })
      .run();
    core.invalidate(v.id);
    expect(await core.finder.has(scope, ['caption'])).toBe(true);
    expect((await core.finder.byKind(scope, ['caption', 'ocr'])).map((c) => c.text)).toEqual(['a dog on a skateboard']);
    expect((await core.finder.withLabel(index.videos, 'skateboard')).map((x) => x.fileName)).toEqual(['ride.mp4']);
    expect(await core.finder.withLabel(index.videos, 'giraffe')).toEqual([]);
  });
});

describe('the frame nearest a time', () => {
  test('is the nearest sampled frame of that video; of two as near, the earlier', async () => {
    const core = new RetrievalCore({ catalog: index.catalog, embedder: null });
    const [a, b] = index.videos as [Video, Video];
    for (const [v, t] of [
      [a, 0],
      [a, 2],
      [a, 4],
      [b, 1],
    ] as const)
      index.db
        .insert(frames)
        .values({ videoId: v.id, t, shot: 0, file: `${v.id}-${t}.jpg` })
        .run();
    const near = (t: number) => core.frameNear(a.id, t);
    expect<(string | null)[]>(
      await Promise.all([near(-1), near(0.9), near(1), near(1.1), near(3.5), near(99)]),
    ).toEqual([0, 0, 0, 2, 4, 4].map((t) => `${a.id}-${t}.jpg`));
    expect(await core.frameNear(index.videos.at(-1)!.id, 3)).toBeNull();
  });
});

describe('a name no person carries', () => {
  const people = new FakeIndex([
    {
      fileName: 'meeting.mp4',
      duration: 60,
      analysis: { faces: { people: 1 } },
      segments: [
        { kind: 'face', start: 0, end: 10, text: 'face', person: { id: 'p1', name: 'Anna' } },
        { kind: 'transcript', start: 12, end: 16, text: 'The river was calm, says Zelda Fitzgerald.' },
      ],
    },
  ]);
  afterAll(() => people.close());

  test('is "not found", unless the videos mention it as words', async () => {
    const bob = await people.ask('When does Bob appear?');
    expect(bob.output).toContain('could not find anyone named "Bob"');
    expect(bob.output).toContain('Anna');
    for (const name of ['Zelda', 'Zelda Fitzgerald']) {
      const z = await people.ask(`When does ${name} appear?`);
      expect(z.output).not.toContain('could not find anyone named');
      expect(z.output).toContain('Zelda Fitzgerald');
    }
  });
});

describe('question vectors', () => {
  /** A stand-in embedder that counts what it is asked (a real model is not needed to test the keeping). */
  function counting(): Embedder & { calls: string[][] } {
    const calls: string[][] = [];
    return {
      calls,
      info: { kind: 'embeddings', name: 'counting-stand-in' } as Embedder['info'],
      dims: 2,
      embed: async (texts) => {
        calls.push(texts);
        return texts.map((t) => new Float32Array([t.length, 1]));
      },
    };
  }

  test('a text asked again is not embedded again; others are', async () => {
    const inner = counting();
    const e = new RecentVectors(inner, 2);
    const first = (await e.embed(['how many cars']))[0]!;
    first[0] = 99; // a caller changing its copy changes nothing kept
    expect([...(await e.embed(['how many cars']))[0]!]).toEqual([13, 1]);
    expect(inner.calls).toEqual([['how many cars']]);
    await e.embed(['a', 'b']); // several texts at once: passed on, not kept
    await e.embed(['a', 'b']);
    expect(inner.calls).toHaveLength(3);
  });

  test('the least recently asked text is dropped first', async () => {
    const inner = counting();
    const e = new RecentVectors(inner, 2);
    await e.embed(['one']);
    await e.embed(['two']);
    await e.embed(['one']); // "two" is now the least recent
    await e.embed(['three']);
    await e.embed(['one']);
    expect(inner.calls.flat()).toEqual(['one', 'two', 'three']);
    await e.embed(['two']);
    expect(inner.calls.flat()).toEqual(['one', 'two', 'three', 'two']);
  });
});

describe('a label with more spans than one read holds', () => {
  // 520 videos with a cat at the start, and one where the cat comes back at 3:20: the last of 521
  // spans is not among the first 500 by time.
  const cats = new FakeIndex([
    ...Array.from({ length: 520 }, (_, i) => ({
      fileName: `cat-${String(i).padStart(3, '0')}.mp4`,
      duration: 30,
      segments: [objectSpan('cat', 1, 5, 1)],
    })),
    { fileName: 'late.mp4', duration: 300, segments: [objectSpan('cat', 200, 210, 1)] },
  ]);
  afterAll(() => cats.close());

  test('"when" counts every span it does not show, not the ones it read', async () => {
    const a = await cats.ask('When is a cat visible?');
    const more = /and (\d+) more times/.exec(a.output);
    expect(more).not.toBeNull();
    expect(Number(more![1]) + a.evidence.length).toBe(521);
  });

  test('"last" is the latest span of the index, not the last one read', async () => {
    const a = await cats.ask('When is the cat seen for the last time?');
    expect(a.evidence.map((e) => e.file_name)).toEqual(['late.mp4']);
    expect(a.output).toContain('3:20');
  });
});

describe('what bears on a question lies beyond the first rows by time', () => {
  // 600 videos that each open with a line of speech, a text on screen, a cat and a few captions
  // (thousands of rows at 0:00–0:20, the first of the index by time), then the videos where the
  // asked-about things happen late.
  const late = new FakeIndex([
    ...Array.from(
      { length: 600 },
      (_, i): FakeVideo => ({
        fileName: `lobby-${String(i).padStart(3, '0')}.mp4`,
        duration: 30,
        segments: [
          { kind: 'transcript', start: 1, end: 4, text: `welcome to lobby ${i}` },
          ...[5, 9, 13].map((t) => ({ kind: 'transcript' as const, start: t, end: t + 3, text: 'the lobby is open' })),
          { kind: 'speech', start: 1, end: 4, text: 'speech' },
          { kind: 'ocr', start: 0, end: 3, text: `LOBBY ${i}` },
          objectSpan('cat', 0, 5, 1),
          ...[0, 5, 10, 15].map((t) => ({
            kind: 'caption' as const,
            start: t,
            end: t + 5,
            text: 'an empty lobby with a chair',
          })),
        ],
      }),
    ),
    {
      fileName: 'late.mp4',
      duration: 400,
      segments: [
        { kind: 'transcript', start: 100, end: 220, text: 'the treasure is buried under the old oak' },
        { kind: 'speech', start: 100, end: 220, text: 'speech' },
        { kind: 'ocr', start: 300, end: 310, text: 'GRAND OPENING SALE' },
        objectSpan('giraffe', 320, 330, 1),
        { kind: 'caption', start: 340, end: 350, text: 'a teacher writes on a whiteboard' },
      ],
    },
  ]);
  afterAll(() => late.close());

  test('a phrase said only in the last video is found', async () => {
    const a = await late.ask('When does someone say treasure?');
    expect(a.output).toContain('treasure is buried');
    expect(a.evidence.map((e) => e.file_name)).toEqual(['late.mp4']);
  });

  test('text on screen in a late video is found, and the last text is the latest', async () => {
    const sale = await late.ask('When does the word SALE appear on screen?');
    expect(sale.output).toContain('GRAND OPENING SALE');
    expect(sale.evidence.map((e) => e.file_name)).toEqual(['late.mp4']);
    const which = await late.ask('Which video displays the word sale?');
    expect(which.output).toContain('late.mp4');
    const last = await late.ask('What text is shown last?');
    expect(last.evidence.map((e) => e.file_name)).toEqual(['late.mp4']);
    const when = await late.ask('At what time is text displayed?');
    const more = /and (\d+) more\)/.exec(when.output);
    expect(more).not.toBeNull();
    expect(Number(more![1]) + when.evidence.length).toBe(601);
  });

  test('speech is counted and summed over the whole index', async () => {
    const which = await late.ask('Which video has the most talking?');
    expect(which.output).toMatch(/^Speech is heard in late\.mp4/);
    const much = await late.ask('How much of the clip has talking?');
    expect(much.output).toContain('601 times');
    expect(much.output).toContain('to 3:40');
  });

  test('the different texts on screen are counted over the whole index', async () => {
    const a = await late.ask('How many different texts appear?');
    expect(a.output).toMatch(/^601 different texts/);
  });

  test('a kind of thing seen only late is listed', async () => {
    const a = await late.ask('What animals are there?');
    expect(a.output).toContain('giraffe');
  });

  test('a caption beyond the first ones read names what text is written on', async () => {
    const a = await late.ask('What is written on the whiteboard?');
    expect(a.output).not.toContain('could not find a whiteboard');
  });
});

describe('a video with more captions than one read holds', () => {
  // 520 captions of a street (one a second), then a detection the caption of its moment contradicts.
  const long = new FakeIndex([
    {
      fileName: 'street.mp4',
      duration: 700,
      segments: [
        ...Array.from({ length: 520 }, (_, t) => ({
          kind: 'caption' as const,
          start: t,
          end: t + 1,
          text: 'a quiet street',
        })),
        objectSpan('sheep', 600, 610, 1),
        { kind: 'caption', start: 600, end: 610, text: 'a dog lying on the grass' },
      ],
    },
  ]);
  afterAll(() => long.close());

  test('the caption of a late detection still says what it contradicts', async () => {
    const a = await long.ask('When is a sheep visible?');
    expect(a.output).toContain('does not mention a sheep');
    expect(a.output).toContain('a dog lying on the grass');
  });
});

describe('two videos compared, one with more spans than one read holds', () => {
  const two = new FakeIndex([
    {
      fileName: 'busy.mp4',
      duration: 900,
      segments: Array.from({ length: 520 }, (_, i) => objectSpan('car', i, i + 1, 1)),
    },
    { fileName: 'quiet.mp4', duration: 900, segments: [objectSpan('car', 700, 800, 3)] },
  ]);
  afterAll(() => two.close());

  test('each video is read for its own spans', async () => {
    const a = await two.ask('Which has more cars, busy.mp4 or quiet.mp4?');
    expect(a.output).toMatch(/^quiet\.mp4 has the most: quiet\.mp4 shows three cars/);
  });
});
