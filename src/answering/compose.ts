/**
 * Composes the answer a careful person would write from the evidence, without a generative model:
 * counts from detections, spans for "when", quotes for what is written or said, shots in order for
 * "what happens". Every time in the answer is the time of an evidence item. When the evidence does
 * not support an answer it says so ("I could not find ...") and what the video does contain.
 */
import type { Segment, Video } from '../storage/schema';
import type { Evidence, EvidenceFinder, ScopeWindow } from './evidence';
import { labelNoun, numberWord, readIntent, type Intent } from './intent';
import { formatTime } from './target';

export interface Composed {
  output: string;
  evidence: Evidence[];
  /** False when the answer is "could not find". */
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
}

interface Style {
  /** Items listed at most (spans, quotes, shots). */
  items: number;
  /** One sentence only. */
  brief: boolean;
}

function styleOf(guidance: string): Style {
  const g = guidance.toLowerCase();
  if (/\b(short|brief|briefly|concise|one sentence|few words|one word|tl;?dr)\b/.test(g)) return { items: 1, brief: true };
  if (/\b(detail|detailed|details|long|thorough|elaborate|exhaustive|all of|everything|complete)\b/.test(g)) return { items: 10, brief: false };
  return { items: 4, brief: false };
}

const span = (start: number, end: number) => (end - start < 1.5 ? `at ${formatTime(start)}` : `from ${formatTime(start)} to ${formatTime(end)}`);
const quote = (text: string) => `"${text.replace(/\s*\n\s*/g, ' / ').trim()}"`;
const article = (noun: string) => (/^[aeiou]/i.test(noun) && !/^(one|uni|eu)/i.test(noun) ? `an ${noun}` : `a ${noun}`);

interface Counted {
  video: Video;
  t: number;
  n: number;
  segment: Segment | null;
}

export class Composer {
  constructor(private readonly c: ComposeInput) {}

  private evidence: Evidence[] = [];
  private readonly multi = () => this.c.scope.videos.length > 1;

  private video(id: string): Video {
    return this.c.scope.videos.find((v) => v.id === id)!;
  }
  private where(videoId: string): string {
    return this.multi() ? ` in ${this.video(videoId).fileName}` : '';
  }

  /** Adds an evidence item (deduplicated) and returns it. */
  private cite(videoId: string, kind: Segment['kind'], start: number, end: number, text: string, score: number): Evidence {
    const found = this.evidence.find((e) => e.video_id === videoId && e.kind === kind && e.start === start && e.end === end && e.text === text);
    if (found) return found;
    const frame = this.c.finder.frameNear(videoId, (start + end) / 2);
    const e: Evidence = { video_id: videoId, file_name: this.video(videoId).fileName, start, end, kind, text, score: Math.round(score * 1000) / 1000, frame_url: frame ? this.c.frameUrl(videoId, frame) : null };
    this.evidence.push(e);
    return e;
  }
  private citeSegment(s: Segment, score = s.confidence ?? 1): Evidence {
    return this.cite(s.videoId, s.kind, s.start, s.end, s.text, score);
  }

  async compose(): Promise<Composed> {
    const { prompt, guidance, scope } = this.c;
    const intent = readIntent(prompt);
    // Guidance steers the focus too: its content words join the search.
    const focus = readIntent(guidance);
    intent.keywords.push(...focus.keywords.filter((k) => !intent.keywords.includes(k)));
    const style = styleOf(guidance);
    if (scope.videos.length === 0) return { output: 'The index holds no videos yet, so there is nothing to answer from.', evidence: [], found: false };
    const pending = scope.videos.filter((v) => v.status !== 'ready');
    const sentences = await this.answer(intent, style);
    if (pending.length && !sentences.found) {
      sentences.text += ` (${pending.map((v) => `${v.fileName} is still ${v.status}`).join('; ')}: ask again when it is ready.)`;
    }
    let output = sentences.text.trim();
    if (style.brief) output = output.split(/(?<=[.!?])\s/)[0]!;
    return { output, evidence: this.evidence.sort((a, b) => b.score - a.score), found: sentences.found };
  }

