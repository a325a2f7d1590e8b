// Hostname rules of the Gateway API: a listener hostname intersected with a route's hostnames
// (a wildcard `*.d` matches any host ending in `.d`, one label or more, never `d` itself; of a
// wildcard and a host it covers, the narrower one is the intersection), and the specificity
// order of hostnames: exact before wildcard, then more characters first, '' (any host) last.

/** The route's effective hostnames on a listener ('' for any host); empty when they do not meet. */
export function intersectHostnames(listener: string | undefined, route: readonly string[]): string[] {
  if (listener === undefined || listener === '') return route.length === 0 ? [''] : [...new Set(route)];
  if (route.length === 0) return [listener];
  const result = new Set<string>();
  for (const host of route) {
    const meet = intersect(listener, host);
    if (meet !== undefined) result.add(meet);
  }
  return [...result];
}

function intersect(a: string, b: string): string | undefined {
  if (a === b) return a;
  if (covers(a, b)) return b;
  if (covers(b, a)) return a;
  return undefined;
}

/** `pattern` is a wildcard matching every host of `host` (a host or a narrower wildcard). */
export function covers(pattern: string, host: string): boolean {
  return pattern.startsWith('*.') && host.endsWith(pattern.slice(1)) && host.length > pattern.length - 1;
}

/** Negative when `a` is more specific than `b`. */
export function compareHostnames(a: string, b: string): number {
  const rank = (h: string): number => (h === '' ? 2 : h.startsWith('*.') ? 1 : 0);
  if (rank(a) !== rank(b)) return rank(a) - rank(b);
  if (a.length !== b.length) return b.length - a.length;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The ACL term matching a hostname against `txn.host` ('' for any host). */
export function hostCondition(hostname: string): string {
  if (hostname === '') return '';
  return hostname.startsWith('*.') ? `{ var(txn.host) -m end ${hostname.slice(1)} }` : `{ var(txn.host) -m str ${hostname} }`;
}
