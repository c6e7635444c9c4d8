/**
 * The answering core: one question, its scope, the answer. Used by the service (and by the unit
 * tests on a fake index, with no models).
 *
 *   1. Scope follows the words: a file the question names that the index does not hold is "not in
 *      this index" (never another video's evidence).
 *   2. The fact answer: the fact plug-ins through the composer (counts, times, people by
 *      face and name, colours, file facts, shots...), the best reading of the question first.
 *   3. The free-text evidence (captions, transcripts, on-screen text): a sentence that names what
 *      is asked beats "not found" and answers open questions; when it and the detector disagree,
 *      the answer says what each source saw.
 *   4. When the index holds no kind of evidence that could answer, the answer says which model
 *      would (a vision model server, a transcriber) instead of listing unrelated labels.
 *   5. Wording rules on every answer: a colour describes clothing or things, never a person.
 */
import type { Embedder } from '../analysis/embedder';
import type { RetrievalCore, ScopeWindow } from '../search/retrieval';
import type { Catalog } from '../storage/catalog';
import type { Segment, Video } from '../storage/rows';
import { Composer, type Composed, type ComposeInput } from './compose';
import { type Evidence, KIND_READ_LIMIT } from './evidence';
import { askedContent, bestSentences, contentWords, holdsAsked, holdsWords, type Sentence } from './open';
import { colourOfUnlabelled } from './intent';
import type { Cell, Slots } from './facts/plugin';
import { unknownFile, unlabelledAsked } from './reader';
import { momentWindow } from './series';
import { formatTime } from './target';
import { colourOnClothing, isPersonWord, LABEL_WORDS, labelNoun, labelsNamed, namesLabel } from './vocabulary';

export interface AnswerInput {
  catalog: Catalog;
  retrieval: RetrievalCore;
  embedder: Embedder | null;
  indexId: string;
  prompt: string;
  guidance: string;
  /** The videos asked about (the index's, or the target video). */
  videos: Video[];
  /** The time window of `target`, or null. */
  window: { start: number; end: number } | null;
  /** A point `target`: it is judged at the moment itself (series.momentWindow), not over `window`. */
  point?: number | null;
  /** Signed path of a frame file of a video. */
  frameUrl: (videoId: string, file: string) => string;
  moment?: ComposeInput['moment'];
  textAt?: ComposeInput['textAt'];
}

export async function composeAnswer(a: AnswerInput): Promise<Composed> {
  const at = a.point !== undefined && a.point !== null ? { ...a, window: momentWindow(a.point, a.videos) } : a;
  const out = await factsThenFreeText(at);
  // Each item's frame (the sampled frame nearest its middle): one read for all of them.
  const todo = out.evidence.filter((e) => e.frame_url === null);
  const files = await a.retrieval.finder.framesNear(todo.map((e) => [e.video_id, (e.start + e.end) / 2]));
  todo.forEach((e, i) => {
    const file = files[i];
    if (file) e.frame_url = a.frameUrl(e.video_id, file);
  });
  return { ...out, output: colourOnClothing(out.output) };
}

