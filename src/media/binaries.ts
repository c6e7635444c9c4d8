/**
 * Finds ffmpeg and ffprobe. Order: VIDQ_FFMPEG / VIDQ_FFPROBE, then the system's (PATH), then the
 * copies embedded in the compiled executable (extracted once to DATA_DIR/bin), then the npm
 * packages' static binaries in node_modules.
 */
import { toolPathsFromEnv } from '../config';
import { chmodSync, existsSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { EMBEDDED_BINARIES } from './embedded.generated';

export interface Binaries {
  ffmpeg: string;
  ffprobe: string;
  /** Where they came from: env, system, embedded or npm. */
  source: 'env' | 'system' | 'embedded' | 'npm';
}

let cached: Binaries | undefined;

export async function resolveBinaries(binDir: string): Promise<Binaries> {
  if (cached) return cached;
  cached = await find(binDir);
  return cached;
}

async function find(binDir: string): Promise<Binaries> {
  const fromEnv = toolPathsFromEnv();
  if (fromEnv.ffmpeg && fromEnv.ffprobe) return { ffmpeg: fromEnv.ffmpeg, ffprobe: fromEnv.ffprobe, source: 'env' };

  const sysFfmpeg = Bun.which('ffmpeg');
  const sysFfprobe = Bun.which('ffprobe');
  if (sysFfmpeg && sysFfprobe && !fromEnv.ignoreSystem)
    return { ffmpeg: sysFfmpeg, ffprobe: sysFfprobe, source: 'system' };

  if (EMBEDDED_BINARIES) {
    mkdirSync(binDir, { recursive: true, mode: 0o700 });
    return {
      ffmpeg: await extract(EMBEDDED_BINARIES.ffmpeg, join(binDir, 'ffmpeg')),
      ffprobe: await extract(EMBEDDED_BINARIES.ffprobe, join(binDir, 'ffprobe')),
      source: 'embedded',
    };
  }

  const require = createRequire(import.meta.url);
  try {
    const ffmpeg = (require('@ffmpeg-installer/ffmpeg') as { path: string }).path;
    const ffprobe = (require('@ffprobe-installer/ffprobe') as { path: string }).path;
    return { ffmpeg, ffprobe, source: 'npm' };
  } catch (e) {
    throw new Error(
      `ffmpeg/ffprobe not found: install them on PATH, set VIDQ_FFMPEG and VIDQ_FFPROBE, or run npm ci (${(e as Error).message})`,
    );
  }
}

/** Copies an embedded binary out of the executable once (same size = already there). */
async function extract(embeddedPath: string, target: string): Promise<string> {
  const src = Bun.file(embeddedPath);
  if (existsSync(target) && statSync(target).size === src.size) return target;
  const tmp = `${target}.${process.pid}.tmp`;
  await Bun.write(tmp, src);
  chmodSync(tmp, 0o755);
  renameSync(tmp, target);
  return target;
}
