// HAProxy's own verdict on rendered output: the files are written to a temporary directory in
// the layout the config refers to, `haproxy -c` must accept them, and each accepted config is
// then started once in a real HAProxy (loopback ports) and must serve /healthz. With CI=true
// these tests always run (and fail when HAProxy is missing); elsewhere they are skipped, with a
// notice, when no HAProxy binary can be run.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkConfigFile, haproxyBinary, haproxyVersion } from '../../src/main/haproxy/haproxy-check.js';
import { InlinePipeline } from '../../src/main/pipeline/inline-pipeline.js';
import { loadManifests } from '../../src/main/sources/manifest/manifest-loader.js';
import { EXAMPLES_DIR } from '../../src/main/core/paths.js';
import type { PipelineResult } from '../../src/main/pipeline/pipeline.js';
import { outputPathsIn, writeRenderOutput, type OutputFiles } from '../../src/main/output/render-output.js';
import { StoreProvider } from '../../src/main/stores/store-provider.js';
import { SyntheticCluster } from '../../src/main/sources/synthetic/synthetic-cluster.js';
import { loadTemplateSet } from '../../src/main/template-set/template-set.js';
import type { KubeObject, TemplateSetSource } from '../../src/worker/protocol.js';
import { endpointSlice, ingress, rule, service, storeNameFor, tlsSecret } from '../helpers/cluster.js';
import { freePorts, provesToRun, startHaproxy } from '../helpers/haproxy-harness.js';

const ON_CI = process.env.CI === 'true';
const version = await haproxyVersion();
const skip = !ON_CI && version === null;
if (skip) {
  console.warn(
    `NOTICE: HAProxy (${haproxyBinary()}) cannot be run here; skipping the haproxy -c tests in test/haproxy.test.ts. ` +
      'Install HAProxy (or set HAPROXY_BIN) to run them; with CI=true they are mandatory.',
  );
}

let root: string;
let counter = 0;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'haproxy-check-'));
});

afterAll(async () => {
  if (root !== undefined) await rm(root, { recursive: true, force: true });
});

interface Written {
  readonly dirs: OutputFiles;
  readonly result: PipelineResult;
}

/** A fresh output directory and the default template set pointed at it, on free loopback ports. */
async function prepare(extra: Record<string, unknown> = {}): Promise<{ dirs: OutputFiles; set: TemplateSetSource; statusPort: number }> {
  const dirs = outputPathsIn(join(root, `out-${++counter}`));
  const [httpPort, httpsPort, statusPort] = (await freePorts(3)) as [number, number, number];
  const ports = { bindAddress: '127.0.0.1', httpPort, httpsPort, statusPort };
  const set = await loadTemplateSet(undefined, { mapsDir: dirs.mapsDir, filesDir: dirs.filesDir, certsDir: dirs.certsDir, ...ports, ...extra });
  return { dirs, set, statusPort };
}

/** Renders the stores with the set through the InlinePipeline and writes the result to `dirs`. */
async function renderAndWrite(set: TemplateSetSource, stores: StoreProvider, dirs: OutputFiles): Promise<Written> {
  const result = await new InlinePipeline({ templateSet: set }).execute(new AbortController().signal, stores, 'reconcile');
  await writeRenderOutput(dirs, result.haproxyConfig, result.auxiliaryFiles);
  return { dirs, result };
}

function storesWith(set: TemplateSetSource, objects: readonly KubeObject[]): StoreProvider {
  const stores = new StoreProvider(set.stores);
  for (const object of objects) stores.store(storeNameFor(object, set.stores)).upsert(object);
  return stores;
}

