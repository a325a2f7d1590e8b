// Findings: the routing model's rejections as data, next to the warning text the log gives. A
// warning about a part of an Ingress the model left out (a host another namespace owns, a Service
// that does not exist, a TLS Secret that is missing) carries the Ingress and a stable reason, so
// the leader can put a Kubernetes Event on that Ingress without reading the message.
import type { RejectionCode, RejectionScope } from '../protocol.js';
import type { Claimant } from './claimant.js';

export interface Finding {
  readonly code: RejectionCode;
  readonly scope: RejectionScope;
  /** The Ingress: its namespace and name. */
  readonly namespace: string;
  readonly name: string;
}

/** A warning callback; `finding` is given when the warning reports a rejection. */
export type Warn = (message: string, finding?: Finding) => void;

/** A warning kept for replay, with its finding. */
export interface Notice {
  readonly message: string;
  readonly finding?: Finding;
}

/** The finding about `claimant`'s Ingress, or undefined when the claimant has no name. */
export function findingOf(claimant: Claimant, code: RejectionCode, scope: RejectionScope): Finding | undefined {
  return claimant.name === undefined ? undefined : { code, scope, namespace: claimant.namespace, name: claimant.name };
}

/** Replays notices through `warn`. */
export function replayNotices(notices: readonly Notice[], warn: Warn): void {
  for (const notice of notices) warn(notice.message, notice.finding);
}
