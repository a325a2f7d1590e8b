// Piscina worker entry. At load it opens a comlink control channel and announces it to the main
// thread on the parent port (piscina re-emits it as the pool's 'message' event, tagged with this
// thread's ID). Over that channel the main thread ships template sets and store deltas; the
// default export renders a task against the replica at the version the task names.
// The pool runs with `atomics: 'disabled'`, so this thread's event loop keeps turning between
// tasks and control messages are answered while the worker is idle.
import { join } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';
import { MessageChannel, parentPort, threadId } from 'node:worker_threads';
import { pino } from 'pino';
import { exposeOn } from './channel/comlink-node.js';
import { originChanges } from './render/origin-changes.js';
import { changedLinesOf, renderAndValidate, viewsOf } from './render/renderer.js';
import type { TextView } from './templates/text-rope.js';
import { statusPatch } from './render/status-patch.js';
import type { LineWindow } from './render/changed-windows.js';
import { StoreReplica } from './store/store-replica.js';
import { TemplateEngine } from './templates/template-engine.js';
import type {
  AuxiliaryFiles,
  ControlPortAnnouncement,
  OriginIndex,
  RenderBaseline,
  RenderSuccess,
  RenderTask,
  RenderTaskResult,
  StaleReplica,
  TemplateSetSource,
  TextEdit,
  WorkerControl,
} from './protocol.js';

// Worker threads must log synchronously: an async transport would lose lines when the pool
// terminates the thread.
const logger = pino(
  { name: 'haptic-reconciler-worker', level: process.env.LOG_LEVEL ?? 'info', base: { threadId } },
  pino.destination({ fd: 2, sync: true }),
);

const engine = new TemplateEngine();
const replica = new StoreReplica();
const templateSets = new Map<string, TemplateSetSource>();

const control: WorkerControl = {
  sync(sync) {
    return replica.apply(sync);
  },
  loadTemplateSet(set) {
    try {
      engine.dryRun(set);
      templateSets.set(set.hash, set);
      // Keep only the sets the engine still has compiled.
      while (templateSets.size > 4) templateSets.delete(templateSets.keys().next().value as string);
      return { ok: true };
    } catch (error) {
      logger.error({ err: error }, 'template set failed to compile');
      return { ok: false, message: (error as Error).message };
    }
  },
  status(options) {
    // `gc` exists only under `node --expose-gc` (the V8 flag reaches every worker thread).
    const gc = options?.collectGarbage === true ? (globalThis as { gc?: () => void }).gc : undefined;
    gc?.();
    return {
      version: replica.version,
      templateSetHash: [...templateSets.keys()].pop() ?? null,
      heapUsedBytes: process.memoryUsage().heapUsed,
      collected: gc !== undefined,
      cacheEntries: engine.cachedSets,
    };
  },
  heapSnapshot(directory) {
    return writeHeapSnapshot(join(directory, `worker-${threadId}-${Date.now()}.heapsnapshot`));
  },
};

if (parentPort !== null) {
  const channel = new MessageChannel();
  exposeOn(control, channel.port1);
  const announcement: ControlPortAnnouncement = { kind: 'haptic.control-port', threadId, port: channel.port2 };
  parentPort.postMessage(announcement, [channel.port2]);
  // The control port must not keep an idle worker alive on its own once piscina lets go.
  channel.port1.unref();
}

/** Recent outputs by render ID, so a task can name its baseline instead of carrying it. */
const recentOutputs = new Map<string, RenderBaseline>();
// The newest output and the one before it cover the pending and confirmed baselines; anything
// older is sent by value. Keeping only the newest saves a config's worth of heap (about 0.5 KiB
// per Ingress), but measured on a two-worker pool it made endpoint-only renders slower (at 10,000
// Ingresses, a median of 15 ms against 9 ms), so the one before it stays.
const RECENT_OUTPUTS = 2;
/** The Gateway status report of each recent output, by render ID. */
const recentStatus = new Map<string, RenderSuccess['gatewayStatus']>();
/** The served Ingresses of the same outputs: a result whose list is the held output's leaves it out. */
const recentServed = new Map<string, RenderSuccess['servedIngresses']>();
/** The origin index of the newest output, so that the next result can carry only the objects that changed. */
let newestOrigins: { readonly renderId: string; readonly origins: OriginIndex } | undefined;

