// webhook: the admission webhook's review latency over HTTPS at N Ingresses in the stores, with a
// store change before every review (so each review first ships a delta to the admission worker)
// and a changed object in every review: an update of an existing Ingress (a path changes), and
// every fourth review a new Ingress from another namespace on an existing host, which runs the
// host-ownership check on a claimed host. Latency is timed by the client, request to answer, one
// review at a time on a keep-alive connection. Then, at the largest N, the main thread's
// event-loop delay while a client on another thread sends 200 reviews/s and the stores take 200
// changes/s. Targets: p99 <= 50 ms at 10,000; p99 at 10,000 <= 3 x p99 at 100; delay p99 < 20 ms.
// Then HTTPRoute reviews at N routes (route-cluster.ts), sequential, a changed route or (every
// fourth) a newcomer on a claimed hostname: each is judged against every route's attachment.
import { Agent, request } from 'node:https';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { startAdmissionServer, type AdmissionServer } from '../../src/main/admission/admission-server.js';
import { WorkerAdmissionChecker } from '../../src/main/admission/worker-admission-checker.js';
import { silentLogger } from '../../src/main/core/logger.js';
import { generateSelfSigned } from '../../src/main/output/default-certificate.js';
import type { SyntheticCluster } from '../../src/main/sources/synthetic/synthetic-cluster.js';
import type { KubeObject } from '../../src/worker/protocol.js';
import { OneObjectChanger, populatedStores, ratio, sig, type Row, type Suite, type SuiteContext, type SuiteReport } from '../lib.js';
import { httpRouteOf, populatedRouteStores } from '../route-cluster.js';

const GATEWAY_GROUP = 'gateway.networking.k8s.io';
const ROUTE_REVIEWS = 300;

const RATE_PER_S = 200;
const LOAD_SECONDS = 5;

interface Answer {
  readonly allowed: boolean;
  readonly warnings: readonly string[];
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

function reviewBody(uid: string, object: KubeObject, operation: 'CREATE' | 'UPDATE', kind = 'Ingress', group = 'networking.k8s.io'): string {
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: { group, version: 'v1', kind },
      resource: { group, version: 'v1', resource: `${kind.toLowerCase()}${kind === 'Ingress' ? 'es' : 's'}` },
      namespace: object.metadata.namespace,
      operation,
      object,
    },
  });
}

/** Objects from the API server carry their creation time; the synthetic cluster's get this one. */
const CREATED = '2024-01-01T00:00:00Z';

function stamped(object: KubeObject): KubeObject {
  return { ...object, metadata: { ...object.metadata, creationTimestamp: CREATED } };
}

/**
 * The i-th reviewed object: a changed existing Ingress, or (every fourth) a newcomer from another
 * namespace on a claimed host, which is denied.
 */
function reviewOf(cluster: SyntheticCluster, n: number, i: number): string {
  const index = (i * 7919) % n;
  const existing = stamped(cluster.ingress(index, 1000 + i));
  if (i % 4 !== 3) return reviewBody(`uid-${i}`, existing, 'UPDATE');
  const spec = existing.spec as { rules: unknown[] };
  const newcomer: KubeObject = { ...existing, metadata: { name: `claim-${i}`, namespace: 'newcomers' }, spec: { ...spec } };
  return reviewBody(`uid-${i}`, newcomer, 'CREATE');
}

/**
 * The i-th reviewed HTTPRoute, as reviewOf: a changed existing route, or (every fourth) a
 * newcomer from another namespace on a claimed hostname, which is denied (HostConflict).
 */
function routeReviewOf(cluster: SyntheticCluster, n: number, i: number): string {
  const index = (i * 7919) % n;
  const existing = stamped(httpRouteOf(cluster, index, 1000 + i));
  if (i % 4 !== 3) return reviewBody(`uid-${i}`, existing, 'UPDATE', 'HTTPRoute', GATEWAY_GROUP);
  return reviewBody(`uid-${i}`, { ...existing, metadata: { name: `claim-${i}`, namespace: 'newcomers' } }, 'CREATE', 'HTTPRoute', GATEWAY_GROUP);
}

function post(agent: Agent, port: number, cert: string, body: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/validate', method: 'POST', agent, ca: cert, checkServerIdentity: () => undefined, headers: { 'content-type': 'application/json' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        try {
          const response = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { response: { allowed: boolean; warnings?: string[] } }).response;
          resolve({ allowed: response.allowed, warnings: response.warnings ?? [] });
        } catch (error) {
          reject(error instanceof Error ? error : new Error(String(error)));
        }
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * The load client, on a thread of its own so that its work is not counted as the server's: it
 * sends `bodies` at a fixed rate (open loop) and reports each review's latency.
 */
