import { describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/main/core/clock.js';
import { loadKubeConfig } from '../../../src/main/sources/kubernetes/kube-config.js';
import { kubernetesSource } from '../../../src/main/sources/kubernetes/kubernetes-source.js';
import type { SourceSink } from '../../../src/main/sources/source.js';
import type { KubeObject, StoreDefinition } from '../../../src/worker/protocol.js';
import { eventually } from '../../helpers/eventually.js';
import { silentLogger } from '../../helpers/loggers.js';
import { CLASSES, DEFINITIONS, INGRESSES, ingress, ingressClass, SERVICES, service, useKubernetesSource } from './kubernetes-source-harness.js';

const kube = useKubernetesSource();

describe('KubernetesSource', () => {
  it('lists every resource into its store with kind and apiVersion set, then publishes index.synchronized once', async () => {
    kube.api.upsert(SERVICES, service('shop', 'web'));
    kube.api.upsert(SERVICES, service('blog', 'api'));
    kube.api.upsert(INGRESSES, ingress('shop', 'web'));
    kube.api.upsert(CLASSES, ingressClass('haproxy'));
    const { stores, watchers, synchronized, keys } = await kube.start();

    await watchers.whenSynchronized();
    expect(keys('services').sort()).toEqual(['blog/api', 'shop/web']);
    expect(keys('ingresses')).toEqual(['shop/web']);
    expect(keys('ingressclasses')).toEqual(['/haproxy']);
    // The fake server's LIST items carry no kind/apiVersion: the watcher stamps them.
    expect(stores.store('services').get('shop/web')).toMatchObject({ kind: 'Service', apiVersion: 'v1' });
    expect(stores.store('ingressclasses').get('haproxy')).toMatchObject({ kind: 'IngressClass', apiVersion: 'networking.k8s.io/v1' });
    await eventually(() => synchronized.length === 1, 'index.synchronized');
    expect(synchronized[0]).toMatchObject({ type: 'index.synchronized', resourceCounts: { services: 2, ingresses: 1, ingressclasses: 1 } });

    // A later relist (after a compaction) must not announce synchronization again.
    kube.api.compact();
    kube.api.dropWatches();
    kube.api.upsert(SERVICES, service('shop', 'late'));
    await eventually(() => keys('services').includes('shop/late'), 'the relisted service');
    expect(synchronized).toHaveLength(1);
  });

  it('follows adds, updates and deletes made after the initial list', async () => {
    kube.api.upsert(SERVICES, service('shop', 'web'));
    const { stores, watchers, keys } = await kube.start();
    await watchers.whenSynchronized();
    await eventually(() => kube.api.openWatches === DEFINITIONS.length, 'every watch open');

    kube.api.upsert(SERVICES, service('shop', 'cart'));
    await eventually(() => keys('services').includes('shop/cart'), 'the added service');
    kube.api.upsert(SERVICES, service('shop', 'web', 8080));
    await eventually(() => (stores.store('services').get('shop/web')?.spec as { ports: { port: number }[] }).ports[0]?.port === 8080, 'the update');
    kube.api.delete(SERVICES, 'shop/web');
    await eventually(() => !keys('services').includes('shop/web'), 'the delete');
    kube.api.upsert(CLASSES, ingressClass('other'));
    await eventually(() => stores.store('ingressclasses').get('other') !== undefined, 'the cluster-scoped add');
    expect(keys('services')).toEqual(['shop/cart']);
  });

  it('lists and watches namespaced resources in the given namespace only, and cluster-scoped ones without it', async () => {
    kube.api.upsert(SERVICES, service('shop', 'web'));
    kube.api.upsert(SERVICES, service('blog', 'api'));
    kube.api.upsert(CLASSES, ingressClass('haproxy'));
    const { watchers, keys } = await kube.start({ namespace: 'shop' });
    await watchers.whenSynchronized();
    kube.api.upsert(SERVICES, service('blog', 'other'));
    kube.api.upsert(SERVICES, service('shop', 'cart'));
    await eventually(() => keys('services').includes('shop/cart'), 'the change in the namespace');

    expect(keys('services').sort()).toEqual(['shop/cart', 'shop/web']);
    expect(keys('ingressclasses')).toEqual(['/haproxy']);
    const paths = new Set(kube.api.requests.map((r) => r.path));
    expect(paths).toEqual(new Set(['/api/v1/namespaces/shop/services', '/apis/networking.k8s.io/v1/namespaces/shop/ingresses', CLASSES]));
  });

  it('sends the label and field selectors of the store definition with every list and watch', async () => {
    kube.api.upsert(SERVICES, service('shop', 'web', 80, { tier: 'edge' }));
    kube.api.upsert(SERVICES, service('shop', 'db', 80, { tier: 'data' }));
    kube.api.upsert(SERVICES, service('blog', 'web', 80, { tier: 'edge' }));
    const definitions: StoreDefinition[] = [{ ...(DEFINITIONS[0] as StoreDefinition), labelSelector: 'tier=edge', fieldSelector: 'metadata.namespace=shop' }];
    const { watchers, keys } = await kube.start({ definitions });
    await watchers.whenSynchronized();
    await eventually(() => kube.api.openWatches === 1, 'the watch');
    kube.api.upsert(SERVICES, service('shop', 'cache', 80, { tier: 'data' }));
    kube.api.upsert(SERVICES, service('shop', 'api', 80, { tier: 'edge' }));
    await eventually(() => keys('services').includes('shop/api'), 'the selected add');

    expect(keys('services').sort()).toEqual(['shop/api', 'shop/web']);
    expect(kube.api.requests.length).toBe(2);
    for (const request of kube.api.requests) expect(request.query).toMatchObject({ labelSelector: 'tier=edge', fieldSelector: 'metadata.namespace=shop' });
  });

  it('pages through a list larger than one page', async () => {
    for (let i = 0; i < 7; i++) kube.api.upsert(SERVICES, service('shop', `svc-${i}`));
    const { watchers, keys } = await kube.start({ definitions: [DEFINITIONS[0] as StoreDefinition], pageSize: 3 });
    await watchers.whenSynchronized();
    expect(keys('services')).toHaveLength(7);
    expect(kube.api.requests.filter((r) => !r.watch).map((r) => r.query.continue ?? '')).toEqual(['', '3', '6']);
  });

  it('reports an object the sink refuses as a problem and delivers the others', async () => {
    kube.api.upsert(SERVICES, service('shop', 'bad'));
    kube.api.upsert(SERVICES, service('shop', 'good'));
    const kubeConfig = loadKubeConfig(await kube.api.writeKubeconfig(kube.dir));
    const taken: string[] = [];
    const problems: string[] = [];
    let synced = false;
    const sink: SourceSink = {
      upsert: (_resource: string, object: KubeObject) => {
        if (object.metadata.name === 'bad') throw new Error('refused');
        taken.push(object.metadata.name);
      },
      delete: () => undefined,
      synced: () => (synced = true),
      problem: (_resource, message) => problems.push(message),
    };
    kube.running = kubernetesSource({ kubeConfig, clock: systemClock, logger: silentLogger() }).run([DEFINITIONS[0] as StoreDefinition], sink, kube.stop.signal);
    await eventually(() => synced, 'the initial list');
    expect(taken).toEqual(['good']);
    expect(problems).toEqual(['Service shop/bad was not taken: refused']);
    expect(kube.api.requests.filter((r) => !r.watch)).toHaveLength(1);
  });
});
