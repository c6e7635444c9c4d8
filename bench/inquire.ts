/**
 * bench/inquire: latency of POST /inquire (the composed answer, no generative model) as the index
 * grows from 1 h to 100 h of indexed video, through the real HTTP server in its own process.
 *
 *   bun bench/inquire.ts [--sizes 1,10,100] [--n 200] [--concurrency 1,8,32] [--rebuild] [--dump FILE] [--only-build]
 *                        [--cache DIR] [--recall-sample K] [--server-cpu-prof DIR] [--live-streams N]
 *
 * The data (cached in $TMPDIR/vidq-bench-inquire-v2/, reused by later runs; --rebuild starts over):
 *  - base/: the real clips of ../shared/media that bench/quality uses, uploaded through the API
 *    and analysed by the real pipeline (the default offline analyzers).
 *  - h1/, h10/, h100/: cumulative copies of base/ (each larger one holds the smaller one's videos
 *    and more) whose one index also holds synthetic videos up to 1, 10 and 100 hours in all. Each
 *    size is its own data directory (database, FTS index), as a deployment with that much video.
 * Synthetic videos look like real analysis output at real densities per hour: shots every ~5-20 s,
 *  sampled frames every 5 s within a shot, object spans built from simulated per-frame detections
 *  exactly as the objects stage builds them (COCO labels by scene theme; `extra` {label, max_count,
 *  counts, best_t, boxes}), OCR tracks with plausible on-screen text, VAD speech spans and
 *  transcript sentences, and a USE-lite embedding for every segment. Embedding 100 h of segments
 *  is too slow here, so a pool of ~3,000 distinct texts is embedded once (cached beside the data):
 *  object, OCR and speech segments get the vector of their exact sentence (identical texts share a
 *  vector, as in real analysis); a transcript sentence is two pool clauses and gets the normalised
 *  sum of their vectors; a shot gets a pool vector of its "scene change" sentence plus small noise
 *  (so neither is a duplicate that a cache could fold away when the real vectors would differ).
 *
 * Vectors are stored as the embeddings stage stores them (src/search/vectors.ts: int8, each distinct
 * vector of a video once), and every synthetic video is marked as embedded by the built-in encoder,
 * as a real one is (before v2 it was not, so questions never compared the synthetic videos' vectors).
 * Before measuring a size, the ANN index of the media index is built in the bench's process (timed),
 * as the server builds it on first use; the float32 originals are kept beside the
 * data (float32.bin) to measure recall@10 of the compact store + ANN search against exact float32
 * search, printed with the database size per indexed hour.
 *
 * --recall-sample K measures that recall on K of the questions (0: skips it, and the in-process build;
 * the step takes minutes at 1,000 h), for quicker runs while iterating.
 *
 * Then, per size: starts `vidq serve` on the data directory, waits until its search index (built at
 * start-up, in the background) is ready (GET /health `search_index.ready`; printed: how long the
 * build took), so that what is measured is the steady state, warms up (every question twice), asks
 * a fixed seeded sequence of N questions of every type (counting, when, written, said, which video,
 * summary, what object, not found; with and without target and target_video), one at a time, and
 * prints p50/p95/p99/mean per size and per question type, the first request (cold: it loads the
 * embedding model and every video's vectors), and the server's RSS; GET /search with the same
 * texts, one at a time; and with --concurrency, throughput and p50/p95 with N clients at once. --dump writes every question's answer and evidence per size (to compare versions).
 *
 * --live-streams N: the server runs with one analysis worker, and N pushed live streams of the
 * same user (1 fps each, frames of bottles.mp4 sent by this process once a second, analysed by the
 * default analyzers) run from before the warm-up to the end of the measurement: what /inquire
 * costs while cameras are watched. Printed: the server's CPU seconds (user+system) during the
 * timed questions, and each stream's frames analysed and dropped.
 */
import {
  closeSync,
  readSync,
  cpSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Database } from 'bun:sqlite';
import { embeddingText } from '../src/analysis/stages/embeddings';
import { UseEmbedder } from '../src/analysis/engines/embedder';
import { RetrievalCore } from '../src/search/retrieval';
import { quantize } from '../src/search/vectors';
import { loadConfig } from '../src/config';
import { startServer } from '../src/server';
import { openDatabase } from '../src/storage/db';
import { sqliteCatalog } from '../src/storage/catalog';
import { videos } from '../src/storage/schema';
import { QUESTIONS, type Question } from './inquire-questions';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string' },
    n: { type: 'string' },
    rebuild: { type: 'boolean' },
    dump: { type: 'string' },
    'only-build': { type: 'boolean' },
    concurrency: { type: 'string' },
    cache: { type: 'string' },
    'recall-sample': { type: 'string' },
    'server-cpu-prof': { type: 'string' },
    'live-streams': { type: 'string' },
  },
});
const LIVE_STREAMS = Number(values['live-streams'] ?? 0);
const SIZES = (values.sizes ?? '1,10,100')
  .split(',')
  .map(Number)
  .sort((a, b) => a - b);
const N = Number(values.n ?? 200);
const MEDIA = process.env.VIDQ_TEST_MEDIA ?? resolve(import.meta.dir, '../../shared/media');
const ROOT = values.cache ?? join(tmpdir(), 'vidq-bench-inquire-v2');
/** Questions the compact store's recall@10 is measured on (all of them by default; 0 skips the step). */
const RECALL_SAMPLE = values['recall-sample'] === undefined ? Infinity : Number(values['recall-sample']);
const LEVELS = (values.concurrency ?? '').split(',').filter(Boolean).map(Number);
const REAL_CLIPS = [
  'big-buck-bunny-intro.webm',
  'birthday-no-audio.mp4',
  'bottles.mp4',
  'cars-parking-lot.mp4',
  'people-one-by-one.mp4',
  'skateboarding-dog.mp4',
  'smpte-timecode-1080p.mp4',
  'speech-over-bottles.mp4',
];
const SEED = 20240611;

if (values.rebuild) rmSync(ROOT, { recursive: true, force: true });
mkdirSync(ROOT, { recursive: true });

// ---- seeded randomness ----------------------------------------------------------------------

function rngOf(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1)),
    range: (lo: number, hi: number) => lo + next() * (hi - lo),
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!,
    chance: (p: number) => next() < p,
    gauss: () => Math.sqrt(-2 * Math.log(next() + 1e-12)) * Math.cos(2 * Math.PI * next()),
  };
}
type Rng = ReturnType<typeof rngOf>;

// ---- what synthetic videos contain ----------------------------------------------------------

/** [label, chance to appear in a frame where it was absent, chance to stay, most at once]. */
type LabelSpec = [string, number, number, number];
interface Theme {
  name: string;
  labels: LabelSpec[];
  /** OCR tracks per hour, and the texts they show. */
  ocrPerHour: number;
  ocr: string[];
  /** Share of the time someone speaks; the topics of what is said. */
  speech: number;
  topics: string[];
}

const cross = (a: string[], b: string[]) => a.flatMap((x) => b.map((y) => `${x}${y}`));

