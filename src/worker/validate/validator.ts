// Validator: the pure structural check of a rendered HAProxy configuration and its auxiliary
// files, run in render workers (and inline by the baseline executor) after every render.
// Phase 'validation' parses haproxy.cfg line by line: sections, keywords allowed per section,
// references between proxies, maps and files, server and bind lines. Phase 'auxiliary' checks
// the rendered maps, certificates and crt-lists themselves. No I/O, no events: data in, data out;
// HAProxy's own verdict (`haproxy -c`) stays with the render gate.
import { posix } from 'node:path';
import type { AuxiliaryFiles } from '../protocol.js';

/** Absolute directories the auxiliary files will be written to. */
export interface ValidationPaths {
  readonly mapsDir: string;
  readonly filesDir: string;
  readonly certsDir: string;
}

export interface ValidationIssue {
  readonly phase: 'validation' | 'auxiliary';
  /** `haproxy.cfg`, or `maps/<name>`, `files/<name>`, `certs/<name>` for auxiliary files. */
  readonly file: string;
  /** 1-based line within `file`, when the issue belongs to one line. */
  readonly line?: number;
  readonly message: string;
}

export interface ValidationReport {
  readonly errors: readonly ValidationIssue[];
  readonly warnings: readonly string[];
}

/** The name errors in the main configuration carry. */
export const CONFIG_FILE = 'haproxy.cfg';

/**
 * Errors kept per phase. A broken template can break every one of 10,000 backends the same way;
 * the first errors say what is wrong, the rest are counted in a warning.
 */
export const MAX_ERRORS_PER_PHASE = 100;

/** Structural HAProxy parse of `config` ("haproxy.cfg") plus auxiliary-file checks. Never throws. */
export function validateConfig(config: string, aux: AuxiliaryFiles, paths: ValidationPaths): ValidationReport {
  const structure = validateStructure(config, aux, paths);
  const auxiliary = checkAuxiliaryFiles(aux, config, paths);
  return {
    errors: [...structure.errors, ...auxiliary.errors],
    warnings: [...structure.warnings, ...auxiliary.warnings],
  };
}

/** Phase 'validation': sections, keywords, references and server lines of `config`. Never throws. */
export function validateStructure(config: string, aux: AuxiliaryFiles, paths: ValidationPaths): ValidationReport {
  return structurePhase(aux, paths, UNCACHED, (state) => state.apply(parseStructure(config), 0));
}

/** Phase 'auxiliary': maps, certificates and crt-lists are well formed. Never throws. */
export function checkAuxiliaryFiles(aux: AuxiliaryFiles, config: string, paths: ValidationPaths): ValidationReport {
  return auxiliaryPhase(aux, paths, UNCACHED, (state, scanner) => state.apply(scanner.scan(config)));
}

/**
 * Runs phase 'validation': `feed` replays the ops of the configuration, in order, into the
 * state; the references are checked after the last one. The pure function and
 * IncrementalValidator differ only in `feed` and `derive`.
 */
function structurePhase(
  aux: AuxiliaryFiles,
  paths: ValidationPaths,
  derive: TextDerivations,
  feed: (state: StructureState) => void,
): ValidationReport {
  const sink = new IssueSink('validation');
  try {
    const state = new StructureState(aux, paths, sink, derive);
    feed(state);
    state.finish();
  } catch (err) {
    sink.error(CONFIG_FILE, undefined, `internal validator error: ${describe(err)}`);
  }
  return sink.report();
}

/** Runs phase 'auxiliary': `feed` replays the usage ops of the configuration, then each file is checked. */
function auxiliaryPhase(
  aux: AuxiliaryFiles,
  paths: ValidationPaths,
  derive: TextDerivations,
  feed: (state: UsageState, scanner: UsageScanner) => void,
): ValidationReport {
  const sink = new IssueSink('auxiliary');
  try {
    const resolver = new PathResolver(paths);
    const state = new UsageState(resolver);
    feed(state, new UsageScanner(paths, resolver));
    new AuxiliaryChecker(aux, state.usage(), resolver, sink, derive).run();
  } catch (err) {
    sink.error('auxiliary', undefined, `internal validator error: ${describe(err)}`);
  }
  return sink.report();
}

/** `haproxy.cfg:12: unknown keyword 'foo' in backend 'be_x'`, `certs/a.pem: no private key`. */
export function formatIssue(issue: ValidationIssue): string {
  return issue.line === undefined
    ? `${issue.file}: ${issue.message}`
    : `${issue.file}:${issue.line}: ${issue.message}`;
}

// ---------------------------------------------------------------------------------------------
// Issue collection

class IssueSink {
  readonly #phase: ValidationIssue['phase'];
  readonly #errors: ValidationIssue[] = [];
  readonly #warnings: string[] = [];
  #omitted = 0;

  constructor(phase: ValidationIssue['phase']) {
    this.#phase = phase;
  }

  error(file: string, line: number | undefined, message: string): void {
    if (this.#errors.length >= MAX_ERRORS_PER_PHASE) {
      this.#omitted++;
      return;
    }
    this.#errors.push(
      line === undefined ? { phase: this.#phase, file, message } : { phase: this.#phase, file, line, message },
    );
  }

  warn(message: string): void {
    this.#warnings.push(message);
  }

