import { describe, expect, it } from 'vitest';
import { TemplateSetError } from '../../../src/main/core/errors.js';
import { applyValueOverrides } from '../../../src/main/template-set/value-overrides.js';
import { loadTemplateSet } from '../../../src/main/template-set/template-set.js';

const VALUES = { httpPort: 80, bindAddress: '*', timeouts: { client: '50s', server: '50s' } };

function failure(run: () => unknown): TemplateSetError {
  try {
    run();
  } catch (error) {
    if (error instanceof TemplateSetError) return error;
    throw error;
  }
  throw new Error('expected a TemplateSetError');
}

describe('--set and --set-new', () => {
  it('replaces known values, typed, nested ones included, and leaves the input untouched', () => {
    const out = applyValueOverrides(VALUES, { set: ['httpPort=8080', 'timeouts.client=10s'] }, 'set.yaml');
    expect(out).toEqual({ httpPort: 8080, bindAddress: '*', timeouts: { client: '10s', server: '50s' } });
    expect(VALUES.timeouts.client).toBe('50s');
  });

  it('refuses a --set key that is not a value, naming it and listing the known keys', () => {
    const error = failure(() => applyValueOverrides(VALUES, { set: ['httpport=1'] }, 'set.yaml'));
    expect(error.message).toBe('set.yaml: --set httpport: no such value; known values: bindAddress, httpPort, timeouts (--set-new adds a value)');
  });

  it('lists the keys of the nested value when a dotted --set key goes astray', () => {
    const error = failure(() => applyValueOverrides(VALUES, { set: ['timeouts.clinet=5s'] }, 'set.yaml'));
    expect(error.message).toBe('set.yaml: --set timeouts.clinet: no such value; known values of timeouts: client, server (--set-new adds a value)');
  });

  it('adds new keys, nested ones included, with --set-new', () => {
    expect(applyValueOverrides(VALUES, { setNew: ['maxconn=2000', 'extra.deep=x'] }, 'set.yaml')).toMatchObject({ maxconn: 2000, extra: { deep: 'x' } });
  });

  it('rejects prototype keys in both flags', () => {
    expect(() => applyValueOverrides(VALUES, { set: ['__proto__.x=1'] }, 'set.yaml')).toThrow('--set key "__proto__.x" is not allowed');
    expect(() => applyValueOverrides(VALUES, { setNew: ['a.constructor=1'] }, 'set.yaml')).toThrow('--set-new key "a.constructor" is not allowed');
  });

  it('checks --set keys against the bundled set when it is loaded, programmatic overrides counting as known', async () => {
    await expect(loadTemplateSet(undefined, {}, { set: ['httpport=1'] })).rejects.toThrow(/--set httpport: no such value; known values: .*httpPort/);
    const set = await loadTemplateSet(undefined, { custom: 'a' }, { set: ['httpPort=8080', 'custom=b'], setNew: ['maxconn=100'] });
    expect(set.values).toMatchObject({ httpPort: 8080, custom: 'b', maxconn: 100 });
  });
});
