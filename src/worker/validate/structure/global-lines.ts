// The lines of the global section: removed and unknown keywords, the few arguments worth
// checking, the crt-base / ca-base that later relative paths resolve against, and the files
// global keywords load.
import { posix } from 'node:path';
import { GLOBAL_KEYWORDS, GLOBAL_PREFIXES, REMOVED_GLOBAL_KEYWORDS } from '../keywords.js';
import { stripSlash } from '../paths.js';
import { isIntegerArg, isTimeArg } from '../tokenizer.js';
import type { ParseContext } from './parse-context.js';

export function globalLine(p: ParseContext, w: readonly string[], lineNo: number, line: string): void {
  const keyword = w[0] as string;
  const removed = REMOVED_GLOBAL_KEYWORDS.get(keyword);
  if (removed !== undefined) {
    p.error(lineNo, removed);
    return;
  }
  if (!GLOBAL_KEYWORDS.has(keyword) && !GLOBAL_PREFIXES.some((prefix) => keyword.startsWith(prefix))) {
    p.unknownKeyword(keyword, lineNo, line);
    return;
  }
  switch (keyword) {
    case 'crt-base':
    case 'ca-base':
      p.push({ op: keyword, value: w[1] === undefined ? null : stripSlash(posix.normalize(w[1])) });
      break;
    case 'maxconn':
    case 'nbthread':
    case 'ulimit-n':
    case 'maxsslconn':
    case 'maxconnrate':
    case 'maxsessrate':
      if (!isIntegerArg(w[1])) p.error(lineNo, `'${keyword}' expects an integer argument`);
      break;
    case 'hard-stop-after':
    case 'grace':
      if (!isTimeArg(w[1])) p.error(lineNo, `'${keyword}' expects a time argument`);
      break;
    case 'httpclient.ssl.ca-file':
      if (w[1] !== undefined) p.checkPath('ca-file', w[1], lineNo);
      break;
    case 'lua-load':
    case 'lua-load-per-thread':
    case 'h1-case-adjust-file':
      if (w[1] !== undefined) p.checkPath('file', w[1], lineNo);
      break;
    default:
      break;
  }
}