const SLIDES = cross(
  ['', 'Part 1: ', 'Part 2: ', 'Section 3 - ', 'Chapter 4: ', 'Lecture 7: '],
  [
    'Introduction',
    'Agenda',
    'Key Results',
    'Next Steps',
    'Questions?',
    'Summary',
    'Methodology',
    'Related Work',
    'Revenue by Region',
    'Customer Growth',
    'Roadmap 2025',
    'Thank You',
    'Data Pipeline',
    'Error Analysis',
    'Budget Overview',
    'Team Structure',
    'Market Share',
    'Case Study',
    'Lessons Learned',
    'Open Problems',
  ],
);
const HEADLINES = cross(
  ['BREAKING: ', 'LIVE: ', '', 'UPDATE: '],
  [
    'CITY COUNCIL APPROVES NEW BUDGET',
    'STORM EXPECTED TONIGHT',
    'MARKETS CLOSE HIGHER',
    'ELECTION RESULTS DUE FRIDAY',
    'TRAFFIC DELAYS ON HIGHWAY 9',
    'SCHOOL REOPENS AFTER REPAIRS',
    'HEAT WAVE CONTINUES',
    'LOCAL TEAM WINS FINAL',
    'NEW BRIDGE OPENS TO TRAFFIC',
    'FLOOD WARNING FOR RIVER VALLEY',
    'PRICES RISE FOR THIRD MONTH',
    'MAYOR ANNOUNCES PARK PLAN',
    'AIRPORT STRIKE ENDS',
    'HOSPITAL GETS NEW WING',
    'WILDFIRE CONTAINED',
  ],
).concat(['JANE DOE - REPORTER', 'JOHN SMITH - ANCHOR', 'WEATHER 18°C CLOUDY', 'NEWS AT SIX', 'channel 5 news']);
const SIGNS = [
  'STOP',
  'ONE WAY',
  'Main St',
  'Parking',
  'OPEN',
  'Coffee & Bakery',
  'EXIT 12',
  'Speed Limit 30',
  'NO ENTRY',
  'Bus Stop',
  'Pharmacy',
  'Hotel Central',
  'SALE 50% OFF',
  'Open 24 Hours',
  'Taxi',
  'Market Street',
  'Keep Right',
  'Pizza Napoli',
  'City Library',
  'Station Road',
  'P2 Level 2',
  'Fresh Fruit',
  'Welcome',
  'Do Not Enter',
  'Cafe Luna',
  'Bank',
  'Post Office',
  'Avenue 5',
  'Car Wash',
  'School Zone',
];
const SPORTS = cross(['HOME ', 'LIONS ', 'EAGLES ', 'CITY FC '], ['0 - 0', '1 - 0', '1 - 1', '2 - 1', '3 - 2']).concat([
  'HALF TIME',
  'FULL TIME',
  '45:00',
  '12:37',
  '88:10',
  'GOAL!',
  'FINAL SET',
  'SERVE 120 KM/H',
  'REPLAY',
  'SUBSTITUTION',
  'YELLOW CARD',
  'PENALTY',
]);
const KITCHEN = [
  'Pancake Recipe',
  'Step 1: Mix',
  'Step 2: Rest',
  'Step 3: Flip',
  '200 g flour',
  '2 eggs',
  '300 ml milk',
  '180°C / 350°F',
  'Serves 4',
  'Prep time 10 min',
  'Chocolate Cake',
  'Tomato Soup',
  'Homemade Bread',
  'Subscribe for more recipes',
  'Ingredients',
  'Bon appétit',
  'Salt & Pepper',
  'Pasta Night',
  '1 tbsp sugar',
  'Bake 25 min',
];
const CHANNEL = [
  'Subscribe',
  '@everyday_vlog',
  'Like and Share',
  'HD',
  'Episode 12',
  'Part 2',
  'Thanks for watching',
  'vlog #43',
  'Follow us',
  'www.example.com',
];

const TOPIC_PREDICATES: Record<string, string[]> = {
  cooking: [
    'add two cups of flour to the bowl',
    'whisk the eggs until they are fluffy',
    'let the dough rest for ten minutes',
    'heat the pan over medium heat',
    'season the sauce with salt and pepper',
    'chop the onions very finely',
    'pour the batter into the pan',
    'flip the pancake when bubbles form',
    'melt the butter slowly',
    'preheat the oven to one hundred eighty degrees',
    'stir the soup every few minutes',
    'taste it and add a little sugar',
    'slice the tomatoes into thin rounds',
    'grate some cheese on top',
    'cover the pot with a lid',
    'knead the dough on a floured table',
    'serve it while it is still warm',
    'wash the vegetables first',
    'use a wooden spoon for this',
    'keep the heat low so it does not burn',
  ],
  weather: [
    'expect heavy rain on Thursday',
    'see temperatures climb to thirty degrees',
    'get strong winds along the coast',
    'have a sunny weekend ahead',
    'watch for fog in the valleys tomorrow morning',
    'see snow on the mountains by Friday',
    'expect a cold front to move in tonight',
    'have a flood warning for the river valley',
    'keep the umbrella close this week',
    'see the storm pass by midnight',
    'get a dry and mild start to the week',
    'expect thunderstorms in the afternoon',
  ],
  budget: [
    'approve the new budget for the city',
    'cut spending on roads by ten percent',
    'raise the school budget next year',
    'review the quarterly results',
    'grow revenue in every region',
    'hire three new engineers this quarter',
    'plan the roadmap for next year',
    'reduce costs in the data center',
    'present the numbers to the board',
    'double the marketing spend',
    'close the deal before the end of the month',
    'look at customer growth by region',
  ],
  lecture: [
    'define the loss function first',
    'train the model on the whole data set',
    'look at the error analysis on the next slide',
    'compare our method with related work',
    'measure the accuracy on the test set',
    'split the data into training and validation',
    'talk about the open problems at the end',
    'explain how the pipeline works',
    'take questions after the break',
    'read chapter four before next week',
    'prove the theorem in two steps',
    'draw the graph on the board',
  ],
  sports: [
    'score the second goal in the last minute',
    'take the penalty with the left foot',
    'serve at one hundred twenty kilometres an hour',
    'win the final set six to four',
    'pass the ball back to the keeper',
    'run down the left wing',
    'make a substitution at half time',
    'get a yellow card for that tackle',
    'defend very deep in the second half',
    'celebrate with the fans',
    'miss the free kick by inches',
    'lead the league by three points',
  ],
  daily: [
    'go to the market this morning',
    'walk the dog in the park',
    'meet some friends for coffee',
    'clean the living room together',
    'watch a movie tonight',
    'fix the bike in the garage',
    'plant some flowers in the garden',
    'read a book on the couch',
    'call my mother on Sunday',
    'pack the bags for the trip',
    'take the bus to the station',
    'buy fresh fruit and bread',
    'feed the cat before we leave',
    'open the window because it is warm',
  ],
};
const SUBJECTS = ['we', 'you', 'they', 'I', 'so we', 'then you', 'now we', 'today they'];
const ADVERBIALS = ['', ' right now', ' after that', ' as you can see'];
const LINKS = [', and ', ', but ', ' because ', '. Then ', '. ', ' so ', ' while '];

