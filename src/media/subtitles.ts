/**
 * Subtitle tracks: which a file has (ffprobe), and the cues of a text track or a subtitle file
 * (ffmpeg converts every text format it knows, SubRip, ASS/SSA, WebVTT, mov_text, to SubRip on
 * stdout, so one parser reads them all). Bitmap tracks (PGS, DVB, DVD) are listed, not read: their
 * text is pictures.
 */
import { runFfmpeg, summarizeFfmpegError } from './ffmpeg';
import { type ProbeTools, probeStreams } from './ffprobe';

export interface SubtitleTrack {
  /** ffprobe's stream index (ffmpeg's `-map 0:N`). */
  index: number;
  codec: string;
  language?: string;
  title?: string;
  /** A text track (read); false for bitmap tracks (listed only). */
  text: boolean;
}

export interface Cue {
  start: number;
  end: number;
  text: string;
}

interface ProbeStream {
  index?: number;
  codec_type?: string;
  codec_name?: string;
  tags?: Record<string, string>;
}

/** Codecs whose cues are pictures. Everything else ffmpeg decodes as a subtitle is text. */
const BITMAP_CODECS = new Set([
  'hdmv_pgs_subtitle',
  'dvb_subtitle',
  'dvd_subtitle',
  'xsub',
  'dvb_teletext',
  'arib_caption',
]);

/** The subtitle tracks among ffprobe's streams. */
export function subtitleTracks(streams: readonly ProbeStream[]): SubtitleTrack[] {
  return streams
    .filter((s) => s.codec_type === 'subtitle' && typeof s.index === 'number')
    .map((s) => {
      const codec = s.codec_name ?? 'unknown';
      const tag = (k: string) => {
        const v = s.tags?.[k] ?? s.tags?.[k.toUpperCase()];
        return v && v !== 'und' ? v : undefined;
      };
      const language = tag('language');
      const title = tag('title') ?? tag('handler_name');
      return {
        index: s.index!,
        codec,
        ...(language && { language }),
        // mp4 muxers name every track's handler ("SubtitleHandler"): that is not a title.
        ...(title && !/^(Sub(title)?Handler|Core Media (Text|Subtitle))$/i.test(title) && { title }),
        text: codec !== 'unknown' && !BITMAP_CODECS.has(codec),
      };
    });
}

/**
 * The file's subtitle tracks (a short ffprobe run; ffmpeg's input summary when ffprobe crashes, as
 * the bundled one does on MPEG-TS).
 */
export async function probeSubtitles(tools: ProbeTools, file: string, signal?: AbortSignal): Promise<SubtitleTrack[]> {
  const probe = await probeStreams(tools, file, signal);
  if (!probe.ok) throw new Error(`the subtitle tracks could not be listed: ${probe.reason}`);
  return subtitleTracks(probe.parsed.streams ?? []);
}

/**
 * The cues of a text track of `file` (`index` = its stream index), or of a subtitle file itself
 * (`index` undefined: an .srt or .vtt).
 */
export async function readCues(
  ffmpeg: string,
  file: string,
  index: number | undefined,
  signal?: AbortSignal,
): Promise<Cue[]> {
  const map = index === undefined ? ['-map', '0:s:0'] : ['-map', `0:${index}`];
  const { out, err, code } = await runFfmpeg(ffmpeg, ['-i', file, ...map, '-c:s', 'srt', '-f', 'srt', 'pipe:1'], {
    stdout: 'pipe',
    signal,
  });
  if (code !== 0)
    throw new Error(`the subtitles could not be read: ${summarizeFfmpegError(err, `ffmpeg exited with ${code}`)}`);
  return parseSrt(new TextDecoder().decode(out));
}

/** SubRip cues; markup (<i>, <font …>, ASS {\…} overrides) is dropped, lines joined by a space. */
export function parseSrt(srt: string): Cue[] {
  const cues: Cue[] = [];
  const blocks = srt.replace(/\r/g, '').split(/\n{2,}/);
  for (const block of blocks) {
    const lines = block.split('\n').filter((l) => l.trim() !== '');
    const at = lines.findIndex((l) => l.includes('-->'));
    if (at < 0) continue;
    const m = /(\d+):(\d\d):(\d\d)[,.](\d{1,3})\s*-->\s*(\d+):(\d\d):(\d\d)[,.](\d{1,3})/.exec(lines[at]!);
    if (!m) continue;
    const t = (h: string, mi: string, s: string, ms: string) =>
      Number(h) * 3600 + Number(mi) * 60 + Number(s) + Number(ms.padEnd(3, '0')) / 1000;
    const start = t(m[1]!, m[2]!, m[3]!, m[4]!);
    const end = t(m[5]!, m[6]!, m[7]!, m[8]!);
    const text = lines
      .slice(at + 1)
      .map((l) =>
        l
          .replace(/<[^>]*>/g, '')
          .replace(/\{\\[^}]*\}/g, '')
          .replace(/\\N/gi, ' ')
          .trim(),
      )
      .filter(Boolean)
      .join(' ')
      .replace(/\s+/g, ' ');
    if (!text || !(end >= start)) continue;
    cues.push({ start: round3(start), end: round3(end), text });
  }
  return cues.sort((a, b) => a.start - b.start);
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;
