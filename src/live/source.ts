/**
 * A pulled live source (RTSP, RTMP, HLS live playlist, HTTP(S) MJPEG; each kind's options are in
 * sources/): one ffmpeg process that
 * hands out JPEG frames at the analysed rate on stdout and, beside them, writes the stream as short
 * recording segments (named by their Unix start time) for citations. A source that gives no frame
 * for `stallSec` is killed; the caller reconnects it with backoff.
 */
import { closeSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { proxiedChildEnv } from '../config';
import { badRequest } from '../errors';
import { checkHost } from '../ingest/url-guard';
import { type FfmpegProcess, startFfmpeg } from '../media/ffmpeg';
import { PCM_BYTES_PER_SEC } from './audio';

export const LIVE_SCHEMES = ['rtsp:', 'rtsps:', 'rtmp:', 'rtmps:', 'http:', 'https:'] as const;

/**
 * The URL as it may be shown or logged: its scheme and host only. Credentials, path and query
 * are left out, since each can carry a secret (a camera's password, an RTMP stream key, a
 * playlist's token).
 */
export function redactUrl(raw: string): string {
  try {
    const u = new URL(raw);
    const rest = (u.pathname !== '' && u.pathname !== '/') || u.search ? '/…' : '';
    return `${u.protocol}//${u.host}${rest}`;
  } catch {
    return 'a live source';
  }
}

/** A stream's name when its user gives none: the source's scheme and host (see redactUrl). */
export function defaultStreamName(raw: string): string {
  try {
    const u = new URL(raw);
    return `${u.protocol}//${u.host}`;
  } catch {
    return 'live stream';
  }
}

/** Checks a stream URL's shape (400) and its host with the download rules (403 for private addresses unless allowed). */
export async function checkStreamUrl(raw: string, allowPrivate: boolean): Promise<{ url: URL; address: string }> {
  if (typeof raw !== 'string' || raw.trim() === '') throw badRequest('url must be a non-empty string');
  if (raw.length > 4096) throw badRequest('url is longer than 4096 characters');
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw badRequest('url is not a valid absolute URL (rtsp://, rtmp://, http(s):// for HLS or MJPEG)');
  }
  if (!(LIVE_SCHEMES as readonly string[]).includes(url.protocol))
    throw badRequest(`url scheme "${url.protocol.replace(':', '')}" is not allowed; use rtsp, rtmp, http or https`);
  if (!url.hostname) throw badRequest('url has no host');
  const address = await checkHost(url, { allowPrivate });
  return { url, address };
}

export interface PulledSourceOptions {
  ffmpeg: string;
  input: string;
  /**
   * The connection's guard (egress.ts): the proxy every HTTP request and TLS connection of ffmpeg
   * goes through (`httpProxy`), or the RTSP relay; closed with the connection.
   */
  egress?: { httpProxy?: string; close(): void };
  /** The source kind's input options (before `-i`; see sources/). */
  inputArgs: string[];
  fps: number;
  /**
   * Also hand out the sound track (its first audio stream) as 16 kHz mono 16-bit PCM, for speech
   * on the windows; a source without audio ends at once with `noAudio` (connect it again without).
   */
  audio?: boolean;
  /** Folder of the recording segments; null: no recording. */
  recordDir: string | null;
  segmentSec: number;
  stallSec: number;
  onFrame(jpeg: Buffer, atMs: number): void;
  /** PCM (s16le, 16 kHz, mono) whose first sample was heard at `atMs` (Unix ms). */
  onAudio?(pcm: Buffer, atMs: number): void;
  /**
   * The process ended: `reason` says why (never the URL); `noAudio`: the source has no sound
   * track; `code`: ffmpeg's exit code (0: it read its input to the end).
   */
  onEnd(reason: string, noAudio: boolean, code: number | null): void;
}

/** One connection of a pulled source. */
export class PulledSource {
  private proc: FfmpegProcess | null = null;
  private lastFrameAt = Date.now();
  private watchdog: ReturnType<typeof setInterval> | null = null;
  private ended = false;
  private stallReason: string | null = null;
  frames = 0;

  constructor(private readonly o: PulledSourceOptions) {}

