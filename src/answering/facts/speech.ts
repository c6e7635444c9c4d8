/** Fact plug-in: speech: what is said (transcripts), when someone speaks, how much, which video. */
import { KIND_READ_LIMIT } from '../evidence';
import type { Segment, SegmentKind } from '../../storage/rows';
import { total } from '../series';
import type { Intent } from '../intent';
import { formatTime } from '../target';
import { numberWord } from '../vocabulary';
import { joinList, onTrack, quote, secs, span, YES_NO } from '../wording';
import { sureSpeech } from '../noise';
import { askedContent, contains } from '../open';
import type { FactPlugin, Answer, FactContext, Slots, Style } from './plugin';

// "What does the writing / the sign say" asks for text: "say" after a written thing is no speech cue.
const SAID_CUE =
  /(?<!\b(?:writing|sign|signs|text|title|titles|label|labels|banner|poster|screen|note|board|lettering|headline|caption|captions|subtitles?|credits) )\b(say|says|said|saying|speak|speaks|spoke|speaking|speakers?|speech|talk|talks|talking|spoken|voice|mention\w*|tell(?! (me|us)\b)|tells|told|words|quote|narrat\w*|dialogue|conversation|sentence|utter\w*|pronounc\w*)\b/;

/** A question that names a topic of what is said ("about taxes", "mention the weather"), not only speech itself. */
const TOPIC = /\b(about|mention\w*|regarding|concerning|discuss\w*|refer\w* to|the words?)\b/i;

export const speech: FactPlugin = {
  kind: 'speech',
  quotes: 'said',
  heard: true,
  segmentKinds: ['transcript', 'speech'],
  noun: 'any speech',
  forms: {
    what: {
      answer: async (t, s) => await said(t, s, t.style),
      examples: [
        'What does the narrator say?',
        'What words are spoken?',
        'What is the man talking about?',
        'Quote what the woman says.',
        'What do the speakers tell us?',
        'What is the instruction given in the audio?',
        'What is being said?',
        'What gets said in the recording?',
        'What can we hear them say?',
        'Tell me what the dialogue is.',
      ],
    },
    when: {
      answer: async (t, s) => await speechWhen(t, s.intent, t.style, false),
      needs: ['form_cue'],
      examples: [
        'When does someone start talking?',
        'At what time is the word hello spoken?',
        'When does the voice say goodbye?',
        'When is there talking?',
      ],
    },
    presence: {
      answer: async (t, s) => await speechWhen(t, s.intent, t.style, true, s),
      examples: [
        'Does anyone speak in it?',
        'Is there dialogue?',
        'Is there a voice-over?',
        'Do the speakers talk at all?',
        'Is somebody talking?',
        'Can a voice be heard?',
        'Does anybody say anything?',
      ],
    },
    count: {
      answer: async (t) => await speechAmount(t, t.style),
      examples: [
        'How much of the clip has talking?',
        'How many seconds of speech are there?',
        'How long does the speaker talk for?',
        'How many times does someone speak?',
      ],
    },
    compare: {
      answer: async (t) => await speechWhich(t, t.style),
      examples: [
        'Which video has the most talking?',
        'Is there more speech in a.mp4 or in b.mp4?',
        'Which clip has the longest dialogue?',
      ],
    },
    which_video: {
      answer: async (t) => await speechWhich(t, t.style),
      needs: ['form_cue'],
      examples: [
        'Which video has someone talking?',
        'In which clip does a person mention money?',
        'Which recording contains speech?',
      ],
    },
  },
  cue: SAID_CUE,
};

// ---- the answers ------------------------------------------------------------------------------

async function said(t: FactContext, slots: Slots, style: Style): Promise<Answer> {
  const { scope } = t;
  const intent = slots.intent;
  const transcripts = await t.finder.byKind(scope, ['transcript']);
  // "What does she say about taxes": the lines must hold the topic, else it is not mentioned.
  const topic = TOPIC.test(t.prompt) ? askedContent(slots, SAID_CUE).words : [];
  if (transcripts.length && topic.length) {
    let about = transcripts.filter((s) => topic.some((w) => contains(s.text, w)));
    if (!about.length && transcripts.length >= KIND_READ_LIMIT)
      about = (await t.finder.containing(scope, ['transcript'], topic)).filter((s) =>
        topic.some((w) => contains(s.text, w)),
      );
    if (!about.length) return notMentioned(t, topic, transcripts);
    const parts = about.slice(0, Math.max(1, style.items - 1)).map((s) => {
      t.citeSegment(s);
      return `${span(s.start, s.end)}${onTrack(s)}${t.where(s.videoId)}: ${quote(s.text)}`;
    });
    return { text: `The speaker says, ${parts.join('; ')}.`, found: true };
  }
  if (transcripts.length) {
    const ranked = (await t.ranked(intent, 20, scope))
      .filter((r) => r.segment.kind === 'transcript')
      .map((r) => r.segment);
    const chosen = (ranked.length ? ranked : transcripts)
      .slice(0, Math.max(1, style.items - 1))
      .sort((a, b) => a.start - b.start);
    const parts = chosen.map((s) => {
      t.citeSegment(s);
      return `${span(s.start, s.end)}${onTrack(s)}${t.where(s.videoId)}: ${quote(s.text)}`;
    });
    return { text: `The speaker says, ${parts.join('; ')}.`, found: true };
  }
  const { segs: speech, hedged } = sureSpeech(await t.finder.byKind(scope, ['speech']));
  if (speech.length) {
    const first = speech[0]!;
    const last = speech.at(-1)!;
    t.citeSegment(first);
    if (last !== first) t.citeSegment(last);
    return {
      text: `I could not find what is said: ${speaks(hedged)} ${span(first.start, last.end)}${onTrack(first)}${t.where(first.videoId)}, but the speech was not transcribed (no speech-to-text model is installed; see "vidq models pull").`,
      found: false,
    };
  }
  return await t.notFound('any speech', style);
}

