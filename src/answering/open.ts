/**
 * Open questions answered from free text: the sentences the index holds (captions of shots,
 * transcripts and subtitles, on-screen text) that best match the question's content words, quoted
 * with their times. "What is she wearing", "what covers the table", "who does the speaker address"
 * have no fact plug-in; a caption or a transcript line that names the asked thing answers them, and
 * beats "not found".
 *
 * Candidates come from the retrieval core (hybrid keyword + embedding ranking) and, for captions
 * and transcripts, from every such sentence of the scope (there are few: one per shot or line);
 * each is scored by the core's relevance (one scale across kinds), tipped by the share of the
 * question's concept words it holds (e.g. clothing for "wearing") and the kind the wording asks for.
 */
import type { Segment, SegmentKind } from '../storage/rows';
import { STRONG } from '../search/relevance';
import type { RetrievalCore, ScopeWindow } from '../search/retrieval';
import type { Slots } from './facts/plugin';
import type { Intent } from './intent';
import { noisyText } from './noise';
import {
  CLOTHING_WORDS,
  colourNamed,
  isPersonWord,
  labelsNamed,
  NAMES_NO_THING,
  namesLabel,
  NUMBER_WORDS,
  PERSON_WORDS,
} from './vocabulary';

/** The kinds that hold sentences. */
export const FREE_TEXT: SegmentKind[] = ['caption', 'transcript', 'ocr'];

export interface Sentence {
  segment: Segment;
  /** The core's relevance (0–1), plus a little for the share of concept words and the kind asked for. */
  score: number;
  /** The content words it contains. */
  matched: string[];
}

/** Words a concept is said with: a question that uses the key matches a sentence with any of these. */
const CONCEPTS: Record<string, string[]> = {
  wear: ['wear', 'dress', 'cloth', 'outfit', ...CLOTHING_WORDS, 'in a', 'in an'],
  cover: ['cover', 'cloth', 'on top', 'draped', 'spread'],
  address: ['you', 'your', 'fellow', 'ladies', 'gentlemen', 'everyone', 'friends', 'dear'],
  hold: ['hold', 'carry', 'grip', 'in his hand', 'in her hand', 'with a'],
  carry: ['carry', 'hold', 'grip', 'in his hand', 'in her hand', 'with a'],
  dress: ['wear', 'dress', 'cloth', 'outfit', ...CLOTHING_WORDS, 'in a', 'in an'],
  cook: ['cook', 'fry', 'flip', 'bake', 'pan', 'stir', 'pancake', 'kitchen'],
  play: ['play', 'drum', 'guitar', 'piano', 'game'],
};

/** A crude stem: enough to match "covers"/"covered"/"covering" and "wearing"/"wears". */
export function stem(w: string): string {
  const x = w.toLowerCase();
  if (x.length <= 4) return x.replace(/s$/, '');
  return x.replace(/(ing|ed|es|s|er)$/, '').replace(/(.)\1$/, '$1');
}

/** The question's content words (its keywords less the words that name no thing). */
export function contentWords(intent: Intent): string[] {
  return intent.keywords.filter((w) => w.length > 1 && !NAMES_NO_THING.has(w) && !/^\d+([.:]\d+)?$/.test(w));
}

/** Whether a sentence holds a word: itself (stemmed), a word of its concept, a person word for a person word, or a synonym of the label it names. */
export function contains(text: string, word: string): boolean {
  const t = depicted(text).toLowerCase();
  // "a puppy" names the dog a question asks about: the vocabulary's synonyms of a label.
  const labels = labelsNamed(` ${word.toLowerCase()} `).filter((l) => l !== 'person');
  if (labels.some((l) => namesLabel(t, l))) return true;
  const s = stem(word);
  const concept =
    CONCEPTS[word.toLowerCase()] ?? CONCEPTS[s] ?? CONCEPTS[word.toLowerCase().replace(/(ing|ed|s)$/, '')];
  if (concept?.some((c) => new RegExp(`\\b${c}`).test(t))) return true;
  // A person word stands for every person word: "the woman" is named by a caption about "a lady".
  if (PERSON_WORDS.includes(word) && PERSON_WORDS.some((p) => new RegExp(`\\b${p}\\b`).test(t))) return true;
  return new RegExp(`\\b${s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`).test(t);
}

/**
 * What a sentence shows, less the text it quotes from the screen: "a title card reading Kitchen
 * Tour" shows a title card, not a kitchen (issue 34, class 3: the caption of a title card is not
 * the moment of the thing its words name).
 */
export function depicted(text: string): string {
  return text.replace(SHOWN_TEXT, '$1');
}
const SHOWN_TEXT =
  /(\b(?:title card|title|titles|text|caption|subtitle|sign|banner|poster|letters|lettering|words|logo|screen|card|label)\b[^.;]*?\b(?:reading|reads|saying|says|that says|spelling|spells|with the words?))\s+[^.;]*/gi;

