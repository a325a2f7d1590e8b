// The AdmissionReview envelope (admission.k8s.io/v1): decoding a request body into what the
// checker needs, and encoding the answer. A body that is not a well-formed review is a
// ReviewProblem (the server answers 400 with its message); only the envelope is judged here: the
// object inside is the checker's, and an object it cannot decode is denied there, with the reason.
import type { AdmissionCheckRequest, AdmissionVerdict } from '../../worker/admission-protocol.js';

export const ADMISSION_API_VERSION = 'admission.k8s.io/v1';

/** A request worth checking, or one answered at once (another kind or operation: allowed). */
export type DecodedReview =
  | { readonly ok: true; readonly uid: string; readonly check: AdmissionCheckRequest }
  | { readonly ok: true; readonly uid: string; readonly check: undefined; readonly kind: string }
  | { readonly ok: false; readonly message: string };

/** The resources the webhook checks: group and kind, as `request.kind` names them. */
const CHECKED: readonly { readonly group: string; readonly kind: string }[] = [
  { group: 'networking.k8s.io', kind: 'Ingress' },
  { group: '', kind: 'Secret' },
  { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute' },
  { group: 'gateway.networking.k8s.io', kind: 'Gateway' },
];
const OPERATIONS: ReadonlySet<string> = new Set(['CREATE', 'UPDATE']);

/** Decodes a request body (JSON text) into the request to check. */
export function decodeReview(body: string): DecodedReview {
  let review: unknown;
  try {
    review = JSON.parse(body);
  } catch (error) {
    return problem(`the request body is not JSON (${(error as Error).message})`);
  }
  if (!isRecord(review)) return problem('the request body is not an AdmissionReview object');
  if (review.apiVersion !== ADMISSION_API_VERSION) return problem(`apiVersion ${describe(review.apiVersion)} is not ${ADMISSION_API_VERSION}`);
  if (review.kind !== 'AdmissionReview') return problem(`kind ${describe(review.kind)} is not AdmissionReview`);
  const request = review.request;
  if (!isRecord(request)) return problem('the AdmissionReview has no request');
  const uid = request.uid;
  if (typeof uid !== 'string' || uid === '' || uid.length > 128) return problem(`request.uid ${describe(uid)} is not a UID`);
  const kind = request.kind;
  if (!isRecord(kind) || typeof kind.kind !== 'string' || typeof kind.group !== 'string') return problem('request.kind is not a group/version/kind');
  if (typeof request.operation !== 'string') return problem(`request.operation ${describe(request.operation)} is not an operation`);
  const checked = CHECKED.some((c) => c.group === kind.group && c.kind === kind.kind) && OPERATIONS.has(request.operation);
  if (!checked) return { ok: true, uid, check: undefined, kind: kind.kind };
  const namespace = typeof request.namespace === 'string' ? request.namespace : '';
  return { ok: true, uid, check: { kind: kind.kind, operation: request.operation as AdmissionCheckRequest['operation'], namespace, object: request.object } };
}

/** The AdmissionReview answering `uid` with `verdict`. */
export function encodeReview(uid: string, verdict: AdmissionVerdict): string {
  const status = verdict.allowed ? { code: 200 } : { code: 403, reason: verdict.reason ?? 'Rejected', message: verdict.message ?? '' };
  const response = { uid, allowed: verdict.allowed, status, ...(verdict.warnings.length > 0 ? { warnings: verdict.warnings } : {}) };
  return JSON.stringify({ apiVersion: ADMISSION_API_VERSION, kind: 'AdmissionReview', response });
}

function problem(message: string): DecodedReview {
  return { ok: false, message };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A value for a message: short, and never raw control characters. */
function describe(value: unknown): string {
  const text = value === undefined ? 'undefined' : JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
