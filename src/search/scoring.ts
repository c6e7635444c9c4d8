/**
 * Scoring of candidate segments: relevance as the share of the query's words a segment covers
 * (weighted by how rare each word is) combined with its meaning's closeness, then tipped by the
 * kinds the question needs. Pure: the finder supplies the word weights and the index size.
 */
import type { Intent } from '../answering/intent';
import type { Segment, SegmentKind } from '../storage/rows';
import { coverageRelevance, semanticRelevance, stem, stems, wordWeight } from './relevance';

/** A ranked segment: its score for this question, its relevance, and the raw signals behind them. */
export interface Ranked {
  segment: Segment;
  /**
   * relevance × (1 + 0.1 · ln(the weight of its kind for what the question asks)): the order within
   * one answer. The kind tips the balance between near-equal matches (×0.88 to ×1.11), never a clearer one.
   */
  score: number;
  /**
   * How clearly it bears on the text, in [0, 1], the same scale for every kind: ≥ 0.5 clearly (a
   * content word of the query matched, or a close meaning), < 0.2 noise. See relevance.ts.
   */
  relevance: number;
  /** It contains a word of the question. */
  keyword: boolean;
  /** Cosine similarity to the question (null: no vector for it, or no embedder). */
  cosine: number | null;
}

/** Kind weights by what the question needs (multiplied into the score; relevance stays as it is). */
export function kindWeights(intent: Intent): Record<SegmentKind, number> {
  const w: Record<SegmentKind, number> = {
    shot: 0.3,
    ocr: 1,
    object: 1,
    speech: 0.5,
    transcript: 1,
    caption: 1,
    audio: 0.5,
    face: 0.3,
  };
  if (intent.needs.has('said')) {
    w.transcript = 3;
    w.speech = 1.5;
    w.ocr = 0.7;
  }
  if (intent.needs.has('written')) {
    w.ocr = 3;
    w.transcript = 0.8;
  }
  if (intent.needs.has('count') || intent.needs.has('presence') || intent.labels.length) w.object = 2.5;
  if (intent.needs.has('summary')) w.shot = 1.5;
  return w;
}

export interface Candidates {
  bySeg: Map<number, Segment>;
  /** Cosine to the question, by segment id (those with a vector). */
  cosOf: Map<number, number>;
  /** The segments full-text search matched. */
  kwSet: Set<number>;
  intent: Intent;
  /** The query's words, lower case. */
  said: string[];
  /** The weight of each query word's stem the index holds (its inverse document frequency). */
  weigh: Map<string, number>;
  /** About how many segments the index holds. */
  segmentCount: number;
}

/** Relevance (and the kind-weighted score) of each candidate from its words and its cosine. */
export function scoreCandidates({ bySeg, cosOf, kwSet, intent, said, weigh, segmentCount: n }: Candidates): Ranked[] {
  const stemsOf = new Map([...bySeg.values()].map((s) => [s.id, segmentStems(s)]));
  // A word FTS5 never sees may still be in a segment's details (an object's colours): it counts
  // when a candidate has it, weighted by how many do.
  for (const t of said.map(stem)) {
    if (weigh.has(t)) continue;
    const df = [...stemsOf.values()].filter((have) => matches(have, t)).length;
    if (df > 0) weigh.set(t, wordWeight(df, n));
  }
  const total = [...weigh.values()].reduce((a, b) => a + b, 0);
  // Coverage (issue 34, class 9): a query word no segment holds is still asked for ("red car"
  // over an index without cars: a red bottle covers half of it, not all), at the weight of the
  // rarest word. Relevance says how much of the query a moment covers.
  const unseen = said.map(stem).filter((t) => t.length > 2 && !weigh.has(t)).length;
  const asked = total + unseen * wordWeight(0, n);
  const labels = new Set(intent.labels);
  const weights = kindWeights(intent);
  const out: Ranked[] = [];
  for (const s of bySeg.values()) {
    let share = 0;
    const have = stemsOf.get(s.id)!;
    if (total > 0) {
      let got = 0;
      for (const [t, w] of weigh) if (matches(have, t)) got += w;
      // FTS5 matched it where our crude stems found no word: count it as the least informative word.
      if (got === 0 && kwSet.has(s.id)) got = Math.min(...weigh.values());
      share = got / asked;
    }
    if (s.kind === 'object' && labels.has(s.text)) share = Math.max(share, 1 / Math.max(1, weigh.size + unseen));
    const cosine = cosOf.get(s.id) ?? null;
    const relevance = coverageRelevance(share, semanticRelevance(cosine));
    if (relevance <= 0) continue;
    // The kinds the question's wording needs tip the order; they never outweigh a clearer match.
    out.push({
      segment: s,
      score: relevance * (1 + 0.1 * Math.log(weights[s.kind])),
      relevance,
      keyword: share > 0,
      cosine,
    });
  }
  return out;
}

/** The stems of a segment's words, with an object's label and colours (kept in its details). */
function segmentStems(s: Segment): Set<string> {
  const out = stems(s.text);
  const x = s.extra as Record<string, unknown> | null;
  if (x) {
    for (const key of ['label', 'colour', 'color', 'colours', 'upper_colours', 'lower_colours']) {
      const v = x[key];
      for (const w of Array.isArray(v) ? v : [v]) if (typeof w === 'string') for (const st of stems(w)) out.add(st);
    }
  }
  return out;
}

function matches(have: Set<string>, term: string): boolean {
  if (have.has(term)) return true;
  if (term.includes(' ')) return term.split(/\s+/).every((w) => matches(have, stem(w)));
  // "bottles" vs "bottle", "running" vs "run": a stem that starts the other, both long enough.
  if (term.length < 4) return false;
  for (const h of have) if (h.length >= 4 && (h.startsWith(term) || term.startsWith(h))) return true;
  return false;
}
