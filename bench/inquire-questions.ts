/** The questions bench/inquire asks at every size, and bench/answer-profile profiles. */

export interface Question {
  type: string;
  prompt: string;
  guidance?: string;
  target?: string;
  /** A real clip's file name, or "theme:<name>" for the first synthetic video of that theme. */
  video?: string;
}

export const QUESTIONS: Question[] = [
  { type: 'count', prompt: 'How many people are there?' },
  { type: 'count', prompt: 'How many cars can be seen?' },
  { type: 'count', prompt: 'How many bottles are on the table at the beginning?', video: 'bottles.mp4' },
  { type: 'count', prompt: 'What is the largest number of people visible at once?', video: 'theme:kitchen' },
  { type: 'count', prompt: 'When are two cars visible at the same time?', video: 'cars-parking-lot.mp4' },
  { type: 'count', prompt: 'How many people are there at this moment?', target: '0:30' },
  { type: 'when', prompt: 'When does the dog appear?' },
  { type: 'when', prompt: 'When does the first car appear?', video: 'theme:street' },
  { type: 'when', prompt: 'When is the laptop visible?', video: 'theme:office' },
  { type: 'when', prompt: 'Is there a cake?' },
  { type: 'written', prompt: 'What is written on the screen?' },
  { type: 'written', prompt: 'What does the headline say about the budget?' },
  { type: 'written', prompt: 'What is the title of the film shown at the end?', video: 'big-buck-bunny-intro.webm' },
  {
    type: 'written',
    prompt: 'What timecode is displayed at this moment?',
    target: '4',
    video: 'smpte-timecode-1080p.mp4',
  },
  { type: 'said', prompt: 'What does the speaker say about the flour?' },
  { type: 'said', prompt: 'What is said about the weather forecast?', video: 'theme:news' },
  { type: 'said', prompt: 'What does the speaker say here?', target: '2:00-3:00', video: 'theme:office' },
  { type: 'which_video', prompt: 'Which video shows a dog?' },
  { type: 'which_video', prompt: 'Which clip has a skateboard?' },
  { type: 'summary', prompt: 'What happens in this video?', video: 'theme:park' },
  { type: 'summary', prompt: 'Summarize the videos.' },
  { type: 'summary', prompt: 'Describe what is going on.', target: '1:00-1:30', video: 'theme:street' },
  { type: 'summary', prompt: 'What happens in this video?', guidance: 'one sentence', video: 'theme:living-room' },
  { type: 'what_object', prompt: 'What animal is in this video?', video: 'skateboarding-dog.mp4' },
  { type: 'what_object', prompt: 'What electronic devices are shown?' },
  { type: 'what_object', prompt: 'What is the dog riding?' },
  { type: 'general', prompt: 'Where is the pancake being flipped?' },
  { type: 'not_found', prompt: 'When does the giraffe appear?' },
  { type: 'not_found', prompt: 'What colour is the car?', video: 'bottles.mp4' },
  { type: 'not_found', prompt: 'Is there a zebra in the park?' },
  { type: 'not_found', prompt: 'What is the capital of France?' },
];
