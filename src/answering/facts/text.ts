/** Fact plug-in: text on screen (OCR): what is written, when, which video, how many texts. */
import { KIND_READ_LIMIT } from '../evidence';
import type { Segment } from '../../storage/rows';
import { readableText } from '../noise';
import { distance } from '../series';
import { POSITION_WORD, type Intent } from '../intent';
import { formatTime } from '../target';
import { labelNoun, NUMBER_WORDS, namesLabel, numberWord } from '../vocabulary';
import { article, capital, joinList, quote, span, YES_NO } from '../wording';
import type { FactPlugin, Answer, FactContext, Style, Slots } from './plugin';

export const text: FactPlugin = {
  kind: 'text',
  quotes: 'written',
  segmentKinds: ['ocr'],
  noun: 'any text on screen',
  forms: {
    what: {
      answer: async (t, s) => await written(t, s.intent, t.style, s.asked.kind),
      readsPosition: true,
      examples: [
        'What words are printed on the screen?',
        'What does the title card read?',
        'What is written in the caption box?',
        'Which name is shown in the credits?',
        'What number does the counter show?',
        'Which digits are displayed right now?',
        'What reading is on the clock display at that point?',
        'Read me the text that appears.',
        'What does the banner say?',
        'What do the letters on the sign spell?',
        'What does that handwriting say?',
        'What message is written on the board?',
        'What words can be read in the picture?',
        'What does the caption on the image say?',
      ],
    },
    when: {
      answer: async (t, s) => await textWhen(t, s.intent, s, t.style),
      readsPosition: true,
      needs: ['form_cue'],
      examples: [
        'When does the title come up?',
        'At what time is text displayed?',
        'When do the words appear on screen?',
        'When is the logo shown?',
      ],
    },
    presence: {
      answer: async (t, s) => await textWhen(t, s.intent, s, t.style, true),
      readsPosition: true,
      examples: [
        'Is there any writing on screen?',
        'Does any text appear?',
        'Are there subtitles or titles burned in?',
        'Is a sign with letters visible?',
      ],
    },
    which_video: {
      answer: async (t, s) => await textWhich(t, s.intent, s, t.style),
      needs: ['form_cue'],
      examples: [
        'Which video has text on screen?',
        'In which clip is a title shown?',
        'Which recording displays the word sale?',
      ],
    },
    count: {
      answer: async (t) => await textCount(t, t.style),
      examples: [
        'How many different texts appear?',
        'How many titles are shown?',
        'How many times does writing come up on screen?',
      ],
    },
  },
  cue: /\b(names?|named|called|titled|written|writing|write|text|title|titles|captioned|subtitle\w*|sign|signs|reads?|displayed|displays?|printed|timecode|counter|digits?|(numbers?|digits?) (appear\w*|shown|on screen|displayed|come up)|credits?|logo|banner|headline|letters?|lettering|words? on)\b/,
};

// ---- the answers ------------------------------------------------------------------------------

