/**
 * Composes the answer a careful person would write from the evidence, without a generative model.
 * The question reader (reader.ts) says which cell of the fact table (facts.ts) it asks about; each
 * cell's handler here answers it: counts over time from detections, spans for "when", quotes for
 * what is written or said, everything visible at a moment, an ordered account of the shots for
 * "describe", file facts from the video row. Every time in the answer is the time of an evidence
 * item. When the evidence does not support an answer it says so ("I could not find ...") and what
 * the video does contain.
 */
import type { Embedder } from '../analysis/embedder';
import type { Segment, Video } from '../storage/schema';
import type { Evidence, EvidenceFinder, ScopeWindow } from './evidence';
import type { Cell, FactKind } from './facts';
import { readIntent, type Intent } from './intent';
import { colourOnClothing, labelNoun, NAMES_NO_THING, namesLabel, numberWord } from './vocabulary';
import { readQuestion, type ReadQuestion, type Slots, type TimeSlot } from './reader';
import { formatTime } from './target';
import { article, capital, joinList, quote, secs, span } from './wording';

export interface Composed {
  output: string;
  evidence: Evidence[];
  /** False when the answer is "could not find". */
  found: boolean;
  /** How the question was read ("fact.form" of the fact table), for tests and logs. */
  reading?: string;
}

export interface Answer {
  text: string;
  found: boolean;
}

export interface ComposeInput {
  prompt: string;
  guidance: string;
  scope: ScopeWindow;
  finder: EvidenceFinder;
  /** Signs a frame path for the evidence list (null when the video has no such frame). */
  frameUrl: (videoId: string, file: string) => string;
  /**
   * For a question about one moment (a point `target`) of one video: reads the text on screen at
   * exactly that moment (the sampled frames may be seconds away). Null when there is no such moment.
   */
  moment?: { video: Video; t: number; readText: () => Promise<{ text: string; confidence: number }[]> } | null;
  /** The sentence encoder: reads the kind of question by meaning (null: by its rule cues alone). */
  embedder?: Embedder | null;
}

export interface Style {
  /** Items listed at most (spans, quotes, shots). */
  items: number;
  /** One sentence only. */
  brief: boolean;
}

function styleOf(guidance: string): Style {
  const g = guidance.toLowerCase();
  if (/\b(short|brief|briefly|concise|one sentence|few words|one word|tl;?dr)\b/.test(g))
    return { items: 1, brief: true };
  if (/\b(detail|detailed|details|long|thorough|elaborate|exhaustive|all of|everything|complete)\b/.test(g))
    return { items: 10, brief: false };
  return { items: 4, brief: false };
}

interface Counted {
  video: Video;
  t: number;
  n: number;
  segment: Segment | null;
}

export class Composer {
  constructor(private readonly c: ComposeInput) {}

  private evidence: Evidence[] = [];
  /** Content words of the question being answered (set per reading), for the caption fallback. */
  private keywords: string[] = [];
  /** The question's embedding, reused by the evidence search. */
  private vector: Float32Array | null = null;
  private readonly multi = () => this.c.scope.videos.length > 1;

  video(id: string): Video {
    return this.c.scope.videos.find((v) => v.id === id)!;
  }
  where(videoId: string): string {
    return this.multi() ? ` in ${this.video(videoId).fileName}` : '';
  }

  /** Adds an evidence item (deduplicated) and returns it. */
  cite(videoId: string, kind: Segment['kind'], start: number, end: number, text: string, score: number): Evidence {
    const found = this.evidence.find(
      (e) => e.video_id === videoId && e.kind === kind && e.start === start && e.end === end && e.text === text,
    );
    if (found) return found;
    const frame = this.c.finder.frameNear(videoId, (start + end) / 2);
    const e: Evidence = {
      video_id: videoId,
      file_name: this.video(videoId).fileName,
      start,
      end,
      kind,
      text,
      score: Math.round(score * 1000) / 1000,
      frame_url: frame ? this.c.frameUrl(videoId, frame) : null,
    };
    this.evidence.push(e);
    return e;
  }
  citeSegment(s: Segment, score = s.confidence ?? 1): Evidence {
    return this.cite(s.videoId, s.kind, s.start, s.end, s.text, score);
  }

  async compose(): Promise<Composed> {
    const { prompt, guidance, scope } = this.c;
    const style = styleOf(guidance);
    if (scope.videos.length === 0)
      return {
        output: 'The index holds no videos yet, so there is nothing to answer from.',
        evidence: [],
        found: false,
      };
    const read = await readQuestion(prompt, scope.videos, this.c.embedder ?? null);
    this.vector = read.vector;
    const intent = read.slots.intent;
    // Guidance steers the focus too: its content words join the search.
    const focus = readIntent(guidance);
    intent.keywords.push(...focus.keywords.filter((k) => !intent.keywords.includes(k)));
    const pending = scope.videos.filter((v) => v.status !== 'ready');
    const sentences = await this.answer(read, style);
    if (pending.length && !sentences.found) {
      sentences.text += ` (${pending.map((v) => `${v.fileName} is still ${v.status}`).join('; ')}: ask again when it is ready.)`;
    }
    // Wording rule: a colour describes clothing or things, never a person.
    let output = colourOnClothing(sentences.text.trim());
    if (style.brief) output = output.split(/(?<=[.!?])\s/)[0]!;
    return {
      output,
      evidence: this.evidence.sort((a, b) => b.score - a.score),
      found: sentences.found,
      reading: sentences.reading,
    };
  }