  report(): ValidationReport {
    const warnings = this.#warnings;
    if (this.#omitted > 0) {
      warnings.push(`${this.#phase}: ${this.#omitted} further error(s) omitted after the first ${MAX_ERRORS_PER_PHASE}`);
    }
    return { errors: this.#errors, warnings };
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

// ---------------------------------------------------------------------------------------------
// Line tokenizer, after HAProxy's parse_line(): words split on blanks, `#` starts a comment
// outside quotes, "double" and 'single' quotes group words, backslash escapes outside single
// quotes. Environment variables are left unexpanded. One pass over the characters, no regex.

const CHAR_SPACE = 32;
const CHAR_TAB = 9;
const CHAR_HASH = 35;
const CHAR_DQUOTE = 34;
const CHAR_SQUOTE = 39;
const CHAR_BACKSLASH = 92;

/** Fills `out` with the words of `line`; returns an error message, or null. */
function tokenizeLine(line: string, out: string[]): string | null {
  out.length = 0;
  const len = line.length;
  // Fast path, taken by nearly every rendered line: words sliced straight from the line. The
  // first quote or backslash sends the whole line to the character-by-character path below.
  let i = 0;
  let plain = true;
  while (i < len && plain) {
    let c = line.charCodeAt(i);
    while (c === CHAR_SPACE || c === CHAR_TAB || c === 13) c = line.charCodeAt(++i);
    if (i >= len || c === CHAR_HASH) return null;
    const start = i;
    while (i < len && c !== CHAR_SPACE && c !== CHAR_TAB && c !== CHAR_HASH && c !== 13) {
      if (c === CHAR_DQUOTE || c === CHAR_SQUOTE || c === CHAR_BACKSLASH) {
        plain = false;
        break;
      }
      c = line.charCodeAt(++i);
    }
    if (!plain) break;
    out.push(line.slice(start, i));
    if (c === CHAR_HASH) return null;
  }
  if (plain) return null;
  out.length = 0;
  i = 0;
  let word = '';
  let inWord = false;
  let quote = 0;
  while (i < len) {
    const c = line.charCodeAt(i);
    if (quote === 0 && (c === CHAR_SPACE || c === CHAR_TAB || c === 13)) {
      if (inWord) out.push(word);
      word = '';
      inWord = false;
      i++;
      continue;
    }
    if (quote === 0 && c === CHAR_HASH) break;
    inWord = true;
    if (c === CHAR_BACKSLASH && quote !== CHAR_SQUOTE) {
      const n = line[i + 1];
      if (n === ' ' || n === '\\' || n === '#' || n === '"' || n === "'" || n === '$') {
        word += n;
        i += 2;
      } else if (n === 'r' || n === 'n' || n === 't') {
        word += n === 'r' ? '\r' : n === 'n' ? '\n' : '\t';
        i += 2;
      } else if (n === 'x' && isHex(line.charCodeAt(i + 2)) && isHex(line.charCodeAt(i + 3))) {
        word += String.fromCharCode(parseInt(line.slice(i + 2, i + 4), 16));
        i += 4;
      } else {
        word += '\\';
        i++;
      }
      continue;
    }
    if ((c === CHAR_DQUOTE || c === CHAR_SQUOTE) && (quote === 0 || quote === c)) {
      quote = quote === 0 ? c : 0;
      i++;
      continue;
    }
    word += line[i];
    i++;
  }
  if (quote !== 0) return `unmatched ${quote === CHAR_DQUOTE ? 'double' : 'single'} quote`;
  if (inWord) out.push(word);
  return null;
}

function isHex(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
}

function isDigits(s: string): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/** HAProxy time: an integer with an optional unit (us, ms, s, m, h, d). */
function isTime(s: string): boolean {
  let i = 0;
  while (i < s.length && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57) i++;
  if (i === 0) return false;
  const unit = s.slice(i);
  return unit === '' || unit === 'us' || unit === 'ms' || unit === 's' || unit === 'm' || unit === 'h' || unit === 'd';
}

/** HAProxy size: an integer with an optional k/m/g suffix. */
function isSize(s: string): boolean {
  let i = 0;
  while (i < s.length && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57) i++;
  if (i === 0) return false;
  const unit = s.slice(i).toLowerCase();
  return unit === '' || unit === 'k' || unit === 'm' || unit === 'g';
}

/** Environment variables (`"${MAXCONN}"`) are expanded by HAProxy at load time: not checkable here. */
function isDynamic(s: string): boolean {
  return s.indexOf('${') >= 0;
}

function isIntegerArg(s: string | undefined): boolean {
  return s !== undefined && (isDigits(s) || isDynamic(s));
}

function isTimeArg(s: string | undefined): boolean {
  return s !== undefined && (isTime(s) || isDynamic(s));
}

function isSizeArg(s: string | undefined): boolean {
  return s !== undefined && (isSize(s) || isDynamic(s));
}

/** Proxy and section names: HAProxy's invalid_char() rule. */
function isValidName(s: string): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const ok =
      (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 45 || c === 95 || c === 46 || c === 58;
    if (!ok) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Keyword tables (HAProxy 2.6 configuration manual and `haproxy -dKcfg`, generous towards
// keywords of later versions and optional build features).

type SectionKind =
  | 'global'
  | 'defaults'
  | 'frontend'
  | 'backend'
  | 'listen'
  | 'resolvers'
  | 'userlist'
  | 'peers'
  | 'mailers'
  | 'http-errors'
  | 'ring'
  | 'cache'
  | 'program'
  | 'log-forward'
  | 'fcgi-app'
  | 'namespace_list';

const SECTION_KINDS: ReadonlySet<string> = new Set<SectionKind>([
  'global',
  'defaults',
  'frontend',
  'backend',
  'listen',
  'resolvers',
  'userlist',
  'peers',
  'mailers',
  'http-errors',
  'ring',
  'cache',
  'program',
  'log-forward',
  'fcgi-app',
  'namespace_list',
]);

/** Section kinds whose header requires a name (global takes none, defaults an optional one). */
const NAMED_SECTIONS: ReadonlySet<string> = new Set([
  'frontend',
  'backend',
  'listen',
  'resolvers',
  'userlist',
  'peers',
  'mailers',
  'http-errors',
  'ring',
  'cache',
  'program',
  'log-forward',
  'fcgi-app',
]);

function words(text: string): ReadonlySet<string> {
  return new Set(text.split(/\s+/).filter((w) => w.length > 0));
}

const GLOBAL_KEYWORDS = words(`
  51degrees-cache-size 51degrees-data-file 51degrees-property-name-list 51degrees-property-separator
  busy-polling ca-base chroot close-spread-time cluster-secret cpu-map crt-base daemon default-path
  description deviceatlas-json-file deviceatlas-log-level deviceatlas-properties-cookie deviceatlas-separator
  expose-experimental-directives external-check fd-hard-limit gid grace group
  h1-accept-payload-with-any-method h1-case-adjust h1-case-adjust-file h2-workaround-bogus-websocket-clients
  hard-stop-after insecure-fork-wanted insecure-setuid-wanted issuers-chain-path localpeer log
  log-send-hostname log-tag lua-load lua-load-per-thread lua-prepend-path master-worker max-spread-checks
  maxcompcpuusage maxcomprate maxconn maxconnrate maxpipes maxsessrate maxsslconn maxsslrate maxzlibmem
  mworker-max-reloads nbthread no-memory-trimming node noepoll noevports nogetaddrinfo nokqueue nopoll
  noreuseport nosplice numa-cpu-mapping pidfile pp2-never-send-local presetenv profiling.tasks quiet
  resetenv server-state-base server-state-file set-dumpable set-var set-var-fmt setenv spread-checks
  stats strict-limits thread-group thread-groups uid ulimit-n unix-bind unsetenv user
  wurfl-cache-size wurfl-data-file wurfl-information-list wurfl-information-list-separator zero-warning
`);

/** Families of global keywords matched by prefix (tune.*, ssl-*, ...). */
const GLOBAL_PREFIXES: readonly string[] = ['tune.', 'ssl-', 'httpclient.', 'profiling.', '51degrees-', 'deviceatlas-', 'wurfl-'];

const REMOVED_GLOBAL_KEYWORDS: ReadonlyMap<string, string> = new Map([
  ['nbproc', "'nbproc' is not supported any more since HAProxy 2.5"],
  ['debug', "'debug' is not supported any more, use the '-d' command line option"],
]);

/** Capabilities of a proxy keyword: the sections it may appear in. */
const CAP_D = 1;
const CAP_F = 2;
const CAP_L = 4;
const CAP_B = 8;
/** In a defaults section only when the section is named. */
const CAP_NAMED_DEFAULTS = 16;
/** An option accepting the `no` prefix. */
const CAP_NEGATABLE = 32;

/**
 * The proxy keywords matrix (configuration manual 4.1), one keyword per line: the keyword, then
 * the sections (D defaults, F frontend, L listen, B backend), `!` for named defaults only, `*`
 * for options that take `no`. Keywords of one family (option, timeout, ...) are written
 * `family/word`.
 */
const PROXY_KEYWORD_MATRIX = `
acl DFLB! | backlog DFL | balance DLB | bind FL | capture/cookie FL | capture/request FL | capture/response FL
clitcpka-cnt DFL | clitcpka-idle DFL | clitcpka-intvl DFL | compression DFLB | cookie DLB | declare/capture FL
default-server DLB | default_backend DFL | description FLB | disabled DFLB | dispatch LB | dynamic-cookie-key DLB
email-alert/from DFLB | email-alert/level DFLB | email-alert/mailers DFLB | email-alert/myhostname DFLB | email-alert/to DFLB
enabled DFLB | errorfile DFLB | errorfiles DFLB | errorloc DFLB | errorloc302 DFLB | errorloc303 DFLB | error-log-format DFL
force-persist LB | filter FLB | fullconn DLB | hash-balance-factor DFLB | hash-type DLB | http-after-response DFLB!
http-check/comment DLB | http-check/connect DLB | http-check/disable-on-404 DLB | http-check/expect DLB
http-check/send DLB | http-check/send-state DLB | http-check/set-var DLB | http-check/set-var-fmt DLB | http-check/unset-var DLB
http-error DFLB | http-request DFLB! | http-response DFLB! | http-reuse DLB | http-send-name-header DLB | id FLB
ignore-persist LB | load-server-state-from-file DLB | log DFLB | log-format DFL | log-format-sd DFL | log-tag DFLB
max-keep-alive-queue DLB | maxconn DFL | mode DFLB | monitor/fail FL | monitor-uri DFL
option/abortonclose DLB* | option/accept-invalid-http-request DFL* | option/accept-invalid-http-response DLB*
option/allbackups DLB* | option/checkcache DLB* | option/clitcpka DFL* | option/contstats DFL*
option/disable-h2-upgrade DFL* | option/dontlog-normal DFL* | option/dontlognull DFL* | option/forwardfor DFLB
option/h1-case-adjust-bogus-client DFL* | option/h1-case-adjust-bogus-server DLB* | option/http-buffer-request DFLB*
option/http-ignore-probes DFL* | option/http-keep-alive DFLB* | option/http-no-delay DFLB* | option/http-pretend-keepalive DLB*
option/http-restrict-req-hdr-names DFLB | option/http-server-close DFLB* | option/http-use-proxy-header DFL*
option/httpchk DLB | option/httpclose DFLB* | option/httplog DFL | option/httpslog DFL | option/independent-streams DFLB*
option/ldap-check DLB | option/external-check DFLB | option/log-health-checks DLB* | option/log-separate-errors DFL*
option/logasap DFL* | option/mysql-check DLB | option/nolinger DFLB* | option/originalto DFLB | option/persist DLB*
option/pgsql-check DLB | option/prefer-last-server DLB* | option/redispatch DLB* | option/redis-check DLB
option/smtpchk DLB | option/socket-stats DFL* | option/splice-auto DFLB* | option/splice-request DFLB*
option/splice-response DFLB* | option/spop-check DLB | option/srvtcpka DLB* | option/ssl-hello-chk DLB
option/tcp-check DLB | option/tcp-smart-accept DFL* | option/tcp-smart-connect DLB* | option/tcpka DFLB
option/tcplog DFLB | option/transparent DLB* | option/idle-close-on-response DFL*
external-check/command DFLB | external-check/path DFLB | persist/rdp-cookie DFLB | rate-limit/sessions DFL
redirect FLB | retries DLB | retry-on DLB | server LB | server-state-file-name DLB | server-template LB | source DLB
srvtcpka-cnt DLB | srvtcpka-idle DLB | srvtcpka-intvl DLB
stats/admin FLB | stats/auth DFLB | stats/enable DFLB | stats/hide-version DFLB | stats/http-request FLB
stats/realm DFLB | stats/refresh DFLB | stats/scope DFLB | stats/show-desc DFLB | stats/show-legends DFLB
stats/show-modules DFLB | stats/show-node DFLB | stats/uri DFLB
stick/match LB | stick/on LB | stick/store-request LB | stick/store-response LB | stick-table FLB
tcp-check/comment DLB | tcp-check/connect DLB | tcp-check/expect DLB | tcp-check/send DLB | tcp-check/send-lf DLB
tcp-check/send-binary DLB | tcp-check/send-binary-lf DLB | tcp-check/set-var DLB | tcp-check/set-var-fmt DLB | tcp-check/unset-var DLB
tcp-request/connection DFL! | tcp-request/content DFLB! | tcp-request/inspect-delay DFLB! | tcp-request/session DFL!
tcp-response/content DLB! | tcp-response/inspect-delay DLB!
timeout/check DLB | timeout/client DFL | timeout/client-fin DFL | timeout/connect DLB | timeout/http-keep-alive DFLB
timeout/http-request DFLB | timeout/queue DLB | timeout/server DLB | timeout/server-fin DLB | timeout/tarpit DFLB
timeout/tunnel DLB | transparent DFLB | unique-id-format DFLB | unique-id-header DFLB | use_backend FL
use-fcgi-app LB | use-server LB
`;

/** First words whose second word selects the keyword (`option httplog`, `timeout client`). */
const PROXY_FAMILIES: ReadonlySet<string> = new Set([
  'capture',
  'declare',
  'email-alert',
  'external-check',
  'http-check',
  'monitor',
  'option',
  'persist',
  'rate-limit',
  'stats',
  'stick',
  'tcp-check',
  'tcp-request',
  'tcp-response',
  'timeout',
]);

const PROXY_KEYWORDS: ReadonlyMap<string, number> = parseMatrix(PROXY_KEYWORD_MATRIX);

function parseMatrix(text: string): Map<string, number> {
  const table = new Map<string, number>();
  for (const entry of text.split(/[|\n]/)) {
    const parts = entry.trim().split(/\s+/);
    if (parts.length !== 2) continue;
    const [key, flags] = parts as [string, string];
    let caps = 0;
    for (const f of flags) {
      caps |= f === 'D' ? CAP_D : f === 'F' ? CAP_F : f === 'L' ? CAP_L : f === 'B' ? CAP_B : f === '!' ? CAP_NAMED_DEFAULTS : CAP_NEGATABLE;
    }
    // Family keywords are looked up as "<family> <word>", e.g. "option httplog".
    table.set(key.replace('/', ' '), caps);
  }
  return table;
}

const REMOVED_PROXY_KEYWORDS: ReadonlyMap<string, string> = new Map([
  ['bind-process', "'bind-process' has no effect since HAProxy 2.5 and is removed in 2.7"],
  ['reqadd', "'reqadd' was removed in HAProxy 2.1, use 'http-request add-header'"],
  ['reqrep', "'reqrep' was removed in HAProxy 2.1, use 'http-request replace-header'"],
  ['rspadd', "'rspadd' was removed in HAProxy 2.1, use 'http-response add-header'"],
  ['redisp', "'redisp' was removed, use 'option redispatch'"],
  ['clitimeout', "'clitimeout' was removed, use 'timeout client'"],
  ['srvtimeout', "'srvtimeout' was removed, use 'timeout server'"],
  ['contimeout', "'contimeout' was removed, use 'timeout connect'"],
  ['block', "'block' was removed, use 'http-request deny'"],
]);

const HTTP_REQUEST_ACTIONS = words(`
  add-header allow auth cache-use capture del-header deny disable-l7-retry early-hint normalize-uri
  ot-group redirect reject replace-header replace-path replace-pathq replace-uri replace-value return
  send-spoe-group set-dst set-dst-port set-header set-log-level set-mark set-method
  set-nice set-path set-pathq set-priority-class set-priority-offset set-query set-src set-src-port
  set-timeout set-tos set-uri silent-drop strict-mode tarpit track-sc0 track-sc1 track-sc2 use-service
  wait-for-body wait-for-handshake
`);
const HTTP_RESPONSE_ACTIONS = words(`
  add-header allow cache-store capture del-header deny ot-group redirect replace-header replace-value
  return send-spoe-group set-header set-log-level set-mark set-nice set-status set-tos
  silent-drop strict-mode track-sc0 track-sc1 track-sc2 wait-for-body
`);
const HTTP_AFTER_RESPONSE_ACTIONS = words(`
  add-header allow capture del-header replace-header replace-value set-header set-status strict-mode
`);
const TCP_CONNECTION_ACTIONS = words(`
  accept reject capture expect-proxy expect-netscaler-cip track-sc0 track-sc1 track-sc2 set-dst
  set-dst-port set-mark set-src set-src-port set-tos silent-drop
`);
const TCP_SESSION_ACTIONS = words(`
  accept reject track-sc0 track-sc1 track-sc2 set-dst set-dst-port set-mark set-src set-src-port set-tos
  silent-drop
`);
const TCP_CONTENT_ACTIONS = words(`
  accept reject capture track-sc0 track-sc1 track-sc2 ot-group send-spoe-group set-dst
  set-dst-port set-log-level set-mark set-nice set-priority-class set-priority-offset set-src set-src-port
  set-tos silent-drop switch-mode use-service
`);
const TCP_RESPONSE_ACTIONS = words(`
  accept reject close ot-group send-spoe-group set-log-level set-mark set-nice set-tos
  silent-drop
`);
/** Actions taking a parenthesised argument: `set-var(txn.x)`, `sc-inc-gpc0(1)`, `set-map(file)`. */
const PARAMETERISED_ACTIONS: readonly string[] = [
  'set-var(',
  'set-var-fmt(',
  'unset-var(',
  'sc-inc-gpc(',
  'sc-inc-gpc0(',
  'sc-inc-gpc1(',
  'sc-set-gpt(',
  'sc-set-gpt0(',
  'do-resolve(',
  'add-acl(',
  'del-acl(',
  'set-map(',
  'del-map(',
];

/** Proxy keywords that end with an optional `if` / `unless` condition. */
const CONDITION_KEYWORDS = words(`
  redirect use-server force-persist ignore-persist block
`);
const CONDITION_FAMILY_KEYWORDS = words('monitor-fail stick-match stick-on stick-store-request stick-store-response stats-http-request');


const BALANCE_ALGORITHMS = words('roundrobin static-rr leastconn first source uri url_param hdr random rdp-cookie hash');
const PROXY_MODES = words('http tcp');
const ERRORFILE_CODES = words('200 400 401 403 404 405 407 408 410 413 425 429 500 501 502 503 504');

/** Argument counts of `server` / `default-server` keywords. */
const ARG_NONE = 0;
const ARG_ONE = 1;
const ARG_INT = 2;
const ARG_TIME = 3;
const ARG_PORT = 4;

const SERVER_KEYWORDS: ReadonlyMap<string, number> = new Map([
  ...[...words(`
    agent-check allow-0rtt backup check check-send-proxy check-ssl check-via-socks4 disabled enabled
    force-sslv3 force-tlsv10 force-tlsv11 force-tlsv12 force-tlsv13 no-agent-check no-backup no-check
    no-check-send-proxy no-check-ssl no-send-proxy no-send-proxy-v2 no-send-proxy-v2-ssl
    no-send-proxy-v2-ssl-cn no-ssl no-ssl-reuse no-sslv3 no-tfo no-tls-tickets no-tlsv10 no-tlsv11
    no-tlsv12 no-tlsv13 non-stick send-proxy send-proxy-v2 send-proxy-v2-ssl
    send-proxy-v2-ssl-cn ssl ssl-reuse stick tfo tls-tickets
  `)].map((k) => [k, ARG_NONE] as const),
  ...[...words(`
    addr agent-addr agent-send alpn ca-file check-alpn check-proto check-sni ciphers ciphersuites cookie
    crl-file crt init-addr log-proto namespace npn observe on-error on-marked-down on-marked-up proto
    proxy-v2-options redir resolve-net resolve-opts resolve-prefer resolvers sni socks4 ssl-max-ver
    ssl-min-ver track verify verifyhost ws
  `)].map((k) => [k, ARG_ONE] as const),
  ...[...words(`
    weight maxconn maxqueue minconn rise fall id error-limit pool-max-conn pool-low-conn max-reuse
    agent-port
  `)].map((k) => [k, ARG_INT] as const),
  ...[...words('inter fastinter downinter slowstart agent-inter pool-purge-delay tcp-ut')].map((k) => [k, ARG_TIME] as const),
  ['port', ARG_PORT],
]);

/** Argument counts of `bind` keywords; unlisted words are unknown. */
const BIND_KEYWORDS: ReadonlyMap<string, number> = new Map([
  ...[...words(`
    accept-proxy defer-accept tfo transparent v4v6 v6only ssl allow-0rtt force-sslv3 force-tlsv10
    force-tlsv11 force-tlsv12 force-tlsv13 generate-certificates no-ca-names no-sslv3 no-tls-tickets
    no-tlsv10 no-tlsv11 no-tlsv12 no-tlsv13 prefer-client-ciphers strict-sni quic-force-retry
  `)].map((k) => [k, ARG_NONE] as const),
  ...[...words(`
    accept-netscaler-cip expose-fd gid group interface level mode name namespace nice process proto
    severity-output shards thread uid user alpn ca-file ca-ignore-err ca-sign-file ca-sign-pass
    ca-verify-file ciphers ciphersuites crl-file crt crt-ignore-err crt-list curves ecdhe npn
    ssl-max-ver ssl-min-ver tls-ticket-keys verify quic-cc-algo
  `)].map((k) => [k, ARG_ONE] as const),
  ...[...words('backlog id maxconn mss')].map((k) => [k, ARG_INT] as const),
  ['tcp-ut', ARG_TIME],
]);

const RESOLVERS_KEYWORDS = words('nameserver parse-resolv-conf accepted_payload_size hold resolve_retries timeout');
const USERLIST_KEYWORDS = words('group user');
const PEERS_KEYWORDS = words('bind default-bind default-server disabled enabled log peer server shards table');
const MAILERS_KEYWORDS = words('mailer timeout');
const HTTP_ERRORS_KEYWORDS = words('errorfile');
const RING_KEYWORDS = words('description format maxlen size timeout server backing-file');
const CACHE_KEYWORDS = words('total-max-size max-object-size max-age process-vary max-secondary-entries');
const PROGRAM_KEYWORDS = words('command user group option no');
const LOG_FORWARD_KEYWORDS = words('backlog bind dgram-bind log maxconn timeout');
const FCGI_APP_KEYWORDS = words('docroot index log-stderr option no pass-header path-info set-param');
const NAMESPACE_LIST_KEYWORDS = words('namespace');

const OTHER_SECTION_KEYWORDS: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  ['resolvers', RESOLVERS_KEYWORDS],
  ['userlist', USERLIST_KEYWORDS],
  ['peers', PEERS_KEYWORDS],
  ['mailers', MAILERS_KEYWORDS],
  ['http-errors', HTTP_ERRORS_KEYWORDS],
  ['ring', RING_KEYWORDS],
  ['cache', CACHE_KEYWORDS],
  ['program', PROGRAM_KEYWORDS],
  ['log-forward', LOG_FORWARD_KEYWORDS],
  ['fcgi-app', FCGI_APP_KEYWORDS],
  ['namespace_list', NAMESPACE_LIST_KEYWORDS],
]);

/** ACLs HAProxy predefines (configuration manual 7.4). */
const PREDEFINED_ACLS = words(`
  FALSE HTTP HTTP_1.0 HTTP_1.1 HTTP_2.0 HTTP_3.0 HTTP_CONTENT HTTP_URL_ABS HTTP_URL_SLASH HTTP_URL_STAR
  LOCALHOST METH_CONNECT METH_DELETE METH_GET METH_HEAD METH_OPTIONS METH_POST METH_PUT METH_TRACE
  RDP_COOKIE REQ_CONTENT TRUE WAIT_END
`);

const CONDITIONAL_DIRECTIVES = words('.if .elif .else .endif .diag .notice .warning .alert');

/** Map converter match kinds and output types: map, map_beg, map_str_int, ... */
const MAP_MATCH_KINDS = words('str beg sub dir dom end reg regm int ip len');
const MAP_OUTPUT_TYPES = words('str int ip');

// ---------------------------------------------------------------------------------------------
// Auxiliary file references, shared by both phases

type RefKind = 'map' | 'pattern' | 'crt' | 'crt-list' | 'ca-file' | 'crl-file' | 'errorfile' | 'file';

type DirKind = 'maps' | 'files' | 'certs';

/** Where a referenced path lands among the rendered directories. */
type Resolved =
  | { readonly where: 'inside'; readonly dir: DirKind; readonly name: string; readonly path: string }
  | { readonly where: 'dir'; readonly dir: DirKind; readonly path: string }
  | { readonly where: 'outside'; readonly path: string }
  | { readonly where: 'relative'; readonly path: string };

class PathResolver {
  readonly #dirs: readonly (readonly [DirKind, string])[];

  constructor(paths: ValidationPaths) {
    this.#dirs = [
      ['maps', stripSlash(posix.normalize(paths.mapsDir))],
      ['files', stripSlash(posix.normalize(paths.filesDir))],
      ['certs', stripSlash(posix.normalize(paths.certsDir))],
    ];
  }

  /** `base` is the crt-base / ca-base that applies to relative paths, if any. */
  resolve(raw: string, base: string | null): Resolved {
    let path = raw;
    if (!path.startsWith('/')) {
      if (base === null) return { where: 'relative', path: raw };
      path = `${base}/${path}`;
    }
    path = stripSlash(posix.normalize(path));
    // The longest directory wins, in case one rendered directory nests inside another.
    let best: Resolved | null = null;
    let bestLength = -1;
    for (const [dir, dirPath] of this.#dirs) {
      if (dirPath.length <= bestLength) continue;
      if (path === dirPath) {
        best = { where: 'dir', dir, path };
        bestLength = dirPath.length;
      } else if (path.startsWith(dirPath === '/' ? '/' : `${dirPath}/`)) {
        best = { where: 'inside', dir, name: path.slice(dirPath === '/' ? 1 : dirPath.length + 1), path };
        bestLength = dirPath.length;
      }
    }
    return best ?? { where: 'outside', path };
  }
}

function stripSlash(p: string): string {
  return p.length > 1 && p.endsWith('/') ? p.slice(0, -1) : p;
}

function auxRecord(aux: AuxiliaryFiles, dir: DirKind): Readonly<Record<string, string>> {
  return dir === 'maps' ? aux.maps : dir === 'files' ? aux.files : aux.certificates;
}

function hasAux(aux: AuxiliaryFiles, dir: DirKind, name: string): boolean {
  return Object.prototype.hasOwnProperty.call(auxRecord(aux, dir), name);
}

/** A map converter found in a sample expression: `map_beg(<path>[,<default>])`. */
interface MapConverter {
  readonly name: string;
  readonly path: string;
  readonly defaultValue: string | undefined;
  /** The converter's output is the whole expression (`%[...,map(...)]` and nothing after). */
  readonly isWholeExpression: boolean;
  /** The converter returns strings (not `map_*_int` / `map_*_ip`) and no `\1` references. */
  readonly outputsString: boolean;
}

/**
 * Finds map converters in one word, e.g. `%[req.hdr(host),lower,map(/m/host.map,be_404)]`.
 * Linear scan with indexOf; converter arguments end at the first unnested `)`.
 */
function findMapConverters(word: string, out: MapConverter[]): void {
  out.length = 0;
  let at = word.indexOf(',map');
  while (at >= 0) {
    let j = at + 4;
    while (j < word.length) {
      const c = word.charCodeAt(j);
      if (!((c >= 97 && c <= 122) || c === 95)) break;
      j++;
    }
    const name = word.slice(at + 1, j);
    if (word[j] === '(' && isMapConverterName(name)) {
      let depth = 0;
      let close = -1;
      let comma = -1;
      for (let k = j + 1; k < word.length; k++) {
        const c = word[k];
        if (c === '(') depth++;
        else if (c === ')') {
          if (depth === 0) {
            close = k;
            break;
          }
          depth--;
        } else if (c === ',' && depth === 0 && comma < 0) comma = k;
      }
      if (close < 0) return;
      const path = unquoteArg(word.slice(j + 1, comma < 0 ? close : comma));
      const defaultValue = comma < 0 ? undefined : unquoteArg(word.slice(comma + 1, close));
      const output = name.split('_')[2];
      out.push({
        name,
        path,
        defaultValue,
        isWholeExpression: word.startsWith('%[') && close === word.length - 2 && word.endsWith(']'),
        outputsString: (output === undefined || output === 'str') && name !== 'map_regm',
      });
      j = close;
    }
    at = word.indexOf(',map', j);
  }
}

function isMapConverterName(name: string): boolean {
  if (name === 'map') return true;
  const parts = name.split('_');
  if (parts.length < 2 || parts.length > 3 || parts[0] !== 'map') return false;
  if (!MAP_MATCH_KINDS.has(parts[1] ?? '')) return false;
  return parts.length === 2 || MAP_OUTPUT_TYPES.has(parts[2] ?? '');
}

function unquoteArg(s: string): string {
  const t = s.trim();
  if (t.length >= 2 && ((t.startsWith('"') && t.endsWith('"')) || (t.startsWith("'") && t.endsWith("'")))) {
    return t.slice(1, -1);
  }
  return t;
}

function isBlank(c: number): boolean {
  return c === CHAR_SPACE || c === CHAR_TAB || c === 13;
}

/** Calls `fn` for each line of `text` with its 1-based number, without splitting the text. */
function forEachLine(text: string, fn: (line: string, lineNo: number) => void): void {
  let pos = 0;
  let lineNo = 0;
  const len = text.length;
  while (pos < len) {
    let end = text.indexOf('\n', pos);
    if (end < 0) end = len;
    lineNo++;
    fn(text.slice(pos, end), lineNo);
    pos = end + 1;
  }
}

// ---------------------------------------------------------------------------------------------
// Phase 'validation'
//
// The phase is one line by line pass, split in two so that its cost can follow what changed
// between two renders:
//
// - StructureParser reads lines and keeps only the state a section needs for itself: the
//   section, its server names and its ACLs. Everything else, that is errors and every step that
//   reads or writes state shared by the whole configuration (registering a proxy, a defaults or
//   a named section, `from` lookups, bind addresses, crt-base / ca-base, referenced paths,
//   backend and section references), is written down as a StructureOp, in the order the pass
//   meets it, with line numbers counted from the first line of the parsed text. A path is
//   recorded as written: its verdict depends on the crt-base / ca-base in force, on the rendered
//   directories and on which files were rendered, all decided at replay. So the ops of a text
//   depend on that text alone.
// - StructureState replays ops against the state of the whole configuration and owns the
//   IssueSink, so the error cap, the deduplication of path warnings and the order of errors and
//   warnings are those of one pass. finish() then checks the collected references, as the pass
//   always did after the last line.
//
// validateStructure() parses the whole configuration as one text and replays it.
// IncrementalValidator cuts the configuration before lines that certainly open a section,
// parses each chunk on its own (or reuses the ops of an identical chunk text) and replays the
// chunks in order, adding each chunk's line offset. That is exact: the parser starts a text with
// no section, as the pass does at the top of the file, and a section opener resets all of the
// parser's own state, so from an opener on, the parse of a chunk is the parse of the whole
// configuration from that line; the concatenated ops of the chunks are the ops of the whole
// configuration, line numbers aside. Line numbers are shifted at replay, including the one a
// duplicate server message quotes (op 'error-at': the first server is in the same section, so
// in the same chunk).

interface ProxyEntry {
  readonly kind: 'frontend' | 'backend' | 'listen';
  readonly name: string;
  readonly line: number;
}

interface BackendReference {
  readonly name: string;
  readonly line: number;
  readonly keyword: string;
  readonly proxy: string;
}

interface MapBackendReference {
  readonly dir: DirKind;
  readonly mapName: string;
  readonly line: number;
  readonly keyword: string;
  readonly proxy: string;
}

interface NamedReference {
  readonly name: string;
  readonly line: number;
  readonly what: string;
}

interface Section {
  readonly kind: SectionKind;
  readonly name: string;
  /** A defaults section with a name (ACLs and rules are allowed only there). */
  readonly named: boolean;
}

/**
 * One step of the line by line pass that the parser cannot take alone. `line` is relative to the
 * parsed text; StructureState.apply() adds the text's offset.
 */
type StructureOp =
  /** An error decided by the line and its section alone. */
  | { readonly op: 'error'; readonly line: number; readonly message: string }
  /** An error quoting another line of the same section: `${head}${at}${tail}`. */
  | { readonly op: 'error-at'; readonly line: number; readonly head: string; readonly at: number; readonly tail: string }
  /** `<kind> [<name>] from <defaults>`: the defaults section must be declared above. */
  | { readonly op: 'from'; readonly line: number; readonly kind: SectionKind; readonly name: string; readonly from: string }
  | { readonly op: 'proxy'; readonly line: number; readonly kind: 'frontend' | 'backend' | 'listen'; readonly name: string }
  | { readonly op: 'defaults'; readonly name: string }
  /** A named section other than proxies and defaults (resolvers, userlist, cache, ...). */
  | { readonly op: 'section'; readonly line: number; readonly kind: SectionKind; readonly name: string }
  /** One valid address of a bind line. */
  | { readonly op: 'bind'; readonly line: number; readonly addr: string; readonly section: Section }
  /** A referenced file path: its verdict depends on crt-base / ca-base and on the rendered files. */
  | { readonly op: 'path'; readonly line: number; readonly kind: RefKind; readonly raw: string }
  /** A map converter in a `use_backend` / `default_backend` target. */
  | { readonly op: 'map-target'; readonly line: number; readonly conv: MapConverter; readonly keyword: string; readonly proxy: string }
  | { readonly op: 'backend-ref'; readonly line: number; readonly name: string; readonly keyword: string; readonly proxy: string }
  | { readonly op: 'section-ref'; readonly line: number; readonly kind: string; readonly name: string; readonly what: string }
  | { readonly op: 'crt-base' | 'ca-base'; readonly value: string | null }
  /** The parser threw: the pass ends here with an internal error, as it would have. */
  | { readonly op: 'throw'; readonly message: string };

/** Parses one text (a whole configuration, or a piece of one) into its StructureOps. */
function parseStructure(text: string): readonly StructureOp[] {
  return new StructureParser().parse(text);
}

class StructureParser {
  #ops: StructureOp[] = [];

  #section: Section | null = null;
  /** Server names of the current proxy; cleared at each section (reused, not reallocated). */
  readonly #servers = new Map<string, number>();
  /** ACL names declared so far in the current proxy. */
  readonly #acls = new Set<string>();

  readonly #words: string[] = [];
  readonly #converters: MapConverter[] = [];

  /** The ops of `text`, parsed from a clean state: no section yet, as at the top of a file. */
  parse(text: string): readonly StructureOp[] {
    this.#ops = [];
    this.#section = null;
    this.#servers.clear();
    this.#acls.clear();
    try {
      forEachLine(text, (line, lineNo) => this.#line(line, lineNo));
    } catch (err) {
      this.#ops.push({ op: 'throw', message: describe(err) });
    }
    return this.#ops;
  }

  #error(line: number, message: string): void {
    this.#ops.push({ op: 'error', line, message });
  }

  #checkPath(kind: RefKind, raw: string, line: number): void {
    this.#ops.push({ op: 'path', line, kind, raw });
  }

  #sectionRef(kind: string, name: string, line: number, what: string): void {
    this.#ops.push({ op: 'section-ref', line, kind, name, what });
  }

