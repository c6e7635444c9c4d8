/**
 * Frame and shot helpers shared by the stages that look at the sampled frames (objects, colours,
 * faces): picture sizes, raw frames from an ffmpeg pipe, and the shots' spans.
 */
import { readFileSync } from 'node:fs';
import type { Segment } from '../../storage/schema';

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