  /**
   * The question's slots narrow its scope (a file name, a time written in the text); then the
   * readings are tried best first, and the first that finds an answer is the answer: when two
   * readings fit, the evidence decides. With none finding anything, the best reading's "not found".
   */
  async answer(read: ReadQuestion, style: Style): Promise<Answer & { reading: string }> {
    const base = this.c.scope;
    const slots = read.slots;
    const compare = read.readings[0]!.cell.form === 'compare' || slots.files.length >= 2;
    if (slots.files.length && base.videos.length > 1)
      this.c.scope = { videos: compare ? slots.files : [slots.files[0]!], window: base.window };
    const narrowed = this.c.scope;
    // A time written in the question narrows it like a `target`; one past the end is said so.
    if (!narrowed.window && slots.time && 'point' in slots.time) {
      const t = slots.time.start;
      const known = narrowed.videos.filter((v) => v.durationSec !== null);
      if (known.length && known.every((v) => t > v.durationSec! + 0.5)) {
        const longest = known.reduce((a, b) => (b.durationSec! > a.durationSec! ? b : a));
        return {
          text: `I could not find anything ${secs(t)} into the video: ${known.length === 1 ? `${longest.fileName} is only` : `the longest of these videos, ${longest.fileName}, is`} ${secs(longest.durationSec!)} long.`,
          found: false,
          reading: 'time.past_end',
        };
      }
    }
    let first: (Answer & { reading: string }) | null = null;
    // A question no cell of the table fits ("PEACH OPEN MOVIE", "anything about pancakes?") is a
    // search: its words and meaning against every segment. Its "not found" is the answer.
    // Without the encoder the score is cues alone: only a question with no cue at all is a search.
    if (read.vector ? read.readings[0]!.score < LOW_FIT : read.readings[0]!.score <= 0) {
      const res = await this.general(slots.intent, style, this.c.scope.videos.length > 1);
      return { ...res, reading: 'search' };
    }
    const best = read.readings[0]!.cell;
    // Another reading is tried only where it is a near reading of the same question: the same fact
    // in another form, objects for people, or the same form of a fact the question's words name too
    // ("what does the writing say": text or speech) or do not rule out. A question about text is not
    // answered with the objects it mentions: labels alone do not open the objects reading.
    const related = (c: Cell) =>
      c === best ||
      c.fact === best.fact ||
      (OBJECTS.has(c.fact) && OBJECTS.has(best.fact)) ||
      (c.form === best.form &&
        (!slots.factCues.has(best.fact) || (slots.factCues.has(c.fact) && !OBJECTS.has(c.fact))));
    // A question that names a thing ("is there a kayak?") is not answered about speech or sound
    // unless its words ask about them: "Yes: someone speaks" answers nothing it asked.
    const namesThing = slots.intent.keywords.some((w) => !NAMES_NO_THING.has(w) && !/^\d/.test(w));
    const heard = (c: Cell) => (c.fact === 'speech' || c.fact === 'audio') && namesThing && !slots.factCues.has(c.fact);
    const tried = read.readings.filter((x) => related(x.cell));
    const kept = tried.filter((x) => !heard(x.cell));
    for (const r of kept.length ? kept : tried) {
      this.evidence = [];
      this.c.scope = narrowed;
      // Relative times ("at the end") narrow only answers that have no sense of position of their own.
      if (!narrowed.window && slots.time && ('point' in slots.time || !r.cell.readsPosition)) {
        const w = resolveTime(slots.time, narrowed.videos);
        if (w) this.c.scope = { ...narrowed, window: w };
      }
      const res = await this.run(r.cell, slots, style);
      const out = { ...res, reading: `${r.cell.fact}.${r.cell.form}` };
      if (res.found) return out;
      first ??= { ...out, evidence: this.evidence } as Answer & { reading: string; evidence: Evidence[] };
    }
    this.evidence = (first as unknown as { evidence: Evidence[] }).evidence;
    return first!;
  }

  /** The style of the answer (how many items, one sentence or more), from the guidance. */
  style: Style = styleOf('');

  /** The scope the answer looks at now (narrowed by the question's file names and times). */
  get scope(): ScopeWindow {
    return this.c.scope;
  }

  /** The question as asked. */
  get prompt(): string {
    return this.c.prompt;
  }

  /** The segments of the index, by kind (see RetrievalCore.finder). */
  get finder(): EvidenceFinder {
    return this.c.finder;
  }

  run(cell: Cell, slots: Slots, style: Style): Answer | Promise<Answer> {
    this.keywords = slots.intent.keywords;
    this.style = style;
    return cell.answer(this, slots, cell);
  }

  /** The label an object question is about (the person for people), its colour when asked, else `f` on it. */
  aboutLabel(slots: Slots, cell: Cell, f: (label: string) => Answer | Promise<Answer>): Answer | Promise<Answer> {
    const intent = slots.intent;
    const named = intent.labels.filter((l) => l !== 'person' || !intent.categoryLabels.length);
    const label =
      (cell.fact === 'people' ? 'person' : undefined) ?? named.filter((l) => l !== 'dining table')[0] ?? named[0];
    // "What colour is the car": whichever object reading it got, it asks for a colour.
    if (named.length && COLOUR_ASKED.test(this.c.prompt))
      return this.withLabels(named, label, this.style, (l) => this.colourOf(l, this.style));
    return this.withLabels(named, label, this.style, f);
  }

  /** "What animal is there", "what is the dog standing on", "what is there". */
  objectsWhat(slots: Slots, cell: Cell): Answer | Promise<Answer> {
    const intent = slots.intent;
    const named = intent.labels.filter((l) => l !== 'person' || !intent.categoryLabels.length);
    if (intent.categoryLabels.length) return this.objectsOf(intent.categoryLabels, this.style, intent);
    if (named.length && COLOUR_ASKED.test(this.c.prompt))
      return this.aboutLabel(slots, cell, () => this.visible(this.style));
    if (named.length) return this.companions(named, this.style);
    return this.visible(this.style);
  }

  /** Runs `f` on the label asked about when the index has it; "not found" (with what is there) when not. */
  withLabels(
    named: string[],
    label: string | undefined,
    style: Style,
    f: (label: string) => Answer | Promise<Answer>,
  ): Answer | Promise<Answer> {
    // Things the detector has no label for, or never saw, may still be named by a caption (issue 11).
    // Things the detector has no label for, or never saw, may still be named by a caption: answer.ts reads those.
    if (!label) return this.notFound('what the question names', style);
    const asked = named.length ? named : [label];
    const present = asked.filter(
      (l) => this.c.finder.byKind(this.c.scope, ['object'], { labels: [l], limit: 1 }).length > 0,
    );
    const missing = asked.filter((l) => !present.includes(l));
    // The question is about something that was never detected: say so rather than answer about something else.
    if (!present.includes(label) || (missing.length && !(missing.length === 1 && missing[0] === 'dining table'))) {
      return this.notFound((missing.length ? missing : [label]).map((l) => article(labelNoun(l))).join(' or '), style);
    }
    return f(label);
  }

