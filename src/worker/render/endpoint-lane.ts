// The endpoint lane: a render after EndpointSlice changes alone, at the cost of the backends they
// touch. Their servers are resolved and slotted by the routing model's own functions
// (serviceServers, assignSlots), each backend's section is re-rendered by the memo block that
// rendered it (MemoCache.rerender: a memo block's text depends only on its key object and the
// set's constants), and the new texts are spliced into the previous output, as are the backends'
// server-slots lines: through the renderer's kept digests of both texts (LaneTexts), which find a
// section by its first line and edit it in at O(log sections), so no step reads, copies or hashes
// a whole text, and nothing per change grows with the cluster but for a few logarithms. The
// indexes by Service, rejection and warning are built once per base. The result is what a whole
// render would give. Whenever that cannot be
// shown cheaply, the lane declines (undefined) and the caller renders the whole set. HTTPRoute
// backends (`gw_…`, their Service maybe in another namespace) go the same way as Ingress ones:
// their sections, filters included, are memo blocks keyed by the backend too. It declines when:
// - anything but the EndpointSlice store changed, or the template set, exclusions or baseline;
// - a template reads the EndpointSlice store itself, or a backend's section is not a memo block
//   of the config keyed by its model object;
// - a changed slice is rejected (whole or in part), or was; a touched backend is a DNS one, one
//   without servers, or its Service had a warning; resolving it warns;
// - the slot count of a backend changes (slots are structure: a reload follows anyway).
// Changed server lines keep their number of lines, so the origin index of the base still holds.
import type { KubeObject, OriginIndex, RenderBaseline, RenderExclusions, RenderSuccess, TemplateSetSource, TextEdit } from '../protocol.js';
import type { Backend } from '../routing/model.js';
import { modelOptions } from '../routing/model.js';
import { RecordedReads } from '../routing/recorded-reads.js';
import { assignSlots, SERVER_SLOTS_FILE, slotLine } from '../routing/server-slots.js';
import { serviceServers } from '../routing/service-backend.js';
import type { GuardContext } from '../store/guard-context.js';
import { GuardedReader } from '../store/guarded-reader.js';
import type { IndexedStore } from '../store/indexed-store.js';
import { guardObject } from '../store/object-guard.js';
import { ExclusionFilter } from '../store/render-exclusions.js';
import type { OutputPaths, RenderScope, TemplateEngine } from '../templates/template-engine.js';
import type { ConfigDigest } from './config-digest.js';
import { backendsOf, exclusionsKey, indexByService, serviceNamespace, warnedAbout, type LaneBase } from './lane-base.js';
import type { SliceChange } from './slice-services.js';
import { applyEdits, sortedEdits } from './text-window.js';

export interface LaneRequest {
  readonly set: TemplateSetSource;
  readonly lookup: (store: string) => IndexedStore | undefined;
  readonly baseline: RenderBaseline | undefined;
  readonly exclusions: RenderExclusions | undefined;
  readonly context: GuardContext;
  readonly paths: OutputPaths;
}

/** The lane's render: the output, and its edits against the base's. */
export interface LaneRender {
  readonly haproxyConfig: string;
  readonly auxiliaryFiles: RenderSuccess['auxiliaryFiles'];
  /** By file (`config`, `files/server-slots.txt`). */
  readonly edits: Readonly<Record<string, readonly TextEdit[]>>;
  readonly origins: OriginIndex | undefined;
  /** UTF-8 bytes of the output, config and auxiliary files (the base's, with the edits'). */
  readonly bytes: number;
}

/**
 * The kept digests of the config and of the server-slots file: whichever holds the base's text
 * finds the edited sections by their key and is edited into the new text (config-digest.ts), so
 * neither text is searched, copied or hashed whole. One that holds another text is left alone.
 */
export interface LaneTexts {
  readonly config: ConfigDigest;
  readonly slots: ConfigDigest;
}

