/**
 * The composer: the toolkit the fact plug-ins (facts/) answer with, without a generative model.
 * It reads the question (reader.ts), narrows the scope by the question's file names and times,
 * and runs the best readings' answers (the plug-ins' own functions) until one finds an answer. It
 * gives them the scope, the finder of segments, citations (every time in an answer is the time of
 * a cited evidence item), the counting series of a label, "not found" (with what the scope does
 * contain) and the search fallback for a question no plug-in fits.
 */
import type { Embedder } from '../analysis/embedder';
import type { Catalog } from '../storage/catalog';
import type { Segment, Video } from '../storage/rows';
import { type Evidence, type EvidenceFinder, KIND_READ_LIMIT, type ScopeWindow } from './evidence';
import { FACTS, type Cell } from './facts';
import type { Answer, FactContext, Slots, Style, TimeSlot } from './facts/plugin';
import { readIntent, type Intent } from './intent';
import { noisyText } from './noise';
import { colourOnClothing, labelNoun, NAMES_NO_THING } from './vocabulary';
import { readQuestion, type ReadQuestion } from './reader';
import { type Counted, countsOf, inWindow, momentWindow, POINT_HALF } from './series';
import { formatTime } from './target';
import { article, capital, joinList, onTrack, quote, secs, span } from './wording';

export interface Composed {
  output: string;
  evidence: Evidence[];
  /** False when the answer is "could not find". */
  found: boolean;
  /** How the question was read ("fact.form" of the fact table), for tests and logs. */
  reading?: string;
  /** The cell of the fact table that answered (or whose "not found" this is); none for a search. */
  cell?: Cell;
  /** The question's slots, read once (by compose), for what the answer does next. */
  slots?: Slots;
}

export interface ComposeInput {
  /** The catalog (people and their names live there, not in segments) and the index's id. */
  catalog: Catalog;
  indexId: string;
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
  moment?: FactContext['moment'];
  /**
   * Reads the text on screen at one moment of a video, for a moment written in the question ("what
   * does the counter read at 4 seconds"); null when that video's frames cannot be read now.
   */
  textAt?: ((video: Video, t: number) => (() => Promise<{ text: string; confidence: number }[]>) | null) | null;
  /** The sentence encoder: reads the kind of question by meaning (null: by its rule cues alone). */
  embedder?: Embedder | null;
}

function styleOf(guidance: string): Style {
  const g = guidance.toLowerCase();
  if (/\b(short|brief|briefly|concise|one sentence|few words|one word|tl;?dr)\b/.test(g))
    return { items: 1, brief: true };
  if (/\b(detail|detailed|details|long|thorough|elaborate|exhaustive|all of|everything|complete)\b/.test(g))
    return { items: 10, brief: false };
  return { items: 4, brief: false };
}

export type { Answer, Style } from './facts/plugin';

/** An answer with how it was read. */
type Reply = Answer & { reading: string; cell?: Cell };

export class Composer implements FactContext {
  constructor(private readonly c: ComposeInput) {}
  /** The spans this question read, by labels and limit (see objectSpans). */
  private readonly spansRead = new Map<string, Segment[]>();

  private evidence: Evidence[] = [];
  /** The question's embedding, reused by the evidence search. */
  private vector: Float32Array | null = null;
  /** The text that `vector` embeds (the question, or without the file names it gives). */
  private vectorText = '';

  /** The question's embedding once compose() has read it, when it embeds `text` (else null). */
  vectorOf(text: string): Float32Array | null {
    return this.vector && this.vectorText === text ? this.vector : null;
  }

  /** Fills in each evidence item's frame (the sampled frame nearest its middle): one read for all of them. */
  async framesOf(items: Evidence[]): Promise<void> {
    const todo = items.filter((e) => e.frame_url === null);
    const files = await this.c.finder.framesNear(todo.map((e) => [e.video_id, (e.start + e.end) / 2]));
    todo.forEach((e, i) => {
      const file = files[i];
      if (file) e.frame_url = this.c.frameUrl(e.video_id, file);
    });
  }

