/**
 * What a fact plug-in is. Each kind of fact the index holds (objects, people, text on screen,
 * speech, shots, file facts...) is one module that owns its example questions (they teach the
 * question reader what it sounds like), the slots each form needs, the words that name it, and
 * its answer functions, one per question form. The table of plug-ins is facts/index.ts.
 */
import type { SegmentKind } from '../../storage/schema';
import type { Answer, Composer } from '../compose';
import type { Slots } from '../reader';

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
  answer: (t: Composer, slots: Slots, cell: Cell) => Answer | Promise<Answer>;
  needs?: SlotNeed[];
  /** It reads "first / last / at the beginning / at the end" itself (a relative time does not narrow its scope). */
  readsPosition?: boolean;
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
  cueIn?: (t: Composer) => boolean;
  /** How much the cue counts against other facts' cues (default 1): more where its words are more specific than an object label. */
  cueWeight?: number;
  forms: Partial<Record<Form, FormSpec>>;
}

/** One form of one fact: what the reader scores and the composer runs. */
export interface Cell extends FormSpec {
  fact: FactKind;
  form: Form;
  cueWeight: number;
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