async function factsThenFreeText(a: AnswerInput): Promise<Composed> {
  const scope: ScopeWindow = { videos: a.videos, window: a.window };
  const missing = unknownFile(a.prompt, a.videos);
  if (missing)
    return {
      output: `I could not find ${missing}: it is not in this index (it holds ${list(a.videos.slice(0, 8).map((v) => v.fileName))}${a.videos.length > 8 ? ' and more' : ''}).`,
      evidence: [],
      found: false,
      reading: 'file.not_in_index',
    };
  const unlabelled = colourOfUnlabelled(a.prompt);
  if (unlabelled && !(await a.retrieval.finder.has(scope, ['caption']))) {
    // The colour of a thing no detector label names (the sky, the caps of bottles; clothing with no
    // one in view): the measured colours are those of detected things, so they cannot answer it.
    const people = await seen(a, scope, 'person');
    if (!unlabelled.clothing || !people)
      return {
        output: `I cannot tell the colour of the ${unlabelled.noun}: the object detector has no label for it, and the colours the index measures are those of the things it detects. The index holds no descriptions of the pictures: a vision model server (--captioner openai) would describe what is seen and could answer this.`,
        evidence: [],
        found: false,
        reading: 'colours.unlabelled',
      };
  }
  const composer = new Composer({
    catalog: a.catalog,
    indexId: a.indexId,
    prompt: a.prompt,
    guidance: a.guidance,
    scope,
    finder: a.retrieval.finder,
    frameUrl: a.frameUrl,
    moment: a.moment ?? null,
    textAt: a.textAt ?? null,
    embedder: a.embedder,
  });
  const composed = await composer.compose();
  // No slots: an empty scope, nothing was read.
  if (a.videos.length === 0 || !composed.slots) return composed;

  // The question was read once, by the composer: its slots (without the guidance's words).
  const slots = composed.slots;
  const narrowed: ScopeWindow = {
    videos: slots.files.length && a.videos.length > 1 ? slots.files : a.videos,
    window: a.window,
  };
  const reading = composed.reading ?? '';
  const cell = composed.cell;
  const quotesText = cell?.plugin.quotes === 'written';
  // Counts, people by face, colours, file facts, shots, lists of videos: computed, and free text does not replace them.
  const computed = composed.found && !!cell?.computed;
  // On-screen text found for a question that asks nothing about writing ("is there an espresso
  // machine?") was only the best keyword match: every free-text kind competes by relevance.
  const open = !cell || cell.openEnded || !composed.found || (quotesText && !slots.intent.needs.has('written'));
  const holder = composed.found && quotesText ? await unseenHolder(a, narrowed, slots.text, composed) : null;
  if (holder) return holder;
  const beyondLabels = unlabelledAsked(slots.asked) !== null;
  const asksText = slots.intent.needs.has('written') || slots.intent.needs.has('said');
  // What a sentence must hold to answer (class 2): the things asked about, less the fact's own words.
  const asked = askedContent(slots, cell?.plugin.cue);
  // Captions and transcripts compete first (class 1) where labels cannot say what is asked: a thing
  // no label names, how something is done, what someone does, wears or looks like, or labels the
  // question names that the detector's answer does not hold ("someone holding a mug" answered
  // with people alone).
  const cited = new Set(composed.evidence.filter((e) => e.kind === 'object').map((e) => e.text));
  const labelsMissed = !!cell?.plugin.detections && slots.intent.labels.some((l) => l !== 'person' && !cited.has(l));
  const describes = DESCRIBED.test(slots.text) || slots.asked.activity !== null;
  const freeFirst =
    !computed &&
    !quotesText &&
    !asksText &&
    (beyondLabels || describes || labelsMissed || asked.words.some((w) => !labelsNamed(` ${w} `).length));
  const wanted = open || freeFirst;
  let sentences: Sentence[] = [];
  const searched = !computed && wanted;
  if (searched)
    sentences = await bestSentences(a.retrieval, narrowed, a.prompt, slots.intent, 3, composer.vectorOf(a.prompt));
  const cite = (s: Segment, score: number): Evidence => evidenceOf(a, s, score);
  // The sentences that hold the asked content (every content word where nothing in particular is asked).
  const all = contentWords(slots.intent).length;
  const answering = sentences.filter((s) =>
    asked.words.length ? holdsAsked(s.segment.text, asked) : s.matched.length === all,
  );
  const quoteOf = (s: Sentence) =>
    `${when(s.segment)}${where(a, s.segment)}, ${SOURCE[s.segment.kind] ?? 'the index'} reads ${quote(s.segment.text)}`;
  const yesNo = YES_NO.test(a.prompt);
  // Sentences that hold the asked thing but no instance of the asked kind of answer ("what brand
  // is the mug": a caption of the mug that names no brand): the kind is not said (class 2).
  const kindUnshown =
    asked.kind && !answering.length && !computed && wanted
      ? sentences.filter((s) => holdsWords(s.segment.text, asked))
      : [];
  if (kindUnshown.length && asked.kind) {
    const s = kindUnshown[0]!;
    const of = asked.words.length ? ` of ${list(asked.words.map((w) => `the ${w}`))}` : '';
    return {
      output: `${yesNo ? 'No. ' : ''}I could not find the ${asked.kind.word}${of}: ${SOURCE[s.segment.kind] ?? 'the index'} ${when(s.segment)}${where(a, s.segment)} reads ${quote(s.segment.text)}, which does not say ${asked.words.length > 1 || /[^s]s$/.test(asked.words[0] ?? '') ? 'their' : 'its'} ${asked.kind.word}.`,
      evidence: [cite(s.segment, s.score)],
      found: false,
      reading: `${reading} (free text without the asked ${asked.kind.word})`,
    };
  }

  if (!composed.found) {
    if (answering.length)
      return {
        // "Is there a pavement?" — "Yes: …" when a sentence holds what is asked.
        output: endSentence(capital(`${yesNo ? 'Yes: ' : ''}${list(answering.map(quoteOf))}`)),
        evidence: answering.map((s) => cite(s.segment, s.score)),
        found: true,
        reading: `free_text (${reading})`,
      };
    const output = await withMissingModel(a, narrowed, slots.intent, composed.output, cell);
    // Sentences near the question that do not hold what it asks: said as what is seen or said
    // there, never as the answer; a yes/no question is answered no.
    if (sentences.length && asked.words.length)
      return {
        output: `${yesNo ? 'No. ' : ''}${firstSentence(output)} No caption or transcript mentions ${phrase(asked.words, slots.asked.things)} either: the closest is ${SOURCE[sentences[0]!.segment.kind] ?? 'the index'} ${when(sentences[0]!.segment)}${where(a, sentences[0]!.segment)}, which reads ${quote(sentences[0]!.segment.text)}.`,
        evidence: composed.evidence,
        found: false,
        reading: `${reading} (free text without the asked content)`,
      };
    return { ...composed, output };
  }
  // The free text that holds the asked content answers; what the detector saw follows as the second source.
  const freeTextAnswer = () => {
    const detected = composed.evidence.filter((e) => e.kind === 'object');
    const labels = [...new Set(detected.map((e) => e.text).filter((t) => t in LABEL_WORDS))].slice(0, 3);
    const also = labels.length
      ? ` The object detector saw ${list(labels.map((l) => article(labelNoun(l))))} there.`
      : '';
    return {
      output: `${endSentence(capital(`${yesNo ? 'Yes: ' : ''}${list(answering.map(quoteOf))}`))}${also}`,
      evidence: [...answering.map((s) => cite(s.segment, s.score)), ...detected],
      found: true,
      reading: `free_text (${reading})`,
    };
  };
  if (freeFirst && answering.length) return freeTextAnswer();
  if (
    searched &&
    freeFirst &&
    asked.words.length &&
    !sentences.length &&
    (await a.retrieval.finder.has(narrowed, ['caption']))
  ) {
    // The pictures are described, and no description holds what is asked: the labels alone do
    // not answer it ("someone holding a mug" is not every video with a person).
    const missing = asked.words.filter((w) => slots.asked.things.includes(w) && !labelsNamed(` ${w} `).length);
    // An activity or a verb no label says ("what is the man carrying"): labels alone do not answer it either.
    const labelsOnly = composed.evidence.every((e) => e.kind === 'object' || e.kind === 'face' || e.kind === 'shot');
    const unsaid = asked.words.filter((w) => !labelsNamed(` ${w} `).length);
    if (!missing.length && !labelsMissed && labelsOnly && (describes || (unsaid.length && !cell)))
      return {
        output: `${yesNo ? 'No. ' : ''}I could not find an answer to that: no caption or transcript ${unsaid.length ? `mentions ${phrase(unsaid, slots.asked.things)}` : 'describes it'}, and the object detector's labels cannot say ${describes ? 'how something is done or what it looks like' : 'it'}. ${composed.output}`,
        evidence: composed.evidence,
        found: false,
        reading: `${reading} (not described)`,
      };
    if (missing.length || labelsMissed)
      return {
        output: `${yesNo ? 'No. ' : ''}I could not find ${phrase(missing.length ? missing : slots.intent.labels.filter((l) => l !== 'person' && !cited.has(l)).map(labelNoun))}: no caption describes ${missing.length > 1 ? 'them' : 'it'}. ${composed.output}`,
        evidence: composed.evidence,
        found: false,
        reading: `${reading} (not described)`,
      };
  }
  if (open && answering.length) return freeTextAnswer();
  if (!cell && composed.found && asked.words.length && (asked.all || asked.words.length === 1)) {
    // A search (no fact fits) quotes what is nearest by words and meaning: where none of it holds
    // the things asked about ("the kitchen curtains"), it is context, not the answer (class 2).
    // Without any free text among it, the missing model is what the answer names (below).
    const near = composed.evidence.filter((e) => e.kind !== 'shot');
    const c = near.find((e) => e.kind === 'caption' || e.kind === 'transcript' || e.kind === 'ocr');
    if (c && !near.some((e) => holdsAsked(e.text, asked))) {
      const many = asked.words.length > 1 || /[^s]s$/.test(asked.words[0]!);
      return {
        output: `${yesNo ? 'No. ' : ''}I could not find ${phrase(asked.words)}${narrowed.videos.length === 1 ? ` in ${narrowed.videos[0]!.fileName}` : ''}: nothing the index holds mentions ${many ? 'them' : 'it'}. The closest is ${SOURCE[c.kind]} ${c.end - c.start < 1.5 ? `at ${formatTime(c.start)}` : `from ${formatTime(c.start)} to ${formatTime(c.end)}`}${a.videos.length > 1 ? ` in ${c.file_name}` : ''}: ${quote(c.text)}.`,
        evidence: [c],
        found: false,
        reading: `${reading} (nothing holds the asked content)`,
      };
    }
  }
  if (!sentences.length) {
    // A search that found only detector labels for a question about something else ("what is the
    // man cooking") is no answer: say what would answer it instead of listing the labels.
    const unlabelled = contentWords(slots.intent).filter((w) => !isPersonWord(w) && !labelsNamed(w).length);
    const labelsOnly = composed.evidence.every((e) => e.kind === 'object' || e.kind === 'face' || e.kind === 'shot');
    // So is an answer to a question about a thing no label names, unless it asks what is written
    // or said (the text on the counter answers "what does the counter read"): its kind ("what
    // instrument is he playing"), the thing itself ("what is the weather like"), or an activity
    // ("what is the baby doing").
    const beyond = beyondLabels && !computed;
    if (
      ((beyond && !asksText && !quotesText) || (reading === 'search' && unlabelled.length && labelsOnly)) &&
      !(await a.retrieval.finder.has(narrowed, ['caption']))
    )
      return {
        output: await withMissingModel(a, narrowed, slots.intent, 'I could not find an answer to that.', cell),
        evidence: [],
        found: false,
        reading,
      };
  }
  return withContradiction(a, composed);
}