  #where(): string {
    const s = this.#section;
    if (s === null) return 'outside of any section';
    if (s.kind === 'global') return "in 'global' section";
    if (s.kind === 'defaults' && s.name === '') return "in anonymous 'defaults' section";
    return `in ${s.kind} '${s.name}'`;
  }

  #line(line: string, lineNo: number): void {
    const w = this.#words;
    const problem = tokenizeLine(line, w);
    if (problem !== null) {
      this.#error(lineNo, problem);
      return;
    }
    if (w.length === 0) return;
    const keyword = w[0] as string;
    if (keyword.startsWith('.')) {
      // Conditional blocks are not evaluated: every branch is checked as if it applied.
      if (!CONDITIONAL_DIRECTIVES.has(keyword)) this.#error(lineNo, `unknown directive '${keyword}'`);
      return;
    }
    if (SECTION_KINDS.has(keyword)) {
      this.#openSection(keyword as SectionKind, w, lineNo);
      return;
    }
    const section = this.#section;
    if (section === null) {
      const known = GLOBAL_KEYWORDS.has(keyword) || PROXY_KEYWORDS.has(keyword) || PROXY_FAMILIES.has(keyword);
      this.#error(lineNo, known ? `keyword '${keyword}' outside of any section` : `unknown section '${keyword}'`);
      return;
    }
    switch (section.kind) {
      case 'global':
        this.#globalLine(w, lineNo, line);
        return;
      case 'defaults':
      case 'frontend':
      case 'backend':
      case 'listen':
        this.#proxyLine(section, w, lineNo, line);
        return;
      default:
        this.#otherSectionLine(section, w, lineNo, line);
    }
  }

  #unknownKeyword(keyword: string, lineNo: number, line: string): void {
    const indented = line.length > 0 && isBlank(line.charCodeAt(0));
    if (!indented) {
      this.#error(lineNo, `unknown section or keyword '${keyword}' ${this.#where()}`);
    } else {
      this.#error(lineNo, `unknown keyword '${keyword}' ${this.#where()}`);
    }
  }

  // -- sections --------------------------------------------------------------------------------

  /** Resets all of the parser's own state: what makes a cut before this line exact. */
  #openSection(kind: SectionKind, w: readonly string[], lineNo: number): void {
    this.#servers.clear();
    this.#acls.clear();
    let name = '';
    let argIndex = 1;
    if (kind === 'global' || kind === 'namespace_list') {
      if (w.length > 1) this.#error(lineNo, `'${kind}' takes no arguments (got '${w[1]}')`);
    } else if (kind === 'defaults') {
      if (w.length > 1 && w[1] !== 'from') {
        name = w[1] as string;
        argIndex = 2;
      }
    } else if (NAMED_SECTIONS.has(kind)) {
      name = w[1] ?? '';
      argIndex = 2;
      if (name === '') {
        this.#error(lineNo, `'${kind}' section requires a name`);
      }
    }
    if (name !== '' && !isValidName(name)) {
      this.#error(
        lineNo,
        `invalid ${kind} name '${name}': only letters, digits, '-', '_', '.' and ':' are allowed`,
      );
    }
    const isProxy = kind === 'defaults' || kind === 'frontend' || kind === 'backend' || kind === 'listen';
    if (isProxy && w[argIndex] === 'from') {
      const from = w[argIndex + 1];
      if (from === undefined) this.#error(lineNo, `'from' expects the name of a defaults section`);
      else this.#ops.push({ op: 'from', line: lineNo, kind, name, from });
      argIndex += 2;
    }
    if (kind !== 'global' && kind !== 'namespace_list' && w.length > argIndex) {
      this.#error(lineNo, `unexpected argument '${w[argIndex]}' after ${kind} name`);
    }
    this.#section = { kind, name, named: name !== '' };

    if (name === '') return;
    if (kind === 'frontend' || kind === 'backend' || kind === 'listen') {
      this.#ops.push({ op: 'proxy', line: lineNo, kind, name });
    } else if (kind === 'defaults') {
      this.#ops.push({ op: 'defaults', name });
    } else {
      this.#ops.push({ op: 'section', line: lineNo, kind, name });
    }
  }

  // -- global ----------------------------------------------------------------------------------

  #globalLine(w: readonly string[], lineNo: number, line: string): void {
    const keyword = w[0] as string;
    const removed = REMOVED_GLOBAL_KEYWORDS.get(keyword);
    if (removed !== undefined) {
      this.#error(lineNo, removed);
      return;
    }
    if (!GLOBAL_KEYWORDS.has(keyword) && !GLOBAL_PREFIXES.some((p) => keyword.startsWith(p))) {
      this.#unknownKeyword(keyword, lineNo, line);
      return;
    }
    switch (keyword) {
      case 'crt-base':
      case 'ca-base':
        this.#ops.push({ op: keyword, value: w[1] === undefined ? null : stripSlash(posix.normalize(w[1])) });
        break;
      case 'maxconn':
      case 'nbthread':
      case 'ulimit-n':
      case 'maxsslconn':
      case 'maxconnrate':
      case 'maxsessrate':
        if (!isIntegerArg(w[1])) this.#error(lineNo, `'${keyword}' expects an integer argument`);
        break;
      case 'hard-stop-after':
      case 'grace':
        if (!isTimeArg(w[1])) this.#error(lineNo, `'${keyword}' expects a time argument`);
        break;
      case 'httpclient.ssl.ca-file':
        if (w[1] !== undefined) this.#checkPath('ca-file', w[1], lineNo);
        break;
      case 'lua-load':
      case 'lua-load-per-thread':
      case 'h1-case-adjust-file':
        if (w[1] !== undefined) this.#checkPath('file', w[1], lineNo);
        break;
      default:
        break;
    }
  }

  // -- proxies ---------------------------------------------------------------------------------

  #proxyLine(section: Section, w: readonly string[], lineNo: number, line: string): void {
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
      this.#error(lineNo, removed);
      return;
    }
    let key = keyword;
    if (PROXY_FAMILIES.has(keyword)) {
      const sub = w[first + 1];
      if (sub === undefined) {
        this.#error(lineNo, `'${keyword}' expects an argument ${this.#where()}`);
        return;
      }
      key = `${keyword} ${familyWord(sub)}`;
    }
    const caps = PROXY_KEYWORDS.get(key);
    if (caps === undefined) {
      if (key !== keyword) {
        this.#error(lineNo, `unknown '${keyword}' keyword '${w[first + 1]}' ${this.#where()}`);
      } else {
        this.#unknownKeyword(keyword, lineNo, line);
      }
      return;
    }
    if (negated && !(caps & CAP_NEGATABLE) && key !== 'log') {
      this.#error(lineNo, `'no ${key}' is not supported: '${key}' cannot be negated`);
      return;
    }
    const need = section.kind === 'defaults' ? CAP_D : section.kind === 'frontend' ? CAP_F : section.kind === 'listen' ? CAP_L : CAP_B;
    if (!(caps & need)) {
      this.#error(lineNo, `'${key}' is not allowed ${this.#where()}`);
      return;
    }
    if (section.kind === 'defaults' && !section.named && caps & CAP_NAMED_DEFAULTS) {
      this.#error(lineNo, `'${key}' is not allowed in an anonymous defaults section (name the section)`);
      return;
    }
    if (negated) return;
    this.#proxyArguments(section, key, w, lineNo);
  }

  /** Per-keyword argument checks and reference collection. */
  #proxyArguments(section: Section, key: string, w: readonly string[], lineNo: number): void {
    switch (key) {
      case 'acl': {
        const name = w[1];
        if (name === undefined || w.length < 3) {
          this.#error(lineNo, `'acl' expects a name and a criterion`);
          return;
        }
        this.#acls.add(name);
        this.#scanReferences(w, 2, lineNo, false);
        return;
      }
      case 'use_backend':
      case 'default_backend':
        this.#backendTarget(section, key, w, lineNo);
        return;
      case 'server':
        this.#serverLine(w, lineNo, false);
        return;
      case 'default-server':
        this.#serverParams(w, 1, lineNo, 'default-server');
        return;
      case 'server-template':
        this.#serverTemplate(w, lineNo);
        return;
      case 'bind':
        this.#bindLine(section, w, lineNo);
        return;
      case 'mode':
        if (!PROXY_MODES.has(w[1] ?? '') && !isDynamic(w[1] ?? '')) this.#error(lineNo, `'mode' expects 'http' or 'tcp' (got '${w[1] ?? ''}')`);
        return;
      case 'balance': {
        const algo = w[1] ?? '';
        const paren = algo.indexOf('(');
        if (!BALANCE_ALGORITHMS.has(paren < 0 ? algo : algo.slice(0, paren)) && !isDynamic(algo)) {
          this.#error(lineNo, `unknown load balancing algorithm '${algo}'`);
        }
        return;
      }
      case 'maxconn':
      case 'retries':
      case 'fullconn':
      case 'backlog':
      case 'hash-balance-factor':
        if (!isIntegerArg(w[1])) this.#error(lineNo, `'${key}' expects an integer argument (got '${w[1] ?? ''}')`);
        return;
      case 'errorfile':
        this.#errorfile(w, lineNo);
        return;
      case 'errorfiles':
        if (w[1] === undefined) this.#error(lineNo, `'errorfiles' expects the name of an http-errors section`);
        else this.#sectionRef('http-errors', w[1], lineNo, 'errorfiles');
        return;
      case 'http-request':
        this.#action(w, 1, HTTP_REQUEST_ACTIONS, lineNo, key);
        return;
      case 'http-response':
        this.#action(w, 1, HTTP_RESPONSE_ACTIONS, lineNo, key);
        return;
      case 'http-after-response':
        this.#action(w, 1, HTTP_AFTER_RESPONSE_ACTIONS, lineNo, key);
        return;
      case 'tcp-request connection':
        this.#action(w, 2, TCP_CONNECTION_ACTIONS, lineNo, key);
        return;
      case 'tcp-request session':
        this.#action(w, 2, TCP_SESSION_ACTIONS, lineNo, key);
        return;
      case 'tcp-request content':
        this.#action(w, 2, TCP_CONTENT_ACTIONS, lineNo, key);
        return;
      case 'tcp-response content':
        this.#action(w, 2, TCP_RESPONSE_ACTIONS, lineNo, key);
        return;
      case 'tcp-request inspect-delay':
      case 'tcp-response inspect-delay':
        if (!isTimeArg(w[2])) this.#error(lineNo, `'${key}' expects a time argument (got '${w[2] ?? ''}')`);
        return;
      case 'filter':
        if (w[1] === 'cache') {
          if (w[2] !== undefined) this.#sectionRef('cache', w[2], lineNo, 'filter cache');
        }
        return;
      default:
        break;
    }
    if (key.startsWith('timeout ')) {
      if (!isTimeArg(w[2])) this.#error(lineNo, `'${key}' expects a time argument (got '${w[2] ?? ''}')`);
      return;
    }
    // Free-text keywords (description, log-format, ...) may contain the words 'if' and 'unless'.
    const takesCondition = CONDITION_KEYWORDS.has(key) || CONDITION_FAMILY_KEYWORDS.has(key.replace(' ', '-'));
    this.#scanReferences(w, 1, lineNo, takesCondition);
  }

  /** `errorfile <code> <file>`, in proxies and in http-errors sections. */
  #errorfile(w: readonly string[], lineNo: number): void {
    const code = w[1];
    const file = w[2];
    if (code === undefined || file === undefined) {
      this.#error(lineNo, `'errorfile' expects a status code and a file`);
      return;
    }
    if (!ERRORFILE_CODES.has(code)) this.#error(lineNo, `errorfile: status code '${code}' not handled`);
    this.#checkPath('errorfile', file, lineNo);
  }

  #action(w: readonly string[], index: number, allowed: ReadonlySet<string>, lineNo: number, key: string): void {
    const action = w[index];
    if (action === undefined) {
      this.#error(lineNo, `'${key}' expects an action`);
      return;
    }
    const known =
      allowed.has(action) ||
      action.startsWith('lua.') ||
      (action.startsWith('track-sc') && isDigits(action.slice(8))) ||
      PARAMETERISED_ACTIONS.some((p) => action.startsWith(p) && action.endsWith(')'));
    if (!known) {
      this.#error(lineNo, `unknown '${key}' action '${action}' ${this.#where()}`);
      return;
    }
    if (action === 'cache-use' || action === 'cache-store') {
      const name = w[index + 1];
      if (name !== undefined) this.#sectionRef('cache', name, lineNo, `${key} ${action}`);
    }
    if (action.startsWith('set-map(') || action.startsWith('del-map(') || action.startsWith('add-acl(') || action.startsWith('del-acl(')) {
      const open = action.indexOf('(');
      this.#checkPath(action.startsWith('set-map') || action.startsWith('del-map') ? 'map' : 'pattern', unquoteArg(action.slice(open + 1, -1)), lineNo);
    }
    this.#scanReferences(w, index + 1, lineNo, true);
  }

  #backendTarget(section: Section, key: string, w: readonly string[], lineNo: number): void {
    const target = w[1];
    if (target === undefined || target === 'if' || target === 'unless') {
      this.#error(lineNo, `'${key}' expects a backend name`);
      return;
    }
    if (key === 'default_backend' && w.length > 2) {
      this.#error(lineNo, `'default_backend' takes one backend name and no condition`);
    }
    if (isDynamic(target)) {
      // Named by an environment variable: resolved by HAProxy at load time.
    } else if (target.indexOf('%[') < 0) {
      this.#ops.push({ op: 'backend-ref', line: lineNo, name: target, keyword: key, proxy: section.name });
    } else {
      findMapConverters(target, this.#converters);
      for (const conv of this.#converters) {
        this.#ops.push({ op: 'map-target', line: lineNo, conv, keyword: key, proxy: section.name });
      }
    }
    this.#scanCondition(w, 2, lineNo);
  }

  /**
   * Collects file references (map converters, `-f` pattern files, `crt`, `errorfile`, `file`)
   * in words[from..] and checks the condition's ACL names.
   */
  #scanReferences(w: readonly string[], from: number, lineNo: number, withCondition: boolean): void {
    let conditionAt = -1;
    for (let i = from; i < w.length; i++) {
      const word = w[i] as string;
      if (withCondition && conditionAt < 0 && (word === 'if' || word === 'unless')) conditionAt = i;
      if (word.indexOf(',map') >= 0) {
        findMapConverters(word, this.#converters);
        for (const conv of this.#converters) this.#checkPath('map', conv.path, lineNo);
      } else if (word === '-f' && i + 1 < w.length) {
        this.#checkPath('pattern', w[i + 1] as string, lineNo);
        i++;
      } else if ((word === 'file' || word === 'lf-file' || word === 'errorfile') && i + 1 < w.length && (w[0] as string).startsWith('http-')) {
        this.#checkPath('file', w[i + 1] as string, lineNo);
        i++;
      }
    }
    if (conditionAt >= 0) this.#scanCondition(w, conditionAt, lineNo);
  }

  /** Every named ACL a condition uses must be predefined or declared earlier in the proxy. */
  #scanCondition(w: readonly string[], at: number, lineNo: number): void {
    const head = w[at];
    if (head !== 'if' && head !== 'unless') {
      if (head !== undefined) this.#error(lineNo, `unexpected '${head}': expected 'if' or 'unless'`);
      return;
    }
    if (at + 1 >= w.length) {
      this.#error(lineNo, `'${head}' expects a condition`);
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
        if (word === '-f' && i + 1 < w.length) this.#checkPath('pattern', w[++i] as string, lineNo);
        else if (word.indexOf(',map') >= 0) {
          findMapConverters(word, this.#converters);
          for (const conv of this.#converters) this.#checkPath('map', conv.path, lineNo);
        }
        continue;
      }
      if (word === '||' || word === 'or') continue;
      if (!this.#acls.has(word) && !PREDEFINED_ACLS.has(word)) {
        this.#error(lineNo, `condition uses unknown ACL '${word}' ${this.#where()}`);
      }
    }
    if (depth !== 0) this.#error(lineNo, `unbalanced braces in condition`);
  }

  // -- server and bind lines ---------------------------------------------------------------

  #serverLine(w: readonly string[], lineNo: number, inPeers: boolean): void {
    const name = w[1];
    const addr = w[2];
    if (name === undefined || (addr === undefined && !inPeers)) {
      this.#error(lineNo, `'server' expects <name> and <address>[:<port>] as arguments`);
      return;
    }
    const previous = this.#servers.get(name);
    if (previous !== undefined) {
      // The first server is in the same section, hence in the same parsed text: its line moves
      // with this one, so the message keeps it apart.
      this.#ops.push({
        op: 'error-at',
        line: lineNo,
        head: `another server named '${name}' was already defined at line `,
        at: previous,
        tail: ` ${this.#where()}`,
      });
    } else {
      this.#servers.set(name, lineNo);
    }
    if (addr === undefined) return;
    const bad = serverAddressProblem(addr);
    if (bad !== null) this.#error(lineNo, `server '${name}': ${bad}`);
    this.#serverParams(w, 3, lineNo, `server '${name}'`);
  }

  #serverTemplate(w: readonly string[], lineNo: number): void {
    const prefix = w[1];
    const count = w[2];
    const addr = w[3];
    if (prefix === undefined || count === undefined || addr === undefined) {
      this.#error(lineNo, `'server-template' expects <prefix> <nb | range> <fqdn>[:<port>]`);
      return;
    }
    const dash = count.indexOf('-');
    const rangeOk = dash < 0 ? isDigits(count) : isDigits(count.slice(0, dash)) && isDigits(count.slice(dash + 1));
    if (!rangeOk) this.#error(lineNo, `server-template '${prefix}': invalid number or range '${count}'`);
    const bad = serverAddressProblem(addr);
    if (bad !== null) this.#error(lineNo, `server-template '${prefix}': ${bad}`);
    this.#serverParams(w, 4, lineNo, `server-template '${prefix}'`);
  }

  #serverParams(w: readonly string[], from: number, lineNo: number, what: string): void {
    for (let i = from; i < w.length; i++) {
      const kw = w[i] as string;
      if (kw === 'source') {
        if (w[i + 1] === undefined) {
          this.#error(lineNo, `${what}: 'source' expects an address`);
          return;
        }
        i++;
        while (w[i + 1] === 'usesrc' || w[i + 1] === 'interface') {
          if (w[i + 2] === undefined) {
            this.#error(lineNo, `${what}: '${w[i + 1]}' expects an argument`);
            return;
          }
          i += 2;
        }
        continue;
      }
      const arity = SERVER_KEYWORDS.get(kw);
      if (arity === undefined) {
        this.#error(lineNo, `${what}: unknown keyword '${kw}'`);
        continue;
      }
      if (arity === ARG_NONE) continue;
      const arg = w[i + 1];
      if (arg === undefined) {
        this.#error(lineNo, `${what}: '${kw}' expects an argument`);
        return;
      }
      i++;
      this.#checkArgument(kw, arity, arg, lineNo, what);
      if (kw === 'crt' || kw === 'ca-file' || kw === 'crl-file') this.#checkPath(kw, arg, lineNo);
      else if (kw === 'resolvers') this.#sectionRef('resolvers', arg, lineNo, `${what} resolvers`);
    }
  }

  #checkArgument(kw: string, arity: number, arg: string, lineNo: number, what: string): void {
    if (isDynamic(arg)) return;
    if (arity === ARG_INT && !isDigits(arg)) {
      this.#error(lineNo, `${what}: '${kw}' expects an integer argument (got '${arg}')`);
    } else if (arity === ARG_TIME && !isTime(arg)) {
      this.#error(lineNo, `${what}: '${kw}' expects a time argument (got '${arg}')`);
    } else if (arity === ARG_PORT && (!isDigits(arg) || Number(arg) < 1 || Number(arg) > 65535)) {
      this.#error(lineNo, `${what}: invalid port '${arg}'`);
    } else if (kw === 'weight' && Number(arg) > 256) {
      this.#error(lineNo, `${what}: weight must be between 0 and 256 (got '${arg}')`);
    } else if ((kw === 'rise' || kw === 'fall') && Number(arg) < 1) {
      this.#error(lineNo, `${what}: '${kw}' must be at least 1`);
    }
  }

  #bindLine(section: Section, w: readonly string[], lineNo: number): void {
    const addrs = w[1];
    if (addrs === undefined) {
      this.#error(lineNo, `'bind' expects an address`);
      return;
    }
    for (const addr of addrs.split(',')) {
      const bad = bindAddressProblem(addr);
      if (bad !== null) {
        this.#error(lineNo, `bind: ${bad}`);
        continue;
      }
      this.#ops.push({ op: 'bind', line: lineNo, addr, section });
    }
    for (let i = 2; i < w.length; i++) {
      const kw = w[i] as string;
      const arity = BIND_KEYWORDS.get(kw);
      if (arity === undefined) {
        this.#error(lineNo, `bind: unknown keyword '${kw}'`);
        continue;
      }
      if (arity === ARG_NONE) continue;
      const arg = w[i + 1];
      if (arg === undefined) {
        this.#error(lineNo, `bind: '${kw}' expects an argument`);
        return;
      }
      i++;
      this.#checkArgument(kw, arity, arg, lineNo, 'bind');
      if (kw === 'crt' || kw === 'crt-list' || kw === 'ca-file' || kw === 'crl-file' || kw === 'ca-verify-file') {
        this.#checkPath(kw === 'ca-verify-file' ? 'ca-file' : kw, arg, lineNo);
      }
    }
  }

  // -- other sections ------------------------------------------------------------------------

  #otherSectionLine(section: Section, w: readonly string[], lineNo: number, line: string): void {
    const keyword = w[0] as string;
    const allowed = OTHER_SECTION_KEYWORDS.get(section.kind);
    if (allowed === undefined || !allowed.has(keyword)) {
      this.#unknownKeyword(keyword, lineNo, line);
      return;
    }
    if (section.kind === 'http-errors' && keyword === 'errorfile') {
      this.#errorfile(w, lineNo);
    } else if (keyword === 'server' && (section.kind === 'peers' || section.kind === 'ring')) {
      this.#serverLine(w, lineNo, section.kind === 'peers');
    } else if (keyword === 'nameserver' || keyword === 'mailer' || keyword === 'peer') {
      if (w[1] === undefined || (w[2] === undefined && keyword !== 'peer')) {
        this.#error(lineNo, `'${keyword}' expects <name> and <address>[:<port>] as arguments`);
      }
    } else if (section.kind === 'cache' && (keyword === 'total-max-size' || keyword === 'max-object-size' || keyword === 'max-age')) {
      if (!isIntegerArg(w[1])) this.#error(lineNo, `'${keyword}' expects an integer argument (got '${w[1] ?? ''}')`);
    } else if (section.kind === 'ring' && keyword === 'size') {
      if (!isSizeArg(w[1])) this.#error(lineNo, `'size' expects a size (got '${w[1] ?? ''}')`);
    }
  }
}

