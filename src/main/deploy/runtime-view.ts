// Runtime view (pure): what HAProxy runs after the runtime part of a change was applied but not
// (yet) its reload: the running config's structure, with the new render's server lines and map
// contents wherever an operation touched them. The Deployer diffs the next render against this
// view, so a render that arrives before the reload (or reverts the change) gets operations
// relative to what HAProxy really has: `add map` never duplicates an entry, and a slot that the
// runtime changed and the next render puts back is put back.
import { createHash } from 'node:crypto';
import { posix } from 'node:path';
import { indexConfig, replaceServerLines, serverLinesOf } from './config-index.js';
import { DEFAULT_RUNTIME_FILES, diffRenders, type DiffOptions } from './config-diff.js';
import type { DeployableRender } from './deploy-target.js';
import type { RuntimeOp } from './runtime-ops.js';

/** How the checksum of a runtime view starts: never a render's. */
export const VIEW_PREFIX = 'view:';

export interface RuntimeViewOptions {
  /** @default '/etc/haproxy/maps' */
  readonly mapsDir?: string;
  /** @default ['server-slots.txt'] */
  readonly runtimeFiles?: readonly string[];
}

/**
 * `running` with the effect of `ops` (computed by `diffRenders(running, next)`). Its checksum
 * names the composition (`view:` and a digest of both checksums), so it is never taken for a render's.
 */
export function applyRuntimeView(running: DeployableRender, next: DeployableRender, ops: readonly RuntimeOp[], options: RuntimeViewOptions = {}): DeployableRender {
  const touchedServers = new Map<string, Set<string>>();
  const touchedMaps = new Set<string>();
  for (const op of ops) {
    if (op.type === 'server-addr' || op.type === 'server-state' || op.type === 'server-weight') {
      let servers = touchedServers.get(op.backend);
      if (servers === undefined) touchedServers.set(op.backend, (servers = new Set()));
      servers.add(op.server);
    } else {
      touchedMaps.add(op.file);
    }
  }
  let haproxyConfig = running.haproxyConfig;
  if (touchedServers.size > 0) {
    const proxies = new Set(touchedServers.keys());
    const nextLines = serverLinesOf(indexConfig(next.haproxyConfig), proxies);
    const replacements = new Map<string, Map<string, string>>();
    for (const [proxy, servers] of touchedServers) {
      const lines = new Map<string, string>();
      for (const server of servers) {
        const line = nextLines.get(proxy)?.get(server);
        if (line !== undefined) lines.set(server, line);
      }
      replacements.set(proxy, lines);
    }
    haproxyConfig = replaceServerLines(indexConfig(running.haproxyConfig), replacements);
  }
  const mapsDir = options.mapsDir ?? '/etc/haproxy/maps';
  const maps: Record<string, string> = { ...running.auxiliaryFiles.maps };
  for (const [name, text] of Object.entries(next.auxiliaryFiles.maps)) if (touchedMaps.has(posix.join(mapsDir, name))) maps[name] = text;
  const files: Record<string, string> = { ...running.auxiliaryFiles.files };
  for (const name of options.runtimeFiles ?? DEFAULT_RUNTIME_FILES) {
    const text = next.auxiliaryFiles.files[name];
    if (text !== undefined) files[name] = text;
  }
  return {
    renderId: next.renderId,
    checksum: `${VIEW_PREFIX}${createHash('sha256').update(`${running.checksum}+${next.checksum}`).digest('hex')}`,
    haproxyConfig,
    auxiliaryFiles: { maps, files, certificates: running.auxiliaryFiles.certificates },
  };
}

/**
 * `base` (a config the gate passed) with the server slots of `newer` wherever both have them: the
 * same structure, so the same verdict, and endpoints as new as `newer`'s. Maps stay `base`'s.
 */
export function withServerSlotsOf(base: DeployableRender, newer: DeployableRender, options: DiffOptions = {}): DeployableRender {
  const ops = diffRenders(base, newer, options).runtimeOps.filter((op) => op.type === 'server-addr' || op.type === 'server-state' || op.type === 'server-weight');
  return ops.length === 0 ? base : applyRuntimeView(base, newer, ops, options);
}
