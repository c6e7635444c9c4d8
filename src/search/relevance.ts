/**
 * Relevance: one number in [0, 1] per retrieved segment that means the same for every kind, so that a
 * caption, a transcript line, on-screen text and a detector label can compete for one question.
 *
 *   ≥ 0.5  clearly bears on the text: it holds a fair share of the query's content words (the
 *          rarer words weigh more);
 *   ≤ 0.4  no word of the query matched: at most a likeness of meaning (MEANING_ONLY_MAX);
 *   < 0.2  noise: no word matched and the meaning is near what any sentence scores.
 *
 * It is coverage first (coverageRelevance): the share of the query's words found in the segment,
 * each word weighted by its inverse document frequency (a word found in every segment says
 * little; a word the index never holds weighs most, and counts against every segment). The
 * meaning (the cosine of the two sentence embeddings, mapped linearly from SEM_FLOOR (0) to
 * SEM_FLOOR + 2 · (SEM_STRONG − SEM_FLOOR)) tips it; meaning alone stays under every word match,
 * so that the words of the query decide ("red car": the red car, then a red thing, then a car-like
 * picture).
 * No constant depends on a question's wording or a clip: they are properties of the measures.
 */

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

/** Relevance of meaning alone (no query word matched) is at most this: below any match on some word, and below STRONG. */
export const MEANING_ONLY_MAX = 0.4;

/**
 * Relevance as coverage (issue 34, class 9): `share` is the part of the query's word weight the
 * moment holds (words the index never holds count too), `semantic` the meaning's relevance. A
 * moment that holds none of the query's words ranks below every one that holds some (at most
 * MEANING_ONLY_MAX); above that, the share covered decides and the meaning tips it, so 0.96 means
 * nearly every word matched and the meaning is close.
 */
export function coverageRelevance(share: number, semantic: number): number {
  const m = clamp01(semantic / SEM_MAX);
  if (share <= 0) return MEANING_ONLY_MAX * m;
  return MEANING_ONLY_MAX + (1 - MEANING_ONLY_MAX) * (0.85 * clamp01(share) + 0.15 * m);
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
