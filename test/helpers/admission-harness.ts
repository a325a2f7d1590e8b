// The webhook under test: a real AdmissionServer over HTTPS on a free port, its checks on the
// real admission worker thread against a StoreProvider filled with `cluster`, and `reviewOf`,
// which posts a review and returns its response once the reply is a well-formed AdmissionReview.
import { afterAll, beforeAll, expect } from 'vitest';
import { startAdmissionServer, type AdmissionServer } from '../../src/main/admission/admission-server.js';
import { WorkerAdmissionChecker } from '../../src/main/admission/worker-admission-checker.js';
import { ControllerMetrics } from '../../src/main/metrics/metrics.js';
import { StoreProvider } from '../../src/main/stores/store-provider.js';
import type { KubeObject, TemplateSetSource } from '../../src/worker/protocol.js';
import { postReview, servingPem, type ReviewResponse, type ServingPem } from './admission-client.js';
import { defaultTemplateSet, storeNameFor } from './cluster.js';
import { silentLogger } from './loggers.js';

export interface AdmissionHarness {
  readonly set: TemplateSetSource;
  readonly pem: ServingPem;
  readonly server: AdmissionServer;
  readonly metrics: ControllerMetrics;
  /** Posts `body` (to `port`, the harness's server by default); the reply must be a 200 AdmissionReview. */
  reviewOf(body: string, port?: number): Promise<ReviewResponse['response']>;
}

export async function startAdmissionHarness(cluster: readonly KubeObject[]): Promise<AdmissionHarness> {
  const set = await defaultTemplateSet();
  const pem = await servingPem();
  const stores = new StoreProvider(set.stores);
  for (const object of cluster) stores.store(storeNameFor(object, set.stores)).upsert(object);
  const metrics = new ControllerMetrics({ defaultMetrics: false });
  const checker = new WorkerAdmissionChecker({ stores, templateSet: set });
  checker.start();
  const server = await startAdmissionServer({ address: '127.0.0.1:0', ...pem, checker, metrics, logger: silentLogger() });
  return {
    set,
    pem,
    server,
    metrics,
    async reviewOf(body, port = server.port) {
      const reply = await postReview(port, pem.cert, body);
      expect(reply.status).toBe(200);
      const parsed = JSON.parse(reply.text) as ReviewResponse;
      expect(parsed).toMatchObject({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' });
      return parsed.response;
    },
  };
}

/** The harness for every test of the file: started before them (`beforeAll`), closed after them. */
export function useAdmissionHarness(cluster: readonly KubeObject[]): AdmissionHarness {
  let harness: AdmissionHarness | undefined;
  beforeAll(async () => {
    harness = await startAdmissionHarness(cluster);
  });
  afterAll(async () => {
    await harness?.server.close();
  });
  const now = (): AdmissionHarness => {
    if (harness === undefined) throw new Error('useAdmissionHarness: read inside a test');
    return harness;
  };
  return {
    get set() {
      return now().set;
    },
    get pem() {
      return now().pem;
    },
    get server() {
      return now().server;
    },
    get metrics() {
      return now().metrics;
    },
    reviewOf: (body, port) => now().reviewOf(body, port),
  };
}
