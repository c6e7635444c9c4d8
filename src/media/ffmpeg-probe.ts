/**
 * The probe's fallback: the facts ffprobe would give, read from `ffmpeg -i`'s stream summary.
 * The bundled ffprobe crashes (SIGSEGV) on every MPEG-TS file on some CPUs while the bundled
 * ffmpeg reads them fine; a crashing tool must not turn into "your file is unreadable".
 */
import { statSync } from 'node:fs';
import { runFfmpeg } from './ffmpeg';
import type { FfprobeOutput, FfprobeStream } from './ffprobe-output';

export interface ToolRun {
  out: string;
  err: string;
  code: number;
  /** Set when the process was killed by a signal (a crash), e.g. "SIGSEGV". */
  signal: string | null;
}

/**
 * A video's summary is read several times while it is indexed (whether it needs a playable copy,
 * its audio tracks, the copy itself): an unchanged file (same size and modification time) is not
 * read again. Per process, the last few files only.
 */
const recentSummaries = new Map<string, ToolRun>();
const RECENT_SUMMARIES = 16;

/** Runs ffmpeg with only an input: it prints the summary and exits 1 ("no output file"). */
export async function ffmpegSummary(ffmpeg: string, file: string, signal?: AbortSignal): Promise<ToolRun> {
  let key: string | null = null;
  try {
    const st = statSync(file);
    if (st.isFile()) key = `${ffmpeg}\0${file}\0${st.size}\0${st.mtimeMs}`;
  } catch {
    /* not a plain file (or gone): ffmpeg says what it is */
  }
  const known = key === null ? undefined : recentSummaries.get(key);
  if (known) return known;
  const run = await summaryOf(ffmpeg, file, signal);
  // A crash or a stop is not the file's summary.
  if (key !== null && run.signal === null && !signal?.aborted) {
    recentSummaries.set(key, run);
    if (recentSummaries.size > RECENT_SUMMARIES) recentSummaries.delete(recentSummaries.keys().next().value!);
  }
  return run;
}

async function summaryOf(ffmpeg: string, file: string, signal?: AbortSignal): Promise<ToolRun> {
  // The summary is logged at level info (ffmpeg's default).
  const { err, code, signal: crashed } = await runFfmpeg(ffmpeg, ['-i', file], { logLevel: 'info', signal });
  return { out: '', err, code, signal: crashed };
}

/**
 * Parses the summary ffmpeg prints for its first input into ffprobe's JSON shape (only the fields
 * describe() reads). Returns null when there is no input summary (ffmpeg could not open the file).
 */
export function parseFfmpegSummary(text: string): FfprobeOutput | null {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => /^Input #0, /.test(l));
  if (start < 0) return null;
  const formatName = /^Input #0, (.+), from '/.exec(lines[start]!)?.[1] ?? '';
  const out: FfprobeOutput = { format: { format_name: formatName, tags: {} }, streams: [] };
  let current: FfprobeStream | null = null;
  for (const line of lines.slice(start + 1)) {
    if (/^(Input #1|Output #|Stream mapping|At least one output)/.test(line)) break;
    const dur = /^\s+Duration: (\d+):(\d+):(\d+(?:\.\d+)?)/.exec(line);
    if (dur) {
      out.format!.duration = String(Number(dur[1]) * 3600 + Number(dur[2]) * 60 + Number(dur[3]));
      continue;
    }
    const st = /^\s+Stream #0:(\d+)[^:]*?(?:\((\w+)\))?: (Video|Audio|Subtitle|Data|Attachment): (\w+)(.*)$/.exec(line);
    if (st) {
      const [, index, lang, kind, codec, rest = ''] = st;
      current = {
        index: Number(index),
        codec_type: kind!.toLowerCase(),
        codec_name: codec,
        tags: lang ? { language: lang } : {},
      };
      if (kind === 'Video') {
        const size = /, (\d{1,5})x(\d{1,5})/.exec(rest);
        if (size) [current.width, current.height] = [Number(size[1]), Number(size[2])];
        const sar = /\[SAR (\d+):(\d+) DAR/.exec(rest);
        if (sar) current.sample_aspect_ratio = `${sar[1]}:${sar[2]}`;
        const fps = /, (\d+(?:\.\d+)?)(k?) fps/.exec(rest) ?? /, (\d+(?:\.\d+)?)(k?) tbr/.exec(rest);
        if (fps) current.avg_frame_rate = String(Number(fps[1]) * (fps[2] ? 1000 : 1));
        if (/\(attached pic\)/.test(rest)) current.disposition = { attached_pic: 1 };
      }
      out.streams!.push(current);
      continue;
    }
    const rot = /displaymatrix: rotation of (-?\d+(?:\.\d+)?) degrees/.exec(line);
    if (rot && current) {
      current.side_data_list = [{ rotation: Number(rot[1]) }];
      continue;
    }
    const tag = /^\s+(\w+)\s*: (.*)$/.exec(line);
    if (tag) {
      const [, key, value] = tag;
      if (current) current.tags![key!.toLowerCase()] = value!.trim();
      else out.format!.tags![key!.toLowerCase()] = value!.trim();
    }
  }
  return out;
}
