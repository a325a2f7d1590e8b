// The field rules of the Gateway API kinds (gateway-check.ts, httproute-check.ts), beside the
// Ingress ones of field-rules.ts: the caps of the upstream CRDs (maxItems), header and query
// parameter names and values, section names, durations and label selectors. Every value a
// template may write passes a rule that keeps out whitespace where HAProxy splits words, quotes,
// backslashes, `%` (log-format), `$` (environment expansion), `#` (comments) and braces (ACL
// blocks); `x-haptic-*` header names are reserved for the controller. Pure, no state.
import { isIP } from 'node:net';
import { isLabelValue, isQualifiedName, isRecord } from './field-rules.js';
import { quote } from './log-text.js';

/** The upstream CRDs' maxItems, and our caps on the values the templates write. */
export const GATEWAY_LIMITS = {
  listeners: 64,
  addresses: 16,
  certificateRefs: 64,
  allowedKinds: 8,
  parentRefs: 32,
  hostnames: 16,
  rules: 16,
  matches: 64,
  headers: 16,
  queryParams: 16,
  filters: 16,
  backendRefs: 16,
  modifierEntries: 16,
  grantEntries: 16,
  selectorTerms: 16,
  selectorValues: 64,
  headerName: 256,
  headerValue: 1024,
  weight: 1_000_000,
} as const;

/** The status codes a RequestRedirect may ask for: 301 and 302 (core), 303, 307 and 308 (extended). */
export const REDIRECT_CODES = [301, 302, 303, 307, 308] as const;
export type RedirectCode = (typeof REDIRECT_CODES)[number];

const HEADER_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
/** A value matched as one ACL word: printable ASCII without spaces or the characters above. */
const MATCH_VALUE = /^[!&'()*+,./0-9:;<=>?@A-Z[\]^_`a-z|~-]+$/;
/** A value written between double quotes: the same, plus spaces. */
const MODIFIER_VALUE = /^[ !&'()*+,./0-9:;<=>?@A-Z[\]^_`a-z|~-]*$/;
const QUERY_NAME = /^[A-Za-z0-9._~-]+$/;
const SECTION_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** A Gateway API duration: 1 to 4 `<number><unit>` parts, units h, m, s, ms. */
const DURATION = /^([0-9]{1,5}(h|m|s|ms)){1,4}$/;
const CONTROLLER_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$/;

export const GATEWAY_GROUP = 'gateway.networking.k8s.io';

export function isHeaderName(value: unknown): value is string {
  return typeof value === 'string' && value.length <= GATEWAY_LIMITS.headerName && HEADER_NAME.test(value);
}

/** Header names the controller sets itself (the loop guard): no tenant may set or remove them. */
export function isReservedHeader(name: string): boolean {
  return name.toLowerCase().startsWith('x-haptic-');
}

export function isMatchValue(value: unknown): value is string {
  return typeof value === 'string' && value.length <= GATEWAY_LIMITS.headerValue && MATCH_VALUE.test(value);
}

export function isModifierValue(value: unknown): value is string {
  return typeof value === 'string' && value.length <= GATEWAY_LIMITS.headerValue && MODIFIER_VALUE.test(value);
}

export function isQueryName(value: unknown): value is string {
  return typeof value === 'string' && value.length <= GATEWAY_LIMITS.headerName && QUERY_NAME.test(value);
}

export function isSectionName(value: unknown): value is string {
  return typeof value === 'string' && value.length >= 1 && value.length <= 253 && SECTION_NAME.test(value);
}

export function isControllerName(value: unknown): value is string {
  return typeof value === 'string' && value.length <= 253 && CONTROLLER_NAME.test(value);
}

export function isIpAddress(value: unknown): value is string {
  return typeof value === 'string' && value.length <= 45 && isIP(value) !== 0;
}

/** Milliseconds of a Gateway API duration (`10s`, `1m30s`, `500ms`), or undefined when it is not one. */
export function durationMs(value: unknown): number | undefined {
  if (typeof value !== 'string' || !DURATION.test(value)) return undefined;
  const unit: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };
  let total = 0;
  for (const [, amount, name] of value.matchAll(/([0-9]+)(ms|h|m|s)/g)) total += Number(amount) * (unit[name as string] as number);
  return total;
}

/** Why a list field is unusable (not a list, or over its cap), or null. `undefined` is fine. */
export function listProblem(value: unknown, where: string, max: number): string | null {
  if (value === undefined) return null;
  if (!Array.isArray(value)) return `${where} is ${quote(value)}, not a list`;
  if (value.length > max) return `${where} has ${value.length} entries, over the limit of ${max}`;
  return null;
}

const SELECTOR_OPERATORS = new Set(['In', 'NotIn', 'Exists', 'DoesNotExist']);

/** Why a label selector (`matchLabels`, `matchExpressions`) is unusable, or null. */
export function selectorProblem(selector: unknown, where: string): string | null {
  if (!isRecord(selector)) return `${where} is ${quote(selector)}, not a mapping`;
  const labels = selector.matchLabels;
  if (labels !== undefined) {
    if (!isRecord(labels)) return `${where}.matchLabels is ${quote(labels)}, not a mapping`;
    if (Object.keys(labels).length > GATEWAY_LIMITS.selectorTerms) return `${where}.matchLabels has over ${GATEWAY_LIMITS.selectorTerms} entries`;
    for (const [key, value] of Object.entries(labels)) {
      if (!isQualifiedName(key) || !isLabelValue(value)) return `${where}.matchLabels ${quote(key)}: ${quote(value)} is not a valid label`;
    }
  }
  const expressions = selector.matchExpressions;
  const listed = listProblem(expressions, `${where}.matchExpressions`, GATEWAY_LIMITS.selectorTerms);
  if (listed !== null) return listed;
  for (const [e, term] of ((expressions as unknown[] | undefined) ?? []).entries()) {
    const at = `${where}.matchExpressions[${e}]`;
    if (!isRecord(term) || typeof term.key !== 'string' || !isQualifiedName(term.key)) return `${at}.key is not a valid label key`;
    if (typeof term.operator !== 'string' || !SELECTOR_OPERATORS.has(term.operator)) return `${at}.operator ${quote(term.operator)} must be In, NotIn, Exists or DoesNotExist`;
    const valuesProblem = listProblem(term.values, `${at}.values`, GATEWAY_LIMITS.selectorValues);
    if (valuesProblem !== null) return valuesProblem;
    if (((term.values as unknown[] | undefined) ?? []).some((v) => !isLabelValue(v))) return `${at}.values holds a value that is not a valid label value`;
  }
  return null;
}
