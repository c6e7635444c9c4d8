/**
 * Fact plug-in: people told apart by their faces (the index's people, grouped by likeness and
 * named by the user), and person detections where no face was seen: how many different people,
 * when a named person appears, which videos show them, whether they are in a video, who is on
 * screen at a moment, when the person from the start appears again. Every time in an answer is
 * the start or end of a cited appearance.
 *
 * Its cue is read from the index (cueIn): a person's name the index knows, or the wording of these
 * questions ("how many different people", "who is on screen" at a moment, "the person from the
 * start ... again"). It then outweighs the person detections' plug-in, whose answers count
 * detections, not people.
 */
import type { EvidenceFinder } from '../../search/finder';
import type { Catalog } from '../../storage/catalog';
import * as faceReads from '../../storage/repositories/faces';
import { personNames } from '../../storage/repositories/people';
import type { Video } from '../../storage/rows';
import { formatTime } from '../target';
import { PERSON_WORDS } from '../vocabulary';
import { cueForm, type FactPlugin, type Answer, type FactContext } from './plugin';

/** What a people question sees: the index, the scope of the answer and how it cites. */
interface PeopleQuestion {
  catalog: Catalog;
  /** The composer's finder: its kept per-video label counts and first starts. */
  finder: EvidenceFinder;
  prompt: string;
  indexId: string;
  videos: Video[];
  /** The question's time window (a `target` or a time in its text), or null. */
  window: { start: number; end: number } | null;
}

/** An appearance to cite: a face, or a person detection without a face. */
interface Cited {
  videoId: string;
  start: number;
  end: number;
  kind: 'face' | 'object';
  text: string;
}

/** An answer of this plug-in: its text, whether it found it, and the appearances it cites. */
interface Found {
  output: string;
  found: boolean;
  evidence: Cited[];
}

/** A span of one video. */
interface Spot {
  videoId: string;
  start: number;
  end: number;
}

interface Appearance {
  personId: string;
  name: string | null;
  videoId: string;
  start: number;
  end: number;
}

