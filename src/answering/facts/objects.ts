/**
 * Fact plug-ins: things the object detector saw (COCO labels): counts over time and at a moment,
 * when, which video, what is there, extremes, comparisons; and people, from the person
 * detections: how many, when, which video, most at once.
 */
import { KIND_READ_LIMIT } from '../evidence';
import type { Segment, Video } from '../../storage/rows';
import { appearances, changesOf, type Counted, countsOf, mode, overlap, runsOf, total } from '../series';
import type { Intent } from '../intent';
import { formatTime } from '../target';
import { labelNoun, numberWord } from '../vocabulary';
import { article, capital, detected, joinList, onTrack, secs, span, YES_NO } from '../wording';
import { visible } from './moment';
import type { Cell, FactPlugin, Answer, FactContext, Style, Slots } from './plugin';

export const objects: FactPlugin = {
  kind: 'objects',
  detections: true,
  segmentKinds: ['object'],
  noun: 'that object',
  forms: {
    count: {
      computed: true,
      answer: (t, s, c) =>
        aboutLabel(t, s, c, async (l) =>
          changeAsked(t.prompt) ? await changes(t, l, s, true) : await countObjects(t, l, s, t.style),
        ),
      readsPosition: true,
      needs: ['label'],
      examples: [
        'How many trucks drive past?',
        'How many horses are there in total?',
        'Count the umbrellas that show up.',
        'What number of boats appear over the clip?',
        'How many cups stand on the counter at once?',
        'How many bicycles can you count?',
      ],
    },
    when: {
      answer: (t, s, c) =>
        aboutLabel(t, s, c, async (l) =>
          changeAsked(t.prompt)
            ? await changes(t, l, s, false)
            : s.intent.number !== null || s.atOnce
              ? await countAt(t, l, s.intent, t.style)
              : await whenSeen(t, l, s.intent, t.style),
        ),
      readsPosition: true,
      needs: ['label', 'form_cue'],
      examples: [
        'When does the cat show up?',
        'At what point is a truck in view?',
        'At which seconds can the horse be seen?',
        'Where in the clip does the umbrella appear?',
        'Give me the timestamps of the bicycle.',
        'During which part is the laptop visible?',
      ],
    },
    presence: {
      answer: (t, s, c) => aboutLabel(t, s, c, async (l) => await whenSeen(t, l, s.intent, t.style, true)),
      readsPosition: true,
      needs: ['label'],
      examples: [
        'Is a horse anywhere in this clip?',
        'Does a truck ever appear?',
        'Can I spot an umbrella in the footage?',
        'Are any cups visible?',
        'Do we ever see a boat?',
        'Was there a bicycle?',
      ],
    },
    which_video: {
      answer: (t, s, c) => aboutLabel(t, s, c, async (l) => await whichVideo(t, l, t.style)),
      needs: ['label', 'form_cue'],
      examples: [
        'Which clip contains a horse?',
        'In what video do we see a truck?',
        'Find the recording with an umbrella.',
        'Which of my files shows a boat?',
        'What footage has a bicycle in it?',
      ],
    },
    what: {
      openEnded: true,
      answer: (t, s, c) => objectsWhat(t, s, c),
      examples: [
        'What kind of vehicle is shown?',
        'Which creature appears here?',
        'What objects are in the frame?',
        'What is the cat sitting on?',
        'What things can be seen on the desk?',
        'What type of furniture is there?',
        'What is the man holding?',
      ],
    },
    extreme: {
      computed: true,
      answer: (t, s, c) => aboutLabel(t, s, c, async (l) => await extremeObject(t, l, s, t.style)),
      readsPosition: true,
      needs: ['label'],
      examples: [
        'What is the highest number of trucks seen together?',
        'When are the most cups visible?',
        'When does the horse appear for the last time?',
        'What is the longest time a boat stays in view?',
        'At what moment are the fewest bicycles on screen?',
      ],
    },
    compare: {
      computed: true,
      answer: (t, s, c) => aboutLabel(t, s, c, async (l) => await compareObject(t, l, t.style)),
      needs: ['label', 'two_videos'],
      examples: [
        'Which has more trucks, a.mp4 or b.mp4?',
        'Compare how long the horse is visible in one.mp4 and two.mp4.',
        'Does first.mp4 or second.mp4 show more umbrellas?',
      ],
    },
  },
};

