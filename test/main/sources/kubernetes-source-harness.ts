// A KubernetesSource against a fake API server, as its tests run it: `useKubernetesSource()`
// gives each test a fresh server, a scratch folder for kubeconfigs and a stop signal, and after
// the test stops the source and waits for it to end.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { EventBus } from '../../../src/main/bus/event-bus.js';
import { systemClock, type Clock } from '../../../src/main/core/clock.js';
import type { ControllerEvent } from '../../../src/main/events/events.js';
import type { BackoffOptions } from '../../../src/main/sources/kubernetes/backoff.js';
import { loadKubeConfig } from '../../../src/main/sources/kubernetes/kube-config.js';
import { kubernetesSource } from '../../../src/main/sources/kubernetes/kubernetes-source.js';
import { WatcherSet } from '../../../src/main/sources/watcher-set.js';
import { StoreProvider } from '../../../src/main/stores/store-provider.js';
import type { StoreDefinition } from '../../../src/worker/protocol.js';
import { FakeKubeApi, type FakeObject } from '../../helpers/fake-kube-api.js';
import { silentLogger } from '../../helpers/loggers.js';

export const SERVICES = '/api/v1/services';
export const INGRESSES = '/apis/networking.k8s.io/v1/ingresses';
export const CLASSES = '/apis/networking.k8s.io/v1/ingressclasses';

export const DEFINITIONS: StoreDefinition[] = [
  { name: 'services', apiVersion: 'v1', kind: 'Service', indexBy: ['metadata.namespace', 'metadata.name'], debounceMs: 0 },
  { name: 'ingresses', apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', indexBy: ['metadata.namespace', 'metadata.name'], debounceMs: 0 },
  { name: 'ingressclasses', apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', indexBy: ['metadata.name'], debounceMs: 0 },
];

export const service = (namespace: string, name: string, port = 80, labels: Record<string, string> = {}): FakeObject => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace, labels },
  spec: { ports: [{ port }] },
});
export const ingress = (namespace: string, name: string): FakeObject => ({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name, namespace }, spec: {} });
export const ingressClass = (name: string): FakeObject => ({ apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', metadata: { name }, spec: { controller: 'haptic' } });

export interface StartOptions {
  readonly clock?: Clock;
  readonly namespace?: string;
  readonly definitions?: readonly StoreDefinition[];
  readonly backoff?: BackoffOptions;
  readonly pageSize?: number;
}

/** One test's fake API server, scratch folder and stop signal; fresh for every test. */
export class KubernetesSourceHarness {
  api!: FakeKubeApi;
  dir!: string;
  stop!: AbortController;
  /** The running source; awaited after the test. */
  running: Promise<void> | undefined;

  /** Runs a source with a WatcherSet into fresh stores, against the fake server. */
  async start(options: StartOptions = {}) {
    const definitions = options.definitions ?? DEFINITIONS;
    const clock = options.clock ?? systemClock;
    const kubeConfig = loadKubeConfig(await this.api.writeKubeconfig(this.dir));
    const bus = new EventBus<ControllerEvent>({ logger: silentLogger() });
    const stores = new StoreProvider();
    const watchers = new WatcherSet({ definitions, stores, bus, clock, logger: silentLogger() });
    const synchronized: ControllerEvent[] = [];
    const subscription = bus.subscribe('test', { types: ['index.synchronized'] });
    void (async () => {
      for await (const event of subscription) synchronized.push(event);
    })();
    bus.start();
    const source = kubernetesSource({
      kubeConfig,
      clock,
      logger: silentLogger(),
      ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
      ...(options.backoff === undefined ? {} : { backoff: options.backoff }),
      ...(options.pageSize === undefined ? {} : { pageSize: options.pageSize }),
    });
    this.running = source.run(definitions, watchers, this.stop.signal);
    const keys = (store: string): string[] => stores.store(store).list().map((o) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`);
    return { stores, watchers, synchronized, keys, close: () => subscription.close() };
  }

  /** Lists (watch false) or watches (true) of services, in any namespace. */
  serviceRequests(watch: boolean) {
    return this.api.requests.filter((r) => r.path.endsWith('/services') && r.watch === watch);
  }
}

/** Registers the per-test set-up and tear-down, and returns the harness they fill. */
export function useKubernetesSource(): KubernetesSourceHarness {
  const harness = new KubernetesSourceHarness();
  beforeEach(async () => {
    harness.api = await FakeKubeApi.start();
    harness.dir = await mkdtemp(join(tmpdir(), 'kubernetes-source-'));
    harness.stop = new AbortController();
    harness.running = undefined;
  });
  afterEach(async () => {
    harness.stop.abort();
    await harness.running;
    await harness.api.close();
    await rm(harness.dir, { recursive: true, force: true });
  });
  return harness;
}
