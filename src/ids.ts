/** Opaque identifiers and secrets. */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const URL_SAFE = /^[A-Za-z0-9_-]+$/;

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * `length` random URL-safe characters (base64url of enough random bytes), never starting with "-":
 * one id or token in 64 would otherwise be read as an option on a command line
 * (`vidq mcp --token -x…` is refused as ambiguous).
 */
export function randomId(length: number): string {
  const bytes = randomBytes(Math.ceil((length * 3) / 4) + 1);
  const id = bytes.toString('base64url').slice(0, length);
  return id.startsWith('-') ? ALNUM[bytes[bytes.length - 1]! % ALNUM.length] + id.slice(1) : id;
}

/** index_id: 64 characters, so that it meets /inquire's 60-character minimum for `index`. */
export const newIndexId = () => randomId(64);
/** file_id / video_id / key / target_video. */
export const newVideoId = () => randomId(32);
export const newUserId = () => `u_${randomId(22)}`;
/**
 * API tokens: 60 URL-safe characters, the hosted API's length (its SDK cuts the first 60 characters
 * off a token+index concatenation). Tokens issued before were 64 long and keep working (see
 * accounts/project.ts). Only their SHA-256 is stored.
 */
export const newToken = () => randomId(60);

export const isIndexIdShape = (s: string) => s.length === 64 && URL_SAFE.test(s);
export const isVideoIdShape = (s: string) => s.length === 32 && URL_SAFE.test(s);

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Constant-time comparison of two hex digests of equal length. */
export function sameDigest(aHex: string, bHex: string): boolean {
  const a = Buffer.from(aHex, 'hex');
  const b = Buffer.from(bHex, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

export function hmac(secret: Buffer, data: string): string {
  return createHmac('sha256', secret).update(data).digest('base64url');
}

export function sameString(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}