/** The plural words for people, from the one vocabulary. */
const PEOPLE_WORDS = `(?:${PERSON_WORDS.filter((w) => /(s|men|people|children)$/.test(w) && !/^any/.test(w)).join('|')})`;
const COUNT = new RegExp(
  `\\bhow many\\s+(?:different|distinct|unique|separate|individual)\\s+${PEOPLE_WORDS}\\b|\\bhow many\\s+${PEOPLE_WORDS}\\s+(?:appear|are (?:there|shown|seen|visible)|can (?:be seen|I see|you see)|show up)\\b(?!.*\\b(?:at|when)\\b)`,
  'i',
);
const WHO_AT =
  /^\s*who(?:'s| is| was| are| were)?\b.*\b(?:on screen|on camera|visible|there|in (?:the |this )?(?:frame|picture|shot|scene)|speaking|talking|shown|seen)\b/i;
const AGAIN =
  /\b(?:person|man|woman|guy|girl|boy|lady|someone|speaker|face)\b.*\b(?:start|beginning|first)\b.*\b(?:again|come back|comes back|return|returns|reappear|reappears)\b/i;
/** "when does NAME appear", "which videos show NAME", "is NAME in this video", "where is NAME". */
const NAME_PATTERNS = [
  /\b(?:when|where)\s+(?:does|do|did|is|was|can I see|can we see|will)\s+(.+?)\s+(?:appear|show up|come in|come on|enter|leave|speak|talk|visible|seen|on screen|in (?:the|this|these|any) \w+|again)\b/i,
  /\bwhich\s+(?:videos?|clips?|files?|recordings?)\s+(?:show|shows|have|has|feature|features|contain|contains|include|includes|with)\s+(.+?)\s*\??$/i,
  /\b(?:is|was|does)\s+(.+?)\s+(?:in|on|appear in|show up in|visible in|seen in)\s+(?:this|the|that|any)\s+(?:video|clip|file|recording|index)\b/i,
  /\b(?:show me|find)\s+(.+?)\s*\??$/i,
];

export const faces: FactPlugin = {
  kind: 'faces',
  computed: true,
  needsNoVisionModel: true,
  segmentKinds: ['face', 'object'],
  noun: 'that person',
  cueIn: async (t) => (await read(question(t))) !== null,
  cueWeight: 2,
  forms: {
    count: cueForm(
      answer,
      [
        'How many different people appear in this video?',
        'How many distinct persons are in the clip?',
        'How many unique individuals can be seen?',
        'How many separate people show up across these videos?',
        'How many people appear in the recording?',
        'How many people are there in total?',
        'How many persons can be seen?',
      ],
      { readsPosition: true },
    ),
    when: cueForm(
      answer,
      [
        'When does Maria appear?',
        'When does John Smith show up?',
        'At what times can we see Priya?',
        'When does the person from the start appear again?',
        'When does the man from the beginning come back?',
      ],
      { readsPosition: true },
    ),
    which_video: cueForm(answer, [
      'Which videos show Maria?',
      'Which clips feature John?',
      'In which recordings is Priya?',
    ]),
    presence: cueForm(answer, [
      'Is Maria in this video?',
      'Does John appear in this clip?',
      'Is Priya anywhere in the index?',
    ]),
    visible: cueForm(answer, [
      'Who is on screen at this moment?',
      'Who is visible right now?',
      'Who can be seen in the frame at that time?',
      'Who is speaking on camera here?',
    ]),
  },
};

/** The question as this plug-in sees it, in the composer's current scope. */
function question(t: FactContext): PeopleQuestion {
  return {
    catalog: t.catalog,
    finder: t.finder,
    prompt: t.prompt,
    indexId: t.indexId,
    videos: t.scope.videos,
    window: t.scope.window,
  };
}

/** Which people question this is, or null when it is none (then the cue does not hold). */
async function read(q: PeopleQuestion): Promise<(() => Promise<Found>) | null> {
  const videoIds = q.videos.map((v) => v.id);
  if (!videoIds.length) return null;
  const known = [...(await personNames(q.catalog, q.indexId))].map(([id, name]) => ({ id, name }));
  const prompt = q.prompt.trim();
  const named = known.filter(
    (p) => p.name && new RegExp(`(^|[^\\p{L}\\p{N}])${escapeRegExp(p.name)}($|[^\\p{L}\\p{N}])`, 'iu').test(prompt),
  );
  if (named.length)
    return async () =>
      await aboutNamed(
        q,
        named.map((p) => ({ id: p.id, name: p.name! })),
      );
  if (COUNT.test(prompt)) return async () => await howMany(q);
  if (AGAIN.test(prompt)) return async () => await fromTheStart(q);
  if (WHO_AT.test(prompt) && q.window) return async () => await whoAt(q);
  // A name-like phrase that no person of the index carries: an honest "not found" once the index
  // has people to name, unless the phrase is something else the videos contain (a label, a text).
  if (known.length) {
    const phrase = nameIn(prompt);
    if (phrase && !(await faceReads.mentioned(q.catalog, videoIds, phrase))) {
      const names = known.map((p) => p.name).filter((n): n is string => !!n);
      return async () => ({
        found: false,
        evidence: [],
        output: `I could not find anyone named "${phrase}" in ${q.videos.length === 1 ? 'this video' : 'this index'}. ${names.length ? `The people named here are ${list(names)}.` : 'No person has been named yet: name people on the People panel (PUT /indexes/{index_id}/people/{person_id}).'}`,
      });
    }
  }
  return null;
}

/**
 * Every form answers the people question its words ask: a name, "different people", "again" or
 * "who" decide the answer across forms ("how many times does Anna appear" is about Anna). The
 * forms teach the reader the wordings.
 */
async function answer(t: FactContext): Promise<Answer> {
  const run = await read(question(t));
  if (!run) return await t.notFound('that person', t.style);
  const { output, found, evidence } = await run();
  for (const e of evidence) t.cite(e.videoId, e.kind, e.start, e.end, e.text, 1);
  return { text: output, found };
}

async function aboutNamed(q: PeopleQuestion, who: { id: string; name: string }[]): Promise<Found> {
  const apps = await appearances(
    q,
    who.map((p) => p.id),
  );
  // "Which videos show …" names the files even when the scope has only one.
  const showFiles = q.videos.length > 1 || /\bwhich\s+(?:videos?|clips?|files?|recordings?)\b/i.test(q.prompt);
  const parts: string[] = [];
  const evidence: Cited[] = [];
  for (const p of who) {
    const mine = apps.filter((a) => a.personId === p.id);
    if (!mine.length) {
      parts.push(
        `${p.name} does not appear in ${q.videos.length === 1 ? 'this video' : 'the videos asked about'}${q.window ? ' at that time' : ''}.`,
      );
      continue;
    }
    const byVideo = groupBy(mine, (a) => a.videoId);
    const lines = [...byVideo.entries()].map(([vid, as]) => {
      const file = fileName(q, vid);
      return `${showFiles ? `in ${file}: ` : ''}${as.map((a) => `${formatTime(a.start)}–${formatTime(a.end)}`).join(', ')}`;
    });
    const videos = byVideo.size;
    parts.push(
      `${p.name} appears ${mine.length === 1 ? 'once' : `${mine.length} times`}${showFiles ? ` in ${videos} video${videos === 1 ? '' : 's'}` : ''}: ${lines.join('; ')}.`,
    );
    evidence.push(...mine.map((a) => item(a)));
  }
  const found = evidence.length > 0;
  return { found, evidence, output: parts.join(' ') };
}

async function howMany(q: PeopleQuestion): Promise<Found> {
  const apps = await appearances(q);
  const ids = [...new Set(apps.map((a) => a.personId))];
  const hidden = await facelessPersons(q, 8);
  const scopeWord = q.videos.length === 1 ? 'this video' : `these ${q.videos.length} videos`;
  if (!ids.length && !hidden.count)
    return {
      found: false,
      evidence: [],
      output: `I could not find any people in ${scopeWord}: no face and no person was detected.`,
    };
  const firsts = ids.map((id) => apps.find((a) => a.personId === id)!);
  const names = firsts.map((a) => a.name).filter((n): n is string => !!n);
  const parts: string[] = [];
  if (ids.length) {
    parts.push(
      `${ids.length} different ${ids.length === 1 ? 'person' : 'people'} ${ids.length === 1 ? 'appears' : 'appear'} in ${scopeWord}, told apart by their faces` +
        (names.length
          ? ` (${list(names)}${names.length < ids.length ? ` and ${ids.length - names.length} not named yet` : ''})`
          : '') +
        `; first seen at ${firsts.map((a) => `${formatTime(a.start)}${q.videos.length > 1 ? ` in ${fileName(q, a.videoId)}` : ''}`).join(', ')}.`,
    );
  }
  // Without the faces analyzer (or before it ran) no face could be seen: say so rather than "not visible".
  const facesRan = q.videos.some(
    (v) =>
      (v.analysis as Record<string, { unavailable?: string }> | null)?.faces &&
      !(v.analysis as Record<string, { unavailable?: string }>).faces!.unavailable,
  );
  if (hidden.count && !facesRan) {
    parts.push(
      `People appear ${hidden.count} time${hidden.count === 1 ? '' : 's'} (from the person detections: ${hidden.first
        .map((h) => `${formatTime(h.start)}–${formatTime(h.end)}`)
        .join(
          ', ',
        )}${hidden.count > 8 ? ', …' : ''}); faces were not analysed, so whether those are different people cannot be told.`,
    );
  } else if (hidden.count) {
    parts.push(
      `${ids.length ? 'Besides, people' : 'People'} whose faces were not visible appear ${hidden.count} time${hidden.count === 1 ? '' : 's'} (from the person detections: ${hidden.first
        .map((h) => `${formatTime(h.start)}–${formatTime(h.end)}`)
        .join(
          ', ',
        )}${hidden.count > 8 ? ', …' : ''}); whether those are different people cannot be told without a face.`,
    );
  }
  return {
    found: true,
    evidence: [
      ...firsts.map((a) => item(a)),
      ...hidden.first.map((h) => ({
        ...item({ ...h, personId: '', name: null }),
        kind: 'object' as const,
        text: 'person (face not visible)',
      })),
    ],
    output: parts.join(' '),
  };
}

async function whoAt(q: PeopleQuestion): Promise<Found> {
  const w = q.window!;
  const apps = (await appearances(q)).filter((a) => a.start <= w.end && a.end >= w.start);
  if (apps.length) {
    const seen = new Map<string, Appearance>();
    for (const a of apps) if (!seen.has(a.personId)) seen.set(a.personId, a);
    const described = [...seen.values()].map(
      (a) =>
        `${a.name ?? `an unnamed person (${a.personId})`} (${formatTime(a.start)}–${formatTime(a.end)}${q.videos.length > 1 ? ` in ${fileName(q, a.videoId)}` : ''})`,
    );
    return {
      found: true,
      evidence: [...seen.values()].map((a) => item(a)),
      output: `On screen then: ${list(described)}.`,
    };
  }
  const hidden = (await facelessPersons(q, 1)).first;
  if (hidden.length) {
    const h = hidden[0]!;
    return {
      found: true,
      evidence: [{ ...item({ ...h, personId: '', name: null }), kind: 'object', text: 'person (face not visible)' }],
      output: `A person is on screen then (${formatTime(h.start)}–${formatTime(h.end)}), but their face is not visible, so I cannot tell who it is.`,
    };
  }
  return {
    found: false,
    evidence: [],
    output: 'I could not find anyone on screen at that time: no face and no person was detected there.',
  };
}

async function fromTheStart(q: PeopleQuestion): Promise<Found> {
  const apps = await appearances(q);
  if (!apps.length)
    return {
      found: false,
      evidence: [],
      output: `I could not find a face at the start${q.videos.length === 1 ? ' of this video' : ''}, so I cannot tell when that person appears again.`,
    };
  const first = apps[0]!;
  const again = apps.filter(
    (a) => a.personId === first.personId && a !== first && !(a.videoId === first.videoId && a.start < first.end),
  );
  const who = first.name ?? 'The person at the start';
  const where = (a: Appearance) =>
    `${formatTime(a.start)}–${formatTime(a.end)}${q.videos.length > 1 ? ` in ${fileName(q, a.videoId)}` : ''}`;
  if (!again.length)
    return { found: true, evidence: [item(first)], output: `${who} (${where(first)}) does not appear again.` };
  return {
    found: true,
    evidence: [first, ...again].map((a) => item(a)),
    output: `${who} (${where(first)}) appears again at ${again.map(where).join(', ')}.`,
  };
}

/** Face appearances in the scope (and window), in video order then time. */
async function appearances(q: PeopleQuestion, personIds?: string[]): Promise<Appearance[]> {
  const videoIds = q.videos.map((v) => v.id);
  const rows = await faceReads.faceAppearances(q.catalog, videoIds, personIds);
  const order = new Map(videoIds.map((id, i) => [id, i]));
  return rows
    .filter((r) => !q.window || (r.start <= q.window.end && r.end >= q.window.start))
    .sort((a, b) => order.get(a.videoId)! - order.get(b.videoId)! || a.start - b.start);
}

/**
 * Person detections (object spans) that no face appearance overlaps: people seen from behind, too
 * far, too small. How many (in the scope and window), and the first `limit` of them in time. Counted
 * in SQL: a whole index holds a hundred thousand person spans, and reading them all to count them
 * was most of the time of a "how many people" question.
 */
async function facelessPersons(q: PeopleQuestion, limit: number): Promise<{ count: number; first: Spot[] }> {
  const w = q.window;
  const ids = (videos: Video[]) => videos.map((v) => v.id);
  if (w) {
    const count = await faceReads.facelessCount(q.catalog, ids(q.videos), w);
    const first = count ? await faceReads.facelessFirst(q.catalog, ids(q.videos), w, limit) : [];
    return { count, first };
  }
  // Whole videos: in a video without any face appearance every person span is faceless, and the
  // finder keeps how many each video holds; only the videos with faces are counted span by span.
  const [spans, faced] = await Promise.all([
    q.finder.labelSpans(q.videos, 'person'),
    faceReads.videosWithFaces(q.catalog, ids(q.videos)),
  ]);
  let count = await faceReads.facelessCount(q.catalog, ids(q.videos.filter((v) => faced.has(v.id))), null);
  const firsts: number[] = [];
  q.videos.forEach((v, i) => {
    const s = spans[i];
    if (s && !faced.has(v.id)) {
      count += s.count;
      firsts.push(s.first);
    }
  });
  if (!count || limit <= 0) return { count, first: [] };
  // The first `limit` by time start no later than the limit-th first start of the faceless videos
  // (each has a faceless span from then): only the videos with a span by then are read, and only
  // their spans by then are sorted: the same rows, ties included, as the read of all of them.
  let videos = q.videos;
  let bound: number | undefined;
  if (firsts.length >= limit) {
    const t = firsts.sort((a, b) => a - b)[limit - 1]!;
    videos = q.videos.filter((_, i) => spans[i] !== undefined && spans[i]!.first <= t);
    bound = t;
  }
  const first = await faceReads.facelessFirst(q.catalog, ids(videos), null, limit, bound);
  return { count, first };
}

function item(a: Appearance): Cited {
  return {
    videoId: a.videoId,
    start: a.start,
    end: a.end,
    kind: 'face',
    text: a.name ?? `unnamed person ${a.personId}`,
  };
}

/** The name-like phrase of a "when does X appear" question: capitalised words only (a name, not "the dog"). */
function nameIn(prompt: string): string | null {
  for (const re of NAME_PATTERNS) {
    const m = re.exec(prompt);
    const phrase = m?.[1]?.trim();
    if (phrase && /^\p{Lu}[\p{L}'’-]*(?:\s+\p{Lu}[\p{L}'’-]*){0,2}$/u.test(phrase)) return phrase;
  }
  return null;
}

const fileName = (q: PeopleQuestion, videoId: string) => q.videos.find((v) => v.id === videoId)?.fileName ?? videoId;
const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const list = (xs: string[]) => (xs.length <= 1 ? (xs[0] ?? '') : `${xs.slice(0, -1).join(', ')} and ${xs.at(-1)}`);
function groupBy<T>(xs: T[], key: (x: T) => string): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const x of xs) m.set(key(x), [...(m.get(key(x)) ?? []), x]);
  return m;
}
