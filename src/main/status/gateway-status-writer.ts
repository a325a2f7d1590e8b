// GatewayStatusWriter: keeps the status of our GatewayClasses, Gateways and HTTPRoutes equal to
// what the latest render found (its `gatewayStatus`), through the paced loop every status writer
// shares (paced-status-writer.ts). An object is looked at when its entry in the render's results
// changed, when what HAProxy serves changed (a deployment: Gateways become Programmed), or when
// it changed in the store (another controller or replica wrote); it is written only when what
// it should hold differs from what it holds (as stored, or as this writer last wrote it),
// `lastTransitionTime` aside. An object whose generation is not the render's waits for the next
// render, so `observedGeneration` is always the generation the conditions were computed for.
import type { Logger } from 'pino';
import type { KubeObject } from '../../worker/protocol.js';
import type { GatewayClassStatus, GatewayCondition, GatewayStatus, GatewayStatusReport, RouteStatus } from '../../worker/routing/gateway-model.js';
import type { Clock } from '../core/clock.js';
import { TokenBucket } from '../core/token-bucket.js';
import type { BackoffOptions } from '../sources/kubernetes/backoff.js';
import {
  gatewayClassStatus,
  gatewayStatus,
  generationOf,
  hasOurParents,
  programmedIn,
  rejectedRoute,
  routeParents,
  servedKey,
  statusOf,
  statusText,
  timeText,
  type GatewayAddress,
} from './gateway-status-body.js';
import type { GatewayStatusApi, GatewayStatusKind, GatewayStatusWrite } from './gateway-status-api.js';
import { PacedStatusWriter, type StatusWriterStats } from './paced-status-writer.js';

/** Renders whose served Gateways are remembered until their deployment is reported. */
const RECENT_RENDERS = 16;

const FIELDS: Readonly<Record<GatewayStatusKind, readonly string[]>> = { GatewayClass: ['conditions'], Gateway: ['conditions', 'listeners', 'addresses'], HTTPRoute: ['parents'] };

export interface GatewayStatusWriterOptions {
  readonly api: GatewayStatusApi;
  /** The object as the store holds it (`name` for a GatewayClass, else `namespace/name`), or undefined once it is gone. */
  readonly lookup: (kind: GatewayStatusKind, key: string) => KubeObject | undefined;
  /** Every HTTPRoute key the store holds (read once per term, to remove our stale parent entries). */
  readonly routeKeys: () => Iterable<string>;
  /** The `controllerName` of our GatewayClasses and of our entries in HTTPRoute parents. */
  readonly controllerName: string;
  /** The addresses a programmed Gateway answers on. */
  readonly addresses: (gateway: KubeObject) => readonly GatewayAddress[];
  readonly clock: Clock;
  readonly logger: Logger;
  /** @default 20 */
  readonly writesPerSecond?: number;
  readonly backoff?: BackoffOptions;
}

type Wanted = GatewayStatusWrite & { readonly text: string };

export class GatewayStatusWriter {
  readonly #options: GatewayStatusWriterOptions;
  readonly #paced: PacedStatusWriter<Wanted>;
  #classes = new Map<string, GatewayClassStatus>();
  #gateways = new Map<string, GatewayStatus>();
  #routes = new Map<string, RouteStatus>();
  /** HTTPRoutes the object checks rejected as a whole, by `namespace/name`: their reason. */
  #rejected: ReadonlyMap<string, string> = new Map();
  /** The signature of each entry of the latest report, by queue key: what changed between renders. */
  #entries = new Map<string, string>();
  /** Checksum -> the served keys of that render (see programmedIn). */
  readonly #recent = new Map<string, ReadonlySet<string>>();
  #served: ReadonlySet<string> = new Set();
  /**
   * No deployment of this term has succeeded yet: what HAProxy serves is not known, and a Gateway
   * that holds Programmed=True at its generation (a previous leader's word) keeps it meanwhile,
   * so a change of leader does not flap Programmed.
   */
  #servedUnknown = true;
  /** What this writer last wrote, by queue key (the store sees our own writes come back later). */
  readonly #written = new Map<string, { readonly text: string; readonly status: Readonly<Record<string, unknown>>; readonly resourceVersion: string | undefined }>();
  /** The resourceVersion a write in flight left, until `written` keeps it with the write. */
  readonly #versions = new Map<string, string | undefined>();
  #scanPending = true;

