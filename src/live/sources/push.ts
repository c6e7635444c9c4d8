/**
 * Pushed frames (`POST /stream`): a client sends PNG or JPEG images of its camera, about one a
 * second, possibly out of order. Nothing to connect to: each image is decoded and kept as a JPEG
 * of at most 720 lines, timed by the client.
 */
import { loadSharp } from '../../analysis/assets/sharp';
import { badRequest } from '../../errors';
import type { SourceKind } from './kind';

/** Decoded pushed frames are at most this many lines high (like the pulled ones). */
const MAX_FRAME_HEIGHT = 720;

export const push: SourceKind = {
  name: 'push',
  claims: (source) => source === null,
  prepare: async () => ({ ended: 'a pushed stream has nothing to connect to' }),
  finished: async () => null,
};

/** A pushed image as the JPEG kept for the window, with its size; 400 when it is not an image. */
export async function decodePushedFrame(
  assetsDir: string,
  bytes: Buffer,
): Promise<{ jpeg: Buffer; width: number; height: number }> {
  try {
    // Loaded on first use: in the executable libvips must be extracted first.
    const sharp = await loadSharp(assetsDir);
    const out = await sharp(bytes, { limitInputPixels: 40_000_000 })
      .resize({ height: MAX_FRAME_HEIGHT, withoutEnlargement: true })
      .jpeg({ quality: 80 })
      .toBuffer({ resolveWithObject: true });
    return { jpeg: out.data, width: out.info.width, height: out.info.height };
  } catch {
    throw badRequest('base64_image is not a readable image (send a PNG or JPEG encoded as base64)');
  }
}
