/** Fact plug-in: Speech: what is said (transcripts), when someone speaks, how much, which video. */
import type { FactPlugin } from './plugin';

export const speech: FactPlugin = {
  kind: 'speech',
  segmentKinds: ['transcript', 'speech'],
  noun: 'any speech',
  forms: {
    what: {
      answer: (t, s) => t.said(s.intent, t.style),
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
      answer: (t, s) => t.speechWhen(s.intent, t.style, false),
      needs: ['form_cue'],
      examples: [
        'When does someone start talking?',
        'At what time is the word hello spoken?',
        'When does the voice say goodbye?',
        'When is there talking?',
      ],
    },
    presence: {
      answer: (t, s) => t.speechWhen(s.intent, t.style, true),
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
      answer: (t) => t.speechAmount(t.style),
      examples: [
        'How much of the clip has talking?',
        'How many seconds of speech are there?',
        'How long does the speaker talk for?',
        'How many times does someone speak?',
      ],
    },
    compare: {
      answer: (t) => t.speechWhich(t.style),
      examples: [
        'Which video has the most talking?',
        'Is there more speech in a.mp4 or in b.mp4?',
        'Which clip has the longest dialogue?',
      ],
    },
    which_video: {
      answer: (t) => t.speechWhich(t.style),
      needs: ['form_cue'],
      examples: [
        'Which video has someone talking?',
        'In which clip does a person mention money?',
        'Which recording contains speech?',
      ],
    },
  },
  cue: /\b(say|says|said|saying|speak|speaks|spoke|speaking|speakers?|speech|talk|talks|talking|spoken|voice|mention\w*|tell(?! (me|us)\b)|tells|told|words|quote|narrat\w*|dialogue|conversation|sentence|utter\w*|pronounc\w*)\b/,
};
