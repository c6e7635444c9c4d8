/**
 * The question reader. The *kind* of a question (which fact it is about, in which form) is read by
 * meaning: the question's sentence embedding is compared with the example questions of each cell of
 * the fact table (facts.ts), and a few rule cues from the slots add to that score. The *slots* are
 * read by rules: times and ranges written in the text, file names, numbers, colours, object labels.
 * When two readings score alike, both are kept (best first) so that the evidence can decide.
 */
import type { Embedder } from '../analysis/embedder';
import type { Video } from '../storage/rows';
import { CELLS, FACTS, type Cell, type FactKind, type Form, type SlotNeed } from './facts';
import type { Asked, Slots, TimeSlot } from './facts/plugin';
import { readIntent, type Intent } from './intent';
import { readRelativeTime } from './relative-time';
import {
  ACTIVITY_VERBS,
  ATTRIBUTE_WORDS,
  CATEGORIES,
  colourNamed,
  escapeRe,
  knownThing,
  labelsNamed,
  NUMBER_WORDS,
} from './vocabulary';

export type { Asked, Slots, TimeSlot } from './facts/plugin';

export interface Reading {
  cell: Cell;
  score: number;
}

export interface ReadQuestion {
  slots: Slots;
  /** The readings, best first: the best, and any that score within MARGIN of it. */
  readings: Reading[];
  /** The question's embedding (null without an embedder), reused by the evidence search. */
  vector: Float32Array | null;
}

/** Readings this close to the best are tried too when the best finds nothing. */
const MARGIN = 0.05;
/** Weight of a rule cue against a cosine (USE-lite cosines of paraphrases ≈ 0.6–0.8). */
const CUE = 0.12;

function clock(s: string): number | null {
  const m = /^(\d{1,3}):([0-5]\d)(?::([0-5]\d))?(?:\.(\d+))?$/.exec(s);
  if (!m) return null;
  return m[3] !== undefined
    ? Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3])
    : Number(m[1]) * 60 + Number(m[2]) + Number(`0.${m[4] ?? 0}`);
}

function amount(s: string): number | null {
  if (/^\d+(\.\d+)?$/.test(s)) return Number(s);
  return NUMBER_WORDS[s] ?? null;
}

/** Seconds of "10 seconds", "2 minutes", "1.5 min", "a minute". */
function duration(n: string, unit: string): number | null {
  const v = n === 'a' || n === 'one' ? 1 : amount(n);
  if (v === null) return null;
  return /^m/.test(unit) ? v * 60 : v;
}

const UNIT = '(seconds?|secs?|s|minutes?|mins?|m)';
const NUMW = '(\\d+(?:\\.\\d+)?|a|one|two|three|four|five|six|seven|eight|nine|ten|fifteen|twenty|thirty|sixty)';