export const people: FactPlugin = {
  kind: 'people',
  detections: true,
  segmentKinds: ['object'],
  noun: 'a person',
  forms: {
    count: {
      computed: true,
      answer: (t, s, c) =>
        aboutLabel(t, s, c, async (l) =>
          changeAsked(t.prompt) ? await changes(t, l, s, true) : await countObjects(t, l, s, t.style),
        ),
      readsPosition: true,
      needs: ['cue'],
      examples: [
        'How many different people show up?',
        'How many persons walk through?',
        'How many individuals appear over the course of the clip?',
        'How many humans are there?',
        'Count the people who come into view.',
        'How many people are in the room at once?',
      ],
    },
    when: {
      answer: (t, s, c) =>
        aboutLabel(t, s, c, async (l) =>
          changeAsked(t.prompt)
            ? await changes(t, l, s, false)
            : s.intent.number !== null || s.atOnce
              ? await countAt(t, l, s.intent, t.style)
              : await whenSeen(t, l, s.intent, t.style),
        ),
      readsPosition: true,
      needs: ['cue', 'form_cue'],
      examples: [
        'When does somebody appear?',
        'At what times is a person in the picture?',
        'When does the first visitor arrive?',
        'When is someone standing there?',
      ],
    },
    presence: {
      answer: (t, s, c) => aboutLabel(t, s, c, async (l) => await whenSeen(t, l, s.intent, t.style, true)),
      readsPosition: true,
      needs: ['cue'],
      examples: [
        'Is anyone in the video?',
        'Are there people in this footage?',
        'Does a human appear at all?',
        'Can we see anybody?',
      ],
    },
    which_video: {
      answer: (t, s, c) => aboutLabel(t, s, c, async (l) => await whichVideo(t, l, t.style)),
      needs: ['cue', 'form_cue'],
      examples: [
        'Which clips have people in them?',
        'In which recording does someone appear?',
        'What videos feature a person?',
      ],
    },
    extreme: {
      computed: true,
      answer: (t, s, c) => aboutLabel(t, s, c, async (l) => await extremeObject(t, l, s, t.style)),
      readsPosition: true,
      needs: ['cue'],
      examples: [
        'What is the maximum number of people in view together?',
        'When are the most people on screen?',
        'When does the last person leave?',
      ],
    },
  },
  cue: /\b(individuals?|visitors?|faces?)\b/,
};

// ---- the answers ------------------------------------------------------------------------------

/** The label an object question is about (the person for people), its colour when asked, else `f` on it. */
function aboutLabel(
  t: FactContext,
  slots: Slots,
  cell: Cell,
  f: (label: string) => Answer | Promise<Answer>,
): Answer | Promise<Answer> {
  const intent = slots.intent;
  const named = intent.labels.filter((l) => l !== 'person' || !intent.categoryLabels.length);
  const label =
    (cell.fact === 'people' ? 'person' : undefined) ?? named.filter((l) => l !== 'dining table')[0] ?? named[0];
  // "What colour is the car": whichever object reading it got, it asks for a colour.
  if (named.length && COLOUR_ASKED.test(t.prompt))
    return withLabels(t, named, label, t.style, (l) => colourOf(t, l, t.style));
  return withLabels(t, named, label, t.style, f);
}

/** "What animal is there", "what is the dog standing on", "what is there". */
function objectsWhat(t: FactContext, slots: Slots, cell: Cell): Answer | Promise<Answer> {
  const intent = slots.intent;
  const named = intent.labels.filter((l) => l !== 'person' || !intent.categoryLabels.length);
  if (intent.categoryLabels.length) return objectsOf(t, intent.categoryLabels, t.style, intent);
  if (named.length && COLOUR_ASKED.test(t.prompt)) return aboutLabel(t, slots, cell, () => visible(t, t.style));
  if (named.length) return companions(t, named, t.style);
  return visible(t, t.style);
}