  /** Whether the scope holds more than one video (answers then name the file). */
  multi(): boolean {
    return this.c.scope.videos.length > 1;
  }

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
    // Its frame is looked up with every other item's at the end (framesOf): one read for all.
    const e: Evidence = {
      video_id: videoId,
      file_name: this.video(videoId).fileName,
      start,
      end,
      kind,
      text,
      score: Math.round(score * 1000) / 1000,
      frame_url: null,
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
    // Plug-ins whose words are named by the index itself (a person's name), for the reader's cues.
    const cues = await Promise.all(FACTS.map((f) => f.cueIn?.(this) ?? false));
    const cued = FACTS.filter((_, i) => cues[i]).map((f) => f.kind);
    const read = await readQuestion(prompt, scope.videos, this.c.embedder ?? null, cued);
    this.vector = read.vector;
    this.vectorText = read.slots.files.length ? read.slots.text : prompt;
    const asked = read.slots;
    // Guidance steers the focus too: its content words join the plug-ins' search (not the
    // question's own slots, which the answer reads again for what the question asked).
    const focus = readIntent(guidance);
    const keywords = [...asked.intent.keywords, ...focus.keywords.filter((k) => !asked.intent.keywords.includes(k))];
    const slots: Slots = { ...asked, intent: { ...asked.intent, keywords } };
    const pending = scope.videos.filter((v) => v.status !== 'ready');
    const sentences = await this.answer({ ...read, slots }, style);
    if (pending.length && !sentences.found) {
      sentences.text += ` (${pending.map((v) => `${v.fileName} is still ${v.status}`).join('; ')}: ask again when it is ready.)`;
    }
    // Wording rule: a colour describes clothing or things, never a person.
    let output = colourOnClothing(sentences.text.trim());
    if (style.brief) output = output.split(/(?<=[.!?])\s/)[0]!;
    await this.framesOf(this.evidence);
    return {
      output,
      evidence: this.evidence.sort((a, b) => b.score - a.score),
      found: sentences.found,
      reading: sentences.reading,
      ...(sentences.cell && { cell: sentences.cell }),
      slots: asked,
    };
  }

  /**
   * The question's slots narrow its scope (a file name, a time written in the text); then the
   * readings are tried best first, and the first that finds an answer is the answer: when two
   * readings fit, the evidence decides. With none finding anything, the best reading's "not found".
   */
  async answer(read: ReadQuestion, style: Style): Promise<Reply> {
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
    // A moment written in the question, in one video, is read like a point `target`: its text at that moment.
    if (!this.c.moment && this.c.textAt && !narrowed.window && slots.time && 'point' in slots.time) {
      const video = narrowed.videos.length === 1 ? narrowed.videos[0]! : null;
      const readText = slots.time.point && video ? this.c.textAt(video, slots.time.start) : null;
      if (readText) this.c.moment = { video: video!, t: slots.time.start, readText };
    }
    let first: (Reply & { evidence: Evidence[] }) | null = null;
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
      (c.plugin.detections && best.plugin.detections) ||
      (c.form === best.form &&
        (!slots.factCues.has(best.fact) || (slots.factCues.has(c.fact) && !c.plugin.detections)));
    // A question that names a thing ("is there a kayak?") is not answered about speech or sound
    // unless its words ask about them: "Yes: someone speaks" answers nothing it asked.
    const namesThing = slots.intent.keywords.some((w) => !NAMES_NO_THING.has(w) && !/^\d/.test(w));
    const heard = (c: Cell) => c.plugin.heard && namesThing && !slots.factCues.has(c.fact);
    // A question that names a video asks about it, not about the index ("the numbers in the countdown clip").
    const tried = read.readings.filter((x) => related(x.cell) && !(slots.files.length && x.cell.plugin.aboutIndex));
    if (!tried.length)
      return { ...(await this.general(slots.intent, style, this.c.scope.videos.length > 1)), reading: 'search' };
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
      const out: Reply = { ...res, reading: `${r.cell.fact}.${r.cell.form}`, cell: r.cell };
      if (res.found) return out;
      first ??= { ...out, evidence: this.evidence };
    }
    this.evidence = first!.evidence;
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

