/**
 * The sound of a pulled live source, kept as it is heard until a window takes it: each window's
 * share written as a 16 kHz mono WAV file for the speech stage, and the speech stage's segments
 * moved from the file's time to stream time.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NewSegment } from '../analysis/contracts';
import { randomId } from '../ids';

/** Bytes of one second of the PCM (s16le, 16 kHz, mono) a pulled source hands out. */
export const PCM_BYTES_PER_SEC = 16000 * 2;
/** A window's sound shorter than this is left for the next window. */
const MIN_AUDIO_SEC = 0.5;

/** A window's sound, written for the speech stage: its file and where it starts in stream time. */
export interface HeardAudio {
  path: string;
  /** Stream seconds of the sound's first sample. */
  from: number;
  seconds: number;
}

export class SoundBuffer {
  private chunks: { atMs: number; pcm: Buffer }[] = [];
  /** Unix ms up to which the sound was taken (the next window's audio starts there). */
  private heardUntilMs = 0;

  /** `keepSec`: seconds of sound kept unanalysed at most (like the frames' backlog). */
  constructor(private readonly keepSec: number) {}

  /** PCM whose first sample was heard at `atMs` (Unix ms). */
  push(pcm: Buffer, atMs: number): void {
    this.chunks.push({ atMs, pcm });
    const old = Date.now() - this.keepSec * 1000;
    while (this.chunks.length && this.chunks[0]!.atMs < old) this.chunks.shift();
  }

  get empty(): boolean {
    return this.chunks.length === 0;
  }

  /**
   * The sound not yet taken up to stream time `toT` (stream time 0 at Unix ms `originMs`), written
   * as a WAV file into `dir`, or null when less than MIN_AUDIO_SEC has been heard (it waits for
   * the next window).
   */
  take(originMs: number, dir: string, toT: number): HeardAudio | null {
    if (!this.chunks.length) return null;
    const endOf = (c: { atMs: number; pcm: Buffer }) => c.atMs + (c.pcm.length / PCM_BYTES_PER_SEC) * 1000;
    const first = this.chunks[0]!;
    const tail = this.chunks[this.chunks.length - 1]!;
    const fromMs = Math.max(this.heardUntilMs, first.atMs);
    const toMs = Math.min(originMs + toT * 1000, endOf(tail));
    if (toMs - fromMs < MIN_AUDIO_SEC * 1000) return null;
    const parts: Buffer[] = [];
    for (const c of this.chunks) {
      if (endOf(c) <= fromMs || c.atMs >= toMs) continue;
      const a = Math.max(0, Math.floor(((fromMs - c.atMs) / 1000) * (PCM_BYTES_PER_SEC / 2))) * 2;
      const b = Math.min(c.pcm.length, Math.ceil(((toMs - c.atMs) / 1000) * (PCM_BYTES_PER_SEC / 2)) * 2);
      if (b > a) parts.push(c.pcm.subarray(a, b));
    }
    this.heardUntilMs = toMs;
    this.chunks = this.chunks.filter((c) => endOf(c) > toMs);
    const pcm = Buffer.concat(parts);
    if (pcm.length < MIN_AUDIO_SEC * PCM_BYTES_PER_SEC) return null;
    // Named per window: the window may be analysed in a worker process while the next is cut.
    const path = join(dir, `live-window-${randomId(8)}.wav`);
    writeFileSync(path, Buffer.concat([wavHeader(pcm.length), pcm]), { mode: 0o600 });
    return { path, from: (fromMs - originMs) / 1000, seconds: pcm.length / PCM_BYTES_PER_SEC };
  }
}

/** A segment of a window's sound moved to stream time (the sound started `from` s into the stream). */
export function shifted(s: NewSegment, from: number): NewSegment {
  const r3 = (x: number) => Math.round(x * 1000) / 1000;
  const extra = s.extra ? { ...s.extra } : s.extra;
  for (const k of ['speech_start', 'speech_end'])
    if (extra && typeof extra[k] === 'number') extra[k] = r3((extra[k] as number) + from);
  return { ...s, start: r3(s.start + from), end: r3(s.end + from), ...(extra !== undefined && { extra }) };
}

/** The 44-byte header of a 16 kHz mono 16-bit PCM WAV file of `bytes` bytes of samples. */
export function wavHeader(bytes: number): Buffer {
  const h = Buffer.alloc(44);
  h.write('RIFF', 0);
  h.writeUInt32LE(36 + bytes, 4);
  h.write('WAVE', 8);
  h.write('fmt ', 12);
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(16000, 24);
  h.writeUInt32LE(PCM_BYTES_PER_SEC, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36);
  h.writeUInt32LE(bytes, 40);
  return h;
}
