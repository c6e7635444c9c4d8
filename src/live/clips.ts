/**
 * A playable clip of a live stream around a stream time, so that a cited moment plays: the
 * recording segments that cover it (Matroska, named by their Unix start second, written by the
 * pulled source) concatenated and remuxed into an MP4; for a pushed stream, which keeps JPEG frames
 * and no recording, an MP4 made from those frames. Clips are cached in the stream's folder under a
 * name made from their inputs (a segment still being written changes it), written to a part file
 * first and renamed, so a failed or killed ffmpeg never leaves a clip that looks finished.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomId } from '../ids';
import { runFfmpeg, summarizeFfmpegError } from '../media/ffmpeg';

/** The longest clip served: enough for a cited moment with its context, bounded work per request. */
export const MAX_CLIP_SEC = 120;
/** Cached clips kept per stream; older ones (and any older than an hour) are removed on the next miss. */
const CACHE_KEEP = 8;
const CACHE_MAX_AGE_MS = 3600_000;

export interface LiveClip {
  /** The MP4 file (inside the stream's `clips` folder). */
  path: string;
  /** The stream second at the clip's time 0 (the first covered moment of the request). */
  start: number;
  /** The stream second the clip ends at (the asked end, or where what is kept ends). */
  end: number;
  source: 'recording' | 'frames';
}

interface ClipInput {
  ffmpeg: string;
  /** The stream's video folder (`media/<id>`): `live/*.mkv`, `frames/*.jpg`, and the cache `clips/`. */
  dir: string;
  /** Unix ms of stream time 0. */
  originMs: number;
  start: number;
  end: number;
}

// One clip is made at a time: ffmpeg work per request stays bounded however many ask at once.
let queue: Promise<unknown> = Promise.resolve();
const serially = <T>(f: () => Promise<T>): Promise<T> => {
  const next = queue.then(f, f);
  queue = next.catch(() => {});
  return next;
};

/** The clip of [start, end] stream seconds, or null when neither recording nor frames cover it. */
export async function liveClip(input: ClipInput): Promise<LiveClip | null> {
  const plan = recordingPlan(input) ?? framesPlan(input);
  if (!plan) return null;
  const cacheDir = join(input.dir, 'clips');
  // A cached clip is named <key>_<start ms>_<end ms>.mp4: its times are only known once it is made.
  const cached = (): LiveClip | null => {
    const name = list(cacheDir).find((n) => n.startsWith(`${plan.key}_`) && n.endsWith('.mp4'));
    const path = name && join(cacheDir, name);
    const times = name && /_(\d+)_(\d+)\.mp4$/.exec(name);
    if (!name || !path || !times || !exists(path)) return null;
    return { path, start: Number(times[1]) / 1000, end: Number(times[2]) / 1000, source: plan.source };
  };
  return (
    cached() ??
    serially(async () => {
      const done = cached();
      if (done) return done;
      mkdirSync(cacheDir, { recursive: true });
      prune(cacheDir);
      const part = join(cacheDir, `.part-${randomId(8)}.mp4`);
      const listPath = join(cacheDir, `.part-${randomId(8)}.ffconcat`);
      try {
        writeFileSync(listPath, plan.list);
        const { args, start, end } = await plan.prepare(input.ffmpeg, listPath);
        const { code, err } = await runFfmpeg(input.ffmpeg, ['-y', ...args, part]);
        if (code !== 0 || !exists(part))
          throw new Error(`ffmpeg could not make the clip: ${summarizeFfmpegError(err, `ffmpeg exited with ${code}`)}`);
        const path = join(cacheDir, `${plan.key}_${Math.round(start * 1000)}_${Math.round(end * 1000)}.mp4`);
        renameSync(part, path);
        return { path, start: round(start), end: round(end), source: plan.source };
      } finally {
        rmSync(part, { force: true });
        rmSync(listPath, { force: true });
      }
    })
  );
}

interface Plan {
  key: string;
  source: 'recording' | 'frames';
  /** An ffconcat list of files (names inside our own folders only). */
  list: string;
  /** ffmpeg's arguments before the output, and the stream seconds the clip will start and end at. */
  prepare(ffmpeg: string, list: string): Promise<{ args: string[]; start: number; end: number }>;
}

