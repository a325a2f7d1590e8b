import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../../src/main/sources/synthetic/synthetic-cluster.js';
import type { AuxiliaryFiles } from '../../../src/worker/protocol.js';
import {
  IncrementalValidator,
  MAX_ERRORS_PER_PHASE,
  checkAuxiliaryFiles,
  validateStructure,
  type OutputPaths,
  type ValidationReport,
} from '../../../src/worker/validate/validator.js';
import { CERT, KEY, PATHS } from '../../helpers/validation.js';

/** Other directories: paths the configs name fall outside them, or inside other ones. */
const OTHER_PATHS: OutputPaths = {
  mapsDir: '/etc/haproxy/maps',
  filesDir: '/srv/files',
  certsDir: '/etc/haproxy/maps/certs',
};
const NESTED_PATHS: OutputPaths = {
  mapsDir: '/etc/haproxy',
  filesDir: '/etc/haproxy/files',
  certsDir: '/etc/haproxy/certs/',
};


const NO_AUX: AuxiliaryFiles = { maps: {}, files: {}, certificates: {} };

/** Both phases of `v` against the pure functions, on the same input. */
function expectSameReports(v: IncrementalValidator, config: string, aux: AuxiliaryFiles, paths: OutputPaths): void {
  expect(v.validateStructure(config, aux, paths)).toStrictEqual(validateStructure(config, aux, paths));
  expect(v.checkAuxiliaryFiles(aux, config, paths)).toStrictEqual(checkAuxiliaryFiles(aux, config, paths));
}

function backend(name: string, address = '10.0.0.1:8080'): string {
  return `backend ${name}\n  balance roundrobin\n  server s1 ${address}\n  server s2 10.0.0.2:8080 check\n`;
}

/** A config of `n` backends behind one frontend, with a default backend. */
function manyBackends(n: number, address = (i: number) => `10.0.${i % 250}.1:8080`): string {
  const parts = ['global\n  maxconn 100\n', 'defaults\n  mode http\n  timeout connect 5s\n', 'frontend http\n  bind :80\n  default_backend be_0\n'];
  for (let i = 0; i < n; i++) parts.push(backend(`be_${i}`, address(i)));
  return parts.join('\n');
}

const SECTION_KEYWORDS =
  'global defaults frontend backend listen resolvers userlist peers mailers http-errors ring cache program log-forward fcgi-app namespace_list';
const OPENER = new RegExp(`^[ \\t\\r]*(${SECTION_KEYWORDS.split(' ').join('|')})(?=[ \\t\\r]|$)`);

/** At least as many chunks as the validator cuts: the lines a section keyword begins, plus the text before. */
function maxChunks(config: string): number {
  return config.split('\n').filter((line) => OPENER.test(line)).length + 1;
}

