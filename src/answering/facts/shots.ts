/** Fact plug-in: Shots (cuts) of the edit: how many, when the scene changes, the longest, which video has most. */
import type { FactPlugin } from './plugin';

export const shots: FactPlugin = {
  kind: 'shots',
  segmentKinds: ['shot'],
  noun: 'shots',
  forms: {
    count: {
      answer: (t) => t.shotCount(t.style),
      needs: ['cue'],
      examples: [
        'How many shots does the clip have?',
        'How many cuts are there?',
        'How many scene changes happen?',
        'In how many different scenes is it edited?',
        'How many camera angles are used?',
      ],
    },
    when: {
      answer: (t, s) => t.shotWhen(s, t.style),
      readsPosition: true,
      needs: ['cue'],
      examples: [
        'When does the scene change?',
        'At what times are the cuts?',
        'Where are the edits in the video?',
        'When does the second shot begin?',
        'When is there a transition?',
      ],
    },
    extreme: {
      answer: (t, s) => t.shotExtreme(s, t.style),
      readsPosition: true,
      needs: ['cue'],
      examples: [
        'Which shot is the longest?',
        'What is the shortest scene?',
        'How long is the longest shot?',
        'When does the final shot start?',
      ],
    },
    compare: {
      answer: (t, s) => t.shotCompare(s, t.style),
      needs: ['cue'],
      examples: [
        'Which video has the most cuts?',
        'Does a.mp4 or b.mp4 have more shots?',
        'Which clip is edited with the most scene changes?',
      ],
    },
    describe: {
      answer: (t) => t.summary(t.style),
      needs: ['cue'],
      examples: ['List the scenes in order.', 'What happens in each shot?', 'Break the video down scene by scene.'],
    },
  },
  cue: /\b(shots?|cuts?|scenes?|edits?|transitions?|camera angles?|scene changes?)\b/,
};
