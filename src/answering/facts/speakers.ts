/**
 * Fact plug-in: speakers. A speaker is a voice, not a face: how many people speak, or whether the
 * speaker is a man or a woman, needs a model that tells voices apart (speaker diarization) or
 * describes them, and the index holds none. The answer says so, names that model, and gives what
 * is known instead: when speech is heard, and how many people are on screen at once meanwhile.
 */
import type { Segment } from '../../storage/rows';
import { formatTime } from '../target';
import { numberWord } from '../vocabulary';
import { onTrack, span } from '../wording';
import { sureSpeech } from '../noise';
import type { Answer, FactContext, FactPlugin } from './plugin';

export const speakers: FactPlugin = {
  kind: 'speakers',
  segmentKinds: ['speech', 'transcript'],
  noun: 'any speech',
  // Voices, counted or described: narrower than speech's words, and it outweighs a person label.
  // Every form needs it: a question like "is the road wet or dry" resembles "is the voice male or
  // female" in meaning, and asks nothing about voices.
  cue: /\b(how many|number of|count the) (different |distinct |separate |individual )?(people|persons|speakers|voices|narrators|men|women|ones?)\b.*?\b(speak\w*|talk\w*|voices?|speakers?|heard)\b|\b(how many|number of|count the) (different |distinct )?(speakers|voices|narrators)\b|\b(speaker|narrator|voice)('s)? (gender|accent|age)\b|\b(male|female|man's|woman's) (voice|speaker|narrator)\b|\b(speaker|narrator|voice) (is |a |an )*(man|woman|male|female|child|boy|girl)\b/,
  cueWeight: 3,
  computed: true,
  heard: true,
  forms: {
    count: {
      answer: async (t) => await voices(t, 'count'),
      needs: ['cue'],
      examples: [
        'How many different voices can be heard?',
        'How many speakers are there?',
        'Count the people who talk.',
        'How many persons speak in the recording?',
      ],
    },
    what: {
      answer: async (t) => await voices(t, 'describe'),
      needs: ['cue'],
      examples: ['What accent does the speaker have?', 'How old is the speaker by their voice?'],
    },
    presence: {
      answer: async (t) => await voices(t, 'describe'),
      needs: ['cue'],
      examples: ['Is the narrator a man or a woman?', 'Does the voice sound male or female?'],
    },
  },
};

async function voices(t: FactContext, asked: 'count' | 'describe'): Promise<Answer> {
  const { segs, hedged } = sureSpeech(await t.finder.byKind(t.scope, ['speech', 'transcript']));
  if (!segs.length) return await t.notFound('any speech', t.style);
  const first = segs[0]!;
  const last = segs.reduce((a, b) => (b.end > a.end ? b : a));
  t.citeSegment(first);
  if (last !== first) t.citeSegment(last);
  const cannot =
    asked === 'count'
      ? 'I cannot count the speakers: the index cannot tell one voice from another (a speaker-diarization model would).'
      : 'I cannot tell what the speaker is like: the index holds no model that describes a voice (a speaker or voice classification model would).';
  return {
    text: `${cannot} ${hedged ? 'Something that may be speech (or music, or singing) is heard' : 'Speech is heard'} ${span(first.start, last.end)}${onTrack(first)}${t.where(first.videoId)}${await onScreen(t, segs)}.`,
    found: true,
  };
}

/** "; meanwhile at most two people are on screen at once": from the person counts per frame, not summed detections. */
async function onScreen(t: FactContext, speech: Segment[]): Promise<string> {
  const during = (v: string, at: number) =>
    speech.some((s) => s.videoId === v && at >= s.start - 0.5 && at <= s.end + 0.5);
  let most = 0;
  let at: { t: number; s: Segment } | null = null;
  for (const p of await t.series('person'))
    if (p.segment && during(p.video.id, p.t) && p.n > most) {
      most = p.n;
      at = { t: p.t, s: p.segment };
    }
  if (!at) return '; no person is on screen while it is heard';
  t.citeSegment(at.s);
  return `; while it is heard, at most ${numberWord(most)} ${most === 1 ? 'person is' : 'people are'} on screen at once (at ${formatTime(at.t)}), but a person on screen need not be the one speaking`;
}
