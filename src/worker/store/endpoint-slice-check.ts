// The EndpointSlice check. Its ports are the slice's frame (a bad one rejects the slice); each
// address is its own unit: one that is not an IP, or that the address policy refuses (see
// address-policy.ts), is dropped with a rejection while the slice's other endpoints stay. An
// endpoint left with no address is dropped with it. FQDN slices are not supported.
import type { KubeObject } from '../protocol.js';
import { addressProblem } from './address-policy.js';
import type { GuardPolicy } from './guard-context.js';
import { isDnsLabel, isPort, isRecord, rejected, type KindOutcome, type Problem } from './field-rules.js';
import { quote } from './log-text.js';
import { MAX_ENDPOINT_ADDRESSES, MAX_PORTS, MAX_SLICE_ENDPOINTS } from './value-limits.js';

const ADDRESS_TYPES = new Set(['IPv4', 'IPv6']);
const CONDITIONS = ['ready', 'serving', 'terminating'] as const;

export function checkEndpointSlice(object: KubeObject, policy: GuardPolicy): KindOutcome {
  if (object.addressType !== undefined && (typeof object.addressType !== 'string' || !ADDRESS_TYPES.has(object.addressType))) {
    return rejected('object', `addressType ${quote(object.addressType)} is not supported (IPv4 or IPv6)`);
  }
  const ports = object.ports ?? [];
  if (!Array.isArray(ports)) return rejected('object', `ports is ${quote(ports)}, not a list`);
  if (ports.length > MAX_PORTS) return rejected('object', `ports has ${ports.length} entries, over the limit of ${MAX_PORTS}`);
  const numbers: number[] = [];
  for (let i = 0; i < ports.length; i++) {
    const port: unknown = ports[i];
    if (!isRecord(port)) return rejected('object', `ports[${i}] is ${quote(port)}, not a mapping`);
    if (!isPort(port.port)) return rejected('object', `ports[${i}].port ${quote(port.port)} is not a port number`);
    if (port.name !== undefined && port.name !== '' && !isDnsLabel(port.name)) return rejected('object', `ports[${i}].name ${quote(port.name)} is not a valid port name`);
    numbers.push(port.port);
  }
  const endpoints = object.endpoints ?? [];
  if (!Array.isArray(endpoints)) return rejected('object', `endpoints is ${quote(endpoints)}, not a list`);
  if (endpoints.length > MAX_SLICE_ENDPOINTS) return rejected('object', `has ${endpoints.length} endpoints, over the limit of ${MAX_SLICE_ENDPOINTS}`);
  const dropped: Problem[] = [];
  const kept: unknown[] = [];
  let changed = false;
  for (let e = 0; e < endpoints.length; e++) {
    const endpoint = checkEndpoint(endpoints[e], e, numbers, policy, dropped);
    if (endpoint === undefined || endpoint !== endpoints[e]) changed = true;
    if (endpoint !== undefined) kept.push(endpoint);
  }
  return changed ? { patch: { endpoints: Object.freeze(kept) }, dropped } : { dropped };
}

/** Drops an endpoint: the reason goes to `dropped`. */
function dropEndpoint(dropped: Problem[], reason: string): undefined {
  dropped.push({ scope: 'endpoint', reason: `${reason}; the endpoint is dropped` });
  return undefined;
}

/**
 * The endpoint as the view keeps it (itself when whole), or undefined when it is dropped. Nearly
 * every endpoint is whole: its position (`endpoints[e]`) is spelled out only in a reason.
 */
function checkEndpoint(endpoint: unknown, e: number, ports: readonly number[], policy: GuardPolicy, dropped: Problem[]): unknown {
  if (!isRecord(endpoint)) return dropEndpoint(dropped, `endpoints[${e}] is ${quote(endpoint)}, not a mapping`);
  const conditions = endpoint.conditions;
  if (conditions !== undefined && conditions !== null) {
    if (!isRecord(conditions)) return dropEndpoint(dropped, `endpoints[${e}].conditions is ${quote(conditions)}, not a mapping`);
    for (const field of CONDITIONS) {
      const value = conditions[field];
      if (value !== undefined && value !== null && typeof value !== 'boolean') return dropEndpoint(dropped, `endpoints[${e}].conditions.${field} ${quote(value)} is not a boolean`);
    }
  }
  const addresses = endpoint.addresses;
  if (!Array.isArray(addresses)) return dropEndpoint(dropped, `endpoints[${e}].addresses is ${quote(addresses)}, not a list`);
  if (addresses.length > MAX_ENDPOINT_ADDRESSES) return dropEndpoint(dropped, `endpoints[${e}].addresses has ${addresses.length} entries, over the limit of ${MAX_ENDPOINT_ADDRESSES}`);
  if (conditions !== null && addresses.length > 0 && allAccepted(addresses, ports, policy)) return endpoint;
  const good = addresses.filter((address: unknown, i: number) => {
    const problem = typeof address === 'string' ? addressProblem(address, ports, policy) : 'is not a string';
    if (problem === null) return true;
    dropped.push({ scope: 'endpoint', reason: `endpoints[${e}].addresses[${i}] ${quote(address, 60)} ${problem}; it is dropped` });
    return false;
  });
  if (good.length === 0) return undefined;
  if (good.length === addresses.length && conditions !== null) return endpoint;
  const view: Record<string, unknown> = { ...endpoint, addresses: Object.freeze(good) };
  if (conditions === null) delete view.conditions;
  return Object.freeze(view);
}

/** Whether every address is a string the policy accepts (no hole, nothing to drop): the endpoint then stays as it is. */
function allAccepted(addresses: readonly unknown[], ports: readonly number[], policy: GuardPolicy): boolean {
  for (let i = 0; i < addresses.length; i++) {
    const address: unknown = addresses[i];
    if (typeof address !== 'string' || addressProblem(address, ports, policy) !== null) return false;
  }
  return true;
}