  /** A point in time the question is about (a point `target`), whose on-screen text can be read now. */
  get moment(): FactContext['moment'] {
    return this.c.moment ?? null;
  }

  get catalog(): Catalog {
    return this.c.catalog;
  }

  get indexId(): string {
    return this.c.indexId;
  }

  /** The segments of the scope (or of `scope`) ranked against the question, by words and meaning. */
  ranked(intent: Intent, n: number, scope: ScopeWindow = this.c.scope) {
    return this.c.finder.ranked(scope, this.c.prompt, intent, n, this.vector);
  }

  run(cell: Cell, slots: Slots, style: Style): Answer | Promise<Answer> {
    this.style = style;
    return cell.answer(this, slots, cell);
  }

  // ---- counting series ------------------------------------------------------------------------

  /** The detection spans of a label in the scope. */
  spansOf(label: string): Promise<Segment[]> {
    return this.objectSpans([label]);
  }

  /**
   * The detection spans of any of these labels in the scope, in time order (at most `limit`). Read
   * once per question (a count reads its label's spans, then its series reads them again); each
   * caller gets its own array, since some sort theirs.
   */
  async objectSpans(labels: string[], limit?: number): Promise<Segment[]> {
    const key = `${limit ?? ''}\u0000${labels.join('\u0000')}`;
    let spans = this.spansRead.get(key);
    if (!spans) {
      spans = await this.c.finder.byKind(await this.withLabels(labels), ['object'], {
        labels,
        ...(limit && { limit }),
      });
      this.spansRead.set(key, spans);
    }
    return [...spans];
  }

  /** How many detection spans of a label the scope holds (`spansOf` reads at most KIND_READ_LIMIT of them). */
  async spanCount(label: string): Promise<number> {
    const read = await this.objectSpans([label]);
    return read.length < KIND_READ_LIMIT
      ? read.length
      : await this.c.finder.countByKind(await this.withLabels([label]), ['object'], [label]);
  }

  /** The latest detection span of a label in the scope. */
  async lastSpanOf(label: string): Promise<Segment | undefined> {
    return (
      await this.c.finder.byKind(await this.withLabels([label]), ['object'], { labels: [label], limit: 1, last: true })
    )[0];
  }

  /** Whether the object detector saw the label in the scope (whole videos: from the labels each holds). */
  async sees(label: string): Promise<boolean> {
    const scope = await this.withLabels([label]);
    if (!scope.window) return scope.videos.length > 0;
    return scope.videos.length > 0 && (await this.c.finder.has(scope, ['object'], [label]));
  }

  /**
   * The scope less the videos in which none of the labels was ever detected (the same spans, fewer
   * videos to read; with a window too, since a video without the label has none in the window).
   */
  private async withLabels(labels: string[]): Promise<ScopeWindow> {
    const scope = this.c.scope;
    const have = new Set(
      (await Promise.all(labels.map(async (l) => await this.c.finder.withLabel(scope.videos, l)))).flat(),
    );
    return { ...scope, videos: scope.videos.filter((v) => have.has(v)) };
  }

  /** Per-frame counts of a label over the scope (each point keeps the span it belongs to). */
  async series(label: string): Promise<Counted[]> {
    const out: Counted[] = [];
    const win = this.c.scope.window;
    // Each video's spans (in their order) at once: a whole index is thousands of videos.
    const byVideo = new Map<string, Segment[]>();
    for (const s of await this.spansOf(label)) {
      const list = byVideo.get(s.videoId);
      if (list) list.push(s);
      else byVideo.set(s.videoId, [s]);
    }
    for (const v of this.c.scope.videos) {
      const segs = byVideo.get(v.id);
      if (!segs) continue;
      const counts = new Map<number, { n: number; s: Segment }>();
      for (const s of segs) {
        // Weak and duplicate detections are not counted as more at once (class 8).
        const all = countsOf(s).counts;
        // A moment (a target, or a time in the question) governs the count: only the frames inside it.
        const pts = win ? inWindow(all, win) : all;
        for (const [t, n] of pts) if ((counts.get(t)?.n ?? -1) < n) counts.set(t, { n, s });
      }
      for (const [t, { n, s }] of counts) out.push({ video: v, t, n, segment: s });
    }
    return out.sort((a, b) => (a.video.id === b.video.id ? a.t - b.t : a.video.id < b.video.id ? -1 : 1));
  }

