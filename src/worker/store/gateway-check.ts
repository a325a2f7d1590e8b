// The checks of the Gateway API's infrastructure kinds: GatewayClass, Gateway and ReferenceGrant
// (HTTPRoute has its own file). As for Ingress, the smallest unit goes: a bad listener is left
// out and the Gateway's other listeners still serve; a bad address or certificate reference is
// left out alone. What makes the whole object meaningless (no spec, a bad class name, lists over
// the CRDs' caps) rejects it. The views are frozen copies.
import type { KubeObject } from '../protocol.js';
import { isDnsLabel, isDnsSubdomain, isHost, isPort, isRecord, rejected, type KindOutcome, type Problem } from './field-rules.js';
import { GATEWAY_LIMITS, isControllerName, isSectionName, listProblem, selectorProblem } from './gateway-fields.js';
import { quote } from './log-text.js';

const PROTOCOL = /^[A-Za-z0-9]([-A-Za-z0-9_./]{0,253}[A-Za-z0-9])?$/;
const KIND = /^[A-Za-z][A-Za-z0-9]{0,62}$/;
const GROUP = /^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function checkGatewayClass(object: KubeObject): KindOutcome {
  const spec = object.spec;
  if (!isRecord(spec)) return rejected('object', `spec is ${quote(spec)}, not a mapping`);
  if (!isControllerName(spec.controllerName)) return rejected('object', `spec.controllerName ${quote(spec.controllerName)} is not a domain-prefixed path`);
  return { dropped: [] };
}

export function checkGateway(object: KubeObject): KindOutcome {
  const spec = object.spec;
  if (!isRecord(spec)) return rejected('object', `spec is ${quote(spec)}, not a mapping`);
  if (!isDnsSubdomain(spec.gatewayClassName)) return rejected('object', `spec.gatewayClassName ${quote(spec.gatewayClassName)} is not a valid name`);
  const tooMany = listProblem(spec.listeners, 'spec.listeners', GATEWAY_LIMITS.listeners) ?? listProblem(spec.addresses, 'spec.addresses', GATEWAY_LIMITS.addresses);
  if (tooMany !== null) return rejected('object', tooMany);
  const dropped: Problem[] = [];
  const listeners = ((spec.listeners as unknown[] | undefined) ?? []).filter((listener, l) => {
    const problem = listenerProblem(listener, `spec.listeners[${l}]`);
    if (problem !== null) dropped.push({ scope: 'path', reason: `${problem}; the listener is dropped` });
    return problem === null;
  });
  const addresses = ((spec.addresses as unknown[] | undefined) ?? []).filter((address, a) => {
    const ok = isRecord(address) && (address.type === undefined || (typeof address.type === 'string' && KIND.test(address.type))) && typeof address.value === 'string' && address.value.length <= 253;
    if (!ok) dropped.push({ scope: 'path', reason: `spec.addresses[${a}] ${quote(address)} is not a {type, value} address; it is dropped` });
    return ok;
  });
  if (dropped.length === 0) return { dropped };
  return { patch: { spec: Object.freeze({ ...spec, listeners: Object.freeze(listeners), addresses: Object.freeze(addresses) }) }, dropped };
}

