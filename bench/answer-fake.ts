/**
 * bench/answer-fake: CPU per question of the answering core (composeAnswer, no models) over a
 * synthetic index of N two-minute videos (test/fake-index.ts: shots, object spans, transcript
 * lines, captions, on-screen text), the same twelve questions `reps` times after two warm-up
 * passes. For comparing a change's cost per question (CPU-seconds of the whole process: steady on a
 * loaded machine), and the two catalogs:
 *   bun bench/answer-fake.ts [--videos 300] [--reps 10] [--dialect sqlite|postgres]
 * PostgreSQL: the test server (test/pg.ts), a fresh database dropped after.
 */
import { parseArgs } from 'node:util';
import { FakeIndex, type FakeVideo, objectSpan } from '../test/fake-index';

const { values } = parseArgs({
  options: { videos: { type: 'string' }, reps: { type: 'string' }, dialect: { type: 'string' } },
});
const N = Number(values.videos ?? 300);
const REPS = Number(values.reps ?? 5);
const LABELS = ['person', 'car', 'dog', 'cup', 'bottle', 'chair', 'bicycle', 'bird'];
const WORDS = ['weather', 'kitchen', 'coffee', 'market', 'river', 'train', 'garden', 'music', 'football', 'bridge'];
let seed = 7;
const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const videos: FakeVideo[] = [];
for (let i = 0; i < N; i++) {
  const segs: FakeVideo['segments'] = [];
  const dur = 120;
  for (let t = 0; t < dur; t += 10) {
    segs.push({ kind: 'shot', start: t, end: t + 10, text: `shot ${t / 10 + 1}` });
    const l = LABELS[Math.floor(rnd() * LABELS.length)]!;
    segs.push({
      ...objectSpan(l, t, t + 6, 1 + Math.floor(rnd() * 3), 0.5 + rnd() * 0.4),
      extra: { counts: [[t, 1]], max_count: 1, colours: ['red'] },
    });
    const w = WORDS[Math.floor(rnd() * WORDS.length)]!;
    segs.push({
      kind: 'transcript',
      start: t + 1,
      end: t + 5,
      text: `We talk about the ${w} and the ${WORDS[(i + t) % WORDS.length]} today.`,
    });
    segs.push({ kind: 'caption', start: t, end: t + 10, text: `A ${l} near the ${w}.` });
    if (t % 40 === 0) segs.push({ kind: 'ocr', start: t, end: t + 3, text: `${w.toUpperCase()} ${i}` });
  }
  videos.push({ fileName: `clip-${i}.mp4`, duration: dur, segments: segs });
}
const QUESTIONS = [
  'How many dogs are there?',
  'When does the car appear?',
  'Which video shows a bicycle?',
  'Is there a bird?',
  'What is said about the weather?',
  'When is the river mentioned?',
  'What text is on screen?',
  'How many shots are there?',
  'What colour is the car?',
  'What objects are visible?',
  'Anything about football?',
  'Where is the train?',
];
const t0 = performance.now();
const index = new FakeIndex(videos, { dialect: values.dialect === 'postgres' ? 'postgres' : 'sqlite' });
await index.ready;
console.log(`index: ${N} videos on ${index.dialect}, built in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
for (const q of QUESTIONS) await index.ask(q); // warm-up
for (const q of QUESTIONS) await index.ask(q);
const c0 = process.cpuUsage();
const w0 = performance.now();
for (let r = 0; r < REPS; r++) for (const q of QUESTIONS) await index.ask(q);
const c = process.cpuUsage(c0);
const asked = REPS * QUESTIONS.length;
console.log(
  `${asked} questions: ${((c.user + c.system) / 1e6).toFixed(2)} CPU-s in all, ${((c.user + c.system) / 1e3 / asked).toFixed(1)} CPU-ms per question (wall ${((performance.now() - w0) / asked).toFixed(1)} ms)`,
);
await index.close();