export default function render(task: RenderTask): RenderTaskResult {
  // Changes riding on the task spare a control-channel round trip. Ones from another version are
  // left alone: the stale answer below reports the replica's version and the main thread syncs it.
  if (task.sync !== undefined && task.sync.fromVersion === replica.version) replica.apply(task.sync);
  const set = templateSets.get(task.templateSetHash);
  const stale = (missing: StaleReplica['missing']): StaleReplica => ({
    ok: false,
    stale: true,
    missing,
    threadId,
    version: replica.version,
    templateSetHash: set?.hash ?? null,
  });
  if (set === undefined) return stale('templates');
  if (replica.version < task.storeVersion) return stale('version');
  let baseline = task.baseline;
  if (baseline === undefined && task.baselineRef !== undefined) {
    baseline = recentOutputs.get(task.baselineRef);
    if (baseline === undefined) return stale('baseline');
  }
  const newest = [...recentOutputs.keys()].pop();
  const outcome = renderAndValidate(engine, {
    set,
    lookup: (name) => replica.store(name),
    storeVersion: replica.version,
    baseline,
    exclusions: task.exclusions,
  });
  if (!outcome.ok) return { ...outcome, threadId };
  const receivedRef = task.receivedOutputs?.[threadId];
  const received = receivedRef === undefined ? undefined : recentOutputs.get(receivedRef);
  recentOutputs.set(task.renderId, { haproxyConfig: outcome.haproxyConfig, auxiliaryFiles: outcome.auxiliaryFiles });
  while (recentOutputs.size > RECENT_OUTPUTS) recentOutputs.delete(recentOutputs.keys().next().value as string);
  const receivedStatus = receivedRef === undefined ? undefined : recentStatus.get(receivedRef);
  recentStatus.set(task.renderId, outcome.gatewayStatus);
  for (const id of recentStatus.keys()) if (!recentOutputs.has(id)) recentStatus.delete(id);
  const receivedServed = receivedRef === undefined ? undefined : recentServed.get(receivedRef);
  recentServed.set(task.renderId, outcome.servedIngresses);
  for (const id of recentServed.keys()) if (!recentOutputs.has(id)) recentServed.delete(id);
  const heldOrigins = newestOrigins?.renderId === receivedRef ? newestOrigins?.origins : undefined;
  newestOrigins = outcome.origins === undefined ? undefined : { renderId: task.renderId, origins: outcome.origins };
  const { edits, ...full } = outcome;
  // The endpoint lane edited the output the main thread holds: only the edits cross.
  if (edits !== undefined && received !== undefined && receivedRef !== undefined && receivedRef === newest) return { ...withServedReuse(withStatusPatch(asEdits(full, edits, receivedRef), receivedStatus), receivedServed, receivedRef), threadId };
  if (received === undefined || receivedRef === undefined) return { ...full, threadId };
  return { ...withServedReuse(withStatusPatch(withOriginChanges(withoutRepeats(full, received, receivedRef), heldOrigins, receivedRef), receivedStatus), receivedServed, receivedRef), threadId };
}

/**
 * The result without its served Ingresses when they are those of output `from` (the main thread
 * holds them): one name per Ingress costs the main thread a millisecond to receive at 10,000.
 */