describe('haproxy -c on rendered output', () => {
  it.runIf(ON_CI)('finds HAProxy installed when CI=true', () => {
    expect(version, `CI=true requires a runnable HAProxy (${haproxyBinary()})`).not.toBeNull();
  });

  it.skipIf(skip)('accepts the rendered example cluster, maps, crt-list and certificate included', async () => {
    const { dirs, set, statusPort } = await prepare();
    const loaded = await loadManifests(EXAMPLES_DIR, set.stores);
    const stores = new StoreProvider(set.stores);
    for (const { store, object } of loaded.objects) stores.store(store).upsert(object);
    const { result } = await renderAndWrite(set, stores, dirs);
    // HAProxy loads the maps and certificates from the temporary directory, not from /etc.
    expect(result.haproxyConfig).toContain(`map(${dirs.mapsDir}/host-exact.map)`);
    expect(result.haproxyConfig).toContain(`crt-list ${dirs.filesDir}/crt-list.txt`);
    expect(Object.keys(result.auxiliaryFiles.certificates)).toEqual(['shop_shop-tls.pem']);
    const verdict = await checkConfigFile(dirs.configFile);
    expect(verdict.ok, verdict.message).toBe(true);
    await provesToRun(dirs.configFile, { statusPort });
  });

  it.skipIf(skip)('accepts a synthetic cluster of 1,000 Ingresses', async () => {
    const { dirs, set, statusPort } = await prepare();
    const stores = new StoreProvider(set.stores);
    new SyntheticCluster({ ingresses: 1000, seed: 7 }).populate(stores);
    expect(stores.counts()).toMatchObject({ ingresses: 1000, services: 1000, endpointslices: 1000 });
    const { result } = await renderAndWrite(set, stores, dirs);
    expect(result.haproxyConfig.match(/^backend ing_/gm)).toHaveLength(1000);
    expect(result.warnings).toEqual([]);
    const verdict = await checkConfigFile(dirs.configFile);
    expect(verdict.ok, verdict.message).toBe(true);
    await provesToRun(dirs.configFile, { statusPort });
  });

  it.skipIf(skip)('accepts IPv6 servers, wildcard hosts, host-less paths, empty backends and a runtime socket', async () => {
    const { dirs, set, statusPort } = await prepare({ runtimeSocket: join(root, 'admin.sock'), serverSlots: 3 });
    const objects = [
      ingress('edge', 'mixed', {
        tls: [{ hosts: ['*.edge.example.com'], secretName: 'edge-tls' }],
        rules: [
          rule('*.edge.example.com', { path: '/', service: 'v6' }, { path: '/login', pathType: 'Exact', service: 'v6' }),
          rule(undefined, { path: '/healthz', pathType: 'Exact', service: 'v6' }, { path: '/static', pathType: 'ImplementationSpecific', service: 'v6' }),
          rule('edge.example.com', { path: '/ghost', service: 'ghost' }),
        ],
      }),
      service('edge', 'v6'),
      { ...endpointSlice('edge', 'v6', ['fd00::1', 'fd00::2', { address: 'fd00::3', ready: false }, '2001:db8::7']), addressType: 'IPv6' },
      tlsSecret('edge', 'edge-tls'),
    ];
    const { result } = await renderAndWrite(set, storesWith(set, objects), dirs);
    expect(result.haproxyConfig).toContain('server srv1 [2001:db8::7]:8080\n');
    expect(result.haproxyConfig).toContain(`stats socket ${join(root, 'admin.sock')} mode 600 level admin`);
    expect(result.auxiliaryFiles.maps['host-regex.map']).not.toBe('');
    expect(result.auxiliaryFiles.maps['path-exact.map']).not.toBe('');
    const verdict = await checkConfigFile(dirs.configFile);
    expect(verdict.ok, verdict.message).toBe(true);
    await provesToRun(dirs.configFile, { statusPort, adminSocket: join(root, 'admin.sock') });
  });

  it.skipIf(skip)('refuses a config HAProxy cannot parse, so the checks above can fail', async () => {
    const file = join(root, 'broken.cfg');
    await writeFile(file, 'defaults\n  mode http\n  no-such-keyword here\n');
    const verdict = await checkConfigFile(file);
    expect(verdict.ok).toBe(false);
    expect(verdict.refused).toBe(true);
    expect(verdict.message).toContain('no-such-keyword');
    // Started for real, it fails too, with HAProxy's alert in the error.
    await expect(startHaproxy(file)).rejects.toMatchObject({ code: 'HAPROXY_START_FAILED', message: expect.stringContaining('no-such-keyword') });
  });
});
