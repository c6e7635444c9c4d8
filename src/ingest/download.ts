/**
 * Streams a remote file to disk with Bun's fetch: never buffered whole in memory, hashed on the
 * way, with a size cap, connect and idle timeouts, and a bounded number of redirects, each hop
 * checked against the URL policy.
 */
import { ApiError, badGateway, forbidden, payloadTooLarge } from '../errors';
import { checkHost, parseSourceUrl, pinnedFetch, type UrlPolicy } from './url-guard';

export interface DownloadOptions {
  policy: UrlPolicy;
  maxBytes: number;
  connectTimeoutMs: number;
  idleTimeoutMs: number;
  maxRedirects: number;
  /** The whole download, every hop included, in ms (0 = none): a source cannot hold a slot for ever. @default 0 */
  deadlineMs?: number;
  /** Slowest average rate accepted, in bytes/s, judged over each idle-timeout window (0 = none). @default 0 */
  minRate?: number;
  signal?: AbortSignal;
  /** Called after each chunk; `total` is null when the source sent no Content-Length. */
  onProgress?: (received: number, total: number | null) => void;
  /** Called once the final hop answered 200, before the body is read. */
  onResponse?: (info: { url: URL; contentLength: number | null; contentType: string | null }) => void;
}

export interface DownloadResult {
  finalUrl: URL;
  bytes: number;
  sha256: string;
  contentType: string | null;
  /** A display name from Content-Disposition or the URL path (never a path). */
  fileName: string;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Longest stretch a download's read loop keeps the event loop to itself. */
const YIELD_EVERY_MS = 4;

export async function downloadToFile(start: URL, dest: string, opts: DownloadOptions): Promise<DownloadResult> {
  // One deadline over every hop: the idle timeout resets on each byte, so a source that drips
  // would otherwise hold the download (and its sockets) as long as it likes.
  const whole = new AbortController();
  const deadline = opts.deadlineMs
    ? setTimeout(
        () =>
          whole.abort(
            new ApiError(
              504,
              `the download took longer than ${opts.deadlineMs} ms (--download-deadline-ms); use a faster source`,
            ),
          ),
        opts.deadlineMs,
      )
    : null;
  const signal = opts.signal ? AbortSignal.any([opts.signal, whole.signal]) : whole.signal;
  try {
    return await download(start, dest, { ...opts, signal });
  } finally {
    if (deadline) clearTimeout(deadline);
  }
}

async function download(start: URL, dest: string, opts: DownloadOptions): Promise<DownloadResult> {
  let url = start;
  for (let hop = 0; ; hop++) {
    // Resolved once; the connection goes to this checked address (no second lookup to rebind).
    const address = await checkHost(url, opts.policy);
    const ctrl = new AbortController();
    const abortOuter = () => ctrl.abort(opts.signal?.reason);
    if (opts.signal?.aborted) throw abortedBy(opts.signal)!;
    opts.signal?.addEventListener('abort', abortOuter, { once: true });
    let timeoutReason: ApiError | null = null;
    let rateCheck: ReturnType<typeof setInterval> | null = null;
    const timeout = (ms: number, reason: ApiError) =>
      setTimeout(() => {
        timeoutReason = reason;
        ctrl.abort(reason);
      }, ms);
    let timer = timeout(
      opts.connectTimeoutMs,
      badGateway(`the source ${url.host} did not answer within ${opts.connectTimeoutMs} ms`),
    );
    try {
      let res: Response;
      try {
        res = await pinnedFetch(url, address, {
          redirect: 'manual',
          signal: ctrl.signal,
          // identity: Content-Length then counts the bytes we write.
          headers: {
            'user-agent': 'vidq/0.1 (+self-hosted video indexer)',
            accept: 'video/*, */*;q=0.5',
            'accept-encoding': 'identity',
          },
        });
      } catch (e) {
        throw timeoutReason ?? abortedBy(opts.signal) ?? badGateway(`could not fetch ${url.host}: ${netReason(e)}`);
      }
      clearTimeout(timer);

      if (REDIRECTS.has(res.status)) {
        await res.body?.cancel().catch(() => {});
        const location = res.headers.get('location');
        if (!location) throw badGateway(`the source answered ${res.status} without a Location`);
        if (hop >= opts.maxRedirects) throw badGateway(`too many redirects (more than ${opts.maxRedirects})`);
        let next: URL;
        try {
          next = new URL(location, url);
        } catch {
          throw badGateway('the source redirected to an invalid URL');
        }
        try {
          url = parseSourceUrl(next.toString());
        } catch (e) {
          // The caller's URL was fine; say that the source sent it elsewhere.
          throw e instanceof ApiError ? forbidden(`the source redirected to a URL that is refused: ${e.message}`) : e;
        }
        continue;
      }
      if (res.status !== 200) {
        await res.body?.cancel().catch(() => {});
        throw badGateway(`the source answered HTTP ${res.status} ${res.statusText}`.trim());
      }

      const declared = res.headers.get('content-length');
      const total = declared !== null && /^\d+$/.test(declared) ? Number(declared) : null;
      if (total !== null && total > opts.maxBytes) {
        await res.body?.cancel().catch(() => {});
        throw payloadTooLarge(`the file is ${total} bytes; the limit is ${opts.maxBytes} bytes`);
      }
      const contentType = res.headers.get('content-type');
      opts.onResponse?.({ url, contentLength: total, contentType });

      const hasher = new Bun.CryptoHasher('sha256');
      const sink = Bun.file(dest).writer({ highWaterMark: 1 << 20 });
      let received = 0;
      let lastYield = performance.now();
      try {
        if (!res.body) throw badGateway('the source sent no body');
        timer = timeout(opts.idleTimeoutMs, badGateway(`the source stalled: no data for ${opts.idleTimeoutMs} ms`));
        if (opts.minRate) {
          const windowMs = opts.idleTimeoutMs;
          const least = Math.ceil((opts.minRate * windowMs) / 1000);
          let atWindowStart = 0;
          rateCheck = setInterval(() => {
            const got = received - atWindowStart;
            atWindowStart = received;
            if (got < least) {
              timeoutReason = badGateway(
                `the source is too slow: ${got} bytes in ${windowMs} ms, below the minimum of ${opts.minRate} bytes/s (--min-download-rate)`,
              );
              ctrl.abort(timeoutReason);
            }
          }, windowMs);
        }
        const reader = res.body.getReader();
        for (;;) {
          let chunk: Awaited<ReturnType<typeof reader.read>>;
          try {
            chunk = await reader.read();
          } catch (e) {
            throw (
              timeoutReason ??
              abortedBy(opts.signal) ??
              badGateway(
                `the source closed the connection before the end of the file, after ${received}${total === null ? '' : ` of ${total}`} bytes (${netReason(e)}); try again later or check the URL`,
              )
            );
          }
          if (chunk.done) break;
          clearTimeout(timer);
          timer = timeout(opts.idleTimeoutMs, badGateway(`the source stalled: no data for ${opts.idleTimeoutMs} ms`));
          received += chunk.value.byteLength;
          if (received > opts.maxBytes) {
            ctrl.abort();
            throw payloadTooLarge(`the file is larger than the limit of ${opts.maxBytes} bytes`);
          }
          hasher.update(chunk.value);
          sink.write(chunk.value);
          opts.onProgress?.(received, total);
          // A fast source fills the body's buffer faster than it is read, and then every read
          // resolves at once, as a microtask: the loop would hash and write megabytes without
          // letting the event loop serve anything else. Give it a turn every so often.
          if (performance.now() - lastYield > YIELD_EVERY_MS) {
            await new Promise<void>((r) => setImmediate(r));
            lastYield = performance.now();
          }
        }
      } finally {
        clearTimeout(timer);
        if (rateCheck) clearInterval(rateCheck);
        await sink.end();
      }
      if (total !== null && received !== total)
        throw badGateway(
          `the source closed the connection before the end of the file, after ${received} of ${total} bytes`,
        );
      if (received === 0) throw new ApiError(422, 'the source sent an empty file');

      return {
        finalUrl: url,
        bytes: received,
        sha256: hasher.digest('hex'),
        contentType,
        fileName: fileNameOf(res.headers.get('content-disposition'), url),
      };
    } finally {
      clearTimeout(timer);
      if (rateCheck) clearInterval(rateCheck);
      opts.signal?.removeEventListener('abort', abortOuter);
    }
  }
}

/**
 * A network error in words: Bun's messages carry a code and advice meant for developers
 * ("pass `verbose: true`..."), which mean nothing to the person who gave the URL.
 */
export function netReason(e: unknown): string {
  const err = e as { code?: string; message?: string };
  switch (err?.code) {
    case 'ECONNRESET':
      return 'connection reset';
    case 'ECONNREFUSED':
    case 'ConnectionRefused':
      return 'connection refused';
    case 'ETIMEDOUT':
      return 'timed out';
    case 'ENOTFOUND':
      return 'unknown host';
  }
  const msg = String(err?.message ?? e)
    .replace(/\s*For more information, pass `verbose: true`.*$/s, '')
    .replace(/^[A-Z_]{4,}: /, '')
    .trim();
  return msg.replace(/\.$/, '') || 'network error';
}

function abortedBy(signal: AbortSignal | undefined): ApiError | null {
  if (!signal?.aborted) return null;
  return signal.reason instanceof ApiError ? signal.reason : new ApiError(499, 'the download was cancelled');
}

/** A display name: Content-Disposition's filename, else the last path segment, else "video". */
export function fileNameOf(disposition: string | null, url: URL): string {
  let name = '';
  if (disposition) {
    const star = /filename\*\s*=\s*(?:UTF-8|utf-8)''([^;]+)/.exec(disposition);
    const plain = /filename\s*=\s*"?([^";]+)"?/.exec(disposition);
    try {
      name = star ? decodeURIComponent(star[1]!) : (plain?.[1] ?? '');
    } catch {
      name = plain?.[1] ?? '';
    }
  }
  if (!name) {
    const seg = url.pathname.split('/').filter(Boolean).pop() ?? '';
    try {
      name = decodeURIComponent(seg);
    } catch {
      name = seg;
    }
  }
  return cleanFileName(name) || 'video';
}

/** Keeps a name displayable: no folders, no control characters (bidi controls included), at most 200 characters. */
export function cleanFileName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  return base
    .replace(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, '')
    .replace(/^\.+/, '')
    .trim()
    .slice(0, 200);
}
