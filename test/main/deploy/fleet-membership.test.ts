import { afterEach, describe, expect, it } from 'vitest';
import type { FleetCounts } from '../../../src/main/deploy/deployer.js';
import { flushMicrotasks } from '../../helpers/async.js';
import { DeployerHarness, oneServer } from '../../helpers/deployer-harness.js';
import { FakeDeployTarget } from '../../helpers/fake-deploy-target.js';

/** A fleet Deployer whose instance set changes during the term, as discovered Pods come and go. */
class ChangingFleet extends DeployerHarness {
  readonly counted: FleetCounts[] = [];
  readonly members = new Map<string, FakeDeployTarget>();

  constructor() {
    super({ probeIntervalMs: 60_000, onFleetChanged: (counts) => this.counted.push(counts) }, {}, () => []);
  }

  /** The fleet becomes exactly these ids; a new id gets a new target. */
  async become(...ids: string[]): Promise<void> {
    for (const id of ids) if (!this.members.has(id)) this.members.set(id, new FakeDeployTarget({ clock: this.clock }));
    this.deployer.setTargets(ids.map((id) => ({ id, target: this.members.get(id) as FakeDeployTarget })));
    await flushMicrotasks();
  }

  member(id: string): FakeDeployTarget {
    return this.members.get(id) as FakeDeployTarget;
  }
}

let fleet: ChangingFleet | undefined;
afterEach(async () => {
  await fleet?.stop();
  fleet = undefined;
});

async function started(): Promise<ChangingFleet> {
  fleet = await new ChangingFleet().start();
  return fleet;
}

describe('Deployer with an instance set that changes during the term', () => {
  it('gives an instance added mid-term a full sync of the newest render at once', async () => {
    const f = await started();
    await f.become('ns/a@10.0.0.1');
    const first = await f.renderText(oneServer('10.0.0.1:80'));
    expect(f.member('ns/a@10.0.0.1').running).toBe(first.checksum);
    await f.become('ns/a@10.0.0.1', 'ns/b@10.0.0.2');
    expect(f.member('ns/b@10.0.0.2').running).toBe(first.checksum);
    expect(f.member('ns/b@10.0.0.2').reloads).toHaveLength(1);
    // The instance already there is not touched again.
    expect(f.member('ns/a@10.0.0.1').reloads).toHaveLength(1);
    expect(f.deployer.fleetCounts).toEqual({ in_sync: 2, behind: 0, unreachable: 0, fenced: 0 });
  });

  it('never sends a joining instance a render the gate refused: it gets the last good one', async () => {
    const f = await started();
    await f.become('ns/a@10.0.0.1');
    const good = await f.renderText(oneServer('10.0.0.1:80'));
    await f.clock.advance(2000);
    await f.renderText(oneServer('10.0.0.1:80', 'bogus'), false);
    await f.become('ns/a@10.0.0.1', 'ns/b@10.0.0.2');
    const joined = f.member('ns/b@10.0.0.2');
    expect(joined.running).toBe(good.checksum);
    expect(joined.calls.filter((c) => c.type === 'write').map((c) => (c as { checksum: string }).checksum)).toEqual([good.checksum]);
    expect(f.deployer.latched).toBe(true);
  });

  it('gives a joining instance nothing while no render has passed the gate yet', async () => {
    const f = await started();
    await f.renderText(oneServer('10.0.0.1:80'), null);
    await f.become('ns/b@10.0.0.2');
    await f.clock.advance(5000);
    expect(f.member('ns/b@10.0.0.2').calls).toEqual([]);
  });

  it('sends a dropped instance nothing more and stops counting it', async () => {
    const f = await started();
    await f.become('ns/a@10.0.0.1', 'ns/b@10.0.0.2');
    await f.renderText(oneServer('10.0.0.1:80'));
    const dropped = f.member('ns/b@10.0.0.2');
    const before = dropped.calls.length;
    await f.become('ns/a@10.0.0.1');
    expect(f.deployer.instanceIds).toEqual(['ns/a@10.0.0.1']);
    expect(f.deployer.fleetCounts).toEqual({ in_sync: 1, behind: 0, unreachable: 0, fenced: 0 });
    // The metrics recount at once, without waiting for the next deployment.
    expect(f.counted.at(-1)).toEqual({ in_sync: 1, behind: 0, unreachable: 0, fenced: 0 });
    await f.clock.advance(2000);
    const next = await f.renderText(oneServer('10.0.0.1:80', '40s'));
    await f.clock.advance(5000);
    expect(f.member('ns/a@10.0.0.1').running).toBe(next.checksum);
    expect(dropped.calls).toHaveLength(before);
  });

  it('treats the same pod with a new IP as a new instance, and an id listed again as the same one', async () => {
    const f = await started();
    await f.become('ns/a@10.0.0.1');
    const first = await f.renderText(oneServer('10.0.0.1:80'));
    await f.become('ns/a@10.0.0.1');
    expect(f.member('ns/a@10.0.0.1').reloads).toHaveLength(1);
    await f.become('ns/a@10.0.0.7');
    expect(f.member('ns/a@10.0.0.7').running).toBe(first.checksum);
    expect(f.deployer.instanceIds).toEqual(['ns/a@10.0.0.7']);
    expect(() => f.deployer.setTargets([{ id: 'x', target: f.member('ns/a@10.0.0.7') }, { id: 'x', target: f.member('ns/a@10.0.0.7') }])).toThrow(/twice/);
  });

  it('starts a new term with the instances added before it', async () => {
    const f = new ChangingFleet();
    fleet = f;
    await f.become('ns/a@10.0.0.1');
    await f.start();
    const first = await f.renderText(oneServer('10.0.0.1:80'));
    expect(f.member('ns/a@10.0.0.1').running).toBe(first.checksum);
  });
});
