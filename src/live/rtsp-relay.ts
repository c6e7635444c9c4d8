/**
 * Plain RTSP sources through a relay of the server's own (issue 37). ffmpeg follows an RTSP
 * server's 3xx answer to any host it names, and sends its UDP packets (NAT punches, receiver
 * reports) to whatever `source=` the server puts in a SETUP answer's Transport header. So ffmpeg
 * connects to this relay on 127.0.0.1 instead, which connects to the checked address (DNS
 * pinning) and reads every message the server sends back:
 * - a 3xx answer is refused: the connection is cut before ffmpeg sees it, and the stream fails
 *   with the reason (the redirect is never followed);
 * - each Transport header's `source=` is set to the checked address, so that ffmpeg's UDP goes to
 *   the camera it was allowed to reach and nowhere else;
 * - interleaved RTP/RTCP (`$`-framed binary) and everything ffmpeg sends pass as they are.
 */
import { type Server, type Socket, connect, createServer } from 'node:net';

/** The largest message head taken from the server (RTSP heads are a few hundred bytes). */
const MAX_HEAD = 64 * 1024;
const CONNECT_TIMEOUT_MS = 10_000;

export class RtspRelay {
  /** Answers refused (3xx redirects). */
  refused = 0;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
    private readonly address: string,
    private readonly targetPort: number,
    private readonly onRefused: (reason: string) => void,
  ) {}

  /** A relay to `address`:`port` (the checked address of the source's host); `onRefused` hears why it cut a connection. */
  static start(address: string, port: number, onRefused: (reason: string) => void): Promise<RtspRelay> {
    return new Promise((resolve, reject) => {
      const server = createServer();
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const relay = new RtspRelay(server, (server.address() as { port: number }).port, address, port, onRefused);
        server.on('connection', (s) => relay.accept(s));
        server.off('error', reject);
        server.on('error', () => {});
        resolve(relay);
      });
    });
  }

  /** The URL ffmpeg opens: the source's, at the relay (credentials, path and query kept). */
  inputFor(url: URL): string {
    const at = new URL(url.toString());
    at.hostname = '127.0.0.1';
    at.port = String(this.port);
    return at.toString();
  }

  close(): void {
    this.server.close();
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }

  private track(s: Socket): void {
    this.sockets.add(s);
    s.once('close', () => this.sockets.delete(s));
    s.on('error', () => s.destroy());
  }

  private accept(client: Socket): void {
    this.track(client);
    client.pause();
    const upstream = connect({ host: this.address, port: this.targetPort });
    this.track(upstream);
    const timer = setTimeout(() => upstream.destroy(), CONNECT_TIMEOUT_MS);
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => {
      clearTimeout(timer);
      client.end();
    });
    upstream.once('connect', () => {
      clearTimeout(timer);
      client.pipe(upstream);
      client.resume();
    });
    let buf: Buffer = Buffer.alloc(0);
    upstream.on('data', (chunk: Buffer) => {
      buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
      for (;;) {
        if (!buf.length) return;
        if (buf[0] === 0x24) {
          // Interleaved: '$', channel, 16-bit length, data.
          if (buf.length < 4) return;
          const n = 4 + buf.readUInt16BE(2);
          if (buf.length < n) return;
          client.write(buf.subarray(0, n));
          buf = buf.subarray(n);
          continue;
        }
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) {
          if (buf.length > MAX_HEAD) upstream.destroy();
          return;
        }
        const head = buf.subarray(0, end).toString('latin1');
        const total = end + 4 + Number(/^content-length:\s*(\d+)/im.exec(head)?.[1] ?? 0);
        if (buf.length < total) return;
        const body = buf.subarray(end + 4, total);
        buf = buf.subarray(total);
        const status = /^RTSP\/\d\.\d (\d{3})/.exec(head);
        if (status?.[1]?.startsWith('3')) {
          this.refused++;
          this.onRefused(
            `the source answered with a redirect (RTSP ${status[1]}), which is not followed: a stream's RTSP server is only the checked one`,
          );
          upstream.destroy();
          client.destroy();
          return;
        }
        client.write(Buffer.concat([Buffer.from(`${this.pinTransport(head)}\r\n\r\n`, 'latin1'), body]));
      }
    });
  }

  /** The message head with each Transport header's `source=` set to the checked address. */
  private pinTransport(head: string): string {
    return head.replace(/^(transport:[ \t]*)(.*)$/gim, (_line, name: string, value: string) => {
      const specs = value.split(',').map((spec) => {
        const params = spec
          .trim()
          .split(';')
          .filter((p) => !/^source=/i.test(p.trim()));
        return [...params, `source=${this.address}`].join(';');
      });
      return name + specs.join(',');
    });
  }
}
