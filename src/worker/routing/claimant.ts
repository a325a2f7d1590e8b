// Who was first: the order in which Ingresses claim hosts, paths, TLS hosts and the default
// backend. The oldest `metadata.creationTimestamp` wins, then namespace/name; an Ingress without
// a readable timestamp counts as the newest. With `routeOwnership: name` timestamps are ignored.
// Never name order alone when timestamps exist: a newer Ingress in namespace `aaa` must not win
// a host only because `aaa` sorts first.
import type { KubeObject } from '../protocol.js';

/** An Ingress as a claimant, for ordering and messages. */
export interface Claimant {
  /** `Ingress namespace/name`, for messages; ordered as namespace/name is. */
  readonly owner: string;
  readonly namespace: string;
  /** The Ingress's name, for findings (see findings.ts). */
  readonly name?: string;
  /** Creation time in ms since the epoch; +Infinity when unknown, 0 when ignored. */
  readonly created: number;
}

/** The creation time of an object (ms since the epoch), or +Infinity when it has none. */
export function creationTime(object: KubeObject): number {
  const stamp = (object.metadata as { creationTimestamp?: unknown }).creationTimestamp;
  const time = typeof stamp === 'string' ? Date.parse(stamp) : stamp instanceof Date ? stamp.getTime() : Number.NaN;
  return Number.isFinite(time) ? time : Number.POSITIVE_INFINITY;
}

/** Negative when `a` claimed first. */
export function compareClaimants(a: Claimant, b: Claimant): number {
  if (a.created !== b.created) return a.created < b.created ? -1 : 1;
  return a.owner < b.owner ? -1 : a.owner > b.owner ? 1 : 0;
}