/** The second word of a family keyword, without arguments: `set-var(txn.x)` is `set-var`. */
function familyWord(sub: string): string {
  const paren = sub.indexOf('(');
  return paren < 0 ? sub : sub.slice(0, paren);
}

/** The entries of a map file that have a value, in file order, as #checkBackendReferences reads them. */
interface MapEntries {
  readonly lines: readonly number[];
  readonly keys: readonly string[];
  readonly values: readonly string[];
  /**
   * The distinct values, when known (IncrementalValidator): if all name backends, no entry needs
   * looking at. Each value found is replaced by the backend's own name string, equal to it: the
   * next call, whose backends mostly come from the same cached chunks, then matches by identity.
   */
  readonly distinctValues?: string[];
}

/**
 * Every entry line of a map or pattern file, in one pass over the text with no per-line copies:
 * the key (first word) and value (the rest, blanks trimmed; '' when absent) of each line that is
 * neither blank nor a comment. Same reading as splitMapLine over forEachLine.
 */
interface ParsedMap {
  readonly lines: readonly number[];
  readonly keys: readonly string[];
  readonly values: readonly string[];
}

function parseMapText(text: string): ParsedMap {
  const lines: number[] = [];
  const keys: string[] = [];
  const values: string[] = [];
  const len = text.length;
  let pos = 0;
  let lineNo = 0;
  while (pos < len) {
    let end = text.indexOf('\n', pos);
    if (end < 0) end = len;
    lineNo++;
    let i = pos;
    while (i < end && isBlank(text.charCodeAt(i))) i++;
    if (i < end && text.charCodeAt(i) !== CHAR_HASH) {
      const keyStart = i;
      while (i < end && !isBlank(text.charCodeAt(i))) i++;
      const keyEnd = i;
      while (i < end && isBlank(text.charCodeAt(i))) i++;
      let valueEnd = end;
      while (valueEnd > i && isBlank(text.charCodeAt(valueEnd - 1))) valueEnd--;
      lines.push(lineNo);
      keys.push(text.slice(keyStart, keyEnd));
      values.push(i < valueEnd ? text.slice(i, valueEnd) : '');
    }
    pos = end + 1;
  }
  return { lines, keys, values };
}