/** The render after `changes` (all in the EndpointSlice store), or undefined when the lane declines. */
export function endpointLane(engine: TemplateEngine, base: LaneBase, request: LaneRequest, changes: readonly SliceChange[] | undefined, texts?: LaneTexts): LaneRender | undefined {
  const { set, lookup } = request;
  const options = modelOptions(set.values);
  const sliceStore = options.stores.endpointSlices;
  if (changes === undefined || changes.length === 0 || base.setHash !== set.hash || base.exclusions !== exclusionsKey(request.exclusions)) return undefined;
  if (base.templateReads.has(sliceStore) || !sameOutput(request.baseline, base.outcome)) return undefined;
  for (const [name, at] of base.generations) {
    const now = lookup(name);
    if (now !== at.store || (name !== sliceStore && (now?.generation ?? -1) !== at.generation)) return undefined;
  }
  const store = lookup(sliceStore);
  const kind = store?.definition?.kind ?? 'EndpointSlice';
  const services = new Set<string>();
  for (const change of changes) {
    const object = store?.get(change.key);
    if (object !== undefined && !cleanVerdict(object, request.context)) return undefined;
    base.rejected ??= new Set(base.outcome.rejections.map((r) => `${r.kind}\0${r.namespace}/${r.name}`));
    if (base.rejected.has(`${kind}\0${change.key}`)) return undefined;
    for (const service of change.services) services.add(service);
  }
  const byService = (base.byService ??= indexByService(base.backends));
  const reader = new GuardedReader(lookup, () => undefined, request.context, new ExclusionFilter(request.exclusions));
  const changed: [Backend, Backend][] = [];
  for (const service of services) {
    if (warnedAbout(base, service)) return undefined;
    for (const name of backendsOf(byService, service)) {
      const backend = base.backends.get(name) as Backend;
      const next = reslotted(backend, reader, options);
      if (next === undefined) return undefined;
      if (next !== backend) changed.push([backend, next]);
    }
  }
  return splice(engine, base, request, changed, texts);
}

/** The backend with its servers resolved again: itself when they are the same, undefined to decline. */
function reslotted(backend: Backend, reader: GuardedReader, options: ReturnType<typeof modelOptions>): Backend | undefined {
  if (backend.dns || backend.servers.length === 0) return undefined;
  const reads = new RecordedReads(reader);
  const port = /^\d+$/.test(backend.port) ? { number: Number(backend.port) } : { name: backend.port };
  const { addresses, dns } = serviceServers(reads, options, serviceNamespace(backend), { service: { name: backend.service, port } }, backend.name, backend.ingress);
  if (dns || reads.log.length > 0) return undefined;
  const servers = assignSlots(addresses, backend.servers.map((server) => (server.enabled ? server.address : '')), options.serverSlots);
  if (servers.length !== backend.servers.length) return undefined;
  let same = true;
  for (let i = 0; i < servers.length; i++) {
    const a = servers[i] as Backend['servers'][number];
    const b = backend.servers[i] as Backend['servers'][number];
    if (a.name !== b.name) return undefined;
    if (a.address !== b.address || a.enabled !== b.enabled) same = false;
  }
  return same ? backend : Object.freeze({ ...backend, servers: Object.freeze(servers) });
}

/** The base's output with the changed backends' sections and slot lines re-rendered in place. */
function splice(engine: TemplateEngine, base: LaneBase, request: LaneRequest, changed: readonly [Backend, Backend][], texts: LaneTexts | undefined): LaneRender | undefined {
  const { outcome } = base;
  const config = outcome.haproxyConfig;
  const slots = outcome.auxiliaryFiles.files[SERVER_SLOTS_FILE];
  const configText = texts !== undefined && texts.config.text === config ? texts.config : undefined;
  const slotsText = texts !== undefined && slots !== undefined && texts.slots.text === slots ? texts.slots : undefined;
  const configEdits: TextEdit[] = [];
  const slotEdits: TextEdit[] = [];
  const memo = engine.memoOf(request.set);
  const scope: RenderScope = {
    reader: { list: () => [], fetch: () => [], getSingle: () => undefined, store: () => undefined, reject: () => undefined },
    values: request.set.values,
    baseline: undefined,
    paths: request.paths,
    warn: () => undefined,
    emitted: { maps: {}, files: {}, certificates: {} },
    memo,
    memoDepth: 0,
  };
  const data = { scope, root: { values: request.set.values, paths: request.paths } };
  let bytes = (base.bytes ??= outputBytes(outcome));
  for (const [before, after] of changed) {
    const texts = memo.rerender(before, after, data);
    if (texts.length === 0) return undefined;
    for (const text of texts) {
      // A keyed loop's element may open with the blank line that ends the section before it:
      // the edit starts after the newlines both texts open with, at the section's own first
      // line, so that it stays inside the section's block (the digest then edits that block alone).
      const lead = commonNewlines(text.before, text.after);
      const old = text.before.slice(lead);
      const at = startOf(configText, config, old);
      if (!text.id.startsWith('haproxyConfig#') || at < 0 || lineCount(text.before) !== lineCount(text.after)) return undefined;
      configEdits.push({ at, remove: old.length, text: text.after.slice(lead) });
      bytes += Buffer.byteLength(text.after) - Buffer.byteLength(text.before);
    }
    if (slots !== undefined) {
      const old = slotLine(before.name, before.servers.map((server) => (server.enabled ? server.address : '')));
      const at = startOf(slotsText, slots, old);
      if (at < 0) return undefined;
      const line = slotLine(after.name, after.servers.map((server) => (server.enabled ? server.address : '')));
      slotEdits.push({ at, remove: old.length, text: line });
      bytes += Buffer.byteLength(line) - Buffer.byteLength(old);
    }
  }
  const haproxyConfig = configText?.edit(configEdits)?.text ?? applyEdits(config, configEdits);
  const slotText = slots === undefined ? undefined : (slotsText?.edit(slotEdits)?.text ?? applyEdits(slots, slotEdits));
  if (haproxyConfig === undefined || (slots !== undefined && slotText === undefined)) return undefined;
  const files = slotText === undefined ? outcome.auxiliaryFiles.files : { ...outcome.auxiliaryFiles.files, [SERVER_SLOTS_FILE]: slotText };
  for (const [before, after] of changed) {
    base.backends.set(after.name, after);
    // The model's object, for laneBase to put back.
    if (!(base.laneEdited ??= new Map()).has(after.name)) base.laneEdited.set(after.name, before);
  }
  base.bytes = bytes;
  const edits: Record<string, readonly TextEdit[]> = {};
  if (configEdits.length > 0) edits['config'] = sortedEdits(configEdits);
  if (slotEdits.length > 0) edits[`files/${SERVER_SLOTS_FILE}`] = sortedEdits(slotEdits);
  return { haproxyConfig, auxiliaryFiles: { ...outcome.auxiliaryFiles, files }, edits, origins: outcome.origins, bytes };
}

