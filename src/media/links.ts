/**
 * Signed, expiring media links: `/media/<file_id>?expires=<unix s>&sig=<hmac>`. They let a browser
 * <video> element stream a file without exposing the token in the page.
 */
import { hmac, sameString } from '../ids';

export class MediaLinks {
  constructor(
    private readonly secret: Buffer,
    private readonly ttlSec: number,
  ) {}

  /** Path with signature for `/media/<id>` (or a sub-resource like `/media/<id>/frames/..`). */
  sign(path: string, nowMs = Date.now()): string {
    // Round expiry up (to the minute for the usual long lifetimes) so repeated listings give the
    // same, cacheable URL; at most a tenth of the lifetime, so a short --media-link-ttl-sec holds.
    const step = Math.min(60, Math.max(1, Math.floor(this.ttlSec / 10)));
    const expires = Math.ceil((nowMs / 1000 + this.ttlSec) / step) * step;
    return `${path}?expires=${expires}&sig=${hmac(this.secret, `${path}\n${expires}`)}`;
  }

  verify(
    path: string,
    expires: string | undefined,
    sig: string | undefined,
    nowMs = Date.now(),
  ): 'ok' | 'expired' | 'invalid' {
    if (!expires || !sig || !/^\d{1,12}$/.test(expires)) return 'invalid';
    if (!sameString(hmac(this.secret, `${path}\n${expires}`), sig)) return 'invalid';
    return Number(expires) * 1000 < nowMs ? 'expired' : 'ok';
  }
}
