// What an agent changes in a leader's render before its own HAProxy loads it (pure): the leader's
// output paths (maps, files, certs, the admin socket's run directory) become the agent's `--dir`,
// in the config, in files/ (a crt-list names certificates) and in runtime operations naming a map;
// and with `--bind-address` every `bind` address becomes that one, ports kept, so several agents
// on one machine serve the same render side by side. Maps and certificates are never rewritten.
import { join } from 'node:path';
import { prefixRewriter } from '../gate/render-checker.js';
import type { RuntimeOp } from '../deploy/runtime-ops.js';
import type { TextEdit } from '../../worker/protocol.js';
import type { FileKind, LeaderPaths } from './agent-protocol.js';
import { LineDeltas } from './line-deltas.js';

/** A config patch's place in the source and its text. */
export interface ConfigPatchText {
  readonly start: number;
  readonly end: number;
  readonly text: string;
}

/** A rewritten config with where its lines differ in length from the source; `edit`: how it came from the one before. */
export interface RewrittenConfig {
  readonly config: string;
  readonly deltas: LineDeltas;
  readonly edit?: TextEdit;
}

export interface RenderRewrite {
  /** The config as the agent's HAProxy loads it. */
  config(text: string): string;
  /**
   * `config(patched)`, where `patched` is `source` with [start, end) replaced by `text` and
   * `rewritten` is `config(source)`: only the lines the patch touches are rewritten, the others
   * are taken from `rewritten` (an endpoint change costs a few lines, not the whole config).
   */
  configPatched(source: string, rewritten: string, patched: string, patch: ConfigPatchText): string;
  /**
   * `configPatched` for a held config whose LineDeltas are known: costs the lines the patch
   * touches, not the config, and says what changed in the rewritten config (`edit`, for a patched
   * write). Undefined when the lines do not line up (rewrite the whole config instead).
   */
  patchConfig(source: string, held: RewrittenConfig, patched: string, patch: ConfigPatchText): RewrittenConfig | undefined;
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
  const config = (text: string): string => {
    const moved = paths(text);
    return bindAddress === undefined ? moved : rewriteBinds(moved, bindAddress);
  };
  // Every rewrite is line-local and adds or removes no line break, unless a path or the address holds one.
  const lineLocal = ![leader.mapsDir, leader.filesDir, leader.certsDir, leader.runDir, dir, bindAddress ?? ''].some((text) => text.includes('\n'));
  return {
    config,
    configPatched: (source, rewritten, patched, patch) => {
      const deltas = lineLocal ? LineDeltas.between(source, rewritten) : undefined;
      return (deltas === undefined ? undefined : patchLines(source, { config: rewritten, deltas }, patched, patch, config))?.config ?? config(patched);
    },
    patchConfig: (source, held, patched, patch) => (lineLocal ? patchLines(source, held, patched, patch, config) : undefined),
    file: (kind, text) => (kind === 'files' ? paths(text) : text),
    op: (op) => ('file' in op ? { ...op, file: dirs(op.file) } : op),
  };
}

/**
 * `config(patched)` from `held` (`config(source)` and its LineDeltas): the lines of `patched`
 * around the patch, rewritten, between the lines of `held.config` before and after them, found
 * from the deltas (no line break of the whole config is counted). Undefined when `held` does not
 * line up with `source` (then the whole config is rewritten).
 */
function patchLines(source: string, held: RewrittenConfig, patched: string, patch: ConfigPatchText, rewrite: (text: string) => string): RewrittenConfig | undefined {
  // Whole lines: from the start of the line holding `start` to the end of the line holding `end`.
  const from = patch.start === 0 ? 0 : source.lastIndexOf('\n', patch.start - 1) + 1;
  const breakAfter = source.indexOf('\n', patch.end);
  const to = breakAfter < 0 ? source.length : breakAfter;
  const rewritten = held.config;
  const head = held.deltas.rewrittenOffset(from);
  const tail = held.deltas.rewrittenOffset(to);
  if (head > tail || tail > rewritten.length || (head > 0 && rewritten[head - 1] !== '\n') || (tail < rewritten.length && rewritten[tail] !== '\n')) return undefined;
  const lines = patched.slice(from, to + patch.text.length - (patch.end - patch.start));
  const text = rewrite(lines);
  const deltas = held.deltas.replaced(from, to, lines, text);
  if (deltas === undefined) return undefined;
  return { config: rewritten.slice(0, head) + text + rewritten.slice(tail), deltas, edit: { at: head, remove: tail - head, text } };
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
