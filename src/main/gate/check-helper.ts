// CheckHelper: the render gate's `haproxy -c`, run by a small long-lived helper process
// (check-helper-process.ts, forked on the first check and again after it exits). The controller's
// big process never forks HAProxy itself, and for each render it sends only what changed since
// the render it sent before: the config's changed window (found by native comparisons of large
// slices, changedWindow, or, when the render patches the render sent before, its edits as windows) and
// the changed part of each changed file (textWindow). The helper writes the private copy, runs the check
// when the structure changed, and answers. While no check is pending the helper does not keep
// the controller's event loop alive. Checks are background work (a runtime change never waits
// for a verdict), so an endpoint change's runtime operations go first twice over: a render is
// handed to the helper a turn of the event loop after `check` (the Deployer's sends of the same
// render are out by then), and the helper runs below the controller's CPU priority (`niceness`),
// behind whatever shares its CPUs (the controller, an agent, an HAProxy).
import { fork, type ChildProcess } from 'node:child_process';
import { getPriority, setPriority } from 'node:os';
import { changedWindow } from '../deploy/config-index.js';
import { textWindow } from './text-window.js';
import type { AuxiliaryFiles, RenderPatch, TextEdit } from '../../worker/protocol.js';
import type { CheckReply, CheckRequest } from './check-helper-protocol.js';
import type { ConfigWindow } from './structure-change.js';
import type { HaproxyRenderCheckerOptions, HaproxyVerdict, RenderChecker } from './render-checker.js';

export interface CheckHelperOptions extends Pick<HaproxyRenderCheckerOptions, 'directories' | 'binary'> {
  /** Auxiliary files that are runtime state wholly. @default ['server-slots.txt'] */
  readonly runtimeFiles?: readonly string[];
  /** How far below the controller's own CPU priority the helper (and its `haproxy -c`) runs. @default HELPER_NICENESS */
  readonly niceness?: number;
}

/** The helper's niceness above the controller's (0 to 19): a check waits while the controller or its neighbours need the CPU. */
export const HELPER_NICENESS = 10;

export interface CheckHelperStats {
  readonly checks: number;
  /** Checks answered without running `haproxy -c`: only runtime state changed. */
  readonly skipped: number;
  /** Helper processes started. */
  readonly started: number;
}

interface Pending {
  readonly resolve: (verdict: HaproxyVerdict) => void;
  readonly reject: (error: Error) => void;
}

const KINDS = ['maps', 'files', 'certificates'] as const;

/** What the helper is sent of a render; with `patch`, a render that patches the one sent before costs only its edits. */
interface HelperRender {
  readonly renderId?: string;
  readonly haproxyConfig: string;
  readonly auxiliaryFiles: AuxiliaryFiles;
  readonly patch?: RenderPatch;
}

export class CheckHelper {
  readonly #options: CheckHelperOptions;
  #child: ChildProcess | undefined;
  readonly #pending = new Map<number, Pending>();
  /** What the helper holds: the last render sent to it. */
  #sent: { readonly renderId: string | undefined; readonly config: string; readonly files: ReadonlyMap<string, string> } | undefined;
  #nextId = 1;
  #checks = 0;
  #skipped = 0;
  #started = 0;
  /** Counts `close()` calls: a check called before one fails instead of starting a new helper. */
  #closes = 0;

  constructor(options: CheckHelperOptions) {
    const niceness = options.niceness;
    if (niceness !== undefined && (!Number.isInteger(niceness) || niceness < 0 || niceness > 19)) {
      throw new TypeError(`niceness must be an integer from 0 to 19, got ${String(niceness)}`);
    }
    this.#options = options;
  }

  get stats(): CheckHelperStats {
    return { checks: this.#checks, skipped: this.#skipped, started: this.#started };
  }

  /** The helper process's id while one runs (diagnostics, tests). */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** A RenderChecker backed by this helper. */
  get checker(): RenderChecker {
    return (render, signal) => this.check(render, signal);
  }

  /** Stops the helper; pending checks fail. A later check starts a new one. */
  close(): void {
    this.#closes++;
    this.#child?.kill();
    this.#fail(new Error('the check helper was closed'));
  }

  /**
   * Checks `render`. It is handed to the helper in a later turn of the event loop (setImmediate):
   * the gate hears of a render before the Deployer does, and building the request and sending it
   * (0.3 to 1 ms of the main thread at 10,000 Ingresses) would otherwise go in front of the
   * render's runtime changes, and wake the helper before the HAProxy instances. Renders keep
   * their order (immediates run first in, first out).
   */
  check(render: HelperRender, signal: AbortSignal): Promise<HaproxyVerdict> {
    signal.throwIfAborted();
    const closes = this.#closes;
    return new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      // Closed meanwhile: it fails like the checks pending at the close (a later check starts a new helper).
      if (this.#closes !== closes) throw new Error('the check helper was closed');
      return this.#check(render, signal);
    });
  }

