// server, server-template, default-server and bind lines: their addresses, their keywords with
// the arity the keyword tables give, and the files and resolvers sections they name. A
// duplicate server name quotes the first one's line, which is in the same section, hence in
// the same parsed text (op 'error-at').
import { ARG_INT, ARG_NONE, ARG_PORT, ARG_TIME, BIND_KEYWORDS, SERVER_KEYWORDS } from '../keywords.js';
import { isDigits, isDynamic, isTime } from '../tokenizer.js';
import { bindAddressProblem, serverAddressProblem } from './addresses.js';
import type { Section } from './ops.js';
import type { ParseContext } from './parse-context.js';

export function serverLine(p: ParseContext, w: readonly string[], lineNo: number, inPeers: boolean): void {
  const name = w[1];
  const addr = w[2];
  if (name === undefined || (addr === undefined && !inPeers)) {
    p.error(lineNo, `'server' expects <name> and <address>[:<port>] as arguments`);
    return;
  }
  const previous = p.servers.get(name);
  if (previous !== undefined) {
    // The first server is in the same section, hence in the same parsed text: its line moves
    // with this one, so the message keeps it apart.
    p.push({
      op: 'error-at',
      line: lineNo,
      head: `another server named '${name}' was already defined at line `,
      at: previous,
      tail: ` ${p.where()}`,
    });
  } else {
    p.servers.set(name, lineNo);
  }
  if (addr === undefined) return;
  const bad = serverAddressProblem(addr);
  if (bad !== null) p.error(lineNo, `server '${name}': ${bad}`);
  serverParams(p, w, 3, lineNo, `server '${name}'`);
}

export function serverTemplate(p: ParseContext, w: readonly string[], lineNo: number): void {
  const prefix = w[1];
  const count = w[2];
  const addr = w[3];
  if (prefix === undefined || count === undefined || addr === undefined) {
    p.error(lineNo, `'server-template' expects <prefix> <nb | range> <fqdn>[:<port>]`);
    return;
  }
  const dash = count.indexOf('-');
  const rangeOk = dash < 0 ? isDigits(count) : isDigits(count.slice(0, dash)) && isDigits(count.slice(dash + 1));
  if (!rangeOk) p.error(lineNo, `server-template '${prefix}': invalid number or range '${count}'`);
  const bad = serverAddressProblem(addr);
  if (bad !== null) p.error(lineNo, `server-template '${prefix}': ${bad}`);
  serverParams(p, w, 4, lineNo, `server-template '${prefix}'`);
}

export function serverParams(p: ParseContext, w: readonly string[], from: number, lineNo: number, what: string): void {
  for (let i = from; i < w.length; i++) {
    const kw = w[i] as string;
    if (kw === 'source') {
      if (w[i + 1] === undefined) {
        p.error(lineNo, `${what}: 'source' expects an address`);
        return;
      }
      i++;
      while (w[i + 1] === 'usesrc' || w[i + 1] === 'interface') {
        if (w[i + 2] === undefined) {
          p.error(lineNo, `${what}: '${w[i + 1]}' expects an argument`);
          return;
        }
        i += 2;
      }
      continue;
    }
    const arity = SERVER_KEYWORDS.get(kw);
    if (arity === undefined) {
      p.error(lineNo, `${what}: unknown keyword '${kw}'`);
      continue;
    }
    if (arity === ARG_NONE) continue;
    const arg = w[i + 1];
    if (arg === undefined) {
      p.error(lineNo, `${what}: '${kw}' expects an argument`);
      return;
    }
    i++;
    checkArgument(p, kw, arity, arg, lineNo, what);
    if (kw === 'crt' || kw === 'ca-file' || kw === 'crl-file') p.checkPath(kw, arg, lineNo);
    else if (kw === 'resolvers') p.sectionRef('resolvers', arg, lineNo, `${what} resolvers`);
  }
}

function checkArgument(p: ParseContext, kw: string, arity: number, arg: string, lineNo: number, what: string): void {
  if (isDynamic(arg)) return;
  if (arity === ARG_INT && !isDigits(arg)) {
    p.error(lineNo, `${what}: '${kw}' expects an integer argument (got '${arg}')`);
  } else if (arity === ARG_TIME && !isTime(arg)) {
    p.error(lineNo, `${what}: '${kw}' expects a time argument (got '${arg}')`);
  } else if (arity === ARG_PORT && (!isDigits(arg) || Number(arg) < 1 || Number(arg) > 65535)) {
    p.error(lineNo, `${what}: invalid port '${arg}'`);
  } else if (kw === 'weight' && Number(arg) > 256) {
    p.error(lineNo, `${what}: weight must be between 0 and 256 (got '${arg}')`);
  } else if ((kw === 'rise' || kw === 'fall') && Number(arg) < 1) {
    p.error(lineNo, `${what}: '${kw}' must be at least 1`);
  }
}

export function bindLine(p: ParseContext, section: Section, w: readonly string[], lineNo: number): void {
  const addrs = w[1];
  if (addrs === undefined) {
    p.error(lineNo, `'bind' expects an address`);
    return;
  }
  for (const addr of addrs.split(',')) {
    const bad = bindAddressProblem(addr);
    if (bad !== null) {
      p.error(lineNo, `bind: ${bad}`);
      continue;
    }
    p.push({ op: 'bind', line: lineNo, addr, section });
  }
  for (let i = 2; i < w.length; i++) {
    const kw = w[i] as string;
    const arity = BIND_KEYWORDS.get(kw);
    if (arity === undefined) {
      p.error(lineNo, `bind: unknown keyword '${kw}'`);
      continue;
    }
    if (arity === ARG_NONE) continue;
    const arg = w[i + 1];
    if (arg === undefined) {
      p.error(lineNo, `bind: '${kw}' expects an argument`);
      return;
    }
    i++;
    checkArgument(p, kw, arity, arg, lineNo, 'bind');
    if (kw === 'crt' || kw === 'crt-list' || kw === 'ca-file' || kw === 'crl-file' || kw === 'ca-verify-file') {
      p.checkPath(kw === 'ca-verify-file' ? 'ca-file' : kw, arg, lineNo);
    }
  }
}