async function written(t: FactContext, intent: Intent, style: Style, kind: string | null = null): Promise<Answer> {
  const { scope, moment } = t;
  if (moment) {
    // "What is displayed at this moment?": the frame at that moment, read now.
    const blocks = (await moment.readText()).slice(0, style.items);
    if (blocks.length) {
      for (const b of blocks) t.cite(moment.video.id, 'ocr', moment.t, moment.t, b.text, b.confidence);
      return {
        text: `At ${formatTime(moment.t)}${t.where(moment.video.id)} the screen shows ${joinList(blocks.map((b) => quote(b.text)))}.`,
        found: true,
      };
    }
  }
  let ocr = readable(await t.finder.byKind(scope, ['ocr']), t);
  if (ocr.length === 0) return await t.notFound('any text on screen', style);
  if (TITLE_ASKED.test(t.prompt) && !scope.window) return title(t, ocr);
  // "What is written on the cake": text on a thing that was never seen is not some other text of the video.
  const things = intent.labels.filter((l) => l !== 'person');
  // The read stops at the first texts by time: over a large index the texts naming the thing are searched for.
  const capped = ocr.length >= KIND_READ_LIMIT;
  const named = async (l: string) =>
    ocr.some((o) => namesLabel(o.text, l)) ||
    (capped && (await t.finder.containing(scope, ['ocr'], [l])).some((o) => namesLabel(o.text, l)));
  let anyNamed = false;
  for (const l of things) if ((anyNamed = (await t.spansOf(l)).length > 0 || (await named(l)))) break;
  if (things.length && !anyNamed) return await t.notFound(`${article(labelNoun(things[0]!))} with text on it`, style);
  const ranked = await t.ranked(intent, 20, scope);
  const rankedOcr = ranked.filter((r) => r.segment.kind === 'ocr');
  let chosen: Segment[];
  if (scope.window) {
    // "What is displayed at this moment?": what was on screen nearest the moment.
    const mid = (scope.window.start + scope.window.end) / 2;
    chosen = ocr.sort((a, b) => distance(a, mid) - distance(b, mid)).slice(0, style.items);
  } else if (intent.position === 'end' || intent.position === 'last') {
    // The latest text of the scope (not the last one read), and the texts of its video.
    const latest = capped ? (await t.finder.byKind(scope, ['ocr'], { limit: 1, last: true }))[0]! : ocr.at(-1)!;
    const v = t.video(latest.videoId);
    const end = v.durationSec ?? latest.end;
    if (capped) ocr = await t.finder.byKind({ videos: [v], window: scope.window }, ['ocr'], { last: true });
    ocr = ocr.filter((s) => s.videoId === v.id && s.end >= end * 0.75);
    chosen = bestText(ocr).slice(0, style.items);
  } else if (intent.position === 'start' || intent.position === 'first') {
    chosen = ocr.slice(0, style.items);
  } else if (rankedOcr.length) {
    chosen = rankedOcr.map((r) => r.segment).slice(0, style.items);
  } else {
    chosen = bestText(ocr).slice(0, style.items);
  }
  chosen.sort((a, b) => a.start - b.start);
  // "Which number is shown": text that holds no number is no answer to it (the reader may have missed it).
  const numeric = (x: string) =>
    /\d/.test(x) || Object.keys(NUMBER_WORDS).some((w) => new RegExp(`\\b${w}\\b`, 'i').test(x));
  if (kind !== null && /^(numbers?|digits?)$/.test(kind) && !chosen.some((s) => numeric(s.text)))
    return {
      text: `I could not find a number in the text on screen${t.scope.videos.length === 1 ? '' : ' of these videos'}: the text the analysis read there holds no digits or number words.`,
      found: false,
    };
  const parts = chosen.map((s) => {
    t.citeSegment(s);
    return `${quote(s.text)} ${span(s.start, s.end)}${t.where(s.videoId)}`;
  });
  return { text: `The screen shows ${joinList(parts)}.`, found: true };
}

const squash = (s: string) => s.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');

/** The quoted or content words the text must hold: as asked, and squashed (spaces and case aside). */
function wantedText(intent: Intent, slots: Slots): { asked: string[]; wanted: string[] } {
  // "When is text shown for the last time": "last" places the answer, it is not the text looked for.
  const content = (k: string) => !TEXT_WORDS.has(k) && !(intent.position && POSITION_WORD.test(k));
  const asked = (slots.quoted.length ? slots.quoted : intent.keywords.filter(content)).filter(
    (w) => squash(w).length >= 3,
  );
  return { asked, wanted: asked.map(squash) };
}

const holds = (s: Segment, wanted: string[]) => wanted.some((w) => squash(s.text).includes(w));

