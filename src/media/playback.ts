/**
 * Playback in any browser: HEVC, ProRes, MPEG-2, a GIF… play in some browsers or none (Chromium
 * shows a frozen picture with sound for HEVC). Such a video gets a browser-playable copy beside
 * it (H.264/AAC MP4, at most 720p), made beside its analysis (jobs/playback-step.ts). The
 * original stays what `src` streams; `playback_src` streams the copy. A video that needs one has
 * `playback_src` (and `metadata.analysis.playback.state` "making") from the start of its analysis,
 * so that `ready` never hands a browser a file it cannot play.
 */
import { existsSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { runFfmpeg, summarizeFfmpegError } from './ffmpeg';
import { ffmpegSummary, parseFfmpegSummary } from './ffmpeg-probe';

/** The copy's file name inside the video's folder (removed with it). */
export const PLAYBACK_FILE = 'playback.mp4';
/** Longest side of the copy, in pixels. */
const MAX_SIDE = 1280;
const MAX_SHORT_SIDE = 720;
/** ffmpeg expression: the factor that fits the displayed picture (iw*sar × ih) in those bounds. */
const FIT = `min(1,min(${MAX_SIDE}/max(iw*sar,ih),${MAX_SHORT_SIDE}/min(iw*sar,ih)))`;

/** Codecs every current browser plays, per container. */
const PLAYABLE: Record<string, { video: string[]; audio: string[] }> = {
  'video/mp4': { video: ['h264'], audio: ['aac', 'mp3'] },
  'video/webm': { video: ['vp8', 'vp9', 'av1'], audio: ['vorbis', 'opus'] },
};

export type PlaybackPlan = { kind: 'none' } | { kind: 'remux' } | { kind: 'transcode' };

/**
 * What the video needs: nothing (plays as it is), a remux (playable codecs in a container some
 * browsers refuse, e.g. H.264/AAC in QuickTime or Matroska: seconds, no quality loss) or a transcode.
 */
export function playbackPlan(mimeType: string, videoCodec: string, audioCodecs: string[]): PlaybackPlan {
  const ok = PLAYABLE[mimeType];
  if (ok?.video.includes(videoCodec) && audioCodecs.every((a) => ok.audio.includes(a))) return { kind: 'none' };
  const mp4 = PLAYABLE['video/mp4']!;
  if (
    mp4.video.includes(videoCodec) &&
    audioCodecs.length <= 1 &&
    audioCodecs.every((a) => mp4.audio.includes(a)) &&
    !mimeType.startsWith('image/')
  )
    return { kind: 'remux' };
  return { kind: 'transcode' };
}

/** What a stored file needs, from its streams (one short ffmpeg run). */
export async function planFor(
  ffmpeg: string,
  source: string,
  mimeType: string,
  signal?: AbortSignal,
): Promise<PlaybackPlan> {
  const parsed = parseFfmpegSummary((await ffmpegSummary(ffmpeg, source, signal)).err);
  const streams = parsed?.streams ?? [];
  const video = streams.find((s) => s.codec_type === 'video' && !s.disposition?.attached_pic);
  const audio = streams.filter((s) => s.codec_type === 'audio').map((s) => s.codec_name ?? '');
  return playbackPlan(mimeType, video?.codec_name ?? '', audio);
}

/**
 * Makes the playable copy of `source` in `dir` when it needs one; returns what was done. Written
 * under a temporary name and renamed, so a reader never gets half a file.
 */
export async function makePlaybackCopy(
  ffmpeg: string,
  source: string,
  dir: string,
  mimeType: string,
  signal?: AbortSignal,
): Promise<PlaybackPlan & { ms: number }> {
  const t0 = performance.now();
  const plan = await planFor(ffmpeg, source, mimeType, signal);
  if (plan.kind === 'none') return { ...plan, ms: Math.round(performance.now() - t0) };
  const out = join(dir, PLAYBACK_FILE);
  const tmp = `${out}.part`;
  // First audio track only: a browser plays one, and it is the default.
  const codec =
    plan.kind === 'remux'
      ? ['-c', 'copy']
      : [
          // Even dimensions within 1280×720 (or 720×1280), never upscaled; yuv420p for every decoder.
          '-vf',
          `scale='trunc(iw*sar*${FIT}/2)*2':'trunc(ih*${FIT}/2)*2',setsar=1,format=yuv420p`,
          '-c:v',
          'libx264',
          '-preset',
          'superfast',
          '-crf',
          '26',
          '-threads',
          '1',
          '-c:a',
          'aac',
          '-b:a',
          '128k',
          '-ac',
          '2',
        ];
  const { code, err } = await runFfmpeg(
    ffmpeg,
    [
      '-y',
      '-i',
      source,
      '-map',
      '0:v:0',
      '-map',
      '0:a:0?',
      '-sn',
      '-dn',
      ...codec,
      '-movflags',
      '+faststart',
      '-f',
      'mp4',
      tmp,
    ],
    // A stopped copy is thrown away: killed outright, rather than let ffmpeg finish the file on
    // SIGTERM (with +faststart that rewrites all of it) while its video is being removed.
    { signal, killSignal: 'SIGKILL' },
  );
  if (code !== 0) {
    rmSync(tmp, { force: true });
    throw new Error(`the playback copy failed: ${summarizeFfmpegError(err, `ffmpeg exited with ${code}`)}`);
  }
  renameSync(tmp, out);
  return { ...plan, ms: Math.round(performance.now() - t0) };
}

/** The copy's path when there is one. */
export function playbackCopy(dir: string): string | null {
  const p = join(dir, PLAYBACK_FILE);
  return existsSync(p) ? p : null;
}
