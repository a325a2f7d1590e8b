// Request parsing and matching of the fake Kubernetes API server (fake-kube-api.ts): paths with
// an optional subresource, label and field selectors, the Lease checks a real server makes, and
// JSON merge patch (RFC 7386).
import type { FakeObject } from './fake-kube-api.js';

/** Resources that exist once per cluster: a namespaced path for them is a 404, as on a real server. */
export const CLUSTER_SCOPED = new Set(['ingressclasses', 'gatewayclasses', 'namespaces', 'nodes', 'persistentvolumes', 'storageclasses', 'clusterroles', 'clusterrolebindings']);

export const MICRO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

export interface Parsed {
  /** `/api/v1/services`: the collection without namespace; the key of the store. */
  readonly resourcePath: string;
  readonly resource: string;
  readonly apiVersion: string;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
  /** `status` for `.../NAME/status`. */
  readonly subresource: string | undefined;
}

/** `/api/v1[/namespaces/ns]/resource[/name]` or `/apis/group/version[/namespaces/ns]/resource[/name]`. */
export function parsePath(path: string): Parsed | undefined {
  const segments = path.split('/').filter((s) => s !== '').map(decodeURIComponent);
  let prefix: string[];
  if (segments[0] === 'api' && segments.length >= 3) prefix = segments.slice(0, 2);
  else if (segments[0] === 'apis' && segments.length >= 4) prefix = segments.slice(0, 3);
  else return undefined;
  let rest = segments.slice(prefix.length);
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [resource, name, subresource, ...extra] = rest;
  if (resource === undefined || extra.length > 0) return undefined;
  return { resourcePath: `/${prefix.join('/')}/${resource}`, resource, apiVersion: prefix.slice(1).join('/'), namespace, name, subresource };
}

export function keyOf(namespace: string | undefined, name: string): string {
  return namespace === undefined || namespace === '' ? name : `${namespace}/${name}`;
}

/** Namespace, then `k=v`, `k==v`, `k!=v`, `k`, `!k` label terms and `path=v`/`path!=v` field terms. */
export function matches(object: FakeObject, namespace: string | undefined, query: Readonly<Record<string, string>>): boolean {
  if (namespace !== undefined && object.metadata.namespace !== namespace) return false;
  const labels = object.metadata.labels ?? {};
  for (const term of splitTerms(query.labelSelector)) {
    const m = /^([^!=]+?)\s*(==|=|!=)\s*(.*)$/.exec(term);
    if (m !== null) {
      const [, key = '', op, value] = m;
      if ((op === '!=') === (labels[key] === value)) return false;
    } else if (term.startsWith('!')) {
      if (term.slice(1) in labels) return false;
    } else if (!(term in labels)) return false;
  }
  for (const term of splitTerms(query.fieldSelector)) {
    const m = /^([^!=]+?)\s*(==|=|!=)\s*(.*)$/.exec(term);
    if (m === null) continue;
    const [, path = '', op, value] = m;
    const actual = path.split('.').reduce<unknown>((at, part) => (at !== null && typeof at === 'object' ? (at as Record<string, unknown>)[part] : undefined), object);
    if ((op === '!=') === (String(actual ?? '') === value)) return false;
  }
  return true;
}

function splitTerms(selector: string | undefined): string[] {
  return (selector ?? '').split(',').map((t) => t.trim()).filter((t) => t !== '');
}

/** What a real API server rejects in a Lease body: times that are not MicroTime, a non-integer duration. */
export function leaseProblem(body: FakeObject): string | undefined {
  const spec = (body.spec ?? {}) as Record<string, unknown>;
  for (const field of ['acquireTime', 'renewTime']) {
    const value = spec[field];
    if (value !== undefined && value !== null && (typeof value !== 'string' || !MICRO_TIME.test(value))) {
      return `spec.${field}: parsing time ${JSON.stringify(value)} as "2006-01-02T15:04:05.000000Z07:00": cannot parse`;
    }
  }
  const duration = spec.leaseDurationSeconds;
  if (duration !== undefined && duration !== null && !Number.isInteger(duration)) return `spec.leaseDurationSeconds: ${JSON.stringify(duration)} is not an integer`;
  if (spec.holderIdentity !== undefined && spec.holderIdentity !== null && typeof spec.holderIdentity !== 'string') return 'spec.holderIdentity must be a string';
  return undefined;
}

/** RFC 7386: objects merge key by key, `null` deletes, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> = target !== null && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [key, value] of Object.entries(patch as Record<string, unknown>)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}