/** Times and ranges written in the question. */
export function readTime(q: string): TimeSlot | null {
  let m: RegExpExecArray | null;
  const T = '(\\d{1,3}:[0-5]\\d(?::[0-5]\\d)?(?:\\.\\d+)?)';
  // Ranges: "between 0:10 and 0:20", "from 1:00 to 1:30", "0:10-0:20".
  if (
    (m = new RegExp(`\\b(?:between|from)\\s+${T}\\s+(?:and|to|until|till)\\s+${T}`).exec(q)) ||
    (m = new RegExp(`${T}\\s*(?:-|–|to)\\s*${T}`).exec(q))
  ) {
    const a = clock(m[1]!);
    const b = clock(m[2]!);
    if (a !== null && b !== null && b >= a) return { start: a, end: b, point: false };
  }
  if (
    (m = new RegExp(
      `\\b(?:between|from)\\s+(\\d+(?:\\.\\d+)?)\\s*(?:s|sec|secs|seconds)?\\s+(?:and|to|until)\\s+(\\d+(?:\\.\\d+)?)\\s*${UNIT}\\b`,
    ).exec(q))
  ) {
    const k = /^m/.test(m[3]!) ? 60 : 1;
    const a = Number(m[1]) * k;
    const b = Number(m[2]) * k;
    if (b >= a) return { start: a, end: b, point: false };
  }
  // "in the first minute", "during the first 10 seconds", "the last 5 s".
  if ((m = new RegExp(`\\b(first|opening|last|final|closing)\\s+(?:${NUMW}\\s+)?${UNIT}\\b`).exec(q))) {
    const secs = m[2] ? duration(m[2], m[3]!) : /^m/.test(m[3]!) ? 60 : 1;
    if (secs !== null)
      return /^(first|opening)$/.test(m[1]!)
        ? { start: 0, end: secs, point: false }
        : { relative: 'end', seconds: secs };
  }
  // A point: "at 1:05", "at 0:27", "around 45:00", "at 12 seconds", "at second 12", "12 s in".
  if ((m = new RegExp(`(?:^|\\s)(?:at|around|about|near|by)?\\s*${T}(?=\\s|$|[?.,!;])`).exec(q))) {
    const t = clock(m[1]!);
    if (t !== null) return { start: t, end: t, point: true };
  }
  if (
    (m = /\b(?:at|around|about|near|after)\s+(\d+(?:\.\d+)?)\s*(?:s|sec|secs|seconds)\b/.exec(q)) ||
    (m = /\bat (?:second|the \d+(?:st|nd|rd|th) second)\s*(\d+)?/.exec(q)) ||
    (m = /\b(\d+(?:\.\d+)?)\s*(?:s|sec|secs|seconds) in\b/.exec(q))
  ) {
    if (m[1]) return { start: Number(m[1]), end: Number(m[1]), point: true };
  }
  if ((m = /\bat (?:the )?(\d+)(?:st|nd|rd|th) second\b/.exec(q)))
    return { start: Number(m[1]), end: Number(m[1]), point: true };
  if ((m = /\b(?:at|around|after)\s+(\d+(?:\.\d+)?)\s*(?:minutes?|mins?)\b/.exec(q)))
    return { start: Number(m[1]) * 60, end: Number(m[1]) * 60, point: true };
  // "at the end", "at the very beginning", "in the middle".
  if (
    /\b(at|near|towards?|by|in) the (very )?(end|ending|close)\b|\bfinal (moments?|seconds?|frames?|shot)\b|\bas it ends\b/.test(
      q,
    )
  )
    return { relative: 'end', seconds: null };
  if (
    /\b(at|near|in) the (very )?(beginning|start|outset|opening)\b|\bwhen (it|the (video|clip|film)) (starts|begins|opens)\b|\bopening (moments?|seconds?|frames?|shot)\b/.test(
      q,
    )
  )
    return { relative: 'start', seconds: null };
  if (/\b(in|around|at) the middle\b|\bhalfway\b/.test(q)) return { relative: 'middle', seconds: null };
  return null;
}

/** A window said relative to now ("in the last 10 minutes", "over the past hour"). */
const RELATIVE_PHRASE =
  /\b(?:in|during|over|within|for)?\s*(?:the\s+)?(?:last|past|previous|recent)\s+(?:\S+\s+)?(?:minutes?|hours?|seconds?|mins?|secs?|hrs?)\b/g;

/** Words that only say a time. */
const TIME_WORDS =
  /^(now|currently|still|right|moment|present|presently|last|past|previous|recent|recently|just|ago|half|minutes?|hours?|seconds?|mins?|secs?|hrs?)$/;

/** Words of file names that do not tell one video from another. */
const NAME_FILLER = new Set([
  'video',
  'clip',
  'the',
  'and',
  'with',
  'from',
  'intro',
  'final',
  'copy',
  'new',
  'test',
  'sample',
]);

/** Words that call something a video: "the bunny clip", "the chaplin film". */
const VIDEO_WORD = '(?:video|clip|file|recording|footage|movie|film|one)';

/** A file name as the reader matches it: lower case, its stem, the stem spaced, its distinctive words and their stems. */
interface NameForms {
  name: string;
  stem: string;
  spaced: string;
  words: string[];
  wordStems: string[];
}

