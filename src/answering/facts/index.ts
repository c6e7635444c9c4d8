/**
 * The fact table: every fact plug-in, in one list. Adding a kind of fact is one module (see
 * plugin.ts) and one line here. The examples are written for this purpose; the more different
 * wordings a form has, the better the reader generalises. They must not copy the development
 * questions (../shared/eval).
 *
 * `caption` segments (model-written descriptions of a shot) and transcripts are not a fact kind of
 * their own: an open question is answered from them by the evidence reader (open.ts).
 */
import { colours } from './colours';
import { faces } from './faces';
import { audio, codec, duration, fps, resolution, size, videos } from './file';
import { moment } from './moment';
import { objects, people } from './objects';
import type { Cell, FactPlugin, Form } from './plugin';
import { shots } from './shots';
import { speakers } from './speakers';
import { speech } from './speech';
import { text } from './text';
import { unmeasured } from './unmeasured';

export type { Answer, Cell, FactContext, FactKind, FactPlugin, Form, SlotNeed, Slots, Style } from './plugin';

export const FACTS: FactPlugin[] = [
  objects,
  people,
  text,
  speech,
  speakers,
  unmeasured,
  shots,
  duration,
  resolution,
  fps,
  size,
  codec,
  audio,
  videos,
  moment,
  // Cued by what the index holds (a person's name, a colour said with a detected thing); last, so
  // that where a reading ties, the fact whose own words the question uses answers first.
  faces,
  colours,
];

/** Every form of every fact, flat (the reader scores each). */
export const CELLS: Cell[] = FACTS.flatMap((f) =>
  Object.entries(f.forms).map(([form, spec]) => ({
    fact: f.kind,
    form: form as Form,
    cueWeight: f.cueWeight ?? 1,
    ...spec!,
    plugin: f,
    computed: spec!.computed ?? f.computed ?? false,
    openEnded: spec!.openEnded ?? f.openEnded ?? false,
  })),
);
