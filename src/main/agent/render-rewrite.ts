// What an agent changes in a leader's render before its own HAProxy loads it (pure): the leader's
// output paths (maps, files, certs, the admin socket's run directory) become the agent's `--dir`,
// in the config, in files/ (a crt-list names certificates) and in runtime operations naming a map;
// and with `--bind-address` every `bind` address becomes that one, ports kept, so several agents
// on one machine serve the same render side by side. Maps and certificates are never rewritten.
import { join } from 'node:path';
import { prefixRewriter } from '../gate/render-checker.js';
import type { RuntimeOp } from '../deploy/runtime-ops.js';
import type { FileKind, LeaderPaths } from './agent-protocol.js';

export interface RenderRewrite {
  /** The config as the agent's HAProxy loads it. */
  config(text: string): string;
  /** An auxiliary file as written under the agent's `--dir`. */
  file(kind: FileKind, text: string): string;
  /** A runtime operation with the agent's map paths. */
  op(op: RuntimeOp): RuntimeOp;
}

/** The agent's own paths under `dir` (the layout of `outputPathsIn` and HaproxyProcess). */
export function agentPaths(dir: string): LeaderPaths {
  return { mapsDir: join(dir, 'maps'), filesDir: join(dir, 'files'), certsDir: join(dir, 'certs'), runDir: join(dir, 'run') };
}

export function renderRewrite(leader: LeaderPaths, dir: string, bindAddress?: string): RenderRewrite {
  const own = agentPaths(dir);
  const dirs = prefixRewriter(leader, own);
  const run = prefixRewriter({ mapsDir: leader.runDir, filesDir: '', certsDir: '' }, { mapsDir: own.runDir, filesDir: '', certsDir: '' });
  const paths = (text: string): string => run(dirs(text));
  return {
    config: (text) => {
      const moved = paths(text);
      return bindAddress === undefined ? moved : rewriteBinds(moved, bindAddress);
    },
    file: (kind, text) => (kind === 'files' ? paths(text) : text),
    op: (op) => ('file' in op ? { ...op, file: dirs(op.file) } : op),
  };
}

/**
 * Every `bind` line's addresses (`*:80`, `:80`, `1.2.3.4:80`, `[::]:443`, `ipv4@…`, lists joined
 * by `,`) take `address`, keeping the port; UNIX sockets and `fd@` binds are left alone.
 */
export function rewriteBinds(config: string, address: string): string {
  const host = address.includes(':') ? `[${address}]` : address;
  return config.replace(/^([ \t]*bind[ \t]+)(\S+)/gm, (_line, head: string, addresses: string) => {
    const rewritten = addresses
      .split(',')
      .map((one) => {
        const match = /^((?:ipv4@|ipv6@|tcp@|tcp4@|tcp6@)?)(\[[^\]]*\]|[^:[\]]*):(\d+(?:-\d+)?)$/.exec(one);
        if (match === null) return one;
        const family = address.includes(':') ? (match[1] === 'ipv4@' ? '' : match[1]) : match[1] === 'ipv6@' ? '' : match[1];
        return `${family ?? ''}${host}:${match[3] as string}`;
      })
      .join(',');
    return `${head}${rewritten}`;
  });
}
