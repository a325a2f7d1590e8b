// Random HAProxy configurations and auxiliary files for the IncrementalValidator property test,
// and random edits of them: sections of every kind, good and bad lines, paths inside and outside
// the rendered directories.
import type { AuxiliaryFiles } from '../../src/worker/protocol.js';
import type { OutputPaths } from '../../src/worker/validate/validator.js';
import { chance, pick, type Random } from './random.js';
import { CERT, KEY, NESTED_PATHS, OTHER_PATHS, PATHS } from './validation.js';

const BACKENDS = ['be_a', 'be_b', 'be_c', 'be_d', 'be_default', 'fe_http'];
const FRONTENDS = ['fe_http', 'fe_https', 'be_a', 'stats'];
const DEFAULTS = ['base', 'tcpish', 'other'];
const BINDS = [':80', '*:80', ':443', '127.0.0.1:8404', ':80,:8080', ':99999', 'unix@/run/x.sock'];
const SERVERS = ['10.0.0.1:8080', '10.0.0.2:80', 'app.example:8080', '300.1.1.1:80', 'host:0', '[::1]:80', 'fd@3', '${SRV}:80', '10.0.0.3'];

function mapPath(random: Random): string {
  return pick(random, ['/etc/haproxy/maps/host.map', '/etc/haproxy/maps/missing.map', '/etc/haproxy/maps/blocked.acl', 'host.map', '/opt/maps/host.map', '/etc/haproxy/maps/']);
}

function certPath(random: Random): string {
  return pick(random, ['/etc/haproxy/certs/site.pem', '/etc/haproxy/certs/nokey.pem', '/etc/haproxy/certs/', 'site.pem', 'missing.pem', '/opt/site.pem', '/etc/haproxy/certs/broken.pem']);
}

function filePath(random: Random): string {
  return pick(random, ['/etc/haproxy/files/503.http', '/etc/haproxy/files/404.txt', '/etc/haproxy/files/gone.txt', 'relative.txt', '/srv/files/503.http']);
}

function proxyLine(random: Random): string {
  const r = random();
  if (r < 0.1) return `  bind ${pick(random, BINDS)}${chance(random, 0.3) ? ` ssl crt ${certPath(random)}` : ''}`;
  if (r < 0.15) return `  bind :443 ssl crt-list ${pick(random, ['/etc/haproxy/files/list.txt', '/etc/haproxy/maps/list.map', '/etc/haproxy/certs/list.pem', 'list.txt'])}`;
  if (r < 0.25) return `  server ${pick(random, ['s1', 's2', 's3'])} ${pick(random, SERVERS)}${chance(random, 0.3) ? ` check inter ${pick(random, ['2s', 'x'])}` : ''}`;
  if (r < 0.3) return `  server s9 10.0.0.9:443 ssl crt ${certPath(random)} ca-file ${pick(random, ['ca.pem', '/etc/haproxy/certs/ca.pem', '/etc/haproxy/certs/missing-ca.pem'])}`;
  if (r < 0.35) return `  use_backend ${pick(random, BACKENDS)} if ${pick(random, ['{ path /x }', 'is_api', 'TRUE', '!is_api || HTTP'])}`;
  if (r < 0.4) return `  use_backend %[req.hdr(host),lower,map(${mapPath(random)}${chance(random, 0.5) ? `,${pick(random, BACKENDS)}` : ''})]`;
  if (r < 0.45) return `  default_backend ${pick(random, BACKENDS)}`;
  if (r < 0.5) return `  acl ${pick(random, ['is_api', 'is_web'])} path_beg /api`;
  if (r < 0.55) return `  acl blocked src -f ${pick(random, ['/etc/haproxy/maps/blocked.acl', '/etc/haproxy/maps/host.map', '/etc/haproxy/maps/none.acl'])}`;
  if (r < 0.6) return `  http-request ${pick(random, ['deny if blocked', 'set-header X-A "b c"', 'cache-use c1', 'return status 404 file ' + filePath(random), 'frobnicate'])}`;
  if (r < 0.65) return `  errorfile ${pick(random, ['503', '999'])} ${filePath(random)}`;
  if (r < 0.7) return `  ${pick(random, ['filter cache c1', 'filter cache nocache', 'errorfiles errs', 'errorfiles noerrs'])}`;
  if (r < 0.75) return `  ${pick(random, ['timeout connect 5s', 'timeout client x', 'mode http', 'mode udp', 'option httplog', 'no option httplog', 'balance roundrobin', 'balance nope'])}`;
  if (r < 0.8) return `  ${pick(random, ['bogus-keyword 1', 'reqadd X', 'option nope', 'maxconn abc', 'server-template srv 1-3 app.example:80', 'default-server check resolvers dns'])}`;
  if (r < 0.85) return pick(random, ['', '# comment', '  # indented comment', '.if defined(X)', '.endif', '.bogus']);
  if (r < 0.9) return `  http-request set-header X "unterminated`;
  if (r < 0.95) return `  server s4 10.0.0.4:80 resolvers ${pick(random, ['dns', 'nodns'])}`;
  return `  ${pick(random, ['redirect scheme https if !is_api', "http-request deny if { path_beg '/x }", 'http-request set-var(txn.x) str(a),map(/etc/haproxy/maps/host.map)'])}`;
}

