// Everything that crosses the thread boundary between the main thread and a render worker.
import type { MessagePort } from 'node:worker_threads';
import type { GatewayStatusReport } from './routing/gateway-model.js';
import type { StatusPatch } from './render/status-patch.js';
// Plain data only: structured clone strips prototypes, so results and errors are unions of
// plain objects, and the main thread turns a failure into a PipelineError.

/** Rendered auxiliary files, each keyed by its file name (no directories). */
export interface AuxiliaryFiles {
  readonly maps: Readonly<Record<string, string>>;
  readonly files: Readonly<Record<string, string>>;
  readonly certificates: Readonly<Record<string, string>>;
}

/** What the fleet is taken to run: the previous render's output that the next render may read. */
export interface RenderBaseline {
  readonly haproxyConfig?: string;
  readonly auxiliaryFiles: AuxiliaryFiles;
}

export type FailurePhase = 'render' | 'validation' | 'auxiliary';

/** Why a render runs: to reconcile the cluster, or to judge a change before it is admitted. */
export type PipelineMode = 'reconcile' | 'admission';

/** What a rejection cost: the whole object, or one part of it (the rest still renders). */
export type RejectionScope = 'object' | 'path' | 'tls' | 'annotation' | 'endpoint';

/**
 * The stable reason of a rejection, as the Kubernetes Event on the object names it: `Rejected`
 * (the object, or one of its paths), `HostConflict` (a host or path another namespace owns),
 * `InvalidAnnotation`, `InvalidTLS` (a TLS entry or its Secret), `BackendNotFound` (a Service
 * or port that does not exist), `EndpointRefused` (an endpoint address that is not allowed).
 */
export type RejectionCode = 'Rejected' | 'HostConflict' | 'InvalidAnnotation' | 'InvalidTLS' | 'BackendNotFound' | 'EndpointRefused';

/**
 * One object, or one part of an object, that the object guard left out of a render. `kind` is the
 * kind of the store the object entered (never the object's own `kind` field). `namespace` ('' for
 * cluster-scoped objects) and `name` are printable: control characters are escaped JSON-style.
 */
export interface Rejection {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly scope: RejectionScope;
  readonly reason: string;
  /**
   * Set when this problem left the whole object out although `scope` names a part of it (a bad
   * annotation value rejects its Ingress). Absent: only that part was dropped; scope 'object'
   * always means the whole object.
   */
  readonly wholeObject?: true;
  /**
   * The stable reason. Set on the routing model's findings; the object checks leave it out, and
   * their reason follows from `scope` (object-guard.ts `reasonCodeOf`: annotation -> InvalidAnnotation,
   * tls -> InvalidTLS, endpoint -> EndpointRefused, object and path -> Rejected).
   */
  readonly code?: RejectionCode;
}

/**
 * An object the render gate took out of renders because HAProxy refused what it produced. It
 * holds for the object's `version` only (`objectVersion`: its resourceVersion, or a digest of
 * its content): a changed object gets a fresh chance. `kind` is the store kind (`Ingress`).
 */
export interface Exclusion {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly version: string;
  /** Why, as the object's rejection reason: HAProxy's own message, sanitised and capped. */
  readonly reason: string;
}

/** What a render leaves out on the render gate's word. Plain data; both parts may be empty. */
export interface RenderExclusions {
  /** Each becomes an object rejection of the render when the object is still at that version. */
  readonly objects: readonly Exclusion[];
  /**
   * Every object of these namespaces is left out, without a rejection: the gate's trial renders
   * while it narrows a refusal down (bisection).
   */
  readonly namespaces?: readonly string[];
}

/** An object that produced part of a render (an Ingress, through its backends). */
export interface OriginObject {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  /** `objectVersion` of the object rendered. */
  readonly version: string;
}

