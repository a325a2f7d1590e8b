// Whether going from one render to the next changes what `haproxy -c` judges. Server slots (an
// address, port, weight or state of a server line the Runtime API can set) and map entries are
// runtime state: the deployer sends them over the admin socket without a reload, and a render
// that differs from a passed one only there passes too. Everything else is structure: any other
// line of the config, a map file added or removed, any other auxiliary file but the runtime ones
// (server-slots.txt), a server's host name. The config is compared only inside the window where it changed, so the cost
// follows the change, not the config. The rules are the config diff's (parseServerLine).
import { parseServerLine } from '../deploy/config-index.js';

/** The config's changed part: the window [start, endBefore) of the previous config became `text`. */
export interface ConfigWindow {
  readonly start: number;
  readonly endBefore: number;
  readonly text: string;
}

/** A file of a render by `<kind>/<name>` (`maps/host.map`, `files/crt-list.txt`). */
export type FileId = string;

export interface RenderChange {
  readonly before: string;
  readonly window: ConfigWindow;
  /** Files whose text changed or that are new (`before` says which of them existed). */
  readonly changedFiles: readonly FileId[];
  readonly removedFiles: readonly FileId[];
  /** Whether the previous render had this file. */
  readonly hadFile: (id: FileId) => boolean;
  /** Auxiliary files that are runtime state wholly. @default ['server-slots.txt'] */
  readonly runtimeFiles?: readonly string[];
}

/** Why the change is structural (the first reason found), or undefined when it is runtime state only. */
export function structuralChange(change: RenderChange): string | undefined {
  const runtimeFiles = change.runtimeFiles ?? ['server-slots.txt'];
  for (const id of change.removedFiles) return `${id} was removed`;
  for (const id of change.changedFiles) {
    const cut = id.indexOf('/');
    const kind = id.slice(0, cut);
    const name = id.slice(cut + 1);
    if (kind === 'files' && runtimeFiles.includes(name)) continue;
    if (kind === 'maps' && change.hadFile(id)) continue;
    return change.hadFile(id) ? `${id} changed` : `${id} is new`;
  }
  const { before, window } = change;
  const old = before.slice(window.start, window.endBefore);
  if (old === window.text) return undefined;
  const a = old.split('\n');
  const b = window.text.split('\n');
  if (a.length !== b.length) return 'the config has lines added or removed';
  for (let i = 0; i < a.length; i++) {
    if (a[i] === b[i]) continue;
    if (structureOfLine(a[i] as string) !== structureOfLine(b[i] as string)) return `a config line changed: ${JSON.stringify((b[i] as string).trim().slice(0, 200))}`;
  }
  return undefined;
}

/** An IPv4 or IPv6 literal: nothing for HAProxy to resolve when it loads the config. */
const IP_LITERAL = /^(?:\d{1,3}(?:\.\d{1,3}){3}|[0-9A-Fa-f]*:[0-9A-Fa-f:.]*)$/;

/**
 * A line without its runtime state: a settable server line with an IP address keeps its name and
 * other parameters (a host name stays: `haproxy -c` resolves it, and may refuse it).
 */
function structureOfLine(line: string): string {
  const server = parseServerLine(line);
  if (server === undefined || !server.addressSettable || !IP_LITERAL.test(server.host)) return line;
  return `server ${server.name} ${server.params}`;
}
