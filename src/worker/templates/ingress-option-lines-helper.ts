// `{{ingressOptionLines backend}}`: the request and response rules a model backend gets from its
// Ingress's options (rate limit, source rules, HTTPS redirect, CORS, authentication, redirect,
// rewrites and headers), each line ending in a newline, in the order the default set wrote them.
// That was a `with` over `b.ingressOptions` holding some 17 `with`/`if`/`each` blocks to write, for
// most Ingresses, the HTTPS redirect alone; each block call costs a frame and program wrappers, for
// every backend of a cold render. One call writes the same text. It reads only the backend it is
// given, so it may be called inside a memo block.

import { elements, field, present, shown, truthy } from './handlebars-values.js';

/** The Ingress-option lines of `backend`: empty when it has no Ingress options (or is not a backend). */
export function ingressOptionLines(backend: unknown): string {
  const options = field(backend, 'ingressOptions');
  if (!present(options)) return '';
  const rateLimit = field(options, 'rateLimit');
  const limited = present(rateLimit);
  let text = '';
  if (limited) {
    const size = field(backend, 'rateLimitTableSize');
    const period = shown(field(rateLimit, 'periodMs'));
    text += `  stick-table type ipv6 size ${truthy(size) ? shown(size) : '100k'} expire ${period}ms store http_req_rate(${period}ms)\n`;
  }
  if (truthy(field(options, 'denyAll'))) text += '  http-request deny deny_status 403\n';
  const access = field(options, 'access');
  if (present(access)) text += sourceRules(field(access, 'allow'), 'allowed_src', 'unless') + sourceRules(field(access, 'deny'), 'denied_src', 'if');
  if (limited) {
    text += '  http-request track-sc0 src\n';
    text += `  http-request deny deny_status ${shown(field(rateLimit, 'status'))} if { sc_http_req_rate(0) gt ${shown(field(rateLimit, 'requests'))} }\n`;
  }
  const sslRedirect = field(options, 'sslRedirect');
  if (present(sslRedirect) && truthy(field(sslRedirect, 'enabled'))) {
    const port = field(sslRedirect, 'port');
    text += `  http-request redirect location https://%[var(txn.host)]${port !== 443 ? `:${shown(port)}` : ''}%[pathq] code ${shown(field(sslRedirect, 'code'))} if !{ ssl_fc } { var(txn.tls) -m found }\n`;
  }
  const cors = field(options, 'cors');
  const origin = field(cors, 'origin');
  const match = field(origin, 'match');
  if (present(cors)) {
    const accepted = match === 'exact' ? `-m str ${shown(field(origin, 'origin'))}` : match === 'regex' ? `-m reg ${shown(field(origin, 'pattern'))}` : '-m found';
    text += '  http-request set-var(txn.cors_origin) req.hdr(origin)\n';
    text += `  acl cors_origin var(txn.cors_origin) ${accepted}\n`;
    text += '  http-request return status 204 if METH_OPTIONS cors_origin { req.hdr(access-control-request-method) -m found }\n';
  }
  const auth = field(options, 'auth');
  if (present(auth)) text += `  http-request auth realm "${shown(field(auth, 'realm'))}" unless { http_auth(${shown(field(backend, 'name'))}_users) }\n`;
  const redirect = field(options, 'requestRedirect');
  if (present(redirect)) {
    text += `  http-request redirect location ${shown(field(redirect, 'scheme'))}://${shown(field(redirect, 'authority'))}%[pathq] code ${shown(field(redirect, 'code'))}\n`;
  }
  for (const rewrite of elements(field(options, 'pathRewrites'))) {
    text += `  http-request replace-path ${shown(field(rewrite, 'match'))} ${shown(field(rewrite, 'replace'))}\n`;
  }
  const setHost = field(options, 'setHost');
  if (truthy(setHost)) text += `  http-request set-header Host ${shown(setHost)}\n`;
  text += headerLines(field(options, 'requestHeaders'), 'http-request');
  text += headerLines(field(options, 'responseHeaders'), 'http-response');
  if (present(cors)) text += corsResponseLines(cors, match);
  return text;
}

/** The `acl` lines of one source list (a line per group of addresses), then its deny rule; nothing for no list. */
function sourceRules(groups: unknown, acl: string, condition: 'if' | 'unless'): string {
  if (!truthy(groups)) return '';
  let text = '';
  for (const group of elements(groups)) text += `  acl ${acl} src ${Array.isArray(group) ? group.map(String).join(' ') : ''}\n`;
  return `${text}  http-request deny deny_status 403 ${condition} ${acl}\n`;
}

function headerLines(headers: unknown, directive: string): string {
  let text = '';
  for (const header of elements(headers)) text += `  ${directive} set-header ${shown(field(header, 'name'))} "${shown(field(header, 'value'))}"\n`;
  return text;
}

/** The CORS headers of a response to an accepted origin. */
function corsResponseLines(cors: unknown, match: unknown): string {
  const any = match === 'any';
  let text = `  http-after-response set-header Access-Control-Allow-Origin "${any ? '*' : '%[var(txn.cors_origin)]'}" if cors_origin\n`;
  if (!any) text += '  http-after-response add-header Vary Origin if cors_origin\n';
  text += `  http-after-response set-header Access-Control-Allow-Methods "${shown(field(cors, 'methods'))}" if cors_origin\n`;
  text += `  http-after-response set-header Access-Control-Allow-Headers "${shown(field(cors, 'headers'))}" if cors_origin\n`;
  text += `  http-after-response set-header Access-Control-Max-Age "${shown(field(cors, 'maxAge'))}" if cors_origin\n`;
  if (truthy(field(cors, 'credentials'))) text += '  http-after-response set-header Access-Control-Allow-Credentials "true" if cors_origin\n';
  return text;
}