/** The entries that have a value. */
function mapEntriesFrom(parsed: ParsedMap): MapEntries {
  if (!parsed.values.includes('')) return parsed;
  const lines: number[] = [];
  const keys: string[] = [];
  const values: string[] = [];
  for (let i = 0; i < parsed.values.length; i++) {
    if (parsed.values[i] === '') continue;
    lines.push(parsed.lines[i] as number);
    keys.push(parsed.keys[i] as string);
    values.push(parsed.values[i] as string);
  }
  return { lines, keys, values };
}

function mapEntriesOf(text: string): MapEntries {
  return mapEntriesFrom(parseMapText(text));
}

/** Work derived from one auxiliary file's text alone: computed by the pure functions, cached by IncrementalValidator. */
interface TextDerivations {
  mapEntries(text: string): MapEntries;
  mapIssues(text: string, patternOnly: boolean): readonly LineIssue[];
  pem(text: string): PemSummary;
}

const UNCACHED: TextDerivations = { mapEntries: mapEntriesOf, mapIssues: mapIssuesOf, pem: scanPem };

/** The error raised when replay meets a 'throw' op: the phase's catch reports it as before. */
function replayThrow(message: string): never {
  throw new Error(message);
}

/** Replays StructureOps in configuration order; owns the state of the whole configuration. */
class StructureState {
  readonly #aux: AuxiliaryFiles;
  readonly #sink: IssueSink;
  readonly #resolver: PathResolver;
  readonly #derive: TextDerivations;

  /** frontend/backend/listen names; a name may be held once per capability. */
  readonly #frontends = new Map<string, ProxyEntry>();
  readonly #backends = new Map<string, ProxyEntry>();
  readonly #defaults = new Set<string>();
  /** Other named sections by kind: resolvers, cache, peers, ... */
  readonly #namedSections = new Map<string, Map<string, number>>();
  readonly #binds = new Map<string, { proxy: string; line: number }>();

  readonly #backendRefs: BackendReference[] = [];
  readonly #mapBackendRefs: MapBackendReference[] = [];
  readonly #sectionRefs: { kind: string; ref: NamedReference }[] = [];
  /** Outcome of each distinct referenced path, so a path repeated in 10,000 backends costs once. */
  readonly #pathVerdicts = new Map<string, { resolved: Resolved; verdict: string | null }>();
  readonly #warnedPaths = new Set<string>();

  #crtBase: string | null = null;
  #caBase: string | null = null;

  constructor(aux: AuxiliaryFiles, paths: ValidationPaths, sink: IssueSink, derive: TextDerivations) {
    this.#aux = aux;
    this.#sink = sink;
    this.#resolver = new PathResolver(paths);
    this.#derive = derive;
  }