/** Runs `f` on the label asked about when the index has it; "not found" (with what is there) when not. */
async function withLabels(
  t: FactContext,
  named: string[],
  label: string | undefined,
  style: Style,
  f: (label: string) => Answer | Promise<Answer>,
): Promise<Answer> {
  // Things the detector has no label for, or never saw, may still be named by a caption (issue 11).
  // Things the detector has no label for, or never saw, may still be named by a caption: answer.ts reads those.
  if (!label) return await t.notFound('what the question names', style);
  const asked = named.length ? named : [label];
  const present: string[] = [];
  for (const l of asked) if (await t.sees(l)) present.push(l);
  const missing = asked.filter((l) => !present.includes(l));
  // The question is about something that was never detected: say so rather than answer about something else.
  if (!present.includes(label) || (missing.length && !(missing.length === 1 && missing[0] === 'dining table'))) {
    return await t.notFound((missing.length ? missing : [label]).map((l) => article(labelNoun(l))).join(' or '), style);
  }
  return f(label);
}

// ---- object questions -------------------------------------------------------------------

async function whenSeen(
  t: FactContext,
  label: string,
  intent: Intent,
  style: Style,
  presence = false,
): Promise<Answer> {
  let spans = await t.spansOf(label);
  if (intent.position === 'first' || intent.position === 'start') spans = spans.slice(0, 1);
  else if (intent.position === 'last' || intent.position === 'end') {
    const last = await t.lastSpanOf(label);
    spans = last ? [last] : spans.slice(-1);
  }
  // The whole count, not the spans read (a label can have tens of thousands of spans in an index).
  const total = spans.length === 1 ? 1 : await t.spanCount(label);
  const shown = spans.slice(0, style.items);
  const noun = labelNoun(label);
  const parts = shown.map((s) => {
    t.citeSegment(s);
    return `${span(s.start, s.end)}${onTrack(s)}${t.where(s.videoId)}`;
  });
  const more =
    total > shown.length ? ` (and ${total - shown.length} more time${total - shown.length > 1 ? 's' : ''})` : '';
  if (intent.position === 'first' || intent.position === 'start') {
    const s = shown[0]!;
    return {
      text: `The first ${noun} appears at ${formatTime(s.start)}${t.where(s.videoId)} and is visible until ${formatTime(s.end)}.`,
      found: true,
    };
  }
  // "Yes" only answers a yes/no question ("who is there?" is not one).
  const seen = detected(label, Math.max(...spans.map((x) => x.confidence ?? 1)));
  const lead = presence && YES_NO.test(t.prompt) ? `Yes: ${seen} is visible` : `${capital(seen)} is visible`;
  return { text: `${lead} ${joinList(parts)}${more}.`, found: true };
}

