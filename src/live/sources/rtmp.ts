/** RTMP publishers (rtmp://, rtmps://): ffmpeg's defaults; a publisher that stops is waited for again. */
import type { SourceKind } from './kind';

export const rtmp: SourceKind = {
  name: 'rtmp',
  claims: (source) => source?.url.protocol === 'rtmp:' || source?.url.protocol === 'rtmps:',
  prepare: async () => ({ args: [] }),
  finished: async () => null,
};