/** "How is the ball kicked", "what is she wearing", "what does the floor look like": labels cannot say. */
const DESCRIBED =
  /\bhow (?:is|are|was|were|does|do|did)\b(?! (?:it|the video|the clip) (?:start|end|begin))|\bwhat (?:is|are|was|were|does|do|did)\b.*\b(?:do|doing|wear|wearing|wears|look like|looks like|dressed)\b|\blooks? like\b/;

/** "a horse", "the weather and forecast": the asked words as a phrase. */
const phrase = (ws: string[], things?: string[]) =>
  list(
    ws.map((w) =>
      VERB_FORM.test(w) || (things && !things.includes(w) && !labelsNamed(` ${w} `).length)
        ? `"${w}"`
        : /s$/.test(w)
          ? w
          : article(w),
    ),
  );
/** A verb form among the asked words ("written", "kicking"): quoted, not given an article. */
const VERB_FORM =
  /^(?:\w{2,}(?:ing|ed)|written|spoken|shown|taken|given|seen|done|made|said|told|worn|held|eaten|drawn)$/;

/** Captions read to find one that names the thing text is written on (see unseenHolder). */
const CAPTION_READ = 2000;

/**
 * "What is written on the whiteboard": on-screen text answers only if something shows the thing it
 * is written on. When neither a detector label nor a caption nor the text itself names it, the
 * answer says so and quotes the text as what the screen shows, not as the thing's writing.
 */
