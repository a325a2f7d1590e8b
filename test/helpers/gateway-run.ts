// The controller of the Gateway API tests that run it whole: `haptic-reconciler run --kubeconfig …
// --haproxy` against the fake API server, with the cluster's objects in it, serving on loopback
// (Ingress frontends on free ports of 127.0.0.1, loopback endpoints allowed). `apply` and
// `remove` change the API server's objects as kubectl would; `status` reads what the controller
// wrote through the status subresource; `objects` are the API server's objects as given, for a
// render of the same cluster.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MasterCli } from '../../src/main/haproxy/master-cli.js';
import type { KubeObject } from '../../src/worker/protocol.js';
import { startCli, type CliProcess } from './cli-process.js';
import { FakeKubeApi, type FakeObject } from './fake-kube-api.js';
import { freePorts } from './haproxy-harness.js';
import { killWithHaproxy, whenServing } from './run-haproxy.js';

const GROUP = 'gateway.networking.k8s.io';

/** The API server collection of each kind the Gateway tests use. */
export const KIND_PATHS: Readonly<Record<string, string>> = {
  GatewayClass: `/apis/${GROUP}/v1/gatewayclasses`,
  Gateway: `/apis/${GROUP}/v1/gateways`,
  HTTPRoute: `/apis/${GROUP}/v1/httproutes`,
  ReferenceGrant: `/apis/${GROUP}/v1beta1/referencegrants`,
  Namespace: '/api/v1/namespaces',
  Service: '/api/v1/services',
  EndpointSlice: '/apis/discovery.k8s.io/v1/endpointslices',
  Secret: '/api/v1/secrets',
};

function pathOf(kind: string | undefined): string {
  const path = KIND_PATHS[kind ?? ''];
  if (path === undefined) throw new Error(`gateway-run: no API path for kind ${String(kind)}`);
  return path;
}

const keyOf = (o: KubeObject): string => `${o.kind ?? ''}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;

export class GatewayRun {
  readonly #cluster = new Map<string, KubeObject>();

  private constructor(
    readonly root: string,
    readonly api: FakeKubeApi,
    readonly controller: CliProcess,
    readonly master: MasterCli,
    /** `127.0.0.1:PORT` of its metrics endpoint. */
    readonly metrics: string,
  ) {}

  /** Starts the controller on a fake API server holding `objects`; resolves once HAProxy serves. */
  static async start(name: string, objects: readonly KubeObject[], extraArgs: readonly string[] = []): Promise<GatewayRun> {
    const root = await mkdtemp(join(tmpdir(), `haptic-${name}-`));
    const api = await FakeKubeApi.start();
    for (const object of objects) api.upsert(pathOf(object.kind), structuredClone(object) as FakeObject);
    const [http, https, status] = (await freePorts(3)) as [number, number, number];
    const kubeconfig = await api.writeKubeconfig(root);
    const out = join(root, 'out');
    const controller = startCli([
      'run', '--kubeconfig', kubeconfig, '--out', out, '--haproxy', '--metrics-addr', '127.0.0.1:0', '--threads', '1', '--min-deployment-interval', '300',
      '--set', 'bindAddress=127.0.0.1', '--set', `httpPort=${http}`, '--set', `httpsPort=${https}`, '--set', `statusPort=${status}`, '--set', 'allowLoopbackEndpoints=true',
      ...extraArgs,
    ]);
    const { master, metrics } = await whenServing(controller, out);
    const run = new GatewayRun(root, api, controller, master, metrics);
    for (const object of objects) run.#cluster.set(keyOf(object), object);
    return run;
  }

  /** Creates or replaces objects, as `kubectl apply` of whole objects does. */
  apply(...objects: KubeObject[]): void {
    for (const object of objects) {
      this.#cluster.set(keyOf(object), object);
      this.api.upsert(pathOf(object.kind), structuredClone(object) as FakeObject);
    }
  }

  remove(object: KubeObject): void {
    this.#cluster.delete(keyOf(object));
    this.api.delete(pathOf(object.kind), `${object.metadata.namespace ?? ''}/${object.metadata.name}`);
  }

  /** The API server's objects, as applied. */
  objects(): KubeObject[] {
    return [...this.#cluster.values()];
  }

  /** The object as the API server holds it now (with the status the controller wrote). */
  current(kind: string, key: string): FakeObject | undefined {
    return this.api.get(pathOf(kind), key);
  }

  /** `status` of the object (`namespace/name`, or `name` for a cluster-scoped one); {} when it has none. */
  status(kind: string, key: string): Record<string, unknown> {
    return (this.current(kind, key)?.status ?? {}) as Record<string, unknown>;
  }

  /** SIGKILLs the controller and its HAProxy, closes the API server and removes the directory. */
  async stop(): Promise<void> {
    await killWithHaproxy(this.controller, this.master);
    await this.api.close();
    await rm(this.root, { recursive: true, force: true });
  }
}
