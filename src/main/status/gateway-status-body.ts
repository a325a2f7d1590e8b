// What the status of a GatewayClass, a Gateway or an HTTPRoute should hold (SPEC §14), made from
// a render's acceptance results (`gatewayStatus`) and the object as the store holds it. Every
// condition gets the object's `metadata.generation` as `observedGeneration` and keeps the
// `lastTransitionTime` it had while its status stays the same. A Gateway (and each listener) is
// `Programmed` only once HAProxy serves a render in which it was programmed at this generation,
// before that `Programmed=False, Pending`; its `status.addresses` are set only then. Of an
// HTTPRoute's `status.parents`, only the entries with our controllerName are ours: the others are
// kept where they are. Plain functions over plain data: the writer decides when to write.
import type { KubeObject } from '../../worker/protocol.js';
import type { GatewayCondition, GatewayStatus, ListenerStatus, RouteStatus } from '../../worker/routing/gateway-model.js';

export const GATEWAY_GROUP = 'gateway.networking.k8s.io';
/** The CRDs' caps: conditions per object, listeners per Gateway, parents per route, addresses. */
export const MAX_CONDITIONS = 8;
export const MAX_LISTENERS = 64;
export const MAX_PARENTS = 32;
export const MAX_ADDRESSES = 16;
const MAX_MESSAGE = 1024;

/** A condition as the API holds it (metav1.Condition). */
export interface ApiCondition {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason: string;
  readonly message: string;
  readonly observedGeneration?: number;
  readonly lastTransitionTime: string;
}

export interface GatewayAddress {
  readonly type: 'IPAddress' | 'Hostname';
  readonly value: string;
}

/** What HAProxy serves: `ns/name@generation` of programmed Gateways, and `…#listener` of programmed listeners. */
export type ServedGateways = ReadonlySet<string>;

export function servedKey(gateway: string, generation: number | undefined, listener?: string): string {
  return `${gateway}@${generation ?? ''}${listener === undefined ? '' : `#${listener}`}`;
}

/** The served keys of one render's Gateways (what HAProxy serves once that render is deployed). */
export function programmedIn(gateways: readonly GatewayStatus[]): Set<string> {
  const served = new Set<string>();
  for (const gw of gateways) {
    const key = `${gw.namespace}/${gw.name}`;
    if (isTrue(gw.conditions, 'Programmed')) served.add(servedKey(key, gw.generation));
    for (const l of gw.listeners) if (isTrue(l.conditions, 'Programmed')) served.add(servedKey(key, gw.generation, l.name));
  }
  return served;
}

export function generationOf(object: KubeObject | undefined): number | undefined {
  const generation = (object?.metadata as { generation?: unknown } | undefined)?.generation;
  return typeof generation === 'number' && Number.isInteger(generation) ? generation : undefined;
}

/**
 * The conditions to write: each of `wanted`, with `observedGeneration` and the `lastTransitionTime`
 * of the same condition in `existing` when its status did not change (else `now`).
 */
export function conditions(wanted: readonly GatewayCondition[], generation: number | undefined, existing: unknown, now: string): ApiCondition[] {
  const before = asArray(existing);
  return wanted.slice(0, MAX_CONDITIONS).map((c) => {
    const old = before.find((b) => isRecord(b) && b.type === c.type) as { status?: unknown; lastTransitionTime?: unknown } | undefined;
    const kept = old !== undefined && old.status === c.status && typeof old.lastTransitionTime === 'string' && old.lastTransitionTime !== '';
    return {
      type: c.type,
      status: c.status,
      reason: c.reason,
      message: (c.message ?? '').slice(0, MAX_MESSAGE),
      ...(generation === undefined ? {} : { observedGeneration: generation }),
      lastTransitionTime: kept ? (old.lastTransitionTime as string) : now,
    };
  });
}

/** `status` of our GatewayClass. */
export function gatewayClassStatus(wanted: readonly GatewayCondition[], object: KubeObject, now: string): Record<string, unknown> {
  return { conditions: conditions(wanted, generationOf(object), statusOf(object).conditions, now) };
}

export interface GatewayStatusInput {
  readonly report: GatewayStatus;
  readonly object: KubeObject;
  readonly served: ServedGateways;
  /** The addresses the Gateway answers on, once programmed. */
  readonly addresses: readonly GatewayAddress[];
  readonly now: string;
}

/** `status` of one of our Gateways: conditions, listeners and addresses. */
export function gatewayStatus({ report, object, served, addresses, now }: GatewayStatusInput): Record<string, unknown> {
  const key = `${report.namespace}/${report.name}`;
  const generation = generationOf(object);
  const current = statusOf(object);
  const pending = (wanted: readonly GatewayCondition[], listener?: string): GatewayCondition[] =>
    wanted.map((c) =>
      c.type === 'Programmed' && c.status === 'True' && !served.has(servedKey(key, report.generation, listener))
        ? { type: 'Programmed', status: 'False', reason: 'Pending', message: 'waiting for HAProxy to serve the config' }
        : c,
    );
  const gatewayConditions = pending(report.conditions);
  const oldListeners = asArray(current.listeners);
  const specListeners = asArray((object.spec as { listeners?: unknown } | undefined)?.listeners);
  const listeners = report.listeners.slice(0, MAX_LISTENERS).map((l: ListenerStatus) => {
    const old = oldListeners.find((o) => isRecord(o) && o.name === l.name) as { conditions?: unknown } | undefined;
    const spec = specListeners.find((s) => isRecord(s) && s.name === l.name);
    return { name: l.name, supportedKinds: supportedKinds(spec), attachedRoutes: l.attachedRoutes, conditions: conditions(pending(l.conditions, l.name), generation, old?.conditions, now) };
  });
  const programmed = isTrue(gatewayConditions, 'Programmed');
  return {
    conditions: conditions(gatewayConditions, generation, current.conditions, now),
    listeners,
    addresses: programmed ? addresses.slice(0, MAX_ADDRESSES) : [],
  };
}

