/**
 * bench/answer-profile: where the time of one /inquire question goes, step by step, in-process.
 *
 *   bun bench/answer-profile.ts --dir DATA_DIR [--reps 3] [--warm-passes 0] [--only TYPE] [--prompt TEXT] [--sql 15] [--rules-only] [--dump FILE]
 *
 * DATA_DIR is one of bench/inquire's size folders (e.g. $TMPDIR/vidq-bench-inquire-v2/h1000: a
 * data directory of the server with bench-base.json and bench-size.json beside the database); use
 * a copy, since opening it applies pending migrations. The service is built as the server builds
 * it (createService, no analysis workers), the ANN index is built first (steady state, as the
 * server has it ~100 s after start), and each of bench/inquire's questions is asked through
 * AnsweringService.prepare (validation, scope, the composed answer: what POST /inquire does less
 * HTTP) `reps` times after one warm-up (--only: questions of one type; --prompt: those whose wording
 * contains TEXT). --warm-passes N first asks every question N times unmeasured: the JIT's compiler threads
 * then have settled, as in a server that has answered for a while (their CPU counts otherwise). Printed: each question's mean time and CPU time (the whole
 * process, every thread: the steady measure on a shared machine, where wall times follow the load);
 * per question type: the mean time per question of
 * each step (inclusive, nested steps are indented by their name) and the SQL statements that
 * took the most time in all. --dump writes every question's answer and evidence (of the warm-up
 * pass, frame links without their signature) to compare versions.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { heapStats } from 'bun:jsc';
import { CELLS, FACTS } from '../src/answering/facts';
import { readSlots, unknownFile } from '../src/answering/reader';
import { Composer } from '../src/answering/compose';
import { loadConfig } from '../src/config';
import { EvidenceFinder } from '../src/search/finder';
import { IvfIndex } from '../src/search/ivf';
import { VectorStore } from '../src/search/vectors';
import { ThreadedEmbedder } from '../src/analysis/engines/embedder-thread';
import { AnsweringService } from '../src/answering/service';
import { IndexService } from '../src/indexes/service';
import { RetrievalCore } from '../src/search/retrieval';
import { createService } from '../src/service';
import { QUESTIONS, type Question } from './inquire-questions';

const { values } = parseArgs({
  options: {
    dir: { type: 'string' },
    reps: { type: 'string' },
    only: { type: 'string' },
    prompt: { type: 'string' },
    'warm-passes': { type: 'string' },
    sql: { type: 'string' },
    'rules-only': { type: 'boolean' },
    dump: { type: 'string' },
  },
});
if (!values.dir) throw new Error('--dir DATA_DIR is required (a copy of a bench/inquire size folder)');
const DIR = values.dir;
const REPS = Number(values.reps ?? 3);

// ---- timers -----------------------------------------------------------------------------------

/** Inclusive ms per step name, for the question being asked. */
let steps = new Map<string, { ms: number; n: number }>();
const add = (name: string, ms: number) => {
  const s = steps.get(name) ?? { ms: 0, n: 0 };
  s.ms += ms;
  s.n++;
  steps.set(name, s);
};
/** Replaces obj[name] with a timed version (sync or async); a step called inside another counts in both. */
function wrap(obj: any, name: string, label: string): void {
  const orig = obj[name];
  if (typeof orig !== 'function') throw new Error(`no ${label}`);
  obj[name] = function (this: unknown, ...args: unknown[]) {
    const t0 = performance.now();
    const done = () => {
      add(label, performance.now() - t0);
    };
    let r: unknown;
    try {
      r = orig.apply(this, args);
    } catch (e) {
      done();
      throw e;
    }
    if (r instanceof Promise) return r.finally(done);
    done();
    return r;
  };
}

for (const m of ['byKind', 'labelSeconds', 'has', 'keyword', 'ranked', 'relevanceOf', 'frameNear'])
  wrap(EvidenceFinder.prototype, m, `finder.${m}`);
for (const m of ['nearest', 'cosinesById', 'exact']) wrap(VectorStore.prototype, m, `vectors.${m}`);
wrap(IvfIndex.prototype, 'search', 'ivf.search');
for (const m of ['compose', 'answer', 'general', 'contents', 'series', 'spansOf'])
  wrap(Composer.prototype, m, `composer.${m}`);