/** OCR segments that match the question's quoted or content words (spaces and case aside), else all. */
async function textMatches(
  t: FactContext,
  intent: Intent,
  slots: Slots,
): Promise<{ segs: Segment[]; matched: boolean; asked: boolean }> {
  // Fragments and watermarks are no text to quote here either (class 8).
  const read = await t.finder.byKind(t.scope, ['ocr']);
  const all = readable(read, t);
  const { wanted, asked } = wantedText(intent, slots);
  // The read stops at the first texts by time: over a large index the texts with the words are searched for.
  const hits = !wanted.length
    ? []
    : read.length >= KIND_READ_LIMIT
      ? readable(await t.finder.containing(t.scope, ['ocr'], asked), t).filter((s) => holds(s, wanted))
      : all.filter((s) => holds(s, wanted));
  return hits.length
    ? { segs: hits, matched: true, asked: true }
    : { segs: all, matched: false, asked: wanted.length > 0 };
}

async function textWhen(t: FactContext, intent: Intent, slots: Slots, style: Style, presence = false): Promise<Answer> {
  const { segs, matched, asked } = await textMatches(t, intent, slots);
  // Words the text must hold ("is there a kayak", "when does SALE appear") that no text holds: not found.
  if (!segs.length || (asked && !matched))
    return await t.notFound(
      slots.quoted.length
        ? `the text ${joinList(slots.quoted.map(quote))}`
        : asked
          ? joinList(intent.keywords.filter((k) => !TEXT_WORDS.has(k)).map((k) => `"${k}"`))
          : 'any text on screen',
      style,
    );
  let chosen = segs;
  if (intent.position === 'first' || intent.position === 'start') chosen = segs.slice(0, 1);
  else if (intent.position === 'last' || intent.position === 'end') chosen = segs.slice(-1);
  const parts = chosen.slice(0, style.items).map((s) => {
    t.citeSegment(s);
    return `${quote(s.text)} ${span(s.start, s.end)}${t.where(s.videoId)}`;
  });
  // Every text counted when the read stopped at its limit and no word narrowed it.
  const all =
    chosen === segs && !matched && segs.length >= KIND_READ_LIMIT
      ? await t.finder.countByKind(t.scope, ['ocr'])
      : chosen.length;
  const more = all > style.items ? ` (and ${all - style.items} more)` : '';
  return {
    text: `${presence && YES_NO.test(t.prompt) ? 'Yes: the' : 'The'} screen shows ${joinList(parts)}${more}.`,
    found: true,
  };
}

async function textWhich(t: FactContext, intent: Intent, slots: Slots, style: Style): Promise<Answer> {
  const { segs, matched, asked } = await textMatches(t, intent, slots);
  if (!segs.length || (asked && !matched)) return await t.notFound('such text on screen', style);
  const byVideo = new Map<string, Segment>();
  for (const s of bestText(segs)) if (!byVideo.has(s.videoId)) byVideo.set(s.videoId, s);
  const parts = [...byVideo.values()].slice(0, style.items).map((s) => {
    t.citeSegment(s);
    return `${t.video(s.videoId).fileName} (${quote(s.text)} ${span(s.start, s.end)})`;
  });
  return { text: `Text is shown in ${joinList(parts)}.`, found: true };
}

/** Text the OCR read that is no text to quote (issue 34, class 8): see noise.ts. */
export function readable(ocr: Segment[], t: Pick<FactContext, 'video'>): Segment[] {
  return readableText(ocr, (id) => t.video(id).durationSec);
}