const THEMES: Theme[] = [
  {
    name: 'street',
    labels: [
      ['person', 0.5, 0.8, 4],
      ['car', 0.55, 0.8, 5],
      ['truck', 0.15, 0.6, 2],
      ['bus', 0.08, 0.6, 1],
      ['traffic light', 0.35, 0.85, 3],
      ['bicycle', 0.1, 0.5, 2],
      ['motorcycle', 0.05, 0.5, 1],
      ['stop sign', 0.04, 0.6, 1],
      ['handbag', 0.08, 0.5, 1],
      ['backpack', 0.1, 0.5, 2],
    ],
    ocrPerHour: 30,
    ocr: SIGNS,
    speech: 0.1,
    topics: ['daily'],
  },
  {
    name: 'kitchen',
    labels: [
      ['person', 0.8, 0.9, 2],
      ['bowl', 0.45, 0.8, 3],
      ['cup', 0.35, 0.8, 3],
      ['knife', 0.25, 0.6, 1],
      ['spoon', 0.25, 0.6, 2],
      ['oven', 0.3, 0.85, 1],
      ['sink', 0.2, 0.75, 1],
      ['bottle', 0.3, 0.75, 4],
      ['refrigerator', 0.1, 0.7, 1],
      ['dining table', 0.4, 0.85, 1],
      ['banana', 0.05, 0.6, 3],
      ['orange', 0.05, 0.6, 3],
      ['pizza', 0.04, 0.6, 1],
      ['cake', 0.03, 0.6, 1],
      ['sandwich', 0.04, 0.6, 2],
    ],
    ocrPerHour: 40,
    ocr: KITCHEN,
    speech: 0.6,
    topics: ['cooking'],
  },
  {
    name: 'office',
    labels: [
      ['person', 0.8, 0.9, 3],
      ['laptop', 0.55, 0.85, 2],
      ['tv', 0.4, 0.9, 1],
      ['chair', 0.5, 0.8, 4],
      ['keyboard', 0.3, 0.8, 1],
      ['mouse', 0.2, 0.7, 1],
      ['cup', 0.3, 0.7, 2],
      ['book', 0.2, 0.7, 5],
      ['cell phone', 0.15, 0.5, 1],
      ['clock', 0.1, 0.85, 1],
      ['dining table', 0.3, 0.85, 1],
    ],
    ocrPerHour: 100,
    ocr: SLIDES,
    speech: 0.8,
    topics: ['lecture', 'budget'],
  },
  {
    name: 'living-room',
    labels: [
      ['person', 0.7, 0.85, 3],
      ['couch', 0.6, 0.9, 1],
      ['tv', 0.5, 0.9, 1],
      ['potted plant', 0.3, 0.85, 2],
      ['remote', 0.1, 0.5, 1],
      ['dog', 0.15, 0.7, 1],
      ['cat', 0.1, 0.7, 1],
      ['chair', 0.3, 0.8, 2],
      ['book', 0.2, 0.8, 3],
      ['vase', 0.1, 0.8, 1],
      ['cup', 0.2, 0.6, 2],
      ['teddy bear', 0.03, 0.6, 1],
      ['clock', 0.05, 0.8, 1],
    ],
    ocrPerHour: 6,
    ocr: CHANNEL,
    speech: 0.4,
    topics: ['daily'],
  },
  {
    name: 'park',
    labels: [
      ['person', 0.8, 0.85, 6],
      ['dog', 0.3, 0.75, 2],
      ['bench', 0.3, 0.8, 2],
      ['bicycle', 0.2, 0.6, 2],
      ['bird', 0.15, 0.5, 4],
      ['frisbee', 0.05, 0.5, 1],
      ['sports ball', 0.1, 0.5, 1],
      ['kite', 0.05, 0.6, 2],
      ['umbrella', 0.05, 0.6, 2],
      ['backpack', 0.2, 0.6, 2],
      ['skateboard', 0.05, 0.5, 1],
      ['car', 0.1, 0.6, 2],
    ],
    ocrPerHour: 5,
    ocr: CHANNEL,
    speech: 0.2,
    topics: ['daily', 'weather'],
  },
  {
    name: 'sports',
    labels: [
      ['person', 0.95, 0.9, 8],
      ['sports ball', 0.5, 0.6, 1],
      ['tennis racket', 0.1, 0.7, 2],
      ['baseball bat', 0.05, 0.6, 1],
      ['skateboard', 0.04, 0.6, 1],
      ['surfboard', 0.04, 0.6, 1],
      ['chair', 0.1, 0.7, 5],
      ['bottle', 0.1, 0.6, 3],
      ['clock', 0.05, 0.8, 1],
    ],
    ocrPerHour: 60,
    ocr: SPORTS,
    speech: 0.5,
    topics: ['sports'],
  },
  {
    name: 'news',
    labels: [
      ['person', 0.9, 0.9, 3],
      ['tv', 0.5, 0.9, 2],
      ['tie', 0.4, 0.85, 2],
      ['chair', 0.3, 0.8, 3],
      ['cell phone', 0.05, 0.5, 1],
      ['dining table', 0.2, 0.85, 1],
      ['laptop', 0.1, 0.85, 1],
      ['car', 0.1, 0.6, 3],
    ],
    ocrPerHour: 200,
    ocr: HEADLINES,
    speech: 0.9,
    topics: ['weather', 'budget', 'sports'],
  },
];

/** Clauses of what is said (embedded once each); a transcript sentence joins two of them. */
function clausePool(): { topic: string; text: string }[] {
  const out: { topic: string; text: string }[] = [];
  for (const [topic, preds] of Object.entries(TOPIC_PREDICATES))
    for (const s of SUBJECTS)
      for (const p of preds) for (const a of ADVERBIALS) out.push({ topic, text: `${s} ${p}${a}` });
  return out;
}

const SHOT_POOL = 30;
const shotSentence = (i: number) => `scene change: cut to shot ${i + 1} of ${SHOT_POOL}`;

// ---- the embedding pool ---------------------------------------------------------------------

interface Pool {
  dims: number;
  byText: Map<string, Float32Array>;
}

