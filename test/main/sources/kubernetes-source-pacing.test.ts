import { describe, expect, it } from 'vitest';
import type { StoreDefinition } from '../../../src/worker/protocol.js';
import { eventually } from '../../helpers/eventually.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { DEFINITIONS, SERVICES, service, useKubernetesSource } from './kubernetes-source-harness.js';

const kube = useKubernetesSource();

describe('KubernetesSource', () => {
  it('retries a failing list with a growing, capped backoff and never faster than it allows', async () => {
    const clock = new FakeClock();
    kube.api.upsert(SERVICES, service('shop', 'web'));
    kube.api.failNext(5);
    const definitions = [DEFINITIONS[0] as StoreDefinition];
    const { watchers, keys } = await kube.start({ clock, definitions, backoff: { initialMs: 100, maxMs: 500, random: () => 0 } });

    const delays: number[] = [];
    for (let failure = 1; failure <= 5; failure++) {
      await eventually(() => kube.api.requestCount === failure && clock.pending === 1, `failure ${failure} and its retry timer`);
      // Parked on the backoff timer: not a single request more until the clock moves.
      expect(kube.api.requestCount).toBe(failure);
      const delay = (clock.nextDue ?? 0) - clock.now();
      delays.push(delay);
      await clock.advance(delay);
    }
    await watchers.whenSynchronized();
    expect(delays).toEqual([100, 200, 400, 500, 500]);
    expect(keys('services')).toEqual(['shop/web']);
    expect(watchers.problems).toBe(5);
    // Five failed lists, one good list, one watch.
    await eventually(() => kube.api.openWatches === 1, 'the watch');
    expect(kube.api.requests.map((r) => (r.watch ? 'watch' : 'list'))).toEqual(['list', 'list', 'list', 'list', 'list', 'list', 'watch']);
  });

  it('takes a resource the server does not serve (a missing CRD) as synced and empty, warns once, and picks it up once it is served', async () => {
    const clock = new FakeClock();
    const GATEWAYS = '/apis/gateway.networking.k8s.io/v1/gateways';
    kube.api.unserved.add(GATEWAYS);
    kube.api.upsert(SERVICES, service('shop', 'web'));
    const gatewayDefinition: StoreDefinition = { name: 'gateways', apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', indexBy: ['metadata.namespace', 'metadata.name'], debounceMs: 0 };
    const definitions = [DEFINITIONS[0] as StoreDefinition, gatewayDefinition];
    const { watchers, keys } = await kube.start({ clock, definitions, backoff: { initialMs: 100, maxMs: 400, random: () => 0 } });

    await watchers.whenSynchronized();
    expect(keys('services')).toEqual(['shop/web']);
    expect(keys('gateways')).toEqual([]);
    const gatewayLists = () => kube.api.requests.filter((r) => r.path === GATEWAYS && !r.watch).length;
    for (let retry = 1; retry <= 4; retry++) {
      await eventually(() => gatewayLists() === retry && clock.pending >= 1, `404 number ${retry} and its retry timer`);
      await clock.advance((clock.nextDue ?? 0) - clock.now());
    }
    expect(watchers.problems).toBe(1);

    kube.api.unserved.delete(GATEWAYS);
    kube.api.upsert(GATEWAYS, { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { name: 'edge', namespace: 'shop' }, spec: { gatewayClassName: 'haptic', listeners: [] } });
    for (let i = 0; i < 5 && !keys('gateways').includes('shop/edge'); i++) {
      await eventually(() => clock.pending >= 1 || keys('gateways').includes('shop/edge'), 'the next retry');
      if (!keys('gateways').includes('shop/edge')) await clock.advance((clock.nextDue ?? 0) - clock.now());
    }
    await eventually(() => keys('gateways').includes('shop/edge'), 'the gateway listed once the resource is served');
    expect(watchers.problems).toBe(1);
  });

  it('restarts a watch that fails with 500 after the backoff, from where it left off', async () => {
    const clock = new FakeClock();
    kube.api.upsert(SERVICES, service('shop', 'web'));
    const definitions = [DEFINITIONS[0] as StoreDefinition];
    const { watchers, keys } = await kube.start({ clock, definitions, backoff: { initialMs: 100, random: () => 0 } });
    await watchers.whenSynchronized();
    await eventually(() => kube.api.openWatches === 1, 'the watch');

    kube.api.failNext(3);
    kube.api.dropWatches();
    kube.api.upsert(SERVICES, service('shop', 'cart'));
    // One backoff for the drop, one for each 500; every retry waits for the clock.
    let advanced = 0;
    const watching = (): boolean => kube.api.openWatches === 1;
    while (!watching()) {
      await eventually(() => clock.pending > 0 || watching(), 'a retry timer or the watch');
      if (watching()) break;
      const requests = kube.api.requestCount;
      const delay = (clock.nextDue ?? 0) - clock.now();
      expect(delay).toBeGreaterThanOrEqual(100);
      await clock.advance(delay);
      advanced++;
      await eventually(() => kube.api.requestCount > requests, 'the retry');
      expect(kube.api.requestCount).toBe(requests + 1);
    }
    expect(advanced).toBe(4);
    await eventually(() => keys('services').includes('shop/cart'), 'the change made while the watch failed');
    // Every watch attempt after the drop waited for the clock; none was relisted (no 410).
    const afterDrop = kube.api.requests.slice(2);
    expect(afterDrop.every((r) => r.watch)).toBe(true);
    expect(afterDrop.length).toBe(advanced);
    expect(kube.api.statuses.filter((s) => s === 500)).toHaveLength(3);
  });

  it('paces watches that the server ends right after they start instead of reconnecting in a hot loop', async () => {
    const clock = new FakeClock();
    const { watchers } = await kube.start({ clock, definitions: [DEFINITIONS[0] as StoreDefinition], backoff: { initialMs: 100, random: () => 0 } });
    await watchers.whenSynchronized();
    await eventually(() => kube.api.openWatches === 1, 'the watch');
    kube.api.endWatchesAtOnce = true;
    kube.api.endWatches();

    const delays: number[] = [];
    for (let round = 0; round < 4; round++) {
      await eventually(() => clock.pending === 1, 'the pacing timer');
      const requests = kube.api.requestCount;
      const delay = (clock.nextDue ?? 0) - clock.now();
      delays.push(delay);
      await clock.advance(delay);
      await eventually(() => kube.api.requestCount === requests + 1, 'the next watch');
    }
    expect(delays).toEqual([100, 200, 400, 800]);
    expect(watchers.problems).toBe(0);
  });

  it('paces relists when every watch is answered with 410 Gone', async () => {
    const clock = new FakeClock();
    const { watchers } = await kube.start({ clock, definitions: [DEFINITIONS[0] as StoreDefinition], backoff: { initialMs: 100, random: () => 0 } });
    await watchers.whenSynchronized();
    await eventually(() => kube.api.openWatches === 1, 'the watch');
    kube.api.failNext(3, 410, (r) => r.watch);
    kube.api.endWatches();

    for (let round = 0; round < 3; round++) {
      await eventually(() => clock.pending === 1, 'the pacing timer');
      const requests = kube.api.requestCount;
      await clock.advance((clock.nextDue ?? 0) - clock.now());
      // One watch, answered 410, then one relist: never more before the clock moves again.
      await eventually(() => kube.api.requestCount === requests + 2 && clock.pending === 1, 'one watch and one relist');
    }
    await clock.advance((clock.nextDue ?? 0) - clock.now());
    await eventually(() => kube.api.openWatches === 1, 'a watch that stays open');
    expect(kube.api.statuses.filter((s) => s === 410)).toHaveLength(3);
  });
});