/** "What is the title / the name of the show / what is it called". */
const TITLE_ASKED =
  /\b(titles?|titled|called|name of (the|this|that) (show|film|movie|programme|program|series|video|clip|episode|song|channel|book|game|podcast|brand|company|event)|(show|film|movie|programme|program|series|episode|channel|podcast)'s name|(big|bigger|biggest|large|larger|largest|main|prominent|headline) (text|writing|words|letters|lettering|heading))\b/i;

/** Words of a credit line: said as context, not as the title. */
const CREDIT =
  /\b(by|directed|director|produced|producer|presents?|starring|written|music|copyright|©|a film|an? \w+ production)\b/i;

/**
 * The title: the most prominent text (issue 34, class 5): large in the frame, long on screen,
 * alone, in upper case, near the start or the end; a credit line weighs less. The other texts
 * near it are quoted as context.
 */
function title(t: FactContext, ocr: Segment[]): Answer {
  const score = (s: Segment) => {
    const box = (s.extra as { box?: number[] } | null)?.box;
    const size = box && box.length === 4 ? Math.sqrt(Math.max(1e-4, box[2]! * box[3]!)) : 0.1;
    const d = t.video(s.videoId).durationSec ?? s.end;
    const alone = ocr.some((o) => o !== s && o.videoId === s.videoId && o.start < s.end && o.end > s.start) ? 1 : 1.3;
    const upper = /\p{Lu}/u.test(s.text) && s.text === s.text.toUpperCase() ? 1.3 : 1;
    const edge = s.start <= 0.25 * d || s.end >= 0.75 * d ? 1.2 : 1;
    const credit = CREDIT.test(s.text) ? 0.4 : 1;
    return size * (1 + Math.min(s.end - s.start, 10)) * alone * upper * edge * credit;
  };
  const ranked = [...ocr].sort((a, b) => score(b) - score(a));
  const best = ranked[0]!;
  t.citeSegment(best);
  const others = ranked
    .slice(1)
    .filter((o) => o.videoId === best.videoId)
    .slice(0, 2)
    .sort((a, b) => a.start - b.start);
  for (const o of others) t.citeSegment(o);
  const context = others.length
    ? ` Also on screen: ${joinList(others.map((o) => `${quote(o.text)} ${span(o.start, o.end)}`))}.`
    : '';
  return {
    text: `The title is ${quote(best.text)}, the most prominent text on screen ${span(best.start, best.end)}${t.where(best.videoId)}.${context}`,
    found: true,
  };
}

async function textCount(t: FactContext, style: Style): Promise<Answer> {
  const read = await t.finder.byKind(t.scope, ['ocr']);
  const segs = readable(read, t);
  if (!segs.length) return await t.notFound('any text on screen', style);
  const distinct = new Map<string, Segment>();
  for (const s of segs) if (!distinct.has(s.text.toLowerCase())) distinct.set(s.text.toLowerCase(), s);
  const parts = [...distinct.values()].slice(0, style.items).map((s) => {
    t.citeSegment(s);
    return `${quote(s.text)} ${span(s.start, s.end)}${t.where(s.videoId)}`;
  });
  // The read stopped at its first texts by time: the different texts of the whole scope are counted.
  const n =
    read.length >= KIND_READ_LIMIT
      ? Math.max(distinct.size, await t.finder.distinctTexts(t.scope, ['ocr']))
      : distinct.size;
  return {
    text: `${capital(numberWord(n))} different text${n === 1 ? ' is' : 's are'} read on screen: ${joinList(parts)}${n > parts.length ? ', and more' : ''}.`,
    found: true,
  };
}

// ---- speech --------------------------------------------------------------------------------

/** Words that say the question is about text, not what the text says. */
const TEXT_WORDS = new Set(
  'text texts written write writing title titles screen shown displayed display appear appears printed words word letters sign signs read reads caption captions banner logo credits anything any'.split(
    ' ',
  ),
);

/** Readable, confident, longer-lasting text first. */
function bestText(ss: Segment[]): Segment[] {
  const letters = (s: Segment) => (s.text.match(/\p{L}/gu) ?? []).length;
  return [...ss].sort(
    (a, b) =>
      (b.confidence ?? 0) * Math.log2(2 + letters(b)) * (b.end - b.start + 1) -
      (a.confidence ?? 0) * Math.log2(2 + letters(a)) * (a.end - a.start + 1),
  );
}
