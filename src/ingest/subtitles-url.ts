/**
 * `subtitles_url` of POST /remote-upload: a .vtt or .srt file next to the video, fetched under the
 * same URL rules as the video (scheme, no credentials, private addresses refused unless allowed,
 * every redirect checked) and stored beside it, where the subtitles analyzer reads it.
 */
import { readFileSync, rmSync } from 'node:fs';
import { ApiError, badRequest, unprocessable } from '../errors';
import { downloadToFile, type DownloadOptions } from './download';
import { parseSourceUrl } from './url-guard';

/** Subtitle files are text: a feature film's is ~100 kB. */
export const MAX_SUBTITLES_BYTES = 5 * 1024 * 1024;

export interface SubtitlesSource {
  url: URL;
  ext: 'srt' | 'vtt';
}

/** The field checked before anything is fetched; null when absent. */
export function parseSubtitlesUrl(raw: unknown): SubtitlesSource | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== 'string')
    throw badRequest('subtitles_url must be a string: the http(s) address of a .vtt or .srt file');
  let url: URL;
  try {
    url = parseSourceUrl(raw);
  } catch (e) {
    if (e instanceof ApiError) throw new ApiError(e.status, `subtitles_url: ${e.message.replace(/^url /, '')}`);
    throw e;
  }
  const ext = /\.(srt|vtt)$/i.exec(url.pathname)?.[1]?.toLowerCase();
  if (ext !== 'srt' && ext !== 'vtt') throw badRequest('subtitles_url must name a .vtt or .srt file');
  return { url, ext };
}

/** Fetches the file to `dest` and checks that it holds cues; removes it when it does not. */
export async function fetchSubtitles(
  src: SubtitlesSource,
  dest: string,
  opts: Omit<DownloadOptions, 'maxBytes' | 'onProgress' | 'onResponse'>,
): Promise<void> {
  await downloadToFile(src.url, dest, { ...opts, maxBytes: MAX_SUBTITLES_BYTES });
  const head = readFileSync(dest)
    .subarray(0, 64 * 1024)
    .toString('utf8')
    .replace(/^\uFEFF/, '');
  const ok = src.ext === 'vtt' ? /^WEBVTT/.test(head) && head.includes('-->') : /\d+:\d\d:\d\d[,.]\d+\s*-->/.test(head);
  if (!ok) {
    rmSync(dest, { force: true });
    throw unprocessable(
      `subtitles_url did not return ${src.ext === 'vtt' ? 'a WebVTT file (WEBVTT header and cues)' : 'a SubRip file (numbered cues with times)'}`,
    );
  }
}