describe('IncrementalValidator reuses unchanged sections', () => {
  it('re-parses only the section that changed, with the same reports as the pure functions', () => {
    const v = new IncrementalValidator();
    const first = manyBackends(50);
    expectSameReports(v, first, NO_AUX, PATHS);
    expect(v.processedChunks).toBeGreaterThan(50);

    const second = first.replace('server s1 10.0.7.1:8080', 'server s1 10.0.7.99:8080');
    expect(v.validateStructure(second, NO_AUX, PATHS)).toStrictEqual(validateStructure(second, NO_AUX, PATHS));
    expect(v.processedChunks).toBe(1);
    expect(v.checkAuxiliaryFiles(NO_AUX, second, PATHS)).toStrictEqual(checkAuxiliaryFiles(NO_AUX, second, PATHS));
    expect(v.processedChunks).toBe(1);

    // The same text again, even as another string: nothing to parse.
    const again = `${second.slice(0, 10)}${second.slice(10)}`;
    expectSameReports(v, again, NO_AUX, PATHS);
    expect(v.processedChunks).toBe(0);
  });

  it('keeps reusing its sections after it lets go of the latest text, with the same reports', () => {
    const v = new IncrementalValidator();
    const first = manyBackends(30);
    expectSameReports(v, first, NO_AUX, PATHS);
    v.releaseText();
    // The same text: every section is found again, none parsed.
    expectSameReports(v, first, NO_AUX, PATHS);
    expect(v.processedChunks).toBe(0);
    v.releaseText();
    const second = first.replace('server s1 10.0.3.1:8080', 'server s1 10.0.3.77:8080');
    expect(v.validateStructure(second, NO_AUX, PATHS)).toStrictEqual(validateStructure(second, NO_AUX, PATHS));
    expect(v.processedChunks).toBe(1);
    expect(v.checkAuxiliaryFiles(NO_AUX, second, PATHS)).toStrictEqual(checkAuxiliaryFiles(NO_AUX, second, PATHS));
  });

  it('shifts the lines of reused sections when lines are inserted above them', () => {
    const v = new IncrementalValidator();
    const body = manyBackends(5, (i) => (i === 3 ? '300.0.0.1:80' : '10.0.0.1:80')) + 'backend be_1\n  server s1 10.0.0.1:80\n  server s1 10.0.0.2:80\n';
    expectSameReports(v, body, NO_AUX, PATHS);
    const shifted = `# a comment\n\n${body.replace('maxconn 100\n', 'maxconn 100\n  nbthread 2\n')}`;
    const report = v.validateStructure(shifted, NO_AUX, PATHS);
    expect(report).toStrictEqual(validateStructure(shifted, NO_AUX, PATHS));
    expect(v.processedChunks).toBe(2);
    // The duplicate server quotes the line of the first one, which moved too.
    const lines = shifted.split('\n');
    const first = lines.findIndex((l, i) => l.includes('server s1 10.0.0.1:80') && lines[i + 1]?.includes('server s1 10.0.0.2:80')) + 1;
    expect(report.errors.map((e) => e.message)).toContain(`another server named 's1' was already defined at line ${first} in backend 'be_1'`);
    const declared = lines.findIndex((l) => l === 'backend be_1') + 1;
    expect(report.errors.map((e) => e.message)).toContain(`backend 'be_1' has the same name as backend 'be_1' declared at line ${declared}`);
  });

  it('re-decides paths in unchanged sections when crt-base, the rendered files or the directories change', () => {
    const v = new IncrementalValidator();
    const config = (base: string) =>
      `global\n  crt-base ${base}\n  ca-base /etc/haproxy/certs\n\nfrontend https\n  bind :443 ssl crt site.pem ca-file ca.pem\n  default_backend be\n\n${backend('be')}`;
    const withCert: AuxiliaryFiles = { ...NO_AUX, certificates: { 'site.pem': CERT + KEY, 'ca.pem': CERT } };
    for (const [text, aux, paths] of [
      [config('/etc/haproxy/certs'), withCert, PATHS],
      [config('/etc/haproxy/certs'), NO_AUX, PATHS],
      [config('/elsewhere'), withCert, PATHS],
      [config('/etc/haproxy/certs'), withCert, OTHER_PATHS],
      [config('/etc/haproxy/certs'), withCert, PATHS],
    ] as const) {
      expectSameReports(v, text, aux, paths);
    }
  });

  it('checks map values against the backends of the new config, even when the map did not change', () => {
    const v = new IncrementalValidator();
    const aux: AuxiliaryFiles = { ...NO_AUX, maps: { 'host.map': 'a.test be_1\nb.test be_2\nc.test be_2\n' } };
    const frontend = 'frontend http\n  bind :80\n  use_backend %[req.hdr(host),lower,map(/etc/haproxy/maps/host.map,be_1)]\n';
    const both = `${frontend}\n${backend('be_1')}\n${backend('be_2')}`;
    const one = `${frontend}\n${backend('be_1')}\n${backend('be_3')}`;
    for (const text of [both, one, both, one]) {
      const report = v.validateStructure(text, aux, PATHS);
      expect(report).toStrictEqual(validateStructure(text, aux, PATHS));
      expect(report.errors.length).toBe(text === one ? 2 : 0);
    }
  });

  it('keeps a section opener with an unmatched quote inside the previous section, as the pure pass does', () => {
    const v = new IncrementalValidator();
    const good = `${backend('be_a')}\n${backend('be_b')}\n${backend('be_c')}`;
    const broken = good.replace('backend be_b', 'backend "be_b');
    const quoted = good.replace('backend be_b', 'backend "be_b"');
    for (const text of [good, broken, quoted, broken, good]) expectSameReports(v, text, NO_AUX, PATHS);
    expect(validateStructure(broken, NO_AUX, PATHS).errors.map((e) => e.message)).toContain(
      "another server named 's1' was already defined at line 3 in backend 'be_a'",
    );
  });

  it('reports the same first errors and the same omitted count past the error cap', () => {
    const v = new IncrementalValidator();
    const bad = manyBackends(150, () => '999.0.0.1:80');
    const report = v.validateStructure(bad, NO_AUX, PATHS);
    expect(report.errors).toHaveLength(MAX_ERRORS_PER_PHASE);
    expect(report).toStrictEqual(validateStructure(bad, NO_AUX, PATHS));
    expect(report.warnings).toEqual([`validation: 50 further error(s) omitted after the first ${MAX_ERRORS_PER_PHASE}`]);
    const fewer = bad.replace(/999\.0\.0\.1:80/, '10.0.0.1:80');
    expect(v.validateStructure(fewer, NO_AUX, PATHS)).toStrictEqual(validateStructure(fewer, NO_AUX, PATHS));
  });

  it('handles CRLF line endings, indented openers and text before the first section', () => {
    const v = new IncrementalValidator();
    const text = `# preamble\r\nmaxconn 10\r\n  global\r\n  maxconn 5\r\n  backend be_a\r\n  server s1 10.0.0.1:80\r\nbackend be_b # comment\r\n  server s1 10.0.0.1:80\r\n  server s1 10.0.0.1:80`;
    expectSameReports(v, text, NO_AUX, PATHS);
    expectSameReports(v, text.replace('maxconn 10', 'maxconn ten'), NO_AUX, PATHS);
    expectSameReports(v, `${text}\r\n`, NO_AUX, PATHS);
    expectSameReports(v, '', NO_AUX, PATHS);
    expectSameReports(v, '\n\n', NO_AUX, PATHS);
  });

  it('never throws, and reports inputs that are not text like the pure functions', () => {
    const v = new IncrementalValidator();
    const garbage = '\u0000\u0001"unterminated\n\\\n}{%[map(\n,map_beg(\nserver\nbind\nbackend\n  server "x\n';
    const aux: AuxiliaryFiles = { maps: { 'x.map': garbage }, files: {}, certificates: { 'x.pem': garbage } };
    expectSameReports(v, garbage, aux, PATHS);
    const notText = 42 as unknown as string;
    expectSameReports(v, notText, aux, PATHS);
    const badAux = { maps: { 'x.map': 7 }, files: { y: null }, certificates: { z: {} } } as unknown as AuxiliaryFiles;
    expectSameReports(v, garbage, badAux, PATHS);
    const badPaths = { mapsDir: undefined } as unknown as OutputPaths;
    expectSameReports(v, garbage, aux, badPaths);
    expectSameReports(v, garbage, aux, PATHS);
  });
});