  #check(render: HelperRender, signal: AbortSignal): Promise<HaproxyVerdict> {
    signal.throwIfAborted();
    const child = this.#child ?? this.#spawn();
    const id = this.#nextId++;
    const request = this.#request(id, render);
    return new Promise<HaproxyVerdict>((resolve, reject) => {
      const onAbort = (): void => {
        if (!this.#pending.delete(id)) return;
        this.#idle();
        if (child.connected) child.send({ type: 'abort', id });
        reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#pending.set(id, {
        resolve: (verdict) => {
          signal.removeEventListener('abort', onAbort);
          resolve(verdict);
        },
        reject: (error) => {
          signal.removeEventListener('abort', onAbort);
          reject(error);
        },
      });
      child.ref();
      (child.channel as { ref?: () => void } | undefined)?.ref?.();
      child.send(request, (error) => {
        if (error !== null) this.#fail(new Error(`could not reach the check helper: ${error.message}`));
      });
      this.#checks++;
    });
  }

  #request(id: number, render: HelperRender): CheckRequest {
    const sent = this.#sent;
    // A patch of the render sent before: only the files it names can differ, and its config edits are the window.
    const patch = sent !== undefined && render.patch !== undefined && render.patch.from === sent.renderId ? render.patch : undefined;
    const files: Record<string, CheckRequest['files'][string]> = {};
    const now = new Map<string, string>(patch === undefined ? [] : (sent as NonNullable<typeof sent>).files);
    const compare = (id: string, text: string | undefined, edits?: readonly TextEdit[]): void => {
      if (text === undefined) return void now.delete(id);
      now.set(id, text);
      const before = sent?.files.get(id);
      if (before !== undefined && edits !== undefined) {
        // Patched: the edits say what changed, without reading (and flattening) the new text.
        if (edits.length > 0) files[id] = { windows: windowsOfEdits(edits) };
      } else if (before === text) {
        return;
      } else if (before === undefined) {
        files[id] = { full: text };
      } else {
        const window = textWindow(before, text);
        files[id] = { window: { start: window.start, endBefore: window.endA, text: text.slice(window.start, window.endB) } };
      }
    };
    if (patch === undefined) {
      for (const kind of KINDS) for (const [name, text] of Object.entries(render.auxiliaryFiles[kind])) compare(`${kind}/${name}`, text);
    } else {
      for (const id of Object.keys(patch.edits)) {
        const cut = id.indexOf('/');
        const kind = KINDS.find((k) => k === id.slice(0, cut));
        if (kind !== undefined) compare(id, render.auxiliaryFiles[kind][id.slice(cut + 1)], patch.edits[id]);
      }
    }
    const removed = sent === undefined ? [] : [...sent.files.keys()].filter((id) => !now.has(id));
    const config = render.haproxyConfig;
    let change: CheckRequest['config'];
    if (sent === undefined) {
      change = { full: config };
    } else if (patch !== undefined) {
      change = { windows: windowsOfEdits(patch.edits['config'] ?? []) };
    } else {
      const window = changedWindow(sent.config, config);
      change = { window: { start: window.start, endBefore: window.endA, text: config.slice(window.start, window.endB) } };
    }
    this.#sent = { renderId: render.renderId, config, files: now };
    return {
      type: 'check',
      id,
      config: change,
      files,
      removed,
      directories: this.#options.directories,
      ...(this.#options.binary === undefined ? {} : { binary: this.#options.binary }),
      ...(this.#options.runtimeFiles === undefined ? {} : { runtimeFiles: this.#options.runtimeFiles }),
    };
  }

  #spawn(): ChildProcess {
    const fromSource = import.meta.url.endsWith('.ts');
    const script = new URL(`./check-helper-process.${fromSource ? 'ts' : 'js'}`, import.meta.url);
    const child = fork(script, [], {
      execArgv: fromSource ? ['--import', 'tsx'] : [],
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    this.#lowerPriority(child);
    this.#started++;
    this.#child = child;
    this.#sent = undefined;
    child.on('message', (reply: CheckReply) => {
      const pending = this.#pending.get(reply.id);
      if (pending === undefined) return;
      this.#pending.delete(reply.id);
      if (reply.skipped) this.#skipped++;
      this.#idle();
      pending.resolve(reply.verdict);
    });
    child.on('error', (error) => {
      if (this.#child === child) this.#fail(new Error(`the check helper failed: ${error.message}`));
    });
    child.on('exit', (code, signal) => {
      if (this.#child === child) this.#fail(new Error(`the check helper exited (${signal ?? `code ${String(code)}`})`));
    });
    this.#idle();
    return child;
  }

  /** Best effort: where priorities cannot be changed, the helper runs at the controller's. */
  #lowerPriority(child: ChildProcess): void {
    if (child.pid === undefined) return;
    try {
      setPriority(child.pid, Math.min(19, getPriority() + (this.#options.niceness ?? HELPER_NICENESS)));
    } catch {
      // Not permitted, or the child is already gone (its exit is reported on its own).
    }
  }

  /** Pending checks fail with `error`; the helper's state is forgotten (a new one gets everything). */
  #fail(error: Error): void {
    this.#child = undefined;
    this.#sent = undefined;
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const p of pending) p.reject(error);
  }

  /** With nothing pending, the helper does not hold the event loop open. */
  #idle(): void {
    if (this.#pending.size > 0) return;
    const child = this.#child;
    if (child === undefined) return;
    child.unref();
    (child.channel as { unref?: () => void } | undefined)?.unref?.();
  }
}

/**
 * The edits as windows of the text before them, in order: nothing of that text or of the new one
 * is read (a patch's new text is often edits joined onto the old one, and two far-apart edits of a
 * chained patch would otherwise make one window of everything between them).
 */
function windowsOfEdits(edits: readonly TextEdit[]): ConfigWindow[] {
  return [...edits].sort((a, b) => a.at - b.at).map((edit) => ({ start: edit.at, endBefore: edit.at + edit.remove, text: edit.text }));
}