  #error(line: number, message: string): void {
    this.#sink.error(CONFIG_FILE, line, message);
  }

  /** Replays the ops of a text whose first line is line `offset + 1` of the configuration. */
  apply(ops: readonly StructureOp[], offset: number): void {
    for (const op of ops) {
      switch (op.op) {
        case 'error':
          this.#error(op.line + offset, op.message);
          break;
        case 'error-at':
          this.#error(op.line + offset, `${op.head}${op.at + offset}${op.tail}`);
          break;
        case 'from':
          if (!this.#defaults.has(op.from)) {
            this.#error(
              op.line + offset,
              `${op.kind} ${op.name === '' ? '' : `'${op.name}' `}uses unknown defaults section '${op.from}' (it must be declared above)`,
            );
          }
          break;
        case 'proxy':
          this.#registerProxy(op.kind, op.name, op.line + offset);
          break;
        case 'defaults':
          this.#defaults.add(op.name);
          break;
        case 'section':
          this.#registerSection(op.kind, op.name, op.line + offset);
          break;
        case 'bind':
          this.#bind(op.addr, op.section, op.line + offset);
          break;
        case 'path':
          this.#checkPath(op.kind, op.raw, op.line + offset);
          break;
        case 'map-target':
          this.#mapTarget(op.conv, op.keyword, op.proxy, op.line + offset);
          break;
        case 'backend-ref':
          this.#backendRefs.push({ name: op.name, line: op.line + offset, keyword: op.keyword, proxy: op.proxy });
          break;
        case 'section-ref':
          this.#sectionRefs.push({ kind: op.kind, ref: { name: op.name, line: op.line + offset, what: op.what } });
          break;
        case 'crt-base':
          this.#crtBase = op.value;
          break;
        case 'ca-base':
          this.#caBase = op.value;
          break;
        case 'throw':
          replayThrow(op.message);
      }
    }
  }

  /** After the last line: references may point forwards, so they are checked at the end. */
  finish(): void {
    this.#checkBackendReferences();
    this.#checkSectionReferences();
  }

  /**
   * HAProxy's rule: a frontend and a backend may share a name, but no two proxies with a common
   * capability may (so a listen clashes with everything of its name).
   */
  #registerProxy(kind: 'frontend' | 'backend' | 'listen', name: string, lineNo: number): void {
    const entry: ProxyEntry = { kind, name, line: lineNo };
    const asFrontend = kind !== 'backend';
    const asBackend = kind !== 'frontend';
    const clash = (asFrontend ? this.#frontends.get(name) : undefined) ?? (asBackend ? this.#backends.get(name) : undefined);
    if (clash !== undefined) {
      this.#error(lineNo, `${kind} '${name}' has the same name as ${clash.kind} '${name}' declared at line ${clash.line}`);
      return;
    }
    if (asFrontend) this.#frontends.set(name, entry);
    if (asBackend) this.#backends.set(name, entry);
  }

  #registerSection(kind: SectionKind, name: string, lineNo: number): void {
    // userlist duplicates are ignored by HAProxy with a warning; the others are fatal.
    let byName = this.#namedSections.get(kind);
    if (byName === undefined) {
      byName = new Map();
      this.#namedSections.set(kind, byName);
    }
    const previous = byName.get(name);
    if (previous !== undefined) {
      if (kind === 'userlist') {
        this.#sink.warn(`${CONFIG_FILE}:${lineNo}: duplicate userlist '${name}' is ignored (first declared at line ${previous})`);
      } else {
        this.#error(lineNo, `${kind} section '${name}' has the same name as the one declared at line ${previous}`);
      }
    } else {
      byName.set(name, lineNo);
    }
  }

  #bind(addr: string, section: Section, lineNo: number): void {
    const previous = this.#binds.get(addr);
    if (previous !== undefined && previous.proxy !== section.name) {
      this.#sink.warn(
        `${CONFIG_FILE}:${lineNo}: bind address '${addr}' in ${section.kind} '${section.name}' is also bound by '${previous.proxy}' at line ${previous.line}`,
      );
    } else if (previous === undefined) {
      this.#binds.set(addr, { proxy: section.name, line: lineNo });
    }
  }

  /** A map converter in a backend target: the map is checked, and routes to its backends. */
  #mapTarget(conv: MapConverter, keyword: string, proxy: string, lineNo: number): void {
    const verdict = this.#checkPath('map', conv.path, lineNo);
    if (!conv.isWholeExpression) return;
    if (conv.defaultValue !== undefined && conv.defaultValue !== '') {
      this.#backendRefs.push({ name: conv.defaultValue, line: lineNo, keyword: `${keyword} map default`, proxy });
    }
    if (verdict !== null && verdict.where === 'inside' && conv.outputsString && hasAux(this.#aux, verdict.dir, verdict.name)) {
      this.#mapBackendRefs.push({ dir: verdict.dir, mapName: verdict.name, line: lineNo, keyword, proxy });
    }
  }

  /**
   * Checks one referenced path against the rendered directories. Returns where it resolved, or
   * null when the reference cannot be resolved (relative without a base).
   */
  #checkPath(kind: RefKind, raw: string, lineNo: number): Resolved | null {
    if (raw === '' || raw.indexOf('${') >= 0 || raw.indexOf('%[') >= 0) return null;
    const base = kind === 'crt' || kind === 'crt-list' ? this.#crtBase : kind === 'ca-file' || kind === 'crl-file' ? this.#caBase : null;
    const cacheKey = `${kind}\u0000${base ?? ''}\u0000${raw}`;
    let known = this.#pathVerdicts.get(cacheKey);
    if (known === undefined) {
      const resolved = this.#resolver.resolve(raw, base);
      known = { resolved, verdict: this.#pathVerdict(kind, resolved) };
      this.#pathVerdicts.set(cacheKey, known);
      if (resolved.where === 'outside' || resolved.where === 'relative') {
        if (!this.#warnedPaths.has(resolved.path)) {
          this.#warnedPaths.add(resolved.path);
          this.#sink.warn(
            resolved.where === 'outside'
              ? `${CONFIG_FILE}:${lineNo}: ${kind} '${resolved.path}' lies outside the rendered directories and was not checked`
              : `${CONFIG_FILE}:${lineNo}: relative ${kind} path '${resolved.path}' was not checked`,
          );
        }
      }
    }
    if (known.verdict !== null) this.#error(lineNo, known.verdict);
    return known.resolved;
  }

  #pathVerdict(kind: RefKind, resolved: Resolved): string | null {
    if (resolved.where === 'dir') {
      if (kind === 'crt' && resolved.dir === 'certs') {
        return Object.keys(this.#aux.certificates).length > 0
          ? null
          : `crt names the certificates directory '${resolved.path}' but no certificate was rendered`;
      }
      return `${kind} '${resolved.path}' names a directory, not a file`;
    }
    if (resolved.where !== 'inside') return null;
    if (hasAux(this.#aux, resolved.dir, resolved.name)) return null;
    return `${kind} '${resolved.path}' is not produced by the render (no ${resolved.dir}/${resolved.name})`;
  }

  #checkBackendReferences(): void {
    for (const ref of this.#backendRefs) {
      if (!this.#backends.has(ref.name)) {
        const isFrontendOnly = this.#frontends.has(ref.name);
        this.#error(
          ref.line,
          `${ref.keyword} in ${ref.proxy === '' ? 'defaults' : `'${ref.proxy}'`} names ${isFrontendOnly ? 'frontend' : 'unknown backend'} '${ref.name}'`,
        );
      }
    }
    // Each map is read once, however many rules route through it; its entries are reported
    // against the first rule that uses it.
    const checked = new Set<string>();
    for (const ref of this.#mapBackendRefs) {
      const file = `${ref.dir}/${ref.mapName}`;
      if (checked.has(file)) continue;
      checked.add(file);
      const text = auxRecord(this.#aux, ref.dir)[ref.mapName] ?? '';
      const { lines, keys, values, distinctValues } = typeof text === 'string' ? this.#derive.mapEntries(text) : mapEntriesOf(text);
      if (distinctValues !== undefined && this.#allBackends(distinctValues)) continue;
      for (let i = 0; i < values.length; i++) {
        const value = values[i] as string;
        if (this.#backends.has(value)) continue;
        this.#error(
          ref.line,
          `${ref.keyword} routes through ${file}, whose line ${lines[i]} ('${keys[i]}') names unknown backend '${value}'`,
        );
      }
    }
  }

  /** Whether every value names a backend; see MapEntries.distinctValues. */
  #allBackends(values: string[]): boolean {
    for (let i = 0; i < values.length; i++) {
      const backend = this.#backends.get(values[i] as string);
      if (backend === undefined) return false;
      values[i] = backend.name;
    }
    return true;
  }

  #checkSectionReferences(): void {
    for (const { kind, ref } of this.#sectionRefs) {
      if (this.#namedSections.get(kind)?.has(ref.name) !== true) {
        this.#error(ref.line, `${ref.what} names unknown ${kind} section '${ref.name}'`);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Addresses

const SERVER_ADDRESS_PREFIXES = words('ipv4 ipv6 tcp tcp4 tcp6 unix abns sockpair uxst');
const BIND_ADDRESS_PREFIXES = words('ipv4 ipv6 tcp tcp4 tcp6 udp udp4 udp6 quic4 quic6 unix abns fd sockpair uxst uxdg');

/** Returns what is wrong with a server address, or null. */
function serverAddressProblem(addr: string): string | null {
  if (addr.indexOf('${') >= 0) return null;
  let rest = addr;
  const at = addr.indexOf('@');
  if (at >= 0) {
    const prefix = addr.slice(0, at);
    if (prefix === 'fd') return `a file descriptor is not acceptable as server address '${addr}'`;
    if (!SERVER_ADDRESS_PREFIXES.has(prefix)) return `unknown address family '${prefix}@' in '${addr}'`;
    rest = addr.slice(at + 1);
    if (prefix === 'unix' || prefix === 'abns' || prefix === 'sockpair' || prefix === 'uxst') {
      return rest === '' ? `missing socket path in '${addr}'` : null;
    }
  }
  if (rest.startsWith('/')) return null;
  const split = splitHostPort(rest);
  if (typeof split === 'string') return `${split} in '${addr}'`;
  const { host, port } = split;
  if (host === '' || host === '*') return `missing host in server address '${addr}'`;
  const hostProblem = hostProblemOf(host);
  if (hostProblem !== null) return `${hostProblem} in '${addr}'`;
  if (port === null) return null;
  if (port === '') return `missing port after ':' in '${addr}'`;
  const offset = port.startsWith('+') || port.startsWith('-');
  const digits = offset ? port.slice(1) : port;
  if (!isDigits(digits)) {
    return digits.indexOf('-') > 0 && isDigits(digits.replace('-', ''))
      ? `port range not permitted in server address '${addr}'`
      : `invalid port '${port}' in '${addr}'`;
  }
  const n = Number(digits);
  if (!offset && (n < 1 || n > 65535)) return `invalid port '${port}' in '${addr}' (expected 1-65535)`;
  if (offset && n > 65535) return `invalid port offset '${port}' in '${addr}'`;
  return null;
}

/** Returns what is wrong with one bind address (of a comma-separated list), or null. */
function bindAddressProblem(addr: string): string | null {
  if (addr.indexOf('${') >= 0) return null;
  if (addr === '') return `empty address`;
  let rest = addr;
  const at = addr.indexOf('@');
  if (at >= 0) {
    const prefix = addr.slice(0, at);
    if (!BIND_ADDRESS_PREFIXES.has(prefix)) return `unknown address family '${prefix}@' in '${addr}'`;
    rest = addr.slice(at + 1);
    if (prefix === 'unix' || prefix === 'abns' || prefix === 'sockpair' || prefix === 'uxst' || prefix === 'uxdg') {
      return rest === '' ? `missing socket path in '${addr}'` : null;
    }
    if (prefix === 'fd') return isDigits(rest) ? null : `invalid file descriptor in '${addr}'`;
  }
  if (rest.startsWith('/')) return null;
  const split = splitHostPort(rest);
  if (typeof split === 'string') return `${split} in '${addr}'`;
  const { host, port } = split;
  if (host !== '' && host !== '*') {
    const hostProblem = hostProblemOf(host);
    if (hostProblem !== null) return `${hostProblem} in '${addr}'`;
  }
  if (port === null || port === '') return `missing port in '${addr}'`;
  const dash = port.indexOf('-');
  const ports = dash < 0 ? [port] : [port.slice(0, dash), port.slice(dash + 1)];
  for (const p of ports) {
    if (!isDigits(p) || Number(p) < 1 || Number(p) > 65535) return `invalid port '${port}' in '${addr}'`;
  }
  if (ports.length === 2 && Number(ports[0]) > Number(ports[1])) return `invalid port range '${port}' in '${addr}'`;
  return null;
}

/** Splits `host:port`, `[v6]:port`, `v6:port` (last colon) or a bare host (port null). */
function splitHostPort(s: string): { host: string; port: string | null } | string {
  if (s.startsWith('[')) {
    const close = s.indexOf(']');
    if (close < 0) return `unterminated '[' in address`;
    const host = s.slice(1, close);
    if (!isIPv6(host)) return `invalid IPv6 address '${host}'`;
    const after = s.slice(close + 1);
    if (after === '') return { host, port: null };
    if (!after.startsWith(':')) return `unexpected '${after}' after IPv6 address`;
    return { host, port: after.slice(1) };
  }
  const colon = s.lastIndexOf(':');
  if (colon < 0) return { host: s, port: null };
  return { host: s.slice(0, colon), port: s.slice(colon + 1) };
}

function hostProblemOf(host: string): string | null {
  if (host.indexOf(':') >= 0) return isIPv6(host) ? null : `invalid IPv6 address '${host}'`;
  if (looksNumeric(host)) return isIPv4(host) ? null : `invalid IPv4 address '${host}'`;
  return isHostname(host) ? null : `invalid host name '${host}'`;
}

function looksNumeric(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || c === 46)) return false;
  }
  return true;
}

function isIPv4(s: string): boolean {
  let dots = 0;
  let value = 0;
  let digits = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 46) {
      if (digits === 0) return false;
      dots++;
      value = 0;
      digits = 0;
    } else if (c >= 48 && c <= 57) {
      value = value * 10 + (c - 48);
      digits++;
      if (digits > 3 || value > 255) return false;
    } else {
      return false;
    }
  }
  return dots === 3 && digits > 0;
}

function isIPv6(s: string): boolean {
  if (s.length < 2) return false;
  const zone = s.indexOf('%');
  const addr = zone < 0 ? s : s.slice(0, zone);
  const doubleColon = addr.indexOf('::');
  if (doubleColon >= 0 && addr.indexOf('::', doubleColon + 1) >= 0) return false;
  const groups = addr.split(':');
  let count = 0;
  for (let i = 0; i < groups.length; i++) {
    const g = groups[i] as string;
    if (g === '') continue;
    if (i === groups.length - 1 && g.indexOf('.') >= 0) {
      if (!isIPv4(g)) return false;
      count += 2;
      continue;
    }
    if (g.length > 4) return false;
    for (let k = 0; k < g.length; k++) if (!isHex(g.charCodeAt(k))) return false;
    count++;
  }
  return doubleColon >= 0 ? count < 8 : count === 8;
}

function isHostname(s: string): boolean {
  if (s.length === 0 || s.length > 253) return false;
  let labelLength = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 46) {
      if (labelLength === 0) return false;
      labelLength = 0;
      continue;
    }
    const ok = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 45 || c === 95;
    if (!ok) return false;
    labelLength++;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Phase 'auxiliary'
//
// The phase first finds how the configuration uses the rendered files (UsageScanner writes
// UsageOps, UsageState replays them into an AuxiliaryUsage), then checks each file. As in phase
// 'validation', the scan goes line by line and its only state across lines is crt-base /
// ca-base, kept by the replay: the ops of a chunk depend on its text and on the rendered
// directories (which lines the scan looks at, where map paths land), never on other chunks, so
// IncrementalValidator reuses them while the directories stay the same. The issues of a map
// depend on its text and on whether it is used only as a pattern file, the PEM summary of a
// certificate on its text alone: both are cached per text. The rest (private keys, crt-lists)
// depends on the other files and is checked afresh.