/**
 * One section of the rendered config: its keyword (`global`, `defaults`, `frontend`, `backend`,
 * `userlist`...), its name, its lines (1-based, inclusive) and the index in `OriginIndex.objects`
 * of the object it came from (-1: none, the template set's own).
 */
export interface OriginSection {
  readonly keyword: string;
  readonly name: string;
  readonly firstLine: number;
  readonly lastLine: number;
  readonly object: number;
}

/**
 * Where a render's text came from: the config as ranges of lines (sections), and the names that
 * map and file entries refer to (backends, userlists) with their objects. One entry per section
 * and per object, never per line; built in the worker, crossing threads as plain data.
 */
export interface OriginIndex {
  readonly objects: readonly OriginObject[];
  readonly sections: readonly OriginSection[];
  /** Backend and userlist names -> index in `objects`. */
  readonly names: Readonly<Record<string, number>>;
}

/** A Kubernetes-shaped object as stored. Only `metadata.name` is required by the stores. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

/** One change in a store's change log. */
export type StoreChange =
  | { readonly op: 'upsert'; readonly store: string; readonly key: string; readonly object: KubeObject }
  | { readonly op: 'delete'; readonly store: string; readonly key: string };

/** Configuration of one store as a template set declares it. */
export interface StoreDefinition {
  readonly name: string;
  readonly apiVersion: string;
  readonly kind: string;
  /** Dotted paths into the object; `metadata.labels.kubernetes\.io/service-name` escapes dots. */
  readonly indexBy: readonly string[];
  /** Leading-edge debounce window of the watcher, in ms (0: publish at the end of each burst). */
  readonly debounceMs?: number;
  /** The API resource (plural, lower case), e.g. `endpointslices`; derived from `kind` when absent. */
  readonly resource?: string;
  /** False for cluster-scoped resources (IngressClass); derived from `kind` when absent. */
  readonly namespaced?: boolean;
  /** Server-side selectors for the list and watch. */
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  /** Watch this namespace only, whatever namespace the source watches (`--haproxy-namespace`). */
  readonly namespace?: string;
}

/** Content a template set fetches over HTTP and templates read by name (`httpResource "name"`). */
export interface HttpResourceDefinition {
  readonly name: string;
  readonly url: string;
  /** How often the content is fetched again (conditional requests). */
  readonly refreshIntervalMs: number;
  /** A fetch taking longer fails (the previous content stays). */
  readonly timeoutMs: number;
}

/** The delta or full snapshot that brings a replica to `toVersion`. */
export type ReplicaSync =
  | { readonly kind: 'delta'; readonly fromVersion: number; readonly toVersion: number; readonly changes: readonly StoreChange[] }
  | {
      readonly kind: 'full';
      readonly toVersion: number;
      readonly stores: Readonly<Record<string, ReplicaStoreSnapshot>>;
    };

/**
 * One store of a full sync. `kind` and `apiVersion` are the store's definition: the replica
 * re-checks every object it takes against them (absent only for a store defined without one,
 * whose objects are never rendered until a template set names its kind).
 */
export interface ReplicaStoreSnapshot {
  readonly indexBy: readonly string[];
  readonly kind?: string;
  readonly apiVersion?: string;
  readonly objects: readonly KubeObject[];
}

/** Answer of a replica to a sync: the version it now holds. `accepted: false` asks for a full sync. */
export interface ReplicaSyncAck {
  readonly accepted: boolean;
  readonly version: number;
}

/** A template set in the form workers receive it: parsed, with its content hash. */
export interface TemplateSetSource {
  readonly hash: string;
  readonly stores: readonly StoreDefinition[];
  readonly snippets: Readonly<Record<string, string>>;
  readonly haproxyConfig: string;
  readonly maps: Readonly<Record<string, string>>;
  readonly files: Readonly<Record<string, string>>;
  readonly sslCertificates: Readonly<Record<string, string>>;
  readonly values: Readonly<Record<string, unknown>>;
  /** Absent in sets built by hand: none. */
  readonly httpResources?: readonly HttpResourceDefinition[];
}