/** "Nothing said mentions taxes", with what is said (the first lines) as context, cited. */
function notMentioned(t: FactContext, topic: string[], transcripts: Segment[]): Answer {
  const near = transcripts.slice(0, 2).map((s) => {
    t.citeSegment(s);
    return `${span(s.start, s.end)}${t.where(s.videoId)}: ${quote(s.text)}`;
  });
  return {
    text: `${YES_NO.test(t.prompt) ? 'No. ' : ''}I could not find ${joinList(topic)} in what is said: no line of the transcript mentions ${topic.length > 1 || /[^s]s$/.test(topic[0]!) ? 'them' : 'it'}. What is said is, for example, ${near.join('; ')}.`,
    found: false,
  };
}

// ---- whole-video questions ----------------------------------------------------------------

async function speechWhen(
  t: FactContext,
  intent: Intent,
  style: Style,
  presence: boolean,
  slots?: Slots,
): Promise<Answer> {
  const { segs, hedged } = sureSpeech(await t.finder.byKind(t.scope, ['transcript', 'speech']));
  if (!segs.length) return await t.notFound('any speech', style);
  const transcripts = segs.filter((s) => s.kind === 'transcript');
  // "Does anyone mention the weather?": speech alone is no yes; the lines must hold the topic.
  const topic = presence && slots && TOPIC.test(t.prompt) ? askedContent(slots, SAID_CUE).words : [];
  if (topic.length) {
    const about = transcripts.filter((s) => topic.some((w) => contains(s.text, w)));
    if (about.length) {
      const parts = about.slice(0, style.items).map((s) => {
        t.citeSegment(s);
        return `${span(s.start, s.end)}${onTrack(s)}${t.where(s.videoId)}: ${quote(s.text)}`;
      });
      return { text: `${YES_NO.test(t.prompt) ? 'Yes: it' : 'It'} is said ${parts.join('; ')}.`, found: true };
    }
    if (transcripts.length) return notMentioned(t, topic, transcripts);
    const first = segs[0]!;
    const last = segs.at(-1)!;
    t.citeSegment(first);
    return {
      text: `I could not find whether ${joinList(topic)} ${topic.length > 1 ? 'are' : 'is'} mentioned: ${speaks(hedged)} ${span(first.start, last.end)}${onTrack(first)}${t.where(first.videoId)}, but the speech was not transcribed (a transcriber would tell: "vidq models pull", or --stt openai).`,
      found: false,
    };
  }
  // "When does she say X": the transcript lines with the words asked about.
  const words = intent.keywords.filter((k) => k.length > 2 && !SPEECH_WORDS.has(k));
  const says = (s: Segment) => words.some((w) => s.text.toLowerCase().includes(w));
  let said = words.length ? transcripts.filter(says) : [];
  // The read stops at the first lines by time: over a large index the lines with the words are searched for.
  if (words.length && !presence && segs.length >= KIND_READ_LIMIT)
    said = (await t.finder.containing(t.scope, ['transcript'], words)).filter(says);
  if (words.length && said.length && !presence) {
    const parts = said.slice(0, style.items).map((s) => {
      t.citeSegment(s);
      return `${span(s.start, s.end)}${onTrack(s)}${t.where(s.videoId)}: ${quote(s.text)}`;
    });
    return { text: `It is said ${parts.join('; ')}.`, found: true };
  }
  const spans = transcripts.length ? transcripts : segs;
  // The whole count when the read was cut at its limit (an index can hold thousands of lines).
  const total =
    segs.length < KIND_READ_LIMIT
      ? spans.length
      : await t.finder.countByKind(t.scope, transcripts.length ? ['transcript'] : ['transcript', 'speech']);
  const shown = spans.slice(0, style.items);
  const parts = shown.map((s) => {
    t.citeSegment(s);
    return `${span(s.start, s.end)}${onTrack(s)}${t.where(s.videoId)}`;
  });
  const more =
    total > shown.length ? ` (and ${total - shown.length} more time${total - shown.length > 1 ? 's' : ''})` : '';
  if (hedged)
    return {
      text: `${presence && YES_NO.test(t.prompt) ? 'Perhaps: s' : 'S'}omething that may be speech is heard ${joinList(parts)}${more}${MAY_BE_MUSIC}`,
      found: true,
    };
  return {
    text: `${presence && YES_NO.test(t.prompt) ? 'Yes: someone' : 'Someone'} speaks ${joinList(parts)}${more}.`,
    found: true,
  };
}

