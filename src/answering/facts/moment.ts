/** Fact plug-in: Everything at a moment ("what is on screen") and the account of a whole video ("describe"). */
import type { FactPlugin } from './plugin';

export const moment: FactPlugin = {
  kind: 'moment',
  segmentKinds: ['object', 'ocr', 'caption', 'transcript', 'speech'],
  noun: 'anything',
  forms: {
    visible: {
      answer: (t) => (t.scope.window ? t.visible(t.style) : t.summary(t.style)),
      examples: [
        "What's on screen at this point?",
        'What do we see here?',
        "What's happening at that moment?",
        'What is going on right there?',
        'What can be seen in the frame at this time?',
        'What is shown at the two minute mark?',
        'What is visible then?',
      ],
    },
    describe: {
      answer: (t) => t.summary(t.style),
      examples: [
        'Describe the video.',
        'Summarise this clip for me.',
        'Give me an overview of the footage.',
        'What is this video about?',
        'Walk me through what happens.',
        'Tell me about this recording in a few sentences.',
        'What happens over the course of the clip?',
      ],
    },
  },
};