async function countAt(t: FactContext, label: string, intent: Intent, style: Style): Promise<Answer> {
  const pts = await t.series(label);
  if (pts.length === 0) return await t.notFound(article(labelNoun(label)), style);
  const noun = (n: number) => labelNoun(label, n);
  // "When are two cars visible?" / "When is only one bottle left?": the runs with that count.
  if (intent.needs.has('when') && intent.number !== null) {
    const runs = runsOf(pts, (p) => p.n === intent.number);
    if (runs.length === 0) {
      const max = Math.max(...pts.map((p) => p.n));
      return {
        text: `I could not find a moment with exactly ${numberWord(intent.number)} ${noun(intent.number)} visible; at most ${numberWord(max)} ${noun(max)} ${max === 1 ? 'is' : 'are'} seen at once.`,
        found: false,
      };
    }
    const parts = runs.slice(0, style.items).map((r) => {
      t.cite(r.video.id, 'object', r.start, r.end, `${intent.number} ${noun(intent.number!)}`, 1);
      return `${span(r.start, r.end)}${t.where(r.video.id)}`;
    });
    return {
      text: `${capital(numberWord(intent.number))} ${noun(intent.number)} ${intent.number === 1 ? 'is' : 'are'} visible ${joinList(parts)}.`,
      found: true,
    };
  }
  if (intent.extreme === 'max' || intent.extreme === 'min') {
    const best = intent.extreme === 'max' ? Math.max(...pts.map((p) => p.n)) : Math.min(...pts.map((p) => p.n));
    const runs = runsOf(pts, (p) => p.n === best);
    const parts = runs.slice(0, Math.min(style.items, 3)).map((r) => {
      t.cite(r.video.id, 'object', r.start, r.end, `${best} ${noun(best)}`, 1);
      return `${span(r.start, r.end)}${t.where(r.video.id)}`;
    });
    const word = intent.extreme === 'max' ? 'At most' : 'At least';
    return {
      text: `${word} ${numberWord(best)} ${noun(best)} ${best === 1 ? 'is' : 'are'} visible at once, for example ${joinList(parts)}.`,
      found: true,
    };
  }
  // A moment: the target, the beginning, or the end; else the most common count.
  let chosen: Counted[];
  let when: string;
  if (t.scope.window) {
    chosen = pts;
    when = '';
  } else if (intent.position === 'start' || intent.position === 'first') {
    const first = pts[0]!;
    chosen = pts.filter((p) => p.video.id === first.video.id && p.t <= first.t + 5);
    when = ' at the beginning';
  } else if (intent.position === 'end' || intent.position === 'last') {
    const last = pts.at(-1)!;
    chosen = pts.filter((p) => p.video.id === last.video.id && p.t >= last.t - 5);
    when = ' at the end';
  } else {
    chosen = pts;
    when = '';
  }
  const n = mode(chosen.map((p) => p.n));
  const run = chosen.filter((p) => p.n === n);
  const start = run[0]!.t;
  const end = run.at(-1)!.t;
  t.cite(run[0]!.video.id, 'object', start, end, `${n} ${noun(n)}`, 1);
  const varies =
    !when && new Set(pts.map((p) => p.n)).size > 1
      ? ` (the number changes over the video: between ${numberWord(Math.min(...pts.map((p) => p.n)))} and ${numberWord(Math.max(...pts.map((p) => p.n)))})`
      : '';
  // Weak boxes of the fullest frame were not counted: said as possible, not as more (class 8).
  const weak = Math.max(
    0,
    ...run.map((p) =>
      p.segment && (p.segment.extra as { best_t?: number } | null)?.best_t === p.t ? countsOf(p.segment).weak : 0,
    ),
  );
  const possibly = weak ? `; possibly ${numberWord(weak)} more, detected too weakly to count` : '';
  return {
    text: `There ${n === 1 ? 'is' : 'are'} ${numberWord(n)} ${noun(n)}${when}, ${span(start, end)}${t.where(run[0]!.video.id)}${varies}${possibly}.`,
    found: true,
  };
}

async function whichVideo(t: FactContext, label: string, style: Style): Promise<Answer> {
  const spans = await t.spansOf(label);
  const byVideo = new Map<string, Segment[]>();
  for (const s of spans) byVideo.set(s.videoId, [...(byVideo.get(s.videoId) ?? []), s]);
  const parts = [...byVideo.entries()].slice(0, style.items).map(([vid, segs]) => {
    const s = segs.sort((a, b) => b.end - b.start - (a.end - a.start))[0]!;
    t.citeSegment(s);
    return `${t.video(vid).fileName} (${span(s.start, s.end)})`;
  });
  return { text: `${capital(article(labelNoun(label)))} is seen in ${joinList(parts)}.`, found: true };
}