export interface RenderTimings {
  readonly renderMs: number;
  readonly validateMs: number;
  readonly totalMs: number;
}

export interface RenderSuccess {
  readonly ok: true;
  readonly haproxyConfig: string;
  readonly auxiliaryFiles: AuxiliaryFiles;
  readonly checksum: string;
  readonly storeVersion: number;
  readonly timings: RenderTimings;
  readonly warnings: readonly string[];
  /** Objects and parts of objects left out of this render (each also a `rejected …` warning). */
  readonly rejections: readonly Rejection[];
  /** Which objects the config's sections and the entries' names came from. */
  readonly origins?: OriginIndex;
  /**
   * `namespace/name` of every Ingress this render serves: of one of our classes and not rejected
   * as a whole, sorted. Absent when the template set has no Ingress store.
   */
  readonly servedIngresses?: readonly string[];
  /**
   * What the routing model left out of Ingresses it serves (a host another namespace owns, a
   * Service that does not exist, a missing TLS Secret), each also a warning. Kept apart from
   * `rejections`, which are the object checks' verdicts; absent means none.
   */
  readonly findings?: readonly Rejection[];
  /** Gateway API acceptance results of the model (absent when no GatewayClass is ours), for a status writer. */
  readonly gatewayStatus?: GatewayStatusReport;
  /** The worker thread that rendered it (absent inline). */
  readonly threadId?: number;
  /**
   * Only between a worker and its pool: files left out of this result because they are the same
   * text as in the worker's output `from`, which the main thread already holds. The pool puts
   * them back before anyone else sees the result.
   */
  readonly reused?: ReusedFiles;
  /**
   * Set by the pool when this render is render `patch.from` with these edits (the endpoint lane,
   * or a render whose config is the same and whose files changed in a few lines), so that the
   * Deployer diffs the edited sections and files only. Every file is complete all the same.
   */
  readonly patch?: RenderPatch;
  /** Set by the endpoint lane: the files as edits of the executor's previous render (the pool worker sends only these). */
  readonly edits?: Readonly<Record<string, readonly TextEdit[]>>;
}

/** Files of a result that repeat an earlier output of the same worker (see RenderSuccess.reused). */
export interface ReusedFiles {
  readonly from: string;
  /** The config is the same (it travels as ''). */
  readonly config: boolean;
  /** `maps/<name>`, `files/<name>`, `certificates/<name>`: absent from auxiliaryFiles. */
  readonly files: readonly string[];
  /**
   * Files that are the text of output `from` with these edits: `config` (it travels as '') and
   * `<kind>/<name>` (absent from auxiliaryFiles). The origin index is `from`'s when the result
   * has none (the endpoint lane's).
   */
  readonly edits?: Readonly<Record<string, readonly TextEdit[]>>;
  /** The Gateway status report (absent from the result) as a patch of output `from`'s (status-patch.ts). */
  readonly gatewayStatus?: StatusPatch;
  /** The served Ingresses (absent from the result) are output `from`'s. */
  readonly servedIngresses?: boolean;
  /**
   * The origin index is output `from`'s with these objects replaced (by position), the names the
   * same: the result carries no index of its own. An Ingress change renames no section but
   * changes its object's version, and the whole index would cost the main thread a copy per object.
   */
  readonly originObjects?: readonly (readonly [index: number, object: OriginObject])[];
}

/** `remove` characters at `at` (in the text before) replaced by `text`; sorted, apart; whole sections in a config. */
export interface TextEdit {
  readonly at: number;
  readonly remove: number;
  readonly text: string;
}

