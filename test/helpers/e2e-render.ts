// Render-to-directory for end-to-end tests: a list of objects rendered with the default template
// set into a fresh output directory, laid out as `render` writes it (haproxy.cfg, maps/, files/,
// certs/, the self-signed default certificate), bound to free loopback ports, with loopback
// endpoints allowed and the Runtime API socket in <out>/run/admin.sock; and `withHaproxy`, which
// runs a real HAProxy on it for the length of a test body.
import { join } from 'node:path';
import { writeRenderOutput } from '../../src/main/output/render-output.js';
import { outputPathsIn, type OutputFiles } from '../../src/main/output/output-directory.js';
import { InlinePipeline } from '../../src/main/pipeline/inline-pipeline.js';
import type { CheckedPipelineResult } from '../../src/main/pipeline/pipeline.js';
import { StoreProvider } from '../../src/main/stores/store-provider.js';
import { loadOutputTemplateSet } from '../../src/main/template-set/output-template-set.js';
import type { KubeObject } from '../../src/worker/protocol.js';
import { storeNameFor } from './cluster.js';
import { freePorts, startHaproxy, type RunningHaproxy } from './haproxy-harness.js';

export interface LoopbackPorts {
  readonly http: number;
  readonly https: number;
  readonly status: number;
}

export interface RenderedDir {
  readonly root: string;
  readonly paths: OutputFiles;
  readonly ports: LoopbackPorts;
  readonly adminSocket: string;
  readonly result: CheckedPipelineResult;
}

/** Renders `objects` into `root` (created if needed) with `values` on top of the e2e defaults. */
export async function renderToDir(root: string, objects: readonly KubeObject[], values: Record<string, unknown> = {}): Promise<RenderedDir> {
  const [http, https, status] = (await freePorts(3)) as [number, number, number];
  const adminSocket = join(root, 'run', 'admin.sock');
  const set = await loadOutputTemplateSet(root, undefined, {}, {
    bindAddress: '127.0.0.1',
    httpPort: http,
    httpsPort: https,
    statusPort: status,
    allowLoopbackEndpoints: true,
    runtimeSocket: adminSocket,
    ...values,
  });
  const stores = new StoreProvider(set.stores);
  for (const object of objects) stores.store(storeNameFor(object, set.stores)).upsert(object);
  const result = await new InlinePipeline({ templateSet: set }).execute(new AbortController().signal, stores, 'reconcile');
  const paths = outputPathsIn(root);
  await writeRenderOutput(paths, result.haproxyConfig, result.auxiliaryFiles);
  return { root, paths, ports: { http, https, status }, adminSocket, result };
}

/** Runs a real HAProxy on the rendered directory while `body` runs, and stops it afterwards. */
export async function withHaproxy<T>(rendered: RenderedDir, body: (haproxy: RunningHaproxy) => Promise<T>): Promise<T> {
  const haproxy = await startHaproxy(rendered.paths.configFile, { statusPort: rendered.ports.status, adminSocket: rendered.adminSocket });
  try {
    return await body(haproxy);
  } finally {
    await haproxy.stop();
  }
}