async function objectsOf(t: FactContext, labels: string[], style: Style, intent: Intent): Promise<Answer> {
  const segs = await t.objectSpans(labels);
  if (segs.length === 0) return await t.notFound(`any ${categoryName(t.prompt)}`, style);
  const byLabel = new Map<string, Segment[]>();
  for (const s of segs) byLabel.set(s.text, [...(byLabel.get(s.text) ?? []), s]);
  let ranked = [...byLabel.entries()].sort((a, b) => total(b[1]) - total(a[1]));
  if (segs.length >= KIND_READ_LIMIT) {
    // The read stopped at the first spans by time (a label seen only later was not among them): each
    // label ranked by its seconds in the whole scope, and its spans read on their own.
    const want = new Set(labels);
    ranked = [];
    for (const l of (await t.finder.labelSeconds(t.scope, 'object', EVERY_LABEL))
      .filter((l) => want.has(l.label))
      .slice(0, style.items))
      ranked.push([l.label, await t.spansOf(l.label)]);
  }
  const parts = ranked.slice(0, style.items).map(([label, ss]) => {
    const s = ss.sort((a, b) => b.end - b.start - (a.end - a.start))[0]!;
    t.citeSegment(s);
    return `${detected(label, Math.max(...ss.map((x) => x.confidence ?? 1)))} (${span(s.start, s.end)}${t.where(s.videoId)})`;
  });
  const verb = intent.needs.has('which_video') ? 'is seen in' : 'The video shows';
  if (intent.needs.has('which_video')) return { text: `${capital(parts.join(', '))} ${verb} the index.`, found: true };
  return { text: `${verb} ${joinList(parts)}.`, found: true };
}

/** More labels than a detector has (labelSeconds' limit when every label is wanted). */
const EVERY_LABEL = 10_000;

async function companions(t: FactContext, named: string[], style: Style): Promise<Answer> {
  const subject = named[0]!;
  const mine = await t.spansOf(subject);
  if (mine.length === 0) return await t.notFound(article(labelNoun(subject)), style);
  // What is detected at the same time as the subject, in its own videos (not the first spans of the
  // whole index, of which few are the subject's).
  const others = await t.finder.overlapping(mine, 'object', [subject, 'person'], t.scope.window);
  if (others.length === 0)
    return {
      text: `I could not find anything detected together with the ${labelNoun(subject)}; the ${labelNoun(subject)} is visible ${span(mine[0]!.start, mine[0]!.end)}.`,
      found: false,
    };
  const byLabel = new Map<string, number>();
  for (const o of others) byLabel.set(o.text, (byLabel.get(o.text) ?? 0) + Math.max(...mine.map((m) => overlap(m, o))));
  const best = [...byLabel.entries()].sort((a, b) => b[1] - a[1]).slice(0, Math.max(1, Math.min(style.items, 2)));
  const parts = best.map(([label]) => {
    const s = others.filter((o) => o.text === label).sort((a, b) => b.end - b.start - (a.end - a.start))[0]!;
    t.citeSegment(s);
    return `${detected(label, s.confidence)} (${span(s.start, s.end)}${t.where(s.videoId)})`;
  });
  t.citeSegment(mine[0]!);
  return { text: `The ${labelNoun(subject)} is seen together with ${joinList(parts)}.`, found: true };
}

// ---- text and speech --------------------------------------------------------------------

/**
 * "What colour is the car?": the colour the analysis stored with the detection (extra.colour or
 * extra.color), else "not found" that says colours are not measured, with where the object is.
 */
async function colourOf(t: FactContext, label: string, style: Style): Promise<Answer> {
  const spans = await t.spansOf(label);
  const coloured = spans.map((s) => ({ s, c: colourIn(s) })).filter((x): x is { s: Segment; c: string } => !!x.c);
  if (coloured.length) {
    const parts = coloured.slice(0, style.items).map(({ s, c }) => {
      t.citeSegment(s);
      return `${c} ${span(s.start, s.end)}${t.where(s.videoId)}`;
    });
    return { text: `The ${labelNoun(label)} is ${joinList(parts)}.`, found: true };
  }
  const s = spans[0]!;
  t.citeSegment(s);
  return {
    text: `I could not find the colour of the ${labelNoun(label)}: the analysis did not measure colours here. ${capital(article(labelNoun(label)))} is visible ${span(s.start, s.end)}${t.where(s.videoId)}.`,
    found: false,
  };
}

// ---- changes over time ----------------------------------------------------------------------

