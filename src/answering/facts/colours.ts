/**
 * Fact plug-in: colours, from the colours stored with each detection (analysis/stages/colours.ts):
 * "what colour is the car?", "when does the red car appear?", "how many white cars?", "the man in
 * the black shirt", "what colour is the background?". Every time in an answer is the start or end
 * of a cited detection span; a colour that no such thing had is an honest "not found" that says
 * which colours were seen. A person is "in black", never "a black person".
 *
 * Its cue is read from the index (cueIn): a colour asked about, or said with a thing the detector
 * saw or with clothes. It then outweighs the objects' own cue (the label alone).
 */
import type { Catalog } from '../../storage/catalog';
import { objectDetections } from '../../storage/repositories/finder';
import type { Video } from '../../storage/rows';
import { formatTime } from '../target';
import { CLOTHING_WORDS, COLOUR_WORDS, escapeRe, isPersonWord, labelsNamed, PERSON_WORDS } from '../vocabulary';
import { cueForm, type FactPlugin, type Answer, type FactContext } from './plugin';

interface ColourQuestion {
  catalog: Catalog;
  prompt: string;
  videos: Video[];
  window: { start: number; end: number } | null;
}

/** A detection span or a shot to cite. */
interface Cited {
  videoId: string;
  start: number;
  end: number;
  kind: 'object' | 'shot';
  text: string;
}

/** An answer of this plug-in: its text, whether it found it, and the spans it cites. */
interface Found {
  output: string;
  found: boolean;
  evidence: Cited[];
}

export const colours: FactPlugin = {
  kind: 'colours',
  computed: true,
  segmentKinds: ['object'],
  noun: 'that colour',
  cueIn: async (t) => (await colourAnswer(question(t))) !== null,
  cueWeight: 2,
  forms: {
    what: cueForm(answer, [
      'What colour is the car?',
      'What color is the armchair?',
      'Which colours does the jacket have?',
      'What colour is the background?',
      'What colour are the walls?',
    ]),
    when: cueForm(answer, [
      'When does the red car appear?',
      'At what time is the blue truck visible?',
      'When does the woman in the green coat show up?',
      'When is the man in the white shirt on screen?',
    ]),
    count: cueForm(answer, [
      'How many red cars are there?',
      'How many white bottles can be seen?',
      'Count the yellow umbrellas.',
    ]),
    presence: cueForm(answer, [
      'Is there a red car?',
      'Does a blue chair appear?',
      'Is anyone wearing a black jacket?',
    ]),
  },
};

function question(t: FactContext): ColourQuestion {
  return { catalog: t.catalog, prompt: t.prompt, videos: t.scope.videos, window: t.scope.window };
}

/**
 * Every form answers the colour question its words ask: "what colour" lists colours, a colour said
 * with a thing or clothes gives its spans (or its count for "how many"). The forms teach the reader
 * the wordings.
 */
async function answer(t: FactContext): Promise<Answer> {
  const found = await colourAnswer(question(t));
  if (!found) return await t.notFound('that colour', t.style);
  for (const e of found.evidence) t.cite(e.videoId, e.kind, e.start, e.end, e.text, 1);
  return { text: found.output, found: found.found };
}

const PERSON_IN_COLOUR = new RegExp(
  `\\b(${PERSON_WORDS.map(escapeRe).join('|')})\\s+(?:dressed\\s+)?(?:all\\s+)?in\\s+(${Object.keys(COLOUR_WORDS).join('|')})\\b`,
  'i',
);
/** Words people use for groups of labels, beyond the label words themselves. */
const GROUPS: Record<string, string[]> = {
  van: ['car', 'truck'],
  vehicle: ['car', 'truck', 'bus'],
  vehicles: ['car', 'truck', 'bus'],
  bike: ['bicycle', 'motorcycle'],
  armchair: ['couch', 'chair'],
  armchairs: ['couch', 'chair'],
};
const CLOTHES = new RegExp(
  `\\b(?:in|wearing|with)\\s+(?:a|an|the)?\\s*(\\w+)\\s+(?:${CLOTHING_WORDS.map(escapeRe).join('|')})\\b`,
  'i',
);