function otherSection(random: Random): string {
  const kind = pick(random, ['resolvers', 'userlist', 'peers', 'cache', 'http-errors', 'ring', 'mailers', 'program']);
  const name = pick(random, kind === 'cache' ? ['c1', 'c2'] : kind === 'resolvers' ? ['dns', 'dns2'] : kind === 'http-errors' ? ['errs'] : ['x1', 'x2']);
  const body: Record<string, string[]> = {
    resolvers: ['  nameserver ns1 10.0.0.53:53', '  hold valid 10s', '  nameserver ns2'],
    userlist: ['  user admin password x', '  group ops'],
    peers: ['  peer p1 10.0.0.1:1024', '  server s1', '  server s1 10.0.0.1:1024'],
    cache: ['  total-max-size 4', '  max-age x', '  bogus 1'],
    'http-errors': [`  errorfile 503 ${filePath(random)}`, `  errorfile 404 ${filePath(random)}`],
    ring: ['  size 32k', '  size big', '  format rfc3164'],
    mailers: ['  mailer m1 10.0.0.25:25', '  timeout mail 10s'],
    program: ['  command /bin/true', '  user nobody'],
  };
  const lines = (body[kind] ?? []).filter(() => chance(random, 0.7));
  return [`${kind} ${name}`, ...lines].join('\n');
}

function globalSection(random: Random): string {
  const lines = ['global'];
  if (chance(random, 0.5)) lines.push(`  crt-base ${pick(random, ['/etc/haproxy/certs', '/etc/haproxy/certs/', '/opt/certs', 'relative'])}`);
  if (chance(random, 0.5)) lines.push(`  ca-base ${pick(random, ['/etc/haproxy/certs', '/opt/ca'])}`);
  if (chance(random, 0.5)) lines.push(`  maxconn ${pick(random, ['1000', 'lots'])}`);
  if (chance(random, 0.3)) lines.push(`  lua-load ${filePath(random)}`);
  if (chance(random, 0.2)) lines.push(`  ${pick(random, ['nbproc 2', 'frobnicate', 'httpclient.ssl.ca-file /etc/haproxy/certs/ca.pem', 'tune.bufsize 16384'])}`);
  return lines.join('\n');
}

function opener(random: Random, kind: string, name: string): string {
  const r = random();
  if (r < 0.8) return `${kind} ${name}`;
  return pick(random, [
    `  ${kind} ${name}`,
    `${kind} ${name} # comment`,
    `${kind}\t${name}`,
    `${kind} "${name}"`,
    `${kind} "${name}`,
    `"${kind}" ${name}`,
    `${kind}#${name}`,
    `${kind} ${name}/bad`,
    `${kind}`,
    `${kind} ${name} extra`,
  ]);
}

function proxySection(random: Random): string {
  const r = random();
  let head: string;
  if (r < 0.15) {
    const named = chance(random, 0.6);
    head = `defaults${named ? ` ${pick(random, DEFAULTS)}` : ''}${chance(random, 0.3) ? ` from ${pick(random, DEFAULTS)}` : ''}`;
    if (chance(random, 0.1)) head = 'defaults from';
  } else if (r < 0.45) {
    head = opener(random, 'frontend', pick(random, FRONTENDS)) + (chance(random, 0.15) ? ` from ${pick(random, DEFAULTS)}` : '');
  } else if (r < 0.9) {
    head = opener(random, 'backend', pick(random, BACKENDS)) + (chance(random, 0.1) ? ` from ${pick(random, DEFAULTS)}` : '');
  } else {
    head = opener(random, 'listen', pick(random, ['lst', 'be_a', 'fe_http']));
  }
  const count = Math.floor(random() * 7);
  const lines = [head];
  for (let i = 0; i < count; i++) lines.push(proxyLine(random));
  // Sometimes many errors at once, to cross the error cap.
  if (chance(random, 0.03)) for (let i = 0; i < 60; i++) lines.push(`  server bad${i} 999.9.9.9:80`);
  return lines.join('\n');
}

function randomSection(random: Random): string {
  const r = random();
  if (r < 0.1) return globalSection(random);
  if (r < 0.25) return otherSection(random);
  return proxySection(random);
}

