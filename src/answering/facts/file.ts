/** Fact plug-ins of the video file itself (its row, not its segments): duration, resolution, frame rate, file size, codec, audio track, and the videos of the index. */
import type { Video } from '../../storage/rows';
import { numberWord } from '../vocabulary';
import { joinList, secs } from '../wording';
import type { Cell, FactKind, FactPlugin, Answer, FactContext, Style, Slots } from './plugin';

/** Facts of the video file itself (its row, not its segments). */
export const FILE_FACTS = ['duration', 'resolution', 'fps', 'size', 'codec'];

export const duration: FactPlugin = {
  kind: 'duration',
  computed: true,
  needsNoVisionModel: true,
  segmentKinds: [],
  noun: 'its duration',
  forms: {
    what: {
      answer: askFileFact,
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
      answer: compareFileFact,
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
  computed: true,
  needsNoVisionModel: true,
  segmentKinds: [],
  noun: 'its resolution',
  forms: {
    what: {
      answer: askFileFact,
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
      answer: compareFileFact,
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
  computed: true,
  needsNoVisionModel: true,
  segmentKinds: [],
  noun: 'its frame rate',
  forms: {
    what: {
      answer: askFileFact,
      needs: ['cue'],
      examples: ['What is the frame rate?', 'How many frames per second does it have?', 'At what fps was it recorded?'],
    },
    compare: {
      answer: compareFileFact,
      needs: ['cue'],
      examples: ['Which video has the highest frame rate?', 'Which clip has more frames per second?'],
    },
  },
  cue: /\b(frame ?rate|fps|frames per second|frames a second)\b/,
};

export const size: FactPlugin = {
  kind: 'size',
  computed: true,
  needsNoVisionModel: true,
  segmentKinds: [],
  noun: 'its file size',
  forms: {
    what: {
      answer: askFileFact,
      needs: ['cue'],
      examples: [
        'How big is the file?',
        'What is the file size?',
        'How many megabytes is the video?',
        'How much disk space does it take?',
      ],
    },
    compare: {
      answer: compareFileFact,
      needs: ['cue'],
      examples: ['Which file is the biggest?', 'Which video takes the least space?'],
    },
  },
  cue: /\b(file size|how (big|large) is the file|bytes|megabytes|mb|kb|gb|how much (disk|space|storage))\b/,
};

export const codec: FactPlugin = {
  kind: 'codec',
  computed: true,
  needsNoVisionModel: true,
  segmentKinds: [],
  noun: 'its codec',
  forms: {
    what: {
      answer: askFileFact,
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
  computed: true,
  needsNoVisionModel: true,
  heard: true,
  segmentKinds: [],
  noun: 'an audio track',
  forms: {
    presence: {
      answer: async (t) => await soundAnswer(t, t.style, false),
      needs: ['cue'],
      examples: [
        'Does the video have sound?',
        'Is there an audio track?',
        'Is this clip silent?',
        'Can I hear anything in it?',
      ],
    },
    which_video: {
      answer: async (t) => await soundAnswer(t, t.style, true),
      needs: ['cue'],
      examples: ['Which videos have no sound?', 'Which clips come with audio?', 'Which recording is silent?'],
    },
  },
  cue: /\b(audio|sound|soundtrack|silent|mute|muted|noise|any sound)\b/,
};

export const videos: FactPlugin = {
  kind: 'videos',
  computed: true,
  aboutIndex: true,
  needsNoVisionModel: true,
  segmentKinds: [],
  noun: 'videos',
  forms: {
    count: {
      answer: (t) => videoList(t, true),
      examples: [
        'How many videos are in this index?',
        'How many clips have I uploaded?',
        'What is the number of recordings stored?',
      ],
    },
    what: {
      answer: (t) => videoList(t, false),
      examples: ['Which videos are in the index?', 'List all the clips.', 'What files have been indexed?'],
    },
  },
  cue: /\b(how many (videos|clips|files|recordings)|videos? (are|is) (in|there)|list (the|all)|what (videos|clips|files))\b/,
};

// ---- the answers ------------------------------------------------------------------------------

/** "How long / how big / which codec": this fact of each video, with the other file facts the question names too. */
function askFileFact(t: FactContext, s: Slots, c: Cell): Promise<Answer> {
  return fileFact(t, [c.fact, ...FILE_FACTS.filter((f) => f !== c.fact && s.factCues.has(f))], t.style);
}

/** "Which video is the longest / biggest": the videos ranked by this fact. */
function compareFileFact(t: FactContext, _s: Slots, c: Cell): Promise<Answer> {
  return fileCompare(t, c.fact, t.style);
}

/** A video's fact of this kind as words (no m:ss: every time in an answer is a cited one), or null. */
function factOf(v: Video, fact: FactKind): string | null {
  switch (fact) {
    case 'duration':
      return v.durationSec !== null ? `${secs(v.durationSec)} long` : null;
    case 'resolution':
      return v.width && v.height
        ? `${v.width}×${v.height} pixels (${v.height > v.width ? 'portrait' : v.height === v.width ? 'square' : 'landscape'})`
        : null;
    case 'fps':
      return v.fps ? `${Math.round(v.fps * 100) / 100} frames per second` : null;
    case 'size':
      return v.sizeBytes !== null
        ? `${(v.sizeBytes / 1e6).toFixed(v.sizeBytes < 1e7 ? 2 : 1)} MB (${v.sizeBytes} bytes)`
        : null;
    case 'codec':
      return v.videoCodec ? `encoded with ${v.videoCodec}${v.hasAudio === false ? ', with no audio track' : ''}` : null;
    default:
      return null;
  }
}

/** Cites a whole video for a fact of its file (no segment holds it). */
function citeVideo(t: FactContext, v: Video, text: string): void {
  t.cite(v.id, 'shot', 0, v.durationSec ?? 0, text, 1);
}

async function fileFact(t: FactContext, facts: FactKind[], style: Style): Promise<Answer> {
  const parts: string[] = [];
  for (const v of t.scope.videos.slice(0, Math.max(style.items, 10))) {
    const f = facts.map((k) => factOf(v, k)).filter((x): x is string => !!x);
    if (!f.length) continue;
    citeVideo(t, v, `${v.fileName}: ${f.join(', ')}`);
    parts.push(`${v.fileName} is ${joinList(f)}`);
  }
  if (!parts.length) return await t.notFound(nounOf(facts[0]!), style);
  return { text: `${joinList(parts)}.`, found: true };
}

async function fileCompare(t: FactContext, fact: FactKind, style: Style): Promise<Answer> {
  const measure = (v: Video): number | null =>
    fact === 'duration'
      ? v.durationSec
      : fact === 'resolution'
        ? v.width && v.height
          ? v.width * v.height
          : null
        : fact === 'fps'
          ? v.fps
          : fact === 'size'
            ? v.sizeBytes
            : null;
  const rows = t.scope.videos
    .map((v) => ({ v, m: measure(v) }))
    .filter((r): r is { v: Video; m: number } => r.m !== null);
  if (rows.length === 0) return await t.notFound(nounOf(fact), style);
  const low = /\b(shortest|shorter|smallest|smaller|lowest|lower|least|fewest|less)\b/i.test(t.prompt);
  const vertical = fact === 'resolution' && /\b(vertical|portrait)\b/i.test(t.prompt);
  if (vertical) {
    const tall = rows.filter((r) => (r.v.height ?? 0) > (r.v.width ?? 0));
    if (!tall.length)
      return {
        text: `None of the videos is in portrait format; ${joinList(rows.slice(0, 4).map((r) => `${r.v.fileName} is ${factOf(r.v, fact)}`))}.`,
        found: false,
      };
    for (const r of tall) citeVideo(t, r.v, `${r.v.fileName}: ${factOf(r.v, fact)}`);
    return {
      text: `In portrait format: ${joinList(tall.map((r) => `${r.v.fileName} (${factOf(r.v, fact)})`))}.`,
      found: true,
    };
  }
  rows.sort((a, b) => (low ? a.m - b.m : b.m - a.m));
  const shown = rows.slice(0, Math.max(2, Math.min(style.items, 5)));
  for (const r of shown) citeVideo(t, r.v, `${r.v.fileName}: ${factOf(r.v, fact)}`);
  const word: Record<string, [string, string]> = {
    duration: ['longest', 'shortest'],
    resolution: ['highest resolution', 'lowest resolution'],
    fps: ['highest frame rate', 'lowest frame rate'],
    size: ['biggest', 'smallest'],
  };
  const [hi, lo] = word[fact] ?? ['first', 'last'];
  return {
    text: `${rows[0]!.v.fileName} is the ${low ? lo : hi} (${factOf(rows[0]!.v, fact)})${shown.length > 1 ? `; then ${joinList(shown.slice(1).map((r) => `${r.v.fileName} (${factOf(r.v, fact)})`))}` : ''}.`,
    found: true,
  };
}

async function soundAnswer(t: FactContext, style: Style, which: boolean): Promise<Answer> {
  const known = t.scope.videos.filter((v) => v.hasAudio !== null);
  if (!known.length) return await t.notFound('whether there is sound', style);
  const silentAsked = /\b(no sound|no audio|without (sound|audio)|silent|mute|muted)\b/i.test(t.prompt);
  if (which || known.length > 1) {
    const chosen = known.filter((v) => (silentAsked ? v.hasAudio === false : v.hasAudio === true));
    if (!chosen.length) return await t.notFound(silentAsked ? 'a video without sound' : 'a video with sound', style);
    for (const v of chosen.slice(0, 10))
      citeVideo(t, v, `${v.fileName}: ${v.hasAudio ? 'has an audio track' : 'has no audio track'}`);
    return {
      text: `${silentAsked ? 'Without sound' : 'With sound'}: ${joinList(chosen.slice(0, 10).map((v) => v.fileName))}${chosen.length > 10 ? ' and more' : ''}.`,
      found: true,
    };
  }
  const v = known[0]!;
  const speech = await t.finder.has({ videos: [v], window: null }, ['speech', 'transcript']);
  citeVideo(t, v, `${v.fileName}: ${v.hasAudio ? 'has an audio track' : 'has no audio track'}`);
  if (!v.hasAudio) return { text: `No: ${v.fileName} has no audio track, so it is silent.`, found: true };
  return {
    text: `Yes: ${v.fileName} has an audio track${speech ? ', with speech in it' : ' (no speech was found in it)'}.`,
    found: true,
  };
}

function videoList(t: FactContext, count: boolean): Answer {
  const vs = t.scope.videos;
  const names = vs.slice(0, 12).map((v) => `${v.fileName}${v.durationSec !== null ? ` (${secs(v.durationSec)})` : ''}`);
  for (const v of vs.slice(0, 12)) citeVideo(t, v, `${v.fileName}`);
  const all = `${joinList(names)}${vs.length > 12 ? ` and ${vs.length - 12} more` : ''}`;
  return {
    text: count
      ? `The index holds ${numberWord(vs.length)} video${vs.length === 1 ? '' : 's'}: ${all}.`
      : `The index holds ${all}.`,
    found: true,
  };
}

/** How a file fact is named in a "not found". */
function nounOf(kind: FactKind): string {
  return [duration, resolution, fps, size, codec, audio, videos].find((p) => p.kind === kind)?.noun ?? kind;
}
