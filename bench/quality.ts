/**
 * bench/quality: answer quality on the development questions of ../shared/eval/questions.json,
 * through the real HTTP API with the default offline analyzers and the composed answer.
 *
 *   bun bench/quality.ts [--questions FILE] [--keep DIR] [--verbose]
 *
 * Ingests every clip the questions name (one index; or reuses --keep DIR from an earlier run),
 * asks each question (with its target and, for per-video questions, target_video), and scores:
 *  - answer correct: the output contains one of expect_any (case-insensitive);
 *  - citation correct: some evidence span overlaps expect_span (of the expected video);
 *  - not found: for answerable=false, the output says it could not find it.
 * Prints the three rates. Deterministic: same clips, same questions, same order.
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
const SHARED = resolve(import.meta.dir, '../../shared');
const MEDIA = process.env.VIDQ_TEST_MEDIA ?? join(SHARED, 'media');
const file = values.questions ?? join(SHARED, 'eval/questions.json');
interface Q {
  id: string;
  video: string | null;
  question: string;
  target?: string;
  expect_any?: string[];
  expect_span?: [number, number];
  answerable: boolean;
}
const questions: Q[] = JSON.parse(readFileSync(file, 'utf8')).questions;

const origin = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  fetch: (req) => new Response(Bun.file(join(MEDIA, decodeURIComponent(new URL(req.url).pathname.slice(1))))),
});
const dataDir = values.keep ?? mkdtempSync(join(tmpdir(), 'vidq-quality-'));
const fresh = !existsSync(join(dataDir, 'vidq.db'));
const server = await startServer(
  loadConfig(
    { 'data-dir': dataDir, port: '0', 'allow-private-urls': true, 'log-level': 'warn', 'min-free-bytes': '0' },
    process.env,
  ),
  () => {},
);
const s = server.service;
const tokenFile = join(dataDir, 'quality-token.txt');
const user =
  fresh || !existsSync(tokenFile)
    ? await s.accounts.createUser('quality', null)
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

// Every question's clip, plus every clip of the media folder for the index-wide questions.
const clips = [...new Set([...questions.map((q) => q.video).filter((v): v is string => !!v)])].sort();
const keys = new Map<string, string>();
const t0 = performance.now();
for (const c of clips) {
  const r = await post('/remote-upload', {
    token: user.token,
    index: 'quality',
    url: `${origin.url}${encodeURIComponent(c)}`,
  });
  if (!r.data) throw new Error(`upload of ${c} failed: ${JSON.stringify(r)}`);
  keys.set(c, r.data.key);
}
const indexId = ((await (await fetch(`${server.url}/indexes?token=${user.token}`)).json()) as any[])[0].index_id;
for (;;) {
  const res = (await (
    await fetch(`${server.url}/index-resources?token=${user.token}&index=${indexId}`)
  ).json()) as any[];
  if (res.every((r) => r.status === 'ready' || r.status === 'failed')) {
    for (const r of res.filter((x) => x.status === 'failed')) console.error(`${r.file_name} failed: ${r.error}`);
    break;
  }
  await Bun.sleep(500);
}
if (fresh) console.log(`indexed ${clips.length} clips in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

let answerable = 0;
let correct = 0;
let cited = 0;
let both = 0;
let unanswerable = 0;
let notFound = 0;
const NOT_FOUND = /\b(could not find|cannot find|couldn't find|not found)\b/i;
for (const q of questions) {
  const body: Record<string, string> = { token: user.token, index: indexId, prompt: q.question };
  if (q.video) body.target_video = keys.get(q.video)!;
  if (q.target) body.target = q.target;
  const r = await post('/inquire', body);
  const output: string = r.output ?? JSON.stringify(r);
  if (q.answerable) {
    answerable++;
    const ok =
      (q.expect_any ?? []).some((e) => output.toLowerCase().includes(e.toLowerCase())) && !NOT_FOUND.test(output);
    const expectVideo = q.video ?? q.expect_any?.map((e) => clips.find((c) => c.startsWith(e))).find(Boolean);
    const span = q.expect_span!;
    const cite = (r.evidence ?? []).some(
      (e: any) => (!expectVideo || e.file_name === expectVideo) && e.start <= span[1] && e.end >= span[0],
    );
    correct += ok ? 1 : 0;
    cited += cite ? 1 : 0;
    both += ok && cite ? 1 : 0;
    if (values.verbose || !(ok && cite))
      console.log(
        `${ok && cite ? 'PASS' : 'FAIL'} ${q.id}${ok ? '' : ' (answer)'}${cite ? '' : ' (citation)'}: ${output}`,
      );
  } else {
    unanswerable++;
    const nf = NOT_FOUND.test(output);
    notFound += nf ? 1 : 0;
    if (values.verbose || !nf) console.log(`${nf ? 'PASS' : 'FAIL'} ${q.id} (should be not found): ${output}`);
  }
}
const pct = (a: number, b: number) => (b ? `${((a / b) * 100).toFixed(0)}%` : 'n/a');
console.log(`\nanswer correct: ${correct}/${answerable} (${pct(correct, answerable)})`);
console.log(`citation correct: ${cited}/${answerable} (${pct(cited, answerable)})`);
console.log(`answer and citation correct: ${both}/${answerable} (${pct(both, answerable)})  (goal ≥ 80%)`);
console.log(`not found on unanswerable: ${notFound}/${unanswerable} (${pct(notFound, unanswerable)})  (goal 100%)`);
await server.stop();
origin.stop(true);
