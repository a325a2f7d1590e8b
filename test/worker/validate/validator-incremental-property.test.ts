// Property test of the IncrementalValidator: random configurations and auxiliary files, random
// edits, every step compared with the pure functions.
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../../src/main/sources/synthetic/synthetic-cluster.js';
import { IncrementalValidator, checkAuxiliaryFiles, validateStructure, type ValidationReport } from '../../../src/worker/validate/validator.js';
import { maxChunks } from '../../helpers/incremental-validation.js';
import { edit, join, randomAux, randomSections } from '../../helpers/random-haproxy-config.js';
import { PATHS } from '../../helpers/validation.js';

describe('IncrementalValidator property test', () => {
  it('matches the pure functions after every random edit, whatever the calls before', () => {
    const SEEDS = 40;
    const STEPS = 30;
    let compared = 0;
    const seen = new Set<string>();
    const note = (report: ValidationReport): ValidationReport => {
      for (const e of report.errors) seen.add(e.message);
      for (const w of report.warnings) seen.add(w);
      return report;
    };
    for (let seed = 1; seed <= SEEDS; seed++) {
      const random = seededRandom(seed);
      const v = new IncrementalValidator();
      const state = { sections: randomSections(random), aux: randomAux(random), paths: PATHS };
      let previous = '';
      for (let step = 0; step < STEPS; step++) {
        // Now and then the previous text again, as the same string or an equal copy.
        const repeat = step > 0 ? random() : 1;
        const config = repeat < 0.05 ? previous : repeat < 0.12 ? `${previous} `.slice(0, -1) : join(random, state.sections);
        previous = config;
        const { aux, paths } = state;
        const context = `seed ${seed}, step ${step}\n${config}`;
        const structure = (text: string): void => {
          expect(v.validateStructure(text, aux, paths), context).toStrictEqual(note(validateStructure(text, aux, paths)));
          compared++;
        };
        const auxiliary = (text: string): void => {
          expect(v.checkAuxiliaryFiles(aux, text, paths), context).toStrictEqual(note(checkAuxiliaryFiles(aux, text, paths)));
          compared++;
        };
        // Vary the calls: both phases in either order, one phase only, or the phases on
        // different configurations.
        const order = random();
        let last = config;
        if (order < 0.6) {
          structure(config);
          auxiliary(config);
        } else if (order < 0.75) {
          auxiliary(config);
          structure(config);
        } else if (order < 0.85) {
          structure(config);
        } else {
          last = join(random, randomSections(random));
          structure(config);
          auxiliary(last);
        }
        expect(v.cachedChunks).toBeLessThanOrEqual(maxChunks(last));
        const edits = 1 + Math.floor(random() * 3);
        for (let e = 0; e < edits; e++) edit(random, state);
      }
    }
    expect(compared).toBeGreaterThan(SEEDS * STEPS * 1.5);
    // The generator reaches every kind of cross-section interaction the replay decides.
    const all = [...seen].join('\n');
    for (const fragment of [
      'uses unknown defaults section',
      'has the same name as',
      'is also bound by',
      'names unknown backend',
      'routes through maps/host.map',
      'names frontend',
      'is not produced by the render',
      'lies outside the rendered directories',
      'relative crt path',
      'unmatched double quote',
      'further error(s) omitted',
      'duplicate userlist',
      'names unknown cache section',
      'names unknown resolvers section',
      'was already defined at line',
      'duplicate key',
      'no private key',
      'references certificate',
    ]) {
      expect(all).toContain(fragment);
    }
  });
});
