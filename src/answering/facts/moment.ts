/** Fact plug-in: everything at a moment ("what is on screen") and the account of a whole video ("describe"). */
import type { Segment, Video } from '../../storage/rows';
import { appearances, countsOf, distance, POINT_HALF } from '../series';
import type { Evidence } from '../evidence';
import { noisyText, sureSpeech } from '../noise';
import { formatTime } from '../target';
import { labelNoun, numberWord } from '../vocabulary';
import { capital, detected, joinList, quote, secs, span } from '../wording';
import type { FactPlugin, Answer, FactContext, Style } from './plugin';

export const moment: FactPlugin = {
  kind: 'moment',
  segmentKinds: ['object', 'ocr', 'caption', 'transcript', 'speech'],
  noun: 'anything',
  forms: {
    visible: {
      openEnded: true,
      answer: async (t) => (t.scope.window ? await visible(t, t.style) : await summary(t, t.style)),
      examples: [
        "What's on screen at this point?",
        'What do we see here?',
        "What's happening at that moment?",
        'What is going on right there?',
        'What can be seen in the frame at this time?',
        'What is shown at the two minute mark?',
        'What is visible then?',
      ],
    },
    describe: {
      answer: async (t) => await summary(t, t.style),
      examples: [
        'Describe the video.',
        'Summarise this clip for me.',
        'Give me an overview of the footage.',
        'What is this video about?',
        'Walk me through what happens.',
        'Tell me about this recording in a few sentences.',
        'What happens over the course of the clip?',
      ],
    },
  },
};

// ---- the answers ------------------------------------------------------------------------------

/**
 * "Describe / what happens": per video, the changes in time order, each with its time: things
 * and people arriving and leaving, counts going up or down, text appearing, speech starting and
 * what is said, captions, cuts. Not the labels of every shot.
 */
export async function summary(t: FactContext, style: Style): Promise<Answer> {
  const parts: string[] = [];
  const most = Math.max(6, style.items * 3);
  for (const v of t.scope.videos.slice(0, 5)) {
    const scope = { videos: [v], window: t.scope.window };
    const shots = await t.finder.byKind(scope, ['shot']);
    const read = await t.finder.byKind(scope, ['object', 'ocr', 'caption', 'transcript', 'speech'], { limit: 2000 });
    // On-screen fragments and watermarks are no text to quote (class 8).
    const noisy = await noisyText(t.finder, scope, read);
    const all = read.filter((s) => !noisy.has(s.id));
    const events = changesOf(v, all, shots, scope.window);
    if (!events.length) continue;
    const kept = pickEvents(events, most).sort((x, y) => x.t - y.t);
    const lines = kept.map((e) => {
      t.cite(v.id, e.segment.kind, e.t, e.cite ?? e.t, e.evidence ?? e.segment.text, e.segment.confidence ?? 1);
      return `${span(e.t, e.cite ?? e.t)} ${e.text}`;
    });
    const head = `${t.multi() ? `${v.fileName}: ` : ''}${v.durationSec !== null ? `A video of ${secs(v.durationSec)}` : 'The video'} in ${numberWord(Math.max(1, shots.length))} shot${shots.length > 1 ? 's' : ''}.`;
    const more = events.length > kept.length ? ` (${events.length - kept.length} smaller changes left out)` : '';
    parts.push(`${head} ${capital(lines.join('; '))}${more}.`);
  }
  if (!parts.length) return await t.notFound('anything the analysis recognises', style);
  return { text: parts.join(' '), found: true };
}