function listenerProblem(listener: unknown, at: string): string | null {
  if (!isRecord(listener)) return `${at} is ${quote(listener)}, not a mapping`;
  if (!isSectionName(listener.name)) return `${at}.name ${quote(listener.name)} is not a valid section name`;
  if (listener.hostname !== undefined && (!isHost(listener.hostname) || listener.hostname === '*')) return `${at}.hostname ${quote(listener.hostname)} is not a valid host name`;
  if (!isPort(listener.port)) return `${at}.port ${quote(listener.port)} is not a port number`;
  if (typeof listener.protocol !== 'string' || !PROTOCOL.test(listener.protocol)) return `${at}.protocol ${quote(listener.protocol)} is not a protocol name`;
  if (listener.tls !== undefined) {
    const problem = tlsProblem(listener.tls, `${at}.tls`);
    if (problem !== null) return problem;
  }
  const allowed = listener.allowedRoutes;
  if (allowed === undefined) return null;
  if (!isRecord(allowed)) return `${at}.allowedRoutes is ${quote(allowed)}, not a mapping`;
  const namespaces = allowed.namespaces;
  if (namespaces !== undefined) {
    if (!isRecord(namespaces)) return `${at}.allowedRoutes.namespaces is ${quote(namespaces)}, not a mapping`;
    const from = namespaces.from ?? 'Same';
    if (from !== 'Same' && from !== 'All' && from !== 'Selector') return `${at}.allowedRoutes.namespaces.from ${quote(from)} must be Same, All or Selector`;
    if (from === 'Selector') {
      const problem = selectorProblem(namespaces.selector, `${at}.allowedRoutes.namespaces.selector`);
      if (problem !== null) return problem;
    }
  }
  const kindsProblem = listProblem(allowed.kinds, `${at}.allowedRoutes.kinds`, GATEWAY_LIMITS.allowedKinds);
  if (kindsProblem !== null) return kindsProblem;
  for (const [k, kind] of ((allowed.kinds as unknown[] | undefined) ?? []).entries()) {
    if (!isGroupKind(kind)) return `${at}.allowedRoutes.kinds[${k}] ${quote(kind)} is not a {group, kind}`;
  }
  return null;
}

function tlsProblem(tls: unknown, at: string): string | null {
  if (!isRecord(tls)) return `${at} is ${quote(tls)}, not a mapping`;
  if (tls.mode !== undefined && tls.mode !== 'Terminate' && tls.mode !== 'Passthrough') return `${at}.mode ${quote(tls.mode)} must be Terminate or Passthrough`;
  const listed = listProblem(tls.certificateRefs, `${at}.certificateRefs`, GATEWAY_LIMITS.certificateRefs);
  if (listed !== null) return listed;
  for (const [c, ref] of ((tls.certificateRefs as unknown[] | undefined) ?? []).entries()) {
    const where = `${at}.certificateRefs[${c}]`;
    if (!isRecord(ref) || !isDnsSubdomain(ref.name)) return `${where}.name ${quote(isRecord(ref) ? ref.name : ref)} is not a valid name`;
    if (ref.namespace !== undefined && !isDnsLabel(ref.namespace)) return `${where}.namespace ${quote(ref.namespace)} is not a valid namespace`;
    if (!isGroupKind({ group: ref.group ?? '', kind: ref.kind ?? 'Secret' })) return `${where} has an invalid group or kind`;
  }
  return null;
}

/** `{group, kind}` with a DNS group ('' for the core group) and a kind name. */
export function isGroupKind(value: unknown): boolean {
  return isRecord(value) && (value.group === undefined || (typeof value.group === 'string' && value.group.length <= 253 && GROUP.test(value.group))) && typeof value.kind === 'string' && KIND.test(value.kind);
}

export function checkReferenceGrant(object: KubeObject): KindOutcome {
  const spec = object.spec;
  if (!isRecord(spec)) return rejected('object', `spec is ${quote(spec)}, not a mapping`);
  const listed = listProblem(spec.from, 'spec.from', GATEWAY_LIMITS.grantEntries) ?? listProblem(spec.to, 'spec.to', GATEWAY_LIMITS.grantEntries);
  if (listed !== null) return rejected('object', listed);
  if (!Array.isArray(spec.from) || !Array.isArray(spec.to)) return rejected('object', 'spec.from and spec.to must both be lists');
  for (const [f, from] of spec.from.entries()) {
    if (!isGroupKind(from) || !isRecord(from) || !isDnsLabel(from.namespace)) return rejected('object', `spec.from[${f}] ${quote(from)} is not a {group, kind, namespace}`);
  }
  for (const [t, to] of spec.to.entries()) {
    if (!isGroupKind(to) || !isRecord(to) || (to.name !== undefined && !isDnsSubdomain(to.name))) return rejected('object', `spec.to[${t}] ${quote(to)} is not a {group, kind, name}`);
  }
  return { dropped: [] };
}

/** A Namespace matters only through its labels, which the metadata check covers. */
export function checkNamespace(): KindOutcome {
  return { dropped: [] };
}
