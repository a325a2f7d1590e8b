// The IncrementalValidator holds on to the chunks of its latest configuration only.
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../../src/main/sources/synthetic/synthetic-cluster.js';
import { IncrementalValidator } from '../../../src/worker/validate/validator.js';
import { manyBackends, maxChunks, NO_AUX } from '../../helpers/incremental-validation.js';
import { PATHS } from '../../helpers/validation.js';

describe('IncrementalValidator memory', () => {
  it('holds the chunks of the latest configuration only', () => {
    const v = new IncrementalValidator();
    const random = seededRandom(7);
    for (let i = 0; i < 40; i++) {
      const n = 5 + Math.floor(random() * 60);
      const config = manyBackends(n, (k) => `10.${i}.${k % 250}.${1 + Math.floor(random() * 200)}:8080`);
      v.validateStructure(config, NO_AUX, PATHS);
      v.checkAuxiliaryFiles(NO_AUX, config, PATHS);
      expect(v.cachedChunks).toBeLessThanOrEqual(maxChunks(config));
    }
    expect(v.cachedChunks).toBeGreaterThan(0);
    v.validateStructure('global\n  maxconn 1\n', NO_AUX, PATHS);
    expect(v.cachedChunks).toBe(1);
    v.validateStructure('', NO_AUX, PATHS);
    expect(v.cachedChunks).toBe(0);
  });
});