/** The recording segments covering the window, as one concatenated input cut to it. */
function recordingPlan({ dir, originMs, start, end }: ClipInput): Plan | null {
  const liveDir = join(dir, 'live');
  const all = list(liveDir)
    .map((name) => ({ name, at: Number(/^(\d+)\.mkv$/.exec(name)?.[1]) }))
    .filter((s) => Number.isFinite(s.at))
    .sort((a, b) => a.at - b.at);
  // Segment i covers [at_i, at_{i+1}); the newest one is still growing (or ended with the source):
  // it covers until its last write.
  const u0 = originMs / 1000 + start;
  const u1 = originMs / 1000 + end;
  const endOf = (i: number) => all[i + 1]?.at ?? mtimeOf(join(liveDir, all[i]!.name)) / 1000;
  let first = -1;
  for (let i = 0; i < all.length; i++) if (all[i]!.at <= u0) first = i;
  // The window starts before the recording does, or in a gap (the source was away).
  if (first < 0) first = 0;
  else if (endOf(first) <= u0) first++;
  if (first >= all.length || all[first]!.at >= u1) return null;
  let last = first;
  while (last + 1 < all.length && all[last + 1]!.at < u1) last++;
  const used = all.slice(first, last + 1);
  // Cut at the asked times, within what is kept: from the asked start (or the recording's first
  // moment), to the asked end (or the newest moment written).
  const offset = Math.max(0, u0 - used[0]!.at);
  const length = Math.min(u1, endOf(last)) - (used[0]!.at + offset);
  if (length <= 0) return null;
  const files = used.map((s) => join(liveDir, s.name));
  const sizes = files.map((f) => statSync(f).size);
  return {
    key: hashOf(['rec2', start, end, ...used.map((s, i) => `${s.name}:${sizes[i]}`)]),
    source: 'recording',
    // Each segment has its own timestamps from 0: concatenated whole, then cut on the output side.
    list: ffconcat(files.map((file) => ({ file }))),
    async prepare(ffmpeg, listPath) {
      // Copied H.264 can only start at a keyframe: copied when one is at the start (instant), made
      // H.264 again otherwise (and for another codec: MJPEG, HEVC…), so the clip starts where asked
      // (copying from the keyframe before made 25–35 s an 18 s clip with a long keyframe interval).
      const [codec, keyframe] = await Promise.all([
        probe(ffmpeg, files[0]!).then((p) => p.codec),
        keyframeAtOrBefore(ffmpeg, files[0]!, offset),
      ]);
      const copy = codec === 'h264' && offset - keyframe < 0.05;
      const video = copy
        ? ['-c:v', 'copy']
        : ['-vf', "scale=-2:'min(720,ih)'", '-c:v', 'libx264', '-preset', 'veryfast', '-pix_fmt', 'yuv420p'];
      const args = ['-f', 'concat', '-safe', '0', '-i', listPath, '-ss', offset.toFixed(3), '-t', length.toFixed(3)];
      args.push('-map', '0:v:0', '-map', '0:a:0?', ...video, '-c:a', 'aac', '-movflags', '+faststart', '-f', 'mp4');
      const from = used[0]!.at + offset - originMs / 1000;
      return { args, start: from, end: from + length };
    },
  };
}

/** The stream's kept frames inside the window, each shown until the next one, as an H.264 MP4. */
function framesPlan({ dir, start, end }: ClipInput): Plan | null {
  const framesDir = join(dir, 'frames');
  const shots = list(framesDir)
    .map((name) => ({ name, t: Number(/^(\d{12})\.jpg$/.exec(name)?.[1]) / 1000 }))
    .filter((f) => Number.isFinite(f.t) && f.t >= start && f.t <= end)
    .sort((a, b) => a.t - b.t);
  if (!shots.length) return null;
  // Each frame shows until the next one (pushed frames come about once a second); the last for a second.
  const entries: { file: string; duration?: number }[] = shots.map((f, i) => ({
    file: join(framesDir, f.name),
    duration: Math.max(0.04, (shots[i + 1]?.t ?? f.t + 1) - f.t),
  }));
  // The concat demuxer honours the last duration only when the last file is named once more.
  entries.push({ file: entries[entries.length - 1]!.file });
  return {
    key: hashOf(['frames', start, end, ...shots.map((f) => f.name)]),
    source: 'frames',
    list: ffconcat(entries),
    async prepare(ffmpeg, listPath) {
      // Frames may differ in size: all are fitted to the first one's (at most 720 lines, even sides).
      const { width, height } = await probe(ffmpeg, entries[0]!.file);
      const h = Math.max(2, Math.min(720, height || 720) & ~1);
      const w = Math.max(2, Math.round(((width || 1280) * h) / (height || 720)) & ~1);
      const fit = `scale=${w}:${h}:force_original_aspect_ratio=decrease,pad=${w}:${h}:(ow-iw)/2:(oh-ih)/2`;
      const args = ['-f', 'concat', '-safe', '0', '-i', listPath, '-vf', `${fit},fps=10,format=yuv420p`];
      args.push('-c:v', 'libx264', '-preset', 'veryfast', '-movflags', '+faststart', '-f', 'mp4');
      const last = entries[entries.length - 2]!;
      return { args, start: shots[0]!.t, end: shots[shots.length - 1]!.t + last.duration! };
    },
  };
}

