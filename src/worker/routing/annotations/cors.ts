// CORS (`cors-enable`, `cors-allow-origin`, `cors-allow-methods`, `cors-allow-headers`,
// `cors-allow-credentials`, `cors-max-age`), with the HAProxy Ingress Controller's defaults. A
// request with an allowed Origin gets the Access-Control-* headers on its response; a preflight
// (OPTIONS with Origin and Access-Control-Request-Method) is answered 204 by HAProxy itself.
// The origin is `*`, one origin (matched exactly), or a regular expression (matched by PCRE).
import type { CorsOrigin } from '../model.js';
import { parseRegex } from './pcre.js';
import { bad, isHeaderName, ok, parseTime, type Parsed } from './values.js';

export const DEFAULT_CORS_MAX_AGE_MS = 5000;
/** The methods the IC accepts in `cors-allow-methods`. */
const METHODS = new Set(['GET', 'POST', 'PUT', 'DELETE', 'HEAD', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH']);
const ORIGIN = /^https?:\/\/[a-z0-9]([-a-z0-9.]*[a-z0-9])?(:\d{1,5})?$/;
const MAX_LIST = 64;

export function parseCorsOrigin(raw: string): Parsed<CorsOrigin> {
  if (raw === '*') return ok({ match: 'any' });
  if (ORIGIN.test(raw)) return ok(Object.freeze({ match: 'exact', origin: raw }));
  if (raw.startsWith('-')) return bad('may not start with "-"');
  const regex = parseRegex(raw);
  if (!regex.ok) return bad(`is neither *, an origin (scheme://host[:port]) nor a usable regular expression: it ${regex.reason}`);
  return ok(Object.freeze({ match: 'regex', pattern: regex.value.pattern }));
}

/** `*`, or methods comma-separated; written `GET, POST`. */
export function parseCorsMethods(raw: string): Parsed<string> {
  if (raw.trim() === '*') return ok('*');
  const methods = splitList(raw).map((m) => m.toUpperCase());
  if (methods.length === 0 || methods.length > MAX_LIST) return bad('must be * or a comma-separated list of HTTP methods');
  for (const method of methods) if (!METHODS.has(method)) return bad(`names ${JSON.stringify(method)}, which is not one of ${[...METHODS].join(', ')}`);
  return ok([...new Set(methods)].join(', '));
}

/** `*`, or header names comma-separated; written `X-One, X-Two`. */
export function parseCorsHeaders(raw: string): Parsed<string> {
  if (raw.trim() === '*') return ok('*');
  const headers = splitList(raw);
  if (headers.length === 0 || headers.length > MAX_LIST) return bad('must be * or a comma-separated list of header names');
  for (const header of headers) if (!isHeaderName(header)) return bad(`names ${JSON.stringify(header)}, which is not a header name`);
  return ok([...new Set(headers)].join(', '));
}

/** Whole seconds for Access-Control-Max-Age (the IC takes a time and drops the milliseconds). */
export function parseCorsMaxAge(raw: string): Parsed<number> {
  const ms = parseTime(raw, 0, 86_400_000);
  return ms.ok ? ok(Math.floor(ms.value / 1000)) : ms;
}

function splitList(raw: string): string[] {
  return raw
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}
