/**
 * What a question asks for, read from its wording: which kinds of evidence it needs (what is said,
 * written, seen, how many, when), which object classes it names, and its content words. Plain
 * rules over English, so the answer engine works without any generative model.
 */

import { ANSWER_KINDS, CATEGORIES, CLOTHING_WORDS, labelsNamed, NUMBER_WORDS } from './vocabulary';

/** The words that set `Intent.position` ("first", "at the end"): where the answer lies, not what it is about. */
export const POSITION_WORD =
  /^(first|earliest|last|final|latest|beginning|start|opening|begins|end|ending|finish|closing)$/;

export type Need = 'said' | 'written' | 'count' | 'when' | 'presence' | 'summary' | 'which_video' | 'what_object';

export interface Intent {
  needs: Set<Need>;
  /** Detector labels (COCO) the question names, through synonyms ("puppy" → dog). */
  labels: string[];
  /** Labels of a category the question asks about ("what animal" → every animal label). */
  categoryLabels: string[];
  /** Content words (lower case, no stop words), for keyword search. */
  keywords: string[];
  /** A number the question mentions ("two cars", "only one bottle"). */
  number: number | null;
  /** "first", "last", "beginning", "end": which part of the timeline is meant. */
  position: 'first' | 'last' | 'start' | 'end' | null;
  /** "largest number", "most", "maximum". */
  extreme: 'max' | 'min' | null;
}

const STOP = new Set(
  'a an the is are was were be been being am do does did doing have has had of in on at to for from by with about into over under after before during between this that these those it its there here what which who whom whose when where why how many much any some no not only just than then so as or and but if also very can could would should will shall may might must i you he she we they me him her us them my your his our their video clip film movie footage scene shown show shows showing appear appears appearing visible seen see happen happens moment time point please tell say says said'.split(
    ' ',
  ),
);

export function readIntent(question: string): Intent {
  const q = ` ${question
    .toLowerCase()
    .replace(/[^\p{L}\p{N}:;.'\s-]/gu, ' ')
    .replace(/\s+/g, ' ')} `;
  const has = (re: RegExp) => re.test(q);
  const needs = new Set<Need>();
  if (
    has(
      /\b(say|says|said|saying|speak|speaks|spoke|speaking|talk|talks|talking|mention|mentions|mentioned|tell|tells|told|ask|asks|asked|words?|quote|transcript|voice|speech|spoken|speaker|speakers|narrat\w*|request|requests|announce\w*|explain\w*)\b/,
    )
  )
    needs.add('said');
  if (
    has(
      /\b(written|write|writes|writing|text|title|titles|caption|captions|subtitle\w*|sign|signs|label|labels|read|reads|displayed|display|displays|printed|timecode|counter|number shown|credits?|logo|banner|headline|letters?|presents?|name|names|named|on[- ]screen)\b/,
    )
  )
    needs.add('written');
  if (has(/\bhow many\b|\bnumber of\b|\bcount\b|\blargest number\b|\bhow much\b/)) needs.add('count');
  if (
    has(/\b(when|what time|timestamp|how long)\b|\b(which|what) (moments?|times?|points?|parts?|seconds?|minutes?)\b/)
  )
    needs.add('when');
  if (has(/^\s*(is|are|was|were|does|do|did|can|could)\b|\bis there\b|\bare there\b|\bany\b/)) needs.add('presence');
  if (
    has(
      /\b(summar\w+|what happens|what is happening|what's happening|what (has )?happened|what went on|overview|describe|description|sequence of events|going on)\b/,
    )
  )
    needs.add('summary');
  if (has(/\b(which|what) (video|videos|clip|clips|file|files|recording|recordings)\b/)) needs.add('which_video');

  const labels = labelsNamed(q);
  const categoryLabels: string[] = [];
  for (const [word, members] of Object.entries(CATEGORIES)) {
    if (q.includes(` ${word} `)) for (const m of members) if (!categoryLabels.includes(m)) categoryLabels.push(m);
  }
  // "What electronic device ...", "which animals ...": a category asked about by name.
  if (categoryLabels.length && has(/\b(what|which)\b/)) needs.add('what_object');
  if (
    has(
      /\bwhat (animal|object|objects|thing|things|vehicle|device|devices|kind of|sort of|type of)\b|\bwhat (is|are|was|were) the \w+ (\w+ing|on|with|in|under|next to|beside)\b|\bwhat (objects|things) are\b/,
    )
  )
    needs.add('what_object');

  let number: number | null = null;
  const digit = /\b(\d{1,3})\b(?!:)/.exec(q.replace(/\d{1,2}:\d{2}(:\d{2})?/g, ' '));
  if (digit) number = Number(digit[1]);
  else
    for (const [w, n] of Object.entries(NUMBER_WORDS)) {
      if (n > 10) break;
      if (new RegExp(`\\b${w}\\b`).test(q)) {
        number = n;
        break;
      }
    }
  const position = has(/\b(first|earliest)\b/)
    ? 'first'
    : has(/\b(last|final|latest)\b/)
      ? 'last'
      : has(/\b(beginning|start|opening|begins)\b/)
        ? 'start'
        : has(/\b(end|ending|finish|closing)\b/)
          ? 'end'
          : null;
  const extreme = has(/\b(largest|most|maximum|max|greatest|highest|biggest)\b/)
    ? 'max'
    : has(/\b(fewest|least|minimum|smallest|lowest)\b/)
      ? 'min'
      : null;

  const keywords = [
    ...new Set(
      q
        .split(' ')
        .map((w) => w.replace(/^['.;:-]+|['.;:-]+$/g, ''))
        .filter((w) => w.length > 1 && !STOP.has(w)),
    ),
  ];
  return { needs, labels, categoryLabels, keywords, number, position, extreme };
}

/**
 * The thing a colour question asks about ("what colour is the sky", "what colour are the caps on
 * the bottles"), with whether it is clothing; null when the question asks no colour or a detector
 * label names the thing (the detections' measured colours answer those).
 */
export function colourOfUnlabelled(question: string): { noun: string; clothing: boolean } | null {
  const q = question
    .toLowerCase()
    .replace(/[^\p{L}\p{N}'\s-]/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  const m =
    /\bcolou?rs? (?:is|are|was|were) (?:the|a|an|his|her|their|its|this|that) (.+?)(?: (?:on|of|in|at|near|behind|under|from|when|during|at)\b.*)?$/.exec(
      q,
    );
  if (!m) return null;
  const words = m[1]!.replace(/'s\b/g, '').split(' ');
  const noun = words.at(-1)!;
  if (labelsNamed(` ${m[1]} `).length && !labelsNamed(` ${noun} `).length && words.length > 1) {
    // "the woman's top": the thing is the top, worn by a labelled person.
  } else if (labelsNamed(` ${noun} `).length) return null;
  const clothing = CLOTHING_WORDS.includes(noun) || CLOTHING_WORDS.includes(noun.replace(/s$/, ''));
  // The background as a whole (and the walls, most of an indoor background): the objects analysis
  // measures those colours itself. A part of the scene (the sky, the floor, the grass) it does not:
  // its measured colours mix everything around the detected things.
  if (ANSWER_KINDS.has(noun) || /^(background|backdrop|walls?|surroundings|setting)$/.test(noun)) return null;
  return { noun, clothing };
}
