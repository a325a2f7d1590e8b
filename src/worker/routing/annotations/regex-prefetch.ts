// The regular expressions of a batch of Ingresses, sent to HAProxy's PCRE2 together before the
// guard checks the Ingresses one by one: a cluster of many Ingresses costs one `haproxy -c` run
// per few hundred new patterns, not one per Ingress. Each object is looked at once.
import type { KubeObject } from '../../protocol.js';
import { readAnnotations } from './annotation-reader.js';
import { pcreProblems } from './pcre-engine.js';
import { MAX_REGEX } from './pcre.js';
import { valueLines } from './values.js';

const seen = new WeakSet<object>();

/** The candidate patterns of one Ingress: cors-allow-origin, and the regexes of path-rewrite. */
export function regexCandidates(object: KubeObject): string[] {
  const values = readAnnotations(object, 'Ingress').values;
  const found: string[] = [];
  const origin = values.get('cors-allow-origin');
  if (origin !== undefined && origin !== '*') found.push(origin);
  for (const line of valueLines(values.get('path-rewrite') ?? '')) {
    const words = line.split(/[ \t]+/);
    if (words.length === 2) found.push(words[0] as string);
  }
  return found.filter((pattern) => pattern.length <= MAX_REGEX);
}

/** Checks the new patterns of `objects` (Ingresses) in as few HAProxy runs as it takes. */
export function prefetchRegexes(objects: readonly KubeObject[]): void {
  const patterns: string[] = [];
  for (const object of objects) {
    if (seen.has(object)) continue;
    seen.add(object);
    patterns.push(...regexCandidates(object));
  }
  if (patterns.length > 0) pcreProblems(patterns);
}
