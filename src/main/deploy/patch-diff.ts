// The config diff of a render given as edits of the deployed one (RenderPatch, the endpoint
// lane's): the same classification as diffRenders, computed on the edited sections and files
// alone, so a change of one backend in a 5 MiB config costs what that backend costs. Config edits
// cover whole sections, so the edited sections of both renders, in order, are configs of their
// own; auxiliary files named by the patch are compared whole, the others are the same text. A
// patch without config edits (files edited alone) is diffed against the whole, unchanged config.
// A map edited in a few lines is diffed by those lines (config-diff.ts diffMapEdits).
import type { AuxiliaryFiles, RenderPatch, TextEdit } from '../../worker/protocol.js';
import { removedText } from '../core/patch-text.js';
import { diffRenders, type ConfigDiff, type DiffInput, type DiffOptions } from './config-diff.js';
import type { DeployableRender } from './deploy-target.js';
import type { RuntimeOp } from './runtime-ops.js';
import { applyRuntimeView, VIEW_PREFIX } from './runtime-view.js';

export type { ConfigDiff, DiffOptions } from './config-diff.js';

const KINDS = ['maps', 'files', 'certificates'] as const;

/** The diff from what runs to `next`: by the patch's edits when `next` is a patch of exactly that render (not of a runtime view on it). */
export function diffDeployed(live: DeployableRender, next: DeployableRender, options: DiffOptions = {}): ConfigDiff {
  const patch = next.patch;
  if (patch !== undefined && patch.from === live.renderId && !live.checksum.startsWith(VIEW_PREFIX)) return diffPatch(live, next, patch, options);
  return diffRenders(live, next, options);
}

/** The diff from `deployed` to `next`, where `next` is `deployed` with `patch` (patch.from is deployed's renderId). */
export function diffPatch(deployed: DiffInput, next: DiffInput, patch: RenderPatch, options: DiffOptions = {}): ConfigDiff {
  const edits = patch.edits['config'] ?? [];
  // Without config edits the config is the same text (the same string, as the pool restores it):
  // it is passed whole, since how the files changed depends on how the config uses them.
  let before = edits.length === 0 ? deployed.haproxyConfig : '';
  let after = edits.length === 0 ? next.haproxyConfig : '';
  edits.forEach((edit, i) => {
    before += removedText(patch, 'config', i, edit, deployed.haproxyConfig);
    after += edit.text;
  });
  const oldFiles: Record<(typeof KINDS)[number], Record<string, string>> = { maps: {}, files: {}, certificates: {} };
  const newFiles: Record<(typeof KINDS)[number], Record<string, string>> = { maps: {}, files: {}, certificates: {} };
  const mapEdits: Record<string, readonly TextEdit[]> = {};
  for (const id of Object.keys(patch.edits)) {
    if (id === 'config') continue;
    const cut = id.indexOf('/');
    const kind = KINDS.find((k) => k === id.slice(0, cut));
    const name = id.slice(cut + 1);
    if (kind === undefined) continue;
    const a = deployed.auxiliaryFiles[kind][name];
    const b = next.auxiliaryFiles[kind][name];
    if (a !== undefined) oldFiles[kind][name] = a;
    if (b !== undefined) newFiles[kind][name] = b;
    if (kind === 'maps') mapEdits[name] = patch.edits[id] ?? [];
  }
  // A map's edits are diffed as its changed lines where that tells as much as the whole map.
  // How each map is looked up is read from the whole new config, not from its edited sections.
  return diffRenders({ haproxyConfig: before, auxiliaryFiles: oldFiles as AuxiliaryFiles }, { haproxyConfig: after, auxiliaryFiles: newFiles as AuxiliaryFiles }, options, { mapEdits, config: next.haproxyConfig });
}

/** Diffs and runtime views computed once for several instances (SharedDiffs). */
export interface DiffShare {
  /** `diffDeployed(deployed, next)`. */
  of(deployed: DeployableRender, next: DeployableRender): ConfigDiff;
  /** `applyRuntimeView(running, next, ops)`, for `ops` of `of(running, next)`. */
  viewOf(running: DeployableRender, next: DeployableRender, ops: readonly RuntimeOp[]): DeployableRender;
}

/** `diffDeployed` that keeps the last pair's answer, keyed by the two checksums; `share` computes the others. */
export class LastDiff {
  readonly #options: DiffOptions;
  readonly #share: DiffShare | undefined;
  #last: { readonly from: string; readonly to: string; readonly diff: ConfigDiff } | undefined;

  constructor(options: DiffOptions = {}, share?: DiffShare) {
    this.#options = options;
    this.#share = share;
  }

  of(deployed: DeployableRender, next: DeployableRender): ConfigDiff {
    const last = this.#last;
    if (last?.from === deployed.checksum && last.to === next.checksum) return last.diff;
    const diff = this.#share?.of(deployed, next) ?? diffDeployed(deployed, next, this.#options);
    this.#last = { from: deployed.checksum, to: next.checksum, diff };
    return diff;
  }

  /** What HAProxy runs once `ops` (of this pair's diff) are applied to `running` (see runtime-view.ts). */
  view(running: DeployableRender, next: DeployableRender, ops: readonly RuntimeOp[]): DeployableRender {
    return this.#share?.viewOf(running, next, ops) ?? applyRuntimeView(running, next, ops, this.#options);
  }
}
