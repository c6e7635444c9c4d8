/** Fact plug-in: Shots (cuts) of the edit: how many, when the scene changes, the longest, which video has most. */
import type { Segment, Video } from '../../storage/rows';
import { formatTime } from '../target';
import { numberWord } from '../vocabulary';
import { capital, joinList, secs, span } from '../wording';
import { summary } from './moment';
import type { FactPlugin, Answer, FactContext, Style, Slots } from './plugin';

export const shots: FactPlugin = {
  kind: 'shots',
  computed: true,
  needsNoVisionModel: true,
  segmentKinds: ['shot'],
  noun: 'shots',
  forms: {
    count: {
      answer: async (t) => await shotCount(t, t.style),
      needs: ['cue'],
      examples: [
        'How many shots does the clip have?',
        'How many cuts are there?',
        'How many scene changes happen?',
        'In how many different scenes is it edited?',
        'How many camera angles are used?',
      ],
    },
    when: {
      answer: async (t, s) => await shotWhen(t, s, t.style),
      readsPosition: true,
      needs: ['cue'],
      examples: [
        'When does the scene change?',
        'At what times are the cuts?',
        'Where are the edits in the video?',
        'When does the second shot begin?',
        'When is there a transition?',
      ],
    },
    extreme: {
      answer: async (t, s) => await shotExtreme(t, s, t.style),
      readsPosition: true,
      needs: ['cue'],
      examples: [
        'Which shot is the longest?',
        'What is the shortest scene?',
        'How long is the longest shot?',
        'When does the final shot start?',
      ],
    },
    compare: {
      answer: async (t, s) => await shotCompare(t, s, t.style),
      needs: ['cue'],
      examples: [
        'Which video has the most cuts?',
        'Does a.mp4 or b.mp4 have more shots?',
        'Which clip is edited with the most scene changes?',
      ],
    },
    describe: {
      answer: (t) => summary(t, t.style),
      needs: ['cue'],
      examples: ['List the scenes in order.', 'What happens in each shot?', 'Break the video down scene by scene.'],
    },
  },
  cue: /\b(shots?|cuts?|scenes?|edits?|transitions?|camera angles?|scene changes?)\b/,
};

// ---- the answers ------------------------------------------------------------------------------

async function shotsOf(t: FactContext, v: Video): Promise<Segment[]> {
  return await t.finder.byKind({ videos: [v], window: t.scope.window }, ['shot']);
}

async function shotCount(t: FactContext, style: Style): Promise<Answer> {
  const parts: string[] = [];
  for (const v of t.scope.videos.slice(0, style.items)) {
    const shots = await shotsOf(t, v);
    if (!shots.length) continue;
    for (const s of shots.slice(1, 8)) t.citeSegment(s);
    if (shots.length === 1) t.citeSegment(shots[0]!);
    const cuts = shots.slice(1).map((s) => formatTime(s.start));
    parts.push(
      `${t.scope.videos.length > 1 ? `${v.fileName}: ` : ''}${numberWord(shots.length)} shot${shots.length === 1 ? '' : 's'}${cuts.length ? ` (cut${cuts.length > 1 ? 's' : ''} at ${joinList(cuts.slice(0, 7))}${cuts.length > 7 ? ' and more' : ''})` : ', no cut'}`,
    );
  }
  if (!parts.length) return await t.notFound('any shot boundaries', style);
  return { text: `${t.scope.videos.length > 1 ? 'Shots: ' : 'The video has '}${parts.join('; ')}.`, found: true };
}

