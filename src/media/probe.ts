/**
 * ffprobe at the boundary: its JSON becomes a typed MediaInfo right here.
 */
import { availableParallelism, setPriority } from 'node:os';
import { unprocessable, unsupportedMedia } from '../errors';

export interface MediaInfo {
  /** ffprobe's format name, e.g. "mov,mp4,m4a,3gp,3g2,mj2" or "matroska,webm". */
  formatName: string;
  durationSec: number;
  /** Average frame rate of the first video stream. */
  fps: number;
  width: number;
  height: number;
  videoCodec: string;
  hasAudio: boolean;
  /** MIME type and file extension chosen for storage. */
  mimeType: string;
  ext: string;
}

interface FfprobeStream {
  codec_type?: string;
  codec_name?: string;
  width?: number;
  height?: number;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  duration?: string;
  nb_frames?: string;
  disposition?: { attached_pic?: number };
}
interface FfprobeOutput {
  streams?: FfprobeStream[];
  format?: { format_name?: string; duration?: string };
}

// Formats that are still images (an image renamed .mp4 probes as one of these).
const IMAGE_FORMATS = /^(image2|png_pipe|jpeg_pipe|bmp_pipe|gif|webp_pipe|tiff_pipe|svg_pipe|apng)/;

/**
 * ffprobe runs are short CPU bursts in processes the HTTP server starts. Ten uploads finishing
 * together started twenty of them at once, which took the cores from the server's own thread for
 * a few hundred milliseconds: they run at most this many at a time, and at a lower priority.
 */
const MAX_PROBES = Math.max(1, Math.min(4, availableParallelism()));
const PROBE_NICE = 5;
let probing = 0;
const waiting: (() => void)[] = [];

async function probeSlot<T>(fn: () => Promise<T>): Promise<T> {
  while (probing >= MAX_PROBES) await new Promise<void>((r) => waiting.push(r));
  probing++;
  try {
    return await fn();
  } finally {
    probing--;
    waiting.shift()?.();
  }
}

function spawnProbe(args: string[], opts: { stderr: 'pipe' | 'ignore'; signal?: AbortSignal }) {
  const proc = Bun.spawn(args, { stdout: 'pipe', stderr: opts.stderr, signal: opts.signal });
  try {
    setPriority(proc.pid, PROBE_NICE);
  } catch {
    /* already gone, or not permitted */
  }
  return proc;
}

export function probeFile(ffprobe: string, file: string, opts: { maxDurationSec: number; signal?: AbortSignal }): Promise<MediaInfo> {
  return probeSlot(() => probeNow(ffprobe, file, opts));
}

async function probeNow(ffprobe: string, file: string, opts: { maxDurationSec: number; signal?: AbortSignal }): Promise<MediaInfo> {
  const proc = spawnProbe([ffprobe, '-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', file], { stderr: 'pipe', signal: opts.signal });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr!).text(), proc.exited]);
  if (code !== 0) {
    const why = err.trim().split('\n').pop()?.replace(file, 'file') || `ffprobe exited with ${code}`;
    throw unsupportedMedia(`the downloaded file is not a readable media file (${why})`);
  }
  let parsed: FfprobeOutput;
  try {
    parsed = JSON.parse(out);
  } catch {
    throw unsupportedMedia('the downloaded file is not a readable media file (ffprobe gave no description)');
  }
  const info = describe(parsed, opts.maxDurationSec);
  await checkComplete(ffprobe, file, info.durationSec, opts.signal);
  return info;
}

/** How far before the end the completeness check starts reading packets (seconds). */
const TAIL_SEC = 10;

/**
 * A file cut short (a source that sent fewer bytes than the file has while its Content-Length
 * agreed, a partial copy on the origin) can still have a header that states the full duration,
 * and would be stored as if whole. The packets of its last seconds tell: a whole file has data up
 * to (about) its stated duration. Reads only the tail (a seek), so it costs one short ffprobe run.
 */