/** Everything known at the time asked about: objects and people, text, captions, speech. */
export async function visible(t: FactContext, style: Style): Promise<Answer> {
  const { scope, moment } = t;
  const win = scope.window ?? null;
  const inWin = await t.finder.byKind(scope, ['object', 'ocr', 'caption', 'transcript', 'speech'], { limit: 2000 });
  // A moment: what covers it is cited at that moment (every time in the answer is a cited one).
  const point = win && win.end - win.start <= 2 * POINT_HALF + 0.01 ? (win.start + win.end) / 2 : null;
  const citeIn = (x: Segment) => {
    if (point !== null && x.start <= point && x.end >= point)
      return t.cite(x.videoId, x.kind, point, point, x.text, x.confidence ?? 1);
    return win
      ? t.cite(x.videoId, x.kind, Math.max(x.start, win.start), Math.min(x.end, win.end), x.text, x.confidence ?? 1)
      : t.citeSegment(x);
  };
  const at = (v: string, cited: Evidence[]) => {
    const lead =
      point !== null && cited.some((e) => e.start === point)
        ? `At ${formatTime(point)}`
        : cited.length
          ? `${capital(span(Math.min(...cited.map((e) => e.start)), Math.max(...cited.map((e) => e.end))))}`
          : 'There';
    return lead + t.where(v);
  };
  if (!inWin.length && !moment) return await t.notFound('anything the analysis recognises', style);
  const byVideo = new Map<string, Segment[]>();
  for (const s of inWin) byVideo.set(s.videoId, [...(byVideo.get(s.videoId) ?? []), s]);
  const out: string[] = [];
  let any = false;
  for (const [vid, segs] of [...byVideo.entries()].slice(0, 3)) {
    const bits: string[] = [];
    const captions = segs.filter((s) => s.kind === 'caption');
    const cited: Evidence[] = [];
    for (const c of captions.slice(0, 2)) cited.push(citeIn(c));
    if (captions.length)
      bits.push(
        captions
          .slice(0, 2)
          .map((c) => sentenceInside(c.text))
          .join('; '),
      );
    const objects = new Map<string, { n: number; s: Segment }>();
    for (const o of segs.filter((s) => s.kind === 'object')) {
      const n = maxCountIn(o, win);
      if ((objects.get(o.text)?.n ?? 0) < n) objects.set(o.text, { n, s: o });
    }
    const objs = [...objects.entries()]
      .sort((a, b) => (a[0] === 'person' ? -1 : b[0] === 'person' ? 1 : 0))
      .slice(0, 6);
    for (const [, o] of objs) cited.push(citeIn(o.s));
    if (objs.length) bits.push(`we see ${joinList(objs.map(([l, o]) => detected(l, o.s.confidence, o.n)))}`);
    const noisy = await noisyText(t.finder, t.scope, segs);
    let texts = segs.filter((s) => s.kind === 'ocr' && !noisy.has(s.id));
    if (moment && moment.video.id === vid) {
      const read = (await moment.readText()).slice(0, style.items);
      for (const b of read) cited.push(t.cite(vid, 'ocr', moment.t, moment.t, b.text, b.confidence));
      if (read.length) {
        bits.push(`the screen shows ${joinList(read.map((b) => quote(b.text)))}`);
        texts = [];
      }
    }
    const mid = win ? (win.start + win.end) / 2 : 0;
    texts = texts.sort((a, b) => distance(a, mid) - distance(b, mid)).slice(0, Math.min(style.items, 3));
    for (const x of texts) cited.push(citeIn(x));
    if (texts.length) bits.push(`the screen shows ${joinList(texts.map((x) => quote(x.text)))}`);
    const spoken = segs.filter((s) => s.kind === 'transcript').slice(0, 2);
    // Speech the detector was unsure of may be music: not said as someone speaking (class 8).
    const heard = await t.finder.byKind({ videos: [t.video(vid)], window: null }, ['speech', 'transcript']);
    const speech = sureSpeech(heard).hedged ? [] : segs.filter((s) => s.kind === 'speech');
    for (const s of spoken) cited.push(citeIn(s));
    if (spoken.length) bits.push(`someone says ${joinList(spoken.map((s) => quote(s.text)))}`);
    else if (speech.length) {
      cited.push(citeIn(speech[0]!));
      bits.push('someone is speaking');
    }
    if (!bits.length) continue;
    any = true;
    out.push(`${at(vid, cited)} ${bits.join('; ')}.`);
  }
  if (!any) return await t.notFound('anything the analysis recognises', style);
  return { text: out.join(' '), found: true };
}

/** Most of a label seen in one frame of the window (the span's own maximum without a window). */
function maxCountIn(s: Segment, win: { start: number; end: number } | null): number {
  // Weak and duplicate detections are not counted as more at once (class 8).
  const { counts, most } = countsOf(s);
  if (!counts.length) return most;
  const inside = win ? counts.filter(([t]) => t >= win.start - 1 && t <= win.end + 1) : counts;
  return Math.max(1, ...(inside.length ? inside : counts).map(([, n]) => n));
}

/** One change of a video: when, what (words), and the segment that shows it. */
interface Change {
  t: number;
  /** End of the cited span, when the change is a span (a caption, a line said). */
  cite?: number;
  text: string;
  segment: Segment;
  /** The evidence text, when not the segment's own. */
  evidence?: string;
  /** Lower: kept first when there are too many. */
  rank: number;
}

