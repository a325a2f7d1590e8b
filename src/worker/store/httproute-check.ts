// The HTTPRoute check. A bad parentRef is left out alone, and so is a bad rule (a bad match,
// filter, backendRef or timeout costs its whole rule: leaving out only a match would widen what
// the rule answers). A bad hostname rejects the route: without it the route would answer more
// hosts than it asked for. Values follow gateway-fields.ts; header names are case-insensitive
// and `x-haptic-*` ones are reserved. The view is a frozen copy.
import type { KubeObject } from '../protocol.js';
import { isDnsLabel, isDnsSubdomain, isHost, isPort, isRecord, isSafePath, rejected, type KindOutcome, type Problem } from './field-rules.js';
import { isGroupKind } from './gateway-check.js';
import {
  durationMs,
  GATEWAY_LIMITS,
  isHeaderName,
  isMatchValue,
  isModifierValue,
  isQueryName,
  isReservedHeader,
  isSectionName,
  listProblem,
  REDIRECT_CODES,
  type RedirectCode,
} from './gateway-fields.js';
import { quote } from './log-text.js';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH']);
const FILTERS = new Set(['RequestHeaderModifier', 'ResponseHeaderModifier', 'RequestRedirect', 'URLRewrite']);

export function checkHttpRoute(object: KubeObject): KindOutcome {
  const spec = object.spec;
  if (!isRecord(spec)) return rejected('object', `spec is ${quote(spec)}, not a mapping`);
  const listed =
    listProblem(spec.parentRefs, 'spec.parentRefs', GATEWAY_LIMITS.parentRefs) ??
    listProblem(spec.hostnames, 'spec.hostnames', GATEWAY_LIMITS.hostnames) ??
    listProblem(spec.rules, 'spec.rules', GATEWAY_LIMITS.rules);
  if (listed !== null) return rejected('object', listed);
  for (const [h, host] of ((spec.hostnames as unknown[] | undefined) ?? []).entries()) {
    if (!isHost(host)) return rejected('object', `spec.hostnames[${h}] ${quote(host)} is not a valid host name`);
  }
  const dropped: Problem[] = [];
  const parentRefs = ((spec.parentRefs as unknown[] | undefined) ?? []).filter((ref, p) => {
    const problem = parentRefProblem(ref, `spec.parentRefs[${p}]`);
    if (problem !== null) dropped.push({ scope: 'path', reason: `${problem}; the parentRef is dropped` });
    return problem === null;
  });
  const rules = ((spec.rules as unknown[] | undefined) ?? []).map((rule, r) => {
    const problem = ruleProblem(rule, `spec.rules[${r}]`);
    if (problem === null) return rule;
    dropped.push({ scope: 'path', reason: `${problem}; the rule is dropped` });
    // Kept as a hole so the other rules keep their index (rule order is a tie-breaker).
    return null;
  });
  if (dropped.length === 0) return { dropped };
  return { patch: { spec: Object.freeze({ ...spec, parentRefs: Object.freeze(parentRefs), rules: Object.freeze(rules) }) }, dropped };
}

function parentRefProblem(ref: unknown, at: string): string | null {
  if (!isRecord(ref)) return `${at} is ${quote(ref)}, not a mapping`;
  if (!isDnsSubdomain(ref.name)) return `${at}.name ${quote(ref.name)} is not a valid name`;
  if (ref.namespace !== undefined && !isDnsLabel(ref.namespace)) return `${at}.namespace ${quote(ref.namespace)} is not a valid namespace`;
  if (ref.sectionName !== undefined && !isSectionName(ref.sectionName)) return `${at}.sectionName ${quote(ref.sectionName)} is not a valid section name`;
  if (ref.port !== undefined && !isPort(ref.port)) return `${at}.port ${quote(ref.port)} is not a port number`;
  if ((ref.group !== undefined || ref.kind !== undefined) && !isGroupKind({ group: ref.group ?? '', kind: ref.kind ?? 'Gateway' })) return `${at} has an invalid group or kind`;
  return null;
}