wrap(AnsweringService.prototype, 'scope', 'service.scope');
wrap(AnsweringService.prototype, 'compose', 'service.compose (composeAnswer)');
wrap(IndexService.prototype, 'videosOf', 'indexes.videosOf');
wrap(RetrievalCore.prototype, 'retrieve', 'core.retrieve (free text)');
wrap(RetrievalCore.prototype, 'relevanceOf', 'core.relevanceOf (free text)');
wrap(ThreadedEmbedder.prototype, 'embed', 'embedder.embed');
for (const f of FACTS) if (f.cueIn) wrap(f, 'cueIn', `cueIn ${f.kind}`);
for (const c of CELLS) wrap(c, 'answer', `plugin ${c.fact}.${c.form}`);

// ---- the service, as the server builds it -----------------------------------------------------

const config = loadConfig({ 'data-dir': DIR, 'analysis-workers': '0', 'log-level': 'warn', 'min-free-bytes': '0' });
const service = await createService(config);
const base = JSON.parse(readFileSync(join(DIR, 'bench-base.json'), 'utf8')) as {
  userId: string;
  indexId: string;
  clips: Record<string, string>;
};
const size = JSON.parse(readFileSync(join(DIR, 'bench-size.json'), 'utf8')) as {
  hours: number;
  videos: number;
  byTheme: Record<string, string>;
};
const user = (await service.accounts.getUser(base.userId))!;

// SQL: every statement's time, by its text (of the timed questions only: not the ANN build nor the warm-ups).
const sqlTimes = new Map<string, { ms: number; n: number }>();
let timing = false;
const client = service.db.$client as any;
// Statements come back compiled from src/storage/db.ts's cache: each is timed once, not wrapped again.
const timed = new WeakSet<object>();
for (const method of ['prepare', 'query']) {
  const orig = client[method].bind(client);
  client[method] = (text: string, ...rest: unknown[]) => {
    const stmt = orig(text, ...rest);
    if (timed.has(stmt)) return stmt;
    timed.add(stmt);
    for (const run of ['all', 'get', 'run', 'values']) {
      const f = stmt[run];
      if (typeof f !== 'function') continue;
      stmt[run] = (...a: unknown[]) => {
        const t0 = performance.now();
        try {
          return f.apply(stmt, a);
        } finally {
          const ms = performance.now() - t0;
          add('sql (all statements)', ms);
          const key = text.replace(/\s+/g, ' ').slice(0, 220);
          const s = sqlTimes.get(key) ?? { ms: 0, n: 0 };
          s.ms += ms;
          s.n++;
          if (timing) sqlTimes.set(key, s);
        }
      };
    }
    return stmt;
  };
}

const reqOf = (q: Question) => ({
  index: base.indexId,
  prompt: q.prompt,
  ...(q.guidance && { guidance: q.guidance }),
  ...(q.target && { target: q.target }),
  ...(q.video && {
    target_video: q.video.startsWith('theme:') ? size.byTheme[q.video.slice(6)]! : base.clips[q.video]!,
  }),
});

const all = await service.indexes.videosOf(base.indexId);
// The question reader's rules over every video of the scope (pure functions, timed apart).
{
  const rules = new Map<string, number>();
  for (const q of QUESTIONS) {
    const vids = q.video ? all.filter((v) => v.id === reqOf(q).target_video) : all;
    for (const [name, f] of [
      ['readSlots', () => readSlots(q.prompt, vids)],
      ['unknownFile', () => unknownFile(q.prompt, vids)],
    ] as const) {
      const t1 = performance.now();
      f();
      rules.set(name, (rules.get(name) ?? 0) + performance.now() - t1);
    }
  }
  for (const [k, ms] of rules)
    console.log(`  ${k}: ${(ms / QUESTIONS.length).toFixed(1)} ms per question (once; scope as asked)`);
}

if (values['rules-only']) process.exit(0);

let t0 = performance.now();
await service.retrieval.prepare(all);
{
  const t1 = performance.now();
  Bun.gc(true);
  const heap = heapStats();
  console.log(
    `heap after the ANN build: ${(heap.heapSize / 1e6).toFixed(0)} MB in ${heap.objectCount} objects; a full collection takes ${(performance.now() - t1).toFixed(0)} ms`,
  );
}
console.log(
  `${size.hours.toFixed(0)} h: ${all.length} videos; ANN index built in ${((performance.now() - t0) / 1000).toFixed(1)} s (load ${loadavg()[0]!.toFixed(2)})`,
);

