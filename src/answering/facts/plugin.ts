/**
 * What a fact plug-in is. Each kind of fact the index holds (objects, people, text on screen,
 * speech, shots, file facts...) is one module that owns its example questions (they teach the
 * question reader what it sounds like), the slots each form needs, the words that name it, and
 * its answer functions, one per question form. The table of plug-ins is facts/index.ts.
 */
import type { Catalog } from '../../storage/catalog';
import type { Segment, SegmentKind, Video } from '../../storage/rows';
import type { Evidence, EvidenceFinder, ScopeWindow } from '../evidence';
import type { Intent } from '../intent';
import type { Counted } from '../series';

/** What a form's answer function returns: the sentences, and whether they answer (false: "could not find"). */
export interface Answer {
  text: string;
  found: boolean;
}

export interface Style {
  /** Items listed at most (spans, quotes, shots). */
  items: number;
  /** One sentence only. */
  brief: boolean;
}

/** A time the question writes: absolute (seconds) or relative to the video's length. */
export type TimeSlot =
  | { start: number; end: number; point: boolean }
  | { relative: 'start' | 'end' | 'middle'; seconds: number | null };

export interface Slots {
  intent: Intent;
  time: TimeSlot | null;
  /** Videos of the scope the question names by file name ("in pancake.mkv", "the bottles video"). */
  files: Video[];
  colour: string | null;
  /** "at once", "at the same time", "simultaneously": a count per moment, not over time. */
  atOnce: boolean;
  /** Words in quotes: text to look for. */
  quoted: string[];
  /** Rule cues for what the question is about (shots, file facts...), from its words. */
  factCues: Set<FactKind>;
  /** Rule cues for the form ("how many" → count). */
  formCues: Set<Form>;
  /** The question, lower case, with the file names it gives replaced by "the video" (what is embedded). */
  text: string;
  /** What the question asks about (the vocabulary decides whether labels can answer it: `unlabelledAsked`). */
  asked: Asked;
}

/** What a question asks about, read from its words. */
export interface Asked {
  /** The kind of thing after "what/which" ("what instrument", "which kind of animal", "what colour"), or null. */
  kind: string | null;
  /** The head nouns of the things it names with an article or a possessive ("the man", "his drum kit"), places ("on the desk") left out. */
  things: string[];
  /** An activity it asks for ("what is the baby doing", "what is she making"), or null. */
  activity: string | null;
}

/**
 * What a plug-in answers with: the scope of the question, the segments, citations and "not found".
 * The composer (compose.ts) implements it; plug-ins see only this, so that they do not depend on it.
 */
export interface FactContext {
  /** The style of the answer (how many items, one sentence or more), from the guidance. */
  readonly style: Style;
  /** The scope the answer looks at now (narrowed by the question's file names and times). */
  readonly scope: ScopeWindow;
  /** The question as asked. */
  readonly prompt: string;
  readonly finder: EvidenceFinder;
  /** The catalog, for the plug-ins' own reads through src/storage/repositories/ (people, colours). */
  readonly catalog: Catalog;
  readonly indexId: string;
  /** A point in time the question is about (a point `target`), whose on-screen text can be read now. */
  readonly moment: { video: Video; t: number; readText: () => Promise<{ text: string; confidence: number }[]> } | null;
  /** Whether the scope holds more than one video (answers then name the file). */
  multi(): boolean;
  video(id: string): Video;
  /** " in <file>" when the scope holds more than one video, else "". */
  where(videoId: string): string;
  /** Adds an evidence item (deduplicated) and returns it: every time an answer says is cited. */
  cite(videoId: string, kind: Segment['kind'], start: number, end: number, text: string, score: number): Evidence;
  citeSegment(s: Segment, score?: number): Evidence;
  /** "I could not find <what> in <scope>", with what the scope does contain. */
  notFound(what: string, style: Style): Promise<Answer>;
  /** The segments of the scope (or of `scope`) ranked against the question, by words and meaning. */
  ranked(intent: Intent, n: number, scope?: ScopeWindow): ReturnType<EvidenceFinder['ranked']>;
  /** The detection spans of a label in the scope. */
  spansOf(label: string): Promise<Segment[]>;
  /** The detection spans of any of these labels in the scope, in time order (at most `limit`). */
  objectSpans(labels: string[], limit?: number): Promise<Segment[]>;
  /** How many detection spans of a label the scope holds. */
  spanCount(label: string): Promise<number>;
  /** The latest detection span of a label in the scope. */
  lastSpanOf(label: string): Promise<Segment | undefined>;
  /** Whether the object detector saw the label in the scope. */
  sees(label: string): Promise<boolean>;
  /** Per-frame counts of a label over the scope. */
  series(label: string): Promise<Counted[]>;
}

