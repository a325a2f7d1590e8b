// The rules one field of a cluster object must follow before its value may reach a template:
// Kubernetes' own name rules, tightened where HAProxy treats a character specially, with the
// lengths of value-limits.ts. Also what every per-kind check returns: the object's rejection, or
// the fields it replaced (with their bad parts left out) and those parts. Pure, no state.
import type { RejectionScope } from '../protocol.js';
import { MAX_DNS_LABEL, MAX_HOST, MAX_LABEL_VALUE, MAX_PATH } from './value-limits.js';

/** A part left out of an object (or the whole object), and why. */
export interface Problem {
  readonly scope: RejectionScope;
  readonly reason: string;
}

/**
 * What a per-kind check makes of an object: its rejection, or the top-level fields it replaced
 * (`patch`, absent when nothing was left out) and the parts it left out.
 */
export type KindOutcome =
  | { readonly rejected: Problem }
  | { readonly patch?: Readonly<Record<string, unknown>>; readonly dropped: readonly Problem[] };

export function rejected(scope: Problem['scope'], reason: string): { rejected: Problem } {
  return { rejected: { scope, reason } };
}

export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const HOST_LABELS = /^(\*\.)?[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$/;
/** RFC 3986 path characters without the ones HAProxy configuration or map files treat specially. */
const PATH = /^\/[A-Za-z0-9\-._~!$&()*+,;=:@%/]*$/;
/** IANA service names, as Kubernetes port names are. */
const PORT_NAME = /^[a-z0-9]([-a-z0-9]{0,13}[a-z0-9])?$/;
const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;
// eslint-disable-next-line no-control-regex -- matching control characters is the point
export const CONTROL = /[\u0000-\u001f\u007f]/;

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isDnsLabel(value: unknown): value is string {
  return typeof value === 'string' && DNS_LABEL.test(value);
}

/** A DNS-1123 subdomain of at most 253 characters (object names, class and Secret names). */
export function isDnsSubdomain(value: unknown): value is string {
  return typeof value === 'string' && value.length >= 1 && value.length <= MAX_HOST && DNS_SUBDOMAIN.test(value);
}

/** A lower-case host name, optionally a `*.` wildcard, of at most 253 characters and 63 per label. */
export function isHost(value: unknown): value is string {
  return typeof value === 'string' && value.length >= 1 && value.length <= MAX_HOST && HOST_LABELS.test(value);
}

export function isSafePath(value: unknown): value is string {
  return typeof value === 'string' && value.length <= MAX_PATH && PATH.test(value);
}

export function isPortName(value: unknown): value is string {
  return typeof value === 'string' && PORT_NAME.test(value) && /[a-z]/.test(value) && !value.includes('--');
}

export function isPort(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 65535;
}

/** `[prefix/]name`: a label or annotation key as Kubernetes validates it. */
export function isQualifiedName(value: string): boolean {
  const slash = value.indexOf('/');
  const name = slash < 0 ? value : value.slice(slash + 1);
  if (slash >= 0 && !isDnsSubdomain(value.slice(0, slash))) return false;
  return name.length <= MAX_DNS_LABEL && QUALIFIED_NAME_PART.test(name);
}

export function isLabelValue(value: unknown): value is string {
  return typeof value === 'string' && value.length <= MAX_LABEL_VALUE && LABEL_VALUE.test(value);
}

/** An RFC 3339 timestamp as the API server writes `creationTimestamp`. */
export function isTimestamp(value: unknown): value is string {
  return typeof value === 'string' && TIMESTAMP.test(value) && !Number.isNaN(Date.parse(value));
}