/**
 * The route kinds a listener takes: HTTPRoute for an HTTP or HTTPS listener, unless its
 * `allowedRoutes.kinds` names only others; none for another protocol.
 */
export function supportedKinds(listener: unknown): { group: string; kind: string }[] {
  if (!isRecord(listener) || (listener.protocol !== 'HTTP' && listener.protocol !== 'HTTPS')) return [];
  const kinds = (listener.allowedRoutes as { kinds?: unknown } | undefined)?.kinds;
  const list = Array.isArray(kinds) && kinds.length > 0 ? kinds : [{ kind: 'HTTPRoute' }];
  const ok = list.some((k) => isRecord(k) && (k.group ?? GATEWAY_GROUP) === GATEWAY_GROUP && k.kind === 'HTTPRoute');
  return ok ? [{ group: GATEWAY_GROUP, kind: 'HTTPRoute' }] : [];
}

/**
 * `status.parents` of an HTTPRoute: the entries of other controllers where they are, then ours
 * (one per parent of `report`, none when the route is not ours any more), at most MAX_PARENTS.
 */
export function routeParents(report: RouteStatus | undefined, object: KubeObject, controllerName: string, now: string): unknown[] {
  const current = asArray(statusOf(object).parents);
  const generation = generationOf(object);
  const others = current.filter((p) => !(isRecord(p) && p.controllerName === controllerName));
  const oldOurs = current.filter((p) => isRecord(p) && p.controllerName === controllerName) as { parentRef?: unknown; conditions?: unknown }[];
  const ours = (report?.parents ?? []).slice(0, Math.max(0, MAX_PARENTS - others.length)).map((p) => {
    const slash = p.gateway.indexOf('/');
    const parentRef = {
      group: GATEWAY_GROUP,
      kind: 'Gateway',
      namespace: p.gateway.slice(0, slash),
      name: p.gateway.slice(slash + 1),
      ...(p.sectionName === undefined ? {} : { sectionName: p.sectionName }),
      ...(p.port === undefined ? {} : { port: p.port }),
    };
    const old = oldOurs.find((o) => sameRef(o.parentRef, parentRef));
    return { parentRef, controllerName, conditions: conditions(p.conditions, generation, old?.conditions, now) };
  });
  return [...others, ...ours];
}

/**
 * The parents of a route the object checks rejected as a whole: each parentRef naming one of our
 * Gateways (`gateways`: their `namespace/name`) gets Accepted=False, UnsupportedValue, with the
 * rejection's reason. The refs are read from the stored object, so each field is checked here.
 */
export function rejectedRoute(route: KubeObject, reason: string, gateways: ReadonlySet<string>): RouteStatus {
  const ns = route.metadata.namespace ?? '';
  const refs = asArray((route.spec as { parentRefs?: unknown } | undefined)?.parentRefs);
  const parents: RouteStatus['parents'][number][] = [];
  for (const ref of refs.slice(0, MAX_PARENTS)) {
    if (!isRecord(ref) || typeof ref.name !== 'string' || (ref.group ?? GATEWAY_GROUP) !== GATEWAY_GROUP || (ref.kind ?? 'Gateway') !== 'Gateway') continue;
    const gateway = `${typeof ref.namespace === 'string' ? ref.namespace : ns}/${ref.name}`;
    if (!gateways.has(gateway)) continue;
    parents.push({
      gateway,
      sectionName: typeof ref.sectionName === 'string' ? ref.sectionName : undefined,
      port: Number.isInteger(ref.port) ? (ref.port as number) : undefined,
      conditions: [{ type: 'Accepted', status: 'False', reason: 'UnsupportedValue', message: reason }],
    });
  }
  return { namespace: ns, name: route.metadata.name, generation: generationOf(route), parents };
}

/** Whether `route` holds entries of ours in `status.parents`. */
export function hasOurParents(route: KubeObject | undefined, controllerName: string): boolean {
  return asArray(statusOf(route).parents).some((p) => isRecord(p) && p.controllerName === controllerName);
}

/**
 * A text of status fields for comparing what is wanted with what is held: `lastTransitionTime`
 * left out (it follows the rest), and an empty list the same as an absent field.
 */
export function statusText(fields: Readonly<Record<string, unknown>>, names: readonly string[]): string {
  return JSON.stringify(names.map((name) => normalized(fields[name])));
}

/** The fields of `object.status`. */
export function statusOf(object: KubeObject | undefined): Record<string, unknown> {
  const status = object?.status;
  return isRecord(status) ? status : {};
}

/** Seconds-precision RFC 3339, as metav1.Time is written. */
export function timeText(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

function normalized(value: unknown): unknown {
  if (value === undefined || value === null || (Array.isArray(value) && value.length === 0)) return null;
  if (Array.isArray(value)) return value.map(normalized);
  if (!isRecord(value)) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) if (key !== 'lastTransitionTime') out[key] = normalized(value[key]);
  return out;
}

function sameRef(a: unknown, b: Record<string, unknown>): boolean {
  if (!isRecord(a)) return false;
  return (a.name === b.name && (a.namespace ?? b.namespace) === b.namespace && (a.sectionName ?? null) === (b.sectionName ?? null) && (a.port ?? null) === (b.port ?? null));
}

function isTrue(list: readonly GatewayCondition[], type: string): boolean {
  return list.some((c) => c.type === type && c.status === 'True');
}

function asArray(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : [];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
