/**
 * RTSP cameras (rtsp://, rtsps://). TCP interleaving first (what cameras behind NAT need); a server
 * that gives nothing over TCP is tried next with ffmpeg's own order (UDP, then TCP), and back.
 */
import type { SourceKind } from './kind';

type Transport = 'tcp' | 'auto';

export const rtsp: SourceKind = {
  name: 'rtsp',
  claims: (source) => source?.url.protocol === 'rtsp:' || source?.url.protocol === 'rtsps:',
  prepare: async (c) => ({ args: (c.memo.transport ?? 'tcp') === 'tcp' ? ['-rtsp_transport', 'tcp'] : [] }),
  finished: async (c, exit) => {
    // Nothing came over this transport (e.g. a server without TCP interleaving): try the other.
    if (exit.frames === 0) c.memo.transport = ((c.memo.transport ?? 'tcp') as Transport) === 'tcp' ? 'auto' : 'tcp';
    return null;
  },
};
