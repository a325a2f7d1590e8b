// Health checks (`check`, `check-http`, `check-interval`), on the Service or the Ingress (the
// Ingress wins). `check-http` is `[METHOD] path [HTTP/1.0|HTTP/1.1]`, as `option httpchk`
// takes it; without a method HAProxy (and so the HAProxy Ingress Controller) sends OPTIONS.
import type { HttpCheck } from '../model.js';
import { bad, ok, parseTime, type Parsed } from './values.js';

const METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'DELETE', 'PATCH', 'TRACE']);
const CHECK_PATH = /^\/[A-Za-z0-9\-._~!$&()*+,;=:@%/?]{0,255}$/;
const VERSIONS = new Set(['HTTP/1.0', 'HTTP/1.1']);
const MIN_INTERVAL_MS = 100;
const MAX_INTERVAL_MS = 86_400_000;

export function parseCheckHttp(raw: string): Parsed<HttpCheck> {
  const words = raw.trim().split(/[ \t]+/);
  if (words.length > 3 || words[0] === '') return bad('must be [METHOD] path [HTTP/1.0|HTTP/1.1]');
  const [method, path, version] = words.length === 1 ? ['OPTIONS', words[0] as string, undefined] : [words[0] as string, words[1] as string, words[2]];
  if (!METHODS.has(method)) return bad(`has the method ${JSON.stringify(method)}, which is not one of ${[...METHODS].join(', ')}`);
  if (!CHECK_PATH.test(path)) return bad(`has the path ${JSON.stringify(path)}, which is not a URL path (it must start with '/' and hold no spaces, quotes or '#')`);
  if (version !== undefined && !VERSIONS.has(version)) return bad(`has the version ${JSON.stringify(version)}, which is not HTTP/1.0 or HTTP/1.1`);
  return ok(Object.freeze(version === undefined ? { method, path } : { method, path, version }));
}

/** Milliseconds between checks. */
export function parseCheckInterval(raw: string): Parsed<number> {
  return parseTime(raw, MIN_INTERVAL_MS, MAX_INTERVAL_MS);
}
