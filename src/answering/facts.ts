/**
 * The fact table: every kind of fact the index holds × the forms people ask about it in. Each cell
 * names the answer that handles it (compose.ts) and example questions that teach the question
 * reader (reader.ts) what it sounds like. A cell that is absent is answered "not found" with what
 * the video does contain. A new fact (a new segment kind, a new column) plugs in as one entry here
 * and, when none of the existing answers fits, one handler in compose.ts.
 *
 * The examples are written for this purpose; the more different wordings a cell has, the better
 * the reader generalises. They must not copy the development questions (../shared/eval).
 *
 * `caption` segments (model-written descriptions of a shot) are visual facts of the moment: they
 * answer "what is on screen" and "describe" (the `moment` entry), generically, when present.
 */
import type { SegmentKind } from '../storage/schema';

export type FactKind =
  | 'objects'
  | 'people'
  | 'text'
  | 'speech'
  | 'shots'
  | 'duration'
  | 'resolution'
  | 'fps'
  | 'size'
  | 'codec'
  | 'audio'
  | 'videos'
  | 'moment';

/** The question forms: how many, when/where in the video, what, which video, is there, longest/first/last, compare, describe, what is visible. */
export type Form =
  | 'count'
  | 'when'
  | 'what'
  | 'which_video'
  | 'presence'
  | 'extreme'
  | 'compare'
  | 'describe'
  | 'visible';

export type Handler =
  | 'objects.count'
  | 'objects.when'
  | 'objects.presence'
  | 'objects.which'
  | 'objects.what'
  | 'objects.extreme'
  | 'objects.compare'
  | 'text.what'
  | 'text.when'
  | 'text.presence'
  | 'text.which'
  | 'text.count'
  | 'speech.what'
  | 'speech.when'
  | 'speech.presence'
  | 'speech.amount'
  | 'speech.which'
  | 'shots.count'
  | 'shots.when'
  | 'shots.extreme'
  | 'shots.compare'
  | 'file.what'
  | 'file.compare'
  | 'audio.presence'
  | 'audio.which'
  | 'videos.count'
  | 'videos.list'
  | 'visible'
  | 'describe';

/** Slots a cell needs: a label to ask about, two videos to compare, a time, a word naming its fact, or one naming its form. */
export type SlotNeed = 'label' | 'two_videos' | 'time' | 'cue' | 'form_cue';

export interface Cell {
  fact: FactKind;
  form: Form;
  handler: Handler;
  needs?: SlotNeed[];
  examples: string[];
}

export interface FactEntry {
  fact: FactKind;
  /** Where the fact lives: segment kinds, or columns of the video row (none). */
  segmentKinds: SegmentKind[];
  /** How to name the fact in a "not found" answer. */
  noun: string;
  cells: Partial<Record<Form, Omit<Cell, 'fact' | 'form'>>>;
}

