/**
 * Colour names of detected things, from their pixels: each pixel of the middle of a box (the edges
 * are mostly background) is named from a small palette in HSV, and the names covering at least
 * MIN_SHARE of it are the box's colours, most first. A person gets the colours of the upper body
 * too (their clothes: "the woman in the green jacket").
 *
 * The palette and its borders were checked on the shared clips against what MANIFEST.md says:
 * cars-parking-lot (white, silver and red cars on wet asphalt), bottles (blue caps, white table,
 * grey wall), countdown-living-room (blue armchair and balloon), drummer (red drum kit).
 */
import type { NewSegment, StageContext } from '../contracts';
import type { SampledFrame } from '../frame-stream';
import { decodeSampledFrames, type ShotBound } from './frames';

export const PALETTE = [
  'red',
  'orange',
  'yellow',
  'green',
  'blue',
  'purple',
  'pink',
  'brown',
  'black',
  'white',
  'grey',
] as const;
export type ColourName = (typeof PALETTE)[number];

/** A colour named for a box must cover this share of its middle. */
const MIN_SHARE = 0.25;
/** The middle of a box: this share of its width and height is cut from each side. */
const INSET = 0.2;
/** Width the frames are decoded at for colours (plenty for a box's colour, cheap to decode). */
const DECODE_WIDTH = 320;

/** The palette name of one pixel. */
export function nameOf(r: number, g: number, b: number): ColourName {
  const max = Math.max(r, g, b);
  const min = Math.min(r, g, b);
  const v = max / 255;
  const s = max === 0 ? 0 : (max - min) / max;
  // Dark pixels have no reliable hue (asphalt, shadows, a black car).
  if (v < 0.22) return 'black';
  // Low saturation: white, grey or black by brightness (silver reads as grey or white).
  if (s < 0.18 || (s < 0.28 && v > 0.85)) return v > 0.78 ? 'white' : v < 0.3 ? 'black' : 'grey';
  let h = 0;
  const d = max - min;
  if (max === r) h = ((g - b) / d + 6) % 6;
  else if (max === g) h = (b - r) / d + 2;
  else h = (r - g) / d + 4;
  h *= 60;
  // The red car of cars-parking-lot, lit from above, is h 340–360, s 0.3–0.45, v 0.9: people call
  // that red, so only a paler red is pink.
  if (h < 15 || h >= 335) return v < 0.45 && s < 0.7 ? 'brown' : s < 0.3 && v > 0.75 ? 'pink' : 'red';
  if (h < 40) return v < 0.6 ? 'brown' : 'orange';
  if (h < 68) return v < 0.45 ? 'brown' : 'yellow';
  if (h < 165) return 'green';
  if (h < 255) return 'blue';
  if (h < 290) return 'purple';
  return 'pink';
}

/** Colours of a region ([x, y, w, h], 0..1) of an RGB picture: names with at least MIN_SHARE, most first. */
export function coloursOf(
  rgb: Uint8Array,
  width: number,
  height: number,
  box: [number, number, number, number],
  inset = INSET,
  except: [number, number, number, number][] = [],
): ColourName[] {
  const x0 = Math.max(0, Math.floor((box[0] + box[2] * inset) * width));
  const x1 = Math.min(width, Math.ceil((box[0] + box[2] * (1 - inset)) * width));
  const y0 = Math.max(0, Math.floor((box[1] + box[3] * inset) * height));
  const y1 = Math.min(height, Math.ceil((box[1] + box[3] * (1 - inset)) * height));
  const counts = new Map<ColourName, number>();
  let n = 0;
  const outside = except.map(
    ([ex, ey, ew, eh]) => [ex * width, ey * height, (ex + ew) * width, (ey + eh) * height] as const,
  );
  for (let y = y0; y < y1; y++) {
    for (let x = x0; x < x1; x++) {
      if (outside.some(([ax, ay, bx, by]) => x >= ax && x < bx && y >= ay && y < by)) continue;
      const p = (y * width + x) * 3;
      const c = nameOf(rgb[p]!, rgb[p + 1]!, rgb[p + 2]!);
      counts.set(c, (counts.get(c) ?? 0) + 1);
      n++;
    }
  }
  if (!n) return [];
  return [...counts.entries()]
    .filter(([, k]) => k / n >= MIN_SHARE)
    .sort((a, b) => b[1] - a[1])
    .map(([c]) => c);
}

