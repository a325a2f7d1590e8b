import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { EventBus } from '../../../src/main/bus/event-bus.js';
import { Deployer, type FleetCounts } from '../../../src/main/deploy/deployer.js';
import { newEvent, type ControllerEvent, type EventOf } from '../../../src/main/events/events.js';
import { flushMicrotasks } from '../../helpers/async.js';
import { verdict } from '../../helpers/events.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { FakeDeployTarget } from '../../helpers/fake-deploy-target.js';
import { silentLogger } from '../../helpers/loggers.js';

function config(address: string, timeout = '50s'): string {
  return ['global', '', 'defaults', '  mode http', `  timeout server ${timeout}`, '', 'backend be', '  server srv1 ' + address, ''].join('\n');
}

/** A fleet Deployer whose instance set changes during the term, as discovered Pods come and go. */
class ChangingFleet {
  readonly clock = new FakeClock();
  readonly bus = new EventBus<ControllerEvent>({ logger: silentLogger() });
  readonly counted: FleetCounts[] = [];
  readonly deployer = new Deployer({ bus: this.bus, targets: [], clock: this.clock, logger: silentLogger(), minDeploymentIntervalMs: 2000, probeIntervalMs: 60_000, onFleetChanged: (counts) => this.counted.push(counts) });
  readonly targets = new Map<string, FakeDeployTarget>();
  readonly term = new AbortController();
  running: Promise<void> | undefined;
  #renders = 0;

  async start(): Promise<this> {
    this.bus.start();
    this.running = this.deployer.start(this.term.signal);
    await this.deployer.whenReady();
    await flushMicrotasks();
    return this;
  }

  /** The fleet becomes exactly these ids; a new id gets a new target. */
  async members(...ids: string[]): Promise<void> {
    for (const id of ids) if (!this.targets.has(id)) this.targets.set(id, new FakeDeployTarget({ clock: this.clock }));
    this.deployer.setTargets(ids.map((id) => ({ id, target: this.targets.get(id) as FakeDeployTarget })));
    await flushMicrotasks();
  }

  target(id: string): FakeDeployTarget {
    return this.targets.get(id) as FakeDeployTarget;
  }

  async render(haproxyConfig: string, ok: boolean | null = true): Promise<EventOf<'template.rendered'>> {
    const event = newEvent(
      'template.rendered',
      {
        renderId: `r${++this.#renders}`,
        haproxyConfig,
        auxiliaryFiles: { maps: {}, files: {}, certificates: {} },
        checksum: createHash('sha256').update(haproxyConfig).digest('hex'),
        configBytes: haproxyConfig.length,
        auxiliaryFileCount: 0,
        durationMs: 1,
        triggerReason: 'resource_change',
        coalescible: true,
        storeVersion: 1,
      },
      undefined,
      this.clock,
    );
    this.bus.publish(event);
    await flushMicrotasks();
    if (ok !== null) {
      this.bus.publish(verdict(event.renderId, { ok, refused: !ok }));
      await flushMicrotasks();
    }
    return event;
  }

  async stop(): Promise<void> {
    this.term.abort();
    await this.clock.runAll();
    await this.running;
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
    await f.members('ns/a@10.0.0.1');
    const first = await f.render(config('10.0.0.1:80'));
    expect(f.target('ns/a@10.0.0.1').running).toBe(first.checksum);
    await f.members('ns/a@10.0.0.1', 'ns/b@10.0.0.2');
    expect(f.target('ns/b@10.0.0.2').running).toBe(first.checksum);
    expect(f.target('ns/b@10.0.0.2').reloads).toHaveLength(1);
    // The instance already there is not touched again.
    expect(f.target('ns/a@10.0.0.1').reloads).toHaveLength(1);
    expect(f.deployer.fleetCounts).toEqual({ in_sync: 2, behind: 0, unreachable: 0, fenced: 0 });
  });

  it('never sends a joining instance a render the gate refused: it gets the last good one', async () => {
    const f = await started();
    await f.members('ns/a@10.0.0.1');
    const good = await f.render(config('10.0.0.1:80'));
    await f.clock.advance(2000);
    await f.render(config('10.0.0.1:80', 'bogus'), false);
    await f.members('ns/a@10.0.0.1', 'ns/b@10.0.0.2');
    const joined = f.target('ns/b@10.0.0.2');
    expect(joined.running).toBe(good.checksum);
    expect(joined.calls.filter((c) => c.type === 'write').map((c) => (c as { checksum: string }).checksum)).toEqual([good.checksum]);
    expect(f.deployer.latched).toBe(true);
  });

  it('gives a joining instance nothing while no render has passed the gate yet', async () => {
    const f = await started();
    await f.render(config('10.0.0.1:80'), null);
    await f.members('ns/b@10.0.0.2');
    await f.clock.advance(5000);
    expect(f.target('ns/b@10.0.0.2').calls).toEqual([]);
  });

  it('sends a dropped instance nothing more and stops counting it', async () => {
    const f = await started();
    await f.members('ns/a@10.0.0.1', 'ns/b@10.0.0.2');
    await f.render(config('10.0.0.1:80'));
    const dropped = f.target('ns/b@10.0.0.2');
    const before = dropped.calls.length;
    await f.members('ns/a@10.0.0.1');
    expect(f.deployer.instanceIds).toEqual(['ns/a@10.0.0.1']);
    expect(f.deployer.fleetCounts).toEqual({ in_sync: 1, behind: 0, unreachable: 0, fenced: 0 });
    // The metrics recount at once, without waiting for the next deployment.
    expect(f.counted.at(-1)).toEqual({ in_sync: 1, behind: 0, unreachable: 0, fenced: 0 });
    await f.clock.advance(2000);
    const next = await f.render(config('10.0.0.1:80', '40s'));
    await f.clock.advance(5000);
    expect(f.target('ns/a@10.0.0.1').running).toBe(next.checksum);
    expect(dropped.calls).toHaveLength(before);
  });

  it('treats the same pod with a new IP as a new instance, and an id listed again as the same one', async () => {
    const f = await started();
    await f.members('ns/a@10.0.0.1');
    const first = await f.render(config('10.0.0.1:80'));
    await f.members('ns/a@10.0.0.1');
    expect(f.target('ns/a@10.0.0.1').reloads).toHaveLength(1);
    await f.members('ns/a@10.0.0.7');
    expect(f.target('ns/a@10.0.0.7').running).toBe(first.checksum);
    expect(f.deployer.instanceIds).toEqual(['ns/a@10.0.0.7']);
    expect(() => f.deployer.setTargets([{ id: 'x', target: f.target('ns/a@10.0.0.7') }, { id: 'x', target: f.target('ns/a@10.0.0.7') }])).toThrow(/twice/);
  });

  it('starts a new term with the instances added before it', async () => {
    const f = new ChangingFleet();
    fleet = f;
    await f.members('ns/a@10.0.0.1');
    await f.start();
    const first = await f.render(config('10.0.0.1:80'));
    expect(f.target('ns/a@10.0.0.1').running).toBe(first.checksum);
  });
});
