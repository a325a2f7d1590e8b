// What crosses the thread boundary between the main thread and the admission worker: the
// webhook's requests, the checker's verdicts, and the replica sync that keeps its stores.
import type { RejectionCode, ReplicaSync, ReplicaSyncAck } from './protocol.js';

/**
 * An admission denial names the reason the rejection's Event would carry; for Gateway API objects
 * the reason their status condition carries (`RefNotPermitted`, `InvalidCertificateRef`, a
 * listener's `HostnameConflict` or `ProtocolConflict`).
 */
export type AdmissionReason = RejectionCode | 'RefNotPermitted' | 'InvalidCertificateRef' | 'HostnameConflict' | 'ProtocolConflict';

/** One admission request as the webhook's checker sees it (decoded from an AdmissionReview). */
export interface AdmissionCheckRequest {
  /** `Ingress`, `Secret`, `HTTPRoute` or `Gateway`: the request's resource kind, as the API server names it. */
  readonly kind: string;
  readonly operation: 'CREATE' | 'UPDATE';
  /** The request's namespace: the object's, when its metadata leaves it out. */
  readonly namespace: string;
  /** The object as sent; the checker admits it as its store would, so any shape may arrive. */
  readonly object: unknown;
}

/** What the checker decided. `reason` and `message` are set when `allowed` is false. */
export interface AdmissionVerdict {
  readonly allowed: boolean;
  readonly reason?: AdmissionReason;
  readonly message?: string;
  readonly warnings: readonly string[];
}

/** Main thread -> admission worker. */
export type AdmissionWorkerMessage =
  | { readonly kind: 'sync'; readonly sync: ReplicaSync }
  /** `now`: the main thread's clock (ms since the epoch), a new object's creation time. */
  | { readonly kind: 'review'; readonly id: number; readonly now: number; readonly request: AdmissionCheckRequest };

/** Admission worker -> main thread. */
export type AdmissionWorkerReply =
  | { readonly kind: 'synced'; readonly ack: ReplicaSyncAck }
  | { readonly kind: 'verdict'; readonly id: number; readonly verdict: AdmissionVerdict }
  | { readonly kind: 'failed'; readonly id: number; readonly message: string };
