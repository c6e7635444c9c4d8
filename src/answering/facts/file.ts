/** Fact plug-ins of the video file itself (its row, not its segments): duration, resolution, frame rate, file size, codec, audio track, and the videos of the index. */
import type { FactPlugin } from './plugin';

/** Facts of the video file itself (its row, not its segments). */
export const FILE_FACTS = ['duration', 'resolution', 'fps', 'size', 'codec'];

export const duration: FactPlugin = {
  kind: 'duration',
  segmentKinds: [],
  noun: 'its duration',
  forms: {
    what: {
      answer: (t, s, c) =>
        t.fileFact([c.fact, ...FILE_FACTS.filter((f) => f !== c.fact && s.factCues.has(f))], t.style),
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
      answer: (t, s, c) => t.fileCompare(c.fact, s, t.style),
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
  cue: /\b(how long is (it|this|that|the (video|clip|film|recording|footage))|how long does (it|(this|that|the) (video|clip|film|recording|footage|movie)) (last|run|go on|take)|how many (seconds|minutes) (does|is|long)|does (it|the (video|clip|recording)) last|duration|lengths?|runtime|running time|minutes long|seconds long|(longest|shortest|longer|shorter) (video|clip|file|recording|footage|one)s?|(video|clip|file|recording|footage|one|it) is (the )?(longest|shortest|longer|shorter)|is (the )?(longest|shortest)\s*\??$|(longer|shorter)(?=,| than| or)|runs the longest|the briefest)\b/,
};

export const resolution: FactPlugin = {
  kind: 'resolution',
  segmentKinds: [],
  noun: 'its resolution',
  forms: {
    what: {
      answer: (t, s, c) =>
        t.fileFact([c.fact, ...FILE_FACTS.filter((f) => f !== c.fact && s.factCues.has(f))], t.style),
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
      answer: (t, s, c) => t.fileCompare(c.fact, s, t.style),
      needs: ['cue'],
      examples: [
        'Which video has the highest resolution?',
        'Which clip is sharper, a or b?',
        'Which recording is vertical?',
      ],
    },
  },
  cue: /\b(resolution|pixels?|dimensions?|how (wide|tall)|width|height|1080p?|720p?|hd|4k|portrait|landscape|vertical|aspect)\b/,
};

export const fps: FactPlugin = {
  kind: 'fps',
  segmentKinds: [],
  noun: 'its frame rate',
  forms: {
    what: {
      answer: (t, s, c) =>
        t.fileFact([c.fact, ...FILE_FACTS.filter((f) => f !== c.fact && s.factCues.has(f))], t.style),
      needs: ['cue'],
      examples: ['What is the frame rate?', 'How many frames per second does it have?', 'At what fps was it recorded?'],
    },
    compare: {
      answer: (t, s, c) => t.fileCompare(c.fact, s, t.style),
      needs: ['cue'],
      examples: ['Which video has the highest frame rate?', 'Which clip has more frames per second?'],
    },
  },
  cue: /\b(frame ?rate|fps|frames per second|frames a second)\b/,
};

export const size: FactPlugin = {
  kind: 'size',
  segmentKinds: [],
  noun: 'its file size',
  forms: {
    what: {
      answer: (t, s, c) =>
        t.fileFact([c.fact, ...FILE_FACTS.filter((f) => f !== c.fact && s.factCues.has(f))], t.style),
      needs: ['cue'],
      examples: [
        'How big is the file?',
        'What is the file size?',
        'How many megabytes is the video?',
        'How much disk space does it take?',
      ],
    },
    compare: {
      answer: (t, s, c) => t.fileCompare(c.fact, s, t.style),
      needs: ['cue'],
      examples: ['Which file is the biggest?', 'Which video takes the least space?'],
    },
  },
  cue: /\b(file size|how (big|large) is the file|bytes|megabytes|mb|kb|gb|how much (disk|space|storage))\b/,
};

export const codec: FactPlugin = {
  kind: 'codec',
  segmentKinds: [],
  noun: 'its codec',
  forms: {
    what: {
      answer: (t, s, c) =>
        t.fileFact([c.fact, ...FILE_FACTS.filter((f) => f !== c.fact && s.factCues.has(f))], t.style),
      needs: ['cue'],
      examples: [
        'Which codec is the video encoded with?',
        'What format is the video stream?',
        'How is the clip compressed?',
      ],
    },
  },
  cue: /\b(codec|encod\w*|compression|compressed|h\.?264|vp8|vp9|mpeg|format)\b/,
};

export const audio: FactPlugin = {
  kind: 'audio',
  segmentKinds: [],
  noun: 'an audio track',
  forms: {
    presence: {
      answer: (t) => t.audio(t.style, false),
      needs: ['cue'],
      examples: [
        'Does the video have sound?',
        'Is there an audio track?',
        'Is this clip silent?',
        'Can I hear anything in it?',
      ],
    },
    which_video: {
      answer: (t) => t.audio(t.style, true),
      needs: ['cue'],
      examples: ['Which videos have no sound?', 'Which clips come with audio?', 'Which recording is silent?'],
    },
  },
  cue: /\b(audio|sound|soundtrack|silent|mute|muted|noise|any sound)\b/,
};

export const videos: FactPlugin = {
  kind: 'videos',
  segmentKinds: [],
  noun: 'videos',
  forms: {
    count: {
      answer: (t) => t.videoList(true),
      examples: [
        'How many videos are in this index?',
        'How many clips have I uploaded?',
        'What is the number of recordings stored?',
      ],
    },
    what: {
      answer: (t) => t.videoList(false),
      examples: ['Which videos are in the index?', 'List all the clips.', 'What files have been indexed?'],
    },
  },
  cue: /\b(how many (videos|clips|files|recordings)|videos? (are|is) (in|there)|list (the|all)|what (videos|clips|files))\b/,
};