describe('IncrementalValidator memory', () => {
  it('holds the chunks of the latest configuration only', () => {
    const v = new IncrementalValidator();
    const random = seededRandom(7);
    for (let i = 0; i < 40; i++) {
      const n = 5 + Math.floor(random() * 60);
      const config = manyBackends(n, (k) => `10.${i}.${k % 250}.${1 + Math.floor(random() * 200)}:8080`);
      v.validateStructure(config, NO_AUX, PATHS);
      v.checkAuxiliaryFiles(NO_AUX, config, PATHS);
      expect(v.cachedChunks).toBeLessThanOrEqual(maxChunks(config));
    }
    expect(v.cachedChunks).toBeGreaterThan(0);
    v.validateStructure('global\n  maxconn 1\n', NO_AUX, PATHS);
    expect(v.cachedChunks).toBe(1);
    v.validateStructure('', NO_AUX, PATHS);
    expect(v.cachedChunks).toBe(0);
  });
});

// ---------------------------------------------------------------------------------------------
// Property test: random configurations and auxiliary files, random edits, every step compared
// with the pure functions.

type Random = () => number;

const BACKENDS = ['be_a', 'be_b', 'be_c', 'be_d', 'be_default', 'fe_http'];
const FRONTENDS = ['fe_http', 'fe_https', 'be_a', 'stats'];
const DEFAULTS = ['base', 'tcpish', 'other'];
const BINDS = [':80', '*:80', ':443', '127.0.0.1:8404', ':80,:8080', ':99999', 'unix@/run/x.sock'];
const SERVERS = ['10.0.0.1:8080', '10.0.0.2:80', 'app.example:8080', '300.1.1.1:80', 'host:0', '[::1]:80', 'fd@3', '${SRV}:80', '10.0.0.3'];