  start(): void {
    const o = this.o;
    const args: string[] = [...o.inputArgs];
    args.push('-i', o.input);
    // Analysed frames: at most 720 lines, at the stream's analysed rate, as JPEGs on stdout.
    args.push(
      '-map',
      '0:v:0',
      '-vf',
      `fps=${o.fps},scale=-2:'min(720,ih)'`,
      '-f',
      'image2pipe',
      '-c:v',
      'mjpeg',
      '-q:v',
      '4',
      'pipe:1',
    );
    if (o.recordDir) {
      mkdirSync(o.recordDir, { recursive: true });
      // The recording: the video as it came (no re-encoding), cut into short Matroska segments
      // named by their Unix start time, so the purge goes by name and a cited moment finds its file.
      // The sound is made AAC: copied, the ADTS AAC of an HLS or MPEG-TS source has no header
      // Matroska can take ("Error writing trailer … Invalid argument" at the first cut, every few
      // seconds), and camera codecs such as G.711 do not fit it either; sound is cheap to encode.
      args.push(
        '-map',
        '0:v:0',
        '-map',
        '0:a?',
        '-c:v',
        'copy',
        '-c:a',
        'aac',
        '-b:a',
        '96k',
        '-f',
        'segment',
        '-segment_time',
        String(o.segmentSec),
        '-segment_format',
        'matroska',
        '-reset_timestamps',
        '1',
        '-strftime',
        '1',
        join(o.recordDir, '%s.mkv'),
      );
    }
    if (o.audio) args.push('-map', '0:a:0?', '-ac', '1', '-ar', '16000', '-f', 's16le', 'pipe:3');
    const proc = startFfmpeg(o.ffmpeg, args, {
      stdout: 'pipe',
      fd3: o.audio,
      env: proxiedChildEnv(o.egress?.httpProxy),
    });
    this.proc = proc;
    if (proc.fd3 !== null) void this.readAudio(proc.fd3);
    this.lastFrameAt = Date.now();
    this.watchdog = setInterval(() => {
      if (Date.now() - this.lastFrameAt > o.stallSec * 1000) {
        this.stallReason = `no frame for ${o.stallSec} s`;
        proc.stop('SIGKILL');
      }
    }, 1000);
    this.watchdog.unref?.();
    void this.read(proc);
  }

  private async read(proc: FfmpegProcess): Promise<void> {
    let buf = Buffer.alloc(0);
    const errText = proc.errText();
    try {
      for await (const chunk of proc.stdout) {
        buf = buf.length ? Buffer.concat([buf, chunk]) : Buffer.from(chunk);
        // ffmpeg's MJPEG frames start with FFD8 and end with FFD9 and carry no thumbnail.
        for (;;) {
          const start = buf.indexOf(SOI);
          if (start < 0) {
            buf = Buffer.alloc(0);
            break;
          }
          const end = buf.indexOf(EOI, start + 2);
          if (end < 0) {
            if (start > 0) buf = buf.subarray(start);
            break;
          }
          const jpeg = Buffer.from(buf.subarray(start, end + 2));
          buf = buf.subarray(end + 2);
          this.lastFrameAt = Date.now();
          this.frames++;
          this.o.onFrame(jpeg, this.lastFrameAt);
        }
      }
    } catch {
      /* the process was killed */
    }
    const code = await proc.exited;
    const stderr = await errText;
    const noAudio = !!this.o.audio && /does not contain any stream/.test(stderr);
    this.finish(this.stallReason ?? describeExit(code, stderr, this.o.input), noAudio, this.stallReason ? null : code);
  }

  /**
   * The sound track on fd 3, timed by arrival like the frames: the first bytes anchor the clock,
   * later samples follow it by their count (so pipe bursts do not stretch or squeeze the audio).
   */
  private async readAudio(fd: number): Promise<void> {
    let startMs: number | null = null;
    let bytes = 0;
    let odd: Buffer | null = null;
    try {
      for await (const chunk of Bun.file(fd).stream()) {
        let pcm: Buffer = odd ? Buffer.concat([odd, chunk]) : Buffer.from(chunk);
        odd = null;
        if (pcm.length % 2) {
          odd = pcm.subarray(pcm.length - 1);
          pcm = pcm.subarray(0, pcm.length - 1);
        }
        if (!pcm.length) continue;
        startMs ??= Date.now() - (pcm.length / PCM_BYTES_PER_SEC) * 1000;
        this.o.onAudio?.(pcm, startMs + (bytes / PCM_BYTES_PER_SEC) * 1000);
        bytes += pcm.length;
      }
    } catch {
      /* the process was killed */
    } finally {
      // Bun leaves an extra pipe's descriptor open after its end.
      try {
        closeSync(fd);
      } catch {
        /* already closed */
      }
    }
  }

  private finish(reason: string, noAudio: boolean, code: number | null): void {
    this.o.egress?.close();
    if (this.ended) return;
    this.ended = true;
    if (this.watchdog) clearInterval(this.watchdog);
    this.o.onEnd(reason, noAudio, code);
  }

  stop(): void {
    this.ended = true;
    this.o.egress?.close();
    if (this.watchdog) clearInterval(this.watchdog);
    this.proc?.stop('SIGTERM');
  }
}

const SOI = Buffer.from([0xff, 0xd8]);
const EOI = Buffer.from([0xff, 0xd9]);

/** Why ffmpeg stopped, in words, with the URL (and any credentials in it) taken out. */
function describeExit(code: number | null, stderr: string, input: string): string {
  const line = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .pop();
  let clean = (line ?? '')
    .split(input)
    .join('the source')
    .replace(/[a-z]+:\/\/\S+/gi, 'the source');
  // ffmpeg sometimes names the path alone (an RTMP app/stream key, a playlist's token folder).
  for (const part of secretParts(input)) clean = clean.split(part).join('…');
  if (code === 0) return 'the source ended';
  return clean ? `the source failed: ${clean.slice(0, 200)}` : `the source failed (ffmpeg exit ${code})`;
}

/** The path of a source URL, whole and by its longer segments: what describeExit keeps out of a reason. */
function secretParts(input: string): string[] {
  try {
    const { pathname, search } = new URL(input);
    const parts = [pathname + search, pathname, ...pathname.split('/'), search.slice(1)];
    return parts.filter((p) => p.length >= 6).sort((a, b) => b.length - a.length);
  } catch {
    return [];
  }
}
