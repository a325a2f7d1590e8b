// The admission checks of Gateway API objects, after their store's checks: an HTTPRoute or a
// Gateway is put into an overlay of the current stores (overlay-source.ts) and judged with the
// render's own code (gateway-attachment.ts, gateway-backends.ts, gateway-ownership.ts), so a
// denial carries the message the render's warning or status condition gives.
// - HTTPRoute: a hostname another namespace owns is denied (HostConflict), as is a backendRef
//   into another namespace that no ReferenceGrant allows (RefNotPermitted) and a route over the
//   match-line limit (Rejected). A parentRef that attaches nowhere, or a missing Service, is a
//   warning: apply order is not guaranteed, and the render answers 500 for it meanwhile.
// - Gateway: a Conflicted listener is denied with its reason (HostnameConflict,
//   ProtocolConflict), and so is a certificateRef that is not a usable Secret
//   (InvalidCertificateRef) or into another namespace without a grant (RefNotPermitted). A
//   certificate Secret that does not exist yet is a warning (cert-manager makes it after the
//   Gateway). Objects that are not ours (another class, parentRefs to other Gateways) are allowed.
import type { KubeObject } from '../protocol.js';
import type { AdmissionReason, AdmissionVerdict } from '../admission-protocol.js';
import { attachRoute, bindGateways, ourClasses, type GatewayEntry, type ListenerSpec, type ParentResult } from '../routing/gateway-attachment.js';
import { routeBackends, type RuleSpec } from '../routing/gateway-backends.js';
import { keepOwnedHosts, MAX_ROUTE_LINES } from '../routing/gateway-builder.js';
import type { GatewayOptions } from '../routing/gateway-model.js';
import { claimantOf, HostOwnership } from '../routing/gateway-ownership.js';
import type { ModelOptions } from '../routing/model.js';
import type { ModelSource, StoreReader } from '../routing/model-source.js';
import { RecordedReads } from '../routing/recorded-reads.js';
import { granted } from '../routing/reference-grants.js';
import { describe } from '../store/object-guard.js';
import { allow, ALLOWED, deny } from './verdicts.js';

const GROUP = 'gateway.networking.k8s.io';
const NO_GRANT = 'no ReferenceGrant there allows it';

interface Denial {
  readonly reason: AdmissionReason;
  readonly message: string;
}

/** Whether an HTTPRoute (raw: not checked yet) names one of our Gateways, or a Gateway not in the store (it may be ours once applied). */
export function routeIsOurs(route: KubeObject, reader: StoreReader, options: GatewayOptions): boolean {
  const refs = (route.spec as { parentRefs?: unknown } | undefined)?.parentRefs;
  if (!Array.isArray(refs)) return false;
  const classes = ourClasses(reader, options);
  const ns = route.metadata.namespace ?? '';
  return refs.some((ref: unknown) => {
    if (typeof ref !== 'object' || ref === null) return false;
    const { group, kind, name, namespace } = ref as Record<string, unknown>;
    if ((group ?? GROUP) !== GROUP || (kind ?? 'Gateway') !== 'Gateway' || typeof name !== 'string') return false;
    const gateway = reader.getSingle(options.stores.gateways, [typeof namespace === 'string' ? namespace : ns, name]);
    return gateway === undefined || classes.has((gateway.spec as { gatewayClassName?: unknown }).gatewayClassName as string);
  });
}

/**
 * Whether another route can claim one of the hostnames the reviewed route answers (its effective
 * hostnames in `parents`), so that attaching it is worth its cost. A route's effective hostname
 * is one of its own hostnames or its listener's, so a route can meet ours only by naming one of
 * them, or (when one of them is a listener's hostname) through that listener: then every route may.
 */
function mayMeet(parents: readonly ParentResult[], entries: readonly GatewayEntry[]): (other: KubeObject) => boolean {
  const hosts = new Set(parents.flatMap((p) => p.attachments.flatMap((a) => a.hostnames)).filter((h) => h !== ''));
  if (hosts.size === 0) return () => false;
  const listenerHosts = entries.flatMap((e) => [...e.bound.values()].map((l) => l.spec.hostname ?? ''));
  if (listenerHosts.some((h) => hosts.has(h))) return () => true;
  return (other) => {
    const names = (other.spec as { hostnames?: unknown }).hostnames;
    return Array.isArray(names) && names.some((h) => typeof h === 'string' && hosts.has(h));
  };
}

/** Whether a Gateway (raw) is of one of our GatewayClasses. */
export function gatewayIsOurs(gateway: KubeObject, reader: StoreReader, options: GatewayOptions): boolean {
  const name = (gateway.spec as { gatewayClassName?: unknown } | undefined)?.gatewayClassName;
  return typeof name === 'string' && ourClasses(reader, options).has(name);
}

