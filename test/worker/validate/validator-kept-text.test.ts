import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { AuxiliaryFiles } from '../../../src/worker/protocol.js';
import { IncrementalValidator, checkAuxiliaryFiles, validateStructure } from '../../../src/worker/validate/validator.js';
import { PATHS } from '../../helpers/validation.js';

const NO_AUX: AuxiliaryFiles = { maps: {}, files: {}, certificates: {} };
const BASE = 'global\n  maxconn 100\n\ndefaults\n  mode http\n  timeout connect 5s\n  timeout client 5s\n  timeout server 5s\n\n';
const backend = (name: string): string => `backend ${name}\n  server s1 127.0.0.1:80\n\n`;
/** The same text built anew: a different string object, as a render gives. */
const fresh = (text: string): string => [...text].join('');

describe('IncrementalValidator.keptText', () => {
  it('gives the earlier text for a config that is the same text as the one before it', () => {
    const v = new IncrementalValidator();
    const first = BASE + backend('a');
    v.validateStructure(first, NO_AUX, PATHS);
    expect(v.keptText(first)).toBeUndefined();
    const again = fresh(first);
    v.validateStructure(again, NO_AUX, PATHS);
    expect(v.keptText(again)).toBe(first);
  });

  it('gives nothing for a changed config, for a string it was not given, or when asked twice', () => {
    const v = new IncrementalValidator();
    const first = BASE + backend('a');
    v.validateStructure(first, NO_AUX, PATHS);
    const changed = BASE + backend('b');
    v.validateStructure(changed, NO_AUX, PATHS);
    expect(v.keptText(changed)).toBeUndefined();
    const same = fresh(changed);
    v.validateStructure(same, NO_AUX, PATHS);
    expect(v.keptText(BASE + backend('c'))).toBeUndefined();
    v.validateStructure(fresh(changed), NO_AUX, PATHS);
    const given = fresh(changed);
    v.validateStructure(given, NO_AUX, PATHS);
    expect(v.keptText(given)).toBe(changed);
    expect(v.keptText(given)).toBeUndefined();
  });

  it('reports what the pure phases report over a sequence of configs read on as the kept text', () => {
    const configs = fc.array(fc.subarray(['a', 'b', 'c', 'd'], { minLength: 0 }), { minLength: 1, maxLength: 8 });
    fc.assert(
      fc.property(configs, (lists) => {
        const v = new IncrementalValidator();
        for (const names of lists) {
          const given = fresh(BASE + names.map(backend).join(''));
          const structure = v.validateStructure(given, NO_AUX, PATHS);
          const config = v.keptText(given) ?? given;
          expect(config).toBe(given);
          expect(structure).toEqual(validateStructure(given, NO_AUX, PATHS));
          expect(v.checkAuxiliaryFiles(NO_AUX, config, PATHS)).toEqual(checkAuxiliaryFiles(NO_AUX, config, PATHS));
        }
      }),
    );
  });
});
