import { describe, expect, it } from 'vitest';
import { EventBus } from '../../../src/main/bus/event-bus.js';
import type { DeployTarget } from '../../../src/main/deploy/deploy-target.js';
import type { FleetMember } from '../../../src/main/deploy/deployer.js';
import { newEvent, type ControllerEvent } from '../../../src/main/events/events.js';
import type { AgentEndpoint } from '../../../src/main/fleet/agent-client.js';
import { checkHaproxyPod } from '../../../src/main/fleet/haproxy-pods.js';
import { PodFleet } from '../../../src/main/fleet/pod-fleet.js';
import type { KubeObject } from '../../../src/worker/protocol.js';
import { flushMicrotasks } from '../../helpers/async.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { FakeDeployTarget } from '../../helpers/fake-deploy-target.js';
import { silentLogger } from '../../helpers/loggers.js';

const pod = (name: string, podIP: string | undefined, phase = 'Running', deleting = false): KubeObject =>
  checkHaproxyPod({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'haptic', ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
    status: { phase, ...(podIP === undefined ? {} : { podIP }) },
  });

function setUp() {
  const clock = new FakeClock();
  const bus = new EventBus<ControllerEvent>({ logger: silentLogger() });
  let pods: KubeObject[] = [];
  const calls: string[][] = [];
  const created: AgentEndpoint[] = [];
  const fleet = new PodFleet({
    bus,
    pods: () => pods,
    deployer: { setTargets: (members: readonly FleetMember[]) => calls.push(members.map((m) => m.id)) },
    agentPort: 5555,
    createTarget: (endpoint): DeployTarget => {
      created.push(endpoint);
      return new FakeDeployTarget({ clock });
    },
    logger: silentLogger(),
  });
  const changed = async (next: KubeObject[], store = 'haproxy-pods'): Promise<void> => {
    pods = next;
    bus.publish(newEvent('resource.index.updated', { resourceTypeName: store, changeStats: { created: 0, modified: 1, deleted: 0, isInitialSync: false } }, undefined, clock));
    await flushMicrotasks();
  };
  return { bus, fleet, calls, created, changed, setPods: (next: KubeObject[]) => (pods = next) };
}

describe('PodFleet', () => {
  it('makes the Pods that are targets the Deployer instances at the start of a term, and follows the store', async () => {
    const { bus, fleet, calls, created, changed, setPods } = setUp();
    setPods([pod('a', '10.0.0.1'), pod('b', undefined, 'Pending')]);
    const term = new AbortController();
    bus.start();
    const running = fleet.start(term.signal);
    await fleet.whenReady();
    expect(calls).toEqual([['haptic/a@10.0.0.1']]);
    await changed([pod('a', '10.0.0.1'), pod('b', '10.0.0.2')]);
    expect(calls.at(-1)).toEqual(['haptic/a@10.0.0.1', 'haptic/b@10.0.0.2']);
    expect(created).toEqual([{ host: '10.0.0.1', port: 5555 }, { host: '10.0.0.2', port: 5555 }]);
    await changed([pod('a', '10.0.0.1', 'Running', true), pod('b', '10.0.0.2')]);
    expect(calls.at(-1)).toEqual(['haptic/b@10.0.0.2']);
    await changed([pod('b', '10.0.0.2', 'Failed')]);
    expect(calls.at(-1)).toEqual([]);
    term.abort();
    await running;
  });

  it('leaves the Deployer alone when nothing changed, or when another store changed', async () => {
    const { bus, fleet, calls, changed, setPods } = setUp();
    setPods([pod('a', '10.0.0.1')]);
    const term = new AbortController();
    bus.start();
    const running = fleet.start(term.signal);
    await fleet.whenReady();
    await changed([pod('a', '10.0.0.1')]);
    await changed([pod('a', '10.0.0.1'), pod('b', '10.0.0.2')], 'ingresses');
    expect(calls).toHaveLength(1);
    term.abort();
    await running;
  });

  it('gives a Pod that came back with a new IP a new target', async () => {
    const { bus, fleet, calls, created, changed, setPods } = setUp();
    setPods([pod('a', '10.0.0.1')]);
    const term = new AbortController();
    bus.start();
    const running = fleet.start(term.signal);
    await fleet.whenReady();
    await changed([pod('a', '10.0.0.9')]);
    expect(calls.at(-1)).toEqual(['haptic/a@10.0.0.9']);
    expect(created.map((e) => e.host)).toEqual(['10.0.0.1', '10.0.0.9']);
    expect(fleet.targetIds).toEqual(['haptic/a@10.0.0.9']);
    term.abort();
    await running;
  });
});