async function embeddingPool(): Promise<Pool> {
  const texts = new Set<string>();
  for (const t of THEMES) {
    for (const [label, , , max] of t.labels)
      for (let n = 1; n <= max; n++)
        texts.add(embeddingText({ kind: 'object', text: label, extra: { label, max_count: n } }));
    for (const o of t.ocr) texts.add(embeddingText({ kind: 'ocr', text: o, extra: null }));
  }
  texts.add(embeddingText({ kind: 'speech', text: 'speech', extra: null }));
  for (let i = 0; i < SHOT_POOL; i++) texts.add(shotSentence(i));
  for (const c of clausePool()) texts.add(c.text);
  const list = [...texts].sort();
  const file = join(ROOT, 'pool.bin');
  const index = join(ROOT, 'pool.json');
  const dims = 512;
  if (
    existsSync(file) &&
    existsSync(index) &&
    JSON.stringify(JSON.parse(readFileSync(index, 'utf8'))) === JSON.stringify(list)
  ) {
    const buf = readFileSync(file);
    const all = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
    return { dims, byText: new Map(list.map((t, i) => [t, all.slice(i * dims, (i + 1) * dims)])) };
  }
  console.log(`embedding a pool of ${list.length} distinct texts (once; cached in ${ROOT}) ...`);
  const t0 = performance.now();
  const e = new UseEmbedder();
  const all = new Float32Array(list.length * dims);
  for (let i = 0; i < list.length; i += 256) {
    const vecs = await e.embed(list.slice(i, i + 256));
    vecs.forEach((v, k) => all.set(v, (i + k) * dims));
  }
  await e.close();
  writeFileSync(file, new Uint8Array(all.buffer));
  writeFileSync(index, JSON.stringify(list));
  console.log(`  ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  return { dims, byText: new Map(list.map((t, i) => [t, all.slice(i * dims, (i + 1) * dims)])) };
}

function normalised(v: Float32Array): Float32Array {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i]! * v[i]!;
  n = Math.sqrt(n) || 1;
  for (let i = 0; i < v.length; i++) v[i]! /= n;
  return v;
}

// ---- one synthetic video --------------------------------------------------------------------

interface SynSegment {
  kind: 'shot' | 'ocr' | 'object' | 'speech' | 'transcript';
  start: number;
  end: number;
  text: string;
  confidence: number | null;
  extra: Record<string, unknown>;
  vector: Float32Array;
}
interface SynVideo {
  theme: Theme;
  duration: number;
  segments: SynSegment[];
  frames: { t: number; shot: number }[];
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;
const r4 = (x: number) => Math.round(x * 10000) / 10000;

function synthVideo(
  rng: Rng,
  theme: Theme,
  duration: number,
  pool: Pool,
  clauses: { topic: string; text: string }[],
): SynVideo {
  const vec = (text: string) => {
    const v = pool.byText.get(text);
    if (!v) throw new Error(`not in the embedding pool: ${text}`);
    return v;
  };
  const segments: SynSegment[] = [];
  // Shots every ~5-20 s.
  const shots: { start: number; end: number }[] = [];
  for (let t = 0; t < duration; ) {
    const d = 5 + 15 * rng.next() ** 1.5;
    const end = Math.min(duration, t + d);
    shots.push({ start: r3(t), end: r3(end) });
    t = end;
  }
  shots.forEach((s, i) => {
    const base = vec(shotSentence(i % SHOT_POOL));
    const v = new Float32Array(base.length);
    for (let k = 0; k < v.length; k++) v[k] = base[k]! + 0.01 * rng.gauss();
    const score = r3(rng.range(0.3, 0.9));
    segments.push({
      kind: 'shot',
      start: s.start,
      end: s.end,
      text: `shot ${i + 1} of ${shots.length}`,
      confidence: score,
      extra: { index: i, cut_score: score },
      vector: normalised(v),
    });
  });
  // Sampled frames: at most one per 5 s within a shot.
  const frames: { t: number; shot: number }[] = [];
  shots.forEach((s, i) => {
    for (let t = s.start + Math.min(2.5, (s.end - s.start) / 2); t < s.end; t += 5) frames.push({ t: r3(t), shot: i });
  });
  // Objects: per-frame detections from a presence chain per label, spans built as the objects stage does.
  const det: Map<string, number>[] = frames.map(() => new Map());
  for (const [label, appear, stay, max] of theme.labels) {
    let n = 0;
    frames.forEach((f, i) => {
      const cut = i > 0 && frames[i - 1]!.shot !== f.shot;
      if (n > 0 && rng.chance(cut ? stay * 0.6 : stay)) {
        if (rng.chance(0.2)) n = Math.max(1, Math.min(max, n + (rng.chance(0.5) ? 1 : -1)));
      } else if (rng.chance(appear * (n > 0 ? 0.3 : cut ? 1 : 0.35))) n = 1 + Math.floor(rng.next() ** 2 * max);
      else n = 0;
      if (n > 0) det[i]!.set(label, n);
    });
  }
  const spanOf = frames.map((f, i) => {
    const prev = frames[i - 1];
    const next = frames[i + 1];
    const shot = shots[f.shot]!;
    const a = prev && prev.shot === f.shot ? (prev.t + f.t) / 2 : shot.start;
    const b = next && next.shot === f.shot ? (f.t + next.t) / 2 : shot.end;
    return { from: r3(Math.max(a, f.t - 3, 0)), to: r3(Math.min(b, f.t + 3, duration)) };
  });
  const objects: SynSegment[] = [];
  for (const [label] of theme.labels) {
    let run: number[] = [];
    const emit = () => {
      const counts: [number, number][] = run.map((i) => [frames[i]!.t, det[i]!.get(label)!]);
      const maxCount = Math.max(...counts.map((c) => c[1]));
      const best = run.find((i) => det[i]!.get(label) === maxCount)!;
      const boxes = Array.from({ length: maxCount }, () => ({
        score: r3(rng.range(0.3, 0.95)),
        box: [r4(rng.range(0, 0.8)), r4(rng.range(0, 0.8)), r4(rng.range(0.03, 0.2)), r4(rng.range(0.05, 0.4))],
      }));
      const extra = { label, max_count: maxCount, counts, best_t: frames[best]!.t, boxes };
      objects.push({
        kind: 'object',
        start: spanOf[run[0]!]!.from,
        end: spanOf[run.at(-1)!]!.to,
        text: label,
        confidence: r3(rng.range(0.35, 0.9)),
        extra,
        vector: vec(embeddingText({ kind: 'object', text: label, extra })),
      });
      run = [];
    };
    frames.forEach((_, i) => {
      if (det[i]!.has(label)) run.push(i);
      else if (run.length) emit();
    });
    if (run.length) emit();
  }
  segments.push(...objects.sort((x, y) => x.start - y.start || x.text.localeCompare(y.text)));
  // OCR tracks: a few texts of the video's own, shown for 2-30 s.
  const texts = Array.from({ length: 6 + rng.int(0, 10) }, () => rng.pick(theme.ocr));
  const ocrCount = Math.round(((theme.ocrPerHour * duration) / 3600) * rng.range(0.5, 1.5));
  const ocr: SynSegment[] = [];
  for (let k = 0; k < ocrCount; k++) {
    const start = r3(rng.range(0, duration - 2));
    const text = rng.pick(texts);
    const extra = {
      box: [r3(rng.next() * 0.6), r3(rng.next() * 0.8), r3(rng.range(0.1, 0.4)), r3(rng.range(0.03, 0.1))],
      frames: rng.int(1, 6),
    };
    ocr.push({
      kind: 'ocr',
      start,
      end: r3(Math.min(duration, start + rng.range(2, 30))),
      text,
      confidence: r3(rng.range(0.6, 0.99)),
      extra,
      vector: vec(embeddingText({ kind: 'ocr', text, extra })),
    });
  }
  segments.push(...ocr.sort((a, b) => a.start - b.start));
  // Speech spans (VAD) and their transcript sentences.
  const topicClauses = clauses.filter((c) => theme.topics.includes(c.topic));
  const speechVec = vec(embeddingText({ kind: 'speech', text: 'speech', extra: null }));
  const speech: SynSegment[] = [];
  const transcripts: SynSegment[] = [];
  if (theme.speech > 0) {
    const meanSpeech = 10;
    const meanGap = (meanSpeech * (1 - theme.speech)) / theme.speech;
    for (let t = rng.range(0, meanGap * 2); t < duration - 1; ) {
      const len = Math.min(duration - t, rng.range(2, 2 * meanSpeech - 2));
      const start = r3(t);
      const end = r3(t + len);
      speech.push({
        kind: 'speech',
        start,
        end,
        text: 'speech',
        confidence: r3(rng.range(0.6, 0.95)),
        extra: { engine: 'silero-vad', transcribed: true },
        vector: speechVec,
      });
      for (let p = start; p < end - 0.5; ) {
        const q = Math.min(end, p + rng.range(2, 8));
        const a = rng.pick(topicClauses);
        const b = rng.pick(topicClauses);
        const link = rng.pick(LINKS);
        const text = `${a.text.charAt(0).toUpperCase()}${a.text.slice(1)}${link}${link.startsWith('.') ? b.text.charAt(0).toUpperCase() + b.text.slice(1) : b.text}.`;
        const v = new Float32Array(pool.dims);
        const va = vec(a.text);
        const vb = vec(b.text);
        for (let k = 0; k < v.length; k++) v[k] = va[k]! + vb[k]!;
        transcripts.push({
          kind: 'transcript',
          start: r3(p),
          end: r3(q),
          text,
          confidence: null,
          extra: { engine: 'whisper:onnx-community/whisper-base.en', speech_start: start, speech_end: end },
          vector: normalised(v),
        });
        p = q;
      }
      t = end + rng.range(0.5, 2 * meanGap);
    }
  }
  segments.push(...speech, ...transcripts);
  return { theme, duration, segments, frames };
}

// ---- building the data directories ----------------------------------------------------------

interface BaseInfo {
  token: string;
  userId: string;
  indexId: string;
  clips: Record<string, string>;
  realSeconds: number;
}

async function buildBase(dir: string): Promise<BaseInfo> {
  const done = join(dir, 'bench-base.json');
  if (existsSync(done)) return JSON.parse(readFileSync(done, 'utf8'));
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  console.log(`analysing ${REAL_CLIPS.length} real clips through the API (once; cached in ${dir}) ...`);
  const origin = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (req) => new Response(Bun.file(join(MEDIA, decodeURIComponent(new URL(req.url).pathname.slice(1))))),
  });
  const server = await startServer(
    loadConfig(
      { 'data-dir': dir, port: '0', 'allow-private-urls': true, 'log-level': 'warn', 'min-free-bytes': '0' },
      process.env,
    ),
    () => {},
  );
  const { user, token } = await server.service.accounts.createUser('bench-inquire', null);
  const post = async (path: string, body: unknown) =>
    (
      await fetch(server.url + path, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(body),
      })
    ).json() as Promise<any>;
  const clips: Record<string, string> = {};
  for (const c of REAL_CLIPS) {
    const r = await post('/remote-upload', {
      token,
      index: 'inquire-bench',
      url: `${origin.url}${encodeURIComponent(c)}`,
    });
    if (!r.data) throw new Error(`upload of ${c} failed: ${JSON.stringify(r)}`);
    clips[c] = r.data.key;
  }
  const indexId = ((await (await fetch(`${server.url}/indexes?token=${token}`)).json()) as any[])[0].index_id;
  let realSeconds = 0;
  for (;;) {
    const res = (await (await fetch(`${server.url}/index-resources?token=${token}&index=${indexId}`)).json()) as any[];
    if (res.every((r) => r.status === 'ready' || r.status === 'failed')) {
      for (const r of res.filter((x) => x.status === 'failed')) throw new Error(`${r.file_name} failed: ${r.error}`);
      break;
    }
    await Bun.sleep(500);
  }
  await server.stop();
  origin.stop(true);
  const db = new Database(join(dir, 'vidq.db'));
  realSeconds = (db.query('SELECT sum(duration_sec) AS s FROM videos').get() as { s: number }).s;
  db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  db.close();
  const info: BaseInfo = { token, userId: user.id, indexId, clips, realSeconds };
  writeFileSync(done, JSON.stringify(info, null, 2));
  return info;
}

const ID_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-';
const synId = (rng: Rng) => Array.from({ length: 32 }, () => ID_CHARS[rng.int(0, 63)]).join('');

interface SizeInfo {
  hours: number;
  videos: number;
  synthetic: number;
  segments: Record<string, number>;
  frames: number;
  /** target_video picks: the first synthetic video of each theme (videos 0-6). */
  byTheme: Record<string, string>;
}

/**
 * Adds synthetic videos to the index of `dir` until it holds `hours` in all. Videos come from one
 * seeded sequence, so a larger size holds exactly the smaller one's videos first.
 */
function addSynthetic(dir: string, base: BaseInfo, hours: number, pool: Pool): SizeInfo {
  const db = openDatabase(join(dir, 'vidq.db'));
  const c = db.$client;
  c.exec('PRAGMA synchronous = OFF');
  const have = c
    .query('SELECT count(*) AS n, coalesce(sum(duration_sec), 0) AS s FROM videos WHERE source_url LIKE ?')
    .get('synthetic:%') as { n: number; s: number };
  const clauses = clausePool();
  const insVideo = c.prepare(
    `INSERT INTO videos (id, index_id, user_id, source_url, file_name, file_type, storage_path, size_bytes, sha256, duration_sec, fps, width, height, video_codec, has_audio, status, stage, progress, analysis, uploaded_at, updated_at)
     VALUES (?, ?, ?, ?, ?, 'video/mp4', ?, ?, ?, ?, 30, 1280, 720, 'h264', ?, 'ready', 'ready', 100, ?, ?, ?)`,
  );
  const insSeg = c.prepare(
    'INSERT INTO segments (video_id, kind, start, "end", text, confidence, extra, vector_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const insVec = c.prepare('INSERT INTO segment_vectors (video_id, vector) VALUES (?, ?)');
  // The float32 originals of the stored vectors (id, then 512 floats), for the recall measurement.
  const floats = openSync(join(dir, 'float32.bin'), 'a');
  const embeddedBy = new UseEmbedder().info.name;
  const insFrame = c.prepare('INSERT INTO frames (video_id, t, shot, file) VALUES (?, ?, ?, ?)');
  let total = base.realSeconds + have.s;
  const target = hours * 3600;
  const t0 = performance.now();
  const tx = c.transaction((batch: { id: string; n: number; v: SynVideo }[]) => {
    for (const { id, n, v } of batch) {
      const summary = {
        synthetic: true,
        embeddings: { producer: embeddedBy, engine: embeddedBy },
        shots: v.segments.filter((s) => s.kind === 'shot').length,
        frames: v.frames.length,
      };
      const when = Date.UTC(2025, 0, 1) + n * 60_000;
      insVideo.run(
        id,
        base.indexId,
        base.userId,
        `synthetic:${v.theme.name}/${n}`,
        `${v.theme.name}-${String(n).padStart(4, '0')}.mp4`,
        `media/${id}/source.mp4`,
        Math.round(v.duration * 250_000),
        id.padEnd(64, '0'),
        v.duration,
        v.theme.speech > 0 ? 1 : 0,
        JSON.stringify(summary),
        when,
        when,
      );
      // Each distinct vector of the video once, before its segments (one video's ids are consecutive).
      const vectorIds = new Map<Float32Array, number>();
      for (const s of v.segments) {
        if (vectorIds.has(s.vector)) continue;
        const q = quantize(s.vector);
        const vid = Number(insVec.run(id, Buffer.from(q.buffer, q.byteOffset, q.byteLength)).lastInsertRowid);
        vectorIds.set(s.vector, vid);
        writeSync(floats, new Float64Array([vid]));
        writeSync(floats, s.vector);
      }
      for (const s of v.segments)
        insSeg.run(id, s.kind, s.start, s.end, s.text, s.confidence, JSON.stringify(s.extra), vectorIds.get(s.vector)!);
      v.frames.forEach((f, k) => insFrame.run(id, f.t, f.shot, `${String(k + 1).padStart(6, '0')}.jpg`));
    }
  });
  let batch: { id: string; n: number; v: SynVideo }[] = [];
  // Video n comes from its own seeded generator, so a larger size holds exactly the smaller one's
  // videos (the last of which may have been cut short to fit) and continues from there.
  for (let n = have.n; total < target - 30; n++) {
    const rng = rngOf(SEED * 7 + n);
    const id = synId(rng);
    // The first video of each theme is 8 minutes (so that 1 h holds every theme), then 4-45 minutes.
    const theme = n < THEMES.length ? THEMES[n]! : rng.pick(THEMES);
    const duration = Math.min(n < THEMES.length ? 480 : r3(240 + 2460 * rng.next() ** 1.3), target - total);
    const v = synthVideo(rng, theme, duration, pool, clauses);
    total += duration;
    batch.push({ id, n, v });
    if (batch.length >= 20) {
      tx(batch);
      batch = [];
    }
  }
  if (batch.length) tx(batch);
  const segs = Object.fromEntries(
    (c.query('SELECT kind, count(*) AS n FROM segments GROUP BY kind').all() as { kind: string; n: number }[]).map(
      (r) => [r.kind, r.n],
    ),
  );
  const info: SizeInfo = {
    hours: (c.query('SELECT sum(duration_sec) AS s FROM videos').get() as { s: number }).s / 3600,
    videos: (c.query('SELECT count(*) AS n FROM videos').get() as { n: number }).n,
    synthetic: (c.query('SELECT count(*) AS n FROM videos WHERE source_url LIKE ?').get('synthetic:%') as { n: number })
      .n,
    segments: segs,
    frames: (c.query('SELECT count(*) AS n FROM frames').get() as { n: number }).n,
    byTheme: Object.fromEntries(THEMES.map((t, n) => [t.name, synId(rngOf(SEED * 7 + n))])),
  };
  closeSync(floats);
  c.exec('ANALYZE');
  c.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  c.close();
  console.log(
    `  ${hours} h: ${info.videos} videos (${info.synthetic} synthetic), ${Object.values(segs).reduce((a, b) => a + b, 0)} segments ${JSON.stringify(segs)}, ${info.frames} frames; built in ${((performance.now() - t0) / 1000).toFixed(0)} s`,
  );
  return info;
}

// ---- running the server and asking ----------------------------------------------------------

async function serve(dir: string): Promise<{ url: string; pid: number; stop: () => Promise<void> }> {
  const prof = values['server-cpu-prof'];
  const proc = Bun.spawn(
    [
      process.execPath,
      // The server's CPU profile (markdown, written when it stops), to see where a question's time goes.
      ...(prof ? ['--cpu-prof-md', `--cpu-prof-dir=${prof}`] : []),
      join(import.meta.dir, '../src/main.ts'),
      'serve',
      '--data-dir',
      dir,
      '--host',
      '127.0.0.1',
      '--port',
      '0',
      '--analysis-workers',
      // Live windows are analysed in a worker (a server without one analyses them itself).
      LIVE_STREAMS > 0 ? '1' : '0',
      '--log-level',
      'warn',
      '--min-free-bytes',
      '0',
    ],
    { stdout: 'pipe', stderr: 'inherit' },
  );
  const reader = proc.stdout.getReader();
  let text = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the server exited: ${text}`);
    text += new TextDecoder().decode(value);
    const m = /listening on (http:\/\/\S+)/.exec(text);
    if (m) {
      void (async () => {
        while (!(await reader.read()).done);
      })();
      return {
        url: m[1]!,
        pid: proc.pid,
        stop: async () => {
          proc.kill('SIGTERM');
          await proc.exited;
        },
      };
    }
  }
}

function rssOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
};
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

interface SizeResult {
  hours: number;
  all: number[];
  byType: Map<string, number[]>;
  first: number;
  rss: { rss: number; peak: number };
  load: [number, number];
  answers: unknown[];
  search: number[];
  levels: LevelResult[];
}

interface LevelResult {
  clients: number;
  perSecond: number;
  p50: number;
  p95: number;
}

/**
 * Builds (or brings up to date) the ANN index of the bench index, as the server does on first use,
 * and measures the compact store: recall@10 of its search against exact float32 search over the
 * synthetic videos' original vectors, for the bench's questions; and the bytes per indexed hour.
 */
async function compactStore(dir: string, base: BaseInfo, hours: number): Promise<void> {
  if (RECALL_SAMPLE <= 0) {
    const bytes = statSync(join(dir, 'vidq.db')).size;
    console.log(
      `  compact store at ${hours} h: recall not measured (--recall-sample 0); database ${(bytes / 1e6).toFixed(0)} MB = ${(bytes / 1e6 / hours).toFixed(2)} MB per indexed hour`,
    );
    return;
  }
  const db = openDatabase(join(dir, 'vidq.db'));
  const embedder = new UseEmbedder();
  const core = new RetrievalCore({ catalog: sqliteCatalog(db), embedder, dataDir: dir });
  const all = db
    .select()
    .from(videos)
    .all()
    .filter((v) => v.indexId === base.indexId);
  // A saved search index (search-index/, from an earlier run or server start) is read, not rebuilt.
  const saved = existsSync(join(dir, 'search-index'));
  let t0 = performance.now();
  await core.prepare(all);
  core.flush();
  const annSec = (performance.now() - t0) / 1000;
  const synthetic = all.filter((v) => v.sourceUrl.startsWith('synthetic:'));
  const every = [...new Set(QUESTIONS.map((q) => q.prompt))];
  // An even sample of the questions when --recall-sample is given.
  const take = Math.min(every.length, RECALL_SAMPLE);
  const prompts = Array.from({ length: take }, (_, i) => every[Math.floor((i * every.length) / take)]!);
  const queries = await embedder.embed(prompts);
  // What the compact store finds: through the ANN index (timed) and by exact int8 search.
  let searchMs = 0;
  const found: [number, number][][] = [];
  const exactFound: [number, number][][] = [];
  for (const q of queries) {
    t0 = performance.now();
    found.push(await core.vectors.nearest(synthetic, q, 10));
    searchMs += performance.now() - t0;
    exactFound.push(await core.vectors.exact(synthetic, q, 10));
  }
  // The float32 originals ([id (float64), 512 float32] records), read a slice at a time (holding
  // them all took gigabytes at 1,000 h): each question's exact 10th best cosine, and the cosines of
  // the vectors found.
  const rec = 8 + 512 * 4;
  const fd = openSync(join(dir, 'float32.bin'), 'r');
  const chunk = 8_192;
  const buf = Buffer.alloc(chunk * rec);
  const wanted = new Set([...found, ...exactFound].flat().map(([id]) => id));
  const cosOf = queries.map(() => new Map<number, number>());
  const best = queries.map((): number[] => []);
  const v = new Float32Array(512);
  let n = 0;
  for (;;) {
    const got = readSync(fd, buf, 0, buf.byteLength, n * rec);
    const rows = Math.floor(got / rec);
    if (rows === 0) break;
    for (let r = 0; r < rows; r++) {
      const at = buf.byteOffset + r * rec;
      const id = new Float64Array(buf.buffer.slice(at, at + 8))[0]!;
      v.set(new Float32Array(buf.buffer.slice(at + 8, at + rec)));
      let len = 0;
      for (let k = 0; k < 512; k++) len += v[k]! * v[k]!;
      len = Math.sqrt(len) || 1;
      queries.forEach((q, i) => {
        let d = 0;
        for (let k = 0; k < 512; k++) d += q[k]! * v[k]!;
        const c = d / len;
        if (wanted.has(id)) cosOf[i]!.set(id, c);
        const b = best[i]!;
        if (b.length === 10 && c <= b[9]!) return;
        let p = b.length;
        while (p > 0 && b[p - 1]! < c) p--;
        b.splice(p, 0, c);
        if (b.length > 10) b.pop();
      });
    }
    n += rows;
  }
  closeSync(fd);
  let hits = 0;
  let near = 0;
  let exactInt8 = 0;
  const asked = queries.length * 10;
  queries.forEach((_, i) => {
    const kth = best[i]![9]!;
    const cos = cosOf[i]!;
    // Tie-aware: a vector as close as the exact 10th counts (the pool repeats vectors across videos).
    hits += found[i]!.filter(([id]) => cos.has(id) && cos.get(id)! >= kth - 1e-5).length;
    // Within 0.01 of the 10th (below the int8 rounding and far below what tells relevant from not).
    near += found[i]!.filter(([id]) => cos.has(id) && cos.get(id)! >= kth - 0.01).length;
    exactInt8 += exactFound[i]!.filter(([id]) => cos.has(id) && cos.get(id)! >= kth - 1e-5).length;
  });
  const bytes = statSync(join(dir, 'vidq.db')).size;
  console.log(
    `  compact store at ${hours} h: ${n} distinct synthetic vectors; recall@10 vs exact float32 search over ${queries.length} questions: int8 exact ${(exactInt8 / asked).toFixed(3)}, int8 + ANN ${(hits / asked).toFixed(3)} (${(near / asked).toFixed(3)} counting those within 0.01 of the 10th); database ${(bytes / 1e6).toFixed(0)} MB = ${(bytes / 1e6 / hours).toFixed(2)} MB per indexed hour; ANN (IVF) build ${annSec.toFixed(1)} s (${saved ? 'read back from its saved lists' : 'lists chosen and saved'}), search ${(searchMs / queries.length).toFixed(1)} ms per question`,
  );
  await embedder.close?.();
  db.$client.close();
}

