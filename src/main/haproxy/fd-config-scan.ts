// Reads the lines of a rendered HAProxy config that decide how many file descriptors HAProxy 2.6
// reserves at start: global maxconn / fd-hard-limit / nbthread / stats sockets, listeners, and
// servers with health or agent checks (one socket each, `default-server` inheritance included).
// A line scan, not a parser: the render's validator owns the full grammar.

export interface ConfigFdSettings {
  readonly maxconn: number | undefined;
  readonly fdHardLimit: number | undefined;
  readonly threads: number | undefined;
  /** `bind` lines (one listening socket each). */
  readonly listeners: number;
  /** `stats socket` lines of the global section. */
  readonly statsSockets: number;
  /** Sockets HAProxy reserves for checks: one per checked server, one per agent check, one per `port`/`agent-port` setting. */
  readonly checkSockets: number;
}

const SECTION_KEYWORDS = new Set(['global', 'defaults', 'frontend', 'backend', 'listen', 'peers', 'resolvers', 'userlist', 'program', 'http-errors', 'ring', 'cache', 'mailers']);

interface ServerDefaults {
  readonly check: boolean;
  readonly agent: boolean;
}

export function fdSettingsOfConfig(configText: string): ConfigFdSettings {
  let section = '';
  let maxconn: number | undefined;
  let fdHardLimit: number | undefined;
  let threads: number | undefined;
  let listeners = 0;
  let statsSockets = 0;
  let checkSockets = 0;
  let fromDefaults: ServerDefaults = { check: false, agent: false };
  let inProxy: ServerDefaults = fromDefaults;
  for (const raw of configText.split('\n')) {
    const words = raw.replace(/#.*$/, '').trim().split(/\s+/);
    const keyword = words[0] ?? '';
    if (keyword === '') continue;
    if (SECTION_KEYWORDS.has(keyword)) {
      section = keyword;
      // A proxy starts from the `default-server` of the defaults section before it.
      if (section === 'defaults') fromDefaults = { check: false, agent: false };
      inProxy = fromDefaults;
      continue;
    }
    if (keyword === 'bind') listeners++;
    if (keyword === 'default-server' || keyword === 'server' || keyword === 'server-template') {
      const has = (word: string): boolean => words.includes(word);
      // HAProxy counts a check port when it parses the line, once per line.
      checkSockets += (has('port') ? 1 : 0) + (has('agent-port') ? 1 : 0);
      const check = has('check') || (inProxy.check && !has('no-check'));
      const agent = has('agent-check') || (inProxy.agent && !has('no-agent-check'));
      if (keyword === 'default-server') {
        inProxy = { check, agent };
        if (section === 'defaults') fromDefaults = inProxy;
      } else {
        checkSockets += serverCount(keyword, words) * ((check ? 1 : 0) + (agent ? 1 : 0));
      }
      continue;
    }
    if (section !== 'global') continue;
    const value = Number(words[1]);
    if (keyword === 'maxconn' && Number.isInteger(value)) maxconn = value;
    else if (keyword === 'fd-hard-limit' && Number.isInteger(value)) fdHardLimit = value;
    else if (keyword === 'nbthread' && Number.isInteger(value)) threads = value;
    else if (keyword === 'stats' && words[1] === 'socket') statsSockets++;
  }
  return { maxconn, fdHardLimit, threads, listeners, statsSockets, checkSockets };
}

/** 1 for `server`; for `server-template <prefix> <num | from-to> ...`, the number of servers it makes. */
function serverCount(keyword: string, words: readonly string[]): number {
  if (keyword === 'server') return 1;
  const range = /^(\d+)(?:-(\d+))?$/.exec(words[2] ?? '');
  if (range === null) return 1;
  const from = Number(range[1]);
  return range[2] === undefined ? from : Math.max(0, Number(range[2]) - from + 1);
}