function ruleProblem(rule: unknown, at: string): string | null {
  if (!isRecord(rule)) return `${at} is ${quote(rule)}, not a mapping`;
  const listed =
    listProblem(rule.matches, `${at}.matches`, GATEWAY_LIMITS.matches) ??
    listProblem(rule.filters, `${at}.filters`, GATEWAY_LIMITS.filters) ??
    listProblem(rule.backendRefs, `${at}.backendRefs`, GATEWAY_LIMITS.backendRefs);
  if (listed !== null) return listed;
  for (const [m, match] of ((rule.matches as unknown[] | undefined) ?? []).entries()) {
    const problem = matchProblem(match, `${at}.matches[${m}]`);
    if (problem !== null) return problem;
  }
  for (const [f, filter] of ((rule.filters as unknown[] | undefined) ?? []).entries()) {
    const problem = filterProblem(filter, `${at}.filters[${f}]`);
    if (problem !== null) return problem;
  }
  for (const [b, ref] of ((rule.backendRefs as unknown[] | undefined) ?? []).entries()) {
    const problem = backendRefProblem(ref, `${at}.backendRefs[${b}]`);
    if (problem !== null) return problem;
  }
  if (rule.timeouts !== undefined) {
    if (!isRecord(rule.timeouts)) return `${at}.timeouts is ${quote(rule.timeouts)}, not a mapping`;
    for (const field of ['request', 'backendRequest'] as const) {
      const value = rule.timeouts[field];
      if (value !== undefined && durationMs(value) === undefined) return `${at}.timeouts.${field} ${quote(value)} is not a duration (like 10s or 1m30s)`;
    }
  }
  return null;
}

function matchProblem(match: unknown, at: string): string | null {
  if (!isRecord(match)) return `${at} is ${quote(match)}, not a mapping`;
  const path = match.path;
  if (path !== undefined) {
    if (!isRecord(path)) return `${at}.path is ${quote(path)}, not a mapping`;
    const type = path.type ?? 'PathPrefix';
    if (type !== 'Exact' && type !== 'PathPrefix') return `${at}.path.type ${quote(type)} is not supported (Exact or PathPrefix)`;
    if (!isSafePath(path.value ?? '/')) return `${at}.path.value ${quote(path.value)} is not a safe URL path (it must start with '/' and hold no spaces, quotes, '#', brackets or control characters)`;
  }
  const listed = listProblem(match.headers, `${at}.headers`, GATEWAY_LIMITS.headers) ?? listProblem(match.queryParams, `${at}.queryParams`, GATEWAY_LIMITS.queryParams);
  if (listed !== null) return listed;
  for (const [h, header] of ((match.headers as unknown[] | undefined) ?? []).entries()) {
    if (!isRecord(header) || (header.type ?? 'Exact') !== 'Exact') return `${at}.headers[${h}] is not an Exact header match`;
    if (!isHeaderName(header.name)) return `${at}.headers[${h}].name ${quote(header.name)} is not a valid header name`;
    if (isReservedHeader(header.name)) return `${at}.headers[${h}].name ${quote(header.name)} is reserved (x-haptic-*)`;
    if (!isMatchValue(header.value)) return `${at}.headers[${h}].value ${quote(header.value)} is not a plain value (printable, without spaces, quotes, '%', '$', '#' or braces)`;
  }
  for (const [q, param] of ((match.queryParams as unknown[] | undefined) ?? []).entries()) {
    if (!isRecord(param) || (param.type ?? 'Exact') !== 'Exact') return `${at}.queryParams[${q}] is not an Exact query parameter match`;
    if (!isQueryName(param.name)) return `${at}.queryParams[${q}].name ${quote(param.name)} is not a valid query parameter name`;
    if (!isMatchValue(param.value)) return `${at}.queryParams[${q}].value ${quote(param.value)} is not a plain value`;
  }
  if (match.method !== undefined && (typeof match.method !== 'string' || !METHODS.has(match.method))) return `${at}.method ${quote(match.method)} is not an HTTP method`;
  return null;
}

function filterProblem(filter: unknown, at: string): string | null {
  if (!isRecord(filter)) return `${at} is ${quote(filter)}, not a mapping`;
  if (typeof filter.type !== 'string' || !FILTERS.has(filter.type)) return `${at}.type ${quote(filter.type)} is not supported (RequestHeaderModifier, ResponseHeaderModifier, RequestRedirect or URLRewrite)`;
  switch (filter.type) {
    case 'RequestHeaderModifier':
      return modifierProblem(filter.requestHeaderModifier, `${at}.requestHeaderModifier`);
    case 'ResponseHeaderModifier':
      return modifierProblem(filter.responseHeaderModifier, `${at}.responseHeaderModifier`);
    case 'RequestRedirect':
      return redirectProblem(filter.requestRedirect, `${at}.requestRedirect`);
    default:
      return rewriteProblem(filter.urlRewrite, `${at}.urlRewrite`);
  }
}