  /** A question no plug-in fits: the segments that share its words or meaning, quoted. */
  async general(intent: Intent, style: Style, byVideo: boolean): Promise<Answer> {
    const ranked = await this.c.finder.ranked(this.c.scope, this.c.prompt, intent, 12, this.vector);
    // Only keyword matches or close semantic ones count as support; a bare shot boundary never does.
    // Rank alone says nothing about relevance (the best of a large index is always first): support
    // needs a word of the question or a close meaning.
    // On-screen fragments and watermarks are no text to quote (class 8, noise.ts).
    const noisy = await noisyText(
      this.c.finder,
      this.c.scope,
      ranked.map((r) => r.segment),
    );
    const useful = ranked.filter(
      (r) => r.segment.kind !== 'shot' && !noisy.has(r.segment.id) && (r.keyword || (r.cosine ?? 0) >= SUPPORT_COSINE),
    );
    if (useful.length === 0) return await this.notFound('an answer to that', style);
    const parts = useful.slice(0, style.items).map(({ segment: s, score }) => {
      this.citeSegment(s, score);
      return sentenceFor(s, this.where(s.videoId), byVideo ? this.video(s.videoId).fileName : null);
    });
    return { text: parts.join(' '), found: true };
  }

  // ---- not found --------------------------------------------------------------------------

  async notFound(what: string, style: Style): Promise<Answer> {
    const where = this.c.scope.videos.length === 1 ? this.c.scope.videos[0]!.fileName : 'the indexed videos';
    const w = this.c.scope.window;
    // A moment's window is said as the moment ("at 0:45"), not as its slack ("from 0:43 to 0:46").
    const moment = !w
      ? ''
      : w.end - w.start <= 2 * POINT_HALF + 0.01
        ? ` at ${formatTime((w.start + w.end) / 2)}`
        : ` ${span(w.start, w.end)}`;
    const contents = style.brief ? '' : ` ${await this.contents()}`;
    return { text: `I could not find ${what} in ${where}${moment}.${contents}`, found: false };
  }

  /** What the scope does contain, for "not found" answers (no timestamps: nothing is cited). */
  async contents(): Promise<string> {
    const { scope } = this.c;
    const unanalysed = scope.videos.filter((v) => v.analysis === null);
    if (unanalysed.length === scope.videos.length) {
      return `${joinList(unanalysed.map((v) => v.fileName))} ${unanalysed.length === 1 ? 'has' : 'have'} not been analysed${unanalysed.some((v) => v.status !== 'ready') ? ' yet' : ' (analysis is switched off)'}, so nothing seen or said in ${unanalysed.length === 1 ? 'it' : 'them'} is known.`;
    }
    // Text is named, not quoted: a "not found" does not offer other text as if it answered.
    const [seconds, ocr, speech] = await Promise.all([
      await this.c.finder.labelSeconds(scope, 'object', 4),
      await this.c.finder.has(scope, ['ocr']),
      await this.c.finder.has(scope, ['speech', 'transcript']),
    ]);
    const labels = seconds.map((l) => labelNoun(l.label, 2));
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

/** Best reading score (cosine to the closest examples plus cues) under which no cell fits the question. */
const LOW_FIT = 0.45;

/** A time slot of the question as a window of the scope; relative ones need one video's length. */
export function resolveTime(t: TimeSlot, videos: Video[]): { start: number; end: number } | null {
  if ('point' in t) return t.point ? momentWindow(t.start, videos) : { start: t.start, end: t.end };
  const d = videos.length === 1 ? videos[0]!.durationSec : null;
  if (d === null || d === undefined) return null;
  const len = t.seconds ?? Math.min(5, d / 4);
  if (t.relative === 'start') return { start: 0, end: len };
  if (t.relative === 'end') return { start: Math.max(0, d - len), end: d };
  return { start: Math.max(0, d / 2 - 2), end: d / 2 + 2 };
}
