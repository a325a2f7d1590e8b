// The lane's indexes kept from base to base: patched where the model's backends changed in a few
// places (and where the lane changed them since), they hold what building them afresh from the
// model's backends gives, by name and by Service.
import { describe, expect, it } from 'vitest';
import type { RenderSuccess, TemplateSetSource } from '../../../src/worker/protocol.js';
import { backendsOf, indexByService, laneBase, type LaneBase, type ServiceBackends } from '../../../src/worker/render/lane-base.js';
import type { Backend, RoutingModel } from '../../../src/worker/routing/model.js';

const set = { hash: 'h', stores: [] } as unknown as TemplateSetSource;
const outcome = { warnings: [], rejections: [] } as unknown as RenderSuccess;
const request = { lookup: () => undefined };

function backend(i: number, service = `svc${i}`, version = 0): Backend {
  return { name: `be${i}`, namespace: 'shop', service, port: '80', ingress: `app${i}`, servers: [], version } as unknown as Backend;
}

function baseOf(backends: readonly Backend[], previous?: LaneBase): LaneBase {
  return laneBase(set, request, outcome, { backends } as unknown as RoutingModel, new Set(), previous) as LaneBase;
}

function sortedIndex(byService: ServiceBackends | undefined): [string, string[]][] {
  const index = byService ?? new Map<string, string[]>();
  return [...index.keys()].map((key): [string, string[]] => [key, [...backendsOf(index, key)].sort()]).sort((a, b) => (a[0] < b[0] ? -1 : 1));
}

function expectFresh(base: LaneBase, backends: readonly Backend[]): void {
  const fresh = baseOf(backends);
  expect(new Map([...base.backends].sort())).toEqual(new Map([...fresh.backends].sort()));
  for (const b of backends) expect(base.backends.get(b.name)).toBe(b);
  if (base.byService !== undefined) expect(sortedIndex(base.byService)).toEqual(sortedIndex(indexByService(fresh.backends)));
}

describe('laneBase', () => {
  it('patches the indexes of the previous base where a few backends changed, moved Service or name, or the lane edited them', () => {
    let backends = Array.from({ length: 40 }, (_, i) => backend(i, `svc${i % 7}`));
    let base = baseOf(backends);
    base.byService = indexByService(base.backends);
    for (let round = 1; round <= 6; round++) {
      // The lane edits two backends (as splice does: their new objects, and the model's remembered).
      for (const i of [round, round + 9]) {
        const model = base.backends.get(`be${i}`) as Backend;
        base.backends.set(model.name, { ...model, version: 100 + round } as Backend);
        const edited = (base.laneEdited ??= new Map());
        if (!edited.has(model.name)) edited.set(model.name, model);
      }
      backends = [...backends];
      backends[round * 3] = backend(round * 3, `svc${(round * 5) % 7}`, round);
      backends[round + 20] = { ...backend(round + 20), name: `renamed${round}` } as Backend;
      const next = baseOf(backends, base);
      expect(next.backends).toBe(base.backends);
      expectFresh(next, backends);
      base = next;
    }
  });

  it('keeps the names of a Service right as it goes from one backend to several and back to none', () => {
    let backends = Array.from({ length: 12 }, (_, i) => backend(i));
    let base = baseOf(backends);
    base.byService = indexByService(base.backends);
    // Backend 1 joins svc0, then backend 2, then both leave it again, then backend 0 moves away.
    const moves: [number, string][] = [[1, 'svc0'], [2, 'svc0'], [1, 'svc1'], [2, 'svc2'], [0, 'svc3']];
    for (const [round, [i, service]] of moves.entries()) {
      backends = [...backends];
      backends[i] = backend(i, service, round + 1);
      const next = baseOf(backends, base);
      expect(next.byService).toBe(base.byService);
      expectFresh(next, backends);
      base = next;
    }
    expect(backendsOf(base.byService as ServiceBackends, 'shop/svc0')).toEqual([]);
    expect(backendsOf(base.byService as ServiceBackends, 'shop/svc3')).toEqual(['be3', 'be0']);
  });

  it('builds the indexes afresh when the backends change length, many at once, or names repeat', () => {
    const backends = Array.from({ length: 20 }, (_, i) => backend(i));
    const base = baseOf(backends);
    base.byService = indexByService(base.backends);
    const longer = [...backends, backend(20)];
    const grown = baseOf(longer, base);
    expect(grown.backends).not.toBe(base.backends);
    expectFresh(grown, longer);
    const many = longer.map((b, i) => (i % 2 === 0 ? backend(i, `other${i}`) : b));
    const churned = baseOf(many, grown);
    expect(churned.byService).toBeUndefined();
    expectFresh(churned, many);
    const repeated = [...many];
    repeated[3] = { ...backend(3), name: 'be5' } as Backend;
    const fresh = baseOf(repeated, churned);
    expect(fresh.backends.get('be5')).toBe(repeated[5]);
    expect(fresh.backends.size).toBe(20);
  });
});
