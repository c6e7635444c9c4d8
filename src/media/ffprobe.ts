/**
 * Every ffprobe run goes through here. The bundled ffprobe crashes (SIGSEGV) on every MPEG-TS file
 * on some CPUs while the bundled ffmpeg reads them fine, and a crash of the tool must not turn into
 * "your file is unreadable" in whichever stage happens to ask: `probeStreams` (streams and format)
 * falls back to ffmpeg's input summary, and `runFfprobe` says when ffprobe crashed so that a caller
 * whose question only ffprobe answers (packet times) can go on without the answer.
 */
import { availableParallelism } from 'node:os';
import { runFfmpeg } from './ffmpeg';
import { ffmpegSummary, parseFfmpegSummary, type ToolRun } from './ffmpeg-probe';
import type { FfprobeOutput } from './ffprobe-output';

export interface ProbeTools {
  ffprobe: string;
  /** ffmpeg, to read the facts with when ffprobe crashes. */
  ffmpeg?: string;
}

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

export interface FfprobeRun extends ToolRun {
  /** Killed because it ran past `timeoutMs`. */
  timedOut: boolean;
}

/** One ffprobe run (`args` without the program), bounded in number and niced. */
export function runFfprobe(
  ffprobe: string,
  args: string[],
  opts: { signal?: AbortSignal; timeoutMs?: number } = {},
): Promise<FfprobeRun> {
  return probeSlot(async () => {
    const run = await runFfmpeg(ffprobe, args, {
      logLevel: 'none',
      stdout: 'pipe',
      signal: opts.signal,
      timeoutMs: opts.timeoutMs,
      nice: PROBE_NICE,
    });
    return { ...run, out: new TextDecoder().decode(run.out) };
  });
}

/** What `probeStreams` found, or why it found nothing. */
export type StreamsProbe =
  | { ok: true; parsed: FfprobeOutput; via: 'ffprobe' | 'ffmpeg' }
  /** `toolFault`: the tools crashed (the server's fault); otherwise the file could not be read. */
  | { ok: false; toolFault: boolean; reason: string };

/** The file's format and streams as ffprobe's JSON; from ffmpeg's input summary when ffprobe crashes. */
export async function probeStreams(tools: ProbeTools, file: string, signal?: AbortSignal): Promise<StreamsProbe> {
  const run = await runFfprobe(
    tools.ffprobe,
    ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', file],
    { signal },
  );
  if (run.signal && !signal?.aborted) return viaFfmpeg(tools, file, `ffprobe crashed (${run.signal})`, signal);
  if (run.code !== 0)
    return { ok: false, toolFault: false, reason: lastLine(run.err, file) || `ffprobe exited with ${run.code}` };
  try {
    return { ok: true, parsed: JSON.parse(run.out) as FfprobeOutput, via: 'ffprobe' };
  } catch {
    return { ok: false, toolFault: false, reason: 'ffprobe gave no description' };
  }
}

async function viaFfmpeg(tools: ProbeTools, file: string, why: string, signal?: AbortSignal): Promise<StreamsProbe> {
  if (!tools.ffmpeg) return { ok: false, toolFault: true, reason: why };
  const run = await ffmpegSummary(tools.ffmpeg, file, signal);
  if (run.signal) return { ok: false, toolFault: true, reason: `${why}; ffmpeg crashed too (${run.signal})` };
  const parsed = parseFfmpegSummary(run.err);
  if (!parsed)
    return { ok: false, toolFault: false, reason: lastLine(run.err, file) || `ffmpeg exited with ${run.code}` };
  return { ok: true, parsed, via: 'ffmpeg' };
}

/** The last line of a tool's complaint, with the server's path of the file left out. */
function lastLine(text: string, file: string): string {
  return text.trim().split('\n').pop()?.replaceAll(file, 'file').trim() ?? '';
}