  // ---- object questions -------------------------------------------------------------------

  spansOf(label: string): Segment[] {
    return this.c.finder.byKind(this.c.scope, ['object'], { labels: [label] });
  }

  when(label: string, intent: Intent, style: Style, presence = false): Answer {
    let spans = this.spansOf(label);
    if (intent.position === 'first' || intent.position === 'start') spans = spans.slice(0, 1);
    else if (intent.position === 'last' || intent.position === 'end') spans = spans.slice(-1);
    const shown = spans.slice(0, style.items);
    const noun = labelNoun(label);
    const parts = shown.map((s) => {
      this.citeSegment(s);
      return `${span(s.start, s.end)}${onTrack(s)}${this.where(s.videoId)}`;
    });
    const more =
      spans.length > shown.length
        ? ` (and ${spans.length - shown.length} more time${spans.length - shown.length > 1 ? 's' : ''})`
        : '';
    if (intent.position === 'first' || intent.position === 'start') {
      const s = shown[0]!;
      return {
        text: `The first ${noun} appears at ${formatTime(s.start)}${this.where(s.videoId)} and is visible until ${formatTime(s.end)}.`,
        found: true,
      };
    }
    // "Yes" only answers a yes/no question ("who is there?" is not one).
    const seen = detected(label, Math.max(...spans.map((x) => x.confidence ?? 1)));
    const lead = presence && YES_NO.test(this.c.prompt) ? `Yes: ${seen} is visible` : `${capital(seen)} is visible`;
    return { text: `${lead} ${joinList(parts)}${more}.`, found: true };
  }

  /** Per-frame counts of a label over the scope (each point keeps the span it belongs to). */
  series(label: string): Counted[] {
    const out: Counted[] = [];
    const win = this.c.scope.window;
    const spans = this.spansOf(label);
    for (const v of this.c.scope.videos) {
      const segs = spans.filter((s) => s.videoId === v.id);
      const counts = new Map<number, { n: number; s: Segment }>();
      for (const s of segs) {
        const all = (s.extra as { counts?: [number, number][] } | null)?.counts ?? [[s.start, 1]];
        // A moment (a target, or a time in the question) governs the count: only the frames inside it.
        const pts = win ? inWindow(all, win) : all;
        for (const [t, n] of pts) if ((counts.get(t)?.n ?? -1) < n) counts.set(t, { n, s });
      }
      for (const [t, { n, s }] of counts) out.push({ video: v, t, n, segment: s });
    }
    return out.sort((a, b) => (a.video.id === b.video.id ? a.t - b.t : a.video.id < b.video.id ? -1 : 1));
  }

