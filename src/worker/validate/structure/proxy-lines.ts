// The lines of defaults, frontend, backend and listen sections: resolves the keyword (with its
// family word, `option httplog`, and the `no` prefix), checks it against the proxy keyword
// matrix for this kind of section, then hands the arguments to the keyword's check in
// PROXY_ARGUMENTS.
import {
  CAP_B,
  CAP_D,
  CAP_F,
  CAP_L,
  CAP_NAMED_DEFAULTS,
  CAP_NEGATABLE,
  PROXY_FAMILIES,
  PROXY_KEYWORDS,
  REMOVED_PROXY_KEYWORDS,
} from '../keywords.js';
import type { Section } from './ops.js';
import type { ParseContext } from './parse-context.js';
import { checkProxyArguments } from './proxy-arguments.js';

export function proxyLine(p: ParseContext, section: Section, w: readonly string[], lineNo: number, line: string): void {
  let keyword = w[0] as string;
  let first = 0;
  let negated = false;
  if (keyword === 'no' && w.length > 1) {
    negated = true;
    first = 1;
    keyword = w[1] as string;
  }
  const removed = REMOVED_PROXY_KEYWORDS.get(keyword);
  if (removed !== undefined) {
    p.error(lineNo, removed);
    return;
  }
  let key = keyword;
  if (PROXY_FAMILIES.has(keyword)) {
    const sub = w[first + 1];
    if (sub === undefined) {
      p.error(lineNo, `'${keyword}' expects an argument ${p.where()}`);
      return;
    }
    key = `${keyword} ${familyWord(sub)}`;
  }
  const caps = PROXY_KEYWORDS.get(key);
  if (caps === undefined) {
    if (key !== keyword) {
      p.error(lineNo, `unknown '${keyword}' keyword '${w[first + 1]}' ${p.where()}`);
    } else {
      p.unknownKeyword(keyword, lineNo, line);
    }
    return;
  }
  if (negated && !(caps & CAP_NEGATABLE) && key !== 'log') {
    p.error(lineNo, `'no ${key}' is not supported: '${key}' cannot be negated`);
    return;
  }
  const need = section.kind === 'defaults' ? CAP_D : section.kind === 'frontend' ? CAP_F : section.kind === 'listen' ? CAP_L : CAP_B;
  if (!(caps & need)) {
    p.error(lineNo, `'${key}' is not allowed ${p.where()}`);
    return;
  }
  if (section.kind === 'defaults' && !section.named && caps & CAP_NAMED_DEFAULTS) {
    p.error(lineNo, `'${key}' is not allowed in an anonymous defaults section (name the section)`);
    return;
  }
  if (negated) return;
  checkProxyArguments(p, section, key, w, lineNo);
}

/** The second word of a family keyword, without arguments: `set-var(txn.x)` is `set-var`. */
function familyWord(sub: string): string {
  const paren = sub.indexOf('(');
  return paren < 0 ? sub : sub.slice(0, paren);
}
