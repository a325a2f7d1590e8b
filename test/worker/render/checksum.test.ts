// The render checksum kept between renders: whatever sequence of changes led to an output (maps
// and server-slots.txt digested per line, the config per block), its checksum is the one computed
// afresh from the same texts, and a changed line of any file changes it.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AuxiliaryFiles } from '../../../src/worker/protocol.js';
import { checksum, type ChecksumState } from '../../../src/worker/render/checksum.js';
import { ChangedWindows } from '../../../src/worker/render/changed-windows.js';
import { ConfigDigest } from '../../../src/worker/render/config-digest.js';

function keptState(): ChecksumState {
  return { digests: new Map(), configDigest: new ConfigDigest(), lineDigests: new Map() };
}

const line = fc.stringMatching(/^[a-z./]{1,12} [a-z_]{1,8}$/);

/** One output: a config, two maps, server-slots.txt and a plain file, from lists of lines. */
const output = fc.record({
  config: fc.array(line, { maxLength: 6 }),
  hostMap: fc.array(line, { maxLength: 12 }),
  pathMap: fc.array(line, { maxLength: 12 }),
  slots: fc.array(line, { maxLength: 6 }),
  other: fc.array(line, { maxLength: 3 }),
});

type Output = typeof output extends fc.Arbitrary<infer T> ? T : never;

function texts(o: Output): { config: string; aux: AuxiliaryFiles } {
  const lines = (list: readonly string[]): string => list.map((l) => `${l}\n`).join('');
  return {
    config: o.config.map((l) => `backend ${l}\n  mode http\n\n`).join(''),
    aux: {
      maps: { 'host-exact.map': lines(o.hostMap), 'path-prefix.map': lines(o.pathMap) },
      files: { 'server-slots.txt': lines(o.slots), 'errors.http': lines(o.other) },
      certificates: {},
    },
  };
}

describe('the kept render checksum', () => {
  it('equals the checksum computed afresh after any sequence of outputs', () => {
    fc.assert(
      fc.property(fc.array(output, { minLength: 1, maxLength: 8 }), (outputs) => {
        const kept = keptState();
        for (const o of outputs) {
          const { config, aux } = texts(o);
          expect(checksum(config, aux, kept)).toBe(checksum(config, aux));
        }
      }),
      { numRuns: 200 },
    );
  });

  it('equals the checksum computed afresh when the changed lines of the maps come from the windows of the render', () => {
    fc.assert(
      fc.property(output, fc.array(fc.record({ at: fc.nat(12), remove: fc.nat(2), insert: fc.array(line, { maxLength: 2 }) }), { minLength: 1, maxLength: 8 }), (first, edits) => {
        const windows = new ChangedWindows();
        const kept: ChecksumState = { ...keptState(), windows };
        let o = first;
        for (const e of edits) {
          // One map edited in place, as a changed Ingress edits a line or two of a large map.
          const hostMap = [...o.hostMap];
          hostMap.splice(Math.min(e.at, hostMap.length), e.remove, ...e.insert);
          o = { ...o, hostMap };
          windows.clear();
          const { config, aux } = texts(o);
          expect(checksum(config, aux, kept)).toBe(checksum(config, aux));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('changes when one line of a map changes, and comes back with the line', () => {
    const kept = keptState();
    const base = texts({ config: ['a x'], hostMap: ['a.example b_one', 'b.example b_two', 'c.example b_three'], pathMap: [], slots: ['b_one 1'], other: [] });
    const before = checksum(base.config, base.aux, kept);
    const changed: AuxiliaryFiles = { ...base.aux, maps: { ...base.aux.maps, 'host-exact.map': 'a.example b_one\nb.example b_four\nc.example b_three\n' } };
    const after = checksum(base.config, changed, kept);
    expect(after).not.toBe(before);
    expect(after).toBe(checksum(base.config, changed));
    expect(checksum(base.config, base.aux, kept)).toBe(before);
  });
});