/**
 * Name forms by file name: every question reads them for every video of its scope (thousands in a
 * large index), and lower-casing and splitting each name again was a few ms of every question.
 */
const NAME_FORMS = new Map<string, NameForms>();
const NAME_FORMS_MAX = 100_000;

function nameForms(v: Video): NameForms {
  let f = NAME_FORMS.get(v.fileName);
  if (!f) {
    const name = v.fileName.toLowerCase();
    const stem = name.replace(/\.[a-z0-9]{2,5}$/, '');
    const words = stem.split(/[^\p{L}\p{N}]+/u).filter((w) => w.length >= 3 && !/^\d+$/.test(w) && !NAME_FILLER.has(w));
    f = { name, stem, spaced: stem.replace(/[-_.]+/g, ' '), words, wordStems: words.map(rawNameStem) };
    if (NAME_FORMS.size >= NAME_FORMS_MAX) NAME_FORMS.clear();
    NAME_FORMS.set(v.fileName, f);
  }
  return f;
}

/** The distinctive words of a file name (its stem's words less the filler). */
function nameWords(v: Video): string[] {
  return nameForms(v).words;
}

/** A name word's stem, unescaped: "the skateboard video" names skateboarding-dog.mp4 and "the drum clip" drummer.mp4. */
function rawNameStem(w: string): string {
  return w.length > 5 ? w.replace(/(ing|ers?|ed|s)$/, '') : w;
}

/** A name word's stem, as a pattern. */
function nameStem(w: string): string {
  return escapeRe(rawNameStem(w));
}

/**
 * The last files read per scope (the array itself): a question reads its slots more than once over
 * the same scope (the reading, then the answer), and over thousands of videos each read is a
 * millisecond or two.
 */
const FILES_READ = new WeakMap<Video[], { q: string; length: number; files: Video[] }>();

/** The videos of the scope the question names. */
export function readFiles(q: string, videos: Video[]): Video[] {
  const had = FILES_READ.get(videos);
  if (had && had.q === q && had.length === videos.length) return [...had.files];
  const files = namedFiles(q, videos);
  FILES_READ.set(videos, { q, length: videos.length, files: [...files] });
  return files;
}

function namedFiles(q: string, videos: Video[]): Video[] {
  const out: Video[] = [];
  for (const v of videos) {
    const { name, stem, spaced } = nameForms(v);
    // Each pattern below holds the stem or its spaced form: a question holding neither names
    // another video (the check is what keeps a question over thousands of videos cheap).
    if (!q.includes(stem) && !q.includes(spaced)) continue;
    const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    // The full name, a stem with its dashes ("people-one-by-one"), or a stem called a video ("the pancake clip").
    const named =
      new RegExp(`(^|[^\\w-])${esc(name)}([^\\w-]|$)`).test(q) ||
      (/[-_]/.test(stem) && new RegExp(`(^|[^\\w-])${esc(stem)}([^\\w-]|$)`).test(q)) ||
      new RegExp(`\\b(the|in|from|of) ${esc(spaced)} (video|clip|file|one|recording|footage)\\b`).test(q) ||
      new RegExp(`\\b(video|clip|file) (called |named )?"?${esc(spaced)}\\b`).test(q);
    if (named) out.push(v);
  }
  // "The bunny video": a distinctive word of one file name (in no other name), said with a word for a video.
  if (!out.length) {
    // Only the words whose stem the question holds can count; how many names hold each of those is
    // counted after (counting every word of thousands of names cost each question a few ms).
    const asked = new Set<string>();
    for (const v of videos) {
      const f = nameForms(v);
      for (let i = 0; i < f.words.length; i++) if (q.includes(f.wordStems[i]!)) asked.add(f.words[i]!);
    }
    if (asked.size) {
      const counts = new Map<string, number>();
      for (const v of videos)
        for (const w of new Set(nameWords(v))) if (asked.has(w)) counts.set(w, (counts.get(w) ?? 0) + 1);
      for (const v of videos) {
        const own = nameWords(v).filter((w) => asked.has(w) && counts.get(w) === 1);
        if (own.some((w) => new RegExp(`\\b${nameStem(w)}\\w* ${VIDEO_WORD}\\b`).test(q))) out.push(v);
      }
    }
  }
  // Names earliest in the question first (a comparison keeps the order written).
  const at = (v: Video) => {
    const { stem, spaced } = nameForms(v);
    const i = q.indexOf(stem);
    return i < 0 ? q.indexOf(spaced) : i;
  };
  return out.sort((a, b) => at(a) - at(b));
}