async function measure(sizeDir: string, base: BaseInfo, size: SizeInfo): Promise<SizeResult> {
  // Live streams write into the data directory (and are resumed by the next server): they run on
  // a throwaway copy, so that every run starts from the same data.
  const dir = LIVE_STREAMS > 0 ? `${sizeDir}.live-run` : sizeDir;
  if (dir !== sizeDir) {
    rmSync(dir, { recursive: true, force: true });
    cpSync(sizeDir, dir, { recursive: true });
  }
  const server = await serve(dir);
  // The steady state: the server builds its search index at start-up, in the background (until
  // then, questions search every vector exactly); measuring before it is ready measures the build.
  const waited = performance.now();
  let health: { search_index?: { ready: boolean; build_ms: number | null } } = {};
  for (;;) {
    health = (await (await fetch(`${server.url}/health`)).json()) as typeof health;
    if (health.search_index?.ready !== false) break;
    await Bun.sleep(500);
  }
  console.log(
    `  ${size.hours.toFixed(0)} h: search index ready after ${((performance.now() - waited) / 1000).toFixed(1)} s (server's start-up build ${health.search_index?.build_ms != null ? `${(health.search_index.build_ms / 1000).toFixed(1)} s` : 'not needed'}; load ${loadavg()[0]!.toFixed(2)})`,
  );
  const load0 = loadavg()[0]!;
  const bodyOf = (q: Question) => {
    const body: Record<string, string> = { token: base.token, index: base.indexId, prompt: q.prompt };
    if (q.guidance) body.guidance = q.guidance;
    if (q.target) body.target = q.target;
    if (q.video)
      body.target_video = q.video.startsWith('theme:') ? size.byTheme[q.video.slice(6)]! : base.clips[q.video]!;
    return JSON.stringify(body);
  };
  const ask = async (q: Question): Promise<{ ms: number; body: any }> => {
    const t0 = performance.now();
    const res = await fetch(`${server.url}/inquire`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: bodyOf(q),
    });
    const body = await res.json();
    const ms = performance.now() - t0;
    if (res.status !== 200) throw new Error(`${q.prompt}: HTTP ${res.status} ${JSON.stringify(body)}`);
    return { ms, body };
  };
  let live: Awaited<ReturnType<typeof startLiveStreams>> | null = null;
  try {
    if (LIVE_STREAMS > 0) live = await startLiveStreams(server.url, base.token, LIVE_STREAMS);
    // Warm-up. The first question (index-wide, by meaning) loads the embedding model and every
    // video's vectors: the cold start, reported as "first".
    const first = (await ask(QUESTIONS.find((q) => q.type === 'general')!)).ms;
    const answers: unknown[] = [];
    for (const q of QUESTIONS) {
      const { body } = await ask(q);
      answers.push({
        ...q,
        output: body.output,
        evidence: body.evidence.map((e: any) => ({
          ...e,
          frame_url: e.frame_url ? new URL(e.frame_url).pathname : null,
        })),
      });
    }
    for (const q of QUESTIONS) await ask(q);
    const rng = rngOf(SEED + 1);
    const all: number[] = [];
    const byType = new Map<string, number[]>();
    const cpu0 = cpuSecondsOf(server.pid);
    const timed0 = performance.now();
    for (let i = 0; i < N; i++) {
      const q = QUESTIONS[Math.floor(rng.next() * QUESTIONS.length)]!;
      const { ms } = await ask(q);
      all.push(ms);
      byType.set(q.type, [...(byType.get(q.type) ?? []), ms]);
    }
    const timedSec = (performance.now() - timed0) / 1000;
    console.log(
      `  timed questions: ${timedSec.toFixed(1)} s wall, server CPU ${(cpuSecondsOf(server.pid) - cpu0).toFixed(1)} s (user+system); load ${loadavg()[0]!.toFixed(2)}`,
    );
    if (live) console.log(`  live streams: ${JSON.stringify(await live.stats())}`);
    // GET /search with the same texts, on the same retrieval core.
    const search: number[] = [];
    for (let i = 0; i < N / 2; i++) {
      const q = QUESTIONS[Math.floor(rng.next() * QUESTIONS.length)]!;
      const t0 = performance.now();
      const res = await fetch(
        `${server.url}/search?${new URLSearchParams({ token: base.token, index: base.indexId, q: q.prompt })}`,
      );
      await res.json();
      if (res.status !== 200) throw new Error(`/search ${q.prompt}: HTTP ${res.status}`);
      search.push(performance.now() - t0);
    }
    // N clients at once, each asking the next question of one seeded sequence.
    const levels: LevelResult[] = [];
    for (const clients of LEVELS) {
      const seq = rngOf(SEED + clients);
      const order = Array.from({ length: N }, () => QUESTIONS[Math.floor(seq.next() * QUESTIONS.length)]!);
      const times: number[] = [];
      let next = 0;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: clients }, async () => {
          while (next < order.length) times.push((await ask(order[next++]!)).ms);
        }),
      );
      const wall = (performance.now() - t0) / 1000;
      levels.push({ clients, perSecond: order.length / wall, p50: pct(times, 50), p95: pct(times, 95) });
    }
    return {
      hours: size.hours,
      all,
      byType,
      first,
      rss: rssOf(server.pid),
      load: [load0, loadavg()[0]!],
      answers,
      search,
      levels,
    };
  } finally {
    live?.stop();
    await server.stop();
    if (dir !== sizeDir) rmSync(dir, { recursive: true, force: true });
  }
}

