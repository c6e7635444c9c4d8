/**
 * The Host header, checked before anything else reads the request: a malformed one is 400 (it
 * would make `new URL(request.url)` throw later), a name that is not configured is 421. Links are
 * built from --public-url, or from the checked Host — never from an unchecked one.
 */
import { allowedHostNames, type Config } from '../config';
import { ApiError, badRequest } from '../errors';

/** A DNS name or IPv4 address (underscores allowed: container names have them), or a bracketed IPv6 address, then an optional port. */
const HOST_RE =
  /^(\[[0-9a-f:.]{2,45}\]|[a-z0-9_](?:[a-z0-9_-]{0,62}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,62}[a-z0-9_])?)*\.?)(?::(\d{1,5}))?$/i;

export interface HostCheck {
  /** Throws 400 (malformed) or 421 (not an allowed name); returns the origin to build links from. */
  check(request: Request): string;
}

export function hostCheck(config: Pick<Config, 'allowedHosts' | 'host' | 'publicUrl'>): HostCheck {
  const allowed = allowedHostNames(config);
  const fixed = config.publicUrl ? config.publicUrl.replace(/\/$/, '') : null;
  return {
    check(request) {
      const raw = request.headers.get('host');
      if (raw === null || raw.length > 300) throw badRequest('the Host header is missing or malformed');
      const m = HOST_RE.exec(raw);
      if (!m || (m[2] !== undefined && Number(m[2]) > 65535)) throw badRequest('the Host header is malformed');
      const name = m[1]!
        .toLowerCase()
        .replace(/^\[|\]$/g, '')
        .replace(/\.$/, '');
      if (allowed && !allowed.has(name)) {
        throw new ApiError(
          421,
          `this server does not answer to the host name "${name}"; add it to --allowed-hosts (VIDQ_ALLOWED_HOSTS) to allow it`,
        );
      }
      return fixed ?? `http://${raw.toLowerCase()}`;
    },
  };
}

/**
 * The path of a request, for logs: no query string (it may carry a token or a link signature), and
 * no URL parsing, which a malformed Host would make throw.
 */
export function pathOf(request: Request): string {
  const url = request.url;
  const start = url.indexOf('/', url.indexOf('//') + 2);
  if (start < 0) return '/';
  const end = url.slice(start).search(/[?#]/);
  return (end < 0 ? url.slice(start) : url.slice(start, start + end)).slice(0, 300);
}
