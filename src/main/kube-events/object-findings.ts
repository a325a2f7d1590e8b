// What a render says about each object, for its Kubernetes Events: the render's rejections grouped
// by object and stable reason (`Rejected`, `HostConflict`, `InvalidAnnotation`, `InvalidTLS`,
// `BackendNotFound`, `EndpointRefused`), each with the message the log gives, capped at 1 KiB.
// Rejections arrive escaped (see the worker's log-text.ts): no object text reaches an Event raw.
import type { Rejection, RejectionCode } from '../../worker/protocol.js';
import { reasonCodeOf } from '../../worker/store/object-guard.js';

/** An Event's note is cut to this many bytes (the API server's own limit is 1 KiB). */
export const MAX_NOTE_BYTES = 1024;

export interface ObjectRef {
  /** The kind of the store the object entered. */
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
}

export interface Finding {
  readonly reason: RejectionCode;
  readonly note: string;
}

/** `Kind namespace/name`: the key findings are grouped by. */
export function refKey(ref: ObjectRef): string {
  return `${ref.kind} ${ref.namespace === '' ? ref.name : `${ref.namespace}/${ref.name}`}`;
}

/** The findings of one render, by object key, then by reason (first message of each reason). */
export function findingsOf(rejections: readonly Rejection[]): Map<string, { readonly ref: ObjectRef; readonly byReason: Map<RejectionCode, Finding> }> {
  const out = new Map<string, { readonly ref: ObjectRef; readonly byReason: Map<RejectionCode, Finding> }>();
  for (const rejection of rejections) {
    const ref = { kind: rejection.kind, namespace: rejection.namespace, name: rejection.name };
    const key = refKey(ref);
    let entry = out.get(key);
    if (entry === undefined) {
      entry = { ref, byReason: new Map() };
      out.set(key, entry);
    }
    const reason = reasonCodeOf(rejection);
    if (!entry.byReason.has(reason)) entry.byReason.set(reason, { reason, note: capNote(`${key}: ${rejection.reason}`) });
  }
  return out;
}

/** `text` cut to MAX_NOTE_BYTES of UTF-8, on a character boundary, marked when cut. */
export function capNote(text: string): string {
  if (Buffer.byteLength(text) <= MAX_NOTE_BYTES) return text;
  let cut = text.slice(0, MAX_NOTE_BYTES - 3);
  while (Buffer.byteLength(cut) > MAX_NOTE_BYTES - 3) cut = cut.slice(0, -1);
  return `${cut}...`;
}