async function unseenHolder(
  a: AnswerInput,
  scope: ScopeWindow,
  text: string,
  composed: Composed,
): Promise<Composed | null> {
  const m =
    /\b(?:written|writing|says?|reads?|text|printed|words?)\b.*?\b(?:on|across) (?:the|a|an|his|her|its|their) ((?:\w+ )?\w+)\s*\??$/.exec(
      text,
    );
  if (!m) return null;
  const noun = m[1]!.split(' ').at(-1)!;
  if (/^(screen|display|picture|image|frame|video|clip|film|monitor|tv|television|page|slide)s?$/.test(noun))
    return null;
  if (labelsNamed(` ${noun} `).length) return null;
  const stem = noun.replace(/s$/, '');
  const names = (t: string) => new RegExp(`\\b${stem}`, 'i').test(t);
  if (composed.evidence.some((e) => names(e.text))) return null;
  const captions = await a.retrieval.finder.byKind(scope, ['caption'], { limit: CAPTION_READ });
  if (captions.some((c) => names(c.text))) return null;
  // The read stops at the first captions by time: over a large index the ones naming it are searched for.
  if (
    captions.length >= CAPTION_READ &&
    (await a.retrieval.finder.containing(scope, ['caption'], [stem])).some((c) => names(c.text))
  )
    return null;
  return {
    output: `I could not find ${/^[aeiou]/.test(noun) ? 'an' : 'a'} ${noun}: no caption or detector label names one, so I cannot tell what is written on it. ${firstSentence(composed.output)} That text may be on something else.`,
    evidence: composed.evidence,
    found: false,
    reading: `${composed.reading} (holder unseen)`,
  };
}