/** Kind preference by what the question asks: said → transcripts, written → on-screen text, else captions. */
function kindBonus(kind: SegmentKind, intent: Intent): number {
  if (intent.needs.has('said')) return kind === 'transcript' ? 0.15 : 0;
  if (intent.needs.has('written')) return kind === 'ocr' ? 0.15 : 0;
  return kind === 'caption' ? 0.1 : kind === 'transcript' ? 0.05 : 0;
}

/**
 * The best free-text sentences for the question, best first. The main score is the retrieval
 * core's relevance (src/search/relevance.ts: one 0–1 scale for every kind, from the words and the
 * meaning), so a caption, a transcript line and on-screen text compete with each other and with
 * the fact answer's evidence on one scale. Every caption and transcript line of the scope
 * is scored too when the scope holds few videos, not only the retrieved ones. A small share of the question's
 * concept words ("wearing" → clothing) and the kind the wording asks for (said → transcript)
 * tip near-equal sentences.
 *
 * A sentence is kept when it names a thing asked about that is not only a word for a person (so
 * "the woman" alone does not match every caption about a woman) and either bears clearly on the
 * question (relevance ≥ STRONG) or holds at least half of its content words; a question with no
 * content word keeps the sentences that bear clearly on it.
 */
/** Scopes of at most this many videos have every caption and transcript line scored. */
const FEW_VIDEOS = 20;

export async function bestSentences(
  retrieval: RetrievalCore,
  scope: ScopeWindow,
  question: string,
  intent: Intent,
  limit = 3,
  /** The question's embedding when the caller has it (embedding it again costs as much as a search). */
  vector: Float32Array | null = null,
): Promise<Sentence[]> {
  const words = contentWords(intent);
  const ranked = await retrieval.finder.ranked({ ...scope, kinds: FREE_TEXT }, question, intent, 30, vector);
  const relevance = new Map<number, number>();
  const pool = new Map<number, Segment>();
  for (const r of ranked) {
    if (!FREE_TEXT.includes(r.segment.kind)) continue;
    pool.set(r.segment.id, r.segment);
    relevance.set(r.segment.id, r.relevance);
  }
  // A few videos' lines are all scored; over a whole large index only the core's hits are, so that
  // the cost of a question does not grow with the index (1,000 h: 5.9 s p95 with every line scored).
  const rest =
    scope.videos.length > FEW_VIDEOS
      ? []
      : (await retrieval.finder.byKind(scope, ['caption', 'transcript'], { limit: 2000 })).filter(
          (s) => !pool.has(s.id),
        );
  for (const r of await retrieval.finder.relevanceOf(scope, question, intent, rest, vector))
    relevance.set(r.segment.id, r.relevance);
  for (const s of rest) pool.set(s.id, s);
  for (const id of await noisyText(retrieval.finder, scope, [...pool.values()])) pool.delete(id);
  const out: Sentence[] = [];
  for (const s of pool.values()) {
    const matched = words.filter((w) => contains(s.text, w));
    const things = matched.filter((w) => !PERSON_WORDS.includes(w));
    const share = words.length ? matched.length / words.length : 0;
    const rel = relevance.get(s.id) ?? 0;
    if (words.length ? !(things.length && (share >= 0.5 || rel >= STRONG)) : rel < STRONG) continue;
    out.push({ segment: s, score: rel + 0.3 * share + kindBonus(s.kind, intent), matched });
  }
  return out.sort((a, b) => b.score - a.score || a.segment.start - b.segment.start).slice(0, limit);
}

/**
 * Words that ask nothing of the sentence: how the question is put ("look like", "mention"), who
 * might be doing it ("anybody"), a place's preposition. What is left is the asked content.
 */
const NOT_ASKED = new Set(
  'look looks looked like second third fourth fifth next other another anybody anyone somebody someone everyone people person near mention mentions mentioned mentioning talk talks talking speak speaks speaking speaker speakers say says said saying way manner happen happening'.split(
    ' ',
  ),
);

/**
 * What a sentence of free text must hold to answer the question (issue 34, class 2): the things it
 * names (its head nouns, `Slots.asked.things`) less words for people and the words that name the
 * kind of fact itself (`cue`: "speaker", "caption"), every one of them; with no such thing, its
 * content words less those, at least half of them. Empty: the question asks for no particular
 * content ("what is said?").
 */
export interface AskedContent {
  words: string[];
  /** Every word must be held (the things asked about), or half of them (content words). */
  all: boolean;
  /**
   * The kind of answer asked for whose instance the sentence must show as well ("what brand": a
   * proper name; "what colour": a colour word; "which material": a material), when the question
   * asks for such a kind: a caption of the mug that names no brand does not say its brand.
   */
  kind: { word: string; shown: (text: string) => boolean } | null;
}