/** The verdict on an accepted HTTPRoute view, present in `source` (an overlay). */
export function reviewHttpRoute(route: KubeObject, source: ModelSource, model: ModelOptions, options: GatewayOptions): AdmissionVerdict {
  const reads = new RecordedReads(source);
  const owner = describe(route);
  const entries = bindGateways(reads, options, ourClasses(reads, options));
  const gateways = new Map<string, GatewayEntry>(entries.map((e) => [`${e.gateway.metadata.namespace ?? ''}/${e.gateway.metadata.name}`, e]));
  const warnings: string[] = [];
  const ns = route.metadata.namespace ?? '';
  const spec = route.spec as { parentRefs?: { group?: string; kind?: string; name: string; namespace?: string }[]; rules?: (RuleSpec | null)[] };
  for (const ref of spec.parentRefs ?? []) {
    if ((ref.group ?? GROUP) !== GROUP || (ref.kind ?? 'Gateway') !== 'Gateway') continue;
    const key = `${ref.namespace ?? ns}/${ref.name}`;
    if (reads.getSingle(options.stores.gateways, [ref.namespace ?? ns, ref.name]) === undefined) warnings.push(`${owner}: parentRef Gateway ${key} does not exist (yet); the route is not served there`);
  }
  // Host ownership over the claims of every attached route that can meet ours, as the render decides it.
  const parents = attachRoute(route, gateways, reads, options);
  const ownership = new HostOwnership(reads, model);
  const meets = mayMeet(parents, entries);
  for (const other of reads.list(options.stores.httpRoutes)) {
    if (other !== route && !meets(other)) continue;
    const claimant = claimantOf(other, 'HTTPRoute');
    for (const parent of other === route ? parents : attachRoute(other, gateways, reads, options)) {
      for (const a of parent.attachments) for (const host of a.hostnames) if (host !== '') ownership.claim(host, claimant);
    }
  }
  const before = reads.log.length;
  const kept = parents.map((p) => keepOwnedHosts(p, route, ownership, reads));
  const conflicts = reads.log.slice(before).flatMap((e) => ('warn' in e ? [e.warn] : []));
  if (conflicts.length > 0) return deny('HostConflict', conflicts.join('; '));
  for (const parent of kept) {
    if (parent.accepted.status === 'False') warnings.push(`${owner}: parentRef Gateway ${parent.gateway}${parent.sectionName === undefined ? '' : ` section ${parent.sectionName}`}: ${parent.accepted.reason}: ${parent.accepted.message ?? ''}; the route is not served there`);
  }
  const rules = (spec.rules ?? []).filter((r) => r !== null && typeof r === 'object');
  const perHost = rules.reduce((sum, r) => sum + Math.max(1, r.matches?.length ?? 0), 0);
  const lines = kept.flatMap((p) => p.attachments).reduce((sum, a) => sum + a.hostnames.length * perHost, 0);
  if (lines > MAX_ROUTE_LINES) return deny('Rejected', `${owner}: would add ${lines} match lines (hostnames x rules x matches x listeners), over the limit of ${MAX_ROUTE_LINES}; it is not served`);
  const logged = reads.log.length;
  const grants = (from: string, to: string, service: string): boolean => granted(reads, options.stores.referenceGrants, 'HTTPRoute', from, 'Service', to, service);
  routeBackends(route, reads, model, grants, () => undefined);
  const refused: string[] = [];
  for (const entry of reads.log.slice(logged)) {
    if (!('warn' in entry)) warnings.push(`rejected ${entry.reject}`);
    else if (entry.warn.includes(NO_GRANT)) refused.push(entry.warn);
    else warnings.push(entry.warn);
  }
  if (refused.length > 0) return deny('RefNotPermitted', refused.join('; '));
  return allow(warnings);
}

/** The verdict on an accepted Gateway view of one of our classes, present in `source` (an overlay). */
export function reviewGateway(gateway: KubeObject, source: ModelSource, options: GatewayOptions): AdmissionVerdict {
  const entry = bindGateways(source, options, ourClasses(source, options)).find((e) => e.gateway === gateway);
  if (entry === undefined) return ALLOWED;
  const owner = describe(gateway);
  const warnings: string[] = [];
  const denials: Denial[] = [];
  for (const c of entry.conditions) if (c.type === 'Accepted' && c.status === 'False') warnings.push(`${owner}: ${c.reason}: ${c.message ?? ''}; it is not served`);
  const listeners = new Map(((gateway.spec as { listeners?: ListenerSpec[] }).listeners ?? []).map((l) => [l.name, l]));
  for (const { name, conditions } of entry.listenerStatus) {
    const where = `${owner}: listener ${name}`;
    for (const c of conditions) {
      const message = `${where}: ${c.message ?? c.reason}`;
      if (c.type === 'Conflicted' && c.status === 'True') denials.push({ reason: c.reason === 'HostnameConflict' ? 'HostnameConflict' : 'ProtocolConflict', message });
      else if (c.type === 'ResolvedRefs' && c.status === 'False' && c.reason === 'RefNotPermitted') denials.push({ reason: 'RefNotPermitted', message });
      else if (c.type === 'ResolvedRefs' && c.status === 'False' && c.reason === 'InvalidCertificateRef') {
        if (secretMissing(gateway, listeners.get(name), source, options)) warnings.push(`${message}; the listener is not served until it exists`);
        else denials.push({ reason: 'InvalidCertificateRef', message });
      } else if (c.status === 'False' && (c.type === 'Accepted' || c.type === 'ResolvedRefs')) warnings.push(`${message}; the listener is not served`);
    }
  }
  const first = denials[0];
  if (first !== undefined) return deny(first.reason, denials.map((d) => d.message).join('; '));
  return allow(warnings);
}

/** Whether the listener's certificate Secret is simply absent from the store (as opposed to present and unusable). */
function secretMissing(gateway: KubeObject, listener: ListenerSpec | undefined, source: ModelSource, options: GatewayOptions): boolean {
  const ref = listener?.tls?.certificateRefs?.[0];
  if (ref === undefined || (ref.group ?? '') !== '' || (ref.kind ?? 'Secret') !== 'Secret') return false;
  const ns = ref.namespace ?? gateway.metadata.namespace ?? '';
  return source.store(options.stores.secrets)?.get(`${ns}/${ref.name}`) === undefined;
}