/**
 * A detection that a caption of the same moment does not confirm: the answer says what each
 * source saw ("the object detector labelled it a sheep; the caption of that moment reads …").
 */
async function withContradiction(a: AnswerInput, composed: Composed): Promise<Composed> {
  // Spans of one detector label (counts and colours are computed and say so themselves).
  const objects = composed.evidence.filter((e) => e.kind === 'object' && e.text in LABEL_WORDS);
  if (!objects.length) return composed;
  const label = objects[0]!.text;
  const finder = a.retrieval.finder;
  const captions = await finder.byKind(
    { videos: a.videos.filter((v) => objects.some((o) => o.video_id === v.id)), window: null },
    ['caption'],
  );
  let over = captions.filter((c) =>
    objects.some((o) => o.video_id === c.videoId && c.start <= o.end && c.end >= o.start),
  );
  if (captions.length >= KIND_READ_LIMIT) {
    // The read stopped at the first captions by time (a long video): those of each detection's own time.
    const byId = new Map<number, Segment>();
    for (const o of objects)
      for (const c of await finder.byKind(
        { videos: a.videos.filter((v) => v.id === o.video_id), window: { start: o.start, end: o.end } },
        ['caption'],
      ))
        byId.set(c.id, c);
    over = [...byId.values()].sort((x, y) => x.start - y.start || x.id - y.id);
  }
  if (!over.length || over.some((c) => namesLabel(c.text, label))) return composed;
  const c = over[0]!;
  return {
    ...composed,
    output: `${composed.output} But the caption of that moment does not mention ${article(labelNoun(label))}: ${when(c)}${where(a, c)} it reads ${quote(c.text)}, so the detector's label may be wrong.`,
    evidence: [...composed.evidence, evidenceOf(a, c, c.confidence ?? 1)],
  };
}

/**
 * A "not found" where the index lacks the kind of evidence that could answer: it says so and
 * names what would answer (a vision model server for what is seen, a transcriber for what is said)
 * instead of listing unrelated labels.
 */
