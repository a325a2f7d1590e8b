import { describe, expect, it } from 'vitest';
import { EventBus } from '../../../src/main/bus/event-bus.js';
import { systemClock } from '../../../src/main/core/clock.js';
import type { ControllerEvent } from '../../../src/main/events/events.js';
import { loadKubeConfig } from '../../../src/main/sources/kubernetes/kube-config.js';
import { kubernetesSource } from '../../../src/main/sources/kubernetes/kubernetes-source.js';
import { WatcherSet } from '../../../src/main/sources/watcher-set.js';
import { StoreProvider } from '../../../src/main/stores/store-provider.js';
import type { StoreDefinition } from '../../../src/worker/protocol.js';
import { eventually } from '../../helpers/eventually.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { silentLogger } from '../../helpers/loggers.js';
import { DEFINITIONS, SERVICES, service, useKubernetesSource } from './kubernetes-source-harness.js';

const kube = useKubernetesSource();

describe('KubernetesSource', () => {
  it('sends fewer than 10 requests per second while idle', async () => {
    kube.api.upsert(SERVICES, service('shop', 'web'));
    const { watchers } = await kube.start();
    await watchers.whenSynchronized();
    await eventually(() => kube.api.openWatches === DEFINITIONS.length, 'every watch open');
    const before = kube.api.requestCount;
    const began = performance.now();
    // Real time on purpose: this measures what the source does on its own, with no timer to drive.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const seconds = (performance.now() - began) / 1000;
    const rate = (kube.api.requestCount - before) / seconds;
    console.log(`idle request rate: ${rate.toFixed(2)} requests/s over ${seconds.toFixed(1)} s (${DEFINITIONS.length} watches open)`);
    expect(rate).toBeLessThan(10);
  });

  it('closes every watch when stopped, then resolves', async () => {
    const { watchers } = await kube.start();
    await watchers.whenSynchronized();
    await eventually(() => kube.api.openWatches === DEFINITIONS.length, 'every watch open');
    kube.stop.abort();
    await kube.running;
    await eventually(() => kube.api.openWatches === 0, 'every watch closed at the server');
    const count = kube.api.requestCount;
    kube.api.upsert(SERVICES, service('shop', 'after-stop'));
    expect(kube.api.requestCount).toBe(count);
  });

  it('resolves when stopped while a failing list waits for its retry', async () => {
    const clock = new FakeClock();
    kube.api.failNext(100);
    await kube.start({ clock });
    await eventually(() => clock.pending === DEFINITIONS.length, 'every retry timer');
    kube.stop.abort();
    await kube.running;
    expect(clock.pending).toBe(0);
  });

  it('rejects at once for a definition no API server could serve', async () => {
    const kubeConfig = loadKubeConfig(await kube.api.writeKubeconfig(kube.dir));
    const source = kubernetesSource({ kubeConfig, clock: systemClock, logger: silentLogger() });
    const bad: StoreDefinition = { name: 'bad', apiVersion: 'a/b/c', kind: 'Thing', indexBy: ['metadata.name'] };
    const watchers = new WatcherSet({ definitions: [bad], stores: new StoreProvider(), bus: new EventBus<ControllerEvent>({ logger: silentLogger() }), clock: systemClock, logger: silentLogger() });
    await expect(source.run([bad], watchers, kube.stop.signal)).rejects.toThrow(/apiVersion/);
    expect(kube.api.requestCount).toBe(0);
  });
});
