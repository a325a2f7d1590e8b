// Which Gateways are ours, where their listeners bind, and which listeners each HTTPRoute
// attaches to (SPEC §14): GatewayClasses whose controllerName is ours; each listener on its
// Gateway's address (the first spec.addresses IPAddress that values.gatewayAddresses allows,
// else bindAddress) and port; a listener on the address and port of the Ingress or status
// frontends, or of an earlier listener with the same hostname, is Conflicted and not bound.
// A bind belongs to one Gateway: the oldest (creationTimestamp, then namespace/name) claims it,
// and another Gateway's listener there is Conflicted too, so no tenant's Gateway can add a more
// specific listener in front of another tenant's. A route attaches through
// parentRefs (sectionName, port) to the listeners that admit it (allowedRoutes.namespaces
// Same/All/Selector, allowedRoutes.kinds) and share a hostname with it (gateway-hostnames.ts).
// The acceptance results are kept as plain data for a status writer.
import type { KubeObject } from '../protocol.js';
import { compareClaimants, creationTime, type Claimant } from './claimant.js';
import { intersectHostnames } from './gateway-hostnames.js';
import { pemFromSecret } from './certificates.js';
import type { GatewayCertificate, GatewayCondition, GatewayOptions, ListenerStatus } from './gateway-model.js';
import type { StoreReader } from './model-source.js';
import { matchesSelector, type LabelSelector } from './label-selector.js';
import { granted } from './reference-grants.js';

const GROUP = 'gateway.networking.k8s.io';

export interface ListenerSpec {
  name: string;
  hostname?: string;
  port: number;
  protocol: string;
  tls?: { mode?: string; certificateRefs?: { group?: string; kind?: string; name: string; namespace?: string }[] };
  allowedRoutes?: { namespaces?: { from?: string; selector?: LabelSelector }; kinds?: { group?: string; kind: string }[] };
}

/** A listener that passed every check and binds. */
export interface BoundListener {
  readonly gateway: KubeObject;
  readonly spec: ListenerSpec;
  /** `address:port` of the bind. */
  readonly bind: string;
  /** The certificate of an HTTPS listener. */
  readonly certificate?: GatewayCertificate | undefined;
  /** Routes attached to it (counted as attachments are made). */
  attached: number;
}

/**
 * An accepted listener left unbound for its references (a missing or refused certificate): it
 * serves nothing, but counts the routes that attach to it, as the spec's attachedRoutes does.
 */
export interface UnservedListener {
  readonly gateway: KubeObject;
  readonly spec: ListenerSpec;
  attached: number;
}

export interface GatewayEntry {
  readonly gateway: KubeObject;
  readonly claimant: Claimant;
  /** Listener name -> its bound listener (absent when it is not bound). */
  readonly bound: Map<string, BoundListener>;
  readonly listenerStatus: { name: string; conditions: GatewayCondition[]; listener?: BoundListener; unserved?: UnservedListener }[];
  readonly conditions: GatewayCondition[];
}

/** One attachment of a route: the listener, and the hostnames the route answers on it. */
export interface Attachment {
  readonly listener: BoundListener;
  /** Effective hostnames ('' for any host); host ownership may take some away. */
  readonly hostnames: readonly string[];
}

const condition = (type: string, ok: boolean, reason: string, message?: string): GatewayCondition => ({ type, status: ok ? 'True' : 'False', reason, ...(message === undefined ? {} : { message }) });

/** Our GatewayClasses' names. */
export function ourClasses(reader: StoreReader, options: GatewayOptions): Set<string> {
  const names = new Set<string>();
  for (const cls of reader.list(options.stores.gatewayClasses)) {
    if ((cls.spec as { controllerName?: unknown }).controllerName === options.controllerName) names.add(cls.metadata.name);
  }
  return names;
}