/** Words that ask for a drop in a count ("taken away", "leaves") or a rise ("added", "arrives"). */
const DROP =
  /\b(taken|(takes?|took|taking) (away|out|off)|removed?|removes|removing|disappear\w*|vanish\w*|leaves|leaving|(has|have|had) left|exits?|goes away|gone|picked up|drops? out)\b/i;
const RISE = /\b(added|adds?|put|puts|placed|places|arriv\w*|enters?|entering|comes? in|joins?|brought|brings?)\b/i;

/** "When is a cup taken away", "how many times does someone arrive": a change in the count, not the span. */
export function changeAsked(prompt: string): 'drop' | 'rise' | null {
  if (DROP.test(prompt) && !/\btake (a |the )?(picture|photo|look|seat|place)\b/i.test(prompt)) return 'drop';
  return RISE.test(prompt) ? 'rise' : null;
}

/**
 * The changes in a label's count that the question asks about (issue 34, class 4), cited at the
 * change: "a cup is taken away at 0:12 (from three to two)". Counting ("how many times") counts
 * the changes. "The first" takes the first only.
 */
async function changes(t: FactContext, label: string, slots: Slots, counting: boolean): Promise<Answer> {
  const way = changeAsked(t.prompt)!;
  let found = changesOf(await t.series(label)).filter((c) => (way === 'drop' ? c.to < c.from : c.to > c.from));
  const noun = labelNoun(label);
  if (!found.length) {
    const spans = await t.spansOf(label);
    if (!spans.length) return await t.notFound(article(noun), t.style);
    const s = spans[0]!;
    t.citeSegment(s);
    return {
      text: `I could not find a moment when ${article(noun)} ${way === 'drop' ? 'is taken away or leaves' : 'is added or arrives'}: the number of ${labelNoun(label, 2)} seen does not ${way === 'drop' ? 'drop' : 'rise'}${t.where(s.videoId)} (${article(noun)} is visible ${span(s.start, s.end)}).`,
      found: false,
    };
  }
  if (slots.intent.position === 'first') found = found.slice(0, 1);
  if (slots.intent.position === 'last') found = found.slice(-1);
  const shown = found.slice(0, Math.max(t.style.items, 4));
  const parts = shown.map((c) => {
    t.cite(c.video.id, 'object', c.before, c.at, label, 1);
    return `at ${formatTime(c.at)}${t.where(c.video.id)} (from ${numberWord(c.from)} to ${numberWord(c.to)})`;
  });
  const verb =
    way === 'drop' ? (label === 'person' ? 'leaves' : 'is taken away') : label === 'person' ? 'arrives' : 'is added';
  const times = found.length === 1 ? 'once' : found.length === 2 ? 'twice' : `${numberWord(found.length)} times`;
  return {
    text: counting
      ? `${capital(article(noun))} ${verb} ${times}: ${joinList(parts)}${found.length > shown.length ? ' and more' : ''}; the number seen changes there.`
      : `${capital(article(noun))} ${verb} ${joinList(parts)}${found.length > shown.length ? ' and more' : ''}: the number seen changes there.`,
    found: true,
  };
}

// ---- counting over time, extremes, comparisons ------------------------------------------------

/**
 * "How many cars appear": the different appearances over time (each run of the label, with as
 * many as are seen at once in it), not the most in one frame. One continuous run, a moment, "at
 * once", or a number asked about: the count at a moment.
 */
