/**
 * Which ffmpeg and ffprobe decode what users send (uploads and live sources are untrusted input),
 * and whether they are of a maintained line. The npm package's static ffmpeg is a 2018 snapshot
 * (N-47683, libavformat 58.24) with many security fixes missing; FFmpeg 5.0 and newer (libavformat
 * 59+, e.g. Debian 12's security-maintained 5.1) count as maintained. A system ffmpeg on PATH is
 * used before the npm one (binaries.ts), so installing one is the fix; until then /health,
 * `vidq --version` and the start-up log say so.
 */
import { type Binaries, resolveBinaries } from './binaries';
import { runFfmpeg } from './ffmpeg';

/** The oldest libavformat major of a maintained FFmpeg line (59: FFmpeg 5.0, January 2022). */
export const MAINTAINED_LIBAVFORMAT_MAJOR = 59;

export interface ToolVersion {
  /** As the tool states it, e.g. "5.1.9-0+deb12u1" or "N-47683-g0e8eb07980-static". */
  version: string;
  /** e.g. "58.24.101"; null when the tool did not say. */
  libavformat: string | null;
}

export interface DecoderInfo {
  ffmpeg: ToolVersion & { path: string };
  ffprobe: ToolVersion & { path: string };
  /** Where they came from: env (VIDQ_FFMPEG/VIDQ_FFPROBE), system (PATH), embedded or npm. */
  source: Binaries['source'];
  /** Both of a maintained FFmpeg line (libavformat 59 or newer). */
  maintained: boolean;
  /** Set when not maintained: what is in use and what to do. */
  warning?: string;
}

/** `ffmpeg -version`'s first line and its libavformat line. */
export function parseVersion(text: string): ToolVersion {
  const version = /^ff(?:mpeg|probe) version (\S+)/m.exec(text)?.[1] ?? 'unknown';
  const lavf = /^libavformat\s+(\d+)\.\s*(\d+)\.\s*(\d+)/m.exec(text);
  return { version, libavformat: lavf ? `${lavf[1]}.${lavf[2]}.${lavf[3]}` : null };
}

export function isMaintained(v: ToolVersion): boolean {
  return v.libavformat !== null && Number(v.libavformat.split('.')[0]) >= MAINTAINED_LIBAVFORMAT_MAJOR;
}

async function versionOf(bin: string): Promise<ToolVersion> {
  const r = await runFfmpeg(bin, ['-hide_banner', '-version'], { logLevel: 'none', stdout: 'pipe', timeoutMs: 10_000 });
  return parseVersion(new TextDecoder().decode(r.out));
}

/** What decodes here; `bins` as binaries.ts finds them. */
export async function describeDecoder(bins: Binaries): Promise<DecoderInfo> {
  const [ffmpeg, ffprobe] = await Promise.all([versionOf(bins.ffmpeg), versionOf(bins.ffprobe)]);
  const old = [
    ...(isMaintained(ffmpeg) ? [] : [`ffmpeg ${ffmpeg.version} (libavformat ${ffmpeg.libavformat ?? 'unknown'})`]),
    ...(isMaintained(ffprobe) ? [] : [`ffprobe ${ffprobe.version} (libavformat ${ffprobe.libavformat ?? 'unknown'})`]),
  ];
  return {
    ffmpeg: { ...ffmpeg, path: bins.ffmpeg },
    ffprobe: { ...ffprobe, path: bins.ffprobe },
    source: bins.source,
    maintained: old.length === 0,
    ...(old.length && {
      warning: `uploads and live sources are decoded by ${old.join(' and ')}, older than FFmpeg 5.0 and without its security fixes; install a maintained ffmpeg (Debian/Ubuntu: apt-get install ffmpeg; a system ffmpeg and ffprobe on PATH are used first) or set VIDQ_FFMPEG and VIDQ_FFPROBE`,
    }),
  };
}

const described = new Map<string, Promise<DecoderInfo>>();

/** describeDecoder of the binaries in use, asked once per process. */
export function decoderInfo(binDir: string): Promise<DecoderInfo> {
  let p = described.get(binDir);
  if (!p) {
    p = resolveBinaries(binDir).then(describeDecoder);
    described.set(binDir, p);
  }
  return p;
}

/** What /health shows (no paths: it answers without a token). */
export function decoderHealth(d: DecoderInfo) {
  return {
    ffmpeg: d.ffmpeg.version,
    ffprobe: d.ffprobe.version,
    libavformat: { ffmpeg: d.ffmpeg.libavformat, ffprobe: d.ffprobe.libavformat },
    source: d.source,
    maintained: d.maintained,
    ...(d.warning && { warning: d.warning }),
  };
}

/** One line for `vidq --version` and the start-up output. */
export function decoderLine(d: DecoderInfo): string {
  const lavf = (v: ToolVersion) => (v.libavformat ? ` (libavformat ${v.libavformat})` : '');
  return `decoder: ffmpeg ${d.ffmpeg.version}${lavf(d.ffmpeg)}, ffprobe ${d.ffprobe.version}${lavf(d.ffprobe)}; ${d.source === 'system' ? "the system's, on PATH" : d.source === 'env' ? 'VIDQ_FFMPEG / VIDQ_FFPROBE' : d.source === 'npm' ? "the npm packages' static builds" : 'the copies embedded in the executable'}`;
}