/** Our Gateways, oldest first, with their listeners bound or refused. */
export function bindGateways(reader: StoreReader, options: GatewayOptions, classes: ReadonlySet<string>): GatewayEntry[] {
  const entries: GatewayEntry[] = reader
    .list(options.stores.gateways)
    .filter((gw) => classes.has((gw.spec as { gatewayClassName: string }).gatewayClassName))
    .map((gateway) => ({
      gateway,
      claimant: { owner: `${gateway.metadata.namespace ?? ''}/${gateway.metadata.name}`, namespace: gateway.metadata.namespace ?? '', created: creationTime(gateway) },
      bound: new Map(),
      listenerStatus: [],
      conditions: [],
    }));
  entries.sort((a, b) => compareClaimants(a.claimant, b.claimant));
  /** `address:port` -> hostnames bound there ('' for none) and the Gateway holding it; port -> addresses bound on it. */
  const hostsAt = new Map<string, Set<string>>();
  const holder = new Map<string, KubeObject>();
  const protocolAt = new Map<string, string>();
  const addressesOn = new Map<number, Set<string>>();
  for (const entry of entries) {
    const spec = entry.gateway.spec as { addresses?: { type?: string; value: string }[]; listeners?: ListenerSpec[]; infrastructure?: { parametersRef?: unknown } };
    const refuse = (accepted: GatewayCondition, programmedReason: string): void => {
      entry.conditions.push(accepted, condition('Programmed', false, programmedReason));
      for (const listener of spec.listeners ?? []) entry.listenerStatus.push({ name: listener.name, conditions: [condition('Programmed', false, 'Invalid', 'the Gateway is not accepted')] });
    };
    const parameters = spec.infrastructure?.parametersRef;
    if (parameters !== undefined) {
      // No kind of Gateway parameters is served: a Gateway that asks for some is not accepted.
      refuse(condition('Accepted', false, 'InvalidParameters', 'infrastructure.parametersRef names parameters of a kind this controller does not serve'), 'Invalid');
      continue;
    }
    const requested = (spec.addresses ?? []).find((a) => (a.type ?? 'IPAddress') === 'IPAddress');
    if (requested !== undefined && !options.addresses.has(requested.value)) {
      refuse(condition('Accepted', false, 'UnsupportedAddress', `address ${requested.value} is not in values.gatewayAddresses`), 'AddressNotUsable');
      continue;
    }
    const address = requested?.value ?? options.bindAddress;
    const host = address.includes(':') ? `[${address}]` : address;
    for (const listener of spec.listeners ?? []) {
      const conditions: GatewayCondition[] = [];
      const status: GatewayEntry['listenerStatus'][number] = { name: listener.name, conditions };
      entry.listenerStatus.push(status);
      // Empty or absent kinds: the protocol's (HTTPRoute). Routes attach when HTTPRoute is among them; any other kind is InvalidRouteKinds.
      const kinds = listener.allowedRoutes?.kinds;
      const wanted = kinds === undefined || kinds.length === 0 ? [{ kind: 'HTTPRoute' }] : kinds;
      const isHttpRoute = (k: { group?: string; kind: string }): boolean => (k.group ?? GROUP) === GROUP && k.kind === 'HTTPRoute';
      const kindsOk = wanted.some(isHttpRoute);
      const allKindsOk = wanted.every(isHttpRoute);
      if ((listener.protocol !== 'HTTP' && listener.protocol !== 'HTTPS') || (listener.protocol === 'HTTPS' && (listener.tls?.mode ?? 'Terminate') !== 'Terminate')) {
        conditions.push(condition('Accepted', false, 'UnsupportedProtocol', `protocol ${listener.protocol} is not served`), condition('Programmed', false, 'Invalid'));
        continue;
      }
      const bind = `${host}:${listener.port}`;
      const held = holder.get(bind);
      const conflict =
        held !== undefined && held !== entry.gateway
          ? { reason: 'ProtocolConflict', message: `${bind} is held by the older Gateway ${held.metadata.namespace ?? ''}/${held.metadata.name}` }
          : protocolAt.has(bind) && protocolAt.get(bind) !== listener.protocol
            ? { reason: 'ProtocolConflict', message: `${bind} has a listener of protocol ${protocolAt.get(bind) ?? ''}` }
            : conflictOf(address, listener, options, hostsAt.get(bind), addressesOn.get(listener.port));
      const certificate = listener.protocol === 'HTTPS' ? listenerCertificate(entry.gateway, listener, reader, options) : undefined;
      const refsOk = kindsOk && (certificate === undefined || 'pem' in certificate);
      conditions.push(condition('Accepted', conflict === undefined, conflict === undefined ? 'Accepted' : 'PortUnavailable'));
      if (certificate !== undefined && !('pem' in certificate)) conditions.push(condition('ResolvedRefs', false, certificate.reason, certificate.message));
      else conditions.push(allKindsOk ? condition('ResolvedRefs', true, 'ResolvedRefs') : condition('ResolvedRefs', false, 'InvalidRouteKinds', 'allowedRoutes.kinds names a kind other than HTTPRoute'));
      conditions.push(conflict === undefined ? condition('Conflicted', false, 'NoConflicts') : condition('Conflicted', true, conflict.reason, conflict.message));
      if (conflict !== undefined || !refsOk) {
        conditions.push(condition('Programmed', false, 'Invalid'));
        if (conflict === undefined && kindsOk) status.unserved = { gateway: entry.gateway, spec: listener, attached: 0 };
        continue;
      }
      conditions.push(condition('Programmed', true, 'Programmed'));
      const hosts = hostsAt.get(bind) ?? new Set<string>();
      hosts.add(listener.hostname ?? '');
      hostsAt.set(bind, hosts);
      holder.set(bind, entry.gateway);
      protocolAt.set(bind, listener.protocol);
      const addresses = addressesOn.get(listener.port) ?? new Set<string>();
      addresses.add(address);
      addressesOn.set(listener.port, addresses);
      const bound: BoundListener = { gateway: entry.gateway, spec: listener, bind, attached: 0, certificate: certificate !== undefined && 'pem' in certificate ? certificate : undefined };
      status.listener = bound;
      entry.bound.set(listener.name, bound);
    }
    const programmed = entry.bound.size > 0;
    entry.conditions.push(gatewayAccepted(entry), condition('Programmed', programmed, programmed ? 'Programmed' : 'Invalid'));
  }
  return entries;
}

