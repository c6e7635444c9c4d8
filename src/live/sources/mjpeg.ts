/**
 * HTTP(S) MJPEG cameras: a multipart/x-mixed-replace answer of JPEG images. Their frames carry no
 * time: ffmpeg would count them at 25 per second whatever the camera sends, so the analysed rate
 * would be wrong; their arrival time is their time.
 */
import type { PinnedInput, SourceKind } from './kind';

export const mjpeg: SourceKind = {
  name: 'mjpeg',
  claims: (url, pinned) => !!pinned && /^https?:$/.test(url?.protocol ?? '') && isMjpegSource(pinned),
  prepare: async () => ({ args: ['-reconnect', '0', '-use_wallclock_as_timestamps', '1'] }),
  finished: async () => null,
};

/**
 * Whether an http(s) source is an MJPEG camera (a multipart/x-mixed-replace answer) rather than a
 * live playlist: asked once per connection, at the pinned address, before ffmpeg connects.
 */
export async function isMjpegSource({ input, headers }: PinnedInput): Promise<boolean> {
  const ctrl = new AbortController();
  const timer = setTimeout(() => ctrl.abort(), 5000);
  try {
    const host = headers ? /^Host: (.+)\r\n$/.exec(headers)?.[1] : undefined;
    const res = await fetch(input, {
      signal: ctrl.signal,
      redirect: 'manual',
      ...(host && { headers: { host } }),
    });
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
