/**
 * ffprobe at the boundary: its JSON becomes a typed MediaInfo right here.
 */
import { ApiError, unprocessable, unsupportedMedia } from '../errors';
import type { FfprobeOutput, FfprobeStream } from './ffprobe-output';
import { probeStreams, runFfprobe } from './ffprobe';

export interface MediaInfo {
  /** ffprobe's format name, e.g. "mov,mp4,m4a,3gp,3g2,mj2" or "matroska,webm". */
  formatName: string;
  durationSec: number;
  /** Average frame rate of the first video stream. */
  fps: number;
  /** Displayed size: rotation (rotate tag, display matrix) and sample aspect ratio applied. */
  width: number;
  height: number;
  /** Clockwise rotation the player applies (0, 90, 180, 270). */
  rotation?: number;
  videoCodec: string;
  hasAudio: boolean;
  /** MIME type and file extension chosen for storage. */
  mimeType: string;
  ext: string;
}

// Formats that are still images (an image renamed .mp4 probes as one of these).
const IMAGE_FORMATS = /^(image2|png_pipe|jpeg_pipe|bmp_pipe|gif|webp_pipe|tiff_pipe|svg_pipe|apng)/;
/** Image formats that can hold an animation: one with two frames or more is a video. */
const ANIMATED_FORMATS = /^(gif|apng|webp_pipe)/;

export interface ProbeOptions {
  maxDurationSec: number;
  signal?: AbortSignal;
  /** ffmpeg, to read the facts with when ffprobe crashes. */
  ffmpeg?: string;
}

export async function probeFile(ffprobe: string, file: string, opts: ProbeOptions): Promise<MediaInfo> {
  const probe = await probeStreams({ ffprobe, ffmpeg: opts.ffmpeg }, file, opts.signal);
  if (!probe.ok) {
    // A crash of the tools is the server's fault (500); only a file they read and reject is the file's (415).
    if (probe.toolFault)
      throw new ApiError(
        500,
        `the probe tool crashed on this file (${probe.reason}); this is a fault of the server's media tools, not of the file`,
      );
    throw unsupportedMedia(`the downloaded file is not a readable media file (${probe.reason})`);
  }
  const { parsed } = probe;
  const frames =
    probe.via === 'ffprobe' && ANIMATED_FORMATS.test(parsed.format?.format_name ?? '')
      ? await imageFrames(ffprobe, file, opts.signal)
      : undefined;
  const info = describe(parsed, opts.maxDurationSec, frames);
  // After a crash no packet-level reading (frame count, completeness): that reader is the ffprobe that crashed.
  if (probe.via === 'ffprobe') await checkComplete(ffprobe, file, info.durationSec, opts.signal);
  return info;
}

