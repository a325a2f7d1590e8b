// IncrementalValidator looks for chunks only between the parts a new configuration shares with
// the latest one at either end (sharedEnds in incremental-validator.ts). A property test edits
// configurations at random places, inside lines and across section openers, text before the
// first section included, and after every edit the reports must be those of the pure functions.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AuxiliaryFiles } from '../../../src/worker/protocol.js';
import { checkAuxiliaryFiles, IncrementalValidator, validateStructure } from '../../../src/worker/validate/validator.js';
import { PATHS } from '../../helpers/validation.js';

const NO_AUX: AuxiliaryFiles = { maps: {}, files: {}, certificates: {} };

const LINES = [
  'global',
  '  maxconn 100',
  'defaults',
  '  mode http',
  '  timeout connect 5s',
  'frontend http',
  '  bind :80',
  '  default_backend be_a',
  'backend be_a',
  'backend be_b',
  'backend be_a',
  '  server s1 10.0.0.1:8080',
  '  server s2 10.0.0.2:8080 check',
  '  use_backend be_b if TRUE',
  '  balance roundrobin',
  'listen stats',
  '# a comment',
  '',
];
const PIECES = [...LINES.map((line) => `${line}\n`), 'X ', 'backend ', '\n', 'b', ' be_c\n', '"'];

const edit = fc.record({ at: fc.nat(), remove: fc.integer({ min: 0, max: 30 }), insert: fc.array(fc.constantFrom(...PIECES), { maxLength: 4 }) });

function expectPure(v: IncrementalValidator, config: string): void {
  expect(v.validateStructure(config, NO_AUX, PATHS)).toStrictEqual(validateStructure(config, NO_AUX, PATHS));
  expect(v.checkAuxiliaryFiles(NO_AUX, config, PATHS)).toStrictEqual(checkAuxiliaryFiles(NO_AUX, config, PATHS));
}

describe('IncrementalValidator between the shared ends of two configurations', () => {
  it('reports what the pure functions report after random edits anywhere in the text', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...LINES), { minLength: 1, maxLength: 30 }), fc.array(edit, { minLength: 1, maxLength: 12 }), (lines, edits) => {
        const v = new IncrementalValidator();
        let config = lines.map((line) => `${line}\n`).join('');
        expectPure(v, config);
        for (const { at, remove, insert } of edits) {
          const start = at % (config.length + 1);
          config = config.slice(0, start) + insert.join('') + config.slice(start + remove);
          expectPure(v, config);
        }
      }),
      { numRuns: 400, seed: 17 },
    );
  });

  it('does not take a section for a chunk when what precedes it no longer ends a line', () => {
    const v = new IncrementalValidator();
    const before = 'global\n  maxconn 10\nbackend b\n  server s1 10.0.0.1:80\n';
    expectPure(v, before);
    expectPure(v, before.replace('\nbackend b', '\nX backend b'));
  });

  it('does not take the text before the first section for a chunk once text comes before it', () => {
    const v = new IncrementalValidator();
    const before = '  maxconn 10\nbackend b\n  server s1 10.0.0.1:80\n';
    expectPure(v, before);
    expectPure(v, `global\n${before}`);
  });
});

describe('IncrementalValidator with the same configuration and other files', () => {
  const config = 'frontend http\n  bind :80\n  use_backend %[req.hdr(host),lower,map(/etc/haproxy/maps/hosts.map)]\n  default_backend be_a\nbackend be_a\nbackend be_b\nuserlist u\nuserlist u\n';
  const withMap = (text: string | undefined): AuxiliaryFiles => ({ maps: text === undefined ? {} : { 'hosts.map': text }, files: {}, certificates: {} });

  it('checks the map values against the kept backends again, and reports what the replay reported', () => {
    const v = new IncrementalValidator();
    const ok = withMap('a.example.com be_a\nb.example.com be_b\n');
    const unknown = withMap('a.example.com be_a\nb.example.com be_c\n');
    for (const aux of [ok, unknown, ok, unknown]) {
      expect(v.validateStructure(config, aux, PATHS)).toStrictEqual(validateStructure(config, aux, PATHS));
    }
    expect(v.validateStructure(config, unknown, PATHS).errors.map((e) => e.message).join()).toContain("names unknown backend 'be_c'");
    expect(v.validateStructure(config, ok, PATHS).warnings.join()).toContain("duplicate userlist 'u'");
  });

  it('replays again when a file the configuration names comes or goes', () => {
    const v = new IncrementalValidator();
    for (const aux of [withMap('a.example.com be_a\n'), withMap(undefined), withMap('a.example.com be_a\n'), NO_AUX]) {
      expect(v.validateStructure(config, aux, PATHS)).toStrictEqual(validateStructure(config, aux, PATHS));
    }
  });
});
