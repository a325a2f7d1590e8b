// Server and bind addresses, checked the way HAProxy reads them: an optional
// family prefix (`ipv4@`, `unix@`, `fd@`, ...), then a socket path, or a host with a port, a
// port range (bind) or a port offset (server). Each check returns what is wrong, or null.
import { BIND_ADDRESS_PREFIXES, SERVER_ADDRESS_PREFIXES } from '../keywords.js';
import { isDigits, isHex } from '../tokenizer.js';

/**
 * The last address asked and its answer. A config repeats an address back to back (every empty
 * server slot of a backend is 127.0.0.1:1), and the answer depends on the address alone. Only
 * the last one is kept: a cold render's addresses are mostly distinct (30,000 at 10,000
 * Ingresses), so a map of answers missed nearly every time and was emptied again and again, and
 * cost more than the checks it saved.
 */
let lastAddress: string | undefined;
let lastAnswer: string | null = null;

/** Returns what is wrong with a server address, or null. */
export function serverAddressProblem(addr: string): string | null {
  if (addr !== lastAddress) {
    lastAnswer = checkServerAddress(addr);
    lastAddress = addr;
  }
  return lastAnswer;
}

/** The check itself, without the answers kept. Exported for its tests. */
export function checkServerAddress(addr: string): string | null {
  if (addr.indexOf('${') >= 0) return null;
  let rest = addr;
  const at = addr.indexOf('@');
  if (at >= 0) {
    const prefix = addr.slice(0, at);
    if (prefix === 'fd') return `a file descriptor is not acceptable as server address '${addr}'`;
    if (!SERVER_ADDRESS_PREFIXES.has(prefix)) return `unknown address family '${prefix}@' in '${addr}'`;
    rest = addr.slice(at + 1);
    if (prefix === 'unix' || prefix === 'abns' || prefix === 'sockpair' || prefix === 'uxst') {
      return rest === '' ? `missing socket path in '${addr}'` : null;
    }
  }
  if (rest.startsWith('/')) return null;
  const split = splitHostPort(rest);
  if (typeof split === 'string') return `${split} in '${addr}'`;
  const { host, port } = split;
  if (host === '' || host === '*') return `missing host in server address '${addr}'`;
  const hostProblem = hostProblemOf(host);
  if (hostProblem !== null) return `${hostProblem} in '${addr}'`;
  if (port === null) return null;
  if (port === '') return `missing port after ':' in '${addr}'`;
  const offset = port.startsWith('+') || port.startsWith('-');
  const digits = offset ? port.slice(1) : port;
  if (!isDigits(digits)) {
    return digits.indexOf('-') > 0 && isDigits(digits.replace('-', ''))
      ? `port range not permitted in server address '${addr}'`
      : `invalid port '${port}' in '${addr}'`;
  }
  const n = Number(digits);
  if (!offset && (n < 1 || n > 65535)) return `invalid port '${port}' in '${addr}' (expected 1-65535)`;
  if (offset && n > 65535) return `invalid port offset '${port}' in '${addr}'`;
  return null;
}

/** Returns what is wrong with one bind address (of a comma-separated list), or null. */
export function bindAddressProblem(addr: string): string | null {
  if (addr.indexOf('${') >= 0) return null;
  if (addr === '') return `empty address`;
  let rest = addr;
  const at = addr.indexOf('@');
  if (at >= 0) {
    const prefix = addr.slice(0, at);
    if (!BIND_ADDRESS_PREFIXES.has(prefix)) return `unknown address family '${prefix}@' in '${addr}'`;
    rest = addr.slice(at + 1);
    if (prefix === 'unix' || prefix === 'abns' || prefix === 'sockpair' || prefix === 'uxst' || prefix === 'uxdg') {
      return rest === '' ? `missing socket path in '${addr}'` : null;
    }
    if (prefix === 'fd') return isDigits(rest) ? null : `invalid file descriptor in '${addr}'`;
  }
  if (rest.startsWith('/')) return null;
  const split = splitHostPort(rest);
  if (typeof split === 'string') return `${split} in '${addr}'`;
  const { host, port } = split;
  if (host !== '' && host !== '*') {
    const hostProblem = hostProblemOf(host);
    if (hostProblem !== null) return `${hostProblem} in '${addr}'`;
  }
  if (port === null || port === '') return `missing port in '${addr}'`;
  const dash = port.indexOf('-');
  const ports = dash < 0 ? [port] : [port.slice(0, dash), port.slice(dash + 1)];
  for (const p of ports) {
    if (!isDigits(p) || Number(p) < 1 || Number(p) > 65535) return `invalid port '${port}' in '${addr}'`;
  }
  if (ports.length === 2 && Number(ports[0]) > Number(ports[1])) return `invalid port range '${port}' in '${addr}'`;
  return null;
}

/** Splits `host:port`, `[v6]:port`, `v6:port` (last colon) or a bare host (port null). */
function splitHostPort(s: string): { host: string; port: string | null } | string {
  if (s.startsWith('[')) {
    const close = s.indexOf(']');
    if (close < 0) return `unterminated '[' in address`;
    const host = s.slice(1, close);
    if (!isIPv6(host)) return `invalid IPv6 address '${host}'`;
    const after = s.slice(close + 1);
    if (after === '') return { host, port: null };
    if (!after.startsWith(':')) return `unexpected '${after}' after IPv6 address`;
    return { host, port: after.slice(1) };
  }
  const colon = s.lastIndexOf(':');
  if (colon < 0) return { host: s, port: null };
  return { host: s.slice(0, colon), port: s.slice(colon + 1) };
}

function hostProblemOf(host: string): string | null {
  if (host.indexOf(':') >= 0) return isIPv6(host) ? null : `invalid IPv6 address '${host}'`;
  if (looksNumeric(host)) return isIPv4(host) ? null : `invalid IPv4 address '${host}'`;
  return isHostname(host) ? null : `invalid host name '${host}'`;
}

function looksNumeric(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || c === 46)) return false;
  }
  return true;
}

function isIPv4(s: string): boolean {
  let dots = 0;
  let value = 0;
  let digits = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 46) {
      if (digits === 0) return false;
      dots++;
      value = 0;
      digits = 0;
    } else if (c >= 48 && c <= 57) {
      value = value * 10 + (c - 48);
      digits++;
      if (digits > 3 || value > 255) return false;
    } else {
      return false;
    }
  }
  return dots === 3 && digits > 0;
}

function isIPv6(s: string): boolean {
  if (s.length < 2) return false;
  const zone = s.indexOf('%');
  const addr = zone < 0 ? s : s.slice(0, zone);
  const doubleColon = addr.indexOf('::');
  if (doubleColon >= 0 && addr.indexOf('::', doubleColon + 1) >= 0) return false;
  const groups = addr.split(':');
  let count = 0;
  for (let i = 0; i < groups.length; i++) {
    const g = groups[i] as string;
    if (g === '') continue;
    if (i === groups.length - 1 && g.indexOf('.') >= 0) {
      if (!isIPv4(g)) return false;
      count += 2;
      continue;
    }
    if (g.length > 4) return false;
    for (let k = 0; k < g.length; k++) if (!isHex(g.charCodeAt(k))) return false;
    count++;
  }
  return doubleColon >= 0 ? count < 8 : count === 8;
}

function isHostname(s: string): boolean {
  if (s.length === 0 || s.length > 253) return false;
  let labelLength = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 46) {
      if (labelLength === 0) return false;
      labelLength = 0;
      continue;
    }
    const ok = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 45 || c === 95;
    if (!ok) return false;
    labelLength++;
  }
  return true;
}
