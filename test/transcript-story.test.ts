/**
 * One story for a video without a transcript (issue 36): analysed while no speech-to-text engine
 * was there (`--stt none`, as before `vidq models pull`), GET /videos/{id}/transcript.vtt is a 404
 * that names what fills it in — a reanalysis of the speech stage, not adding the video again — and
 * that reanalysis is accepted. (test/models-e2e.test.ts follows it through to a filled transcript.)
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { uploadAndWaitReady } from './factories';
import { getJson, postJson, startOrigin, startTestServer, type Origin, type TestServer } from './helpers';

let srv: TestServer;
let origin: Origin;

beforeAll(async () => {
  origin = startOrigin();
  srv = await startTestServer({ 'analysis-workers': '1', analyzers: 'visual,speech', stt: 'none' });
}, 60_000);
afterAll(async () => {
  await srv?.stop();
  origin?.stop();
});

test('no transcriber when it was analysed: the 404 names the reanalysis that fills it in, and that reanalysis is taken', async () => {
  const { key, row } = await uploadAndWaitReady(srv, 'talk', `${origin.url}/media/countdown-living-room.mp4`);
  expect(row.metadata.analysis.speech.stt).toBe('none');
  const vtt = await getJson(srv.url, `/videos/${key}/transcript.vtt?token=${srv.token}`);
  expect(vtt.status).toBe(404);
  expect(vtt.body.error).toBe(404);
  expect(vtt.body.message).toContain('no speech-to-text engine');
  expect(vtt.body.message).toContain('vidq models pull');
  expect(vtt.body.message).toContain(`POST /videos/${key}/reanalyze with {"analyzers": ["speech"]}`);
  expect(vtt.body.message).not.toContain('add the video again');
  const re = await postJson(srv.url, `/videos/${key}/reanalyze`, { token: srv.token, analyzers: ['speech'] });
  expect(re.status).toBe(202);
  expect(re.body.analyzers).toContain('speech');
}, 120_000);
