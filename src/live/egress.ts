/**
 * Every request a pulled live source makes, checked like a download's (issue 37). ffmpeg follows
 * HTTP redirects and fetches HLS variant playlists, segments and keys by itself; it is started
 * with `http_proxy` naming one of these proxies (one per connection, on 127.0.0.1), so each of its
 * HTTP requests, and each TLS connection (https, rtmps, rtsps: ffmpeg's TLS goes through
 * `http_proxy` with CONNECT), reaches the network only through here:
 * - the host of each request is resolved here and checked with the downloader's rules
 *   (checkHost: public unicast addresses only), and the connection is made to the checked address
 *   (DNS pinning on every hop, so a name that changes its answer cannot reach a private address);
 * - `--allow-private-urls` lets a source reach a private address only at the host and port of the
 *   URL the user gave (its own camera or playlist server): a redirect, playlist or segment that
 *   names any other private host or port is refused, so allowing a first hop never means any hop
 *   anywhere;
 * - a refused request is answered 403 and never reaches its host; the owner hears of it (onRefused)
 *   and the stream fails with the reason.
 *
 * Plain HTTP requests are forwarded one per connection (`Connection: close` both ways): each
 * request is checked on its own, never carried over a connection opened for another host.
 */
import { type Server, type Socket, connect, createServer } from 'node:net';
import ipaddr from 'ipaddr.js';
import { ApiError } from '../errors';
import { checkHost } from '../ingest/url-guard';
import { RtspRelay } from './rtsp-relay';

/** What one connection of a pulled source opens, and how its requests leave the server. */
export interface GuardedConnection {
  /** The URL ffmpeg opens. */
  input: string;
  /** ffmpeg's `http_proxy` (the EgressProxy of http(s), rtsps and rtmps sources). */
  httpProxy?: string;
  close(): void;
}

/**
 * The guard of one connection of a source whose URL was checked (`address`: its host's checked
 * address): http(s), rtsps and rtmps through an EgressProxy (every hop checked and pinned); plain
 * RTSP through an RtspRelay to the checked address (no redirect followed, UDP pinned); plain RTMP
 * (which follows no redirect) connected to the checked address directly.
 */
export async function guardConnection(
  url: URL,
  address: string,
  allowPrivate: boolean,
  onRefused: (reason: string) => void,
): Promise<GuardedConnection> {
  if (url.protocol === 'rtsp:') {
    const relay = await RtspRelay.start(address, Number(url.port) || 554, onRefused);
    return { input: relay.inputFor(url), close: () => relay.close() };
  }
  if (url.protocol === 'rtmp:') return { input: pinnedUrl(url, address), close: () => {} };
  const proxy = await EgressProxy.start({ allowPrivate, source: url }, onRefused);
  return { input: url.toString(), httpProxy: proxy.url, close: () => proxy.close() };
}

/** A URL with its host replaced by the checked address (the name is not resolved again). */
function pinnedUrl(url: URL, address: string): string {
  const host = bare(url.hostname);
  if (ipaddr.isValid(host)) return url.toString();
  const target = new URL(url.toString());
  target.hostname = address.includes(':') ? `[${address}]` : address;
  return target.toString();
}

export interface EgressPolicy {
  /** --allow-private-urls: the given URL's own host and port may be private (only those). */
  allowPrivate: boolean;
  /** The source URL the user gave (its host and port are the only private ones allowed). */
  source: URL;
  /** Resolves a host name (default: the system resolver); tests pass a stand-in. */
  resolve?: (host: string) => Promise<string[]>;
}

/** The largest request head taken from ffmpeg (its requests are a few hundred bytes). */
const MAX_HEAD = 32 * 1024;
/** Longest wait for the upstream connection. */
const CONNECT_TIMEOUT_MS = 10_000;
/** Default ports of the schemes whose hosts come through here. */
const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443, 'rtmps:': 443, 'rtsps:': 322 };
/** Request headers that belong to the hop to the proxy (or to a connection kept open), not to the origin. */
const HOP_HEADERS = /^(proxy-connection|proxy-authorization|connection|keep-alive)$/i;