async function withMissingModel(
  a: AnswerInput,
  scope: ScopeWindow,
  intent: Slots['intent'],
  output: string,
  cell: Cell | undefined,
): Promise<string> {
  const finder = a.retrieval.finder;
  // Videos not analysed at all: the composer's "not analysed" says more than any model would.
  if (scope.videos.every((v) => v.analysis === null)) return output;
  // "What does the writing say" asks for text: no transcriber would answer it.
  if ((intent.needs.has('said') && !intent.needs.has('written')) || cell?.plugin.quotes === 'said') {
    if (await finder.has(scope, ['transcript'])) return output;
    // Nothing is said in a video without a sound track: that, not a missing model, is the answer.
    const silent = scope.videos.filter((v) => v.hasAudio === false);
    if (silent.length === scope.videos.length)
      return `Nothing is said in ${list(silent.map((v) => v.fileName))}: ${silent.length > 1 ? 'they have' : 'it has'} no audio track.`;
    if (/transcri|speech-to-text/.test(output)) return output;
    return `${firstSentence(output)} The index holds no transcript of the speech: a transcriber (the speech analyzer with a Whisper model, "vidq models pull", or --stt openai with a speech-to-text server) would answer it.`;
  }
  // A question about the picture that was read as a text search ("is it in colour or black and
  // white") is still about the picture.
  const visual = !intent.needs.has('written') && !cell?.plugin.needsNoVisionModel;
  // Only where the detector has nothing for what is asked: a count it got wrong is not a missing model.
  const detected: string[] = [];
  for (const l of intent.labels) if (l !== 'person' && (await seen(a, scope, l))) detected.push(l);
  if (visual && !detected.length && !(await finder.has(scope, ['caption'])) && contentWords(intent).length) {
    return `${firstSentence(output)} The index holds no descriptions of the pictures, only the labels of an object detector: a vision model server (--captioner openai) would describe what is seen and could answer this.`;
  }
  return output;
}

/** Whether the object detector saw the label in the scope (whole videos: from the labels each holds). */
async function seen(a: AnswerInput, scope: ScopeWindow, label: string): Promise<boolean> {
  if (!scope.window) return (await a.retrieval.finder.withLabel(scope.videos, label)).length > 0;
  return await a.retrieval.finder.has(scope, ['object'], [label]);
}

/** An evidence item; its frame is looked up with the others' at the end (composeAnswer). */
function evidenceOf(a: AnswerInput, s: Segment, score: number): Evidence {
  return {
    video_id: s.videoId,
    file_name: a.videos.find((v) => v.id === s.videoId)?.fileName ?? s.videoId,
    start: s.start,
    end: s.end,
    kind: s.kind,
    text: s.text,
    score: Math.round(score * 1000) / 1000,
    frame_url: null,
  };
}

const SOURCE: Record<string, string> = {
  caption: 'the caption',
  transcript: 'the transcript',
  ocr: 'the on-screen text',
};
const when = (s: Segment) =>
  s.end - s.start < 1.5 ? `at ${formatTime(s.start)}` : `from ${formatTime(s.start)} to ${formatTime(s.end)}`;
const where = (a: AnswerInput, s: Segment) =>
  a.videos.length > 1 ? ` in ${a.videos.find((v) => v.id === s.videoId)?.fileName ?? s.videoId}` : '';
const quote = (t: string) => `"${t.replace(/\s*\n\s*/g, ' ').trim()}"`;
const capital = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const article = (n: string) => (/^[aeiou]/i.test(n) ? `an ${n}` : `a ${n}`);
const YES_NO = /^\s*(is|are|was|were|does|do|did|can|could|has|have|had|any)\b/i;
/** A full stop, unless the sentence ends with a quote that has one. */
const endSentence = (t: string) => (/[.!?]"$/.test(t) ? t : `${t}.`);
const firstSentence = (t: string) => t.split(/(?<=[.!?])\s/)[0]!;
function list(xs: string[]): string {
  return xs.length <= 1 ? (xs[0] ?? '') : `${xs.slice(0, -1).join(', ')} and ${xs.at(-1)}`;
}