/** A person's upper body: the band below the head, down to the hips. */
const upperBody = (b: [number, number, number, number]): [number, number, number, number] => [
  b[0],
  b[1] + b[3] * 0.2,
  b[2],
  b[3] * 0.35,
];

type BoxEntry = {
  score: number;
  box: [number, number, number, number];
  colours?: ColourName[];
  upper_colours?: ColourName[];
};

/** A shot's background: the colours of its middle frame outside every detection box. */
export interface ShotBackground {
  start: number;
  end: number;
  colours: ColourName[];
}

/**
 * Adds colours to the boxes of each object segment (those of its best frame) and the segment's
 * colours (every box's first colour, most boxes first) to its extra; returns each shot's background
 * colours. One ffmpeg decodes the frames needed, small.
 */
export async function paintSegments(
  ctx: Pick<StageContext, 'ffmpeg' | 'signal' | 'video'>,
  segments: NewSegment[],
  frames: SampledFrame[],
  opts: { shots?: ShotBound[]; boxesAt?: (t: number) => [number, number, number, number][] } = {},
): Promise<ShotBackground[]> {
  const byT = new Map(frames.map((f) => [f.t, f]));
  // The frame nearest each shot's middle stands for its background.
  const middles = (opts.shots ?? []).map((s) => ({
    shot: s,
    frame: frames.reduce<SampledFrame | null>(
      (b, f) =>
        f.t >= s.start &&
        f.t <= s.end &&
        (!b || Math.abs(f.t - (s.start + s.end) / 2) < Math.abs(b.t - (s.start + s.end) / 2))
          ? f
          : b,
      null,
    ),
  }));
  const wanted = [
    ...new Set([
      ...segments.map((s) => s.extra?.best_t as number).filter((t) => byT.has(t)),
      ...middles.flatMap((m) => (m.frame ? [m.frame.t] : [])),
    ]),
  ].sort((a, b) => a - b);
  if (!wanted.length) return [];
  const width = DECODE_WIDTH;
  const height = Math.max(2, Math.round((DECODE_WIDTH * (ctx.video.height || 9)) / (ctx.video.width || 16) / 2) * 2);
  const pictures = await decodeSmall(
    ctx,
    wanted.map((t) => byT.get(t)!),
    width,
    height,
  );
  for (const s of segments) {
    const rgb = pictures.get(s.extra?.best_t as number);
    const boxes = s.extra?.boxes as BoxEntry[] | undefined;
    if (!rgb || !boxes?.length) continue;
    const tally = new Map<ColourName, number>();
    const upperTally = new Map<ColourName, number>();
    for (const b of boxes) {
      b.colours = coloursOf(rgb, width, height, b.box);
      if (b.colours[0]) tally.set(b.colours[0], (tally.get(b.colours[0]) ?? 0) + 1);
      if (s.text === 'person') {
        b.upper_colours = coloursOf(rgb, width, height, upperBody(b.box), 0.15);
        if (b.upper_colours[0]) upperTally.set(b.upper_colours[0], (upperTally.get(b.upper_colours[0]) ?? 0) + 1);
      }
    }
    s.extra!.colours = rank(tally);
    if (s.text === 'person') s.extra!.upper_colours = rank(upperTally);
  }
  return middles.flatMap(({ shot, frame }) => {
    const rgb = frame && pictures.get(frame.t);
    return rgb
      ? [
          {
            start: shot.start,
            end: shot.end,
            colours: coloursOf(rgb, width, height, [0, 0, 1, 1], 0, opts.boxesAt?.(frame.t) ?? []),
          },
        ]
      : [];
  });
}

/** The frames' JPEGs decoded small by one ffmpeg, by time; a frame that cannot be decoded has none. */
async function decodeSmall(
  ctx: Pick<StageContext, 'ffmpeg' | 'signal' | 'video'>,
  list: SampledFrame[],
  width: number,
  height: number,
): Promise<Map<number, Uint8Array>> {
  const pictures = new Map<number, Uint8Array>();
  let k = 0;
  try {
    for await (const rgb of decodeSampledFrames(ctx, list, { width, height, stage: 'colours', scaleFlags: 'area' }))
      pictures.set(list[k++]!.t, rgb);
  } catch (e) {
    // Colours are an extra of segments found without them: what was decoded is kept.
    if (ctx.signal.aborted) throw e;
  }
  return pictures;
}

const rank = (m: Map<ColourName, number>) => [...m.entries()].sort((a, b) => b[1] - a[1]).map(([c]) => c);
