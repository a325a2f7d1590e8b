import { describe, expect, it } from 'vitest';
import { EventBus } from '../../../src/main/bus/event-bus.js';
import type { ControllerEvent } from '../../../src/main/events/events.js';
import { checkHaproxyPod, haproxyPodsDefinition } from '../../../src/main/fleet/haproxy-pods.js';
import { WatcherSet } from '../../../src/main/sources/watcher-set.js';
import { StoreProvider } from '../../../src/main/stores/store-provider.js';
import type { KubeObject } from '../../../src/worker/protocol.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { silentLogger } from '../../helpers/loggers.js';

const POD_STORE = haproxyPodsDefinition('app=haproxy', 'haptic');

const pod = (name: string, podIP: string, resourceVersion: string): KubeObject =>
  ({ metadata: { name, namespace: 'haptic', resourceVersion, labels: { app: 'haproxy' } }, spec: { containers: [] }, status: { phase: 'Running', podIP } }) as KubeObject;

function rig() {
  const bus = new EventBus<ControllerEvent>({ logger: silentLogger() });
  const stores = new StoreProvider();
  const watchers = new WatcherSet({ definitions: [POD_STORE], stores, bus, clock: new FakeClock(), logger: silentLogger(), checks: { [POD_STORE.name]: checkHaproxyPod } });
  return { watchers, store: stores.store(POD_STORE.name) };
}

describe("a store's own check of the objects entering it", () => {
  it('stores what the check returns, not what the source delivered', () => {
    const { watchers, store } = rig();
    watchers.upsert(POD_STORE.name, pod('a', '10.0.0.1', '1'));
    expect(store.get('haptic/a')).toEqual({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a', namespace: 'haptic', resourceVersion: '1' }, status: { phase: 'Running', podIP: '10.0.0.1' } });
  });

  it('refuses one bad object alone, and an update it refuses takes the older version out too', () => {
    const { watchers, store } = rig();
    watchers.upsert(POD_STORE.name, pod('a', '10.0.0.1', '1'));
    watchers.upsert(POD_STORE.name, pod('b', '10.0.0.2', '1'));
    watchers.upsert(POD_STORE.name, pod('a', '10.0.0.1,10.0.0.9', '2'));
    watchers.upsert(POD_STORE.name, pod('c', 'nope', '1'));
    expect(store.list().map((o) => o.metadata.name)).toEqual(['b']);
  });
});
