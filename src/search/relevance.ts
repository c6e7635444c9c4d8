/**
 * Relevance: one number in [0, 1] per retrieved segment that means the same for every kind, so that a
 * caption, a transcript line, on-screen text and a detector label can compete for one question.
 *
 *   ≥ 0.5  clearly bears on the text: a content word of the query (the rarer words weigh more)
 *          is in it, or its meaning is close (embedding cosine ≥ SEM_STRONG);
 *   < 0.2  noise: no word matched and the meaning is near what any sentence scores.
 *
 * It combines two signals as independent evidence, 1 − (1 − keyword)(1 − meaning):
 * - keyword: the share of the query's words found in the segment, each word weighted by its
 *   inverse document frequency (a word found in every segment says little), mapped to
 *   KW_BASE … KW_BASE + KW_SPAN. Words the index never holds do not count against a match.
 * - meaning: the cosine of the two sentence embeddings, mapped linearly from SEM_FLOOR (0) to
 *   SEM_FLOOR + 2 · (SEM_STRONG − SEM_FLOOR) (SEM_MAX): a likeness of meaning alone is never certain,
 *   so that the words of the query still decide between two close sentences ("red car": the red one).
 * No constant depends on a question's wording or a clip: they are properties of the measures.
 */

/** Keyword relevance of a segment holding a share f of the query's word weight: KW_BASE + KW_SPAN · f. */
const KW_BASE = 0.3;
const KW_SPAN = 0.65;
/**
 * Cosines of the built-in sentence encoder (USE-lite): under ~0.25 a sentence relates to almost
 * anything; from ~0.45 it is about the same thing. (An embedding server's model with a different
 * spread shifts these; see docs/answering.md.)
 */
export const SEM_FLOOR = 0.25;
export const SEM_STRONG = 0.45;

/** Relevance at or above which a match clearly bears on the query. */
export const STRONG = 0.5;
/** Relevance under which a match is noise. */
export const NOISE = 0.2;

/** The most that meaning alone gives. */
const SEM_MAX = 0.9;

export function semanticRelevance(cosine: number | null): number {
  if (cosine === null) return 0;
  return SEM_MAX * clamp01((cosine - SEM_FLOOR) / (2 * (SEM_STRONG - SEM_FLOOR)));
}

/** `share`: the matched part of the query's word weight, 0…1 (0 when no word matched). */
export function keywordRelevance(share: number): number {
  return share > 0 ? KW_BASE + KW_SPAN * clamp01(share) : 0;
}

export function combine(keyword: number, semantic: number): number {
  return 1 - (1 - keyword) * (1 - semantic);
}

/** Weight of a word found in `df` of `n` segments (inverse document frequency, at least a little). */
export function wordWeight(df: number, n: number): number {
  return Math.log(1 + (n + 1) / (df + 1));
}

/** A crude stem for matching a query word against a segment's words (FTS5 stems with Porter). */
export function stem(word: string): string {
  let w = word.toLowerCase().normalize('NFKD').replace(/\p{M}/gu, '').replace(/'s$/, '');
  for (const suffix of ['ing', 'ies', 'es', 'ed', 's']) {
    if (w.length - suffix.length >= 3 && w.endsWith(suffix)) {
      w = w.slice(0, -suffix.length) + (suffix === 'ies' ? 'y' : '');
      break;
    }
  }
  return w;
}

/** The stems of a text's words. */
export function stems(text: string): Set<string> {
  return new Set(
    text
      .toLowerCase()
      .split(/[^\p{L}\p{N}']+/u)
      .filter(Boolean)
      .map(stem),
  );
}

const clamp01 = (x: number) => Math.min(1, Math.max(0, x));
