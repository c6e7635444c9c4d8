/**
 * The first (and last) segments by time of a read over many videos (EvidenceFinder.byKind): bounded
 * by the first and last starts kept per video, they are the same rows, ties included, as a read of
 * every segment of the kind sorted by time; the count of a label's spans, from the counts kept per
 * video, is the count of its rows; and both follow a video's changes once it is invalidated.
 * A real SQLite database (FakeIndex), no models.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { RetrievalCore } from '../src/search/retrieval';
import { type SegmentKind, segments } from '../src/storage/schema';
import { FakeIndex, type FakeVideo, objectSpan } from './fake-index';

// 700 videos; most starts are whole seconds from a few values, so that many spans tie at the
// limit (a bound that broke ties differently from the full sort would show).
let seed = 11;
const rand = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
};
const startAt = () => Math.floor(rand() * 6) * (rand() < 0.2 ? 7 : 1);
const many: FakeVideo[] = Array.from({ length: 700 }, (_, i) => {
  const segs: FakeVideo['segments'] = [];
  for (let k = 0; k < 1 + Math.floor(rand() * 4); k++) {
    const s = startAt();
    if (i % 5 !== 0) segs.push(objectSpan('person', s, s + 3, 1));
    if (i % 3 === 0) segs.push(objectSpan(rand() < 0.5 ? 'dog' : 'cat', s + 1, s + 2, 1));
    segs.push({ kind: 'transcript', start: startAt(), end: 50, text: `line ${k} of ${i}` });
  }
  if (i % 7 === 0) segs.push({ kind: 'ocr', start: startAt(), end: 9, text: `sign ${i}` });
  // A label of few videos with many spans each (a bound from the counts kept, not from the videos).
  if (i % 250 === 1) for (let k = 0; k < 300; k++) segs.push(objectSpan('bird', Math.floor(rand() * 200), 300, 1));
  return { fileName: `clip-${String(i).padStart(3, '0')}.mp4`, duration: 60, segments: segs };
});
const index = new FakeIndex(many);
afterAll(() => index.close());

/** Every segment of the kinds (and labels) in the videos, sorted by time and cut: the read without a bound. */
function unbounded(kinds: SegmentKind[], labels: string[] | undefined, limit: number, last: boolean): number[] {
  const ids = index.db
    .all<{ id: number }>(
      sql`SELECT id FROM segments WHERE video_id IN (SELECT value FROM json_each(${JSON.stringify(index.videos.map((v) => v.id))}))
          AND kind IN (SELECT value FROM json_each(${JSON.stringify(kinds)}))
          ${labels ? sql`AND text IN (SELECT value FROM json_each(${JSON.stringify(labels)}))` : sql``}
          ORDER BY start ${last ? sql`DESC` : sql`ASC`} LIMIT ${limit}`,
    )
    .map((r) => r.id);
  return last ? ids.reverse() : ids;
}

describe('the first segments by time over many videos', () => {
  test('are the rows a read of every segment sorted by time keeps, ties included, first and last', async () => {
    const finder = new RetrievalCore({ catalog: index.catalog, embedder: null }).finder;
    const scope = { videos: index.videos, window: null };
    const reads: [SegmentKind[], string[] | undefined][] = [
      [['object'], ['person']],
      [['object'], ['dog']],
      [['object'], ['dog', 'cat']],
      [['object'], ['bird']],
      [['object'], ['bird', 'dog']],
      [['transcript'], undefined],
      [['ocr'], undefined],
      [['object', 'transcript', 'ocr'], undefined],
    ];
    let checked = 0;
    for (const [kinds, labels] of reads)
      for (const limit of [1, 4, 100, 500])
        for (const last of [false, true]) {
          const got = (await finder.byKind(scope, kinds, { ...(labels && { labels }), limit, last })).map((s) => s.id);
          expect(got).toEqual(unbounded(kinds, labels, limit, last));
          checked++;
        }
    expect(checked).toBe(64);
    // How many spans of labels (counted from what is kept per video): as many as a count of the rows.
    const count = (labels: string[]) =>
      index.db.all<{ n: number }>(
        sql`SELECT count(*) AS n FROM segments WHERE kind = 'object' AND text IN (SELECT value FROM json_each(${JSON.stringify(labels)}))`,
      )[0]!.n;
    for (const labels of [['person'], ['dog', 'cat'], ['giraffe']])
      expect(await finder.countByKind(scope, ['object'], labels)).toBe(count(labels));
    expect(count(['person'])).toBeGreaterThan(1_000);
    // Starts tie at the limit: 500 person spans end within a few seconds of many more.
    const firsts = await finder.byKind(scope, ['object'], { labels: ['person'], limit: 500 });
    expect(firsts.at(-1)!.start).toBeLessThan(10);
  });

  test("follow a video's new segments once it is invalidated", async () => {
    const core = new RetrievalCore({ catalog: index.catalog, embedder: null });
    const scope = { videos: index.videos, window: null };
    expect((await core.finder.byKind(scope, ['object'], { labels: ['person'], limit: 4 })).length).toBe(4);
    // A video (with no person so far) gets spans before every other one, and after.
    const v = index.videos[0]!;
    for (const start of [-2, -1, 500])
      index.db
        .insert(segments)
        .values({ videoId: v.id, kind: 'object', start, end: start + 1, text: 'person', confidence: 0.9 })
        .run();
    core.invalidate(v.id);
    const first = await core.finder.byKind(scope, ['object'], { labels: ['person'], limit: 4 });
    expect(first.map((s) => s.id)).toEqual(unbounded(['object'], ['person'], 4, false));
    expect(first.slice(0, 2).map((s) => [s.videoId, s.start])).toEqual([
      [v.id, -2],
      [v.id, -1],
    ]);
    expect(await core.finder.countByKind(scope, ['object'], ['person'])).toBe(
      index.db.all<{ n: number }>(sql`SELECT count(*) AS n FROM segments WHERE kind = 'object' AND text = 'person'`)[0]!
        .n,
    );
    const latest = await core.finder.byKind(scope, ['object'], { labels: ['person'], limit: 1, last: true });
    expect(latest.map((s) => [s.videoId, s.start])).toEqual([[v.id, 500]]);
    expect((await core.finder.byKind(scope, ['transcript'], { limit: 500, last: true })).map((s) => s.id)).toEqual(
      unbounded(['transcript'], undefined, 500, true),
    );
  });
});
