// FaultLog: what happened to each injected fault, and the recovery rule, as one pure record
// keeper (times and store versions come in as arguments). A fault is open from its injection
// until it recovers, and at most one is open at a time. Its timeline:
//
//   injected ── cleared ─────────────── recovered
//               the fault stops acting   the first success of store version >= the version at
//                                        clearing: a render, or for `output` a written render
//
// Cleared is when a worker fault's render has failed (its worker is gone or going), or when a
// leadership or output fault is undone. A success of an older version proves nothing: it may
// have been rendered, or written, before the fault. Against a real HAProxy (`serving`), every
// fault awaits a deployment instead: HAProxy serving that store version (or one after it).
// A fault that could not be set up, or not be confirmed cleared or recovered within its bound
// (the FaultInjector keeps the bounds), ends `failed` with the reason: it is closed all the same,
// so the rotation goes on.
import { deferred, type Deferred } from '../../core/async.js';
import type { FaultKind } from './soak-options.js';

/** One fault as the report shows it; times are ms since the soak started. */
export interface FaultRecord {
  readonly kind: FaultKind;
  readonly injectedMs: number;
  readonly clearedMs: number | null;
  /** The store version when the fault was cleared. */
  readonly clearedVersion: number | null;
  readonly recoveredMs: number | null;
  /** The store version of the render (or write) that counted as the recovery. */
  readonly recoveredVersion: number | null;
  /** When the fault was given up as failed (never recovered), and why. */
  readonly failedMs: number | null;
  readonly failure: string | null;
}

/** What counts as a success after a fault: a render, a render written to the output directory, or deployed to HAProxy. */
export type Success = 'render' | 'write' | 'deploy';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

export class FaultLog {
  readonly #records: Mutable<FaultRecord>[] = [];
  /** Invariant: the open record is the last one, and its recovery is awaited here. */
  #open: { readonly record: Mutable<FaultRecord>; readonly recovered: Deferred<void> } | undefined;
  readonly #serving: boolean;

  /** `serving`: the soak deploys to HAProxy, and a fault recovers once HAProxy serves the version. */
  constructor(options: { readonly serving?: boolean } = {}) {
    this.#serving = options.serving ?? false;
  }

  get records(): readonly FaultRecord[] {
    return this.#records;
  }

  /** The fault injected and not yet recovered, if any. */
  get open(): FaultRecord | undefined {
    return this.#open?.record;
  }

  /** Records an injection. Throws while another fault is open: faults never overlap. */
  injected(kind: FaultKind, atMs: number): void {
    if (this.#open !== undefined) throw new Error(`cannot inject ${kind}: ${this.#open.record.kind} has not recovered`);
    const record: Mutable<FaultRecord> = { kind, injectedMs: atMs, clearedMs: null, clearedVersion: null, recoveredMs: null, recoveredVersion: null, failedMs: null, failure: null };
    this.#records.push(record);
    this.#open = { record, recovered: deferred<void>() };
  }

  /** The open fault stopped acting at store version `version`; later calls keep the first. */
  cleared(atMs: number, version: number): void {
    const record = this.#open?.record;
    if (record === undefined || record.clearedMs !== null) return;
    record.clearedMs = atMs;
    record.clearedVersion = version;
  }

  /** A success of store version `version`: recovers the open fault if it is the one it awaits. */
  succeeded(success: Success, atMs: number, version: number): void {
    const open = this.#open;
    if (open === undefined) return;
    const { record } = open;
    if (record.clearedVersion === null || version < record.clearedVersion || success !== awaitedSuccess(record.kind, this.#serving)) return;
    record.recoveredMs = atMs;
    record.recoveredVersion = version;
    this.#open = undefined;
    open.recovered.resolve();
  }

  /** Gives the open fault up as failed for `reason`, and closes it: the next fault may follow. */
  failed(atMs: number, reason: string): void {
    const open = this.#open;
    if (open === undefined) return;
    open.record.failedMs = atMs;
    open.record.failure = reason;
    this.#open = undefined;
    open.recovered.resolve();
  }

  /** Resolves once no fault is open, recovered or failed (at once when none is). */
  settled(): Promise<void> {
    return this.#open?.recovered.promise ?? Promise.resolve();
  }
}

/** The success that shows the engine is past a fault: a deployment when serving, for the output directory a write. */
export function awaitedSuccess(kind: FaultKind, serving = false): Success {
  if (serving) return 'deploy';
  return kind === 'output' ? 'write' : 'render';
}
