import { afterEach, describe, expect, it } from 'vitest';
import { EventBus } from '../../../src/main/bus/event-bus.js';
import { Deployer, type DeployerOptions } from '../../../src/main/deploy/deployer.js';
import { newEvent, type ControllerEvent } from '../../../src/main/events/events.js';
import { flushMicrotasks } from '../../helpers/async.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { silentLogger } from '../../helpers/loggers.js';
import type { ReloadResult, TargetHealth } from '../../../src/main/deploy/deploy-target.js';
import { DeployerHarness, oneServer } from '../../helpers/deployer-harness.js';
import { FakeDeployTarget } from '../../helpers/fake-deploy-target.js';

/** A fake instance that can be cut off: its reloads then throw (no answer) and it reports itself unreachable. */
class FlakyTarget extends FakeDeployTarget {
  down = false;
  override async reload(): Promise<ReloadResult> {
    if (this.down) throw new Error('connect ECONNREFUSED');
    return super.reload();
  }
  health(): TargetHealth {
    return this.down ? 'unreachable' : 'ok';
  }
}

type Fleet = DeployerHarness<FlakyTarget>;

/** `count` instances, instance i taking `reloadMs(i)` per reload; failed deployments retried. */
function newFleet(count: number, options: Partial<DeployerOptions> = {}, reloadMs: (i: number) => number = () => 0): Fleet {
  return new DeployerHarness<FlakyTarget>({ retry: { initialMs: 1000, maxMs: 8000, jitter: 0 }, ...options }, {}, (clock) => Array.from({ length: count }, (_, i) => new FlakyTarget({ clock, reloadMs: reloadMs(i) })));
}

let fleet: Fleet | undefined;
afterEach(async () => {
  await fleet?.stop();
  fleet = undefined;
});

async function started(...args: Parameters<typeof newFleet>): Promise<Fleet> {
  fleet = await newFleet(...args).start();
  return fleet;
}

