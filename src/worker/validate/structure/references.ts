// The references a proxy line carries past its keyword: file paths (map converters, `-f`
// pattern files, `file` / `errorfile` arguments) and the ACL names of an `if` / `unless`
// condition, which must be predefined or declared earlier in the same proxy. Paths are recorded
// as written; their verdict depends on crt-base / ca-base and the rendered files, decided at replay.
import { ERRORFILE_CODES, PREDEFINED_ACLS } from '../keywords.js';
import { findMapConverters } from '../map-converters.js';
import type { ParseContext } from './parse-context.js';

/** `errorfile <code> <file>`, in proxies and in http-errors sections. */
export function errorfile(p: ParseContext, w: readonly string[], lineNo: number): void {
  const code = w[1];
  const file = w[2];
  if (code === undefined || file === undefined) {
    p.error(lineNo, `'errorfile' expects a status code and a file`);
    return;
  }
  if (!ERRORFILE_CODES.has(code)) p.error(lineNo, `errorfile: status code '${code}' not handled`);
  p.checkPath('errorfile', file, lineNo);
}

/**
 * Collects file references (map converters, `-f` pattern files, `crt`, `errorfile`, `file`)
 * in words[from..] and checks the condition's ACL names.
 */
export function scanReferences(p: ParseContext, w: readonly string[], from: number, lineNo: number, withCondition: boolean): void {
  let conditionAt = -1;
  for (let i = from; i < w.length; i++) {
    const word = w[i] as string;
    if (withCondition && conditionAt < 0 && (word === 'if' || word === 'unless')) conditionAt = i;
    if (word.indexOf(',map') >= 0) {
      findMapConverters(word, p.converters);
      for (const conv of p.converters) p.checkPath('map', conv.path, lineNo);
    } else if (word === '-f' && i + 1 < w.length) {
      p.checkPath('pattern', w[i + 1] as string, lineNo);
      i++;
    } else if ((word === 'file' || word === 'lf-file' || word === 'errorfile') && i + 1 < w.length && (w[0] as string).startsWith('http-')) {
      p.checkPath('file', w[i + 1] as string, lineNo);
      i++;
    }
  }
  if (conditionAt >= 0) scanCondition(p, w, conditionAt, lineNo);
}

/** Every named ACL a condition uses must be predefined or declared earlier in the proxy. */
export function scanCondition(p: ParseContext, w: readonly string[], at: number, lineNo: number): void {
  const head = w[at];
  if (head !== 'if' && head !== 'unless') {
    if (head !== undefined) p.error(lineNo, `unexpected '${head}': expected 'if' or 'unless'`);
    return;
  }
  if (at + 1 >= w.length) {
    p.error(lineNo, `'${head}' expects a condition`);
    return;
  }
  let depth = 0;
  for (let i = at + 1; i < w.length; i++) {
    let word = w[i] as string;
    if (depth === 0) {
      while (word.startsWith('!')) word = word.slice(1);
      if (word === '') continue;
    }
    if (word === '{') {
      depth++;
      continue;
    }
    if (word === '}') {
      depth--;
      continue;
    }
    if (depth > 0) {
      // Anonymous ACL: its pattern words may still name files.
      if (word === '-f' && i + 1 < w.length) p.checkPath('pattern', w[++i] as string, lineNo);
      else if (word.indexOf(',map') >= 0) {
        findMapConverters(word, p.converters);
        for (const conv of p.converters) p.checkPath('map', conv.path, lineNo);
      }
      continue;
    }
    if (word === '||' || word === 'or') continue;
    if (!p.acls.has(word) && !PREDEFINED_ACLS.has(word)) {
      p.error(lineNo, `condition uses unknown ACL '${word}' ${p.where()}`);
    }
  }
  if (depth !== 0) p.error(lineNo, `unbalanced braces in condition`);
}