/** User+system CPU seconds of a process so far (Linux /proc). */
function cpuSecondsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * N pushed live streams at 1 fps (frames of bottles.mp4, 640×360 PNG), running until stopped; they
 * are live (a few windows analysed each) before this returns.
 */
async function startLiveStreams(
  url: string,
  token: string,
  n: number,
): Promise<{ stop: () => void; stats: () => Promise<unknown> }> {
  const dir = join(ROOT, 'live-frames');
  if (!existsSync(join(dir, 'f10.png'))) {
    mkdirSync(dir, { recursive: true });
    const ffmpeg = Bun.which('ffmpeg') ?? join(import.meta.dir, '../node_modules/@ffmpeg-installer/linux-x64/ffmpeg');
    const p = Bun.spawnSync([
      ffmpeg,
      '-v',
      'error',
      '-y',
      '-i',
      join(MEDIA, 'bottles.mp4'),
      '-t',
      '10',
      '-vf',
      'fps=1',
      join(dir, 'f%02d.png'),
    ]);
    if (p.exitCode !== 0) throw new Error(`ffmpeg: ${p.stderr.toString()}`);
  }
  const pngs = Array.from({ length: 10 }, (_, i) =>
    readFileSync(join(dir, `f${String(i + 1).padStart(2, '0')}.png`)).toString('base64'),
  );
  const post = async (path: string, body: unknown) =>
    (
      await fetch(url + path, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    ).json() as Promise<any>;
  await fetch(`${url}/create-index?token=${token}&index=bench-live&type=performance`);
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = await post('/add-stream', { token, index: 'bench-live', fps: 1, name: `camera ${i + 1}` });
    if (r.status !== 'success') throw new Error(`add-stream: ${JSON.stringify(r)}`);
    ids.push(r.stream_id);
  }
  let k = 0;
  const timer = setInterval(() => {
    const time = Date.now() / 1000;
    const png = pngs[k++ % pngs.length]!;
    for (const id of ids) void post('/stream', { base64_image: png, stream_id: id, time }).catch(() => {});
  }, 1000);
  const stats = async () =>
    ((await (await fetch(`${url}/streams?token=${token}&index=bench-live`)).json()) as any[]).map((s) => ({
      analysed: s.frames_analysed,
      dropped: s.frames_dropped,
    }));
  const t0 = performance.now();
  while (!(await stats()).every((s: any) => s.analysed >= 3)) {
    if (performance.now() - t0 > 180_000)
      throw new Error(`the live streams did not go live: ${JSON.stringify(await stats())}`);
    await Bun.sleep(1000);
  }
  console.log(
    `  ${n} live streams at 1 fps analysed (${((performance.now() - t0) / 1000).toFixed(0)} s to their first windows)`,
  );
  return { stop: () => clearInterval(timer), stats };
}