const WARM_PASSES = Number(values['warm-passes'] ?? 0);
for (let p = 0; p < WARM_PASSES; p++)
  for (const q of QUESTIONS.filter(
    (q) => (!values.only || q.type === values.only) && (!values.prompt || q.prompt.includes(values.prompt)),
  ))
    await service.answering.prepare(user, reqOf(q));

const byType = new Map<string, { total: number[]; steps: Map<string, { ms: number; n: number }> }>();
const perQuestion: { q: Question; ms: number; cpu: number; reading: string }[] = [];
const questions = QUESTIONS.filter(
  (q) => (!values.only || q.type === values.only) && (!values.prompt || q.prompt.includes(values.prompt)),
);
const answers: unknown[] = [];
/** CPU time of the whole process (every thread: the embedder's too) per question asked. */
const cpuMs: number[] = [];
for (const q of questions) {
  const warm = await service.answering.prepare(user, reqOf(q)); // warm-up
  answers.push({
    ...q,
    output: warm.composed.output,
    reading: warm.composed.reading,
    evidence: warm.composed.evidence.map((e) => ({ ...e, frame_url: e.frame_url?.split('?')[0] ?? null })),
  });
  timing = true;
  for (let r = 0; r < REPS; r++) {
    steps = new Map();
    const cpu0 = process.cpuUsage();
    t0 = performance.now();
    const p = await service.answering.prepare(user, reqOf(q));
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    cpuMs.push((cpu.user + cpu.system) / 1000);
    add('question (AnsweringService.prepare)', ms);
    perQuestion.push({ q, ms, cpu: (cpu.user + cpu.system) / 1000, reading: p.composed.reading ?? '' });
    const entry = byType.get(q.type) ?? { total: [] as number[], steps: new Map<string, { ms: number; n: number }>() };
    entry.total.push(ms);
    for (const [k, v] of steps) {
      const e = entry.steps.get(k) ?? { ms: 0, n: 0 };
      e.ms += v.ms;
      e.n += v.n;
      entry.steps.set(k, e);
    }
    byType.set(q.type, entry);
  }
  timing = false;
}

const load = loadavg()[0]!.toFixed(2);
console.log(`\nper question (mean of ${REPS} after a warm-up), load ${load}`);
const agg = new Map<string, number[]>();
for (const x of perQuestion)
  agg.set(x.q.prompt + (x.q.video ? ` [${x.q.video}]` : ''), [
    ...(agg.get(x.q.prompt + (x.q.video ? ` [${x.q.video}]` : '')) ?? []),
    x.ms,
  ]);
for (const x of questions) {
  const key = x.prompt + (x.video ? ` [${x.video}]` : '');
  const ms = agg.get(key)!;
  const reading = perQuestion.find((p) => p.q === x)?.reading;
  const mine = perQuestion.filter((p) => p.q === x);
  const cpu = mine.reduce((a, p) => a + p.cpu, 0) / mine.length;
  console.log(
    `${(ms.reduce((a, b) => a + b, 0) / ms.length).toFixed(0).padStart(6)} ms ${cpu.toFixed(0).padStart(5)} ms CPU  ${x.type.padEnd(11)} ${key}  (${reading})`,
  );
}
const wallMean = perQuestion.reduce((a, x) => a + x.ms, 0) / perQuestion.length;
console.log(
  `\nall questions: ${wallMean.toFixed(1)} ms per question, CPU ${(cpuMs.reduce((a, b) => a + b, 0) / cpuMs.length).toFixed(1)} ms per question (every thread of the process; load ${load})`,
);
console.log(`\nsteps by question type: mean ms per question (calls per question)`);
for (const [type, e] of byType) {
  const n = e.total.length;
  console.log(`\n${type}: ${(e.total.reduce((a, b) => a + b, 0) / n).toFixed(0)} ms per question`);
  for (const [k, v] of [...e.steps].sort((a, b) => b[1].ms - a[1].ms))
    if (v.ms / n >= 0.5) console.log(`  ${(v.ms / n).toFixed(1).padStart(8)} ms  ${k} (${(v.n / n).toFixed(1)})`);
}
const top = Number(values.sql ?? 15);
console.log(`\nSQL statements by total time over all questions (the timed ones)`);
for (const [k, v] of [...sqlTimes].sort((a, b) => b[1].ms - a[1].ms).slice(0, top)) {
  console.log(`${v.ms.toFixed(0).padStart(7)} ms ${String(v.n).padStart(5)}×  ${k}`);
}
if (values.dump) writeFileSync(values.dump, JSON.stringify(answers, null, 1));
service.close();
