/**
 * Perceptual hashes (dHash, 64 bits) of pictures: a picture scaled to 9×8 grey cells, one bit per
 * pair of neighbours (is the left one brighter). Scaling, recompression and small colour changes
 * keep most bits; a different picture flips about half. Used to find the stored sampled frames a
 * query image is a near-copy of.
 */
import type { Sharp } from '../analysis/assets/sharp';

/** Bits that may differ for two pictures to count as the same (of 64). */
export const SAME_PICTURE_BITS = 10;

export async function dHash(sharp: Sharp, input: Buffer | string): Promise<bigint> {
  const grey = await sharp(input, { limitInputPixels: 50_000_000 })
    .flatten({ background: '#000000' })
    .greyscale()
    .resize(9, 8, { fit: 'fill', kernel: 'lanczos3' })
    .raw()
    .toBuffer();
  let h = 0n;
  for (let y = 0; y < 8; y++)
    for (let x = 0; x < 8; x++) h = (h << 1n) | (grey[y * 9 + x]! > grey[y * 9 + x + 1]! ? 1n : 0n);
  return h;
}

export function hamming(a: bigint, b: bigint): number {
  let x = a ^ b;
  let n = 0;
  while (x) {
    x &= x - 1n;
    n++;
  }
  return n;
}