/** A kind of fact: the `kind` of its plug-in. */
export type FactKind = string;

/** The question forms: how many, when/where in the video, what, which video, is there, longest/first/last, compare, describe, what is visible. */
export type Form =
  | 'count'
  | 'when'
  | 'what'
  | 'which_video'
  | 'presence'
  | 'extreme'
  | 'compare'
  | 'describe'
  | 'visible';

/** Slots a form needs: a label to ask about, two videos to compare, a time, a word naming its fact, or one naming its form. */
export type SlotNeed = 'label' | 'two_videos' | 'time' | 'cue' | 'form_cue';

export interface FormSpec {
  /** Answers the question from the evidence of the composer's scope. */
  answer: (t: FactContext, slots: Slots, cell: Cell) => Answer | Promise<Answer>;
  needs?: SlotNeed[];
  /** It reads "first / last / at the beginning / at the end" itself (a relative time does not narrow its scope). */
  readsPosition?: boolean;
  /** Overrides the plug-in's `computed` for this form. */
  computed?: boolean;
  /** Overrides the plug-in's `openEnded` for this form. */
  openEnded?: boolean;
  examples: string[];
}

export interface FactPlugin {
  kind: FactKind;
  /** Where the fact lives: segment kinds, or columns of the video row (none). */
  segmentKinds: SegmentKind[];
  /** How to name the fact in a "not found" answer. */
  noun: string;
  /** Words that name this fact (a rule cue for the reader), when it has such words. */
  cue?: RegExp;
  /**
   * Whether the question names this fact through what the index holds (a person's name, a colour
   * of a detected thing): a cue only the index can tell. Read before the reader scores the cells.
   */
  cueIn?: (t: FactContext) => Promise<boolean>;
  /** How much the cue counts against other facts' cues (default 1): more where its words are more specific than an object label. */
  cueWeight?: number;
  /**
   * Its found answer is computed from measurements (counts, file facts, faces, colours, shots): a
   * sentence of free text does not replace it. Per form where only some are (FormSpec.computed).
   */
  computed?: boolean;
  /**
   * Its answer is one open guess among others ("what is visible", "what objects"): captions and
   * transcripts compete with it by relevance, and one that holds every asked word answers.
   */
  openEnded?: boolean;
  /** It quotes what is written on screen (answers the 'written' need) or what is said (the 'said' need). */
  quotes?: 'written' | 'said';
  /** It answers from the object detector's labels (objects, people): near readings of each other. */
  detections?: boolean;
  /** It is about the sound (speech, the audio track): a question that names a thing is not answered with it. */
  heard?: boolean;
  /** It is a fact about the index as a whole (its videos): a question that names a video asks about that video instead. */
  aboutIndex?: boolean;
  /** It is measured without any model that describes the picture: its "not found" names no vision model. */
  needsNoVisionModel?: boolean;
  forms: Partial<Record<Form, FormSpec>>;
}

/** One form of one fact: what the reader scores and the composer runs. */
export interface Cell extends FormSpec {
  fact: FactKind;
  form: Form;
  cueWeight: number;
  /** The plug-in's declared kind (its flags: quotes, detections, heard...). */
  plugin: FactPlugin;
  /** Resolved: the form's own flag, else the plug-in's. */
  computed: boolean;
  openEnded: boolean;
}

/**
 * A form of a plug-in cued by what the index holds (people by name, colours): one answer reads the
 * question's own words for every form, so a form is its examples (they teach the reader the
 * wordings) and needs its cue.
 */
export function cueForm(
  answer: FormSpec['answer'],
  examples: string[],
  opts: Pick<FormSpec, 'readsPosition'> = {},
): FormSpec {
  return { answer, needs: ['cue'], examples, ...opts };
}