  private async answer(intent: Intent, style: Style): Promise<{ text: string; found: boolean }> {
    const { scope } = this.c;
    const named = intent.labels.filter((l) => l !== 'person' || !intent.categoryLabels.length);

    if (intent.needs.has('summary') && !intent.labels.length) return this.summary(style);

    if (intent.categoryLabels.length && (intent.needs.has('what_object') || intent.needs.has('which_video') || intent.needs.has('presence'))) {
      return this.objectsOf(intent.categoryLabels, style, intent);
    }

    // Questions about what co-occurs with a named thing: "what is the dog riding?"
    if (intent.needs.has('what_object') && named.length) return this.companions(named, style);

    if (named.length && (intent.needs.has('count') || intent.needs.has('when') || intent.needs.has('presence') || intent.needs.has('which_video') || !(intent.needs.has('written') || intent.needs.has('said')))) {
      const present = named.filter((l) => this.c.finder.byKind(scope, ['object'], { labels: [l], limit: 1 }).length > 0);
      const missing = named.filter((l) => !present.includes(l));
      // The question is about something that was never detected: say so rather than answer about something else.
      if (missing.length && !(missing.length === 1 && missing[0] === 'dining table' && present.length)) {
        return this.notFound(missing.map((l) => article(labelNoun(l))).join(' or '), style);
      }
      const subject = present.filter((l) => l !== 'dining table')[0] ?? present[0]!;
      if (intent.needs.has('which_video')) return this.whichVideo(subject, style);
      if (intent.needs.has('count') || (intent.number !== null && intent.needs.has('when'))) return this.count(subject, intent, style);
      if (intent.needs.has('when')) return this.when(subject, intent, style);
      const colour = /\b(colou?r|colou?red)\b/i.test(this.c.prompt);
      const res = this.when(subject, intent, style, true);
      if (colour) res.text += ' The offline analysis does not measure colours, so I cannot tell the colour.';
      return res;
    }

    if (intent.needs.has('written')) return this.written(intent, style);
    if (intent.needs.has('said')) return this.said(intent, style);
    if (intent.needs.has('which_video')) return this.general(intent, style, true);
    return this.general(intent, style, false);
  }

  // ---- object questions -------------------------------------------------------------------

  private spansOf(label: string): Segment[] {
    return this.c.finder.byKind(this.c.scope, ['object'], { labels: [label] });
  }

  private when(label: string, intent: Intent, style: Style, presence = false): { text: string; found: boolean } {
    let spans = this.spansOf(label);
    if (intent.position === 'first' || intent.position === 'start') spans = spans.slice(0, 1);
    else if (intent.position === 'last' || intent.position === 'end') spans = spans.slice(-1);
    const shown = spans.slice(0, style.items);
    const noun = labelNoun(label);
    const parts = shown.map((s) => {
      this.citeSegment(s);
      return `${span(s.start, s.end)}${this.where(s.videoId)}`;
    });
    const more = spans.length > shown.length ? ` (and ${spans.length - shown.length} more time${spans.length - shown.length > 1 ? 's' : ''})` : '';
    if (intent.position === 'first' || intent.position === 'start') {
      const s = shown[0]!;
      return { text: `The first ${noun} appears at ${formatTime(s.start)}${this.where(s.videoId)} and is visible until ${formatTime(s.end)}.`, found: true };
    }
    const lead = presence ? `Yes: ${article(noun)} is visible` : `${capital(article(noun))} is visible`;
    return { text: `${lead} ${joinList(parts)}${more}.`, found: true };
  }

