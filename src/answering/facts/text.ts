/** Fact plug-in: Text on screen (OCR): what is written, when, which video, how many texts. */
import type { FactPlugin } from './plugin';

export const text: FactPlugin = {
  kind: 'text',
  segmentKinds: ['ocr'],
  noun: 'any text on screen',
  forms: {
    what: {
      answer: (t, s) => t.written(s.intent, t.style),
      readsPosition: true,
      examples: [
        'What words are printed on the screen?',
        'What does the title card read?',
        'What is written in the caption box?',
        'Which name is shown in the credits?',
        'What number does the counter show?',
        'Which digits are displayed right now?',
        'What reading is on the clock display at that point?',
        'Read me the text that appears.',
        'What does the banner say?',
        'What do the letters on the sign spell?',
        'What does that handwriting say?',
        'What message is written on the board?',
        'What words can be read in the picture?',
        'What does the caption on the image say?',
      ],
    },
    when: {
      answer: (t, s) => t.textWhen(s.intent, s, t.style),
      readsPosition: true,
      needs: ['form_cue'],
      examples: [
        'When does the title come up?',
        'At what time is text displayed?',
        'When do the words appear on screen?',
        'When is the logo shown?',
      ],
    },
    presence: {
      answer: (t, s) => t.textWhen(s.intent, s, t.style, true),
      readsPosition: true,
      examples: [
        'Is there any writing on screen?',
        'Does any text appear?',
        'Are there subtitles or titles burned in?',
        'Is a sign with letters visible?',
      ],
    },
    which_video: {
      answer: (t, s) => t.textWhich(s.intent, s, t.style),
      needs: ['form_cue'],
      examples: [
        'Which video has text on screen?',
        'In which clip is a title shown?',
        'Which recording displays the word sale?',
      ],
    },
    count: {
      answer: (t) => t.textCount(t.style),
      examples: [
        'How many different texts appear?',
        'How many titles are shown?',
        'How many times does writing come up on screen?',
      ],
    },
  },
  cue: /\b(names?|named|written|writing|write|text|title|titles|captioned|subtitle\w*|sign|signs|reads?|displayed|printed|timecode|counter|digits?|numbers? (shown|on screen|displayed)|credits?|logo|banner|headline|letters?|lettering|words? on)\b/,
};