/**
 * A Gateway's Accepted: ListenersNotValid when a listener is not accepted (an unsupported
 * protocol, a conflict), False when no listener is accepted at all.
 */
function gatewayAccepted(entry: GatewayEntry): GatewayCondition {
  const accepted = entry.listenerStatus.filter((l) => l.conditions.some((c) => c.type === 'Accepted' && c.status === 'True')).length;
  if (accepted === entry.listenerStatus.length) return condition('Accepted', true, 'Accepted');
  const message = `${entry.listenerStatus.length - accepted} of ${entry.listenerStatus.length} listeners are not accepted`;
  return condition('Accepted', accepted > 0, 'ListenersNotValid', message);
}

/**
 * The certificate of an HTTPS listener: its first certificateRef, a TLS Secret of the Gateway's
 * namespace or, through a ReferenceGrant, of another; the PEM the Secret check made of it.
 */
function listenerCertificate(gateway: KubeObject, listener: ListenerSpec, reader: StoreReader, options: GatewayOptions): GatewayCertificate | { reason: string; message: string } {
  const ref = listener.tls?.certificateRefs?.[0];
  if (ref === undefined) return { reason: 'InvalidCertificateRef', message: 'an HTTPS listener needs a certificateRef' };
  if ((ref.group ?? '') !== '' || (ref.kind ?? 'Secret') !== 'Secret') return { reason: 'InvalidCertificateRef', message: `certificateRef ${ref.name} is not a Secret` };
  const own = gateway.metadata.namespace ?? '';
  const ns = ref.namespace ?? own;
  if (ns !== own && !granted(reader, options.stores.referenceGrants, 'Gateway', own, 'Secret', ns, ref.name)) {
    return { reason: 'RefNotPermitted', message: `Secret ${ns}/${ref.name} is in another namespace and no ReferenceGrant there allows it` };
  }
  const secret = reader.getSingle(options.stores.secrets, [ns, ref.name]);
  const pem = secret === undefined ? undefined : pemFromSecret(secret);
  if (pem === undefined) return { reason: 'InvalidCertificateRef', message: `Secret ${ns}/${ref.name} is missing or holds no valid certificate and key` };
  return { name: `gw-${ns}_${ref.name}.pem`, pem };
}

const WILDCARD = new Set(['*', '0.0.0.0', '::', '']);

function conflictOf(
  address: string,
  listener: ListenerSpec,
  options: GatewayOptions,
  hosts: ReadonlySet<string> | undefined,
  addresses: ReadonlySet<string> | undefined,
): { reason: string; message: string } | undefined {
  const overlaps = (a: string, b: string): boolean => a === b || WILDCARD.has(a) || WILDCARD.has(b);
  if (options.reservedPorts.includes(listener.port) && overlaps(address, options.bindAddress)) {
    return { reason: 'ProtocolConflict', message: `port ${listener.port} on ${address} is taken by the Ingress or status frontends` };
  }
  if (hosts?.has(listener.hostname ?? '') === true) return { reason: 'HostnameConflict', message: `an older listener on the same address and port has hostname ${listener.hostname ?? '(none)'}` };
  for (const other of addresses ?? []) {
    if (other !== address && overlaps(other, address)) return { reason: 'ProtocolConflict', message: `port ${listener.port} is bound on ${other}, which overlaps ${address}` };
  }
  return undefined;
}

