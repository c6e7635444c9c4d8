/**
 * bench/newuser: a new user's own questions (bench/newuser-questions.json) over the shared clips,
 * answered through the real HTTP API with the default offline analyzers and the composed answer.
 *
 *   bun bench/newuser.ts [--questions FILE] [--keep DIR] [--verbose]
 *
 * Each question says whether the default analysis can know its answer (`knowable`); the others need
 * a model the index lacks and pass when answered right or when the answer says it cannot tell and
 * names what would answer (a vision model / captioner, a transcriber). Checks, per question:
 *  - expect_any: one of the words appears (case-insensitive) and the answer is not a "not found"
 *    (unless absent_ok: then a "not found" is the right answer too);
 *  - span: some cited moment of the question's video (or expect_video) overlaps it;
 *  - not_found: the answer says the thing is not there (or the video is not in the index).
 * Prints each failure and the pass rates for the knowable and the model-needing questions.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config';
import { startServer } from '../src/server';

const { values } = parseArgs({
  options: { questions: { type: 'string' }, keep: { type: 'string' }, verbose: { type: 'boolean' } },
});
const MEDIA = process.env.VIDQ_TEST_MEDIA ?? resolve(import.meta.dir, '../../shared/media');
interface Q {
  id: string;
  video: string | null;
  question: string;
  knowable: boolean;
  needs?: string;
  expect_any?: string[];
  expect_video?: string;
  span?: [number, number];
  not_found?: boolean;
  absent_ok?: boolean;
  /** With absent_ok: the "not found" must be about one of these (not about some other thing). */
  absent_of?: string[];
}
const set: { clips: string[]; questions: Q[] } = JSON.parse(
  readFileSync(values.questions ?? join(import.meta.dir, 'newuser-questions.json'), 'utf8'),
);

const origin = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  fetch: (req) => new Response(Bun.file(join(MEDIA, decodeURIComponent(new URL(req.url).pathname.slice(1))))),
});
const dataDir = values.keep ?? mkdtempSync(join(tmpdir(), 'vidq-newuser-'));
const fresh = !existsSync(join(dataDir, 'vidq.db'));
const server = await startServer(
  loadConfig(
    { 'data-dir': dataDir, port: '0', 'allow-private-urls': true, 'log-level': 'warn', 'min-free-bytes': '0' },
    process.env,
  ),
  () => {},
);
const tokenFile = join(dataDir, 'newuser-token.txt');
const user =
  fresh || !existsSync(tokenFile)
    ? await server.service.accounts.createUser('newuser', null)
    : { token: readFileSync(tokenFile, 'utf8').trim() };
if (fresh) writeFileSync(tokenFile, user.token);
const post = async (path: string, body: unknown) =>
  (
    await fetch(server.url + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
    })
  ).json() as Promise<any>;

const keys = new Map<string, string>();
const t0 = performance.now();
if (fresh)
  for (const c of set.clips) {
    const r = await post('/remote-upload', {
      token: user.token,
      index: 'newuser',
      url: `${origin.url}${encodeURIComponent(c)}`,
    });
    if (!r.data) throw new Error(`upload of ${c} failed: ${JSON.stringify(r)}`);
  }
const indexId = ((await (await fetch(`${server.url}/indexes?token=${user.token}`)).json()) as any[])[0].index_id;
for (;;) {
  const res = (await (
    await fetch(`${server.url}/index-resources?token=${user.token}&index=${indexId}`)
  ).json()) as any[];
  if (res.every((r) => r.status === 'ready' || r.status === 'failed')) {
    for (const r of res) keys.set(r.file_name, r.file_id);
    for (const r of res.filter((x) => x.status === 'failed')) console.error(`${r.file_name} failed: ${r.error}`);
    break;
  }
  await Bun.sleep(500);
}
if (fresh) console.log(`indexed ${set.clips.length} clips in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

const NOT_FOUND = /\b(could not find|cannot find|couldn't find|not found|not in this index|no video named)\b/i;
/** Names what would answer: the model a missing kind of evidence needs. */
const NAMES_MODEL = /\b(vision model|captioner|transcriber|--captioner|--stt|speech-to-text)\b/i;
const tally: { knowable: [number, number]; model: [number, number]; modelRight: number } = {
  knowable: [0, 0],
  model: [0, 0],
  modelRight: 0,
};
for (const q of set.questions) {
  const body: Record<string, string> = { token: user.token, index: indexId, prompt: q.question };
  if (q.video) body.target_video = keys.get(q.video)!;
  const r = await post('/inquire', body);
  const output: string = r.output ?? JSON.stringify(r);
  const lower = output.toLowerCase();
  const notFound = NOT_FOUND.test(output);
  // A word at a word start, so "5" is not found in "0:05" nor "14" in "0:14".
  const at = (e: string) =>
    new RegExp(`(?<![\\w:.])${e.toLowerCase().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`).test(lower);
  const words = (q.expect_any ?? []).some(at);
  const video = q.expect_video ?? q.video;
  const cited =
    !q.span ||
    (r.evidence ?? []).some(
      (e: any) => (!video || e.file_name === video) && e.start <= q.span![1] && e.end >= q.span![0],
    );
  let why = '';
  if (q.not_found) why = notFound ? '' : 'should say not found';
  else if (q.absent_ok && notFound) why = (q.absent_of ?? []).some(at) ? '' : 'not found of another thing';
  else if (!words || (notFound && !q.absent_ok)) why = 'answer';
  else if (!cited) why = 'citation';
  let pass = !why;
  if (!q.knowable) {
    const right = pass;
    const honest = !right && NAMES_MODEL.test(output) && !words;
    if (right) tally.modelRight++;
    pass = right || honest;
    if (honest) why = '';
  }
  const t = q.knowable ? tally.knowable : tally.model;
  t[0] += pass ? 1 : 0;
  t[1]++;
  if (values.verbose || !pass)
    console.log(`${pass ? 'PASS' : 'FAIL'} ${q.id}${why ? ` (${why})` : ''} [${q.question}]: ${output}`);
}
const pct = (a: number, b: number) => (b ? `${((a / b) * 100).toFixed(0)}%` : 'n/a');
const [k, kn] = tally.knowable;
const [m, mn] = tally.model;
console.log(`\nknowable by the default analysis: ${k}/${kn} right (${pct(k, kn)})  (goal ≥ 87%)`);
console.log(`needing a model the index lacks: ${m}/${mn} right or honest (${tally.modelRight} right)  (goal 100%)`);
await server.stop();
origin.stop(true);
