/**
 * The synthetic index bench/inquire measures (and bench/cluster copies onto PostgreSQL): the real
 * clips of ../shared/media analysed once through the API (base/), and cumulative data directories
 * of 1, 10, 100 … hours whose one index also holds synthetic videos at real densities per hour.
 * See bench/inquire.ts's header for what a synthetic video holds and how its vectors are made.
 * Everything is cached under one root folder and reused by later runs.
 */
import {
  closeSync,
  cpSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Database } from 'bun:sqlite';
import { embeddingText } from '../src/analysis/stages/embeddings';
import { UseEmbedder } from '../src/analysis/engines/embedder';
import { quantize } from '../src/search/vectors';
import { loadConfig } from '../src/config';
import { startServer } from '../src/server';
import { openDatabase } from '../src/storage/db';
import type { Question } from './inquire-questions';

/** Where the index is cached unless a bench is told otherwise. */
export const DEFAULT_ROOT = join(tmpdir(), 'vidq-bench-inquire-v2');
/** The shared clips (VIDQ_TEST_MEDIA, else ../shared/media). */
export const MEDIA = process.env.VIDQ_TEST_MEDIA ?? resolve(import.meta.dir, '../../shared/media');

export const REAL_CLIPS = [
  'big-buck-bunny-intro.webm',
  'birthday-no-audio.mp4',
  'bottles.mp4',
  'cars-parking-lot.mp4',
  'people-one-by-one.mp4',
  'skateboarding-dog.mp4',
  'smpte-timecode-1080p.mp4',
  'speech-over-bottles.mp4',
];
export const SEED = 20240611;

// ---- seeded randomness ----------------------------------------------------------------------

export function rngOf(seed: number) {
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
export type Rng = ReturnType<typeof rngOf>;

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

export const THEMES: Theme[] = [
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

export interface Pool {
  dims: number;
  byText: Map<string, Float32Array>;
}

export async function embeddingPool(root: string): Promise<Pool> {
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
  const file = join(root, 'pool.bin');
  const index = join(root, 'pool.json');
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
  console.log(`embedding a pool of ${list.length} distinct texts (once; cached in ${root}) ...`);
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

export interface BaseInfo {
  token: string;
  userId: string;
  indexId: string;
  clips: Record<string, string>;
  realSeconds: number;
}

export async function buildBase(dir: string): Promise<BaseInfo> {
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

export interface SizeInfo {
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
export function addSynthetic(dir: string, base: BaseInfo, hours: number, pool: Pool): SizeInfo {
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

/**
 * The base and every size in `sizes` (hours), built where missing: each size starts as a copy of
 * the next smaller one (or the base) and gets synthetic videos until it holds that many hours.
 */
export async function buildSizes(
  root: string,
  sizes: number[],
): Promise<{ base: BaseInfo; pool: Pool; sizes: { dir: string; info: SizeInfo }[] }> {
  mkdirSync(root, { recursive: true });
  const base = await buildBase(join(root, 'base'));
  const pool = await embeddingPool(root);
  const out: { dir: string; info: SizeInfo }[] = [];
  let prev = join(root, 'base');
  for (const h of [...sizes].sort((a, b) => a - b)) {
    const dir = join(root, `h${h}`);
    const done = join(dir, 'bench-size.json');
    if (!existsSync(done)) {
      console.log(`building ${h} h (from ${prev}) ...`);
      rmSync(dir, { recursive: true, force: true });
      cpSync(prev, dir, { recursive: true });
      rmSync(join(dir, 'bench-size.json'), { force: true });
      writeFileSync(done, JSON.stringify(addSynthetic(dir, base, h, pool), null, 2));
    }
    out.push({ dir, info: JSON.parse(readFileSync(done, 'utf8')) as SizeInfo });
    prev = dir;
  }
  return { base, pool, sizes: out };
}

/** The JSON body of POST /inquire for a question of bench/inquire-questions.ts on this index. */
export function inquireBody(q: Question, base: BaseInfo, size: SizeInfo): string {
  const body: Record<string, string> = { token: base.token, index: base.indexId, prompt: q.prompt };
  if (q.guidance) body.guidance = q.guidance;
  if (q.target) body.target = q.target;
  if (q.video)
    body.target_video = q.video.startsWith('theme:') ? size.byTheme[q.video.slice(6)]! : base.clips[q.video]!;
  return JSON.stringify(body);
}
