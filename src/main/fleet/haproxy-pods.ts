// The HAProxy Pods of `run --haproxy-pods SELECTOR`: the `haproxy-pods` store's definition, the
// check each Pod passes on its way into that store, and which stored Pods are deploy targets.
// Pods are tenant-reachable objects: the store keeps only a small checked projection (name,
// namespace, resourceVersion, deletionTimestamp, phase, podIP), so no Pod can grow the store, and
// refuses a Pod whose podIP is not an IP address. A Pod is a target while it is Running, has a
// podIP and no deletionTimestamp; its readiness is not required (it becomes ready only once it
// has a config). A target's id is `namespace/name@podIP`, made of checked labels and an address
// only, so the same Pod with a new IP is a new instance.
import { isIP } from 'node:net';
import type { KubeObject, StoreDefinition } from '../../worker/protocol.js';
import { StoreRefusal } from '../../worker/store/indexed-store.js';
import { HAPROXY_PODS_STORE } from '../reconcile/reconciler.js';
import { parseAgentAddress } from './agent-address.js';
import type { AgentEndpoint } from './agent-client.js';

export { HAPROXY_PODS_STORE } from '../reconcile/reconciler.js';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** A label selector as the API server parses it: keys, operators, values, commas, parentheses. */
const LABEL_SELECTOR = /^[A-Za-z0-9._/\-=!,() ]{1,1024}$/;
const PHASES = new Set(['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown']);
const MAX_VERSION_CHARS = 64;

/** The `haproxy-pods` store: Pods matching `selector`, in `namespace` (all namespaces when absent). */
export function haproxyPodsDefinition(selector: string, namespace?: string): StoreDefinition {
  checkPodSelection(selector, namespace);
  return {
    name: HAPROXY_PODS_STORE,
    apiVersion: 'v1',
    kind: 'Pod',
    indexBy: ['metadata.namespace', 'metadata.name'],
    labelSelector: selector,
    debounceMs: 0,
    ...(namespace === undefined ? {} : { namespace }),
  };
}

/** `--haproxy-pods` and `--haproxy-namespace`, checked: a TypeError names the flag. */
export function checkPodSelection(selector: string, namespace?: string): void {
  if (!LABEL_SELECTOR.test(selector) || selector.trim() === '') {
    throw new TypeError(`--haproxy-pods ${JSON.stringify(selector)} is not a label selector (e.g. app.kubernetes.io/component=haproxy)`);
  }
  if (namespace !== undefined && !DNS_LABEL.test(namespace)) throw new TypeError(`--haproxy-namespace ${JSON.stringify(namespace)} is not a namespace name`);
}

/**
 * The check of the `haproxy-pods` store: the Pod as stored (a projection of what deploying to it
 * needs), or a StoreRefusal saying what is wrong with it.
 */
export function checkHaproxyPod(pod: KubeObject): KubeObject {
  const { name, namespace, resourceVersion, deletionTimestamp } = pod.metadata;
  const refuse = (reason: string): never => {
    throw new StoreRefusal(HAPROXY_PODS_STORE, `Pod ${DNS_SUBDOMAIN.test(name) ? name : '(unnamed)'}: ${reason}`);
  };
  if (!DNS_SUBDOMAIN.test(name)) refuse('metadata.name is not a DNS subdomain name');
  if (typeof namespace !== 'string' || !DNS_LABEL.test(namespace)) refuse('metadata.namespace is not a namespace name');
  if (resourceVersion !== undefined && (typeof resourceVersion !== 'string' || resourceVersion.length > MAX_VERSION_CHARS)) refuse('metadata.resourceVersion is malformed');
  if (deletionTimestamp !== undefined && deletionTimestamp !== null && (typeof deletionTimestamp !== 'string' || deletionTimestamp.length > MAX_VERSION_CHARS)) {
    refuse('metadata.deletionTimestamp is malformed');
  }
  const status = (pod as { status?: unknown }).status;
  const fields = typeof status === 'object' && status !== null && !Array.isArray(status) ? (status as Record<string, unknown>) : {};
  const { phase, podIP } = fields;
  if (phase !== undefined && (typeof phase !== 'string' || !PHASES.has(phase))) refuse('status.phase is not a Pod phase');
  if (podIP !== undefined && podIP !== '' && (typeof podIP !== 'string' || isIP(podIP) === 0)) refuse('status.podIP is not an IP address');
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace,
      ...(typeof resourceVersion === 'string' ? { resourceVersion } : {}),
      ...(typeof deletionTimestamp === 'string' ? { deletionTimestamp } : {}),
    },
    status: { ...(typeof phase === 'string' ? { phase } : {}), ...(typeof podIP === 'string' && podIP !== '' ? { podIP } : {}) },
  };
}

/** A Pod to deploy to: its id and its agent's address. */
export interface PodTarget {
  readonly id: string;
  readonly endpoint: AgentEndpoint;
}

/** The target a stored Pod is, or undefined while it is not one (not Running, no podIP, terminating). */
export function podTarget(pod: KubeObject, agentPort: number): PodTarget | undefined {
  const status = (pod as { status?: { phase?: unknown; podIP?: unknown } }).status;
  const podIP = status?.podIP;
  if (status?.phase !== 'Running' || typeof podIP !== 'string' || podIP === '' || pod.metadata.deletionTimestamp != null) return undefined;
  const endpoint = parseAgentAddress(isIP(podIP) === 6 ? `[${podIP}]:${agentPort}` : `${podIP}:${agentPort}`);
  return { id: `${pod.metadata.namespace ?? ''}/${pod.metadata.name}@${podIP}`, endpoint };
}
