// The controller's event catalogue: one discriminated union on `type`, plain immutable data.
// Names are dotted past-tense facts. `newEvent` stamps identity, time and correlation so that
// every event of one reconciliation can be followed from its trigger to its deploy.
import { randomUUID } from 'node:crypto';
import type { AuxiliaryFiles, FailurePhase, OriginIndex, Rejection, RenderExclusions, RenderPatch } from '../../worker/protocol.js';
import type { GatewayStatusReport } from '../../worker/routing/gateway-model.js';
import { systemClock, type Clock } from '../core/clock.js';

export type { AuxiliaryFiles, FailurePhase } from '../../worker/protocol.js';

/** Fields every event carries. */
export interface EventEnvelope {
  readonly eventId: string;
  readonly correlationId: string;
  readonly causationId?: string;
  /** Milliseconds since the epoch. */
  readonly timestamp: number;
}

export interface ChangeStats {
  readonly created: number;
  readonly modified: number;
  readonly deleted: number;
  readonly isInitialSync: boolean;
}

/** Fields of each event type, without the envelope. */
export interface EventFields {
  'resource.index.updated': { readonly resourceTypeName: string; readonly changeStats: ChangeStats };
  'index.synchronized': { readonly resourceCounts: Readonly<Record<string, number>> };
  'http.resource.updated': { readonly url: string; readonly checksum: string; readonly contentSize: number };
  'http.resource.accepted': { readonly url: string; readonly checksum: string; readonly contentSize: number };
  'drift.prevention.triggered': { readonly timeSinceLastDeploymentMs: number };
  'leader.became': { readonly identity: string };
  'leader.lost': { readonly identity: string; readonly reason: string };
  'reconciliation.triggered': { readonly reason: string; readonly coalescible: boolean };
  'reconciliation.started': { readonly trigger: string };
  'template.rendered': {
    readonly renderId: string;
    readonly haproxyConfig: string;
    readonly auxiliaryFiles: AuxiliaryFiles;
    readonly checksum: string;
    readonly configBytes: number;
    readonly auxiliaryFileCount: number;
    readonly durationMs: number;
    readonly triggerReason: string;
    readonly coalescible: boolean;
    readonly storeVersion: number;
    /** What the object checks left out of this render: `<store kind>/<scope>` -> count. */
    readonly rejectionCounts?: Readonly<Record<string, number>>;
    /** Which objects the config's sections and entries came from (the render gate traces a refusal with it). */
    readonly origins?: OriginIndex;
    /** What the render left out on the render gate's word. */
    readonly exclusions?: RenderExclusions;
    /** The rejections themselves (for Kubernetes Events); shared with the result, never copied. */
    readonly rejections?: readonly Rejection[];
    /** `namespace/name` of the Ingresses the render serves (for their status), when it has an Ingress store. */
    readonly servedIngresses?: readonly string[];
    /** What the routing model left out of served Ingresses (host conflicts, missing Services), with reason codes. */
    readonly findings?: readonly Rejection[];
    /** The Gateway API acceptance results (for their status), when a GatewayClass is ours. */
    readonly gatewayStatus?: GatewayStatusReport;
    /** The render as edits of render `patch.from` (the endpoint lane); the files above are complete all the same. */
    readonly patch?: RenderPatch;
  };
  'reconciliation.failed': {
    readonly error: string;
    readonly phase: FailurePhase;
    readonly subPhase?: string;
    readonly triggerReason: string;
  };
  'reconciliation.completed': {
    readonly outcome: 'success' | 'failure';
    readonly durationMs: number;
    readonly triggerReason: string;
  };
  'rendergate.completed': {
    readonly renderId: string;
    readonly ok: boolean;
    readonly refused: boolean;
    readonly newest: boolean;
    readonly message: string;
    readonly durationMs: number;
    /**
     * Objects the gate took out of later renders because of this refusal (traced from HAProxy's
     * messages, or by bisection); the gate then asks for a render without them.
     */
    readonly excluded?: number;
  };
  'deployment.completed': {
    /** The trigger reason of the render deployed (`drift_prevention` for a forced deployment). */
    readonly reason: string;
    /** `runtime`: applied through the Runtime API, no reload; `reload`: files written, HAProxy reloaded; `skipped`: nothing to do. */
    readonly kind: 'runtime' | 'reload' | 'skipped';
    readonly outcome: 'success' | 'failure';
    readonly durationMs: number;
    /** Runtime API commands applied. */
    readonly runtimeOps: number;
    /** Checksum of the render deployed. */
    readonly checksum: string;
    readonly error?: string;
    /** Fleet mode: how many instances stand where once this outcome is known (the per-instance counts). */
    readonly fleet?: { readonly in_sync: number; readonly behind: number; readonly unreachable: number; readonly fenced: number };
  };
}

export type EventType = keyof EventFields;

/** The union of all controller events, discriminated on `type`. */
export type ControllerEvent = { [T in EventType]: EventEnvelope & { readonly type: T } & EventFields[T] }[EventType];

/** The event (or union of events) of the given type(s). */
export type EventOf<T extends EventType> = Extract<ControllerEvent, { readonly type: T }>;

/** Every event type, in catalogue order. Kept in step with `EventFields` by a type-level test. */
export const EVENT_TYPES = [
  'resource.index.updated',
  'index.synchronized',
  'http.resource.updated',
  'http.resource.accepted',
  'drift.prevention.triggered',
  'leader.became',
  'leader.lost',
  'reconciliation.triggered',
  'reconciliation.started',
  'template.rendered',
  'reconciliation.failed',
  'reconciliation.completed',
  'rendergate.completed',
  'deployment.completed',
] as const satisfies readonly EventType[];

/**
 * Creates an event. Without `cause` it starts a new correlation (the correlation ID is the
 * event's own ID); with `cause` it joins the cause's correlation and records the cause as
 * its `causationId`. The timestamp comes from `clock`: components pass the clock they were given.
 */
export function newEvent<T extends EventType>(
  type: T,
  fields: EventFields[T],
  cause?: Pick<EventEnvelope, 'eventId' | 'correlationId'>,
  clock: Pick<Clock, 'now'> = systemClock,
): EventOf<T> {
  const eventId = randomUUID();
  const timestamp = clock.now();
  const envelope: EventEnvelope =
    cause === undefined
      ? { eventId, correlationId: eventId, timestamp }
      : { eventId, correlationId: cause.correlationId, causationId: cause.eventId, timestamp };
  return Object.freeze({ ...fields, ...envelope, type }) as unknown as EventOf<T>;
}

/** Narrowing helper: `isEvent(e, 'template.rendered')`. */
export function isEvent<T extends EventType>(event: ControllerEvent, type: T): event is EventOf<T> {
  return event.type === type;
}