const LOAD_CLIENT = `
const { workerData, parentPort } = require('node:worker_threads');
const { Agent, request } = require('node:https');
const { port, cert, bodies, intervalMs } = workerData;
const agent = new Agent({ keepAlive: true, maxSockets: 32 });
const latencies = [];
let answered = 0, timeouts = 0, failed = 0;
const started = performance.now();
bodies.forEach((body, i) => {
  setTimeout(() => {
    const t0 = performance.now();
    const req = request({ host: '127.0.0.1', port, path: '/validate', method: 'POST', agent, ca: cert, checkServerIdentity: () => undefined }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        latencies.push(performance.now() - t0);
        const text = Buffer.concat(chunks).toString('utf8');
        if (text.includes('did not finish checking')) timeouts++;
        if (++answered === bodies.length) { agent.destroy(); parentPort.postMessage({ latencies, timeouts, failed, seconds: (performance.now() - started) / 1000 }); }
      });
    });
    req.on('error', () => { failed++; if (++answered === bodies.length) parentPort.postMessage({ latencies, timeouts, failed, seconds: (performance.now() - started) / 1000 }); });
    req.end(body);
  }, i * intervalMs);
});
`;

interface LoadResult {
  readonly latencies: number[];
  readonly timeouts: number;
  readonly failed: number;
  readonly seconds: number;
}

