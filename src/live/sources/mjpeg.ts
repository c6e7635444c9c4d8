/**
 * HTTP(S) MJPEG cameras: a multipart/x-mixed-replace answer of JPEG images. Their frames carry no
 * time: ffmpeg would count them at 25 per second whatever the camera sends, so the analysed rate
 * would be wrong; their arrival time is their time.
 */
import { pinnedFetch } from '../../ingest/url-guard';
import type { CheckedSource, SourceKind } from './kind';

export const mjpeg: SourceKind = {
  name: 'mjpeg',
  claims: (source) => !!source && /^https?:$/.test(source.url.protocol) && isMjpegSource(source),
  prepare: async () => ({ args: ['-reconnect', '0', '-use_wallclock_as_timestamps', '1'] }),
  finished: async () => null,
};

/**
 * Whether an http(s) source is an MJPEG camera (a multipart/x-mixed-replace answer) rather than a
 * live playlist: asked once per connection, at the checked address, before ffmpeg connects.
 */
export async function isMjpegSource({ url, address }: CheckedSource): Promise<boolean> {
  const ctrl = new AbortController();
  const timer = setTimeout(() => ctrl.abort(), 5000);
  try {
    const res = await pinnedFetch(url, address, { signal: ctrl.signal, redirect: 'manual' });
    const type = res.headers.get('content-type') ?? '';
    await res.body?.cancel().catch(() => {});
    return /^multipart\/x-mixed-replace/i.test(type);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
    ctrl.abort();
  }
}