/** A file's first video stream: codec name and size, from ffmpeg's own description of it. */
async function probe(ffmpeg: string, file: string): Promise<{ codec: string; width: number; height: number }> {
  const { err: text } = await runFfmpeg(ffmpeg, ['-i', file], { logLevel: 'info' });
  const m = /Stream #[^\n]*Video: (\w+)[^\n]*?, (\d{2,5})x(\d{2,5})/.exec(text);
  return { codec: m?.[1] ?? '', width: Number(m?.[2] ?? 0), height: Number(m?.[3] ?? 0) };
}

/** The time (seconds) of the last keyframe at or before `t` of a file's first video stream, from its packet list. */
async function keyframeAtOrBefore(ffmpeg: string, file: string, t: number): Promise<number> {
  const run = await runFfmpeg(ffmpeg, ['-i', file, '-map', '0:v:0', '-c', 'copy', '-f', 'framecrc', '-'], {
    stdout: 'pipe',
    stderr: 'ignore',
  });
  const text = new TextDecoder().decode(run.out);
  const tb = /^#tb 0: (\d+)\/(\d+)/m.exec(text);
  const unit = tb ? Number(tb[1]) / Number(tb[2]) : 0.001;
  let best = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith('0,')) continue;
    // framecrc marks packets whose flags are not "keyframe" with F=0x…; keyframes carry bit 1 or no mark.
    const flags = /F=0x([0-9a-f]+)/i.exec(line);
    if (flags && (Number.parseInt(flags[1]!, 16) & 1) === 0) continue;
    const at = Number(line.split(',')[1]) * unit;
    if (at <= t + 0.001 && at > best) best = at;
  }
  return best;
}

function ffconcat(entries: { file: string; duration?: number; inpoint?: number; outpoint?: number }[]): string {
  const quote = (p: string) => `'${p.replace(/'/g, "'\\''")}'`;
  const lines = ['ffconcat version 1.0'];
  for (const e of entries) {
    lines.push(`file ${quote(e.file)}`);
    if (e.duration !== undefined) lines.push(`duration ${e.duration.toFixed(3)}`);
    if (e.inpoint !== undefined) lines.push(`inpoint ${e.inpoint.toFixed(3)}`);
    if (e.outpoint !== undefined) lines.push(`outpoint ${e.outpoint.toFixed(3)}`);
  }
  return `${lines.join('\n')}\n`;
}

/** Removes a stream's part files of crashed runs, clips older than an hour, and all but the newest few. */
export function pruneClips(videoDir: string, now = Date.now()): void {
  prune(join(videoDir, 'clips'), now);
}

function prune(cacheDir: string, now = Date.now()): void {
  const files = list(cacheDir)
    .map((name) => {
      try {
        return { name, at: statSync(join(cacheDir, name)).mtimeMs };
      } catch {
        return null;
      }
    })
    .filter((f): f is { name: string; at: number } => f !== null)
    .sort((a, b) => b.at - a.at);
  files.forEach((f, i) => {
    const stalePart = f.name.startsWith('.part-') && now - f.at > 600_000;
    const oldClip = !f.name.startsWith('.part-') && (i >= CACHE_KEEP || now - f.at > CACHE_MAX_AGE_MS);
    if (stalePart || oldClip) rmSync(join(cacheDir, f.name), { force: true });
  });
}

const hashOf = (parts: (string | number)[]) => createHash('sha256').update(parts.join('\n')).digest('hex').slice(0, 32);
const round = (t: number) => Math.round(t * 1000) / 1000;
const mtimeOf = (p: string) => {
  try {
    return statSync(p).mtimeMs;
  } catch {
    return 0;
  }
};
const exists = (p: string) => {
  try {
    return statSync(p).size > 0;
  } catch {
    return false;
  }
};
function list(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
