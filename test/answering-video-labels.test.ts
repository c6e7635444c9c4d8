/**
 * The labels each video's detections hold and the seconds each spans (one per-video cache of the
 * evidence finder, src/search/finder.ts) are kept between questions: a question over the whole index must still see
 * what the analysis wrote since, once the service is told that the video changed (re-analysis,
 * live windows), and never a removed video's labels.
 * Through the service as the server builds it (no models: the rules read the questions).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { loadConfig } from '../src/config';
import { randomId } from '../src/ids';
import { createService, type Service } from '../src/service';
import { segments, type MediaIndex, type User, videos } from '../src/storage/schema';

let dir: string;
let s: Service;
let user: User;
let index: MediaIndex;
const A = randomId(32);
const B = randomId(32);

const span = (videoId: string, label: string, start: number, end: number) => ({
  videoId,
  kind: 'object' as const,
  start,
  end,
  text: label,
  confidence: 0.9,
  extra: { label, max_count: 1, counts: [[start, 1]] },
});

function addVideo(id: string, fileName: string, spans: ReturnType<typeof span>[]): void {
  const now = new Date();
  s.db
    .insert(videos)
    .values({
      id,
      indexId: index.id,
      userId: user.id,
      sourceUrl: `https://example.com/${fileName}`,
      fileName,
      fileType: 'video/mp4',
      storagePath: null,
      sizeBytes: 1000,
      sha256: null,
      durationSec: 60,
      fps: 25,
      width: 640,
      height: 360,
      videoCodec: 'h264',
      hasAudio: false,
      status: 'ready',
      stage: null,
      progress: 1,
      error: null,
      analysis: {},
      uploadedAt: now,
      updatedAt: now,
    })
    .run();
  s.db.insert(segments).values(spans).run();
  s.videoChanged(id);
}

const ask = async (prompt: string) => (await s.answering.prepare(user, { index: index.id, prompt })).composed;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vidq-videoLabels-'));
  s = await createService(
    loadConfig({ 'data-dir': dir, 'analysis-workers': '0', analyzers: 'visual,objects', 'log-level': 'warn' }, {}),
  );
  user = (await s.accounts.createUser('videoLabels', null)).user;
  index = (await s.indexes.create(user, 'clips', 'standard')).index;
  addVideo(A, 'garden.mp4', [span(A, 'dog', 0, 20), span(A, 'dog', 30, 40)]);
  addVideo(B, 'street.mp4', [span(B, 'car', 0, 5)]);
});

afterAll(() => {
  s.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('what each video holds, kept between questions', () => {
  test('a not-found answer names what the whole index shows, longest first', async () => {
    const r = await ask('How many giraffes and dogs are there?');
    expect(r.found).toBe(false);
    expect(r.output).toContain('the index shows dogs and cars');
  });

  test('a re-analysed video: its new labels are found and named, its old ones are gone', async () => {
    expect((await ask('When does the horse appear?')).found).toBe(false);
    // What a re-analysis does: the video's segments are replaced, and the service is told.
    s.db.delete(segments).where(eq(segments.videoId, A)).run();
    s.db
      .insert(segments)
      .values([span(A, 'horse', 10, 50)])
      .run();
    s.videoChanged(A);
    const horse = await ask('When does the horse appear?');
    expect(horse.found).toBe(true);
    expect(horse.evidence[0]).toMatchObject({ video_id: A, kind: 'object', text: 'horse', start: 10, end: 50 });
    const none = await ask('How many giraffes and horses are there?');
    expect(none.output).toContain('the index shows horses and cars');
    expect((await ask('When does the dog appear?')).found).toBe(false);
  });

  test('a removed video: its labels are neither found nor named', async () => {
    await s.ingest.deleteVideos(user.id, index.id, [B]);
    expect((await ask('When does the car appear?')).found).toBe(false);
    const none = await ask('How many giraffes and horses are there?');
    expect(none.output).toContain('shows horses.');
    expect(none.output).not.toContain('car');
  });
});
