/**
 * What the analysis recorded that is no fact to state (issue 34, class 8), in one place so that
 * every answer and flow output applies the same rule:
 *  - on-screen text that is no text to quote: fragments that form no word ("sttck", "tck") and a
 *    watermark, the same short text read again and again across most of a video;
 *  - speech spans that may be music: a voice-activity detector also fires on singing and
 *    instruments, so a span that is only just over the speech stage's loudness-swing floor, or one
 *    the detector was unsure of, is said as "possibly speech", not as someone speaking.
 */
import type { Segment, SegmentKind } from '../storage/rows';
import type { ScopeWindow } from './evidence';

const squash = (s: string) => s.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');

/** Every run of letters lacks a vowel ("sttck", "ck"), save upper-case acronyms ("TV", "BBC"), and it holds no digit. */
export function isFragment(text: string): boolean {
  const words = text.match(/\p{L}{2,}/gu) ?? [];
  const noWord = (w: string) => !/[aeiouyäöüéèáàíóú]/i.test(w) && w !== w.toUpperCase();
  return words.length > 0 && words.every(noWord) && !/\d/.test(text);
}

/**
 * The on-screen text of `ocr` that can be quoted: fragments and watermarks left out. A watermark
 * is a short text (at most 12 letters and digits) read at least three times in one video, on
 * screen for at least half of it; `ocr` must hold every text of the videos it covers for that test
 * (a part of them finds fewer repeats and keeps more).
 */
export function readableText(ocr: Segment[], durationOf: (videoId: string) => number | null): Segment[] {
  const seen = new Map<string, { n: number; secs: number }>();
  for (const s of ocr) {
    const k = `${s.videoId}\u0000${squash(s.text)}`;
    const e = seen.get(k) ?? { n: 0, secs: 0 };
    seen.set(k, { n: e.n + 1, secs: e.secs + (s.end - s.start) });
  }
  const watermark = (s: Segment) => {
    const e = seen.get(`${s.videoId}\u0000${squash(s.text)}`)!;
    const d = durationOf(s.videoId);
    return e.n >= 3 && d !== null && e.secs >= 0.5 * d && squash(s.text).length <= 12;
  };
  return ocr.filter((s) => !isFragment(s.text) && !watermark(s));
}

/**
 * The ids of the on-screen texts among `segs` that are no text to quote, each judged against every
 * text of its video (so that a watermark read again and again is known as one).
 */
export async function noisyText(
  finder: { byKind(scope: ScopeWindow, kinds: SegmentKind[]): Promise<Segment[]> },
  scope: ScopeWindow,
  segs: Segment[],
): Promise<Set<number>> {
  const out = new Set<number>();
  const ocr = segs.filter((s) => s.kind === 'ocr');
  for (const id of new Set(ocr.map((s) => s.videoId))) {
    const v = scope.videos.find((x) => x.id === id);
    if (!v) continue;
    const all = await finder.byKind({ videos: [v], window: null }, ['ocr']);
    const read = new Set(all.map((s) => s.id));
    const kept = new Set(readableText(all, () => v.durationSec).map((s) => s.id));
    // A text past the read's limit is judged on its own letters.
    for (const s of ocr) if (s.videoId === id && (read.has(s.id) ? !kept.has(s.id) : isFragment(s.text))) out.add(s.id);
  }
  return out;
}

/**
 * Mean voice probability under which a speech span is unsure. Silero's mean over the spans of real
 * speech is 0.82-0.995 on the shared clips (GRID, the JFK speech, the talking head).
 */
export const SURE_SPEECH_PROB = 0.65;

/**
 * Loudness swing under which a span is unsure (the speech stage keeps spans from 0.55, its
 * `minSwing`). Measured on the shared clips with `bench/speech-spans.ts` (MIN_SWING=0): spans of
 * speech swing 0.61-1.24, and every clip with speech has a span of 0.77 or more (GRID 0.98, the
 * JFK speech 1.24, the talking head 0.79); the music of the Big Buck Bunny intro swings at most
 * 0.60, Chaplin's music 0.25, the drums 0.30. Between 0.55 and 0.75 a span may be singing or music
 * with a beat (the skateboarding dog 0.58-0.69, the countdown 0.61: not known to hold speech).
 */
export const SURE_SPEECH_SWING = 0.75;

/** Whether one speech span may be music, singing or noise rather than someone speaking. */
export function unsureSpeech(s: Pick<Segment, 'kind' | 'confidence' | 'extra'>): boolean {
  if (s.kind !== 'speech') return false;
  const x = s.extra as { swing?: unknown } | null;
  if (typeof x?.swing === 'number' && x.swing < SURE_SPEECH_SWING) return true;
  return s.confidence !== null && s.confidence !== undefined && s.confidence < SURE_SPEECH_PROB;
}

/**
 * The speech of the videos whose voice detection is sure (issue 34, class 8: a voice detector also
 * fires on music and singing). A video is sure when one of its spans is sure or it has a
 * transcript: a span of it that swings less is still taken as speech (speech swings 0.61 at
 * times). Where no video is sure, every span is kept, flagged to be hedged.
 */
export function sureSpeech(segs: Segment[]): { segs: Segment[]; hedged: boolean } {
  const sureVideos = new Set(segs.filter((s) => !unsureSpeech(s)).map((s) => s.videoId));
  if (!sureVideos.size) return { segs, hedged: segs.length > 0 };
  return { segs: segs.filter((s) => sureVideos.has(s.videoId)), hedged: false };
}