interface Row {
  videoId: string;
  start: number;
  end: number;
  label: string;
  colours: string[];
  upper: string[];
  /** Boxes of the best frame with their colours. */
  boxes: { colours: string[]; upper: string[] }[];
}

/** The answer to a colour question, or null when the question is none (then the cue does not hold). */
async function colourAnswer(q: ColourQuestion): Promise<Found | null> {
  const p = q.prompt.toLowerCase();
  const askedColour = /\bwhat colou?rs?\b|\bwhich colou?rs?\b|\bcolou?r of\b/.test(p);
  // "The man in black": a person said with the colour of their clothes.
  const clothes = (CLOTHES.exec(q.prompt)?.[1] ?? PERSON_IN_COLOUR.exec(q.prompt)?.[2])?.toLowerCase() ?? null;
  // A colour word counts only right before the thing it describes ("the red car"), or for clothes.
  const colourWord = Object.keys(COLOUR_WORDS).find((c) => new RegExp(`\\b${c}\\s+[a-z]`).test(p));
  if (!askedColour && !colourWord && !clothes) return null;
  if (askedColour && BACKGROUND.test(p)) return background(q);
  const rows = await detections(q);
  const labels = new Set(rows.map((r) => r.label));
  const described =
    colourWord && !askedColour && !clothes
      ? (new RegExp(`\\b${colourWord}\\s+(\\w+(?:\\s\\w+)?)`).exec(p)?.[1] ?? '')
      : p;
  const wanted = labelsIn(described, labels);
  if (!wanted.length) return null;
  const named = wanted.join(' or ');
  const evidence = (rs: Row[], text: (r: Row) => string): Cited[] =>
    rs.slice(0, 12).map((r) => ({ videoId: r.videoId, start: r.start, end: r.end, kind: 'object', text: text(r) }));
  const where = (r: Row) =>
    `${formatTime(r.start)}–${formatTime(r.end)}${q.videos.length > 1 ? ` in ${fileName(q, r.videoId)}` : ''}`;
  const ofLabel = rows.filter((r) => wanted.includes(r.label));

  if (askedColour && !(clothes && colourWord)) {
    const seen = ofLabel.filter((r) => r.colours.length || r.upper.length);
    if (!seen.length)
      return {
        found: false,
        evidence: [],
        output: `I could not find a ${named} whose colour I could read${q.window ? ' at that time' : ''}.`,
      };
    const say = (r: Row) =>
      r.label === 'person' && r.upper.length
        ? `a person dressed in ${r.upper.slice(0, 2).join(' and ')}`
        : `${r.colours.slice(0, 2).join(' and ')}`;
    return {
      found: true,
      evidence: evidence(seen, (r) => `${r.label}: ${say(r)}`),
      output: `The ${named}${seen.length > 1 ? 's are' : ' is'}: ${seen
        .slice(0, 12)
        .map((r) => `${say(r)} (${where(r)})`)
        .join('; ')}.`,
    };
  }

  const colour = COLOUR_WORDS[clothes ?? colourWord ?? ''];
  if (!colour) return null;
  const matches = (r: Row) =>
    clothes && r.label === 'person'
      ? r.upper.includes(colour)
      : r.colours.includes(colour) || (r.label === 'person' && r.upper.includes(colour));
  const hits = ofLabel.filter(matches);
  if (!hits.length) {
    const other = [...new Set(ofLabel.flatMap((r) => (r.label === 'person' ? r.upper : r.colours).slice(0, 1)))];
    return {
      found: false,
      evidence: [],
      output: `I could not find ${article(coloured(colour, named))}${q.window ? ' at that time' : ''}.${ofLabel.length ? ` The ${named}s seen were ${other.length ? other.join(', ') : 'of colours I could not read'}.` : ` No ${named} was detected.`}`,
    };
  }
  if (/\bhow many\b/.test(p)) {
    // Each span counts the boxes of its best frame that have the colour.
    const n = hits.reduce(
      (s, r) => s + Math.max(1, r.boxes.filter((b) => b.colours.includes(colour) || b.upper.includes(colour)).length),
      0,
    );
    return {
      found: true,
      evidence: evidence(hits, (r) => coloured(colour, r.label)),
      output: `${n} ${coloured(colour, n === 1 ? named : `${named}s`)}: ${hits.map(where).join(', ')}.`,
    };
  }
  return {
    found: true,
    evidence: evidence(hits, (r) => coloured(colour, r.label)),
    output: `The ${coloured(colour, named)} appears at ${hits.slice(0, 12).map(where).join(', ')}.`,
  };
}