// ---- main -----------------------------------------------------------------------------------

const base = await buildBase(join(ROOT, 'base'));
const pool = await embeddingPool();
const sizes: { dir: string; info: SizeInfo }[] = [];
let prev = join(ROOT, 'base');
for (const h of SIZES) {
  const dir = join(ROOT, `h${h}`);
  const done = join(dir, 'bench-size.json');
  if (!existsSync(done)) {
    console.log(`building ${h} h (from ${prev}) ...`);
    rmSync(dir, { recursive: true, force: true });
    cpSync(prev, dir, { recursive: true });
    rmSync(join(dir, 'bench-size.json'), { force: true });
    writeFileSync(done, JSON.stringify(addSynthetic(dir, base, h, pool), null, 2));
  }
  const info = JSON.parse(readFileSync(done, 'utf8')) as SizeInfo;
  await compactStore(dir, base, info.hours);
  sizes.push({ dir, info });
  prev = dir;
}
if (values['only-build']) process.exit(0);

console.log(
  `\nPOST /inquire, composed answers, ${N} requests per size one at a time after a warm-up; ${navigator.hardwareConcurrency} cores`,
);
const results: SizeResult[] = [];
for (const s of sizes) {
  const r = await measure(s.dir, base, s.info);
  results.push(r);
  const segs = Object.values(s.info.segments).reduce((a, b) => a + b, 0);
  console.log(
    `${`${r.hours.toFixed(1)} h`.padStart(7)}  ${String(s.info.videos).padStart(4)} videos ${String(segs).padStart(7)} segments   p50 ${pct(r.all, 50).toFixed(0).padStart(5)} ms  p95 ${pct(r.all, 95).toFixed(0).padStart(5)} ms  p99 ${pct(r.all, 99).toFixed(0).padStart(5)} ms  mean ${mean(r.all).toFixed(0).padStart(5)} ms  first ${r.first.toFixed(0).padStart(5)} ms  server RSS ${r.rss.rss.toFixed(0)} MB (peak ${r.rss.peak.toFixed(0)})  load ${r.load[0].toFixed(2)}→${r.load[1].toFixed(2)}`,
  );
}
const types = [...new Set(QUESTIONS.map((q) => q.type))];
console.log(`\np50 / p95 ms by question type`);
console.log(`${'type'.padEnd(12)} ${results.map((r) => `${r.hours.toFixed(0)} h`.padStart(13)).join(' ')}`);
for (const t of types)
  console.log(
    `${t.padEnd(12)} ${results.map((r) => (r.byType.get(t) ? `${pct(r.byType.get(t)!, 50).toFixed(0)} / ${pct(r.byType.get(t)!, 95).toFixed(0)}` : '-').padStart(13)).join(' ')}`,
  );
console.log(`\nGET /search (same texts, one at a time)`);
for (const r of results)
  console.log(
    `${`${r.hours.toFixed(1)} h`.padStart(7)}  p50 ${pct(r.search, 50).toFixed(0).padStart(5)} ms  p95 ${pct(r.search, 95).toFixed(0).padStart(5)} ms`,
  );
if (LEVELS.length) {
  console.log(`\nPOST /inquire with N clients at once (${N} questions per level)`);
  for (const r of results)
    for (const l of r.levels)
      console.log(
        `${`${r.hours.toFixed(1)} h`.padStart(7)}  N=${String(l.clients).padEnd(3)} ${l.perSecond.toFixed(1).padStart(6)} questions/s  p50 ${l.p50.toFixed(0).padStart(5)} ms  p95 ${l.p95.toFixed(0).padStart(5)} ms`,
      );
}
const last = results.at(-1)!;
console.log(`\np95 at ${last.hours.toFixed(0)} h: ${pct(last.all, 95).toFixed(0)} ms (target < 300 ms)`);
if (values.dump)
  writeFileSync(
    values.dump,
    JSON.stringify(Object.fromEntries(results.map((r) => [`${r.hours.toFixed(1)}h`, r.answers])), null, 1),
  );