/** How the configuration uses each rendered file, found by a light scan of the config text. */
interface AuxiliaryUsage {
  /** Map names only ever referenced as ACL pattern files (`-f`): one column is fine there. */
  readonly patternOnlyMaps: ReadonlySet<string>;
  /** Certificates referenced only as CA or CRL files: no private key required. */
  readonly caOnlyCertificates: ReadonlySet<string>;
  /** Names (in files or certificates) referenced by `crt-list`. */
  readonly crtLists: ReadonlySet<string>;
  /** The certificates directory is loaded as a whole by `crt <dir>`. */
  readonly certsDirLoaded: boolean;
  readonly crtBase: string | null;
}

/** One usage fact of a config line; `crt` and `ca` paths are resolved at replay, against the bases of that point. */
type UsageOp =
  | { readonly u: 'crt-base' | 'ca-base'; readonly value: string | null }
  | { readonly u: 'map'; readonly name: string; readonly how: 'pattern' | 'map' }
  | { readonly u: 'crt' | 'crt-list' | 'ca'; readonly raw: string }
  | { readonly u: 'throw'; readonly message: string };

/**
 * Finds how the config references rendered files without a full parse: only lines naming a
 * rendered directory, `crt*` or `ca-*` are tokenized (relative crt paths carry no directory).
 * The ops depend on the text and on the rendered directories (the needles, map paths).
 */
class UsageScanner {
  readonly #needles: readonly string[];
  readonly #resolver: PathResolver;
  readonly #words: string[] = [];
  readonly #converters: MapConverter[] = [];

  constructor(paths: ValidationPaths, resolver: PathResolver) {
    this.#needles = [paths.mapsDir, paths.filesDir, paths.certsDir, 'crt', 'ca-'].filter((n) => n !== '');
    this.#resolver = resolver;
  }

  scan(text: string): readonly UsageOp[] {
    const ops: UsageOp[] = [];
    try {
      const needles = this.#needles;
      let pos = 0;
      while (pos < text.length) {
        let end = text.indexOf('\n', pos);
        if (end < 0) end = text.length;
        const line = text.slice(pos, end);
        pos = end + 1;
        if (needles.some((n) => line.indexOf(n) >= 0)) this.#line(line, ops);
      }
    } catch (err) {
      ops.push({ u: 'throw', message: describe(err) });
    }
    return ops;
  }

  #line(line: string, ops: UsageOp[]): void {
    const w = this.#words;
    if (tokenizeLine(line, w) !== null || w.length === 0) return;
    if (w[0] === 'crt-base' || w[0] === 'ca-base') {
      ops.push({ u: w[0], value: w[1] === undefined ? null : stripSlash(posix.normalize(w[1])) });
    }
    for (let i = 0; i < w.length; i++) {
      const word = w[i] as string;
      const next = w[i + 1];
      if (word.indexOf(',map') >= 0) {
        findMapConverters(word, this.#converters);
        for (const conv of this.#converters) {
          const r = this.#resolver.resolve(conv.path, null);
          if (r.where === 'inside' && r.dir === 'maps') ops.push({ u: 'map', name: r.name, how: 'map' });
        }
        continue;
      }
      if (next === undefined) continue;
      if (word === '-f') {
        const r = this.#resolver.resolve(next, null);
        if (r.where === 'inside' && r.dir === 'maps') ops.push({ u: 'map', name: r.name, how: 'pattern' });
      } else if (word === 'crt' || word === 'crt-list') {
        ops.push({ u: word, raw: next });
      } else if (word === 'ca-file' || word === 'crl-file' || word === 'ca-verify-file' || word === 'httpclient.ssl.ca-file') {
        ops.push({ u: 'ca', raw: next });
      }
    }
  }
}

/** Replays UsageOps in configuration order. */
class UsageState {
  readonly #resolver: PathResolver;
  readonly #mapRefs = new Map<string, { pattern: boolean; map: boolean }>();
  readonly #certRefs = new Map<string, { ca: boolean; crt: boolean }>();
  readonly #crtLists = new Set<string>();
  #certsDirLoaded = false;
  #crtBase: string | null = null;
  #caBase: string | null = null;

  constructor(resolver: PathResolver) {
    this.#resolver = resolver;
  }

