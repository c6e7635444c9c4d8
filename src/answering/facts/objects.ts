/** Fact plug-ins: Things the object detector saw (COCO labels): counts over time and at a moment, when, which video, what is there, extremes, comparisons.; People, from the person detections: how many, when, which video, most at once. */
import type { FactPlugin } from './plugin';

export const objects: FactPlugin = {
  kind: 'objects',
  segmentKinds: ['object'],
  noun: 'that object',
  forms: {
    count: {
      answer: (t, s, c) => t.aboutLabel(s, c, (l) => t.countObjects(l, s, t.style)),
      readsPosition: true,
      needs: ['label'],
      examples: [
        'How many trucks drive past?',
        'How many horses are there in total?',
        'Count the umbrellas that show up.',
        'What number of boats appear over the clip?',
        'How many cups stand on the counter at once?',
        'How many bicycles can you count?',
      ],
    },
    when: {
      answer: (t, s, c) =>
        t.aboutLabel(s, c, (l) =>
          s.intent.number !== null || s.atOnce ? t.count(l, s.intent, t.style) : t.when(l, s.intent, t.style),
        ),
      readsPosition: true,
      needs: ['label', 'form_cue'],
      examples: [
        'When does the cat show up?',
        'At what point is a truck in view?',
        'At which seconds can the horse be seen?',
        'Where in the clip does the umbrella appear?',
        'Give me the timestamps of the bicycle.',
        'During which part is the laptop visible?',
      ],
    },
    presence: {
      answer: (t, s, c) => t.aboutLabel(s, c, (l) => t.when(l, s.intent, t.style, true)),
      readsPosition: true,
      needs: ['label'],
      examples: [
        'Is a horse anywhere in this clip?',
        'Does a truck ever appear?',
        'Can I spot an umbrella in the footage?',
        'Are any cups visible?',
        'Do we ever see a boat?',
        'Was there a bicycle?',
      ],
    },
    which_video: {
      answer: (t, s, c) => t.aboutLabel(s, c, (l) => t.whichVideo(l, t.style)),
      needs: ['label', 'form_cue'],
      examples: [
        'Which clip contains a horse?',
        'In what video do we see a truck?',
        'Find the recording with an umbrella.',
        'Which of my files shows a boat?',
        'What footage has a bicycle in it?',
      ],
    },
    what: {
      answer: (t, s, c) => t.objectsWhat(s, c),
      examples: [
        'What kind of vehicle is shown?',
        'Which creature appears here?',
        'What objects are in the frame?',
        'What is the cat sitting on?',
        'What things can be seen on the desk?',
        'What type of furniture is there?',
        'What is the man holding?',
      ],
    },
    extreme: {
      answer: (t, s, c) => t.aboutLabel(s, c, (l) => t.extremeObject(l, s, t.style)),
      readsPosition: true,
      needs: ['label'],
      examples: [
        'What is the highest number of trucks seen together?',
        'When are the most cups visible?',
        'When does the horse appear for the last time?',
        'What is the longest time a boat stays in view?',
        'At what moment are the fewest bicycles on screen?',
      ],
    },
    compare: {
      answer: (t, s, c) => t.aboutLabel(s, c, (l) => t.compareObject(l, t.style)),
      needs: ['label', 'two_videos'],
      examples: [
        'Which has more trucks, a.mp4 or b.mp4?',
        'Compare how long the horse is visible in one.mp4 and two.mp4.',
        'Does first.mp4 or second.mp4 show more umbrellas?',
      ],
    },
  },
};

export const people: FactPlugin = {
  kind: 'people',
  segmentKinds: ['object'],
  noun: 'a person',
  forms: {
    count: {
      answer: (t, s, c) => t.aboutLabel(s, c, (l) => t.countObjects(l, s, t.style)),
      readsPosition: true,
      needs: ['cue'],
      examples: [
        'How many different people show up?',
        'How many speakers are there?',
        'How many individuals appear over the course of the clip?',
        'How many humans are there?',
        'Count the people who come into view.',
        'How many people are in the room at once?',
      ],
    },
    when: {
      answer: (t, s, c) =>
        t.aboutLabel(s, c, (l) =>
          s.intent.number !== null || s.atOnce ? t.count(l, s.intent, t.style) : t.when(l, s.intent, t.style),
        ),
      readsPosition: true,
      needs: ['cue', 'form_cue'],
      examples: [
        'When does somebody appear?',
        'At what times is a person in the picture?',
        'When does the first visitor arrive?',
        'When is someone standing there?',
      ],
    },
    presence: {
      answer: (t, s, c) => t.aboutLabel(s, c, (l) => t.when(l, s.intent, t.style, true)),
      readsPosition: true,
      needs: ['cue'],
      examples: [
        'Is anyone in the video?',
        'Are there people in this footage?',
        'Does a human appear at all?',
        'Can we see anybody?',
      ],
    },
    which_video: {
      answer: (t, s, c) => t.aboutLabel(s, c, (l) => t.whichVideo(l, t.style)),
      needs: ['cue', 'form_cue'],
      examples: [
        'Which clips have people in them?',
        'In which recording does someone appear?',
        'What videos feature a person?',
      ],
    },
    extreme: {
      answer: (t, s, c) => t.aboutLabel(s, c, (l) => t.extremeObject(l, s, t.style)),
      readsPosition: true,
      needs: ['cue'],
      examples: [
        'What is the maximum number of people in view together?',
        'When are the most people on screen?',
        'When does the last person leave?',
      ],
    },
  },
  cue: /\b(individuals?|visitors?|faces?)\b/,
};