  /** Per-frame counts of a label over the scope (each point keeps the span it belongs to). */
  private series(label: string): Counted[] {
    const out: Counted[] = [];
    const spans = this.spansOf(label);
    for (const v of this.c.scope.videos) {
      const segs = spans.filter((s) => s.videoId === v.id);
      const counts = new Map<number, { n: number; s: Segment }>();
      for (const s of segs) {
        const pts = (s.extra as { counts?: [number, number][] } | null)?.counts ?? [[s.start, 1]];
        for (const [t, n] of pts) if ((counts.get(t)?.n ?? -1) < n) counts.set(t, { n, s });
      }
      for (const [t, { n, s }] of counts) out.push({ video: v, t, n, segment: s });
    }
    return out.sort((a, b) => (a.video.id === b.video.id ? a.t - b.t : a.video.id < b.video.id ? -1 : 1));
  }

  private count(label: string, intent: Intent, style: Style): { text: string; found: boolean } {
    const pts = this.series(label);
    if (pts.length === 0) return this.notFound(article(labelNoun(label)), style);
    const noun = (n: number) => labelNoun(label, n);
    // "When are two cars visible?" / "When is only one bottle left?": the runs with that count.
    if (intent.needs.has('when') && intent.number !== null) {
      const runs = runsOf(pts, (p) => p.n === intent.number);
      if (runs.length === 0) {
        const max = Math.max(...pts.map((p) => p.n));
        return { text: `I could not find a moment with exactly ${numberWord(intent.number)} ${noun(intent.number)} visible; at most ${numberWord(max)} ${noun(max)} ${max === 1 ? 'is' : 'are'} seen at once.`, found: false };
      }
      const parts = runs.slice(0, style.items).map((r) => {
        this.cite(r.video.id, 'object', r.start, r.end, `${intent.number} ${noun(intent.number!)}`, 1);
        return `${span(r.start, r.end)}${this.where(r.video.id)}`;
      });
      return { text: `${capital(numberWord(intent.number))} ${noun(intent.number)} ${intent.number === 1 ? 'is' : 'are'} visible ${joinList(parts)}.`, found: true };
    }
    if (intent.extreme === 'max' || intent.extreme === 'min') {
      const best = intent.extreme === 'max' ? Math.max(...pts.map((p) => p.n)) : Math.min(...pts.map((p) => p.n));
      const runs = runsOf(pts, (p) => p.n === best);
      const parts = runs.slice(0, Math.min(style.items, 3)).map((r) => {
        this.cite(r.video.id, 'object', r.start, r.end, `${best} ${noun(best)}`, 1);
        return `${span(r.start, r.end)}${this.where(r.video.id)}`;
      });
      const word = intent.extreme === 'max' ? 'At most' : 'At least';
      return { text: `${word} ${numberWord(best)} ${noun(best)} ${best === 1 ? 'is' : 'are'} visible at once, for example ${joinList(parts)}.`, found: true };
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
    const varies = !when && new Set(pts.map((p) => p.n)).size > 1 ? ` (the number changes over the video: between ${numberWord(Math.min(...pts.map((p) => p.n)))} and ${numberWord(Math.max(...pts.map((p) => p.n)))})` : '';
    return { text: `There ${n === 1 ? 'is' : 'are'} ${numberWord(n)} ${noun(n)}${when}, ${span(start, end)}${this.where(run[0]!.video.id)}${varies}.`, found: true };
  }

  private whichVideo(label: string, style: Style): { text: string; found: boolean } {
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

  private objectsOf(labels: string[], style: Style, intent: Intent): { text: string; found: boolean } {
    const segs = this.c.finder.byKind(this.c.scope, ['object'], { labels });
    if (segs.length === 0) return this.notFound(`any ${categoryName(this.c.prompt)}`, style);
    const byLabel = new Map<string, Segment[]>();
    for (const s of segs) byLabel.set(s.text, [...(byLabel.get(s.text) ?? []), s]);
    const ranked = [...byLabel.entries()].sort((a, b) => total(b[1]) - total(a[1]));
    const parts = ranked.slice(0, style.items).map(([label, ss]) => {
      const s = ss.sort((a, b) => b.end - b.start - (a.end - a.start))[0]!;
      this.citeSegment(s);
      return `${article(labelNoun(label))} (${span(s.start, s.end)}${this.where(s.videoId)})`;
    });
    const verb = intent.needs.has('which_video') ? 'is seen in' : 'The video shows';
    if (intent.needs.has('which_video')) return { text: `${capital(parts.join(', '))} ${verb} the index.`, found: true };
    return { text: `${verb} ${joinList(parts)}.`, found: true };
  }

  private companions(named: string[], style: Style): { text: string; found: boolean } {
    const subject = named[0]!;
    const mine = this.spansOf(subject);
    if (mine.length === 0) return this.notFound(article(labelNoun(subject)), style);
    const others = this.c.finder.byKind(this.c.scope, ['object']).filter((s) => s.text !== subject && s.text !== 'person' && mine.some((m) => m.videoId === s.videoId && overlap(m, s) > 0));
    if (others.length === 0) return { text: `I could not find anything detected together with the ${labelNoun(subject)}; the ${labelNoun(subject)} is visible ${span(mine[0]!.start, mine[0]!.end)}.`, found: false };
    const byLabel = new Map<string, number>();
    for (const o of others) byLabel.set(o.text, (byLabel.get(o.text) ?? 0) + Math.max(...mine.map((m) => overlap(m, o))));
    const best = [...byLabel.entries()].sort((a, b) => b[1] - a[1]).slice(0, Math.max(1, Math.min(style.items, 2)));
    const parts = best.map(([label]) => {
      const s = others.filter((o) => o.text === label).sort((a, b) => b.end - b.start - (a.end - a.start))[0]!;
      this.citeSegment(s);
      return `${article(labelNoun(label))} (${span(s.start, s.end)}${this.where(s.videoId)})`;
    });
    this.citeSegment(mine[0]!);
    return { text: `The ${labelNoun(subject)} is seen together with ${joinList(parts)}.`, found: true };
  }

  // ---- text and speech --------------------------------------------------------------------

  private async written(intent: Intent, style: Style): Promise<{ text: string; found: boolean }> {
    const { scope, moment } = this.c;
    if (moment) {
      // "What is displayed at this moment?": the frame at that moment, read now.
      const blocks = (await moment.readText()).slice(0, style.items);
      if (blocks.length) {
        for (const b of blocks) this.cite(moment.video.id, 'ocr', moment.t, moment.t, b.text, b.confidence);
        return { text: `At ${formatTime(moment.t)}${this.where(moment.video.id)} the screen shows ${joinList(blocks.map((b) => quote(b.text)))}.`, found: true };
      }
    }
    let ocr = this.c.finder.byKind(scope, ['ocr']);
    if (ocr.length === 0) return this.notFound('any text on screen', style);
    const ranked = await this.c.finder.ranked(scope, this.c.prompt, intent, 20);
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

  private async said(intent: Intent, style: Style): Promise<{ text: string; found: boolean }> {
    const { scope } = this.c;
    const transcripts = this.c.finder.byKind(scope, ['transcript']);
    if (transcripts.length) {
      const ranked = (await this.c.finder.ranked(scope, this.c.prompt, intent, 20)).filter((r) => r.segment.kind === 'transcript').map((r) => r.segment);
      const chosen = (ranked.length ? ranked : transcripts).slice(0, Math.max(1, style.items - 1)).sort((a, b) => a.start - b.start);
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

  private summary(style: Style): { text: string; found: boolean } {
    const parts: string[] = [];
    for (const v of this.c.scope.videos.slice(0, 5)) {
      const shots = this.c.finder.byKind({ videos: [v], window: this.c.scope.window }, ['shot']);
      const objects = this.c.finder.byKind({ videos: [v], window: this.c.scope.window }, ['object']);
      const ocr = this.c.finder.byKind({ videos: [v], window: this.c.scope.window }, ['ocr']);
      const speech = this.c.finder.byKind({ videos: [v], window: this.c.scope.window }, ['speech', 'transcript']);
      const lines: string[] = [];
      const maxShots = Math.max(2, style.items * 2);
      for (const shot of shots.slice(0, maxShots)) {
        const inShot = (s: Segment) => s.start < shot.end && s.end > shot.start;
        const seen = [...new Set(objects.filter(inShot).map((o) => o.text))].slice(0, 4);
        const text = ocr.filter(inShot).slice(0, 2).map((o) => quote(o.text));
        const said = speech.filter(inShot);
        const what = [seen.length ? joinList(seen.map((l) => article(labelNoun(l)))) : null, text.length ? `the text ${joinList(text)}` : null, said.length ? 'someone speaking' : null].filter(Boolean);
        if (!what.length && shots.length > 1) continue;
        this.citeSegment(shot);
        lines.push(`${span(shot.start, shot.end)}: ${what.length ? what.join('; ') : 'nothing the analysis recognises'}`);
      }
      if (lines.length) parts.push(`${this.multi() ? `${v.fileName} — ` : ''}${lines.join('. ')}`);
    }
    if (!parts.length) return this.notFound('anything the analysis recognises', style);
    return { text: `${capital(parts.join('. '))}.`, found: true };
  }

  private async general(intent: Intent, style: Style, byVideo: boolean): Promise<{ text: string; found: boolean }> {
    const ranked = await this.c.finder.ranked(this.c.scope, this.c.prompt, intent, 12);
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

  // ---- not found --------------------------------------------------------------------------

  private notFound(what: string, style: Style): { text: string; found: boolean } {
    const where = this.c.scope.videos.length === 1 ? this.c.scope.videos[0]!.fileName : 'the indexed videos';
    const moment = this.c.scope.window ? ` ${span(this.c.scope.window.start, this.c.scope.window.end)}` : '';
    const contents = style.brief ? '' : ` ${this.contents()}`;
    return { text: `I could not find ${what} in ${where}${moment}.${contents}`, found: false };
  }

  /** What the scope does contain, for "not found" answers (no timestamps: nothing is cited). */
  private contents(): string {
    const { scope } = this.c;
    const unanalysed = scope.videos.filter((v) => v.analysis === null);
    if (unanalysed.length === scope.videos.length) {
      return `${joinList(unanalysed.map((v) => v.fileName))} ${unanalysed.length === 1 ? 'has' : 'have'} not been analysed${unanalysed.some((v) => v.status !== 'ready') ? ' yet' : ' (analysis is switched off)'}, so nothing seen or said in ${unanalysed.length === 1 ? 'it' : 'them'} is known.`;
    }
    const labels = this.c.finder.labelSeconds(scope, 'object', 4).map((l) => labelNoun(l.label, 2));
    const ocr = bestText(this.c.finder.byKind(scope, ['ocr'])).slice(0, 2).map((s) => quote(s.text));
    const speech = this.c.finder.has(scope, ['speech', 'transcript']);
    const bits = [labels.length ? `shows ${joinList(labels)}` : null, ocr.length ? `has the on-screen text ${joinList(ocr)}` : null, speech ? 'has speech' : null].filter(Boolean);
    if (!bits.length) return 'The analysis found nothing it recognises there.';
    return scope.videos.length === 1 ? `What it does contain: it ${joinList(bits as string[])}.` : `What they do contain: the index ${joinList(bits as string[])}.`;
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
  return [...ss].sort((a, b) => (b.confidence ?? 0) * Math.log2(2 + letters(b)) * (b.end - b.start + 1) - (a.confidence ?? 0) * Math.log2(2 + letters(a)) * (a.end - a.start + 1));
}

function categoryName(prompt: string): string {
  const m = /\b(animals?|vehicles?|electronic devices?|devices?|furniture|food|drinks?|pets?)\b/i.exec(prompt);
  return m ? m[1]!.toLowerCase().replace(/s$/, '') : 'such thing';
}

function joinList(parts: string[]): string {
  if (parts.length <= 1) return parts[0] ?? '';
  return `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}`;
}

function capital(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