function pick<T>(random: Random, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

function chance(random: Random, p: number): boolean {
  return random() < p;
}

/** A path under a rendered directory or elsewhere, existing or not. */
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

function randomSections(random: Random): string[] {
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

function randomAux(random: Random): AuxiliaryFiles {
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

function join(random: Random, sections: readonly string[]): string {
  const text = sections.join(chance(random, 0.8) ? '\n\n' : '\n');
  const crlf = chance(random, 0.05);
  return (crlf ? text.replace(/\n/g, '\r\n') : text) + (chance(random, 0.8) ? '\n' : '');
}

/** One random edit of the sections, the files or the directories. */
function edit(random: Random, state: { sections: string[]; aux: AuxiliaryFiles; paths: OutputPaths }): void {
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

describe('IncrementalValidator property test', () => {
  it('matches the pure functions after every random edit, whatever the calls before', () => {
    const SEEDS = 40;
    const STEPS = 30;
    let compared = 0;
    const seen = new Set<string>();
    const note = (report: ValidationReport): ValidationReport => {
      for (const e of report.errors) seen.add(e.message);
      for (const w of report.warnings) seen.add(w);
      return report;
    };
    for (let seed = 1; seed <= SEEDS; seed++) {
      const random = seededRandom(seed);
      const v = new IncrementalValidator();
      const state = { sections: randomSections(random), aux: randomAux(random), paths: PATHS };
      let previous = '';
      for (let step = 0; step < STEPS; step++) {
        // Now and then the previous text again, as the same string or an equal copy.
        const repeat = step > 0 ? random() : 1;
        const config = repeat < 0.05 ? previous : repeat < 0.12 ? `${previous} `.slice(0, -1) : join(random, state.sections);
        previous = config;
        const { aux, paths } = state;
        const context = `seed ${seed}, step ${step}\n${config}`;
        const structure = (text: string): void => {
          expect(v.validateStructure(text, aux, paths), context).toStrictEqual(note(validateStructure(text, aux, paths)));
          compared++;
        };
        const auxiliary = (text: string): void => {
          expect(v.checkAuxiliaryFiles(aux, text, paths), context).toStrictEqual(note(checkAuxiliaryFiles(aux, text, paths)));
          compared++;
        };
        // Vary the calls: both phases in either order, one phase only, or the phases on
        // different configurations.
        const order = random();
        let last = config;
        if (order < 0.6) {
          structure(config);
          auxiliary(config);
        } else if (order < 0.75) {
          auxiliary(config);
          structure(config);
        } else if (order < 0.85) {
          structure(config);
        } else {
          last = join(random, randomSections(random));
          structure(config);
          auxiliary(last);
        }
        expect(v.cachedChunks).toBeLessThanOrEqual(maxChunks(last));
        const edits = 1 + Math.floor(random() * 3);
        for (let e = 0; e < edits; e++) edit(random, state);
      }
    }
    expect(compared).toBeGreaterThan(SEEDS * STEPS * 1.5);
    // The generator reaches every kind of cross-section interaction the replay decides.
    const all = [...seen].join('\n');
    for (const fragment of [
      'uses unknown defaults section',
      'has the same name as',
      'is also bound by',
      'names unknown backend',
      'routes through maps/host.map',
      'names frontend',
      'is not produced by the render',
      'lies outside the rendered directories',
      'relative crt path',
      'unmatched double quote',
      'further error(s) omitted',
      'duplicate userlist',
      'names unknown cache section',
      'names unknown resolvers section',
      'was already defined at line',
      'duplicate key',
      'no private key',
      'references certificate',
    ]) {
      expect(all).toContain(fragment);
    }
  });
});