  apply(ops: readonly UsageOp[]): void {
    for (const op of ops) {
      switch (op.u) {
        case 'crt-base':
          this.#crtBase = op.value;
          break;
        case 'ca-base':
          this.#caBase = op.value;
          break;
        case 'map':
          markMap(this.#mapRefs, op.name, op.how);
          break;
        case 'crt':
        case 'crt-list': {
          const r = this.#resolver.resolve(op.raw, this.#crtBase);
          if (r.where === 'dir' && r.dir === 'certs' && op.u === 'crt') this.#certsDirLoaded = true;
          if (r.where === 'inside') {
            if (op.u === 'crt-list') this.#crtLists.add(`${r.dir}/${r.name}`);
            else if (r.dir === 'certs') markCert(this.#certRefs, r.name, 'crt');
          }
          break;
        }
        case 'ca': {
          const r = this.#resolver.resolve(op.raw, this.#caBase);
          if (r.where === 'inside' && r.dir === 'certs') markCert(this.#certRefs, r.name, 'ca');
          break;
        }
        case 'throw':
          replayThrow(op.message);
      }
    }
  }

  usage(): AuxiliaryUsage {
    const patternOnlyMaps = new Set<string>();
    for (const [name, use] of this.#mapRefs) if (use.pattern && !use.map) patternOnlyMaps.add(name);
    const caOnlyCertificates = new Set<string>();
    for (const [name, use] of this.#certRefs) if (use.ca && !use.crt) caOnlyCertificates.add(name);
    return { patternOnlyMaps, caOnlyCertificates, crtLists: this.#crtLists, certsDirLoaded: this.#certsDirLoaded, crtBase: this.#crtBase };
  }
}

const PEM_KEY_LABELS: ReadonlySet<string> = new Set(['PRIVATE KEY', 'RSA PRIVATE KEY', 'EC PRIVATE KEY']);
/** Companion files HAProxy loads next to a certificate; they are not certificates themselves. */
const CERT_COMPANION_SUFFIXES: readonly string[] = ['.key', '.ocsp', '.issuer', '.sctl'];

/** An issue of one auxiliary file, before it is given the file's name. */
interface LineIssue {
  readonly line: number;
  readonly message: string;
}

/** The issues of one map file: they depend on its text and on whether it is used only as a pattern file. */
function mapIssuesOf(text: string, patternOnly: boolean): readonly LineIssue[] {
  return mapIssuesFrom(parseMapText(text), patternOnly);
}

/** Entries without a value, and repeated keys. A pattern file's lines are keys alone: no issues. */
function mapIssuesFrom(parsed: ParsedMap, patternOnly: boolean): readonly LineIssue[] {
  const issues: LineIssue[] = [];
  if (patternOnly) return issues;
  // Only the keys are kept: memory grows with the map, never with the value text.
  const seen = new Map<string, number>();
  for (let i = 0; i < parsed.keys.length; i++) {
    const key = parsed.keys[i] as string;
    const lineNo = parsed.lines[i] as number;
    if (parsed.values[i] === '') {
      issues.push({ line: lineNo, message: `map entry '${key}' has no value (expected '<key> <value>')` });
      continue;
    }
    const first = seen.get(key);
    if (first !== undefined) {
      issues.push({ line: lineNo, message: `duplicate key '${key}' (first defined at line ${first})` });
    } else {
      seen.set(key, lineNo);
    }
  }
  return issues;
}

class AuxiliaryChecker {
  readonly #aux: AuxiliaryFiles;
  readonly #usage: AuxiliaryUsage;
  readonly #sink: IssueSink;
  readonly #resolver: PathResolver;
  readonly #derive: TextDerivations;

  constructor(aux: AuxiliaryFiles, usage: AuxiliaryUsage, resolver: PathResolver, sink: IssueSink, derive: TextDerivations) {
    this.#aux = aux;
    this.#usage = usage;
    this.#sink = sink;
    this.#resolver = resolver;
    this.#derive = derive;
  }

  run(): void {
    const usage = this.#usage;
    for (const [name, text] of Object.entries(this.#aux.maps)) {
      if (typeof text !== 'string') {
        this.#sink.error(`maps/${name}`, undefined, 'map content is not text');
        continue;
      }
      for (const issue of this.#derive.mapIssues(text, usage.patternOnlyMaps.has(name))) {
        this.#sink.error(`maps/${name}`, issue.line, issue.message);
      }
      if (usage.crtLists.has(`maps/${name}`)) this.#checkCrtList(`maps/${name}`, text);
    }
    for (const [name, text] of Object.entries(this.#aux.files)) {
      if (typeof text !== 'string') {
        this.#sink.error(`files/${name}`, undefined, 'file content is not text');
        continue;
      }
      if (usage.crtLists.has(`files/${name}`)) this.#checkCrtList(`files/${name}`, text);
    }
    for (const [name, text] of Object.entries(this.#aux.certificates)) {
      if (typeof text !== 'string') {
        this.#sink.error(`certs/${name}`, undefined, 'certificate content is not text');
        continue;
      }
      if (usage.crtLists.has(`certs/${name}`)) this.#checkCrtList(`certs/${name}`, text);
      else this.#checkCertificate(name, text);
    }
  }

  #checkCertificate(name: string, text: string): void {
    const file = `certs/${name}`;
    if (name.endsWith('.ocsp') || name.endsWith('.sctl')) return;
    const pem = this.#derive.pem(text);
    if (pem.problem !== null) {
      this.#sink.error(file, pem.problemLine, pem.problem);
      return;
    }
    if (name.endsWith('.key')) {
      if (pem.keys === 0) this.#sink.error(file, undefined, 'no private key');
      return;
    }
    const usage = this.#usage;
    const companion = CERT_COMPANION_SUFFIXES.some((s) => name.endsWith(s));
    if (pem.certificates === 0 && !(pem.crls > 0 && usage.caOnlyCertificates.has(name))) {
      this.#sink.error(file, undefined, 'no certificate (expected a -----BEGIN CERTIFICATE----- block)');
      return;
    }
    if (companion) return;
    const caOnly = usage.caOnlyCertificates.has(name) && !usage.certsDirLoaded;
    const hasKeyFile = hasAux(this.#aux, 'certs', `${name}.key`) || hasAux(this.#aux, 'certs', `${stripExtension(name)}.key`);
    if (pem.keys === 0 && !caOnly && !hasKeyFile) {
      this.#sink.error(file, undefined, 'no private key');
    }
  }

  /** crt-lists are short and depend on the rendered certificates: checked afresh every time. */
  #checkCrtList(file: string, text: string): void {
    forEachLine(text, (line, lineNo) => {
      const w: string[] = [];
      const problem = tokenizeLine(line, w);
      if (problem !== null) {
        this.#sink.error(file, lineNo, problem);
        return;
      }
      const path = w[0];
      if (path === undefined) return;
      const open = line.indexOf('[');
      if (open >= 0 && line.indexOf(']', open) < 0) {
        this.#sink.error(file, lineNo, `unterminated '[' in crt-list options`);
      }
      const resolved = this.#resolver.resolve(path, this.#usage.crtBase);
      if (resolved.where === 'inside') {
        if (resolved.dir !== 'certs' || !hasAux(this.#aux, 'certs', resolved.name)) {
          this.#sink.error(file, lineNo, `references certificate '${resolved.path}', which is not produced by the render`);
        }
      } else if (resolved.where === 'dir') {
        this.#sink.error(file, lineNo, `references the directory '${resolved.path}', not a certificate file`);
      } else {
        this.#sink.warn(`${file}:${lineNo}: certificate '${resolved.path}' lies outside the rendered directories and was not checked`);
      }
    });
  }
}

function markMap(refs: Map<string, { pattern: boolean; map: boolean }>, name: string, how: 'pattern' | 'map'): void {
  const use = refs.get(name) ?? { pattern: false, map: false };
  use[how] = true;
  refs.set(name, use);
}

function markCert(refs: Map<string, { ca: boolean; crt: boolean }>, name: string, how: 'ca' | 'crt'): void {
  const use = refs.get(name) ?? { ca: false, crt: false };
  use[how] = true;
  refs.set(name, use);
}

function stripExtension(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(0, dot) : name;
}

interface PemSummary {
  readonly certificates: number;
  readonly keys: number;
  readonly crls: number;
  readonly problem: string | null;
  readonly problemLine: number | undefined;
}

/**
 * Walks the PEM blocks of a file: each BEGIN needs its END with the same label, and the body
 * must be valid base64 (RFC 1421 headers such as Proc-Type are skipped). Text outside blocks is
 * ignored, as OpenSSL does.
 */
function scanPem(text: string): PemSummary {
  let certificates = 0;
  let keys = 0;
  let crls = 0;
  let label: string | null = null;
  let beginLine = 0;
  let body = 0;
  let padding = false;
  let inHeaders = false;
  let pos = 0;
  let lineNo = 0;
  while (pos < text.length) {
    let end = text.indexOf('\n', pos);
    if (end < 0) end = text.length;
    const line = text.slice(pos, end).trim();
    pos = end + 1;
    lineNo++;
    if (label === null) {
      if (line.startsWith('-----BEGIN ') && line.endsWith('-----')) {
        label = line.slice(11, -5);
        beginLine = lineNo;
        body = 0;
        padding = false;
        inHeaders = true;
      }
      continue;
    }
    if (line.startsWith('-----END ')) {
      const endLabel = line.endsWith('-----') ? line.slice(9, -5) : line.slice(9);
      if (endLabel !== label) {
        return pemProblem(`PEM block '${label}' opened at line ${beginLine} ends with '${endLabel}'`, lineNo);
      }
      if (body === 0 || body % 4 !== 0) {
        return pemProblem(`PEM block '${label}' opened at line ${beginLine} has an invalid base64 body`, beginLine);
      }
      if (label === 'CERTIFICATE' || label === 'TRUSTED CERTIFICATE') certificates++;
      else if (PEM_KEY_LABELS.has(label)) keys++;
      else if (label === 'X509 CRL') crls++;
      label = null;
      continue;
    }
    if (line === '') {
      inHeaders = false;
      continue;
    }
    if (inHeaders && body === 0 && line.indexOf(':') > 0) continue;
    inHeaders = false;
    for (let i = 0; i < line.length; i++) {
      const c = line.charCodeAt(i);
      const isB64 = (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 47;
      if (c === 61) padding = true;
      else if (!isB64 || padding) return pemProblem(`PEM block '${label}' has invalid base64 data`, lineNo);
      body++;
    }
  }
  if (label !== null) return pemProblem(`PEM block '${label}' opened at line ${beginLine} has no END line`, beginLine);
  if (certificates + keys + crls === 0 && text.indexOf('-----BEGIN ') < 0) {
    return pemProblem('not PEM data (no -----BEGIN ...----- block)', undefined);
  }
  return { certificates, keys, crls, problem: null, problemLine: undefined };
}

function pemProblem(problem: string, problemLine: number | undefined): PemSummary {
  return { certificates: 0, keys: 0, crls: 0, problem, problemLine };
}

// ---------------------------------------------------------------------------------------------
// Incremental validation
//
// A worker re-validates every render, and between two renders of a large cluster most of the
// configuration is unchanged. IncrementalValidator cuts the configuration into chunks before the
// lines that open a section, keeps the StructureOps and UsageOps of each chunk text, parses only
// the chunk texts it has not seen, then replays all chunks in order with their line offsets.
// Replay is the very code the pure functions run (they replay the whole configuration as a
// single chunk), so the reports are identical: same errors in the same order with the same
// lines, same warnings, same error cap. Why the ops of a chunk do not depend on what precedes it
// is explained at the top of phases 'validation' and 'auxiliary'. Map entries, map issues and PEM
// summaries are cached per file text. Every cache keeps only what the latest call used, so
// memory stays proportional to one configuration and its files.
//
// Finding the chunks must not cost a pass over every line either: at each cut, the chunk that
// followed the same chunk in the latest layout is tried first (one string comparison, and a
// check that a section opens right after it); only text that matches no expected chunk is
// scanned line by line and looked up by content. What remains proportional to the whole
// configuration is that comparison and the replay of each chunk's few ops (a backend chunk
// records one: registering the backend), a few milliseconds for 10,000 backends.

/** What the phases recorded for one chunk text; each part is computed on first use. */
interface ChunkRecord {
  readonly text: string;
  /** The first line of `text`, without its newline: the key of the ChunkIndex. */
  readonly head: string;
  /** Lines in `text`. */
  readonly lines: number;
  structure: readonly StructureOp[] | undefined;
  usage: readonly UsageOp[] | undefined;
  /** The rendered directories `usage` was scanned for (the scan depends on them). */
  usageKey: string | undefined;
  /** Position in the latest layout: the chunk after it is expected next. -1 for a new chunk. */
  slot: number;
  /** The layout generation that last used the chunk. */
  seen: number;
}

interface PlacedChunk {
  readonly record: ChunkRecord;
  /** Lines of the configuration before the chunk. */
  readonly offset: number;
}

/** Section keywords by their first character, for the quick test of opensSection(). */
const SECTION_KINDS_BY_INITIAL: readonly (readonly string[] | undefined)[] = (() => {
  const table: string[][] = [];
  for (const kind of SECTION_KINDS) (table[kind.charCodeAt(0)] ??= []).push(kind);
  return table;
})();

const openerWords: string[] = [];

/**
 * Whether the line config[start, end) certainly opens a section: after optional blanks, a
 * section keyword written plainly and followed by a blank or the end of the line, on a line the
 * tokenizer accepts (a line with an unmatched quote is reported and opens nothing). A line it
 * does not recognise (`"backend" x`, `backend#x`) stays inside the previous chunk, which is still
 * exact: the parser opens sections wherever it meets them, only the cut is lost.
 */
function opensSection(config: string, start: number, end: number): boolean {
  let i = start;
  while (i < end && isBlank(config.charCodeAt(i))) i++;
  const candidates = SECTION_KINDS_BY_INITIAL[config.charCodeAt(i)];
  if (candidates === undefined) return false;
  for (const kind of candidates) {
    const after = i + kind.length;
    if (after > end || !config.startsWith(kind, i)) continue;
    if (after < end && !isBlank(config.charCodeAt(after))) continue;
    // Without a quote or a backslash, the tokenizer accepts any line.
    for (let k = after; k < end; k++) {
      const c = config.charCodeAt(k);
      if (c === CHAR_DQUOTE || c === CHAR_SQUOTE || c === CHAR_BACKSLASH) {
        return tokenizeLine(config.slice(start, end), openerWords) === null;
      }
    }
    return true;
  }
  return false;
}

/** Whether the line starting at `pos` opens a section (the end of the text counts as one). */
function cutsAt(config: string, pos: number): boolean {
  if (pos >= config.length) return true;
  let end = config.indexOf('\n', pos);
  if (end < 0) end = config.length;
  return opensSection(config, pos, end);
}

/**
 * The end of the chunk that starts at `start` (a cut): the start of the next line after it that
 * opens a section, or the end of the text. Every chunk but the last so ends with its newline,
 * and the lines of the chunks are the lines of the configuration.
 */
function chunkEnd(config: string, start: number): number {
  const len = config.length;
  let pos = config.indexOf('\n', start);
  if (pos < 0) return len;
  pos++;
  while (pos < len) {
    let end = config.indexOf('\n', pos);
    if (end < 0) end = len;
    if (opensSection(config, pos, end)) return pos;
    pos = end + 1;
  }
  return len;
}

/**
 * Whether `record` is the chunk at `pos`: the same text there, and a cut right after it (which
 * chunkEnd() would find: the inner lines of a chunk text never open a section).
 */
function chunkAt(config: string, pos: number, record: ChunkRecord | undefined): boolean {
  if (record === undefined) return false;
  const end = pos + record.text.length;
  if (end > config.length || config.slice(pos, end) !== record.text) return false;
  return end === config.length || (record.text.charCodeAt(record.text.length - 1) === 10 && cutsAt(config, end));
}

function newChunk(slice: string): ChunkRecord {
  const text = detachString(slice);
  let lines = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lines++;
  if (text.length > 0 && text.charCodeAt(text.length - 1) !== 10) lines++;
  const newline = text.indexOf('\n');
  const head = newline < 0 ? text : text.slice(0, newline);
  return { text, head, lines, structure: undefined, usage: undefined, usageKey: undefined, slot: -1, seen: 0 };
}

/**
 * The chunks of the latest layout, found by content. Hashing whole chunk texts would cost a pass
 * over the configuration, so they are filed by their first line (a section header: short and
 * nearly always distinctive), then compared whole.
 */
class ChunkIndex {
  readonly #byHead = new Map<string, ChunkRecord[]>();
  #size = 0;

  get size(): number {
    return this.#size;
  }

  find(head: string, text: string): ChunkRecord | undefined {
    const bucket = this.#byHead.get(head);
    if (bucket === undefined) return undefined;
    for (const record of bucket) if (record.text === text) return record;
    return undefined;
  }

  add(record: ChunkRecord): void {
    const bucket = this.#byHead.get(record.head);
    if (bucket === undefined) this.#byHead.set(record.head, [record]);
    else bucket.push(record);
    this.#size++;
  }

  remove(record: ChunkRecord): void {
    const bucket = this.#byHead.get(record.head);
    const at = bucket === undefined ? -1 : bucket.indexOf(record);
    if (bucket === undefined || at < 0) return;
    bucket.splice(at, 1);
    if (bucket.length === 0) this.#byHead.delete(record.head);
    this.#size--;
  }
}

/**
 * A copy of `s` that does not keep alive the string it was sliced from. V8 represents a slice of
 * a long string as a view into it: a cached chunk text (and every name parsed from it) would
 * otherwise pin the whole configuration it was first seen in, for as long as the chunk stays
 * unchanged. Concatenation makes a rope, which slice() first flattens into a string of the
 * chunk's own size.
 */
function detachString(s: string): string {
  return (' ' + s).slice(1);
}

/**
 * A cache by text that keeps only the entries used since the latest begin(): memory follows the
 * latest call, never the history of calls. An entry keeps the key it was made with, so the value
 * (which may hold slices of it) and the key share one string.
 */
class GenerationCache<V> {
  #previous = new Map<string, { readonly key: string; readonly value: V }>();
  #current = new Map<string, { readonly key: string; readonly value: V }>();

  get size(): number {
    return this.#current.size;
  }

  begin(): void {
    this.#previous = this.#current;
    this.#current = new Map();
  }

  /** Drops what the call did not use. */
  end(): void {
    this.#previous = new Map();
  }

  get(key: string, make: (key: string) => V): V {
    let entry = this.#previous.get(key) ?? this.#current.get(key);
    if (entry === undefined) entry = { key, value: make(key) };
    this.#current.set(entry.key, entry);
    return entry.value;
  }
}

/** Map entries with their distinct values, for a quick all-present test. */
function mapEntriesWithValues(parsed: ParsedMap): MapEntries {
  const entries = mapEntriesFrom(parsed);
  return { ...entries, distinctValues: [...new Set(entries.values)] };
}

/**
 * The two phases for a long-lived caller (one per render worker): the same reports as
 * validateStructure() and checkAuxiliaryFiles(), for every input and whatever calls came before,
 * at a cost that follows what changed since the previous call. Never throws.
 */
export class IncrementalValidator {
  readonly #index = new ChunkIndex();
  /** Parses the new chunks (its state is reset for each). */
  readonly #parser = new StructureParser();
  #generation = 0;
  /** The latest configuration and its chunks, reused when the next call passes the same text. */
  #layout: { readonly config: string; readonly chunks: readonly PlacedChunk[] } | null = null;
  #processed = 0;

  /** One parse per map text, shared by the structure phase's and the auxiliary phase's checks. */
  readonly #parsedMaps = new GenerationCache<ParsedMap>();
  readonly #mapEntries = new GenerationCache<MapEntries>();
  readonly #mapIssues = new GenerationCache<readonly LineIssue[]>();
  readonly #patternIssues = new GenerationCache<readonly LineIssue[]>();
  readonly #pems = new GenerationCache<PemSummary>();
  readonly #derive: TextDerivations = {
    mapEntries: (text) => this.#mapEntries.get(text, () => mapEntriesWithValues(this.#parsedMaps.get(text, parseMapText))),
    mapIssues: (text, patternOnly) =>
      patternOnly
        ? this.#patternIssues.get(text, () => mapIssuesFrom(this.#parsedMaps.get(text, parseMapText), true))
        : this.#mapIssues.get(text, () => mapIssuesFrom(this.#parsedMaps.get(text, parseMapText), false)),
    pem: (text) => this.#pems.get(text, scanPem),
  };

  /** Chunk texts held: at most the number of chunks of the latest configuration. */
  get cachedChunks(): number {
    return this.#index.size;
  }

  /** Chunks the latest call had to parse (the others were reused). */
  get processedChunks(): number {
    return this.#processed;
  }

  validateStructure(config: string, aux: AuxiliaryFiles, paths: ValidationPaths): ValidationReport {
    if (typeof config !== 'string') return validateStructure(config, aux, paths);
    this.#processed = 0;
    this.#mapEntries.begin();
    this.#parsedMaps.begin();
    try {
      return structurePhase(aux, paths, this.#derive, (state) => {
        for (const { record, offset } of this.#layoutOf(config)) {
          let ops = record.structure;
          if (ops === undefined) {
            ops = record.structure = this.#parser.parse(record.text);
            this.#processed++;
          }
          state.apply(ops, offset);
        }
      });
    } finally {
      this.#mapEntries.end();
      this.#parsedMaps.end();
    }
  }

  checkAuxiliaryFiles(aux: AuxiliaryFiles, config: string, paths: ValidationPaths): ValidationReport {
    if (typeof config !== 'string') return checkAuxiliaryFiles(aux, config, paths);
    this.#processed = 0;
    // Parsed maps carry over from the structure phase of the same render (begin() keeps them
    // reachable for one more call).
    const caches = [this.#mapIssues, this.#patternIssues, this.#pems, this.#parsedMaps];
    for (const cache of caches) cache.begin();
    try {
      return auxiliaryPhase(aux, paths, this.#derive, (state, scanner) => {
        const key = JSON.stringify([paths.mapsDir, paths.filesDir, paths.certsDir]);
        for (const { record } of this.#layoutOf(config)) {
          let ops = record.usage;
          if (ops === undefined || record.usageKey !== key) {
            ops = record.usage = scanner.scan(record.text);
            record.usageKey = key;
            this.#processed++;
          }
          state.apply(ops);
        }
      });
    } finally {
      for (const cache of caches) cache.end();
    }
  }

  /**
   * The chunks of `config`, the same as cutting before every line opensSection() accepts. At
   * each cut, the chunk expected there (the one after the previous chunk in the latest layout,
   * or the one after that, in case a chunk was replaced or removed) is compared in place;
   * otherwise the chunk is found by scanning its lines and looked up by text, or is new.
   */
  #layoutOf(config: string): readonly PlacedChunk[] {
    const layout = this.#layout;
    if (layout !== null && layout.config === config) return layout.chunks;
    const previous = layout?.chunks ?? [];
    const index = this.#index;
    const generation = ++this.#generation;
    const chunks: PlacedChunk[] = [];
    const len = config.length;
    let pos = 0;
    let offset = 0;
    let expected = 0;
    while (pos < len) {
      let record: ChunkRecord | undefined = previous[expected]?.record;
      if (!chunkAt(config, pos, record)) {
        record = previous[expected + 1]?.record;
        if (!chunkAt(config, pos, record)) record = undefined;
      }
      if (record === undefined) {
        let newline = config.indexOf('\n', pos);
        if (newline < 0) newline = len;
        const slice = config.slice(pos, chunkEnd(config, pos));
        record = index.find(config.slice(pos, newline), slice);
        if (record === undefined) {
          record = newChunk(slice);
          index.add(record);
        }
      }
      if (record.slot >= 0) expected = record.slot + 1;
      record.seen = generation;
      chunks.push({ record, offset });
      offset += record.lines;
      pos += record.text.length;
    }
    for (const { record } of previous) {
      if (record.seen !== generation) index.remove(record);
    }
    for (let i = 0; i < chunks.length; i++) (chunks[i] as PlacedChunk).record.slot = i;
    this.#layout = { config, chunks };
    return chunks;
  }
}