export async function checkComplete(ffprobe: string, file: string, durationSec: number, signal?: AbortSignal): Promise<void> {
  const from = Math.max(0, durationSec - TAIL_SEC);
  const proc = spawnProbe([ffprobe, '-v', 'error', '-read_intervals', `${from.toFixed(3)}%+${TAIL_SEC * 6}`, '-show_entries', 'packet=pts_time,dts_time', '-of', 'csv=p=0', file], { stderr: 'ignore', signal });
  let slow = false;
  const timer = setTimeout(() => {
    slow = true;
    proc.kill();
  }, 20_000);
  const out = await new Response(proc.stdout).text();
  const code = await proc.exited;
  clearTimeout(timer);
  // A seek that takes too long or a reader error says nothing about the file: do not refuse it.
  if (slow || code !== 0 || signal?.aborted) return;
  let last = -Infinity;
  for (const v of out.split(/[,\n]/)) {
    const t = Number(v);
    if (v !== '' && Number.isFinite(t) && t > last) last = t;
  }
  const slack = Math.max(2, durationSec * 0.1);
  if (last === -Infinity && durationSec > slack) {
    throw unprocessable(`the file is incomplete: its header says ${fmt(durationSec)} s but it has no data after ${fmt(from)} s (the source sent only part of the file)`);
  }
  if (durationSec - last > slack) {
    throw unprocessable(`the file is incomplete: its header says ${fmt(durationSec)} s but its data ends at ${fmt(last)} s (the source sent only part of the file)`);
  }
}

const fmt = (s: number) => String(Math.round(s * 10) / 10);

export function describe(p: FfprobeOutput, maxDurationSec: number): MediaInfo {
  const formatName = p.format?.format_name ?? '';
  const streams = p.streams ?? [];
  const video = streams.find((s) => s.codec_type === 'video' && !s.disposition?.attached_pic);
  if (IMAGE_FORMATS.test(formatName)) throw unsupportedMedia(`the file is a still image (${formatName.split(',')[0]}), not a video`);
  if (!video) {
    const hasAudio = streams.some((s) => s.codec_type === 'audio');
    throw unprocessable(hasAudio ? 'the file has no video stream (audio only); upload a video' : 'the file has no video stream');
  }
  const hasAudio = streams.some((s) => s.codec_type === 'audio');
  const fps = parseRate(video.avg_frame_rate) || parseRate(video.r_frame_rate);
  const durationSec = Number(p.format?.duration ?? video.duration);
  if (!Number.isFinite(durationSec) || durationSec <= 0) throw unprocessable('the video has no readable duration (truncated or still image)');
  if (durationSec > maxDurationSec) throw unprocessable(`the video is ${Math.round(durationSec)} s long; the limit is ${maxDurationSec} s`);
  const { mimeType, ext } = containerOf(formatName, video.codec_name ?? '');
  return {
    formatName,
    durationSec: Math.round(durationSec * 1000) / 1000,
    fps: Math.round(fps * 1000) / 1000,
    width: video.width ?? 0,
    height: video.height ?? 0,
    videoCodec: video.codec_name ?? 'unknown',
    hasAudio,
    mimeType,
    ext,
  };
}

function parseRate(r: string | undefined): number {
  if (!r) return 0;
  const [n = NaN, d = 1] = r.split('/').map(Number);
  if (!Number.isFinite(n)) return 0;
  return d > 0 ? n / d : n;
}

function containerOf(formatName: string, codec: string): { mimeType: string; ext: string } {
  const f = formatName.split(',');
  if (f.includes('matroska') || f.includes('webm')) {
    // ffprobe names both "matroska,webm"; WebM only holds VP8/VP9/AV1.
    return ['vp8', 'vp9', 'av1'].includes(codec) ? { mimeType: 'video/webm', ext: 'webm' } : { mimeType: 'video/x-matroska', ext: 'mkv' };
  }
  if (f.includes('mov') || f.includes('mp4')) return { mimeType: 'video/mp4', ext: 'mp4' };
  if (f.includes('avi')) return { mimeType: 'video/x-msvideo', ext: 'avi' };
  if (f.includes('mpegts')) return { mimeType: 'video/mp2t', ext: 'ts' };
  if (f.includes('mpeg')) return { mimeType: 'video/mpeg', ext: 'mpg' };
  if (f.includes('flv')) return { mimeType: 'video/x-flv', ext: 'flv' };
  if (f.includes('ogg')) return { mimeType: 'video/ogg', ext: 'ogv' };
  if (f.includes('asf')) return { mimeType: 'video/x-ms-asf', ext: 'wmv' };
  return { mimeType: 'application/octet-stream', ext: 'bin' };
}

