import { describe, expect, it } from 'vitest';
import { eventually } from '../../helpers/eventually.js';
import { DEFINITIONS, SERVICES, service, useKubernetesSource } from './kubernetes-source-harness.js';

const kube = useKubernetesSource();

describe('KubernetesSource', () => {
  it('recovers from dropped watches and delivers the changes made while they were down', async () => {
    kube.api.upsert(SERVICES, service('shop', 'web'));
    const { watchers, keys } = await kube.start();
    await watchers.whenSynchronized();
    await eventually(() => kube.api.openWatches === DEFINITIONS.length, 'every watch open');

    const recoveries: number[] = [];
    for (let round = 0; round < 3; round++) {
      const began = performance.now();
      kube.api.dropWatches();
      kube.api.upsert(SERVICES, service('shop', `while-down-${round}`));
      await eventually(() => keys('services').includes(`shop/while-down-${round}`), `the change made while round ${round} was down`);
      await eventually(() => kube.api.openWatches === DEFINITIONS.length, 'every watch open again');
      recoveries.push(performance.now() - began);
    }
    console.log(`watch recovery after a drop: ${recoveries.map((ms) => `${ms.toFixed(0)} ms`).join(', ')}`);
    expect(watchers.problems).toBeGreaterThan(0);
    expect(Math.max(...recoveries)).toBeLessThan(5_000);
  });

  it('relists after a compaction and deletes the objects that vanished while the watch was down', async () => {
    kube.api.upsert(SERVICES, service('shop', 'web'));
    kube.api.upsert(SERVICES, service('shop', 'gone'));
    const { watchers, keys } = await kube.start();
    await watchers.whenSynchronized();
    await eventually(() => kube.api.openWatches === DEFINITIONS.length, 'every watch open');
    const listsBefore = kube.serviceRequests(false).length;

    const began = performance.now();
    kube.api.dropWatches();
    kube.api.delete(SERVICES, 'shop/gone');
    kube.api.upsert(SERVICES, service('shop', 'web', 9090));
    kube.api.compact();
    await eventually(() => !keys('services').includes('shop/gone'), 'the delete found by the relist');
    console.log(`relist after 410 Gone applied the deletion in ${(performance.now() - began).toFixed(0)} ms`);
    expect(keys('services')).toEqual(['shop/web']);
    expect(kube.serviceRequests(false).length).toBeGreaterThan(listsBefore);
    expect(kube.api.statuses.filter((s) => s === 500)).toEqual([]);
  });
});