/** A render as edits of an earlier one of the same executor (see RenderSuccess.patch). */
export interface RenderPatch {
  /** The render ID of the render the edits apply to. */
  readonly from: string;
  /** By file: `config`, `maps/<name>`, `files/<name>`, `certificates/<name>`. Files not named are the same text. */
  readonly edits: Readonly<Record<string, readonly TextEdit[]>>;
  /**
   * By file, the text each edit (in the order of `edits`) removed from render `from`, when the
   * executor kept it (the pool does): readers of the patch need not slice render `from`'s text,
   * which for a text held as a concatenation copies the whole of it. Absent: slice `from`'s text.
   */
  readonly removed?: Readonly<Record<string, readonly string[]>>;
}

export interface RenderFailure {
  readonly ok: false;
  readonly phase: FailurePhase;
  readonly subPhase?: string;
  readonly message: string;
  readonly warnings: readonly string[];
  /** The rejections met before the failure (absent when the failure came from outside a render). */
  readonly rejections?: readonly Rejection[];
  readonly threadId?: number;
}

export type RenderOutcome = RenderSuccess | RenderFailure;

/** The task a pool worker runs. */
export interface RenderTask {
  /** Assigned by the main thread; the worker keeps its recent outputs under it. */
  readonly renderId: string;
  readonly templateSetHash: string;
  readonly storeVersion: number;
  readonly mode: PipelineMode;
  /**
   * The baseline by reference: the render ID of an earlier output of this pool. Shipping a
   * whole baseline would cost the main thread time in proportion to the config's size.
   */
  readonly baselineRef?: string;
  /** The baseline by value, when the worker does not hold `baselineRef`. */
  readonly baseline?: RenderBaseline;
  /**
   * By worker thread ID: the render ID of the last output the main thread received from that
   * worker. The worker leaves out of its result every file equal to the one in that output.
   */
  readonly receivedOutputs?: Readonly<Record<number, string>>;
  /** What the render gate takes out of this render (absent: nothing). */
  readonly exclusions?: RenderExclusions;
  /** Store changes up to `storeVersion` riding on the task; applied when the replica is at their `fromVersion`. */
  readonly sync?: Extract<ReplicaSync, { readonly kind: 'delta' }>;
}

/** A worker's replica was not at the version a task named; the main thread syncs and retries. */
export interface StaleReplica {
  readonly ok: false;
  readonly stale: true;
  /** What the worker lacked: the store version, the template set, or the referenced baseline. */
  readonly missing: 'version' | 'templates' | 'baseline';
  readonly threadId: number;
  readonly version: number;
  readonly templateSetHash: string | null;
}

export type RenderTaskResult = RenderOutcome | StaleReplica;

/** The message a worker posts on its parent port at start-up to hand over its control port. */
export interface ControlPortAnnouncement {
  readonly kind: 'haptic.control-port';
  readonly threadId: number;
  readonly port: MessagePort;
}

/** The per-worker control API, exposed over comlink on the announced port. */
export interface WorkerControl {
  sync(sync: ReplicaSync): ReplicaSyncAck;
  loadTemplateSet(set: TemplateSetSource): { ok: true } | { ok: false; message: string };
  /** With `collectGarbage`, a full garbage collection runs first when the process exposes `gc`. */
  status(options?: { readonly collectGarbage?: boolean }): WorkerStatus;
  /** Writes a V8 heap snapshot of this worker into `directory` (a full GC runs first); returns its path. */
  heapSnapshot(directory: string): string;
}

export interface WorkerStatus {
  readonly version: number;
  readonly templateSetHash: string | null;
  /** V8 heap in use by this worker. */
  readonly heapUsedBytes: number;
  /** Whether a full garbage collection ran just before heapUsedBytes was read (live heap only). */
  readonly collected: boolean;
  readonly cacheEntries: number;
}

/**
 * Where a render's auxiliary files go: the absolute directories the config names for maps,
 * general files and certificates. One name for it on both sides of the boundary: the template
 * scope, the validator, the render gate and the output directory all take it.
 */
export interface OutputPaths {
  readonly mapsDir: string;
  readonly filesDir: string;
  readonly certsDir: string;
}
