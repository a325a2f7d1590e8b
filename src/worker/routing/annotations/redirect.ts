// Redirects: `ssl-redirect`, `ssl-redirect-code`, `ssl-redirect-port` (HTTP to HTTPS for the
// hosts of an Ingress that have a certificate) and `request-redirect` / `request-redirect-code`
// (every request of the Ingress sent to another host, keeping path and query). The target is
// `host[:port]`, or `http://` / `https://` and `host[:port]` as the HAProxy Ingress Controller
// reads it; without a scheme it is http, as there.
import { parseHostPort } from './rewrite.js';
import { bad, ok, type Parsed } from './values.js';

export interface RequestRedirectTarget {
  readonly scheme: 'http' | 'https';
  /** `host` or `host:port`, lowercased. */
  readonly authority: string;
}

export const DEFAULT_REDIRECT_CODE = 302;

export function parseRedirectTarget(raw: string): Parsed<RequestRedirectTarget> {
  const other = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(raw);
  if (other !== null && other[1] !== 'http' && other[1] !== 'https') return bad(`has the scheme ${other[1]}; only http:// and https:// are allowed`);
  const match = /^(https?):\/\/(.*)$/.exec(raw);
  const scheme = match === null ? 'http' : (match[1] as 'http' | 'https');
  const rest = match === null ? raw : (match[2] as string);
  if (/^:?\d+$/.test(rest)) return bad('names a port alone; give host or host:port');
  if (rest.includes('/')) return bad('may not have a path; give host or host:port (the request path and query are kept)');
  const authority = parseHostPort(rest);
  return authority.ok ? ok(Object.freeze({ scheme, authority: authority.value })) : bad(authority.reason);
}

/** The HTTPS port of `https://` redirects. */
export function parsePort(raw: string): Parsed<number> {
  const port = Number(raw);
  return /^\d{1,5}$/.test(raw) && port >= 1 && port <= 65535 ? ok(port) : bad('must be a port number from 1 to 65535');
}