export function randomSections(random: Random): string[] {
  const sections: string[] = [];
  if (chance(random, 0.3)) sections.push(pick(random, ['# rendered', 'maxconn 10', 'option httplog', 'frobnicate', '\n']));
  if (chance(random, 0.8)) sections.push(globalSection(random));
  const n = 2 + Math.floor(random() * 12);
  for (let i = 0; i < n; i++) sections.push(randomSection(random));
  return sections;
}

function randomMap(random: Random): string {
  const lines: string[] = [];
  const n = Math.floor(random() * 6);
  for (let i = 0; i < n; i++) {
    const key = pick(random, ['a.test', 'b.test', 'c.test', 'd.test']);
    lines.push(chance(random, 0.1) ? key : `${key} ${pick(random, BACKENDS.concat(['be_missing']))}`);
  }
  if (chance(random, 0.2)) lines.push('# comment', '');
  return lines.join('\n') + (chance(random, 0.8) ? '\n' : '');
}

export function randomAux(random: Random): AuxiliaryFiles {
  const maps: Record<string, string> = {};
  if (chance(random, 0.8)) maps['host.map'] = randomMap(random);
  if (chance(random, 0.5)) maps['blocked.acl'] = '192.0.2.0/24\n198.51.100.7\n';
  if (chance(random, 0.2)) maps['list.map'] = '/etc/haproxy/certs/site.pem\n';
  const files: Record<string, string> = {};
  if (chance(random, 0.7)) files['503.http'] = 'HTTP/1.0 503 Service Unavailable\r\n\r\n';
  if (chance(random, 0.5)) files['404.txt'] = 'not found\n';
  if (chance(random, 0.6)) {
    files['list.txt'] = pick(random, [
      '/etc/haproxy/certs/site.pem\n',
      'site.pem [alpn h2\n/etc/haproxy/certs/missing.pem\n',
      '/opt/elsewhere.pem\n/etc/haproxy/certs/\n"unterminated\n',
    ]);
  }
  const certificates: Record<string, string> = {};
  if (chance(random, 0.8)) certificates['site.pem'] = CERT + KEY;
  if (chance(random, 0.5)) certificates['nokey.pem'] = CERT;
  if (chance(random, 0.3)) certificates['nokey.pem.key'] = KEY;
  if (chance(random, 0.5)) certificates['ca.pem'] = CERT;
  if (chance(random, 0.3)) certificates['broken.pem'] = pick(random, ['not pem', '-----BEGIN CERTIFICATE-----\nabc\n', CERT.replace('MIIB', 'M!IB')]);
  if (chance(random, 0.2)) certificates['list.pem'] = '/etc/haproxy/certs/site.pem\n';
  return { maps, files, certificates };
}

export function join(random: Random, sections: readonly string[]): string {
  const text = sections.join(chance(random, 0.8) ? '\n\n' : '\n');
  const crlf = chance(random, 0.05);
  return (crlf ? text.replace(/\n/g, '\r\n') : text) + (chance(random, 0.8) ? '\n' : '');
}

/** One random edit of the sections, the files or the directories. */
export function edit(random: Random, state: { sections: string[]; aux: AuxiliaryFiles; paths: OutputPaths }): void {
  const { sections } = state;
  const at = Math.floor(random() * Math.max(1, sections.length));
  const r = random();
  if (r < 0.3 && sections.length > 0) {
    // Change one line of a section, or add one.
    const lines = (sections[at] as string).split('\n');
    const line = 1 + Math.floor(random() * lines.length);
    if (chance(random, 0.5) && line < lines.length) lines[line] = proxyLine(random);
    else lines.splice(line, 0, proxyLine(random));
    sections[at] = lines.join('\n');
  } else if (r < 0.4 && sections.length > 0) {
    sections[at] = randomSection(random);
  } else if (r < 0.5) {
    sections.splice(at, 0, randomSection(random));
  } else if (r < 0.6 && sections.length > 1) {
    sections.splice(at, 1);
  } else if (r < 0.67 && sections.length > 1) {
    const [moved] = sections.splice(at, 1);
    sections.splice(Math.floor(random() * (sections.length + 1)), 0, moved as string);
  } else if (r < 0.72 && sections.length > 0) {
    sections.splice(Math.floor(random() * sections.length), 0, sections[at] as string);
  } else if (r < 0.77 && sections.length > 0) {
    // Delete a line of a section.
    const lines = (sections[at] as string).split('\n');
    lines.splice(Math.floor(random() * lines.length), 1);
    sections[at] = lines.join('\n');
  } else if (r < 0.9) {
    const aux = randomAux(random);
    state.aux = chance(random, 0.5) ? aux : { ...state.aux, maps: aux.maps };
  } else if (r < 0.95) {
    state.paths = pick(random, [PATHS, PATHS, OTHER_PATHS, NESTED_PATHS]);
  } else {
    state.sections = randomSections(random);
  }
}