async function shotWhen(t: FactContext, slots: Slots, style: Style): Promise<Answer> {
  const parts: string[] = [];
  for (const v of t.scope.videos.slice(0, style.items)) {
    const shots = await shotsOf(t, v);
    const nth = ordinal(t.prompt);
    if (nth !== null && shots[nth - 1]) {
      const s = shots[nth - 1]!;
      t.citeSegment(s);
      parts.push(`shot ${nth}${t.where(v.id)} runs ${span(s.start, s.end)}`);
      continue;
    }
    const cuts = shots.slice(1);
    for (const s of cuts.slice(0, 8)) t.citeSegment(s);
    if (cuts.length)
      parts.push(
        `the scene changes${t.where(v.id)} at ${joinList(cuts.slice(0, 8).map((s) => formatTime(s.start)))}${cuts.length > 8 ? ' and later' : ''}`,
      );
  }
  if (!parts.length) {
    const all = await Promise.all(t.scope.videos.map(async (v) => await shotsOf(t, v)));
    const at = all.findIndex((shots) => shots.length === 1);
    const one = at >= 0 ? t.scope.videos[at] : undefined;
    if (one) {
      const s = all[at]![0]!;
      t.citeSegment(s);
      return { text: `There is no cut${t.where(one.id)}: it is one shot ${span(s.start, s.end)}.`, found: true };
    }
    return await t.notFound('any cut', style);
  }
  void slots;
  return { text: `${capital(parts.join('; '))}.`, found: true };
}

/** Videos by their number of shots, most first (fewest first when asked). */
async function shotCompare(t: FactContext, slots: Slots, style: Style): Promise<Answer> {
  // "Which video has the longest shot": the shot, not the count.
  if (/\b(longest|shortest|briefest)\b/i.test(t.prompt)) return shotExtreme(t, slots, style);
  const rows = (await Promise.all(t.scope.videos.map(async (v) => ({ v, shots: await shotsOf(t, v) })))).filter(
    (r) => r.shots.length,
  );
  if (!rows.length) return await t.notFound('any shot boundaries', style);
  const few = /\b(fewest|least|less|fewer)\b/i.test(t.prompt);
  rows.sort((a, b) => (few ? a.shots.length - b.shots.length : b.shots.length - a.shots.length));
  const shown = rows.slice(0, Math.max(2, style.items));
  for (const r of shown) t.citeSegment(r.shots[1] ?? r.shots[0]!);
  const n = (k: number) => `${numberWord(k)} shot${k === 1 ? '' : 's'}`;
  return {
    text: `${rows[0]!.v.fileName} has the ${few ? 'fewest' : 'most'} shots (${n(rows[0]!.shots.length)})${shown.length > 1 ? `; then ${joinList(shown.slice(1).map((r) => `${r.v.fileName} (${n(r.shots.length)})`))}` : ''}.`,
    found: true,
  };
}

async function shotExtreme(t: FactContext, slots: Slots, style: Style): Promise<Answer> {
  const shots = (await Promise.all(t.scope.videos.map(async (v) => await shotsOf(t, v)))).flat();
  if (!shots.length) return await t.notFound('any shot', style);
  const p = t.prompt.toLowerCase();
  let s: Segment;
  let what: string;
  if (/\b(shortest|briefest)\b/.test(p))
    [s, what] = [shots.reduce((a, b) => (b.end - b.start < a.end - a.start ? b : a)), 'shortest'];
  else if (/\b(last|final)\b/.test(p) || slots.intent.position === 'last') [s, what] = [shots.at(-1)!, 'last'];
  else if (/\b(first|opening)\b/.test(p)) [s, what] = [shots[0]!, 'first'];
  else [s, what] = [shots.reduce((a, b) => (b.end - b.start > a.end - a.start ? b : a)), 'longest'];
  t.citeSegment(s);
  return {
    text: `The ${what} shot${t.where(s.videoId)} runs ${span(s.start, s.end)} (${secs(s.end - s.start)}; ${s.text}).`,
    found: true,
  };
}

/** "the second shot" → 2. */
function ordinal(prompt: string): number | null {
  const words = ['first', 'second', 'third', 'fourth', 'fifth', 'sixth', 'seventh', 'eighth', 'ninth', 'tenth'];
  const m =
    /\b(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|\d+(?:st|nd|rd|th))\s+(shot|scene|cut)\b/i.exec(
      prompt,
    );
  if (!m) return null;
  const w = m[1]!.toLowerCase();
  const i = words.indexOf(w);
  const n = i >= 0 ? i + 1 : parseInt(w, 10);
  return m[2]!.toLowerCase() === 'cut' ? n + 1 : n;
}
