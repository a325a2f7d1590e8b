import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { DeployableRender } from '../../../src/main/deploy/deploy-target.js';
import type * as patchDiff from '../../../src/main/deploy/patch-diff.js';
import { diffDeployed } from '../../../src/main/deploy/patch-diff.js';
import type * as runtimeView from '../../../src/main/deploy/runtime-view.js';
import { applyRuntimeView } from '../../../src/main/deploy/runtime-view.js';
import { SharedDiffs } from '../../../src/main/deploy/shared-diffs.js';
import { DeployerHarness, MAPS_DIR, oneServer } from '../../helpers/deployer-harness.js';
import { FakeDeployTarget } from '../../helpers/fake-deploy-target.js';

// Every diff the Deployer's instances ask for is counted, and computed by the real function.
vi.mock('../../../src/main/deploy/patch-diff.js', async (importOriginal) => {
  const actual = await importOriginal<typeof patchDiff>();
  return { ...actual, diffDeployed: vi.fn(actual.diffDeployed) };
});
vi.mock('../../../src/main/deploy/runtime-view.js', async (importOriginal) => {
  const actual = await importOriginal<typeof runtimeView>();
  return { ...actual, applyRuntimeView: vi.fn(actual.applyRuntimeView) };
});
const counted = vi.mocked(diffDeployed);
const views = vi.mocked(applyRuntimeView);
const { diffDeployed: cold } = await vi.importActual<typeof patchDiff>('../../../src/main/deploy/patch-diff.js');

function render(renderId: string, address: string): DeployableRender {
  return { renderId, checksum: `sum-${address}`, haproxyConfig: oneServer(address), auxiliaryFiles: { maps: {}, files: {}, certificates: {} } };
}

/** The pairs diffed so far, as `from -> to` render ids. */
function pairs(): string[] {
  return counted.mock.calls.map(([from, to]) => `${from.renderId} -> ${to.renderId}`);
}

let fleet: DeployerHarness | undefined;
beforeEach(() => {
  counted.mockClear();
  views.mockClear();
});
afterEach(async () => {
  await fleet?.stop();
  fleet = undefined;
});

describe('Deployer instances on the same base', () => {
  it('compute the diff of a new render once for three instances, and each applies the operations of a cold diff', async () => {
    const f = (fleet = await new DeployerHarness({}, {}, (clock) => [0, 1, 2].map(() => new FakeDeployTarget({ clock }))).start());
    const first = await f.renderText(oneServer('10.0.0.1:80'));
    const moved = await f.renderText(oneServer('10.0.0.2:80'));
    expect(pairs()).toEqual([`${first.renderId} -> ${moved.renderId}`]);
    const expected = cold(first, moved, { mapsDir: MAPS_DIR }).runtimeOps;
    expect(expected).toEqual([{ type: 'server-addr', backend: 'be', server: 'srv1', address: '10.0.0.2', port: 80 }]);
    for (const target of f.targets) expect(target.runtimeBatches).toEqual([expected]);
    expect(f.deployer.fleetCounts.in_sync).toBe(3);
  });

  it('compute their own diff for an instance on another base, which the others do not share', async () => {
    // Instance 2 takes 5 s per reload: it is still reloading the first render when the next two come.
    const f = (fleet = await new DeployerHarness({}, {}, (clock) => [0, 0, 5000].map((reloadMs) => new FakeDeployTarget({ clock, reloadMs }))).start());
    const first = await f.renderText(oneServer('10.0.0.1:80'));
    const second = await f.renderText(oneServer('10.0.0.2:80'));
    const third = await f.renderText(oneServer('10.0.0.3:80'));
    expect(pairs()).toEqual([`${first.renderId} -> ${second.renderId}`, `${second.renderId} -> ${third.renderId}`]);
    await f.clock.advance(5000);
    // The slow one runs the first render, and goes from there straight to the newest.
    expect(pairs()).toEqual([`${first.renderId} -> ${second.renderId}`, `${second.renderId} -> ${third.renderId}`, `${first.renderId} -> ${third.renderId}`]);
    const [a, b, slow] = f.targets as [FakeDeployTarget, FakeDeployTarget, FakeDeployTarget];
    const coldOps = (from: typeof first, to: typeof first) => cold(from, to, { mapsDir: MAPS_DIR }).runtimeOps;
    expect(a.runtimeBatches).toEqual([coldOps(first, second), coldOps(second, third)]);
    expect(b.runtimeBatches).toEqual(a.runtimeBatches);
    expect(slow.runtimeBatches).toEqual([coldOps(first, third)]);
    expect(f.deployer.fleetCounts.in_sync).toBe(3);
  });

  it('compute once the runtime view of a mixed change for three instances, and each reloads the new render after its runtime part', async () => {
    const f = (fleet = await new DeployerHarness({}, {}, (clock) => [0, 1, 2].map(() => new FakeDeployTarget({ clock }))).start());
    const first = await f.renderText(oneServer('10.0.0.1:80'));
    await f.clock.advance(2000);
    // The server moves (at runtime) and a timeout changes (a reload).
    const mixed = await f.renderText(oneServer('10.0.0.2:80', '1s'));
    await f.clock.advance(2000);
    expect(pairs()).toEqual([`${first.renderId} -> ${mixed.renderId}`]);
    expect(views).toHaveBeenCalledTimes(1);
    for (const target of f.targets) {
      expect(target.runtimeBatches).toEqual([cold(first, mixed, { mapsDir: MAPS_DIR }).runtimeOps]);
      expect(target.reloads.map((r) => r.checksum)).toEqual([first.checksum, mixed.checksum]);
    }
  });
});

describe('SharedDiffs', () => {
  it('keeps one frozen diff per base for the newest render only, and forgets it when a newer render comes', () => {
    const diffs = new SharedDiffs({});
    const [r1, r2, r3] = [render('r1', '10.0.0.1:80'), render('r2', '10.0.0.2:80'), render('r3', '10.0.0.3:80')];
    diffs.rendered(r2.checksum);
    const shared = diffs.of(r1, r2);
    expect(diffs.of({ ...r1 }, r2)).toBe(shared);
    expect(Object.isFrozen(shared) && Object.isFrozen(shared.runtimeOps) && shared.runtimeOps.every((op) => Object.isFrozen(op))).toBe(true);
    expect(shared).toEqual(cold(r1, r2));
    // A pair to an older render is computed for its caller alone.
    expect(diffs.of(r1, r3)).not.toBe(diffs.of(r1, r3));
    diffs.rendered(r3.checksum);
    expect(counted).toHaveBeenCalledTimes(3);
    expect(diffs.of(r2, r3)).toBe(diffs.of(r2, r3));
    diffs.rendered(r2.checksum);
    expect(diffs.of(r1, r2)).not.toBe(shared);
    expect(counted).toHaveBeenCalledTimes(5);
  });
});