export class EgressProxy {
  /** Requests refused (none of them reached its host). */
  refused = 0;
  /** Requests let through. */
  passed = 0;
  private readonly sockets = new Set<Socket>();
  private readonly originHost: string;
  private readonly originPort: number;

  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly policy: EgressPolicy,
    private readonly onRefused: (reason: string) => void,
  ) {
    this.originHost = bare(policy.source.hostname).toLowerCase();
    this.originPort = Number(policy.source.port) || DEFAULT_PORTS[policy.source.protocol] || 0;
  }

  /** Starts a proxy for one connection of a source; `onRefused` hears each refused request's reason. */
  static start(policy: EgressPolicy, onRefused: (reason: string) => void): Promise<EgressProxy> {
    return new Promise((resolve, reject) => {
      const server = createServer();
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        const proxy = new EgressProxy(server, `http://127.0.0.1:${port}`, policy, onRefused);
        server.on('connection', (s) => proxy.accept(s));
        server.off('error', reject);
        server.on('error', () => {});
        resolve(proxy);
      });
    });
  }

  /** Stops listening and cuts every connection still open. */
  close(): void {
    this.server.close();
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }

  /**
   * The address to connect to for `host`:`port`, or an ApiError saying why not: a public address
   * always; a private one only for the source's own host and port when private URLs are allowed.
   */
  async check(host: string, port: number): Promise<string> {
    const name = bare(host).toLowerCase();
    const own = this.policy.allowPrivate && name === this.originHost && port === this.originPort;
    const target = new URL(`http://${name.includes(':') ? `[${name}]` : name}`);
    return checkHost(target, {
      allowPrivate: own,
      ...(this.policy.resolve && { resolve: this.policy.resolve }),
    });
  }

  private track(s: Socket): void {
    this.sockets.add(s);
    s.once('close', () => this.sockets.delete(s));
    s.on('error', () => s.destroy());
  }

  private accept(client: Socket): void {
    this.track(client);
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) {
        if (head.length > MAX_HEAD) answer(client, 431, 'request head too large');
        return;
      }
      client.off('data', onData);
      client.pause();
      void this.forward(client, head.subarray(0, end).toString('latin1'), head.subarray(end + 4));
    };
    client.on('data', onData);
  }

  private async forward(client: Socket, head: string, rest: Buffer): Promise<void> {
    const [line = '', ...headers] = head.split('\r\n');
    const m = /^([A-Z]+) (\S+) (HTTP\/1\.[01])$/.exec(line);
    if (!m) return answer(client, 400, 'not an HTTP/1 request');
    const [, method, target, version] = m as unknown as [string, string, string, string];
    let host: string;
    let port: number;
    let path = '';
    if (method === 'CONNECT') {
      const hp = /^(\[[0-9a-fA-F:.]+\]|[^:[\]\s]+):(\d{1,5})$/.exec(target);
      if (!hp) return answer(client, 400, 'CONNECT needs host:port');
      host = hp[1]!;
      port = Number(hp[2]);
    } else {
      let url: URL;
      try {
        url = new URL(target);
      } catch {
        return answer(client, 400, 'a proxy request names an absolute http:// URL');
      }
      if (url.protocol !== 'http:' || url.username || url.password)
        return answer(client, 400, 'a proxy request names an absolute http:// URL');
      host = url.hostname;
      port = Number(url.port) || 80;
      path = url.pathname + url.search;
    }
    let address: string;
    try {
      address = await this.check(host, port);
    } catch (e) {
      if (e instanceof ApiError && e.status === 403) {
        this.refused++;
        const reason = `a request of the source to ${host}:${port} was refused: ${
          this.policy.allowPrivate
            ? "a private, loopback or reserved address other than the source's own host and port"
            : 'a private, loopback or reserved address (refused unless the server is started with --allow-private-urls)'
        }`;
        this.onRefused(reason);
        return answer(client, 403, reason);
      }
      return answer(client, 502, e instanceof ApiError ? e.message : 'the host could not be checked');
    }
    this.passed++;
    const upstream = connect({ host: address, port });
    this.track(upstream);
    // One side gone: the other goes too (what was already written to ffmpeg still reaches it).
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.end());
    const timer = setTimeout(() => upstream.destroy(), CONNECT_TIMEOUT_MS);
    upstream.once('error', () => {
      clearTimeout(timer);
      if (!client.destroyed) answer(client, 502, 'the host could not be reached');
    });
    upstream.once('connect', () => {
      clearTimeout(timer);
      upstream.removeAllListeners('error');
      upstream.on('error', () => client.destroy());
      if (method === 'CONNECT') {
        client.write('HTTP/1.1 200 Connection established\r\n\r\n');
        if (rest.length) upstream.write(rest);
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
        return;
      }
      const kept = headers.filter((h) => !HOP_HEADERS.test(h.slice(0, h.indexOf(':')).trim()));
      upstream.write(`${method} ${path || '/'} ${version}\r\n${[...kept, 'Connection: close'].join('\r\n')}\r\n\r\n`);
      if (rest.length) upstream.write(rest);
      client.pipe(upstream);
      client.resume();
      closeAfterResponse(upstream, client);
    });
  }
}

/** Host names as the URL parser gives them for IPv6 (`[::1]`), without the brackets. */
function bare(host: string): string {
  return host.replace(/^\[|\]$/g, '');
}

/** An answer from the proxy itself, closing the connection. */
function answer(client: Socket, status: number, message: string): void {
  const body = `${message}\n`;
  const text = STATUS_TEXT[status] ?? 'Error';
  client.end(
    `HTTP/1.1 ${status} ${text}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  403: 'Forbidden',
  431: 'Request Header Fields Too Large',
  502: 'Bad Gateway',
};

/**
 * Passes the upstream answer to ffmpeg with its Connection header made `close` (so ffmpeg opens a
 * new, checked connection for its next request rather than reusing this one), then closes.
 */
function closeAfterResponse(upstream: Socket, client: Socket): void {
  let head = Buffer.alloc(0);
  const onData = (chunk: Buffer) => {
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf('\r\n\r\n');
    if (end < 0) {
      if (head.length > MAX_HEAD) {
        upstream.destroy();
        client.destroy();
      }
      return;
    }
    upstream.off('data', onData);
    const [status = '', ...headers] = head.subarray(0, end).toString('latin1').split('\r\n');
    const kept = headers.filter((h) => !/^(connection|keep-alive)$/i.test(h.slice(0, h.indexOf(':')).trim()));
    client.write(`${[status, ...kept, 'Connection: close'].join('\r\n')}\r\n\r\n`);
    const body = head.subarray(end + 4);
    if (body.length) client.write(body);
    upstream.pipe(client);
  };
  upstream.on('data', onData);
  upstream.once('end', () => client.end());
}
