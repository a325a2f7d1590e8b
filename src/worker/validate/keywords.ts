// The HAProxy keyword tables the structural check reads: sections, global and proxy keywords
// (the proxy keyword matrix), rule actions, server and bind keywords with their arity, and
// address families. HAProxy 2.6 configuration manual and `haproxy -dKcfg`, generous towards
// keywords of later versions and optional build features. Data only: what to do with a keyword
// lives with the code that checks its line.

export type SectionKind =
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

export const SECTION_KINDS: ReadonlySet<string> = new Set<SectionKind>([
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
export const NAMED_SECTIONS: ReadonlySet<string> = new Set([
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

export const GLOBAL_KEYWORDS = words(`
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
export const GLOBAL_PREFIXES: readonly string[] = ['tune.', 'ssl-', 'httpclient.', 'profiling.', '51degrees-', 'deviceatlas-', 'wurfl-'];

export const REMOVED_GLOBAL_KEYWORDS: ReadonlyMap<string, string> = new Map([
  ['nbproc', "'nbproc' is not supported any more since HAProxy 2.5"],
  ['debug', "'debug' is not supported any more, use the '-d' command line option"],
]);

/** Capabilities of a proxy keyword: the sections it may appear in. */
export const CAP_D = 1;
export const CAP_F = 2;
export const CAP_L = 4;
export const CAP_B = 8;
/** In a defaults section only when the section is named. */
export const CAP_NAMED_DEFAULTS = 16;
/** An option accepting the `no` prefix. */
export const CAP_NEGATABLE = 32;

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
export const PROXY_FAMILIES: ReadonlySet<string> = new Set([
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

export const PROXY_KEYWORDS: ReadonlyMap<string, number> = parseMatrix(PROXY_KEYWORD_MATRIX);

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

export const REMOVED_PROXY_KEYWORDS: ReadonlyMap<string, string> = new Map([
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

export const HTTP_REQUEST_ACTIONS = words(`
  add-header allow auth cache-use capture del-header deny disable-l7-retry early-hint normalize-uri
  ot-group redirect reject replace-header replace-path replace-pathq replace-uri replace-value return
  send-spoe-group set-dst set-dst-port set-header set-log-level set-mark set-method
  set-nice set-path set-pathq set-priority-class set-priority-offset set-query set-src set-src-port
  set-timeout set-tos set-uri silent-drop strict-mode tarpit track-sc0 track-sc1 track-sc2 use-service
  wait-for-body wait-for-handshake
`);
export const HTTP_RESPONSE_ACTIONS = words(`
  add-header allow cache-store capture del-header deny ot-group redirect replace-header replace-value
  return send-spoe-group set-header set-log-level set-mark set-nice set-status set-tos
  silent-drop strict-mode track-sc0 track-sc1 track-sc2 wait-for-body
`);
export const HTTP_AFTER_RESPONSE_ACTIONS = words(`
  add-header allow capture del-header replace-header replace-value set-header set-status strict-mode
`);
export const TCP_CONNECTION_ACTIONS = words(`
  accept reject capture expect-proxy expect-netscaler-cip track-sc0 track-sc1 track-sc2 set-dst
  set-dst-port set-mark set-src set-src-port set-tos silent-drop
`);
export const TCP_SESSION_ACTIONS = words(`
  accept reject track-sc0 track-sc1 track-sc2 set-dst set-dst-port set-mark set-src set-src-port set-tos
  silent-drop
`);
export const TCP_CONTENT_ACTIONS = words(`
  accept reject capture track-sc0 track-sc1 track-sc2 ot-group send-spoe-group set-dst
  set-dst-port set-log-level set-mark set-nice set-priority-class set-priority-offset set-src set-src-port
  set-tos silent-drop switch-mode use-service
`);
export const TCP_RESPONSE_ACTIONS = words(`
  accept reject close ot-group send-spoe-group set-log-level set-mark set-nice set-tos
  silent-drop
`);
/** Actions taking a parenthesised argument: `set-var(txn.x)`, `sc-inc-gpc0(1)`, `set-map(file)`. */
export const PARAMETERISED_ACTIONS: readonly string[] = [
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
export const CONDITION_KEYWORDS = words(`
  redirect use-server force-persist ignore-persist block
`);
export const CONDITION_FAMILY_KEYWORDS = words('monitor-fail stick-match stick-on stick-store-request stick-store-response stats-http-request');

export const BALANCE_ALGORITHMS = words('roundrobin static-rr leastconn first source uri url_param hdr random rdp-cookie hash');
export const PROXY_MODES = words('http tcp');
export const ERRORFILE_CODES = words('200 400 401 403 404 405 407 408 410 413 425 429 500 501 502 503 504');

/** Argument counts of `server` / `default-server` keywords. */
export const ARG_NONE = 0;
const ARG_ONE = 1;
export const ARG_INT = 2;
export const ARG_TIME = 3;
export const ARG_PORT = 4;

export const SERVER_KEYWORDS: ReadonlyMap<string, number> = new Map([
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
export const BIND_KEYWORDS: ReadonlyMap<string, number> = new Map([
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

export const OTHER_SECTION_KEYWORDS: ReadonlyMap<string, ReadonlySet<string>> = new Map([
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
export const PREDEFINED_ACLS = words(`
  FALSE HTTP HTTP_1.0 HTTP_1.1 HTTP_2.0 HTTP_3.0 HTTP_CONTENT HTTP_URL_ABS HTTP_URL_SLASH HTTP_URL_STAR
  LOCALHOST METH_CONNECT METH_DELETE METH_GET METH_HEAD METH_OPTIONS METH_POST METH_PUT METH_TRACE
  RDP_COOKIE REQ_CONTENT TRUE WAIT_END
`);

export const CONDITIONAL_DIRECTIVES = words('.if .elif .else .endif .diag .notice .warning .alert');

/** Map converter match kinds and output types: map, map_beg, map_str_int, ... */
export const MAP_MATCH_KINDS = words('str beg sub dir dom end reg regm int ip len');
export const MAP_OUTPUT_TYPES = words('str int ip');

/** Address families (`<family>@<address>`) of server and bind lines. */
export const SERVER_ADDRESS_PREFIXES = words('ipv4 ipv6 tcp tcp4 tcp6 unix abns sockpair uxst');
export const BIND_ADDRESS_PREFIXES = words('ipv4 ipv6 tcp tcp4 tcp6 udp udp4 udp6 quic4 quic6 unix abns fd sockpair uxst uxdg');