describe('Deployer with a fleet of instances', () => {
  it('sends a runtime change to every instance at once, even while one of them is still reloading', async () => {
    // Instance 2 takes 5 s per reload; the others are quick.
    const f = await started(3, {}, (i) => (i === 2 ? 5000 : 0));
    const first = await f.renderText(oneServer('10.0.0.1:80'));
    expect(f.targets.map((t) => t.running)).toEqual([first.checksum, first.checksum, undefined]);
    f.storeVersion = 2;
    const moved = await f.renderText(oneServer('10.0.0.2:80'));
    expect(f.targets[0]?.runtimeBatches).toEqual([[{ type: 'server-addr', backend: 'be', server: 'srv1', address: '10.0.0.2', port: 80 }]]);
    expect(f.targets[1]?.runtimeBatches).toHaveLength(1);
    expect(f.deployer.fleetCounts).toEqual({ in_sync: 2, behind: 1, unreachable: 0, fenced: 0 });
    await f.clock.advance(5000);
    // The slow one finished its reload and then took the runtime change too.
    expect(f.targets[2]?.runtimeBatches).toHaveLength(1);
    expect(f.deployer.fleetCounts).toEqual({ in_sync: 3, behind: 0, unreachable: 0, fenced: 0 });
    expect(f.completed.at(-1)?.fleet).toEqual({ in_sync: 3, behind: 0, unreachable: 0, fenced: 0 });
    expect(f.completed.filter((e) => e.checksum === moved.checksum).map((e) => e.kind)).toEqual(['runtime', 'runtime', 'runtime']);
  });

  it('paces reloads per instance, and holds reloads on every instance while the gate refuses the newest render', async () => {
    const f = await started(2);
    await f.renderText(oneServer('10.0.0.1:80'));
    const refused = await f.renderText(oneServer('10.0.0.1:80', '1s'), false);
    const later = await f.renderText(oneServer('10.0.0.1:80', '2s'), null);
    await f.clock.advance(10_000);
    for (const target of f.targets) {
      expect(target.reloads).toHaveLength(1);
      expect(target.reloads.map((r) => r.checksum)).not.toContain(refused.checksum);
    }
    expect(f.deployer.latched).toBe(true);
    await f.verdict(later);
    for (const target of f.targets) expect(target.running).toBe(later.checksum);
  });

  it('deploys to the others while one instance is unreachable, retries it with backoff, and brings it up to date once it is back', async () => {
    const f = await started(3);
    const down = f.targets[1] as FlakyTarget;
    down.down = true;
    const first = await f.renderText(oneServer('10.0.0.1:80'));
    expect([f.targets[0]?.running, f.targets[2]?.running]).toEqual([first.checksum, first.checksum]);
    expect(f.deployer.fleetCounts).toEqual({ in_sync: 2, behind: 0, unreachable: 1, fenced: 0 });
    expect(f.completed.filter((e) => e.outcome === 'failure')).toHaveLength(1);
    // Retried after 1 s (paced: at 2 s), then 2 s later (at 4 s): each fails while it is down.
    await f.clock.advance(4000);
    expect(f.completed.filter((e) => e.outcome === 'failure').map((e) => e.timestamp - first.timestamp)).toEqual([0, 2000, 4000]);
    down.down = false;
    await f.clock.advance(4000);
    expect(down.running).toBe(first.checksum);
    expect(f.deployer.fleetCounts).toEqual({ in_sync: 3, behind: 0, unreachable: 0, fenced: 0 });
  });

  it('measures an endpoint change to the last instance that applied it, not waiting for one out of reach', async () => {
    const f = await started(2, {}, (i) => (i === 1 ? 3000 : 0));
    await f.renderText(oneServer('10.0.0.1:80'));
    f.bus.publish(newEvent('resource.index.updated', { resourceTypeName: 'endpointslices', changeStats: { created: 0, modified: 1, deleted: 0, isInitialSync: false } }, undefined, f.clock));
    await flushMicrotasks();
    f.storeVersion = 2;
    await f.renderText(oneServer('10.0.0.2:80'));
    expect(f.latencies).toEqual([]);
    await f.clock.advance(3000);
    expect(f.latencies).toEqual([3]);
  });

  it('sends the whole render again to an instance that reports another checksum than it was given (restarted empty)', async () => {
    const f = await started(2);
    const reporting = f.targets[0] as FlakyTarget;
    Object.assign(reporting, { currentChecksum: () => Promise.resolve(reporting.running) });
    const first = await f.renderText(oneServer('10.0.0.1:80'));
    await f.clock.advance(5000);
    expect(reporting.reloads).toHaveLength(1);
    // Its agent restarted on an empty directory: it runs nothing.
    reporting.running = undefined;
    await f.clock.advance(5000);
    expect(reporting.reloads).toHaveLength(2);
    expect(reporting.running).toBe(first.checksum);
    expect(f.targets[1]?.reloads).toHaveLength(1);
  });

  it('deploys to the others while one instance has not yet said what it runs, and to that one once it has', async () => {
    const f = newFleet(2);
    let answer: ((checksum: string | undefined) => void) | undefined;
    Object.assign(f.targets[1] as FlakyTarget, { currentChecksum: () => new Promise<string | undefined>((resolve) => (answer = resolve)) });
    fleet = await f.start();
    const first = await f.renderText(oneServer('10.0.0.1:80'));
    expect(f.targets[0]?.running).toBe(first.checksum);
    expect(f.targets[1]?.calls).toEqual([]);
    answer?.(undefined);
    await flushMicrotasks();
    expect(f.targets[1]?.running).toBe(first.checksum);
  });

  it('refuses neither a target nor targets, and both at once, but takes an empty fleet that setTargets fills later', () => {
    const bus = new EventBus<ControllerEvent>({ logger: silentLogger() });
    const target = new FakeDeployTarget({ clock: new FakeClock() });
    expect(() => new Deployer({ bus })).toThrow(TypeError);
    expect(new Deployer({ bus, targets: [] }).fleetCounts).toEqual({ in_sync: 0, behind: 0, unreachable: 0, fenced: 0 });
    expect(() => new Deployer({ bus, target }).setTargets([])).toThrow(TypeError);
    expect(() => new Deployer({ bus, target, targets: [target] })).toThrow(TypeError);
  });
});
