/**
 * Open questions answered from free text: the sentences the index holds (captions of shots,
 * transcripts and subtitles, on-screen text) that best match the question's content words, quoted
 * with their times. "What is she wearing", "what covers the table", "who does the speaker address"
 * have no fact plug-in; a caption or a transcript line that names the asked thing answers them, and
 * beats "not found".
 *
 * Candidates come from the retrieval core (hybrid keyword + embedding ranking) and, for captions
 * and transcripts, from every such sentence of the scope (there are few: one per shot or line);
 * each is scored by the share of the question's content words it contains (word stems, and the
 * words a concept is said with, e.g. clothing for "wearing"), plus its similarity to the question.
 */
import type { Segment, SegmentKind } from '../storage/schema';
import type { RetrievalCore, ScopeWindow } from '../search/retrieval';
import type { Intent } from './intent';
import { CLOTHING_WORDS, NAMES_NO_THING, PERSON_WORDS } from './vocabulary';

/** The kinds that hold sentences. */
export const FREE_TEXT: SegmentKind[] = ['caption', 'transcript', 'ocr'];

export interface Sentence {
  segment: Segment;
  /** Share of the question's content words it contains, plus a bonus for kind and meaning; 0–2. */
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

function contains(text: string, word: string): boolean {
  const t = text.toLowerCase();
  const s = stem(word);
  const concept = CONCEPTS[word.toLowerCase()] ?? CONCEPTS[s];
  if (concept?.some((c) => new RegExp(`\\b${c}`).test(t))) return true;
  // A person word stands for every person word: "the woman" is named by a caption about "a lady".
  if (PERSON_WORDS.includes(word) && PERSON_WORDS.some((p) => new RegExp(`\\b${p}\\b`).test(t))) return true;
  return new RegExp(`\\b${s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`).test(t);
}

/** Kind preference by what the question asks: said → transcripts, written → on-screen text, else captions. */
function kindBonus(kind: SegmentKind, intent: Intent): number {
  if (intent.needs.has('said')) return kind === 'transcript' ? 0.3 : 0;
  if (intent.needs.has('written')) return kind === 'ocr' ? 0.3 : 0;
  return kind === 'caption' ? 0.2 : kind === 'transcript' ? 0.1 : 0;
}

/**
 * The best free-text sentences for the question, best first. A sentence is kept when it holds at
 * least half of the content words and one that is not a word for a person (so "the woman" alone
 * does not match every caption about a woman), or when the question has no content word and the
 * sentence is close in meaning.
 */
export async function bestSentences(
  retrieval: RetrievalCore,
  scope: ScopeWindow,
  question: string,
  intent: Intent,
  limit = 3,
): Promise<Sentence[]> {
  const words = contentWords(intent);
  const ranked = await retrieval.retrieve(scope, question, intent, 30);
  const cosine = new Map<number, number>();
  const pool = new Map<number, Segment>();
  for (const r of ranked) {
    if (!FREE_TEXT.includes(r.segment.kind)) continue;
    pool.set(r.segment.id, r.segment);
    // The core's relevance (comparable across kinds) where it is higher than the raw cosine.
    cosine.set(r.segment.id, Math.max(r.cosine ?? 0, r.relevance ?? 0));
  }
  for (const s of retrieval.finder.byKind(scope, ['caption', 'transcript'], { limit: 2000 })) pool.set(s.id, s);
  const out: Sentence[] = [];
  for (const s of pool.values()) {
    const matched = words.filter((w) => contains(s.text, w));
    const things = matched.filter((w) => !PERSON_WORDS.includes(w));
    const share = words.length ? matched.length / words.length : 0;
    const close = (cosine.get(s.id) ?? 0) >= 0.5;
    if (words.length ? !(things.length && share >= 0.5) : !close) continue;
    out.push({ segment: s, score: share + kindBonus(s.kind, intent) + 0.5 * (cosine.get(s.id) ?? 0), matched });
  }
  return out.sort((a, b) => b.score - a.score || a.segment.start - b.segment.start).slice(0, limit);
}