export const FACTS: FactEntry[] = [
  {
    fact: 'objects',
    segmentKinds: ['object'],
    noun: 'that object',
    cells: {
      count: {
        handler: 'objects.count',
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
        handler: 'objects.when',
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
        handler: 'objects.presence',
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
        handler: 'objects.which',
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
        handler: 'objects.what',
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
        handler: 'objects.extreme',
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
        handler: 'objects.compare',
        needs: ['label', 'two_videos'],
        examples: [
          'Which has more trucks, a.mp4 or b.mp4?',
          'Compare how long the horse is visible in one.mp4 and two.mp4.',
          'Does first.mp4 or second.mp4 show more umbrellas?',
        ],
      },
    },
  },
  {
    fact: 'people',
    segmentKinds: ['object'],
    noun: 'a person',
    cells: {
      count: {
        handler: 'objects.count',
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
        handler: 'objects.when',
        needs: ['cue', 'form_cue'],
        examples: [
          'When does somebody appear?',
          'At what times is a person in the picture?',
          'When does the first visitor arrive?',
          'When is someone standing there?',
        ],
      },
      presence: {
        handler: 'objects.presence',
        needs: ['cue'],
        examples: [
          'Is anyone in the video?',
          'Are there people in this footage?',
          'Does a human appear at all?',
          'Can we see anybody?',
        ],
      },
      which_video: {
        handler: 'objects.which',
        needs: ['cue', 'form_cue'],
        examples: [
          'Which clips have people in them?',
          'In which recording does someone appear?',
          'What videos feature a person?',
        ],
      },
      extreme: {
        handler: 'objects.extreme',
        needs: ['cue'],
        examples: [
          'What is the maximum number of people in view together?',
          'When are the most people on screen?',
          'When does the last person leave?',
        ],
      },
    },
  },
  {
    fact: 'text',
    segmentKinds: ['ocr'],
    noun: 'any text on screen',
    cells: {
      what: {
        handler: 'text.what',
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
        handler: 'text.when',
        needs: ['form_cue'],
        examples: [
          'When does the title come up?',
          'At what time is text displayed?',
          'When do the words appear on screen?',
          'When is the logo shown?',
        ],
      },
      presence: {
        handler: 'text.presence',
        examples: [
          'Is there any writing on screen?',
          'Does any text appear?',
          'Are there subtitles or titles burned in?',
          'Is a sign with letters visible?',
        ],
      },
      which_video: {
        handler: 'text.which',
        needs: ['form_cue'],
        examples: [
          'Which video has text on screen?',
          'In which clip is a title shown?',
          'Which recording displays the word sale?',
        ],
      },
      count: {
        handler: 'text.count',
        examples: [
          'How many different texts appear?',
          'How many titles are shown?',
          'How many times does writing come up on screen?',
        ],
      },
    },
  },
  {
    fact: 'speech',
    segmentKinds: ['transcript', 'speech'],
    noun: 'any speech',
    cells: {
      what: {
        handler: 'speech.what',
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
        handler: 'speech.when',
        needs: ['form_cue'],
        examples: [
          'When does someone start talking?',
          'At what time is the word hello spoken?',
          'When does the voice say goodbye?',
          'When is there talking?',
        ],
      },
      presence: {
        handler: 'speech.presence',
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
        handler: 'speech.amount',
        examples: [
          'How much of the clip has talking?',
          'How many seconds of speech are there?',
          'How long does the speaker talk for?',
          'How many times does someone speak?',
        ],
      },
      compare: {
        handler: 'speech.which',
        examples: [
          'Which video has the most talking?',
          'Is there more speech in a.mp4 or in b.mp4?',
          'Which clip has the longest dialogue?',
        ],
      },
      which_video: {
        handler: 'speech.which',
        needs: ['form_cue'],
        examples: [
          'Which video has someone talking?',
          'In which clip does a person mention money?',
          'Which recording contains speech?',
        ],
      },
    },
  },
  {
    fact: 'shots',
    segmentKinds: ['shot'],
    noun: 'shots',
    cells: {
      count: {
        handler: 'shots.count',
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
        handler: 'shots.when',
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
        handler: 'shots.extreme',
        needs: ['cue'],
        examples: [
          'Which shot is the longest?',
          'What is the shortest scene?',
          'How long is the longest shot?',
          'When does the final shot start?',
        ],
      },
      compare: {
        handler: 'shots.compare',
        needs: ['cue'],
        examples: [
          'Which video has the most cuts?',
          'Does a.mp4 or b.mp4 have more shots?',
          'Which clip is edited with the most scene changes?',
        ],
      },
      describe: {
        handler: 'describe',
        needs: ['cue'],
        examples: ['List the scenes in order.', 'What happens in each shot?', 'Break the video down scene by scene.'],
      },
    },
  },
  {
    fact: 'duration',
    segmentKinds: [],
    noun: 'its duration',
    cells: {
      what: {
        handler: 'file.what',
        needs: ['cue'],
        examples: [
          'How long is this video?',
          'What is the duration of the clip?',
          'How many seconds does the recording last?',
          'What is its running time?',
          'How many minutes long is it?',
        ],
      },
      compare: {
        handler: 'file.compare',
        needs: ['cue'],
        examples: [
          'Which video is the longest?',
          'Which recording runs the longest?',
          'Which of the clips is the briefest?',
          'Which clip is shorter, x.mp4 or y.mp4?',
          'Is the first video longer than the second one?',
          'Which is the shortest recording in the index?',
        ],
      },
    },
  },
  {
    fact: 'resolution',
    segmentKinds: [],
    noun: 'its resolution',
    cells: {
      what: {
        handler: 'file.what',
        needs: ['cue'],
        examples: [
          'What is the resolution of the video?',
          'How many pixels wide is the clip?',
          'What are the frame dimensions?',
          'Is it filmed in portrait or landscape?',
          'Is this clip in HD?',
        ],
      },
      compare: {
        handler: 'file.compare',
        needs: ['cue'],
        examples: [
          'Which video has the highest resolution?',
          'Which clip is sharper, a or b?',
          'Which recording is vertical?',
        ],
      },
    },
  },
  {
    fact: 'fps',
    segmentKinds: [],
    noun: 'its frame rate',
    cells: {
      what: {
        handler: 'file.what',
        needs: ['cue'],
        examples: [
          'What is the frame rate?',
          'How many frames per second does it have?',
          'At what fps was it recorded?',
        ],
      },
      compare: {
        handler: 'file.compare',
        needs: ['cue'],
        examples: ['Which video has the highest frame rate?', 'Which clip has more frames per second?'],
      },
    },
  },
  {
    fact: 'size',
    segmentKinds: [],
    noun: 'its file size',
    cells: {
      what: {
        handler: 'file.what',
        needs: ['cue'],
        examples: [
          'How big is the file?',
          'What is the file size?',
          'How many megabytes is the video?',
          'How much disk space does it take?',
        ],
      },
      compare: {
        handler: 'file.compare',
        needs: ['cue'],
        examples: ['Which file is the biggest?', 'Which video takes the least space?'],
      },
    },
  },
  {
    fact: 'codec',
    segmentKinds: [],
    noun: 'its codec',
    cells: {
      what: {
        handler: 'file.what',
        needs: ['cue'],
        examples: [
          'Which codec is the video encoded with?',
          'What format is the video stream?',
          'How is the clip compressed?',
        ],
      },
    },
  },
  {
    fact: 'audio',
    segmentKinds: [],
    noun: 'an audio track',
    cells: {
      presence: {
        handler: 'audio.presence',
        needs: ['cue'],
        examples: [
          'Does the video have sound?',
          'Is there an audio track?',
          'Is this clip silent?',
          'Can I hear anything in it?',
        ],
      },
      which_video: {
        handler: 'audio.which',
        needs: ['cue'],
        examples: ['Which videos have no sound?', 'Which clips come with audio?', 'Which recording is silent?'],
      },
    },
  },
  {
    fact: 'videos',
    segmentKinds: [],
    noun: 'videos',
    cells: {
      count: {
        handler: 'videos.count',
        examples: [
          'How many videos are in this index?',
          'How many clips have I uploaded?',
          'What is the number of recordings stored?',
        ],
      },
      what: {
        handler: 'videos.list',
        examples: ['Which videos are in the index?', 'List all the clips.', 'What files have been indexed?'],
      },
    },
  },
  {
    fact: 'moment',
    segmentKinds: ['object', 'ocr', 'caption', 'transcript', 'speech'],
    noun: 'anything',
    cells: {
      visible: {
        handler: 'visible',
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
        handler: 'describe',
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
  },
];

/** Every cell of the table, flat (the reader scores each). */
export const CELLS: Cell[] = FACTS.flatMap((f) =>
  Object.entries(f.cells).map(([form, c]) => ({ fact: f.fact, form: form as Form, ...c! })),
);

export function factEntry(kind: FactKind): FactEntry {
  return FACTS.find((f) => f.fact === kind)!;
}
