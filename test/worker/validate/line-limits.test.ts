// The validator's line cap, a wall independent of the object guard: HAProxy 2.6 reads map files
// through a `tune.bufsize` buffer and splits longer lines, whose tails become entries of their
// own. Any config, map or file line longer than `tune.bufsize` minus a margin is an error naming
// the file and line, with the config's own `tune.bufsize` when it sets one, and the incremental
// validator reports exactly what the pure functions report.
import { describe, expect, it } from 'vitest';
import type { AuxiliaryFiles } from '../../../src/worker/protocol.js';
import { formatIssue, IncrementalValidator, validateConfig, validateStructure } from '../../../src/worker/validate/validator.js';
import { PATHS } from '../../helpers/validation.js';

function aux(parts: Partial<AuxiliaryFiles> = {}): AuxiliaryFiles {
  return { maps: {}, files: {}, certificates: {}, ...parts };
}

/** A config whose frontend routes through maps/hosts.map, with `global` lines of its own. */
function config(global = ''): string {
  return `global\n  log stdout format raw local0\n${global}
defaults
  mode http
  timeout connect 5s
  timeout client 5s
  timeout server 5s

frontend fe
  bind :80
  use_backend %[req.hdr(host),lower,map(${PATHS.mapsDir}/hosts.map)] if { req.hdr(host),lower,map(${PATHS.mapsDir}/hosts.map) -m found }
  default_backend be

backend be
  server s1 10.0.0.1:80
`;
}

/** A map line whose key runs to `length` characters, its tail shaped like a route of its own. */
function longEntry(length: number): string {
  const tail = 'shop.example.com/';
  return `/${'a'.repeat(length - 1 - tail.length)}${tail} be\n`;
}

describe('the line cap', () => {
  it('fails validation for a hand-made map with a 17 KB line, naming the file and the line', () => {
    const map = `good.example.com/ be\n${longEntry(17_000)}`;
    const report = validateConfig(config(), aux({ maps: { 'hosts.map': map } }), PATHS);
    expect(report.errors.map(formatIssue)).toEqual([
      `maps/hosts.map:2: line of ${17_000 + 3} characters is longer than HAProxy reads whole (tune.bufsize 16384 leaves 15360)`,
    ]);
  });

  it('allows lines up to the limit, and counts from the config\'s own tune.bufsize', () => {
    // tune.bufsize 16,384 minus the 1,024-character margin.
    const limit = 15_360;
    const atLimit = aux({ maps: { 'hosts.map': longEntry(limit - 3) } });
    expect(validateStructure(config(), atLimit, PATHS).errors).toEqual([]);
    const over = aux({ maps: { 'hosts.map': longEntry(limit - 2) } });
    expect(validateStructure(config(), over, PATHS).errors).toHaveLength(1);
    // A larger buffer lets the 17 KB line through; a smaller one catches an 8 KB line.
    const big = aux({ maps: { 'hosts.map': longEntry(17_000) } });
    expect(validateStructure(config('  tune.bufsize 32768\n'), big, PATHS).errors).toEqual([]);
    const small = aux({ maps: { 'hosts.map': longEntry(8_000) } });
    expect(validateStructure(config('  tune.bufsize 8192\n'), small, PATHS).errors.map(formatIssue)).toEqual([
      'maps/hosts.map:1: line of 8003 characters is longer than HAProxy reads whole (tune.bufsize 8192 leaves 7168)',
    ]);
  });

  it('applies to config lines and to every auxiliary file, certificates and files included', () => {
    const long = `# ${'x'.repeat(16_000)}`;
    const text = config().replace('\nbackend be\n', `\nbackend be\n  ${long}\n`);
    const report = validateStructure(text, aux({ maps: { 'hosts.map': 'a be\n' }, files: { 'notes.txt': `${long}\n` }, certificates: { 'x.pem': `${long}\n` } }), PATHS);
    expect(report.errors.map((e) => `${e.file}:${String(e.line)}`)).toEqual(['haproxy.cfg:16', 'files/notes.txt:1', 'certs/x.pem:1']);
  });

  it('reports the same from the incremental validator, across edits that add and remove long lines', () => {
    const validator = new IncrementalValidator();
    const maps = [{ 'hosts.map': 'a be\n' }, { 'hosts.map': longEntry(17_000) }, { 'hosts.map': 'a be\n' }];
    const configs = [config(), config().replace('backend be\n', `backend be\n  # ${'y'.repeat(20_000)}\n`), config('  tune.bufsize 65536\n')];
    for (const text of configs) {
      for (const files of maps) {
        const input = aux({ maps: files });
        expect(validator.validateStructure(text, input, PATHS)).toEqual(validateStructure(text, input, PATHS));
      }
    }
  });
});