  constructor(options: GatewayStatusWriterOptions) {
    this.#options = options;
    this.#paced = new PacedStatusWriter<Wanted>({
      what: 'Gateway API',
      field: 'object',
      permission: 'gatewayclasses/status, gateways/status and httproutes/status (gateway.networking.k8s.io)',
      wanted: (key) => this.#wanted(key),
      send: async (key, write, signal) => {
        const reply = await options.api.writeStatus(write, signal);
        if (reply.status >= 200 && reply.status < 300) this.#versions.set(key, reply.resourceVersion);
        return reply.status;
      },
      written: (key, write) => {
        this.#written.set(key, { text: write.text, status: write.status, resourceVersion: this.#versions.get(key) });
        this.#versions.delete(key);
      },
      gone: (key) => this.#written.delete(key),
      bucket: new TokenBucket(options.clock, { ratePerSecond: options.writesPerSecond ?? 20 }),
      clock: options.clock,
      logger: options.logger,
      ...(options.backoff === undefined ? {} : { backoff: options.backoff }),
    });
  }

  get stats(): StatusWriterStats {
    return this.#paced.stats;
  }

  /**
   * The acceptance results of a render (undefined: none of its GatewayClasses is ours), its
   * checksum, and the HTTPRoutes it rejected as a whole (`namespace/name` -> reason).
   */
  setReport(report: GatewayStatusReport | undefined, checksum: string, rejected: ReadonlyMap<string, string> = new Map()): void {
    const gateways = report?.gateways ?? [];
    this.#recent.delete(checksum);
    this.#recent.set(checksum, programmedIn(gateways));
    if (this.#recent.size > RECENT_RENDERS) this.#recent.delete(this.#recent.keys().next().value as string);
    const entries = new Map<string, string>();
    const add = (key: string, entry: ReportEntry): void => {
      const text = signature(entry);
      entries.set(key, text);
      if (this.#entries.get(key) !== text) this.#paced.add(key);
    };
    this.#classes = new Map((report?.gatewayClasses ?? []).map((c) => [c.name, c]));
    this.#gateways = new Map(gateways.map((g) => [`${g.namespace}/${g.name}`, g]));
    this.#routes = new Map((report?.httpRoutes ?? []).map((r) => [`${r.namespace}/${r.name}`, r]));
    for (const [key, entry] of this.#classes) add(`GatewayClass:${key}`, entry);
    for (const [key, entry] of this.#gateways) add(`Gateway:${key}`, entry);
    for (const [key, entry] of this.#routes) add(`HTTPRoute:${key}`, entry);
    this.#rejected = rejected;
    for (const [key, reason] of rejected) if (!this.#routes.has(key)) add(`HTTPRoute:${key}`, { generation: undefined, conditions: [{ type: 'Rejected', status: 'False', reason: 'UnsupportedValue', message: reason }] });
    for (const key of this.#entries.keys()) if (!entries.has(key)) this.#paced.add(key);
    this.#entries = entries;
    if (this.#scanPending) {
      this.#scanPending = false;
      for (const key of this.#options.routeKeys()) this.#paced.add(`HTTPRoute:${key}`);
    }
    this.#paced.wake();
  }

  /** HAProxy serves the render of `checksum`: the Gateways programmed in it are Programmed. */
  deployed(checksum: string): void {
    const served = this.#recent.get(checksum);
    if (served === undefined || served === this.#served) return;
    this.#servedUnknown = false;
    const changed = new Set<string>();
    for (const key of served) if (!this.#served.has(key)) changed.add(gatewayOf(key));
    for (const key of this.#served) if (!served.has(key)) changed.add(gatewayOf(key));
    this.#served = served;
    for (const gateway of changed) this.#paced.add(`Gateway:${gateway}`);
    this.#paced.wake();
  }

  /** These objects changed in the store: look at them again, trusting the store over what this writer last wrote. */
  recheck(kind: GatewayStatusKind, keys: Iterable<string>): void {
    let any = false;
    for (const key of keys) {
      const queueKey = `${kind}:${key}`;
      this.#written.delete(queueKey);
      this.#paced.add(queueKey);
      any = true;
    }
    if (any) this.#paced.wake();
  }

  /** Writes until `signal` aborts. */
  run(signal: AbortSignal): Promise<void> {
    return this.#paced.run(signal);
  }

  /**
   * Nothing is served any more (the controller stops for good): every Gateway of the latest
   * render that holds Programmed=True gets Programmed=False, Pending, and no addresses, paced,
   * until done or `signal` aborts. Resolves with the Gateways written.
   */
  async withdraw(signal: AbortSignal): Promise<number> {
    this.#served = new Set();
    this.#servedUnknown = false;
    let written = 0;
    for (const key of this.#gateways.keys()) {
      if (signal.aborted) break;
      const wanted = this.#wanted(`Gateway:${key}`);
      if (wanted === undefined) continue;
      try {
        if ((await this.#paced.writeNow(`Gateway:${key}`, wanted, signal)) === 'ok') written++;
      } catch {
        if (signal.aborted) break;
      }
    }
    return written;
  }

  #wanted(queueKey: string): Wanted | undefined {
    const colon = queueKey.indexOf(':');
    const kind = queueKey.slice(0, colon) as GatewayStatusKind;
    const key = queueKey.slice(colon + 1);
    const stored = this.#options.lookup(kind, key);
    if (stored === undefined) {
      this.#written.delete(queueKey);
      return undefined;
    }
    const ownWrite = this.#written.get(queueKey);
    // What the object holds: as stored, or as this writer last wrote it (not yet seen back).
    const object: KubeObject = ownWrite === undefined ? stored : { ...stored, status: { ...statusOf(stored), ...ownWrite.status } };
    const generation = generationOf(stored);
    const now = timeText(this.#options.clock.now());
    let status: Record<string, unknown>;
    if (kind === 'GatewayClass') {
      const entry = this.#classes.get(key);
      if (entry === undefined || entry.generation !== generation) return undefined;
      status = gatewayClassStatus(entry.conditions, object, now);
    } else if (kind === 'Gateway') {
      const entry = this.#gateways.get(key);
      if (entry === undefined || entry.generation !== generation) return undefined;
      const served = this.#servedUnknown ? new Set([...this.#served, ...heldProgrammed(key, stored, generation)]) : this.#served;
      status = gatewayStatus({ report: entry, object, served, addresses: this.#options.addresses(stored), now });
    } else {
      const reason = this.#rejected.get(key);
      const entry = this.#routes.get(key) ?? (reason === undefined ? undefined : rejectedRoute(stored, reason, new Set(this.#gateways.keys())));
      if (entry !== undefined && entry.generation !== generation) return undefined;
      if (entry === undefined && !hasOurParents(object, this.#options.controllerName)) return undefined;
      status = { parents: routeParents(entry, object, this.#options.controllerName, now) };
    }
    const fields = FIELDS[kind];
    const text = statusText(status, fields);
    if (text === (ownWrite?.text ?? statusText(statusOf(stored), fields))) return undefined;
    const slash = key.indexOf('/');
    return {
      kind,
      namespace: slash < 0 ? '' : key.slice(0, slash),
      name: key.slice(slash + 1),
      status,
      // Other controllers' parent entries are copied into the write: only onto the version read.
      ...(kind === 'HTTPRoute' ? versionOf(ownWrite?.resourceVersion ?? stored.metadata.resourceVersion) : {}),
      text,
    };
  }
}

type ReportEntry = GatewayClassStatus | GatewayStatus | RouteStatus | { readonly generation: undefined; readonly conditions: readonly GatewayCondition[] };

/**
 * A text of a report entry that changes whenever the status made from it would: several times
 * cheaper than JSON at 10,000 routes a render. Names are checked names; messages are quoted.
 */
/** Signatures by entry object: a render's report keeps the entries of unchanged objects (status-patch.ts). */
const signatures = new WeakMap<ReportEntry, string>();

function signature(entry: ReportEntry): string {
  let text = signatures.get(entry);
  if (text === undefined) signatures.set(entry, (text = signatureOf(entry)));
  return text;
}

function signatureOf(entry: ReportEntry): string {
  let text = `${entry.generation ?? ''}`;
  if ('conditions' in entry) text += conditionsSignature(entry.conditions);
  if ('listeners' in entry) for (const l of entry.listeners) text += `|${l.name}:${l.attachedRoutes}${conditionsSignature(l.conditions)}`;
  if ('parents' in entry) for (const p of entry.parents) text += `|${p.gateway}#${p.sectionName ?? ''}:${p.port ?? ''}${conditionsSignature(p.conditions)}`;
  return text;
}

function conditionsSignature(list: readonly GatewayCondition[]): string {
  let text = '';
  for (const c of list) text += `;${c.type}=${c.status}/${c.reason}/${c.message === undefined ? '' : JSON.stringify(c.message)}`;
  return text;
}

function versionOf(version: unknown): { resourceVersion?: string } {
  return typeof version === 'string' && version !== '' ? { resourceVersion: version } : {};
}

/** The served keys of a stored Gateway whose status says Programmed=True at `generation`. */
function heldProgrammed(key: string, gateway: KubeObject, generation: number | undefined): string[] {
  const status = statusOf(gateway);
  const programmed = (list: unknown): boolean =>
    Array.isArray(list) && list.some((c: { type?: unknown; status?: unknown; observedGeneration?: unknown }) => c.type === 'Programmed' && c.status === 'True' && c.observedGeneration === generation);
  if (!programmed(status.conditions)) return [];
  const keys = [servedKey(key, generation)];
  for (const l of Array.isArray(status.listeners) ? (status.listeners as { name?: unknown; conditions?: unknown }[]) : []) {
    if (typeof l.name === 'string' && programmed(l.conditions)) keys.push(servedKey(key, generation, l.name));
  }
  return keys;
}

function gatewayOf(servedKey: string): string {
  return servedKey.slice(0, servedKey.lastIndexOf('@'));
}
