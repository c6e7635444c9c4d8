/**
 * A misbehaving video source on 127.0.0.1, written on raw TCP (Bun.listen) so that it can do what
 * an HTTP library would correct: lie about Content-Length, cut the connection mid-body, stall.
 * Every route serves a real clip from the shared media folder (`<name>`):
 *
 *   /ok/<name>                 a correct response
 *   /trickle/<name>?bps=N      a correct response, N bytes a second (a kill lands mid-body)
 *   /chunked/<name>            a correct response, chunked (no Content-Length)
 *   /drop/<name>               chunked, cut off after 40 % of the body (no terminating chunk)
 *   /drop-cl/<name>            Content-Length, cut off after 40 % of the body
 *   /stall/<name>              Content-Length, 30 % of the body, then silence (until stop())
 *   /short/<name>              declares 64 kB more than it sends, then closes
 *   /long/<name>               declares half of what it sends (more bytes than declared)
 *   /loop                      302 to itself
 *   /html                      200 with an HTML error page
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Socket } from 'bun';
import { MEDIA_DIR } from '../helpers';

export interface RawOrigin {
  url: string;
  stop(): void;
}

type Conn = { buf: string; done: boolean; timers: ReturnType<typeof setInterval>[] };

export function startRawOrigin(): RawOrigin {
  const files = new Map<string, Uint8Array>();
  const file = (name: string) => {
    if (name.includes('/') || name.includes('..')) throw new Error('bad name');
    let b = files.get(name);
    if (!b) files.set(name, (b = new Uint8Array(readFileSync(join(MEDIA_DIR, name)))));
    return b;
  };
  const open = new Set<Socket<Conn>>();
  const head = (status: string, headers: Record<string, string | number>) =>
    `HTTP/1.1 ${status}\r\n` +
    Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('') +
    'Connection: close\r\n\r\n';

  /** Writes all of `data`, waiting for the socket to drain when it is full. */
  const writeAll = async (s: Socket<Conn>, data: Uint8Array | string) => {
    let bytes = typeof data === 'string' ? new TextEncoder().encode(data) : data;
    while (bytes.byteLength > 0) {
      if (s.data.done) return;
      const n = s.write(bytes);
      if (n < 0) return;
      bytes = bytes.subarray(n);
      if (bytes.byteLength > 0) await Bun.sleep(2);
    }
  };

  async function respond(s: Socket<Conn>, target: string): Promise<void> {
    const u = new URL(target, 'http://x');
    const [, route, name] = u.pathname.split('/');
    if (route === 'loop')
      return void (await writeAll(s, head('302 Found', { Location: '/loop', 'Content-Length': 0 })), s.end());
    if (route === 'html') {
      const page =
        '<!doctype html><html><body><h1>502 Bad Gateway</h1><p>The upstream server is down.</p></body></html>';
      await writeAll(s, head('200 OK', { 'Content-Type': 'text/html', 'Content-Length': page.length }) + page);
      return void s.end();
    }
    let body: Uint8Array;
    try {
      body = file(decodeURIComponent(name ?? ''));
    } catch {
      await writeAll(s, head('404 Not Found', { 'Content-Length': 0 }));
      return void s.end();
    }
    const mp4 = { 'Content-Type': 'video/mp4' };
    switch (route) {
      case 'ok':
        await writeAll(s, head('200 OK', { ...mp4, 'Content-Length': body.byteLength }));
        await writeAll(s, body);
        return void s.end();
      case 'trickle': {
        const bps = Number(u.searchParams.get('bps') ?? 100_000);
        await writeAll(s, head('200 OK', { ...mp4, 'Content-Length': body.byteLength }));
        const step = Math.max(1, Math.round(bps / 20));
        for (let off = 0; off < body.byteLength && !s.data.done; off += step) {
          await writeAll(s, body.subarray(off, off + step));
          await Bun.sleep(50);
        }
        return void s.end();
      }
      case 'chunked': {
        await writeAll(s, head('200 OK', { ...mp4, 'Transfer-Encoding': 'chunked' }));
        for (let off = 0; off < body.byteLength && !s.data.done; off += 32_768) {
          const c = body.subarray(off, off + 32_768);
          await writeAll(s, `${c.byteLength.toString(16)}\r\n`);
          await writeAll(s, c);
          await writeAll(s, '\r\n');
        }
        await writeAll(s, '0\r\n\r\n');
        return void s.end();
      }
      case 'drop': {
        await writeAll(s, head('200 OK', { ...mp4, 'Transfer-Encoding': 'chunked' }));
        const part = body.subarray(0, Math.floor(body.byteLength * 0.4));
        for (let off = 0; off < part.byteLength; off += 32_768) {
          const c = part.subarray(off, off + 32_768);
          await writeAll(s, `${c.byteLength.toString(16)}\r\n`);
          await writeAll(s, c);
          await writeAll(s, '\r\n');
        }
        await Bun.sleep(100);
        return void s.terminate();
      }
      case 'drop-cl':
        await writeAll(s, head('200 OK', { ...mp4, 'Content-Length': body.byteLength }));
        await writeAll(s, body.subarray(0, Math.floor(body.byteLength * 0.4)));
        await Bun.sleep(100);
        return void s.terminate();
      case 'stall':
        await writeAll(s, head('200 OK', { ...mp4, 'Content-Length': body.byteLength }));
        await writeAll(s, body.subarray(0, Math.floor(body.byteLength * 0.3)));
        return; // silence until the client gives up or stop()
      case 'short':
        await writeAll(s, head('200 OK', { ...mp4, 'Content-Length': body.byteLength + 65_536 }));
        await writeAll(s, body);
        return void s.end();
      case 'long':
        await writeAll(s, head('200 OK', { ...mp4, 'Content-Length': Math.floor(body.byteLength / 2) }));
        await writeAll(s, body);
        return void s.end();
    }
    await writeAll(s, head('404 Not Found', { 'Content-Length': 0 }));
    s.end();
  }

  const server = Bun.listen<Conn>({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      open(s) {
        s.data = { buf: '', done: false, timers: [] };
        open.add(s);
      },
      data(s, chunk) {
        if (s.data.buf.includes('\r\n\r\n')) return; // one request per connection
        s.data.buf += new TextDecoder().decode(chunk);
        if (!s.data.buf.includes('\r\n\r\n')) return;
        const target = s.data.buf.split(' ')[1] ?? '/';
        respond(s, target).catch(() => s.terminate());
      },
      close(s) {
        s.data.done = true;
        open.delete(s);
      },
      error(s) {
        s.data.done = true;
      },
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    stop() {
      for (const s of open) {
        s.data.done = true;
        s.terminate();
      }
      server.stop(true);
    },
  };
}
