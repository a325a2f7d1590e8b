// The admission checker's worker thread: real worker, real replica sync from a StoreProvider.
import { beforeAll, describe, expect, it } from 'vitest';
import { WorkerAdmissionChecker } from '../../../src/main/admission/worker-admission-checker.js';
import { StoreProvider } from '../../../src/main/stores/store-provider.js';
import type { TemplateSetSource } from '../../../src/worker/protocol.js';
import { defaultTemplateSet, ingress, rule, withValues } from '../../helpers/cluster.js';
import { FakeClock } from '../../helpers/fake-clock.js';

const OLD = { creationTimestamp: '2024-01-01T00:00:00Z' };
let set: TemplateSetSource;
beforeAll(async () => {
  set = await defaultTemplateSet();
});

const request = (namespace: string, host: string) => ({
  kind: 'Ingress',
  operation: 'CREATE' as const,
  namespace,
  object: ingress(namespace, 'probe', { rules: [rule(host, { service: 'web' })] }),
});

describe('WorkerAdmissionChecker', () => {
  it('ships the changes made since the last review, as deltas after one full snapshot', async () => {
    const stores = new StoreProvider(set.stores);
    const checker = new WorkerAdmissionChecker({ stores, templateSet: set });
    try {
      expect(await checker.check(request('team-b', 'shop.example.com'))).toMatchObject({ allowed: true });
      stores.store('ingresses').upsert(ingress('team-a', 'shop', { rules: [rule('shop.example.com', { service: 'web' })] }, OLD));
      expect(await checker.check(request('team-b', 'shop.example.com'))).toMatchObject({ allowed: false, reason: 'HostConflict' });
      stores.store('ingresses').delete('team-a/shop');
      expect(await checker.check(request('team-b', 'shop.example.com'))).toMatchObject({ allowed: true });
      expect(checker.stats).toEqual({ fullSyncs: 1, deltaSyncs: 2, workersStarted: 1 });
    } finally {
      await checker.close();
    }
  });

  it('ships a large snapshot and a large delta in chunks, and reviews see all of them', async () => {
    const stores = new StoreProvider(set.stores);
    const claim = (i: number) => ingress(`team-${i}`, 'app', { rules: [rule(`app-${i}.example.com`, { service: 'web' })] }, OLD);
    for (let i = 0; i < 20; i++) stores.store('ingresses').upsert(claim(i));
    const checker = new WorkerAdmissionChecker({ stores, templateSet: set, syncChunk: 3 });
    try {
      // The last object of the snapshot's last chunk owns this host.
      expect(await checker.check(request('intruder', 'app-19.example.com'))).toMatchObject({ allowed: false, reason: 'HostConflict' });
      for (let i = 20; i < 30; i++) stores.store('ingresses').upsert(claim(i));
      expect(await checker.check(request('intruder', 'app-29.example.com'))).toMatchObject({ allowed: false, reason: 'HostConflict' });
      expect(await checker.check(request('intruder', 'app-30.example.com'))).toMatchObject({ allowed: true });
      expect(checker.stats).toEqual({ fullSyncs: 1, deltaSyncs: 1, workersStarted: 1 });
    } finally {
      await checker.close();
    }
  });

  it('fails the reviews of a worker that dies, and starts another only after a pause', async () => {
    const clock = new FakeClock();
    // A loop guard token the routing model refuses: the worker throws as it loads.
    const broken = withValues(set, { loopGuardToken: 'not one word' });
    const checker = new WorkerAdmissionChecker({ stores: new StoreProvider(set.stores), templateSet: broken, clock });
    try {
      await expect(checker.check(request('team-b', 'a.example.com'))).rejects.toThrow(/loopGuardToken/);
      await expect(checker.check(request('team-b', 'a.example.com'))).rejects.toThrow('the admission worker stopped and is restarting');
      await clock.advance(1000);
      await expect(checker.check(request('team-b', 'a.example.com'))).rejects.toThrow(/loopGuardToken/);
      expect(checker.stats.workersStarted).toBe(2);
    } finally {
      await checker.close();
    }
  });
});