export function askedContent(slots: Slots, cue?: RegExp): AskedContent {
  const keep = (w: string) =>
    w.length > 2 && !isPersonWord(w) && !NOT_ASKED.has(w) && !NAMES_NO_THING.has(w) && !cue?.test(` ${w} `);
  const k = slots.asked.kind;
  const shown = k && Object.hasOwn(KIND_SHOWN, k) ? KIND_SHOWN[k] : undefined;
  const kind = k && shown ? { word: k, shown } : null;
  const things = slots.asked.things.filter(keep);
  if (things.length) return { words: [...new Set(things)], all: true, kind };
  // Without a named thing, the content words; a place the question gives ("in the garden") only
  // locates what it asks about, so a sentence that holds the place alone does not answer it.
  const words = contentWords(slots.intent).filter(keep);
  const places = placeWords(slots.text);
  const core = words.filter((w) => !places.has(w));
  // "What pattern is on the floor": the kind asked for is of the thing in the place; it is no
  // other thing that the place only locates.
  const located = core.some((w) => w !== k);
  return { words: located ? core : words, all: false, kind };
}

/** Whether a sentence holds the asked content (synonyms and concept words count), and an instance of the asked kind. */
export function holdsAsked(text: string, asked: AskedContent): boolean {
  if (!holdsWords(text, asked)) return false;
  if (!asked.kind) return true;
  if (!asked.all) return asked.kind.shown(text);
  // The instance must be said of the thing asked about: near one of its words ("a red Nike running
  // shoe … beside a leather boot" names the shoe's brand, not the boot's).
  const tokens = depicted(text).split(/\s+/);
  return tokens.some(
    (w, i) =>
      asked.words.some((x) => contains(w, x)) &&
      asked.kind!.shown(tokens.slice(Math.max(0, i - KIND_NEAR), i + KIND_NEAR + 1).join(' ')),
  );
}

/** Words either side of the asked thing within which the asked kind's instance must be said. */
const KIND_NEAR = 3;

/** Whether a sentence holds the asked words (synonyms and concept words count), whatever the kind asked for. */
export function holdsWords(text: string, asked: AskedContent): boolean {
  const held = asked.words.filter((w) => contains(text, w)).length;
  return asked.all ? held === asked.words.length : held > 0 && held >= asked.words.length / 2;
}

/** The nouns of the places a question names ("in the garden", "on the kitchen table"). */
function placeWords(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of text.matchAll(PLACE_PHRASE)) for (const w of m[1]!.split(/\s+/)) out.add(w);
  return out;
}
const PLACE_PHRASE =
  /\b(?:in|inside|on|at|near|beside|behind|under|by|next to|in front of|across|along)\s+(?:the|a|an|this|that|his|her|their|its|my|your|our)\s+((?:[\p{L}'-]+\s+)?[\p{L}'-]+)/gu;

/** A proper name in a sentence: a capitalised word that does not start a sentence, an all-caps word, or a quote. */
function namesProperName(text: string): boolean {
  if (/"[^"]{2,}"|“[^”]{2,}”/.test(text)) return true;
  const tokens = text.trim().split(/\s+/);
  return tokens.some(
    (w, i) =>
      i > 0 &&
      !/[.!?:]$/.test(tokens[i - 1]!) &&
      /^\p{Lu}[\p{L}\p{N}&'-]+/u.test(w) &&
      !/^(I|I'm|I'll|I've)$/.test(w.replace(/[^\p{L}']/gu, '')),
  );
}

const MATERIAL =
  /\b(wood|wooden|metal|metallic|steel|iron|alumini?um|plastic|glass|leather|cotton|wool|woollen|stone|brick|concrete|marble|paper|cardboard|ceramic|porcelain|fabric|rubber|denim|silk|tiled?|bamboo|wicker|gold|silver|copper|brass|velvet|linen)\b/i;

/** What a sentence must show for a kind of answer: a kind missing here is not checked (any sentence may say it). */
const KIND_SHOWN: Record<string, (text: string) => boolean> = {
  brand: namesProperName,
  brands: namesProperName,
  make: namesProperName,
  maker: namesProperName,
  manufacturer: namesProperName,
  company: namesProperName,
  logo: namesProperName,
  colour: (t) => colourNamed(t) !== null,
  colours: (t) => colourNamed(t) !== null,
  color: (t) => colourNamed(t) !== null,
  colors: (t) => colourNamed(t) !== null,
  material: (t) => MATERIAL.test(t),
  number: (t) => /\d/.test(t) || Object.keys(NUMBER_WORDS).some((w) => new RegExp(`\\b${w}\\b`, 'i').test(t)),
};