export const webhookSuite: Suite = {
  name: 'webhook',
  description: 'admission review latency over HTTPS at N Ingresses (a store change and a changed object per review), and main-thread event-loop delay at 200 reviews/s',
  async run(context: SuiteContext): Promise<SuiteReport> {
    const set = context.templateSet;
    const both = await generateSelfSigned(Date.now(), 'CN=haptic-webhook.bench');
    const at = both.indexOf('-----BEGIN PRIVATE KEY-----');
    const pem = { cert: both.slice(0, at), key: both.slice(at) };
    const results: Row[] = [];
    const notes: string[] = [];
    const details: Record<string, unknown> = {};
    const p99ByN = new Map<number, number>();
    const largest = Math.max(...context.sizes);
    for (const n of context.sizes) {
      const { stores, cluster } = populatedStores(set, n);
      for (let i = 0; i < n; i++) stores.store('ingresses').upsert(stamped(cluster.ingress(i)));
      const changer = new OneObjectChanger(stores, cluster, n);
      const checker = new WorkerAdmissionChecker({ stores, templateSet: set });
      checker.start();
      // The server's own figure (request complete to answer written), next to the client's.
      const serverMs: number[] = [];
      const metrics = { observeAdmission: (_kind: string, _verdict: string, seconds: number) => void serverMs.push(seconds * 1000) };
      const server: AdmissionServer = await startAdmissionServer({ address: '127.0.0.1:0', ...pem, checker, metrics, logger: silentLogger() });
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const t0 = performance.now();
        await post(agent, server.port, pem.cert, reviewOf(cluster, n, 0));
        // The first answer waits for the worker to start and take a full snapshot of the stores.
        const firstMs = performance.now() - t0;
        const warmup = 50;
        const count = 1000;
        const latencies: number[] = [];
        serverMs.length = 0;
        let denied = 0;
        let timeouts = 0;
        for (let i = 1; i <= warmup + count; i++) {
          changer.change();
          const body = reviewOf(cluster, n, i);
          const s = performance.now();
          const answer = await post(agent, server.port, pem.cert, body);
          const ms = performance.now() - s;
          if (i <= warmup) {
            serverMs.length = 0;
            continue;
          }
          latencies.push(ms);
          if (!answer.allowed) denied++;
          if (answer.warnings.some((w) => w.includes('did not finish checking'))) timeouts++;
        }
        latencies.sort((a, b) => a - b);
        const p50 = percentile(latencies, 50);
        const p99 = percentile(latencies, 99);
        p99ByN.set(n, p99);
        const served = [...serverMs].sort((a, b) => a - b);
        results.push({
          task: 'review (sequential)',
          n,
          p50Ms: sig(p50),
          p99Ms: sig(p99),
          maxMs: sig(latencies[latencies.length - 1] as number),
          serverP50Ms: sig(percentile(served, 50)),
          serverP99Ms: sig(percentile(served, 99)),
          samples: latencies.length,
          denied,
          timeouts,
          firstAnswerMs: sig(firstMs),
        });

        if (n === largest) {
          const bodies = Array.from({ length: RATE_PER_S * LOAD_SECONDS }, (_, i) => reviewOf(cluster, n, 100_000 + i));
          const delay = monitorEventLoopDelay({ resolution: 1 });
          serverMs.length = 0;
          const changes = setInterval(() => changer.change(), 1000 / RATE_PER_S);
          delay.enable();
          const elu0 = performance.eventLoopUtilization();
          const client = new Worker(LOAD_CLIENT, { eval: true, workerData: { port: server.port, cert: pem.cert, bodies, intervalMs: 1000 / RATE_PER_S } });
          const load = await new Promise<LoadResult>((resolve, reject) => {
            client.once('message', resolve);
            client.once('error', reject);
          });
          delay.disable();
          const elu = performance.eventLoopUtilization(elu0);
          clearInterval(changes);
          await client.terminate();
          const sorted = [...load.latencies].sort((a, b) => a - b);
          const servedUnderLoad = [...serverMs].sort((a, b) => a - b);
          const delayP99 = delay.percentile(99) / 1e6;
          results.push({
            task: `load ${RATE_PER_S} reviews/s`,
            n,
            p50Ms: sig(percentile(sorted, 50)),
            p99Ms: sig(percentile(sorted, 99)),
            maxMs: sig(sorted[sorted.length - 1] as number),
            serverP50Ms: sig(percentile(servedUnderLoad, 50)),
            serverP99Ms: sig(percentile(servedUnderLoad, 99)),
            samples: sorted.length,
            reviewsPerS: sig(sorted.length / load.seconds),
            timeouts: load.timeouts,
            failed: load.failed,
            eventLoopDelayP50Ms: sig(delay.percentile(50) / 1e6),
            eventLoopDelayP99Ms: sig(delayP99),
            eventLoopDelayMaxMs: sig(delay.max / 1e6),
            mainThreadBusyPct: sig(elu.utilization * 100),
          });
          notes.push(`main-thread event-loop delay p99 at ${RATE_PER_S} reviews/s and N=${n}: ${sig(delayP99)} ms (target < 20 ms): ${delayP99 < 20 ? 'met' : 'NOT met'}`);
        }
        details[`N=${n}`] = { checker: checker.stats };
      } finally {
        agent.destroy();
        await server.close();
      }
    }
    // HTTPRoute reviews at N routes (the same apps on one Gateway listener), sequential, an EndpointSlice change before each.
    for (const n of context.sizes) {
      const { stores, cluster } = populatedRouteStores(set, n);
      for (let i = 0; i < n; i++) stores.store('httproutes').upsert(stamped(httpRouteOf(cluster, i)));
      const changer = new OneObjectChanger(stores, cluster, n);
      const checker = new WorkerAdmissionChecker({ stores, templateSet: set });
      checker.start();
      const server: AdmissionServer = await startAdmissionServer({ address: '127.0.0.1:0', ...pem, checker, logger: silentLogger() });
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        await post(agent, server.port, pem.cert, routeReviewOf(cluster, n, 0));
        const latencies: number[] = [];
        let denied = 0;
        let timeouts = 0;
        for (let i = 1; i <= 20 + ROUTE_REVIEWS; i++) {
          changer.change();
          const body = routeReviewOf(cluster, n, i);
          const t = performance.now();
          const answer = await post(agent, server.port, pem.cert, body);
          if (i <= 20) continue;
          latencies.push(performance.now() - t);
          if (!answer.allowed) denied++;
          if (answer.warnings.some((w) => w.includes('did not finish checking'))) timeouts++;
        }
        latencies.sort((a, b) => a - b);
        results.push({ task: 'HTTPRoute review (sequential)', n, p50Ms: sig(percentile(latencies, 50)), p99Ms: sig(percentile(latencies, 99)), maxMs: sig(latencies.at(-1) as number), samples: latencies.length, denied, timeouts });
      } finally {
        agent.destroy();
        await server.close();
      }
    }
    const comparisons: Row[] = [];
    const smallest = Math.min(...context.sizes);
    const pSmall = p99ByN.get(smallest);
    const pLarge = p99ByN.get(largest);
    if (pSmall !== undefined && pLarge !== undefined) {
      const r = ratio(pLarge, pSmall);
      comparisons.push({ [`p99 N=${smallest} ms`]: sig(pSmall), [`p99 N=${largest} ms`]: sig(pLarge), ratio: r });
      notes.push(`p99 at N=${largest}: ${sig(pLarge)} ms (target <= 50 ms): ${pLarge <= 50 ? 'met' : 'NOT met'}`);
      notes.push(`p99 at N=${largest} / p99 at N=${smallest}: ${String(r)} (target <= 3): ${r !== null && r <= 3 ? 'met' : 'NOT met'}`);
    }
    return {
      suite: 'webhook',
      description: webhookSuite.description,
      timing: 'by hand: client-side wall time per review (performance.now), monitorEventLoopDelay (1 ms resolution) on the main thread',
      parameters: { sizes: context.sizes, rate: RATE_PER_S, loadSeconds: LOAD_SECONDS, timeoutMs: 2000 },
      results,
      comparisons,
      notes,
      details,
    };
  },
};