/** How many newlines both `a` and `b` open with. */
function commonNewlines(a: string, b: string): number {
  let n = 0;
  while (n < a.length && n < b.length && a.charCodeAt(n) === 10 && b.charCodeAt(n) === 10) n++;
  return n;
}

/** UTF-8 bytes of an output: its config and every auxiliary file. */
function outputBytes(outcome: RenderSuccess): number {
  let bytes = Buffer.byteLength(outcome.haproxyConfig);
  for (const kind of ['maps', 'files', 'certificates'] as const) for (const text of Object.values(outcome.auxiliaryFiles[kind])) bytes += Buffer.byteLength(text);
  return bytes;
}

/** Where `needle` starts a block of `text` as the kept digest of `text` indexes them, or else where it starts a line of `text`; -1 for nowhere. */
function startOf(kept: ConfigDigest | undefined, text: string, needle: string): number {
  const at = kept?.find(needle) ?? -1;
  return at >= 0 ? at : lineStartIndex(text, needle);
}

/**
 * Where `needle` starts a line of `text`, or -1. The search is for its first line (a section's
 * `backend <name>`), each hit checked whole: a search for a whole section is many times slower
 * where sections end alike (an HTTPRoute's backends of one Service differ only in their names).
 */
function lineStartIndex(text: string, needle: string): number {
  if (text.startsWith(needle)) return 0;
  const cut = needle.indexOf('\n');
  const head = `\n${cut < 0 ? needle : needle.slice(0, cut + 1)}`;
  for (let at = text.indexOf(head); at >= 0; at = text.indexOf(head, at + 1)) if (text.startsWith(needle, at + 1)) return at + 1;
  return -1;
}

function lineCount(text: string): number {
  let count = 0;
  for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) count++;
  return count;
}

/** Whether the guard takes the object whole, with nothing left out of it. */
function cleanVerdict(object: KubeObject, context: GuardContext): boolean {
  const verdict = guardObject(object, context);
  return verdict.ok && verdict.rejections.length === 0;
}

/** Whether a render's baseline is the base's output (the same objects, or the same texts). */
function sameOutput(baseline: RenderBaseline | undefined, outcome: RenderSuccess): boolean {
  if (baseline === undefined) return false;
  if (baseline.auxiliaryFiles === outcome.auxiliaryFiles && baseline.haproxyConfig === outcome.haproxyConfig) return true;
  if (baseline.haproxyConfig !== outcome.haproxyConfig) return false;
  for (const kind of ['maps', 'files', 'certificates'] as const) {
    const a = baseline.auxiliaryFiles[kind];
    const b = outcome.auxiliaryFiles[kind];
    const names = Object.keys(b);
    if (Object.keys(a).length !== names.length || names.some((name) => a[name] !== b[name])) return false;
  }
  return true;
}
