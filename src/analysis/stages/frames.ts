/**
 * Frame and shot helpers shared by the stages that look at the sampled frames (objects, colours,
 * faces): picture sizes, the sampled JPEGs decoded to raw pictures, and the shots' spans.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFfmpeg, summarizeFfmpegError } from '../../media/ffmpeg';
import type { Segment } from '../../storage/rows';
import type { StageContext } from '../contracts';
import type { SampledFrame } from '../frame-stream';

/** Width and height of a JPEG, from its start-of-frame header. */
export function jpegSize(path: string): [number, number] {
  const b = readFileSync(path);
  if (b[0] !== 0xff || b[1] !== 0xd8) throw new Error(`not a JPEG frame: ${path}`);
  let i = 2;
  while (i + 9 < b.length) {
    if (b[i] !== 0xff) {
      i++;
      continue;
    }
    const marker = b[i + 1]!;
    // SOF0–SOF15 carry the size, except DHT (C4), JPG (C8) and DAC (CC).
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc)
      return [b.readUInt16BE(i + 7), b.readUInt16BE(i + 5)];
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7) || marker === 0xff) {
      i += marker === 0xff ? 1 : 2;
      continue;
    }
    i += 2 + b.readUInt16BE(i + 2);
  }
  throw new Error(`no picture size in JPEG frame ${path}`);
}

/** Consecutive fixed-size pictures of a raw video stream, each in a buffer of its own. */
export async function* rawFrames(stream: ReadableStream<Uint8Array>, frameBytes: number): AsyncGenerator<Uint8Array> {
  let cur = new Uint8Array(frameBytes);
  let filled = 0;
  for await (const chunk of stream) {
    let off = 0;
    while (off < chunk.length) {
      const n = Math.min(frameBytes - filled, chunk.length - off);
      cur.set(chunk.subarray(off, off + n), filled);
      filled += n;
      off += n;
      if (filled === frameBytes) {
        yield cur;
        cur = new Uint8Array(frameBytes);
        filled = 0;
      }
    }
  }
}

/**
 * The sampled frames' JPEGs decoded and scaled by one ffmpeg, as raw RGB pictures in their order.
 * Throws when ffmpeg fails or gives fewer pictures than frames; a stop kills ffmpeg (and calls
 * `onAbort`, for what the caller must stop too).
 */
export async function* decodeSampledFrames(
  ctx: Pick<StageContext, 'ffmpeg' | 'signal' | 'video'>,
  frames: SampledFrame[],
  o: {
    width: number;
    height: number;
    /** Names the concat list written beside the video (one per stage, as stages run at once). */
    stage: string;
    /** ffmpeg's scaler, e.g. 'area' (its default otherwise: the stages' findings depend on it). */
    scaleFlags?: string;
    onAbort?: () => void;
  },
): AsyncGenerator<Uint8Array> {
  const listFile = join(ctx.video.dir, `${o.stage}-frames.ffconcat`);
  writeFileSync(
    listFile,
    'ffconcat version 1.0\n' + frames.map((f) => `file '${f.path.replace(/'/g, "'\\''")}'\n`).join(''),
  );
  // -vsync 0: exactly one output picture per listed JPEG, whatever timestamps concat gives them.
  const proc = startFfmpeg(
    ctx.ffmpeg,
    [
      '-f',
      'concat',
      '-safe',
      '0',
      '-i',
      listFile,
      '-vf',
      `scale=${o.width}:${o.height}${o.scaleFlags ? `:flags=${o.scaleFlags}` : ''}`,
      '-vsync',
      '0',
      '-f',
      'rawvideo',
      '-pix_fmt',
      'rgb24',
      'pipe:1',
    ],
    { stdout: 'pipe' },
  );
  const stderr = proc.errText();
  const onAbort = () => {
    proc.stop();
    o.onAbort?.();
  };
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  try {
    let n = 0;
    for await (const rgb of rawFrames(proc.stdout, o.width * o.height * 3)) {
      if (n >= frames.length) break;
      n++;
      yield rgb;
    }
    const code = await proc.exited;
    ctx.signal.throwIfAborted();
    if (code !== 0)
      throw new Error(
        `the sampled frames could not be decoded: ${summarizeFfmpegError(await stderr, `ffmpeg exited with ${code}`)}`,
      );
    if (n !== frames.length) throw new Error(`only ${n} of ${frames.length} sampled frames could be decoded`);
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
    proc.stop();
    rmSync(listFile, { force: true });
  }
}

export interface ShotBound {
  start: number;
  end: number;
}

/** Shot index → its span, from the visual stage's `shot` segments (whose extra carries the index). */
export function shotBounds(
  shots: Pick<Segment, 'start' | 'end' | 'extra'>[],
  duration: number,
): Map<number, ShotBound> {
  const m = new Map<number, ShotBound>();
  shots.forEach((s, i) =>
    m.set(typeof s.extra?.index === 'number' ? s.extra.index : i, { start: s.start, end: s.end }),
  );
  if (m.size === 0) m.set(0, { start: 0, end: duration });
  return m;
}