async function countObjects(t: FactContext, label: string, slots: Slots, style: Style): Promise<Answer> {
  const intent = slots.intent;
  const runs = appearances(await t.spansOf(label));
  if (
    slots.atOnce ||
    intent.extreme ||
    t.scope.window ||
    intent.position ||
    runs.length <= 1 ||
    (intent.number !== null && intent.needs.has('when'))
  ) {
    return countAt(t, label, intent, style);
  }
  const total = runs.reduce((a, r) => a + r.most, 0);
  const most = Math.max(...runs.map((r) => r.most));
  const shown = runs.slice(0, Math.max(style.items, 4));
  const parts = shown.map((r) => {
    for (const s of r.segments) t.citeSegment(s);
    return `${numberWord(r.most)} ${span(r.start, r.end)}${t.where(r.videoId)}`;
  });
  const more =
    runs.length > shown.length
      ? ` and ${runs.length - shown.length} more time${runs.length - shown.length > 1 ? 's' : ''}`
      : '';
  const n = labelNoun(label, total);
  return {
    // People counted over time are appearances, not different people (issue 34, class 8): one who
    // leaves and comes back counts again, so the number at once is said first-hand too.
    text: `${capital(numberWord(total))} ${n} appear over time, one appearance after another: ${joinList(parts)}${more} (at most ${numberWord(most)} at once${label === 'person' ? '; someone who leaves and comes back counts again' : ''}).`,
    found: true,
  };
}

async function extremeObject(t: FactContext, label: string, slots: Slots, style: Style): Promise<Answer> {
  const intent = slots.intent;
  if (intent.extreme || intent.number !== null || slots.atOnce) return countAt(t, label, intent, style);
  if (/\b(longest|shortest)\b/i.test(t.prompt)) {
    const spans = (await t.spansOf(label)).sort((a, b) => b.end - b.start - (a.end - a.start));
    const s = /\bshortest\b/i.test(t.prompt) ? spans.at(-1)! : spans[0]!;
    t.citeSegment(s);
    return {
      text: `The ${/\bshortest\b/i.test(t.prompt) ? 'shortest' : 'longest'} time ${article(labelNoun(label))} stays in view is ${span(s.start, s.end)}${t.where(s.videoId)} (${secs(s.end - s.start)}).`,
      found: true,
    };
  }
  return whenSeen(t, label, intent, style);
}

/** Two (or more) videos side by side: how long and how many of the label each shows. */
async function compareObject(t: FactContext, label: string, style: Style): Promise<Answer> {
  const all = await t.spansOf(label);
  // The read stops at the first spans by time (one long video can fill it): then each video's own.
  const capped = all.length >= KIND_READ_LIMIT;
  const holding = new Set(capped ? (await t.finder.withLabel(t.scope.videos, label)).map((v) => v.id) : []);
  const rows: { v: Video; seconds: number; n: number }[] = [];
  for (const v of t.scope.videos) {
    const segs = !capped
      ? all.filter((s) => s.videoId === v.id)
      : holding.has(v.id)
        ? await t.finder.byKind({ videos: [v], window: t.scope.window }, ['object'], { labels: [label] })
        : [];
    const runs = appearances(segs);
    if (segs[0]) t.citeSegment(segs[0]);
    rows.push({ v, seconds: total(segs), n: runs.reduce((a, r) => a + r.most, 0) });
  }
  if (rows.every((r) => r.n === 0)) return await t.notFound(article(labelNoun(label)), style);
  rows.sort((a, b) => b.n - a.n || b.seconds - a.seconds);
  const parts = rows.map(
    (r) =>
      `${r.v.fileName} shows ${r.n ? `${numberWord(r.n)} ${labelNoun(label, r.n)} for ${secs(r.seconds)}` : `no ${labelNoun(label, 2)}`}`,
  );
  return { text: `${rows[0]!.v.fileName} has the most: ${joinList(parts)}.`, found: true };
}

// ---- text ----------------------------------------------------------------------------------

const COLOUR_ASKED = /\b(colou?rs?|colou?red)\b/i;

/** The colour stored with a detection, when the analysis measures colours. */
function colourIn(s: Segment): string | null {
  const x = s.extra as { colour?: unknown; color?: unknown; colours?: unknown } | null;
  const c = x?.colour ?? x?.color ?? (Array.isArray(x?.colours) ? x.colours[0] : null);
  return typeof c === 'string' && c ? c : null;
}

function categoryName(prompt: string): string {
  const m = /\b(animals?|vehicles?|electronic devices?|devices?|furniture|food|drinks?|pets?)\b/i.exec(prompt);
  return m ? m[1]!.toLowerCase().replace(/s$/, '') : 'such thing';
}
