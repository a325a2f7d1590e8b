// Configurations for the IncrementalValidator tests: many backends behind one frontend, and the
// most chunks (sections, plus the text before the first) the validator may cut a config into.
import type { AuxiliaryFiles } from '../../src/worker/protocol.js';

export const NO_AUX: AuxiliaryFiles = { maps: {}, files: {}, certificates: {} };

export function backend(name: string, address = '10.0.0.1:8080'): string {
  return `backend ${name}\n  balance roundrobin\n  server s1 ${address}\n  server s2 10.0.0.2:8080 check\n`;
}

/** A config of `n` backends behind one frontend, with a default backend. */
export function manyBackends(n: number, address = (i: number) => `10.0.${i % 250}.1:8080`): string {
  const parts = ['global\n  maxconn 100\n', 'defaults\n  mode http\n  timeout connect 5s\n', 'frontend http\n  bind :80\n  default_backend be_0\n'];
  for (let i = 0; i < n; i++) parts.push(backend(`be_${i}`, address(i)));
  return parts.join('\n');
}

const SECTION_KEYWORDS =
  'global defaults frontend backend listen resolvers userlist peers mailers http-errors ring cache program log-forward fcgi-app namespace_list';
const OPENER = new RegExp(`^[ \\t\\r]*(${SECTION_KEYWORDS.split(' ').join('|')})(?=[ \\t\\r]|$)`);

/** At least as many chunks as the validator cuts: the lines a section keyword begins, plus the text before. */
export function maxChunks(config: string): number {
  return config.split('\n').filter((line) => OPENER.test(line)).length + 1;
}
