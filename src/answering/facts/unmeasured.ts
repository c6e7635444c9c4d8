/**
 * Fact plug-in: kinds of fact that no analyzer of the index measures (issue 34, class 6: "the
 * same honesty applies to every question whose kind no analyzer measures"). The mood or genre of
 * the music, how someone feels, how old someone is, the language or tone of a voice, how fast
 * something moves. The answer says that it cannot tell, names the kind of model that would know,
 * and gives what is known instead (the sound, the people, the thing asked about). A caption or a
 * transcript that does say it still answers first (answer.ts: free text that holds the asked
 * words beats a "not found").
 *
 * A kind is one line of UNMEASURED: the words that ask for it, what to call it, the model, and
 * which of the known facts to give instead.
 */
import { sureSpeech } from '../noise';
import { numberWord, labelNoun } from '../vocabulary';
import { article, span } from '../wording';
import type { Answer, FactContext, FactPlugin, Slots } from './plugin';

interface Unmeasured {
  asks: RegExp;
  what: string;
  model: string;
  known: 'sound' | 'people' | 'thing';
}

const UNMEASURED: Unmeasured[] = [
  {
    asks: /\b(genre|style) of (the )?(music|song|soundtrack)\b|\b(music|song|soundtrack|tune)\b.*\b(sad|happy|cheerful|calm|upbeat|genre|mood|tempo|fast|slow|loud|quiet|style)\b|\bwhat (song|tune|piece of music)\b|\b(sad|happy|upbeat|calm|loud|quiet)\b.*\b(music|song|tune)\b/,
    what: 'what the music is like',
    model: 'a music classification model (genre, mood, tempo) or a song recogniser',
    known: 'sound',
  },
  {
    asks: /\b(emotions?|mood|feel(ing|s)?|angry|upset|sad|happy|scared|afraid|surprised|excited|nervous|bored)\b.*\b(man|woman|person|people|boy|girl|child|baby|he|she|they|speaker|someone|anyone)\b|\b(man|woman|person|boy|girl|child|baby|he|she|speaker|someone)\b.*\b(emotions?|mood|feel(ing|s)?|angry|upset|sad|happy|scared|afraid|surprised|excited|nervous|bored)\b/,
    what: 'how anyone feels',
    model: 'a facial-expression model, or a speech-emotion model for a voice,',
    known: 'people',
  },
  {
    asks: /\bhow old\b|\b(age|ages)\b.*\b(man|woman|person|people|boy|girl|child|baby|he|she)\b|\b(man|woman|person|boy|girl|child|he|she)\b.*\b(age|years old)\b/,
    what: 'how old anyone is',
    model: 'an age-estimation model',
    known: 'people',
  },
  {
    asks: /\b(what|which) languages?\b|\blanguage (is|are|was|were) (spoken|used|heard)\b|\b(accent|dialect|tone of voice)\b/,
    what: 'the language or the manner of the speech',
    model: 'a transcriber that identifies the language, a Whisper model ("vidq models pull" or --stt openai),',
    known: 'sound',
  },
  {
    asks: /\bhow (fast|quickly|slowly)\b|\b(speed|velocity|km\/h|mph)\b/,
    what: 'how fast anything moves',
    model: 'an object-tracking model with a known scale of the picture',
    known: 'thing',
  },
];

/** The kind of fact the question asks for that no analyzer measures, or null. */
function unmeasuredIn(prompt: string): Unmeasured | null {
  const q = prompt.toLowerCase();
  return UNMEASURED.find((u) => u.asks.test(q)) ?? null;
}

export const unmeasured: FactPlugin = {
  kind: 'unmeasured',
  segmentKinds: [],
  noun: 'that',
  cue: new RegExp(UNMEASURED.map((u) => u.asks.source).join('|')),
  // Its words are narrower than an object label or speech ("is the man happy" asks no presence).
  cueWeight: 3,
  needsNoVisionModel: true,
  forms: {
    what: {
      answer: async (t, s) => await cannotTell(t, s),
      needs: ['cue'],
      examples: [
        'What kind of music is playing?',
        'How does the woman feel?',
        'How old is the boy?',
        'What language are they speaking?',
        'How fast does the car drive?',
      ],
    },
    presence: {
      answer: async (t, s) => await cannotTell(t, s),
      needs: ['cue'],
      examples: ['Is the music sad?', 'Is the man angry?', 'Does the speaker have an accent?'],
    },
  },
};

async function cannotTell(t: FactContext, slots: Slots): Promise<Answer> {
  const u = unmeasuredIn(t.prompt);
  if (!u) return await t.notFound('that', t.style);
  return {
    text: `I cannot tell ${u.what}: nothing this index holds measures it, and ${u.model} would be needed. ${await known(t, u, slots)}`,
    found: false,
  };
}

/** What is known instead: the sound, the people on screen, or the thing asked about. */
async function known(t: FactContext, u: Unmeasured, slots: Slots): Promise<string> {
  if (u.known === 'sound') {
    if (t.scope.videos.every((v) => v.hasAudio === false)) return 'The video has no audio track.';
    const { segs, hedged } = sureSpeech(await t.finder.byKind(t.scope, ['speech', 'transcript']));
    if (!segs.length) return 'No speech was detected in its sound.';
    const first = segs[0]!;
    const last = segs.reduce((a, b) => (b.end > a.end ? b : a));
    t.citeSegment(first);
    return `${hedged ? 'Something that may be speech or music is heard' : 'Someone speaks'} ${span(first.start, last.end)}${t.where(first.videoId)}.`;
  }
  const label = u.known === 'people' ? 'person' : (slots.intent.labels.find((l) => l !== 'person') ?? 'person');
  const pts = await t.series(label);
  if (!pts.length) return `No ${labelNoun(label)} was detected.`;
  const most = pts.reduce((a, b) => (b.n > a.n ? b : a));
  if (most.segment) t.citeSegment(most.segment);
  return most.n > 1
    ? `At most ${numberWord(most.n)} ${labelNoun(label, most.n)} are on screen at once${t.where(most.video.id)}.`
    : `${article(labelNoun(label)).replace(/^./, (c) => c.toUpperCase())} is on screen${t.where(most.video.id)}${most.segment ? ` ${span(most.segment.start, most.segment.end)}` : ''}.`;
}