function modifierProblem(modifier: unknown, at: string): string | null {
  if (!isRecord(modifier)) return `${at} is ${quote(modifier)}, not a mapping`;
  for (const field of ['set', 'add'] as const) {
    const listed = listProblem(modifier[field], `${at}.${field}`, GATEWAY_LIMITS.modifierEntries);
    if (listed !== null) return listed;
    for (const [e, entry] of ((modifier[field] as unknown[] | undefined) ?? []).entries()) {
      const where = `${at}.${field}[${e}]`;
      if (!isRecord(entry) || !isHeaderName(entry.name)) return `${where}.name ${quote(isRecord(entry) ? entry.name : entry)} is not a valid header name`;
      if (isReservedHeader(entry.name)) return `${where}.name ${quote(entry.name)} is reserved (x-haptic-*)`;
      if (!isModifierValue(entry.value)) return `${where}.value ${quote(entry.value)} is not a plain value (printable, without quotes, '%', '$', '#' or braces)`;
    }
  }
  const listed = listProblem(modifier.remove, `${at}.remove`, GATEWAY_LIMITS.modifierEntries);
  if (listed !== null) return listed;
  for (const [e, name] of ((modifier.remove as unknown[] | undefined) ?? []).entries()) {
    if (!isHeaderName(name)) return `${at}.remove[${e}] ${quote(name)} is not a valid header name`;
    if (isReservedHeader(name)) return `${at}.remove[${e}] ${quote(name)} is reserved (x-haptic-*)`;
  }
  return null;
}

function pathModifierProblem(path: unknown, at: string): string | null {
  if (path === undefined) return null;
  if (!isRecord(path)) return `${at} is ${quote(path)}, not a mapping`;
  if (path.type === 'ReplaceFullPath') return isSafePath(path.replaceFullPath) ? null : `${at}.replaceFullPath ${quote(path.replaceFullPath)} is not a safe URL path`;
  if (path.type === 'ReplacePrefixMatch') return isSafePath(path.replacePrefixMatch) ? null : `${at}.replacePrefixMatch ${quote(path.replacePrefixMatch)} is not a safe URL path`;
  return `${at}.type ${quote(path.type)} must be ReplaceFullPath or ReplacePrefixMatch`;
}

function redirectProblem(redirect: unknown, at: string): string | null {
  if (!isRecord(redirect)) return `${at} is ${quote(redirect)}, not a mapping`;
  if (redirect.scheme !== undefined && redirect.scheme !== 'http' && redirect.scheme !== 'https') return `${at}.scheme ${quote(redirect.scheme)} must be http or https`;
  if (redirect.hostname !== undefined && (!isHost(redirect.hostname) || redirect.hostname.startsWith('*'))) return `${at}.hostname ${quote(redirect.hostname)} is not a host name`;
  if (redirect.port !== undefined && !isPort(redirect.port)) return `${at}.port ${quote(redirect.port)} is not a port number`;
  if (redirect.statusCode !== undefined && !REDIRECT_CODES.includes(redirect.statusCode as RedirectCode)) return `${at}.statusCode ${quote(redirect.statusCode)} must be one of ${REDIRECT_CODES.join(', ')}`;
  return pathModifierProblem(redirect.path, `${at}.path`);
}

function rewriteProblem(rewrite: unknown, at: string): string | null {
  if (!isRecord(rewrite)) return `${at} is ${quote(rewrite)}, not a mapping`;
  if (rewrite.hostname !== undefined && (!isHost(rewrite.hostname) || rewrite.hostname.startsWith('*'))) return `${at}.hostname ${quote(rewrite.hostname)} is not a host name`;
  return pathModifierProblem(rewrite.path, `${at}.path`);
}

function backendRefProblem(ref: unknown, at: string): string | null {
  if (!isRecord(ref)) return `${at} is ${quote(ref)}, not a mapping`;
  if (!isDnsSubdomain(ref.name)) return `${at}.name ${quote(ref.name)} is not a valid name`;
  if (ref.namespace !== undefined && !isDnsLabel(ref.namespace)) return `${at}.namespace ${quote(ref.namespace)} is not a valid namespace`;
  if ((ref.group !== undefined || ref.kind !== undefined) && !isGroupKind({ group: ref.group ?? '', kind: ref.kind ?? 'Service' })) return `${at} has an invalid group or kind`;
  if (ref.port !== undefined && !isPort(ref.port)) return `${at}.port ${quote(ref.port)} is not a port number`;
  if (ref.weight !== undefined && !(Number.isInteger(ref.weight) && (ref.weight as number) >= 0 && (ref.weight as number) <= GATEWAY_LIMITS.weight)) {
    return `${at}.weight ${quote(ref.weight)} must be an integer from 0 to ${GATEWAY_LIMITS.weight}`;
  }
  if (ref.filters !== undefined) return `${at}.filters are not supported`;
  return null;
}
