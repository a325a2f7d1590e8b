// `{{backendOptionLines backend}}`: the lines a model backend's options write after its `backend`
// line (balance, timeouts, cookie, default-server, httpchk), each ending in a newline. The default
// set wrote them as a `with` over `b.options` holding a dozen `if`/`with` blocks, most of them
// empty for a given backend, and each block call costs a frame and program wrappers: a cold render
// makes them for every backend. One call writes the same text. It reads only the backend it is
// given, so it may be called inside a memo block.

import { elements, field, present, shown, truthy } from './handlebars-values.js';

const TIMEOUTS = ['server', 'connect', 'tunnel', 'queue'] as const;

/** The option lines of `backend`: empty when it has no options (or is not a backend). */
export function backendOptionLines(backend: unknown): string {
  const options = field(backend, 'options');
  if (!present(options)) return '';
  const balance = field(options, 'balance');
  const argument = field(balance, 'argument');
  let text = `  balance ${shown(field(balance, 'algorithm'))}${truthy(argument) ? `(${shown(argument)})` : ''}`;
  for (const word of elements(field(balance, 'options'))) text += ` ${shown(word)}`;
  text += '\n';
  const timeouts = field(options, 'timeouts');
  if (present(timeouts)) {
    for (const name of TIMEOUTS) {
      const ms = field(timeouts, name);
      if (truthy(ms)) text += `  timeout ${name} ${shown(ms)}ms\n`;
    }
  }
  const cookie = field(options, 'cookie');
  if (truthy(cookie)) text += `  cookie ${shown(cookie)} insert indirect nocache\n`;
  text += defaultServerLine(backend, options);
  const checkHttp = field(options, 'checkHttp');
  if (present(checkHttp)) {
    const version = field(checkHttp, 'version');
    text += `  option httpchk ${shown(field(checkHttp, 'method'))} ${shown(field(checkHttp, 'path'))}${truthy(version) ? ` ${shown(version)}` : ''}\n`;
  }
  return text;
}

/** `default-server` with the checks, maxconn and TLS settings the servers share, when any is set. */
function defaultServerLine(backend: unknown, options: unknown): string {
  const check = field(options, 'check');
  const maxconn = field(options, 'maxconn');
  const serverSsl = field(options, 'serverSsl');
  const serverProto = field(options, 'serverProto');
  // The template's `(or ...)` subexpression: JavaScript truth, so an empty list counts here.
  if (!(Boolean(check) || Boolean(maxconn) || Boolean(serverSsl) || Boolean(serverProto))) return '';
  let text = '  default-server';
  if (truthy(check)) {
    text += ' check';
    const shared = field(backend, 'checkInterval');
    const own = field(options, 'checkInterval');
    if (truthy(shared)) text += ` inter ${shown(shared)}`;
    else if (truthy(own)) text += ` inter ${shown(own)}`;
  }
  if (truthy(maxconn)) text += ` maxconn ${shown(maxconn)}`;
  if (truthy(serverSsl)) text += ' ssl verify none alpn h2,http/1.1';
  else if (truthy(serverProto)) text += ` proto ${shown(serverProto)}`;
  return `${text}\n`;
}