interface ParentRef {
  group?: string;
  kind?: string;
  name: string;
  namespace?: string;
  sectionName?: string;
  port?: number;
}

export interface ParentResult {
  readonly gateway: string;
  readonly sectionName?: string | undefined;
  readonly port?: number | undefined;
  readonly attachments: readonly Attachment[];
  /** The unbound listeners the route would attach to: they count it, and serve nothing. */
  readonly unserved: readonly UnservedListener[];
  /** Accepted condition of this parent. */
  readonly accepted: GatewayCondition;
}

/** The route's parentRefs that name our Gateways, each with the listeners it attached to. */
export function attachRoute(route: KubeObject, gateways: ReadonlyMap<string, GatewayEntry>, reader: StoreReader, options: GatewayOptions): ParentResult[] {
  const ns = route.metadata.namespace ?? '';
  const spec = route.spec as { parentRefs?: ParentRef[]; hostnames?: string[] };
  const results: ParentResult[] = [];
  for (const ref of spec.parentRefs ?? []) {
    if ((ref.group ?? GROUP) !== GROUP || (ref.kind ?? 'Gateway') !== 'Gateway') continue;
    const key = `${ref.namespace ?? ns}/${ref.name}`;
    const entry = gateways.get(key);
    if (entry === undefined) continue;
    const named = entry.listenerStatus.filter((l) => (ref.sectionName === undefined || l.name === ref.sectionName));
    const unserved = named
      .map((l) => l.unserved)
      .filter((l): l is UnservedListener => l !== undefined && (ref.port === undefined || l.spec.port === ref.port) && admits(l, ns, reader, options) && intersectHostnames(l.spec.hostname, spec.hostnames ?? []).length > 0);
    const base = { gateway: key, sectionName: ref.sectionName, port: ref.port, unserved };
    const candidates = named.map((l) => l.listener).filter((l): l is BoundListener => l !== undefined && (ref.port === undefined || l.spec.port === ref.port));
    if (candidates.length === 0) {
      results.push({ ...base, attachments: [], accepted: condition('Accepted', false, 'NoMatchingParent', 'no listener matches the sectionName and port') });
      continue;
    }
    const allowed = candidates.filter((l) => admits(l, ns, reader, options));
    if (allowed.length === 0) {
      results.push({ ...base, attachments: [], accepted: condition('Accepted', false, 'NotAllowedByListeners', 'no listener admits routes from this namespace') });
      continue;
    }
    const attachments: Attachment[] = [];
    for (const listener of allowed) {
      const hostnames = intersectHostnames(listener.spec.hostname, spec.hostnames ?? []);
      if (hostnames.length > 0) attachments.push({ listener, hostnames });
    }
    if (attachments.length === 0) {
      results.push({ ...base, attachments, accepted: condition('Accepted', false, 'NoMatchingListenerHostname', 'no listener hostname intersects the route hostnames') });
      continue;
    }
    results.push({ ...base, attachments, accepted: condition('Accepted', true, 'Accepted') });
  }
  return results;
}

/** Whether a listener's allowedRoutes admit an HTTPRoute of namespace `ns`. */
function admits(listener: { readonly gateway: KubeObject; readonly spec: ListenerSpec }, ns: string, reader: StoreReader, options: GatewayOptions): boolean {
  const from = listener.spec.allowedRoutes?.namespaces?.from ?? 'Same';
  if (from === 'All') return true;
  if (from === 'Same') return listener.gateway.metadata.namespace === ns;
  const namespace = reader.getSingle(options.stores.namespaces, [ns]);
  const selector = listener.spec.allowedRoutes?.namespaces?.selector;
  return namespace !== undefined && selector !== undefined && matchesSelector(selector, namespace.metadata.labels ?? {});
}

/** The listener statuses of a Gateway entry, with their attachedRoutes counts. */
export function listenerStatuses(entry: GatewayEntry): ListenerStatus[] {
  return entry.listenerStatus.map((l) => ({ name: l.name, attachedRoutes: l.listener?.attached ?? l.unserved?.attached ?? 0, conditions: l.conditions }));
}
