/**
 * Decides whether the downloader may fetch a URL: http/https only, no credentials, and (unless
 * configured) no loopback, private, link-local or otherwise non-public address, checked on the
 * resolved addresses of every hop.
 *
 * The name is resolved once per hop, here, and the connection is made to the address that was
 * checked (pinnedFetch), keeping the original Host header and TLS server name: a DNS answer that
 * changes between the check and the connection (rebinding) cannot reach a private address.
 */
import { lookup } from 'node:dns/promises';
import { checkServerIdentity, type PeerCertificate } from 'node:tls';
import ipaddr from 'ipaddr.js';
import { badGateway, badRequest, forbidden } from '../errors';

export interface UrlPolicy {
  allowPrivate: boolean;
  /** Resolves a host name to its addresses (default: the system resolver); tests pass a stand-in. */
  resolve?: (host: string) => Promise<string[]>;
}

const systemResolve = async (host: string) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** Parses and checks the shape of a URL given by a client; throws 400 with what to fix. */
export function parseSourceUrl(raw: string): URL {
  if (typeof raw !== 'string' || raw.trim() === '')
    throw badRequest('url is required: the http(s) address of a video file');
  if (raw.length > 4096) throw badRequest('url is longer than 4096 characters');
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw badRequest('url is not a valid absolute URL (expected http:// or https://...)');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw badRequest(`url scheme "${url.protocol.replace(':', '')}" is not allowed; use http or https`);
  if (url.username || url.password) throw badRequest('url must not contain credentials (user:password@)');
  if (!url.hostname) throw badRequest('url has no host');
  return url;
}

/** True when an address is public unicast (what the downloader may reach by default). */
export function isPublicAddress(address: string): boolean {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.parse(address);
  } catch {
    return false;
  }
  if (ip.kind() === 'ipv6') {
    const v6 = ip as ipaddr.IPv6;
    // Addresses that embed an IPv4 one are judged by it.
    if (v6.isIPv4MappedAddress()) return isPublicAddress(v6.toIPv4Address().toString());
    // The whole ::/96 range (IPv4-compatible, deprecated: [::127.0.0.1], [::7f00:1]; and :: and
    // ::1) is judged by its last 32 bits, which some stacks route as that IPv4 address.
    const p = v6.parts;
    if (p.slice(0, 6).every((x) => x === 0))
      return isPublicAddress(`${p[6]! >> 8}.${p[6]! & 255}.${p[7]! >> 8}.${p[7]! & 255}`);
    const range = v6.range();
    if (range === 'rfc6052' || range === '6to4' || range === 'teredo') return false;
    return range === 'unicast';
  }
  return ip.range() === 'unicast';
}

/**
 * Resolves the URL's host and refuses it when any address is not public (unless allowed).
 * Returns the checked address to connect to (see pinnedFetch).
 */
export async function checkHost(url: URL, policy: UrlPolicy): Promise<string> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  if (ipaddr.isValid(host)) {
    addresses = [host];
  } else {
    try {
      addresses = await (policy.resolve ?? systemResolve)(host);
    } catch {
      throw badGateway(`the host "${host}" could not be resolved`);
    }
    if (addresses.length === 0) throw badGateway(`the host "${host}" has no address`);
  }
  if (!policy.allowPrivate) {
    const bad = addresses.find((a) => !isPublicAddress(a));
    if (bad !== undefined) {
      throw forbidden(
        `url points to a private, loopback or reserved address (${host}); the server refuses such URLs unless started with --allow-private-urls`,
      );
    }
  }
  return addresses[0]!;
}

/**
 * fetch() to an address checked by checkHost rather than to whatever the name resolves to now:
 * the URL's host is replaced by the address, the Host header keeps the name, and for https the
 * TLS server name (SNI) and the certificate check use the name too.
 */
export function pinnedFetch(url: URL, address: string, init: RequestInit): Promise<Response> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (ipaddr.isValid(host)) return fetch(url, init);
  const target = new URL(url);
  target.hostname = address.includes(':') ? `[${address}]` : address;
  const headers = new Headers(init.headers);
  headers.set('host', url.host);
  const tlsInit =
    url.protocol === 'https:'
      ? {
          tls: {
            serverName: host,
            checkServerIdentity: (_name: string, cert: PeerCertificate) => checkServerIdentity(host, cert),
          },
        }
      : {};
  return fetch(target, { ...init, headers, ...tlsInit } as RequestInit);
}