  count(label: string, intent: Intent, style: Style): Answer {
    const pts = this.series(label);
    if (pts.length === 0) return this.notFound(article(labelNoun(label)), style);
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
        this.cite(r.video.id, 'object', r.start, r.end, `${intent.number} ${noun(intent.number!)}`, 1);
        return `${span(r.start, r.end)}${this.where(r.video.id)}`;
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
        this.cite(r.video.id, 'object', r.start, r.end, `${best} ${noun(best)}`, 1);
        return `${span(r.start, r.end)}${this.where(r.video.id)}`;
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
    if (this.c.scope.window) {
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
    this.cite(run[0]!.video.id, 'object', start, end, `${n} ${noun(n)}`, 1);
    const varies =
      !when && new Set(pts.map((p) => p.n)).size > 1
        ? ` (the number changes over the video: between ${numberWord(Math.min(...pts.map((p) => p.n)))} and ${numberWord(Math.max(...pts.map((p) => p.n)))})`
        : '';
    return {
      text: `There ${n === 1 ? 'is' : 'are'} ${numberWord(n)} ${noun(n)}${when}, ${span(start, end)}${this.where(run[0]!.video.id)}${varies}.`,
      found: true,
    };
  }

  whichVideo(label: string, style: Style): Answer {
    const spans = this.spansOf(label);
    const byVideo = new Map<string, Segment[]>();
    for (const s of spans) byVideo.set(s.videoId, [...(byVideo.get(s.videoId) ?? []), s]);
    const parts = [...byVideo.entries()].slice(0, style.items).map(([vid, segs]) => {
      const s = segs.sort((a, b) => b.end - b.start - (a.end - a.start))[0]!;
      this.citeSegment(s);
      return `${this.video(vid).fileName} (${span(s.start, s.end)})`;
    });
    return { text: `${capital(article(labelNoun(label)))} is seen in ${joinList(parts)}.`, found: true };
  }

  objectsOf(labels: string[], style: Style, intent: Intent): Answer {
    const segs = this.c.finder.byKind(this.c.scope, ['object'], { labels });
    if (segs.length === 0) return this.notFound(`any ${categoryName(this.c.prompt)}`, style);
    const byLabel = new Map<string, Segment[]>();
    for (const s of segs) byLabel.set(s.text, [...(byLabel.get(s.text) ?? []), s]);
    const ranked = [...byLabel.entries()].sort((a, b) => total(b[1]) - total(a[1]));
    const parts = ranked.slice(0, style.items).map(([label, ss]) => {
      const s = ss.sort((a, b) => b.end - b.start - (a.end - a.start))[0]!;
      this.citeSegment(s);
      return `${detected(label, Math.max(...ss.map((x) => x.confidence ?? 1)))} (${span(s.start, s.end)}${this.where(s.videoId)})`;
    });
    const verb = intent.needs.has('which_video') ? 'is seen in' : 'The video shows';
    if (intent.needs.has('which_video'))
      return { text: `${capital(parts.join(', '))} ${verb} the index.`, found: true };
    return { text: `${verb} ${joinList(parts)}.`, found: true };
  }

  companions(named: string[], style: Style): Answer {
    const subject = named[0]!;
    const mine = this.spansOf(subject);
    if (mine.length === 0) return this.notFound(article(labelNoun(subject)), style);
    const others = this.c.finder
      .byKind(this.c.scope, ['object'])
      .filter(
        (s) =>
          s.text !== subject && s.text !== 'person' && mine.some((m) => m.videoId === s.videoId && overlap(m, s) > 0),
      );
    if (others.length === 0)
      return {
        text: `I could not find anything detected together with the ${labelNoun(subject)}; the ${labelNoun(subject)} is visible ${span(mine[0]!.start, mine[0]!.end)}.`,
        found: false,
      };
    const byLabel = new Map<string, number>();
    for (const o of others)
      byLabel.set(o.text, (byLabel.get(o.text) ?? 0) + Math.max(...mine.map((m) => overlap(m, o))));
    const best = [...byLabel.entries()].sort((a, b) => b[1] - a[1]).slice(0, Math.max(1, Math.min(style.items, 2)));
    const parts = best.map(([label]) => {
      const s = others.filter((o) => o.text === label).sort((a, b) => b.end - b.start - (a.end - a.start))[0]!;
      this.citeSegment(s);
      return `${detected(label, s.confidence)} (${span(s.start, s.end)}${this.where(s.videoId)})`;
    });
    this.citeSegment(mine[0]!);
    return { text: `The ${labelNoun(subject)} is seen together with ${joinList(parts)}.`, found: true };
  }

  // ---- text and speech --------------------------------------------------------------------

  async written(intent: Intent, style: Style): Promise<Answer> {
    const { scope, moment } = this.c;
    if (moment) {
      // "What is displayed at this moment?": the frame at that moment, read now.
      const blocks = (await moment.readText()).slice(0, style.items);
      if (blocks.length) {
        for (const b of blocks) this.cite(moment.video.id, 'ocr', moment.t, moment.t, b.text, b.confidence);
        return {
          text: `At ${formatTime(moment.t)}${this.where(moment.video.id)} the screen shows ${joinList(blocks.map((b) => quote(b.text)))}.`,
          found: true,
        };
      }
    }
    let ocr = this.c.finder.byKind(scope, ['ocr']);
    if (ocr.length === 0) return this.notFound('any text on screen', style);
    // "What is written on the cake": text on a thing that was never seen is not some other text of the video.
    const things = intent.labels.filter((l) => l !== 'person');
    if (things.length && !things.some((l) => this.spansOf(l).length || ocr.some((o) => namesLabel(o.text, l))))
      return this.notFound(`${article(labelNoun(things[0]!))} with text on it`, style);
    const ranked = await this.c.finder.ranked(scope, this.c.prompt, intent, 20, this.vector);
    const rankedOcr = ranked.filter((r) => r.segment.kind === 'ocr');
    let chosen: Segment[];
    if (scope.window) {
      // "What is displayed at this moment?": what was on screen nearest the moment.
      const mid = (scope.window.start + scope.window.end) / 2;
      chosen = ocr.sort((a, b) => distance(a, mid) - distance(b, mid)).slice(0, style.items);
    } else if (intent.position === 'end' || intent.position === 'last') {
      const v = this.video(ocr.at(-1)!.videoId);
      const end = v.durationSec ?? ocr.at(-1)!.end;
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
    const parts = chosen.map((s) => {
      this.citeSegment(s);
      return `${quote(s.text)} ${span(s.start, s.end)}${this.where(s.videoId)}`;
    });
    return { text: `The screen shows ${joinList(parts)}.`, found: true };
  }

  async said(intent: Intent, style: Style): Promise<Answer> {
    const { scope } = this.c;
    const transcripts = this.c.finder.byKind(scope, ['transcript']);
    if (transcripts.length) {
      const ranked = (await this.c.finder.ranked(scope, this.c.prompt, intent, 20, this.vector))
        .filter((r) => r.segment.kind === 'transcript')
        .map((r) => r.segment);
      const chosen = (ranked.length ? ranked : transcripts)
        .slice(0, Math.max(1, style.items - 1))
        .sort((a, b) => a.start - b.start);
      const parts = chosen.map((s) => {
        this.citeSegment(s);
        return `${span(s.start, s.end)}${onTrack(s)}${this.where(s.videoId)}: ${quote(s.text)}`;
      });
      return { text: `The speaker says, ${parts.join('; ')}.`, found: true };
    }
    const speech = this.c.finder.byKind(scope, ['speech']);
    if (speech.length) {
      const first = speech[0]!;
      const last = speech.at(-1)!;
      this.citeSegment(first);
      if (last !== first) this.citeSegment(last);
      return {
        text: `I could not find what is said: someone speaks ${span(first.start, last.end)}${onTrack(first)}${this.where(first.videoId)}, but the speech was not transcribed (no speech-to-text model is installed; see "vidq models pull").`,
        found: false,
      };
    }
    return this.notFound('any speech', style);
  }

  // ---- whole-video questions ----------------------------------------------------------------

  /**
   * "Describe / what happens": per video, the changes in time order, each with its time: things
   * and people arriving and leaving, counts going up or down, text appearing, speech starting and
   * what is said, captions, cuts. Not the labels of every shot.
   */
  summary(style: Style): Answer {
    const parts: string[] = [];
    const most = Math.max(6, style.items * 3);
    for (const v of this.c.scope.videos.slice(0, 5)) {
      const scope = { videos: [v], window: this.c.scope.window };
      const shots = this.c.finder.byKind(scope, ['shot']);
      const all = this.c.finder.byKind(scope, ['object', 'ocr', 'caption', 'transcript', 'speech'], { limit: 2000 });
      const events = changesOf(v, all, shots, scope.window);
      if (!events.length) continue;
      const kept = pickEvents(events, most).sort((x, y) => x.t - y.t);
      const lines = kept.map((e) => {
        this.cite(v.id, e.segment.kind, e.t, e.cite ?? e.t, e.evidence ?? e.segment.text, e.segment.confidence ?? 1);
        return `${span(e.t, e.cite ?? e.t)} ${e.text}`;
      });
      const head = `${this.multi() ? `${v.fileName}: ` : ''}${v.durationSec !== null ? `A video of ${secs(v.durationSec)}` : 'The video'} in ${numberWord(Math.max(1, shots.length))} shot${shots.length > 1 ? 's' : ''}.`;
      const more = events.length > kept.length ? ` (${events.length - kept.length} smaller changes left out)` : '';
      parts.push(`${head} ${capital(lines.join('; '))}${more}.`);
    }
    if (!parts.length) return this.notFound('anything the analysis recognises', style);
    return { text: parts.join(' '), found: true };
  }

  async general(intent: Intent, style: Style, byVideo: boolean): Promise<Answer> {
    const ranked = await this.c.finder.ranked(this.c.scope, this.c.prompt, intent, 12, this.vector);
    // Only keyword matches or close semantic ones count as support; a bare shot boundary never does.
    // Rank alone says nothing about relevance (the best of a large index is always first): support
    // needs a word of the question or a close meaning.
    const useful = ranked.filter((r) => r.segment.kind !== 'shot' && (r.keyword || (r.cosine ?? 0) >= SUPPORT_COSINE));
    if (useful.length === 0) return this.notFound('an answer to that', style);
    const parts = useful.slice(0, style.items).map(({ segment: s, score }) => {
      this.citeSegment(s, score);
      return sentenceFor(s, this.where(s.videoId), byVideo ? this.video(s.videoId).fileName : null);
    });
    return { text: parts.join(' '), found: true };
  }

  /**
   * "What colour is the car?": the colour the analysis stored with the detection (extra.colour or
   * extra.color), else "not found" that says colours are not measured, with where the object is.
   */
  colourOf(label: string, style: Style): Answer {
    const spans = this.spansOf(label);
    const coloured = spans.map((s) => ({ s, c: colourIn(s) })).filter((x): x is { s: Segment; c: string } => !!x.c);
    if (coloured.length) {
      const parts = coloured.slice(0, style.items).map(({ s, c }) => {
        this.citeSegment(s);
        return `${c} ${span(s.start, s.end)}${this.where(s.videoId)}`;
      });
      return { text: `The ${labelNoun(label)} is ${joinList(parts)}.`, found: true };
    }
    const s = spans[0]!;
    this.citeSegment(s);
    return {
      text: `I could not find the colour of the ${labelNoun(label)}: the analysis did not measure colours here. ${capital(article(labelNoun(label)))} is visible ${span(s.start, s.end)}${this.where(s.videoId)}.`,
      found: false,
    };
  }

  // ---- counting over time, extremes, comparisons ------------------------------------------------

  /**
   * "How many cars appear": the different appearances over time (each run of the label, with as
   * many as are seen at once in it), not the most in one frame. One continuous run, a moment, "at
   * once", or a number asked about: the count at a moment.
   */
  countObjects(label: string, slots: Slots, style: Style): Answer {
    const intent = slots.intent;
    const runs = appearances(this.spansOf(label));
    if (
      slots.atOnce ||
      intent.extreme ||
      this.c.scope.window ||
      intent.position ||
      runs.length <= 1 ||
      (intent.number !== null && intent.needs.has('when'))
    ) {
      return this.count(label, intent, style);
    }
    const total = runs.reduce((a, r) => a + r.most, 0);
    const most = Math.max(...runs.map((r) => r.most));
    const shown = runs.slice(0, Math.max(style.items, 4));
    const parts = shown.map((r) => {
      for (const s of r.segments) this.citeSegment(s);
      return `${numberWord(r.most)} ${span(r.start, r.end)}${this.where(r.videoId)}`;
    });
    const more =
      runs.length > shown.length
        ? ` and ${runs.length - shown.length} more time${runs.length - shown.length > 1 ? 's' : ''}`
        : '';
    const n = labelNoun(label, total);
    return {
      text: `${capital(numberWord(total))} ${n} appear over time, one appearance after another: ${joinList(parts)}${more} (at most ${numberWord(most)} at once).`,
      found: true,
    };
  }

  extremeObject(label: string, slots: Slots, style: Style): Answer {
    const intent = slots.intent;
    if (intent.extreme || intent.number !== null || slots.atOnce) return this.count(label, intent, style);
    if (/\b(longest|shortest)\b/i.test(this.c.prompt)) {
      const spans = this.spansOf(label).sort((a, b) => b.end - b.start - (a.end - a.start));
      const s = /\bshortest\b/i.test(this.c.prompt) ? spans.at(-1)! : spans[0]!;
      this.citeSegment(s);
      return {
        text: `The ${/\bshortest\b/i.test(this.c.prompt) ? 'shortest' : 'longest'} time ${article(labelNoun(label))} stays in view is ${span(s.start, s.end)}${this.where(s.videoId)} (${secs(s.end - s.start)}).`,
        found: true,
      };
    }
    return this.when(label, intent, style);
  }

  /** Two (or more) videos side by side: how long and how many of the label each shows. */
  compareObject(label: string, style: Style): Answer {
    const rows = this.c.scope.videos.map((v) => {
      const segs = this.spansOf(label).filter((s) => s.videoId === v.id);
      const runs = appearances(segs);
      if (segs[0]) this.citeSegment(segs[0]);
      return { v, seconds: total(segs), n: runs.reduce((a, r) => a + r.most, 0) };
    });
    if (rows.every((r) => r.n === 0)) return this.notFound(article(labelNoun(label)), style);
    rows.sort((a, b) => b.n - a.n || b.seconds - a.seconds);
    const parts = rows.map(
      (r) =>
        `${r.v.fileName} shows ${r.n ? `${numberWord(r.n)} ${labelNoun(label, r.n)} for ${secs(r.seconds)}` : `no ${labelNoun(label, 2)}`}`,
    );
    return { text: `${rows[0]!.v.fileName} has the most: ${joinList(parts)}.`, found: true };
  }

  // ---- text ----------------------------------------------------------------------------------

  /** OCR segments that match the question's quoted or content words (spaces and case aside), else all. */
  textMatches(intent: Intent, slots: Slots): { segs: Segment[]; matched: boolean; asked: boolean } {
    const all = this.c.finder.byKind(this.c.scope, ['ocr']);
    const squash = (s: string) => s.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');
    const wanted = (slots.quoted.length ? slots.quoted : intent.keywords.filter((k) => !TEXT_WORDS.has(k)))
      .map(squash)
      .filter((w) => w.length >= 3);
    const hits = wanted.length ? all.filter((s) => wanted.some((w) => squash(s.text).includes(w))) : [];
    return hits.length
      ? { segs: hits, matched: true, asked: true }
      : { segs: all, matched: false, asked: wanted.length > 0 };
  }

  textWhen(intent: Intent, slots: Slots, style: Style, presence = false): Answer {
    const { segs, matched, asked } = this.textMatches(intent, slots);
    // Words the text must hold ("is there a kayak", "when does SALE appear") that no text holds: not found.
    if (!segs.length || (asked && !matched))
      return this.notFound(
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
      this.citeSegment(s);
      return `${quote(s.text)} ${span(s.start, s.end)}${this.where(s.videoId)}`;
    });
    const more = chosen.length > style.items ? ` (and ${chosen.length - style.items} more)` : '';
    return {
      text: `${presence && YES_NO.test(this.c.prompt) ? 'Yes: the' : 'The'} screen shows ${joinList(parts)}${more}.`,
      found: true,
    };
  }

  textWhich(intent: Intent, slots: Slots, style: Style): Answer {
    const { segs, matched, asked } = this.textMatches(intent, slots);
    if (!segs.length || (asked && !matched)) return this.notFound('such text on screen', style);
    const byVideo = new Map<string, Segment>();
    for (const s of bestText(segs)) if (!byVideo.has(s.videoId)) byVideo.set(s.videoId, s);
    const parts = [...byVideo.values()].slice(0, style.items).map((s) => {
      this.citeSegment(s);
      return `${this.video(s.videoId).fileName} (${quote(s.text)} ${span(s.start, s.end)})`;
    });
    return { text: `Text is shown in ${joinList(parts)}.`, found: true };
  }

  textCount(style: Style): Answer {
    const segs = this.c.finder.byKind(this.c.scope, ['ocr']);
    if (!segs.length) return this.notFound('any text on screen', style);
    const distinct = new Map<string, Segment>();
    for (const s of segs) if (!distinct.has(s.text.toLowerCase())) distinct.set(s.text.toLowerCase(), s);
    const parts = [...distinct.values()].slice(0, style.items).map((s) => {
      this.citeSegment(s);
      return `${quote(s.text)} ${span(s.start, s.end)}${this.where(s.videoId)}`;
    });
    return {
      text: `${capital(numberWord(distinct.size))} different text${distinct.size === 1 ? ' is' : 's are'} read on screen: ${joinList(parts)}${distinct.size > parts.length ? ', and more' : ''}.`,
      found: true,
    };
  }

  // ---- speech --------------------------------------------------------------------------------

  speechWhen(intent: Intent, style: Style, presence: boolean): Answer | Promise<Answer> {
    const segs = this.c.finder.byKind(this.c.scope, ['transcript', 'speech']);
    if (!segs.length) return this.notFound('any speech', style);
    const transcripts = segs.filter((s) => s.kind === 'transcript');
    // "When does she say X": the transcript lines with the words asked about.
    const words = intent.keywords.filter((k) => k.length > 2 && !SPEECH_WORDS.has(k));
    const said = words.length ? transcripts.filter((s) => words.some((w) => s.text.toLowerCase().includes(w))) : [];
    if (words.length && transcripts.length && said.length && !presence) {
      const parts = said.slice(0, style.items).map((s) => {
        this.citeSegment(s);
        return `${span(s.start, s.end)}${onTrack(s)}${this.where(s.videoId)}: ${quote(s.text)}`;
      });
      return { text: `It is said ${parts.join('; ')}.`, found: true };
    }
    const spans = transcripts.length ? transcripts : segs;
    const shown = spans.slice(0, style.items);
    const parts = shown.map((s) => {
      this.citeSegment(s);
      return `${span(s.start, s.end)}${onTrack(s)}${this.where(s.videoId)}`;
    });
    const more =
      spans.length > shown.length
        ? ` (and ${spans.length - shown.length} more time${spans.length - shown.length > 1 ? 's' : ''})`
        : '';
    return {
      text: `${presence && YES_NO.test(this.c.prompt) ? 'Yes: someone' : 'Someone'} speaks ${joinList(parts)}${more}.`,
      found: true,
    };
  }

  speechAmount(style: Style): Answer {
    const segs = this.c.finder.byKind(this.c.scope, ['speech']);
    const spans = segs.length ? segs : this.c.finder.byKind(this.c.scope, ['transcript']);
    if (!spans.length) return this.notFound('any speech', style);
    const seconds = total(spans);
    this.citeSegment(spans[0]!);
    if (spans.length > 1) this.citeSegment(spans.at(-1)!);
    return {
      text: `Someone speaks ${numberWord(spans.length)} time${spans.length === 1 ? '' : 's'}, ${secs(seconds)} of speech in all, from ${formatTime(spans[0]!.start)} to ${formatTime(spans.at(-1)!.end)}${this.where(spans[0]!.videoId)}.`,
      found: true,
    };
  }

  speechWhich(style: Style): Answer {
    const segs = this.c.finder.byKind(this.c.scope, ['transcript', 'speech'], { limit: 2000 });
    if (!segs.length) return this.notFound('any speech', style);
    const byVideo = new Map<string, Segment[]>();
    for (const s of segs) byVideo.set(s.videoId, [...(byVideo.get(s.videoId) ?? []), s]);
    // Most speech first: "which has the most talking" reads the first name.
    const parts = [...byVideo.entries()]
      .sort((a, b) => total(b[1]) - total(a[1]))
      .slice(0, style.items)
      .map(([vid, ss]) => {
        this.citeSegment(ss[0]!);
        return `${this.video(vid).fileName} (${secs(total(ss))}, from ${formatTime(ss[0]!.start)})`;
      });
    return { text: `Speech is heard in ${joinList(parts)}.`, found: true };
  }

  // ---- what is visible at a moment ------------------------------------------------------------

  /** Everything known at the time asked about: objects and people, text, captions, speech. */
  async visible(style: Style): Promise<Answer> {
    const { scope, moment } = this.c;
    const win = scope.window ?? null;
    const inWin = this.c.finder.byKind(scope, ['object', 'ocr', 'caption', 'transcript', 'speech'], { limit: 2000 });
    // A moment: what covers it is cited at that moment (every time in the answer is a cited one).
    const point = win && win.end - win.start <= 2 * POINT_HALF + 0.01 ? (win.start + win.end) / 2 : null;
    const citeIn = (x: Segment) => {
      if (point !== null && x.start <= point && x.end >= point)
        return this.cite(x.videoId, x.kind, point, point, x.text, x.confidence ?? 1);
      return win
        ? this.cite(
            x.videoId,
            x.kind,
            Math.max(x.start, win.start),
            Math.min(x.end, win.end),
            x.text,
            x.confidence ?? 1,
          )
        : this.citeSegment(x);
    };
    const at = (v: string, cited: Evidence[]) => {
      const t =
        point !== null && cited.some((e) => e.start === point)
          ? `At ${formatTime(point)}`
          : cited.length
            ? `${capital(span(Math.min(...cited.map((e) => e.start)), Math.max(...cited.map((e) => e.end))))}`
            : 'There';
      return t + this.where(v);
    };
    if (!inWin.length && !moment) return this.notFound('anything the analysis recognises', style);
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
      let texts = segs.filter((s) => s.kind === 'ocr');
      if (moment && moment.video.id === vid) {
        const read = (await moment.readText()).slice(0, style.items);
        for (const b of read) cited.push(this.cite(vid, 'ocr', moment.t, moment.t, b.text, b.confidence));
        if (read.length) {
          bits.push(`the screen shows ${joinList(read.map((b) => quote(b.text)))}`);
          texts = [];
        }
      }
      const mid = win ? (win.start + win.end) / 2 : 0;
      texts = texts.sort((a, b) => distance(a, mid) - distance(b, mid)).slice(0, Math.min(style.items, 3));
      for (const t of texts) cited.push(citeIn(t));
      if (texts.length) bits.push(`the screen shows ${joinList(texts.map((t) => quote(t.text)))}`);
      const spoken = segs.filter((s) => s.kind === 'transcript').slice(0, 2);
      const speech = segs.filter((s) => s.kind === 'speech');
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
    if (!any) return this.notFound('anything the analysis recognises', style);
    return { text: out.join(' '), found: true };
  }

  // ---- not found --------------------------------------------------------------------------

  notFound(what: string, style: Style): Answer {
    const where = this.c.scope.videos.length === 1 ? this.c.scope.videos[0]!.fileName : 'the indexed videos';
    const moment = this.c.scope.window ? ` ${span(this.c.scope.window.start, this.c.scope.window.end)}` : '';
    const contents = style.brief ? '' : ` ${this.contents()}`;
    return { text: `I could not find ${what} in ${where}${moment}.${contents}`, found: false };
  }

  /** What the scope does contain, for "not found" answers (no timestamps: nothing is cited). */
  contents(): string {
    const { scope } = this.c;
    const unanalysed = scope.videos.filter((v) => v.analysis === null);
    if (unanalysed.length === scope.videos.length) {
      return `${joinList(unanalysed.map((v) => v.fileName))} ${unanalysed.length === 1 ? 'has' : 'have'} not been analysed${unanalysed.some((v) => v.status !== 'ready') ? ' yet' : ' (analysis is switched off)'}, so nothing seen or said in ${unanalysed.length === 1 ? 'it' : 'them'} is known.`;
    }
    const labels = this.c.finder.labelSeconds(scope, 'object', 4).map((l) => labelNoun(l.label, 2));
    // Text is named, not quoted: a "not found" does not offer other text as if it answered.
    const ocr = this.c.finder.has(scope, ['ocr']);
    const speech = this.c.finder.has(scope, ['speech', 'transcript']);
    const bits = [
      labels.length ? `shows ${joinList(labels)}` : null,
      ocr ? 'has on-screen text' : null,
      speech ? 'has speech' : null,
    ].filter(Boolean);
    if (!bits.length) return 'The analysis found nothing it recognises there.';
    return scope.videos.length === 1
      ? `What it does contain: it ${joinList(bits as string[])}.`
      : `What they do contain: the index ${joinList(bits as string[])}.`;
  }
}

/** Which audio track a speech segment is on, for videos with several (the speech stage sets it only then). */
function onTrack(s: Segment): string {
  const x = s.extra as { track?: unknown; language?: unknown } | null;
  if (typeof x?.track !== 'number') return '';
  return ` on audio track ${x.track}${typeof x.language === 'string' ? ` (${x.language})` : ''}`;
}

/** USE-lite cosine from which a segment counts as support without a shared word (paraphrases ≈ 0.6, unrelated ≤ 0.35). */
const SUPPORT_COSINE = 0.45;

function sentenceFor(s: Segment, where: string, file: string | null): string {
  const inFile = file ? ` (${file})` : where;
  switch (s.kind) {
    case 'ocr':
      return `The screen shows ${quote(s.text)} ${span(s.start, s.end)}${inFile}.`;
    case 'transcript':
    case 'caption':
      return `${span(s.start, s.end).replace(/^./, (c) => c.toUpperCase())}${onTrack(s)}${inFile}: ${quote(s.text)}.`;
    case 'object':
      return `${capital(article(labelNoun(s.text)))} is visible ${span(s.start, s.end)}${inFile}.`;
    case 'speech':
      return `Someone speaks ${span(s.start, s.end)}${onTrack(s)}${inFile}.`;
    default:
      return `${capital(s.text)} ${span(s.start, s.end)}${inFile}.`;
  }
}

const COLOUR_ASKED = /\b(colou?rs?|colou?red)\b/i;

/** The colour stored with a detection, when the analysis measures colours. */
function colourIn(s: Segment): string | null {
  const x = s.extra as { colour?: unknown; color?: unknown; colours?: unknown } | null;
  const c = x?.colour ?? x?.color ?? (Array.isArray(x?.colours) ? x.colours[0] : null);
  return typeof c === 'string' && c ? c : null;
}

const YES_NO = /^\s*(is|are|was|were|does|do|did|can|could|has|have|had|will|would|any)\b/i;

/** Best reading score (cosine to the closest examples plus cues) under which no cell fits the question. */
const LOW_FIT = 0.45;

/** Half the width of the window around a point time (as evidence.ts widens a point `target`). */
const POINT_HALF = 2;

const OBJECTS = new Set<FactKind>(['objects', 'people']);

/** Words that say the question is about text, not what the text says. */
const TEXT_WORDS = new Set(
  'text texts written write writing title titles screen shown displayed display appear appears printed words word letters sign signs read reads caption captions banner logo credits anything any'.split(
    ' ',
  ),
);
const SPEECH_WORDS = new Set(
  'speak speaks spoke speaking speaker speakers talk talks talking say says said someone somebody anyone person man woman voice speech start starts begin begins'.split(
    ' ',
  ),
);

/** One appearance of a label: its spans with gaps under a second and a half merged (a missed frame is not a new arrival). */
interface Appearance {
  videoId: string;
  start: number;
  end: number;
  most: number;
  segments: Segment[];
}

function appearances(spans: Segment[]): Appearance[] {
  const out: Appearance[] = [];
  const sorted = [...spans].sort((a, b) =>
    a.videoId === b.videoId ? a.start - b.start : a.videoId < b.videoId ? -1 : 1,
  );
  for (const s of sorted) {
    const most = (s.extra as { max_count?: number } | null)?.max_count ?? 1;
    const last = out.at(-1);
    if (last && last.videoId === s.videoId && s.start - last.end <= 1.5) {
      last.end = Math.max(last.end, s.end);
      last.most = Math.max(last.most, most);
      last.segments.push(s);
    } else out.push({ videoId: s.videoId, start: s.start, end: s.end, most, segments: [s] });
  }
  return out;
}

/** Most of a label seen in one frame of the window (the span's own maximum without a window). */
function maxCountIn(s: Segment, win: { start: number; end: number } | null): number {
  const counts = (s.extra as { counts?: [number, number][]; max_count?: number } | null)?.counts;
  if (!counts?.length) return (s.extra as { max_count?: number } | null)?.max_count ?? 1;
  const inside = win ? counts.filter(([t]) => t >= win.start - 1 && t <= win.end + 1) : counts;
  return Math.max(1, ...(inside.length ? inside : counts).map(([, n]) => n));
}

/** A time slot of the question as a window of the scope; relative ones need one video's length. */
export function resolveTime(t: TimeSlot, videos: Video[]): { start: number; end: number } | null {
  if ('point' in t)
    return t.point
      ? { start: Math.max(0, t.start - POINT_HALF), end: t.start + POINT_HALF }
      : { start: t.start, end: t.end };
  const d = videos.length === 1 ? videos[0]!.durationSec : null;
  if (d === null || d === undefined) return null;
  const len = t.seconds ?? Math.min(5, d / 4);
  if (t.relative === 'start') return { start: 0, end: len };
  if (t.relative === 'end') return { start: Math.max(0, d - len), end: d };
  return { start: Math.max(0, d / 2 - 2), end: d / 2 + 2 };
}

/** Runs of consecutive points (per video) that satisfy `ok`, as spans. */
function runsOf(pts: Counted[], ok: (p: Counted) => boolean): { video: Video; start: number; end: number }[] {
  const runs: { video: Video; start: number; end: number; segment: Segment | null }[] = [];
  let cur: { video: Video; start: number; end: number; segment: Segment | null } | null = null;
  for (const p of pts) {
    if (ok(p)) {
      // A new span of the label (it was out of sight in between) starts a new run.
      if (cur && cur.video.id === p.video.id && cur.segment === p.segment) cur.end = p.t;
      else {
        if (cur) runs.push(cur);
        cur = { video: p.video, start: p.t, end: p.t, segment: p.segment };
      }
    } else if (cur) {
      runs.push(cur);
      cur = null;
    }
  }
  if (cur) runs.push(cur);
  return runs;
}

function mode(ns: number[]): number {
  const c = new Map<number, number>();
  for (const n of ns) c.set(n, (c.get(n) ?? 0) + 1);
  return [...c.entries()].sort((a, b) => b[1] - a[1] || b[0] - a[0])[0]![0];
}

const total = (ss: Segment[]) => ss.reduce((a, s) => a + (s.end - s.start), 0);
const overlap = (a: Segment, b: Segment) => Math.max(0, Math.min(a.end, b.end) - Math.max(a.start, b.start));
const distance = (s: Segment, t: number) => (t < s.start ? s.start - t : t > s.end ? t - s.end : 0);

/** Readable, confident, longer-lasting text first. */
function bestText(ss: Segment[]): Segment[] {
  const letters = (s: Segment) => (s.text.match(/\p{L}/gu) ?? []).length;
  return [...ss].sort(
    (a, b) =>
      (b.confidence ?? 0) * Math.log2(2 + letters(b)) * (b.end - b.start + 1) -
      (a.confidence ?? 0) * Math.log2(2 + letters(a)) * (a.end - a.start + 1),
  );
}

function categoryName(prompt: string): string {
  const m = /\b(animals?|vehicles?|electronic devices?|devices?|furniture|food|drinks?|pets?)\b/i.exec(prompt);
  return m ? m[1]!.toLowerCase().replace(/s$/, '') : 'such thing';
}

/** The count points inside a window; when the sampling left none inside, the one nearest its middle. */
function inWindow(pts: [number, number][], win: { start: number; end: number }): [number, number][] {
  const inside = pts.filter(([t]) => t >= win.start && t <= win.end);
  if (inside.length || !pts.length) return inside;
  const mid = (win.start + win.end) / 2;
  return [pts.reduce((a, b) => (Math.abs(b[0] - mid) < Math.abs(a[0] - mid) ? b : a))];
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

/** Detections under this confidence are said with "possibly": on the shared clips most wrong labels (sheep in a meadow, a remote, a TV) scored 0.31–0.41, the right ones mostly 0.53–0.74 (see README). */
export const POSSIBLY_BELOW = 0.5;

/** "a dog", or "possibly a dog" for a detection under POSSIBLY_BELOW. */
export function detected(label: string, confidence: number | null, n = 1): string {
  const noun = n === 1 ? article(labelNoun(label)) : `${numberWord(n)} ${labelNoun(label, n)}`;
  return (confidence ?? 1) < POSSIBLY_BELOW ? `possibly ${noun}` : noun;
}

/** The changes of one video in time order (see Composer.summary). */
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
      const counts = app.segments.flatMap((s) => (s.extra as { counts?: [number, number][] } | null)?.counts ?? []);
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
  const speech = all.filter((x) => x.kind === 'speech');
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