async function speechAmount(t: FactContext, style: Style): Promise<Answer> {
  const { segs, hedged } = sureSpeech(await t.finder.byKind(t.scope, ['speech']));
  const spans = segs.length ? segs : await t.finder.byKind(t.scope, ['transcript']);
  if (!spans.length) return await t.notFound('any speech', style);
  let count = spans.length;
  let seconds = total(spans);
  let last = spans.at(-1)!;
  if (spans.length >= KIND_READ_LIMIT) {
    // The read stopped at the first spans by time: the whole scope is counted and summed, and the last is the latest.
    const kind: SegmentKind = segs.length ? 'speech' : 'transcript';
    const videos = await t.finder.perVideo(t.scope, [kind]);
    count = videos.reduce((a, v) => a + v.count, 0);
    seconds = videos.reduce((a, v) => a + v.seconds, 0);
    last = (await t.finder.byKind(t.scope, [kind], { limit: 1, last: true }))[0] ?? last;
  }
  t.citeSegment(spans[0]!);
  if (count > 1) t.citeSegment(last);
  return {
    text: `${hedged ? 'Something that may be speech is heard' : 'Someone speaks'} ${numberWord(count)} time${count === 1 ? '' : 's'}, ${secs(seconds)}${hedged ? '' : ' of speech'} in all, from ${formatTime(spans[0]!.start)} to ${formatTime(last.end)}${t.where(spans[0]!.videoId)}${hedged ? MAY_BE_MUSIC : '.'}`,
    found: true,
  };
}

async function speechWhich(t: FactContext, style: Style): Promise<Answer> {
  // Videos with speech the detector is sure of; where there are none, the unsure ones, hedged.
  const { segs, hedged } = sureSpeech(await t.finder.byKind(t.scope, ['transcript', 'speech'], { limit: WHICH_READ }));
  if (!segs.length) return await t.notFound('any speech', style);
  if (segs.length >= WHICH_READ) {
    // The read stopped at the first lines by time (the openings of many videos): summed per video in the whole scope.
    const parts: string[] = [];
    for (const v of (await t.finder.perVideo(t.scope, ['transcript', 'speech'])).slice(0, style.items)) {
      const first = (
        await t.finder.byKind({ videos: [t.video(v.videoId)], window: t.scope.window }, ['transcript', 'speech'], {
          limit: 1,
        })
      )[0]!;
      t.citeSegment(first);
      parts.push(`${t.video(v.videoId).fileName} (${secs(v.seconds)}, from ${formatTime(first.start)})`);
    }
    return { text: `Speech is heard in ${joinList(parts)}.`, found: true };
  }
  const byVideo = new Map<string, Segment[]>();
  for (const s of segs) byVideo.set(s.videoId, [...(byVideo.get(s.videoId) ?? []), s]);
  // Most speech first: "which has the most talking" reads the first name.
  const parts = [...byVideo.entries()]
    .sort((a, b) => total(b[1]) - total(a[1]))
    .slice(0, style.items)
    .map(([vid, ss]) => {
      t.citeSegment(ss[0]!);
      return `${t.video(vid).fileName} (${secs(total(ss))}, from ${formatTime(ss[0]!.start)})`;
    });
  return {
    text: hedged
      ? `Something that may be speech is heard in ${joinList(parts)}${MAY_BE_MUSIC}`
      : `Speech is heard in ${joinList(parts)}.`,
    found: true,
  };
}

const speaks = (hedged: boolean) => (hedged ? 'something that may be speech is heard' : 'someone speaks');

/** The hedge of speech the detector was unsure of. */
const MAY_BE_MUSIC =
  ': the voice detector was unsure, and the sound may be music or singing rather than someone speaking.';

/** Lines read to tell which video has the most speech (more: summed per video instead). */
const WHICH_READ = 2000;

// ---- what is visible at a moment ------------------------------------------------------------

const SPEECH_WORDS = new Set(
  'speak speaks spoke speaking speaker speakers talk talks talking say says said someone somebody anyone person man woman voice speech start starts begin begins'.split(
    ' ',
  ),
);