/** Frame count and span of an image format that may be animated (GIF, APNG, WebP). */
async function imageFrames(
  ffprobe: string,
  file: string,
  signal?: AbortSignal,
): Promise<{ count: number; durationSec: number }> {
  const { out } = await runFfprobe(
    ffprobe,
    ['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'packet=pts_time,duration_time', '-of', 'csv=p=0', file],
    { signal },
  );
  let count = 0;
  let first = Infinity;
  let end = 0;
  for (const line of out.split('\n')) {
    if (!line.trim()) continue;
    const [pts, dur] = line.split(',').map(Number);
    if (!Number.isFinite(pts)) continue;
    count++;
    first = Math.min(first, pts!);
    end = Math.max(end, pts! + (Number.isFinite(dur) ? dur! : 0));
  }
  return { count, durationSec: count ? end - first : 0 };
}

/** How far before the end the completeness check starts reading packets (seconds). */
const TAIL_SEC = 10;

/**
 * A file cut short (a source that sent fewer bytes than the file has while its Content-Length
 * agreed, a partial copy on the origin) can still have a header that states the full duration,
 * and would be stored as if whole. The packets of its last seconds tell: a whole file has data up
 * to (about) its stated duration. Reads only the tail (a seek), so it costs one short ffprobe run.
 */
export async function checkComplete(
  ffprobe: string,
  file: string,
  durationSec: number,
  signal?: AbortSignal,
): Promise<void> {
  const from = Math.max(0, durationSec - TAIL_SEC);
  const run = await runFfprobe(
    ffprobe,
    [
      '-v',
      'error',
      '-read_intervals',
      `${from.toFixed(3)}%+${TAIL_SEC * 6}`,
      '-show_entries',
      'packet=pts_time,dts_time',
      '-of',
      'csv=p=0',
      file,
    ],
    { signal, timeoutMs: 20_000 },
  );
  // A seek that takes too long, a reader error or a crash says nothing about the file: do not refuse it.
  if (run.timedOut || run.code !== 0 || signal?.aborted) return;
  const out = run.out;
  let last = -Infinity;
  for (const v of out.split(/[,\n]/)) {
    const t = Number(v);
    if (v !== '' && Number.isFinite(t) && t > last) last = t;
  }
  const slack = Math.max(2, durationSec * 0.1);
  if (last === -Infinity && durationSec > slack) {
    throw unprocessable(
      `the file is incomplete: its header says ${fmt(durationSec)} s but it has no data after ${fmt(from)} s (the source sent only part of the file)`,
    );
  }
  if (durationSec - last > slack) {
    throw unprocessable(
      `the file is incomplete: its header says ${fmt(durationSec)} s but its data ends at ${fmt(last)} s (the source sent only part of the file)`,
    );
  }
}

const fmt = (s: number) => String(Math.round(s * 10) / 10);

export function describe(
  p: FfprobeOutput,
  maxDurationSec: number,
  imageFrames?: { count: number; durationSec: number },
): MediaInfo {
  const formatName = p.format?.format_name ?? '';
  const streams = p.streams ?? [];
  const video = streams.find((s) => s.codec_type === 'video' && !s.disposition?.attached_pic);
  // An animated GIF/APNG/WebP is a video; one frame (or a format that cannot animate) is a picture.
  const animated = !!imageFrames && imageFrames.count >= 2 && imageFrames.durationSec > 0;
  if (IMAGE_FORMATS.test(formatName) && !animated)
    throw unsupportedMedia(`the file is a still image (${formatName.split(',')[0]}), not a video`);
  if (!video) {
    const hasAudio = streams.some((s) => s.codec_type === 'audio');
    throw unprocessable(
      hasAudio ? 'the file has no video stream (audio only); upload a video' : 'the file has no video stream',
    );
  }
  const hasAudio = streams.some((s) => s.codec_type === 'audio');
  const fps = animated
    ? imageFrames.count / imageFrames.durationSec
    : parseRate(video.avg_frame_rate) || parseRate(video.r_frame_rate);
  const durationSec = animated ? imageFrames.durationSec : Number(p.format?.duration ?? video.duration);
  if (!Number.isFinite(durationSec) || durationSec <= 0)
    throw unprocessable('the video has no readable duration (truncated or still image)');
  if (durationSec > maxDurationSec)
    throw unprocessable(`the video is ${Math.round(durationSec)} s long; the limit is ${maxDurationSec} s`);
  const { mimeType, ext } = containerOf(formatName, video.codec_name ?? '', p.format?.tags?.major_brand ?? '');
  const { width, height, rotation } = displayedSize(video);
  return {
    formatName,
    durationSec: Math.round(durationSec * 1000) / 1000,
    fps: Math.round(fps * 1000) / 1000,
    width,
    height,
    rotation,
    videoCodec: video.codec_name ?? 'unknown',
    hasAudio,
    mimeType,
    ext,
  };
}

/**
 * The size a player shows: stored width stretched by the sample aspect ratio (as ffmpeg's scalers
 * do), then turned by the display matrix or the older `rotate` tag. A phone's portrait video is
 * often stored landscape with a 90° matrix.
 */
export function displayedSize(v: FfprobeStream): { width: number; height: number; rotation: number } {
  let width = v.width ?? 0;
  const height = v.height ?? 0;
  const [sn = 1, sd = 1] = (v.sample_aspect_ratio ?? '1:1').split(':').map(Number);
  if (sn > 0 && sd > 0 && sn !== sd) width = Math.round((width * sn) / sd / 2) * 2;
  const matrix = v.side_data_list?.find((d) => typeof d.rotation === 'number')?.rotation;
  const raw = matrix ?? Number(v.tags?.rotate ?? 0);
  const rotation = (((Math.round((Number.isFinite(raw) ? raw : 0) / 90) * 90) % 360) + 360) % 360;
  return rotation === 90 || rotation === 270 ? { width: height, height: width, rotation } : { width, height, rotation };
}

function parseRate(r: string | undefined): number {
  if (!r) return 0;
  const [n = NaN, d = 1] = r.split('/').map(Number);
  if (!Number.isFinite(n)) return 0;
  return d > 0 ? n / d : n;
}

function containerOf(formatName: string, codec: string, brand: string): { mimeType: string; ext: string } {
  const f = formatName.split(',');
  if (f[0] === 'gif') return { mimeType: 'image/gif', ext: 'gif' };
  if (f[0] === 'apng') return { mimeType: 'image/apng', ext: 'png' };
  if (f[0] === 'webp_pipe') return { mimeType: 'image/webp', ext: 'webp' };
  // ffprobe names MP4 and QuickTime alike; the file's brand tells them apart.
  if (f.includes('mov') && brand.trim() === 'qt') return { mimeType: 'video/quicktime', ext: 'mov' };
  if (f.includes('mov') && brand.startsWith('3g2')) return { mimeType: 'video/3gpp2', ext: '3g2' };
  if (f.includes('mov') && brand.startsWith('3gp')) return { mimeType: 'video/3gpp', ext: '3gp' };
  if (f.includes('matroska') || f.includes('webm')) {
    // ffprobe names both "matroska,webm"; WebM only holds VP8/VP9/AV1.
    return ['vp8', 'vp9', 'av1'].includes(codec)
      ? { mimeType: 'video/webm', ext: 'webm' }
      : { mimeType: 'video/x-matroska', ext: 'mkv' };
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