/** The picture around the detected things as a whole (a part of it, like the sky or the floor, is not measured apart). */
const BACKGROUND = /\b(?:background|backdrop|walls?|surroundings|setting)\b/;

/** "What colour is the background / are the walls": each shot's colours outside the detected things. */
function background(q: ColourQuestion): Found {
  const shots = q.videos.flatMap((v) => {
    const bg =
      (v.analysis as { objects?: { background?: { start: number; end: number; colours: string[] }[] } } | null)?.objects
        ?.background ?? [];
    return bg
      .filter((b) => b.colours.length && (!q.window || (b.start <= q.window.end && b.end >= q.window.start)))
      .map((b) => ({ ...b, videoId: v.id }));
  });
  if (!shots.length)
    return {
      found: false,
      evidence: [],
      output:
        'I could not find the colours of the background: the objects analysis has not stored them for these videos.',
    };
  const where = (b: (typeof shots)[number]) =>
    `${formatTime(b.start)}–${formatTime(b.end)}${q.videos.length > 1 ? ` in ${fileName(q, b.videoId)}` : ''}`;
  const kept = shots.slice(0, 12);
  return {
    found: true,
    evidence: kept.map((b) => ({
      videoId: b.videoId,
      start: b.start,
      end: b.end,
      kind: 'shot',
      text: `background: ${b.colours.join(', ')}`,
    })),
    output: `Around what is detected, the picture is mostly ${kept.map((b) => `${b.colours.slice(0, 2).join(' and ')} (${where(b)})`).join('; ')}.`,
  };
}

async function detections(q: ColourQuestion): Promise<Row[]> {
  const rows = await objectDetections(
    q.catalog,
    q.videos.map((v) => v.id),
  );
  const order = new Map(q.videos.map((v, i) => [v.id, i]));
  return rows
    .filter((r) => !q.window || (r.start <= q.window.end && r.end >= q.window.start))
    .sort((a, b) => order.get(a.videoId)! - order.get(b.videoId)! || a.start - b.start)
    .map((r) => ({
      videoId: r.videoId,
      start: r.start,
      end: r.end,
      label: r.text,
      colours: strings(r.extra?.colours),
      upper: strings(r.extra?.upper_colours),
      boxes: ((r.extra?.boxes as { colours?: unknown; upper_colours?: unknown }[] | undefined) ?? []).map((b) => ({
        colours: strings(b.colours),
        upper: strings(b.upper_colours),
      })),
    }));
}

/** The detected labels a question names (by label, plural or a common synonym). */
function labelsIn(p: string, labels: Set<string>): string[] {
  const out = new Set<string>();
  for (const l of labels) if (new RegExp(`\\b${l}(?:s|es)?\\b`).test(p)) out.add(l);
  for (const l of labelsNamed(p)) if (labels.has(l)) out.add(l);
  for (const [word, ls] of Object.entries(GROUPS))
    if (new RegExp(`\\b${word}\\b`).test(p)) for (const l of ls) if (labels.has(l)) out.add(l);
  return [...out];
}

const strings = (x: unknown): string[] => (Array.isArray(x) ? x.filter((s): s is string => typeof s === 'string') : []);
const fileName = (q: ColourQuestion, videoId: string) => q.videos.find((v) => v.id === videoId)?.fileName ?? videoId;

/** A thing with its colour; a person with the colour of their clothes ("person in black"), never "black person". */
function coloured(colour: string, thing: string): string {
  return thing === 'person' || isPersonWord(thing) ? `${thing} in ${colour}` : `${colour} ${thing}`;
}
const article = (s: string) => (/^[aeiou]/i.test(s) ? `an ${s}` : `a ${s}`);
