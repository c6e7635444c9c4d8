/**
 * Every ffmpeg and ffprobe process starts here (as immich's media repository does): the argument
 * preamble, stopping on an abort, a one-line summary of what it said when it failed, and the list
 * of processes still running, so that a process that must go can kill them (an ffmpeg writing a
 * file would outlive it).
 */
import { setPriority } from 'node:os';

/**
 * ffmpeg's log level: `error` where only a failure matters, `info` where the caller reads ffmpeg's
 * input summary or progress lines from stderr; `none`: no preamble at all (ffprobe, which takes
 * its own `-v` and has no `-nostdin`).
 */
export type FfmpegLogLevel = 'error' | 'info' | 'none';

export interface FfmpegStart {
  /** `error` unless said. */
  logLevel?: FfmpegLogLevel;
  /** Whether stdout is read ('ignore' unless said). */
  stdout?: 'pipe' | 'ignore';
  /** Whether stderr is read ('pipe' unless said: the summary of a failure comes from it). */
  stderr?: 'pipe' | 'ignore';
  /** A further output pipe as fd 3 (a second stream out, e.g. the sound beside the pictures). */
  fd3?: boolean;
  /** Kills the process when aborted. */
  signal?: AbortSignal;
  /**
   * How an abort kills it: SIGTERM (the default) lets ffmpeg finish the file it writes; SIGKILL
   * where nothing of a stopped run is kept and finishing would only cost time.
   */
  killSignal?: 'SIGTERM' | 'SIGKILL';
  /** Killed (SIGTERM) when it runs longer than this; `timedOut` says so. */
  timeoutMs?: number;
  /** Niceness set on the process (short CPU bursts that must not take the server's cores). */
  nice?: number;
  /** Its environment (default: the server's). */
  env?: Record<string, string | undefined>;
}

/** One started process of the runner. */
export interface FfmpegProcess {
  readonly pid: number;
  /** Its stdout (an empty stream when not piped). */
  readonly stdout: ReadableStream<Uint8Array>;
  /** Its stderr as a stream, for callers that read it line by line (empty when not piped). */
  readonly stderr: ReadableStream<Uint8Array>;
  /** fd 3, when asked for with `fd3`. */
  readonly fd3: number | null;
  /** The exit code (128 + n when killed by signal n). */
  readonly exited: Promise<number>;
  readonly exitCode: number | null;
  /** Set when it was killed by a signal, e.g. "SIGSEGV". */
  readonly signalCode: string | null;
  /** Killed because it ran past `timeoutMs`. */
  readonly timedOut: boolean;
  /** All of stderr as text (read once, whoever asks first; not with `stderr` read as a stream). */
  errText(): Promise<string>;
  /** Kills it when it still runs (a consumer that stops reading early, an abort). */
  stop(signal?: 'SIGTERM' | 'SIGKILL'): void;
}

/** The options every ffmpeg run starts with: no banner, never reads the terminal, a set log level. */
export function ffmpegPreamble(level: Exclude<FfmpegLogLevel, 'none'> = 'error'): string[] {
  return ['-hide_banner', '-nostdin', '-loglevel', level];
}

/** Processes started here that have not exited yet. */
const running = new Set<FfmpegProcess>();

/** Starts `bin` (ffmpeg or ffprobe) with the preamble and `args`. */
export function startFfmpeg(bin: string, args: string[], o: FfmpegStart = {}): FfmpegProcess {
  const level = o.logLevel ?? 'error';
  const out = o.stdout ?? 'ignore';
  const err = o.stderr ?? 'pipe';
  const proc = Bun.spawn([bin, ...(level === 'none' ? [] : ffmpegPreamble(level)), ...args], {
    stdio: ['ignore', out, err, ...(o.fd3 ? (['pipe'] as const) : [])],
    signal: o.signal,
    killSignal: o.killSignal ?? 'SIGTERM',
    ...(o.env && { env: o.env }),
  });
  if (o.nice)
    try {
      setPriority(proc.pid, o.nice);
    } catch {
      /* already gone, or not permitted */
    }
  const kill = (signal: 'SIGTERM' | 'SIGKILL') => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    try {
      proc.kill(signal);
    } catch {
      /* already gone */
    }
  };
  let timedOut = false;
  const timer = o.timeoutMs
    ? setTimeout(() => {
        timedOut = true;
        kill('SIGTERM');
      }, o.timeoutMs)
    : undefined;
  const stdout = out === 'pipe' ? (proc.stdout as ReadableStream<Uint8Array>) : emptyStream();
  const stderr = err === 'pipe' ? (proc.stderr as ReadableStream<Uint8Array>) : emptyStream();
  let errText: Promise<string> | null = null;
  const handle: FfmpegProcess = {
    pid: proc.pid,
    stdout,
    stderr,
    fd3: o.fd3 && typeof proc.stdio[3] === 'number' ? proc.stdio[3] : null,
    exited: proc.exited,
    get exitCode() {
      return proc.exitCode;
    },
    get signalCode() {
      return proc.signalCode == null ? null : String(proc.signalCode);
    },
    get timedOut() {
      return timedOut;
    },
    errText() {
      errText ??= new Response(stderr).text().catch(() => '');
      return errText;
    },
    stop: (signal = 'SIGTERM') => kill(signal),
  };
  running.add(handle);
  void proc.exited.then(() => {
    clearTimeout(timer);
    running.delete(handle);
  });
  return handle;
}

/** What a finished run gave. */
export interface FfmpegRun {
  code: number;
  /** stdout, when asked for (`stdout: 'pipe'`); empty otherwise. */
  out: Uint8Array;
  err: string;
  /** Set when the process was killed by a signal (a crash, or a stop), e.g. "SIGSEGV"; not for a timeout. */
  signal: string | null;
  timedOut: boolean;
}

/** Runs `bin` to its end, collecting stdout (when piped) and stderr. */
export async function runFfmpeg(bin: string, args: string[], o: FfmpegStart = {}): Promise<FfmpegRun> {
  const p = startFfmpeg(bin, args, o);
  const [out, err, code] = await Promise.all([new Response(p.stdout).bytes(), p.errText(), p.exited]);
  return { code, out, err, signal: p.timedOut ? null : crashSignal(p.signalCode, code), timedOut: p.timedOut };
}

/** A process killed by a signal: Bun names it, or the exit code is 128 + the signal's number. */
export function crashSignal(signalCode: string | number | null | undefined, code: number): string | null {
  if (signalCode) return String(signalCode);
  if (code > 128 && code < 160) return `signal ${code - 128}`;
  return null;
}

/**
 * Why ffmpeg failed, in one line: the last thing it said, without its "[demuxer @ 0x…]" prefix,
 * at most 200 characters; `fallback` when it said nothing.
 */
export function summarizeFfmpegError(stderr: string, fallback = 'unknown decoder error'): string {
  const line = stderr.trim().split('\n').filter(Boolean).pop();
  if (!line) return fallback;
  return line.replace(/^\[[^\]]+\]\s*/, '').slice(0, 200);
}

/** SIGKILL to every process started here that still runs (a worker that must exit now). */
export function killRunningFfmpeg(): number {
  let n = 0;
  for (const p of running) {
    if (p.exitCode === null && p.signalCode === null) n++;
    p.stop('SIGKILL');
  }
  return n;
}

const emptyStream = () =>
  new ReadableStream<Uint8Array>({
    start(c) {
      c.close();
    },
  });
