/**
 * HLS playlists over http(s). A live playlist is read as it grows. A playlist that ends
 * (#EXT-X-ENDLIST) ends the stream once ffmpeg has read it to its end: connecting again would
 * replay it from its start as new live time. A playlist that had ended before the stream ever went
 * live (a recording) is read once at its own pace (`-re`), so its stream time is its play time.
 */
import { pinnedFetch } from '../../ingest/url-guard';
import type { CheckedSource, Connection, SourceKind } from './kind';

/** The reason an ended stream shows. */
export const PLAYLIST_ENDED = 'the source ended: its playlist has an end (#EXT-X-ENDLIST)';
/** Bytes of a playlist read at most (a media playlist of a day of 1 s segments is about 2 MB). */
const MAX_PLAYLIST_BYTES = 4 << 20;

export const hls: SourceKind = {
  name: 'hls',
  // After mjpeg in the table: any other http(s) source is taken as a playlist.
  claims: (source) => source?.url.protocol === 'http:' || source?.url.protocol === 'https:',
  prepare: async (c) => {
    const ended = await playlistHasEnded(c);
    if (ended && c.wasLive) return { ended: PLAYLIST_ENDED };
    return { args: ['-reconnect', '0', ...(ended ? ['-re'] : [])] };
  },
  finished: async (c: Connection, exit) => (exit.code === 0 && (await playlistHasEnded(c)) ? PLAYLIST_ENDED : null),
};

/**
 * Whether the playlist (or, for a multivariant playlist, its first variant on the same host) has
 * #EXT-X-ENDLIST. Read at the checked address; false when it cannot be read (the connection's
 * own failure says more).
 */
export async function playlistHasEnded({ url, address }: CheckedSource): Promise<boolean> {
  const text = await readPlaylist(url, address);
  if (text === null) return false;
  if (/^#EXT-X-ENDLIST\b/m.test(text)) return true;
  if (!/^#EXT-X-STREAM-INF\b/m.test(text)) return false;
  const variant = text
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l && !l.startsWith('#'));
  if (!variant) return false;
  let next: URL;
  try {
    next = new URL(variant, url);
  } catch {
    return false;
  }
  // Only where the checked address answers (another host would need its own egress check).
  if (next.origin !== url.origin) return false;
  const inner = await readPlaylist(next, address);
  return inner !== null && /^#EXT-X-ENDLIST\b/m.test(inner);
}

async function readPlaylist(url: URL, address: string): Promise<string | null> {
  const ctrl = new AbortController();
  const timer = setTimeout(() => ctrl.abort(), 5000);
  try {
    const res = await pinnedFetch(url, address, { signal: ctrl.signal, redirect: 'manual' });
    if (!res.ok || !res.body) {
      await res.body?.cancel().catch(() => {});
      return null;
    }
    const parts: Uint8Array[] = [];
    let size = 0;
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      parts.push(chunk);
      size += chunk.length;
      if (size > MAX_PLAYLIST_BYTES) return null;
    }
    return Buffer.concat(parts).toString('utf8');
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
    ctrl.abort();
  }
}
