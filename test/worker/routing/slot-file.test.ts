import { describe, expect, it } from 'vitest';
import type { Backend } from '../../../src/worker/routing/model.js';
import { slotLine } from '../../../src/worker/routing/server-slots.js';
import { SlotFile } from '../../../src/worker/routing/slot-file.js';
import { seededRandom } from '../../../src/main/sources/synthetic/synthetic-cluster.js';

/** A backend as the slot file reads it: a name and its servers. */
function backend(name: string, addresses: readonly string[]): Backend {
  return { name, servers: addresses.map((address, i) => ({ name: `s${i + 1}`, address, enabled: address !== '' })) } as unknown as Backend;
}

const joined = (backends: readonly Backend[]): string => backends.map((b) => slotLine(b.name, b.servers.map((s) => (s.enabled ? s.address : '')))).join('');

describe('SlotFile', () => {
  it('gives the text of every backend line joined, through random sequences of changed, added, removed and reordered backends', () => {
    const random = seededRandom(11);
    const file = new SlotFile();
    let backends = Array.from({ length: 60 }, (_, i) => backend(`b${i}`, [`10.0.${i}.1:80`, '']));
    expect(file.text(backends)).toBe(joined(backends));
    for (let step = 0; step < 300; step++) {
      const next = [...backends];
      const roll = random();
      const at = Math.floor(random() * next.length);
      const old = next[at] as Backend;
      // Mostly endpoint changes (same place, new object, a longer or shorter line), sometimes the list changes shape.
      if (roll < 0.7) next[at] = backend(old.name, Array.from({ length: 1 + Math.floor(random() * 3) }, (_, k) => (random() < 0.2 ? '' : `10.1.${step}.${k}:8080`)));
      else if (roll < 0.8) next.splice(at, 1);
      else if (roll < 0.9) next.splice(at, 0, backend(`n${step}`, ['10.9.9.9:80']));
      else next.reverse();
      if (random() < 0.3 && next.length > 1) next[0] = backend((next[0] as Backend).name, ['10.2.2.2:80']);
      backends = next;
      expect(file.text(backends)).toBe(joined(backends));
    }
  });
});
