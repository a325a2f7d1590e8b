// The rules of a proxy: http-request / http-response / tcp-request ... actions, checked against
// the action list of their ruleset, and use_backend / default_backend targets. A target is a
// backend name, checked once every proxy is known, or a map converter whose map routes to
// backends, checked against the rendered map at replay.
import { PARAMETERISED_ACTIONS } from '../keywords.js';
import { findMapConverters, unquoteArg } from '../map-converters.js';
import { isDigits, isDynamic } from '../tokenizer.js';
import type { Section } from './ops.js';
import type { ParseContext } from './parse-context.js';
import { scanCondition, scanReferences } from './references.js';

export function ruleAction(p: ParseContext, w: readonly string[], index: number, allowed: ReadonlySet<string>, lineNo: number, key: string): void {
  const action = w[index];
  if (action === undefined) {
    p.error(lineNo, `'${key}' expects an action`);
    return;
  }
  const known =
    allowed.has(action) ||
    action.startsWith('lua.') ||
    (action.startsWith('track-sc') && isDigits(action.slice(8))) ||
    PARAMETERISED_ACTIONS.some((prefix) => action.startsWith(prefix) && action.endsWith(')'));
  if (!known) {
    p.error(lineNo, `unknown '${key}' action '${action}' ${p.where()}`);
    return;
  }
  if (action === 'cache-use' || action === 'cache-store') {
    const name = w[index + 1];
    if (name !== undefined) p.sectionRef('cache', name, lineNo, `${key} ${action}`);
  }
  if (action.startsWith('set-map(') || action.startsWith('del-map(') || action.startsWith('add-acl(') || action.startsWith('del-acl(')) {
    const open = action.indexOf('(');
    p.checkPath(action.startsWith('set-map') || action.startsWith('del-map') ? 'map' : 'pattern', unquoteArg(action.slice(open + 1, -1)), lineNo);
  }
  scanReferences(p, w, index + 1, lineNo, true);
}

export function backendTarget(p: ParseContext, section: Section, key: string, w: readonly string[], lineNo: number): void {
  const target = w[1];
  if (target === undefined || target === 'if' || target === 'unless') {
    p.error(lineNo, `'${key}' expects a backend name`);
    return;
  }
  if (key === 'default_backend' && w.length > 2) {
    p.error(lineNo, `'default_backend' takes one backend name and no condition`);
  }
  if (isDynamic(target)) {
    // Named by an environment variable: resolved by HAProxy at load time.
  } else if (target.indexOf('%[') < 0) {
    p.push({ op: 'backend-ref', line: lineNo, name: target, keyword: key, proxy: section.name });
  } else {
    findMapConverters(target, p.converters);
    for (const conv of p.converters) {
      p.push({ op: 'map-target', line: lineNo, conv, keyword: key, proxy: section.name });
    }
  }
  scanCondition(p, w, 2, lineNo);
}