/** The changes of one video in time order (see summary). */
function changesOf(v: Video, all: Segment[], shots: Segment[], win: { start: number; end: number } | null): Change[] {
  const out: Change[] = [];
  const end = v.durationSec ?? Infinity;
  const inWin = (t: number) => !win || (t >= win.start - 0.01 && t <= win.end + 0.01);
  const byLabel = new Map<string, Segment[]>();
  for (const s of all.filter((x) => x.kind === 'object')) byLabel.set(s.text, [...(byLabel.get(s.text) ?? []), s]);
  for (const [label, spans] of byLabel) {
    for (const app of appearances(spans)) {
      const first = app.segments[0]!;
      const conf = Math.max(...app.segments.map((s) => s.confidence ?? 1));
      const counts = app.segments.flatMap((s) => countsOf(s).counts);
      const n0 = counts[0]?.[1] ?? 1;
      // Asked about a window: what is already in view when it starts is told first.
      if (win && app.start < win.start && app.end >= win.start) {
        const before = counts.filter(([t]) => t <= win.start).at(-1)?.[1] ?? n0;
        out.push({
          t: win.start,
          text: `${detected(label, conf, before)} in view`,
          segment: first,
          evidence: label,
          rank: 1,
        });
      }
      if (inWin(app.start))
        out.push({
          t: app.start,
          text: `${detected(label, conf, n0)} ${app.start < 0.5 ? 'in view' : n0 === 1 ? 'appears' : 'appear'}`,
          segment: first,
          evidence: label,
          rank: 1,
        });
      // Counts going up or down, once the new count holds for two samples.
      let cur = n0;
      const sorted = [...counts].sort((a, b) => a[0] - b[0]);
      for (let i = 1; i < sorted.length; i++) {
        const [t, n] = sorted[i]!;
        if (n === cur || sorted[i + 1]?.[1] !== n) continue;
        if (inWin(t))
          out.push({
            t,
            text: `the ${labelNoun(label, 2)} go from ${numberWord(cur)} to ${numberWord(n)}`,
            segment: first,
            evidence: `${n} ${labelNoun(label, n)}`,
            rank: 2,
          });
        cur = n;
      }
      if (app.end < end - 1 && inWin(app.end))
        out.push({
          t: app.end,
          text: `the ${labelNoun(label, cur)} ${cur === 1 ? 'leaves' : 'leave'} the picture`,
          segment: app.segments.at(-1)!,
          evidence: label,
          rank: 3,
        });
    }
  }
  const texts = new Set<string>();
  for (const s of all.filter((x) => x.kind === 'ocr')) {
    const key = s.text.toLowerCase().replace(/\s+/g, ' ');
    if (texts.has(key) || !inWin(s.start)) continue;
    texts.add(key);
    out.push({ t: s.start, text: `the text ${quote(s.text)} appears`, segment: s, rank: 2 });
  }
  const transcripts = all.filter((x) => x.kind === 'transcript');
  const heard = all.filter((x) => x.kind === 'speech');
  const speech = sureSpeech(heard).hedged ? [] : heard;
  if (transcripts.length)
    for (const s of transcripts.slice(0, 3))
      out.push({ t: s.start, cite: s.end, text: `someone says ${quote(s.text)}`, segment: s, rank: 1 });
  else if (speech.length && inWin(speech[0]!.start))
    out.push({ t: speech[0]!.start, text: 'someone starts speaking', segment: speech[0]!, rank: 2 });
  for (const c of all.filter((x) => x.kind === 'caption'))
    out.push({ t: c.start, cite: c.end, text: sentenceInside(c.text), segment: c, rank: 0 });
  for (const s of shots.slice(1))
    if (inWin(s.start)) out.push({ t: s.start, text: 'the scene cuts to a new shot', segment: s, rank: 4 });
  return out.sort((a, b) => a.t - b.t);
}

/** The `most` changes to tell: by rank (captions and arrivals before cuts), in time order. */
function pickEvents(events: Change[], most: number): Change[] {
  return [...events].sort((a, b) => a.rank - b.rank || a.t - b.t).slice(0, most);
}

/** A caption as part of a sentence: no full stop, and "A dog…" as "a dog…". */
function sentenceInside(text: string): string {
  return text
    .trim()
    .replace(/\.$/, '')
    .replace(/^(A|An|The|Two|Three|Some)\b/, (w) => w.toLowerCase());
}
