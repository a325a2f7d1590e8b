// HttpResourceStore: pending and accepted content in one internal store object per resource,
// each write a logged store change; and through a real worker pool, the content reaches worker
// replicas as ordinary store deltas that the `httpResource` helper reads.
import { afterAll, describe, expect, it } from 'vitest';
import { HTTP_RESOURCE_STORE, HttpResourceStore } from '../../../src/main/http-resources/http-resource-store.js';
import { PoolPipeline } from '../../../src/main/pipeline/pool/pool-pipeline.js';
import { StoreProvider } from '../../../src/main/stores/store-provider.js';
import { parseTemplateSet } from '../../../src/main/template-set/template-set.js';
import { silentLogger } from '../../helpers/loggers.js';

const content = (text: string): { content: string; checksum: string } => ({ content: text, checksum: `sum-${text}` });

describe('HttpResourceStore', () => {
  it('defines the internal store once, indexed by name', () => {
    const stores = new StoreProvider();
    new HttpResourceStore(stores);
    new HttpResourceStore(stores);
    expect(stores.definitions()).toEqual([{ name: HTTP_RESOURCE_STORE, indexBy: ['metadata.name'], kind: 'HttpResource', apiVersion: 'haptic-reconciler/v1' }]);
  });

  it('offers pending content next to the accepted one, accepts it, and drops it, one logged change each', () => {
    const stores = new StoreProvider();
    const store = new HttpResourceStore(stores);
    expect(store.offer('blocklist', content('a'))).toBe(1);
    expect(store.accept('blocklist')).toEqual(content('a'));
    expect(store.offer('blocklist', content('b'))).toBe(3);
    expect(store.get('blocklist')).toEqual({ apiVersion: 'haptic-reconciler/v1', kind: 'HttpResource', metadata: { name: 'blocklist' }, accepted: content('a'), pending: content('b') });
    expect(store.dropPending('blocklist')).toEqual(content('b'));
    expect(store.get('blocklist')).toEqual({ apiVersion: 'haptic-reconciler/v1', kind: 'HttpResource', metadata: { name: 'blocklist' }, accepted: content('a') });
    const changes = stores.changesSince(0);
    expect(changes.kind === 'delta' ? changes.changes.map((c) => c.store) : []).toEqual([HTTP_RESOURCE_STORE]);
    expect(stores.version).toBe(4);
  });

  it('writes nothing when there is nothing pending to accept or drop', () => {
    const stores = new StoreProvider();
    const store = new HttpResourceStore(stores);
    expect(store.accept('blocklist')).toBeUndefined();
    expect(store.dropPending('blocklist')).toBeUndefined();
    expect(stores.version).toBe(0);
  });
});

describe('HTTP resources in worker replicas', () => {
  let pool: PoolPipeline | undefined;
  afterAll(async () => {
    await pool?.destroy();
  });

  it('ships the content to pool workers as store deltas, and workers render pending, then accepted content', async () => {
    const templateSet = parseTemplateSet(
      [
        'httpResources:',
        '  - { name: banner, url: "http://127.0.0.1:1/banner" }',
        'haproxyConfig: |',
        '  global',
        '    daemon',
        '  # banner: {{httpResource "banner"}}',
      ].join('\n'),
      'pool.yaml',
    );
    pool = await PoolPipeline.create({ templateSet, threads: 1, logger: silentLogger() });
    const stores = new StoreProvider(templateSet.stores);
    const store = new HttpResourceStore(stores);
    const never = new AbortController().signal;

    expect((await pool.execute(never, stores, 'reconcile')).haproxyConfig).toContain('# banner: \n');
    store.offer('banner', content('hello'));
    expect((await pool.execute(never, stores, 'reconcile')).haproxyConfig).toContain('# banner: hello\n');
    store.accept('banner');
    store.offer('banner', content('bye'));
    expect((await pool.execute(never, stores, 'reconcile')).haproxyConfig).toContain('# banner: bye\n');
    store.dropPending('banner');
    const last = await pool.execute(never, stores, 'reconcile');
    expect(last.haproxyConfig).toContain('# banner: hello\n');
    expect(last.storeVersion).toBe(stores.version);
    expect(pool.stats).toMatchObject({ fullSyncs: 1, deltaSyncs: 3 });
  });
});