function withServedReuse(result: RenderSuccess, before: RenderSuccess['servedIngresses'], from: string): RenderSuccess {
  const after = result.servedIngresses;
  if (after === undefined || before === undefined || !sameList(before, after)) return result;
  const rest: RenderSuccess & { servedIngresses?: RenderSuccess['servedIngresses'] } = { ...result };
  delete rest.servedIngresses;
  return { ...rest, reused: { ...(result.reused ?? { from, config: false, files: [] }), servedIngresses: true } };
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** A result that reuses an output the main thread holds carries its Gateway status as a patch of that output's. */
function withStatusPatch(result: RenderSuccess, before: RenderSuccess['gatewayStatus']): RenderSuccess {
  const after = result.gatewayStatus;
  if (result.reused === undefined || before === undefined || after === undefined) return result;
  const patch = statusPatch(before, after);
  if (patch === undefined) return result;
  const rest: RenderSuccess = { ...result, reused: { ...result.reused, gatewayStatus: patch } };
  delete (rest as { gatewayStatus?: unknown }).gatewayStatus;
  return rest;
}

/**
 * The result with its origin index as the objects that changed since `held` (output `from`'s,
 * which the main thread holds), when the names and the number of objects are the same: the
 * index's objects and names are reused between renders, and its objects list records where it
 * changed, so this costs a look at the changed objects (origin-changes.ts).
 */
function withOriginChanges(result: RenderSuccess, held: OriginIndex | undefined, from: string): RenderSuccess {
  const next = result.origins;
  const changes = next === undefined || held === undefined ? undefined : originChanges(held, next);
  if (changes === undefined) return result;
  const rest: RenderSuccess & { origins?: RenderSuccess['origins'] } = { ...result };
  delete rest.origins;
  return { ...rest, reused: { ...(result.reused ?? { from, config: false, files: [] }), originObjects: changes } };
}

/** The result as edits of output `from`: edited files travel as their edits, the others not at all, nor the origin index. */
function asEdits(outcome: RenderSuccess, edits: Readonly<Record<string, readonly TextEdit[]>>, from: string): RenderSuccess {
  const files: string[] = [];
  for (const kind of ['maps', 'files', 'certificates'] as const) {
    for (const name of Object.keys(outcome.auxiliaryFiles[kind])) if (edits[`${kind}/${name}`] === undefined) files.push(`${kind}/${name}`);
  }
  const rest: RenderSuccess & { origins?: RenderSuccess['origins'] } = { ...outcome };
  delete rest.origins;
  return { ...rest, haproxyConfig: '', auxiliaryFiles: { maps: {}, files: {}, certificates: {} }, reused: { from, config: edits['config'] === undefined, files, edits } };
}

/**
 * The result without the files the main thread already holds: copying a 4 MiB config back to
 * the main thread costs it milliseconds, and most renders change only some of the files. When
 * the config and the set of files are the same, and a large file changed in a few lines, the
 * result travels as edits of `from` (asLineEdits).
 */
function withoutRepeats(outcome: RenderSuccess, received: RenderBaseline, from: string): RenderSuccess {
  const config = outcome.haproxyConfig === received.haproxyConfig;
  if (config) {
    const patch = asLineEdits(outcome, received, from);
    if (patch !== undefined) return patch;
  }
  const files: string[] = [];
  const aux: Record<keyof AuxiliaryFiles, Record<string, string>> = { maps: {}, files: {}, certificates: {} };
  for (const kind of ['maps', 'files', 'certificates'] as const) {
    const before = received.auxiliaryFiles[kind];
    for (const [name, text] of Object.entries(outcome.auxiliaryFiles[kind])) {
      if (Object.prototype.hasOwnProperty.call(before, name) && before[name] === text) files.push(`${kind}/${name}`);
      else aux[kind][name] = text;
    }
  }
  if (!config && files.length === 0) return outcome;
  return { ...outcome, haproxyConfig: config ? '' : outcome.haproxyConfig, auxiliaryFiles: aux, reused: { from, config, files } };
}

/**
 * The result as edits of `from`, whose config it shares: each changed file as the edit of the
 * lines that differ (a small one as a whole-file edit), the others not at all. The pool marks it
 * a patch of `from`, so the Deployer diffs the edited files alone; a patch names every changed
 * file, so a file added or removed leaves the result whole (undefined), as does a result whose
 * changed files all differ in most of their text. The origin index travels: it names the
 * objects' versions, which change with the config unchanged.
 */
function asLineEdits(outcome: RenderSuccess, received: RenderBaseline, from: string): RenderSuccess | undefined {
  const files: string[] = [];
  const edits: Record<string, readonly TextEdit[]> = {};
  let saved = false;
  for (const kind of ['maps', 'files', 'certificates'] as const) {
    const before = received.auxiliaryFiles[kind];
    const after = outcome.auxiliaryFiles[kind];
    if (Object.keys(before).length !== Object.keys(after).length) return undefined;
    for (const [name, text] of Object.entries(after)) {
      if (!Object.prototype.hasOwnProperty.call(before, name)) return undefined;
      const held = before[name] as string;
      // Found once for the render: the validator and the checksum asked for the same texts.
      const cut = changedLinesOf(engine, `${kind}/${name}`, held, text);
      if (cut === undefined) {
        files.push(`${kind}/${name}`);
        continue;
      }
      const edit = lineEdit(held, viewsOf(engine, `${kind}/${name}`, held, text).after, cut);
      if (edit !== undefined) saved = true;
      edits[`${kind}/${name}`] = [edit ?? { at: 0, remove: held.length, text }];
    }
  }
  if (!saved) return undefined;
  return { ...outcome, haproxyConfig: '', auxiliaryFiles: { maps: {}, files: {}, certificates: {} }, reused: { from, config: true, files, edits } };
}

/** Files smaller than this travel whole. */
const EDIT_MIN_LENGTH = 4096;

/** `after` as one edit of `before` (the lines that differ, `cut`), or undefined when most of it differs or it is small. */
function lineEdit(before: string, after: TextView, cut: LineWindow): TextEdit | undefined {
  if (after.length < EDIT_MIN_LENGTH) return undefined;
  if (cut.oldEnd - cut.start + (cut.newEnd - cut.start) > (before.length + after.length) / 4) return undefined;
  return { at: cut.start, remove: cut.oldEnd - cut.start, text: after.slice(cut.start, cut.newEnd) };
}