const FORM_CUES: [Form, RegExp][] = [
  ['count', /\bhow many\b|\bnumber of\b|\bcount\b|\bhow much\b|\bhow often\b/],
  [
    'when',
    /\b(when|the times|what time|at (what|which) (point|moment|second|minute|stage)|timestamps?|(which|what) (moments?|seconds?|parts?|minutes?|times?)|where in the|how soon|how early|how late|during which|in which part|until when|since when)\b/,
  ],
  ['which_video', /\b(which|what) (videos?|clips?|files?|recordings?|footage)\b|\bin which (videos?|clips?)\b/],
  ['presence', /^\s*(is|are|was|were|does|do|did|can|could|has|have)\b|\b(is|are) there\b|\bany\b/],
  [
    'describe',
    /\b(summar\w+|describe|description|overview|recap|outline|synopsis|walk me through|account of|tell me about (this|the) (video|clip)|what (has )?happened|what went on|did anything happen)\b/,
  ],
  [
    'visible',
    /\b(on screen|on the screen|do (we|you|i) see|can (we|you|i) see|what'?s happening|what is happening|what happens|going on|in view|in the frame|in frame|visible|shown|showing|what (was|is|were|are|can be|could be) seen)\b/,
  ],
  ['compare', /\b(compare|comparison|versus|vs\.?|than|differ\w*|both)\b/],
  [
    'extreme',
    /\b(longest|shortest|first|last|earliest|latest|biggest|largest|most|least|fewest|highest|lowest|widest|longer|shorter)\b/,
  ],
];

export function readSlots(question: string, videos: Video[]): Slots {
  const q = question.toLowerCase().replace(/[“”]/g, '"').replace(/[’]/g, "'").replace(/\s+/g, ' ').trim();
  const files = readFiles(q, videos);
  // Named files are slots, not words of the question ("birthday-no-audio.mp4" asks nothing about audio).
  const text = stripFiles(q, files);
  const intent = readIntent(text);
  const time = readTime(text);
  // "In the last 10 minutes", "now": words of a time, not things to look for ("the last" is no position).
  if (time || readRelativeTime(text)) {
    intent.keywords = intent.keywords.filter((w) => !TIME_WORDS.test(w));
    if (intent.position === 'last' && !/\blast\b/.test(text.replace(RELATIVE_PHRASE, ' '))) intent.position = null;
  }
  const colour = colourNamed(text);
  const atOnce =
    /\b(at once|at the same time|simultaneously|at a time|at any one time|at any time|together|in a single frame|in one frame|side by side)\b/.test(
      text,
    );
  const quoted = [...q.matchAll(/"([^"]{2,80})"/g)].map((m) => m[1]!);
  const factCues = new Set<FactKind>();
  for (const f of FACTS) if (f.cue?.test(text)) factCues.add(f.kind);
  // "Does someone speak": a pronoun next to a speech word is no cue for people on screen.
  const pronounOnly =
    /\b(someone|somebody|anyone|anybody|speakers?)\b/.test(text) &&
    !/\b(person|persons|people|man|men|woman|women|human|humans|boy|girl|child|children|kids?)\b/.test(text);
  // "What does the woman say": a person who is the subject of a speech verb asks about the words, not about people.
  const speakerSubject =
    /\b(person|man|woman|guy|lady|girl|boy|child|kid|presenter|narrator|host|he|she|they)\s+(is |was |are |were )?(say|says|said|saying|speak|speaks|spoke|speaking|talk|talks|talking|mention\w*|tell|tells|told|telling|ask|asks|asked|asking)\b/.test(
      text,
    );
  const labels =
    factCues.has('speech') && (pronounOnly || speakerSubject)
      ? intent.labels.filter((l) => l !== 'person')
      : intent.labels;
  placeIsNotSubject(text, intent, labels);
  if (labels.length || intent.categoryLabels.length)
    factCues.add(labels.length === 1 && labels[0] === 'person' ? 'people' : 'objects');
  if (labels.includes('person') || /\bspeakers\b/.test(text)) factCues.add('people');
  if (time && 'point' in time && time.point) factCues.add('moment');
  const formCues = new Set<Form>();
  // "In the last 10 minutes" says a window, not the last of something.
  const timeless = text.replace(RELATIVE_PHRASE, ' ');
  for (const [f, re] of FORM_CUES) if (re.test(timeless)) formCues.add(f);
  // "Is there ever only one bottle left?", "are there two cars?": a yes/no question about a number of
  // a thing asks when that many are seen (the count's runs), not whether one is seen at all.
  const asksNumber = intent.number !== null && !(time && /\d{1,3}:\d{2}|\bseconds?\b|\bminutes?\b/.test(text));
  if (formCues.has('presence') && !formCues.has('count') && asksNumber && labels.length === 1) {
    formCues.delete('presence');
    formCues.add('when');
    intent.needs.add('when');
  }
  // Two named videos, or "which video has the most …": a comparison of videos.
  if (files.length >= 2 || (formCues.has('which_video') && formCues.has('extreme'))) formCues.add('compare');
  // Times written in the question narrow it; numbers that are times are not counts.
  if (time)
    intent.number =
      /\d{1,3}:\d{2}/.test(text) || /\b(seconds?|minutes?|secs?)\b/.test(text)
        ? numberOutsideTimes(text)
        : intent.number;
  return { intent, time, files, colour, atOnce, quoted, factCues, formCues, text, asked: readAsked(text) };
}

/** Words that end a noun phrase or are none: auxiliaries, pronouns, prepositions, conjunctions, question words. */
const NOT_NOUN =
  /^(is|are|was|were|be|been|being|am|do|does|did|has|have|had|can|could|will|would|should|shall|may|might|must|not|and|or|but|of|on|at|in|by|to|for|from|with|into|onto|over|under|near|behind|beside|above|below|around|across|inside|next|front|about|after|before|during|than|then|that|which|who|what|when|where|why|how|there|here|it|he|she|they|we|you|i|this|these|those|ever|still|just|now|very|so|up|down|out|off|away|again|like)$/;
/** Words before a noun that are not its head: ordinals and the like ("the first woman"). */
const NOT_HEAD = /^(first|second|third|last|next|other|same|whole|very|little|big|small|only)$/;
/**
 * A place or a time around the thing asked ("on the desk", "after the cut", "in the video"): its
 * thing is context, not what is asked.
 */
const CONTEXT_PHRASE =
  /\b(?:at|on|in|inside|by|near|beside|behind|under|over|above|below|around|across|next to|in front of|after|before|during|until|since|throughout|about|with)\s+(?:the|a|an|this|that|these|those|his|her|their|its|my|your|our)\s+(?:[\p{L}'-]+\s+){0,2}?[\p{L}'-]+/gu;
const DETERMINED = /\b(the|a|an|this|that|these|those|his|her|their|its|my|your|our|some)\s+((?:[\p{L}'-]+\s*){1,3})/gu;
/**
 * An auxiliary or a question word right before the subject ("what does the sign say", "what the
 * picture contains"): the last word of the run after the subject is its verb.
 */
const VERB_FOLLOWS = /\b(?:does|do|did|can|could|will|would|should|what|which|who|whom)\s+$/;
/** "What kind of", "which piece of": the kind comes after them. */
const WHAT_KIND =
  /\b(?:what|which)\s+(?:(?:kinds?|sorts?|types?|pieces?|pairs?)\s+of\s+)?([\p{L}-]+)(?:\s+([\p{L}'-]+))?/u;
/** A verb form: "-ing", or a past participle ("made", "covered"; not "breed", "bed"). */
const verbForm = (w: string) => /ing$/.test(w) || (w.length > 4 && /ed$/.test(w) && !/eed$/.test(w)) || w === 'made';

/** Reads what a question asks about: the kind after "what/which", the things it names, an activity. */
export function readAsked(text: string): Asked {
  const q = text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}'\s-]/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  let kind: string | null = null;
  const k = WHAT_KIND.exec(q);
  if (k) {
    const [w, next = ''] = [k[1]!, k[2]];
    // "What happened", "what appears on…", "what the picture contains": a verb or a function word
    // follows "what", not a kind of thing.
    const verb =
      /^(happen\w*|chang\w*|went|go|goes|going|came|comes|left|remains?|appears?|shows?|seems?|looks?)$/.test(w) ||
      verbForm(w);
    const functionNext =
      /^(the|a|an|this|that|these|those|his|her|its|their|my|your|our|in|on|at|to|from|with|into|around|about|near|during)$/.test(
        next,
      );
    if (!NOT_NOUN.test(w) && !/^(the|a|an|his|her|its|their|my|your|our)$/.test(w) && !verb && !functionNext) kind = w;
  }
  const things: string[] = [];
  const rest = q.replace(CONTEXT_PHRASE, ' , ');
  for (const m of rest.matchAll(DETERMINED)) {
    const words: string[] = [];
    for (const w of m[2]!.trim().split(' ')) {
      if (NOT_NOUN.test(w.replace(/'s$/, '')) || verbForm(w) || /^(the|a|an|some)$/.test(w)) break;
      words.push(w);
    }
    if (words.length > 1 && VERB_FOLLOWS.test(rest.slice(0, m.index))) words.pop();
    // A word of the phrase the vocabulary knows ("a bottle anywhere", "my videos contains"): what
    // follows a noun cannot be told from a verb or an adverb without a tagger, so a known word
    // stands for the phrase (a compound like "the car door" reads as the car: labels then answer,
    // as they did before). Else its last word, not an owner ("the woman's top") nor an ordinal.
    const known = words.map((w) => w.replace(/'s$/, '')).find(knownThing);
    const head = known ?? words.filter((w) => !/'s$/.test(w) && !NOT_HEAD.test(w)).at(-1);
    if (head) things.push(head);
  }
  // "What is the baby doing", "what are they eating": an activity, whatever the subject.
  const act = /\bwhat (?:is|are|was|were|does|do|did) ((?:[\p{L}'-]+ ?){1,5})/u.exec(q);
  const activity =
    (act && !/\b(say|said|saying|speak|talk)/.test(q) && act[1]!.split(' ').find((w) => ACTIVITY_VERBS.has(w))) || null;
  return { kind, things, activity };
}

/**
 * The thing a question asks about that no label names ("what instrument", "the drum kit's colour",
 * an activity), or null when labels can answer it: its kind of thing is a label, a category or a
 * kind of answer the facts give; or, with no such kind, a thing it names is one the labels know.
 */
export function unlabelledAsked(a: Asked): string | null {
  if (a.activity) return a.activity;
  const labelled = (w: string) =>
    labelsNamed(` ${w} `).some((l) => l !== 'person') || w in CATEGORIES || w.replace(/s$/, '') in CATEGORIES;
  if (a.kind && !knownThing(a.kind)) {
    // "At what stage does the dog appear": a label named after it is what is asked about.
    return a.things.some(labelled) ? null : a.kind;
  }
  if (a.kind && !ATTRIBUTE_WORDS.has(a.kind)) return null;
  // "What colour is the mug", "what is the man holding", "what does the sign say": the things it names.
  return a.things.length && !a.things.some(knownThing) ? a.things[0]! : null;
}

/** A place: "at the table", "on the desk", "in front of the TV". */
const PLACE =
  /\b(?:at|on|by|near|beside|behind|under|around|next to|in front of)\s+(?:the|a|an|his|her|their|this|that)\s+((?:\w+\s+){0,2}?\w+)\b/g;

/**
 * Labels named only as a place ("who stays at the table", "is there a laptop on the desk") are
 * where, not what: when the question has another subject (another label, or "who" for a person),
 * the place's labels are dropped, so an undetected table does not make the answer "not found".
 * Changes `labels` and `intent.labels` in place.
 */
function placeIsNotSubject(text: string, intent: Intent, labels: string[]): void {
  if (text.search(PLACE) < 0) return;
  const rest = labelsNamed(` ${text.replace(PLACE, ' ')} `);
  const who = /^\s*who\b/.test(text);
  if (!rest.length && !who) return;
  const keep = [...new Set([...rest, ...(who ? ['person'] : [])])];
  for (const list of new Set([labels, intent.labels])) list.splice(0, list.length, ...keep);
}

/**
 * The question with the file names it gives replaced by "the video", and the words of a name said
 * with a word for a video dropped ("the bunny video" → "the video"): words that pick the video are
 * scope, not what is asked ("is there an animal in the bunny video" asks nothing about bunnies).
 */
function stripFiles(q: string, files: Video[]): string {
  let out = q;
  for (const v of files) {
    const name = v.fileName.toLowerCase();
    const stem = name.replace(/\.[a-z0-9]{2,5}$/, '');
    out = out.split(name).join('the video');
    if (/[-_]/.test(stem)) out = out.split(stem).join('the video');
    for (const w of nameWords(v)) out = out.replace(new RegExp(`\\b${nameStem(w)}\\w* (?=${VIDEO_WORD}\\b)`, 'g'), '');
  }
  return out;
}

/**
 * A video the question names that the scope does not hold: a file name with an extension, or a
 * name written the way files are named (dashes or underscores) and called a video ("the
 * cooking-show video"). Null when every name it gives is there (or it gives none).
 */
export function unknownFile(prompt: string, videos: Video[]): string | null {
  const q = prompt.toLowerCase();
  const names = [
    ...[
      ...q.matchAll(
        /(?:^|[\s"'(])([\p{L}\p{N}][\p{L}\p{N}_.-]*\.(?:mp4|mkv|webm|mov|avi|m4v|wav|mp3|ogg|flv|wmv|mpg|mpeg|ts))\b/giu,
      ),
    ].map((m) => m[1]!),
    ...[
      ...q.matchAll(new RegExp(`(?:^|[\\s"'(])([\\p{L}\\p{N}]+(?:[-_][\\p{L}\\p{N}]+)+)"? ${VIDEO_WORD}\\b`, 'gu')),
    ].map((m) => m[1]!),
  ];
  if (!names.length || !videos.length) return null;
  const stemOf = (n: string) => n.replace(/\.[a-z0-9]{2,5}$/, '');
  const have = new Set(videos.map((v) => v.fileName.toLowerCase()));
  const stems = new Set(videos.map((v) => stemOf(v.fileName.toLowerCase())));
  // "black-and-white film" describes a video; it does not name one.
  const unknown = names.filter((n) => !have.has(n) && !stems.has(stemOf(n)) && !/-and-/.test(n));
  return unknown.length === names.length ? [...new Set(unknown)].join(' and ') : null;
}

function numberOutsideTimes(q: string): number | null {
  const rest = q
    .replace(/\d{1,3}:\d{2}(:\d{2})?(\.\d+)?/g, ' ')
    .replace(/\d+(\.\d+)?\s*(s|secs?|seconds?|minutes?|mins?)\b/g, ' ');
  const m = /\b(\d{1,3})\b/.exec(rest);
  if (m) return Number(m[1]);
  for (const [w, n] of Object.entries(NUMBER_WORDS)) {
    if (n > 0 && w !== 'single' && w !== 'both' && new RegExp(`\\b${w}\\b`).test(rest)) return n;
  }
  return null;
}

/** The example questions of every cell, embedded once per embedder. */
class ExampleBank {
  private vectors: Promise<{ cell: number; v: Float32Array }[]> | null = null;
  constructor(private readonly embedder: Embedder) {}

  get(): Promise<{ cell: number; v: Float32Array }[]> {
    this.vectors ??= (async () => {
      const texts: string[] = [];
      const cells: number[] = [];
      CELLS.forEach((c, i) => {
        for (const e of c.examples) {
          texts.push(e);
          cells.push(i);
        }
      });
      const vs = await this.embedder.embed(texts);
      return vs.map((v, i) => ({ cell: cells[i]!, v }));
    })().catch((e) => {
      this.vectors = null;
      throw e;
    });
    return this.vectors;
  }
}

const banks = new WeakMap<Embedder, ExampleBank>();

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

/**
 * Reads a question: its slots by rules, its kind by meaning plus cues. Without an embedder (or
 * when it fails) the cues alone decide.
 */
export async function readQuestion(
  question: string,
  videos: Video[],
  embedder: Embedder | null,
  indexCues: FactKind[] = [],
): Promise<ReadQuestion> {
  const slots = readSlots(question, videos);
  for (const k of indexCues) slots.factCues.add(k);
  const meaning = new Float64Array(CELLS.length);
  let vector: Float32Array | null = null;
  if (embedder && question.trim()) {
    try {
      let bank = banks.get(embedder);
      if (!bank) banks.set(embedder, (bank = new ExampleBank(embedder)));
      const [[q], examples] = await Promise.all([
        embedder.embed([slots.files.length ? slots.text : question]),
        bank.get(),
      ]);
      vector = q!;
      // Each cell: the mean of its two closest examples (one odd example does not carry a cell).
      const best = CELLS.map(() => [0, 0]);
      for (const e of examples) {
        const c = dot(q!, e.v);
        const b = best[e.cell]!;
        if (c > b[0]!) {
          b[1] = b[0]!;
          b[0] = c;
        } else if (c > b[1]!) b[1] = c;
      }
      best.forEach((b, i) => (meaning[i] = (b[0]! + b[1]!) / 2));
    } catch {
      vector = null; // no embedding model here: the cues decide
    }
  }
  const readings: Reading[] = CELLS.map((cell, i) => {
    let score = meaning[i]!;
    if (slots.factCues.has(cell.fact)) score += CUE * cell.cueWeight;
    if (slots.formCues.has(cell.form)) score += CUE;
    // A cell that needs a slot the question lacks (a label to count, two videos to compare) does not fit.
    if (cell.needs?.some((n) => !hasSlot(slots, n, cell))) score -= 2 * CUE;
    // Without the meaning, a form the words do not ask for (how many, when, is there...) does not fit either.
    if (!vector && cell.form !== 'what' && !slots.formCues.has(cell.form)) score -= CUE;
    // A yes/no question about a thing it names ("is there a laptop on the desk") is not an open
    // "what" question, whatever its other words resemble.
    if (
      cell.form === 'what' &&
      slots.formCues.has('presence') &&
      slots.intent.labels.length &&
      !/\b(what|which)\b/.test(slots.text)
    )
      score -= 2 * CUE;
    return { cell, score };
  }).sort((a, b) => b.score - a.score);
  const top = readings[0]!.score;
  return { slots, readings: readings.filter((r, i) => i === 0 || r.score >= top - MARGIN).slice(0, 3), vector };
}

function hasSlot(s: Slots, n: SlotNeed, cell: Cell): boolean {
  switch (n) {
    case 'label':
      // A category alone ("is there any animal") is answered by listing its labels (the "what" form).
      return s.intent.labels.length > 0 || (s.intent.categoryLabels.length > 0 && cell.form === 'what');
    case 'two_videos':
      return s.files.length >= 2;
    case 'time':
      return s.time !== null;
    case 'cue':
      return s.factCues.has(cell.fact);
    case 'form_cue':
      return s.formCues.has(cell.form);
  }
}
