// What the fake API server (fake-kube-api.ts) checks in a status write, as the Gateway API CRDs'
// schemas make a real server do (422 otherwise): every condition has type, status, reason,
// message and lastTransitionTime, observedGeneration is a non-negative integer; listeners carry
// name, supportedKinds, attachedRoutes and conditions; route parents carry parentRef,
// controllerName and conditions; the lists stay within their caps.

export interface StatusWrite {
  readonly method: string;
  readonly resourcePath: string;
  /** `ns/name`. */
  readonly key: string;
  readonly status: unknown;
  readonly at: number;
}

const GATEWAY_API = '/apis/gateway.networking.k8s.io/';
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const CONDITION_TYPE = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/;
const REASON = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;

/** Why the status of a Gateway API object would be refused, or undefined when it is valid. */
export function gatewayStatusProblem(resourcePath: string, status: unknown): string | undefined {
  if (!resourcePath.startsWith(GATEWAY_API) || status === undefined) return undefined;
  if (!isRecord(status)) return 'status: must be an object';
  const problem = conditionsProblem(status.conditions, 'status.conditions');
  if (problem !== undefined) return problem;
  if (status.listeners !== undefined) {
    if (!Array.isArray(status.listeners) || status.listeners.length > 64) return 'status.listeners: must be a list of at most 64';
    for (const [i, l] of status.listeners.entries()) {
      const at = `status.listeners[${i}]`;
      if (!isRecord(l) || typeof l.name !== 'string') return `${at}.name: Required value`;
      if (!Array.isArray(l.supportedKinds)) return `${at}.supportedKinds: Required value`;
      if (!Number.isInteger(l.attachedRoutes) || (l.attachedRoutes as number) < 0) return `${at}.attachedRoutes: Required value`;
      const inner = conditionsProblem(l.conditions, `${at}.conditions`, true);
      if (inner !== undefined) return inner;
    }
  }
  if (status.addresses !== undefined && (!Array.isArray(status.addresses) || status.addresses.length > 16 || !status.addresses.every((a) => isRecord(a) && typeof a.value === 'string'))) {
    return 'status.addresses: must be a list of at most 16 {type, value}';
  }
  if (status.parents !== undefined) {
    if (!Array.isArray(status.parents) || status.parents.length > 32) return 'status.parents: must be a list of at most 32';
    for (const [i, p] of status.parents.entries()) {
      const at = `status.parents[${i}]`;
      if (!isRecord(p) || !isRecord(p.parentRef) || typeof p.parentRef.name !== 'string') return `${at}.parentRef: Required value`;
      if (typeof p.controllerName !== 'string' || p.controllerName === '') return `${at}.controllerName: Required value`;
      const inner = conditionsProblem(p.conditions, `${at}.conditions`, true);
      if (inner !== undefined) return inner;
    }
  }
  return undefined;
}

function conditionsProblem(value: unknown, at: string, required = false): string | undefined {
  if (value === undefined) return required ? `${at}: Required value` : undefined;
  if (!Array.isArray(value) || value.length > 8) return `${at}: must be a list of at most 8`;
  const types = new Set<unknown>();
  for (const [i, c] of value.entries()) {
    const where = `${at}[${i}]`;
    if (!isRecord(c)) return `${where}: must be an object`;
    if (typeof c.type !== 'string' || !CONDITION_TYPE.test(c.type)) return `${where}.type: Invalid value`;
    if (types.has(c.type)) return `${where}.type: Duplicate value`;
    types.add(c.type);
    if (c.status !== 'True' && c.status !== 'False' && c.status !== 'Unknown') return `${where}.status: Unsupported value`;
    if (typeof c.reason !== 'string' || !REASON.test(c.reason)) return `${where}.reason: Invalid value`;
    if (typeof c.message !== 'string' || c.message.length > 32768) return `${where}.message: Required value`;
    if (typeof c.lastTransitionTime !== 'string' || !RFC3339.test(c.lastTransitionTime)) return `${where}.lastTransitionTime: Required value`;
    if (c.observedGeneration !== undefined && (!Number.isInteger(c.observedGeneration) || (c.observedGeneration as number) < 0)) return `${where}.observedGeneration: Invalid value`;
  }
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
