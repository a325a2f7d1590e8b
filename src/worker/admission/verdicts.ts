// How the admission checks word their answers: a denial names one reason and carries the
// message the render gives (escaped, capped); an allowance carries the render's warnings
// (deduplicated, at most MAX_WARNINGS, each capped). The API server shows both to `kubectl apply`.
import type { Rejection } from '../protocol.js';
import type { AdmissionReason, AdmissionVerdict } from '../admission-protocol.js';
import { escapeLogText } from '../store/log-text.js';
import { reasonCodeOf, rejectionMessage } from '../store/object-guard.js';

/** A denial's message is at most this long; the API server shows it to `kubectl apply`. */
export const MAX_MESSAGE_CHARS = 2048;
/** At most this many warnings, each at most this long. */
export const MAX_WARNINGS = 16;
export const MAX_WARNING_CHARS = 512;

export const ALLOWED: AdmissionVerdict = Object.freeze({ allowed: true, warnings: Object.freeze([]) });

/** Denied with the first rejection's reason; the message lists them all, as the render reports them. */
export function denyRejections(rejections: readonly Rejection[]): AdmissionVerdict {
  const first = rejections[0] as Rejection;
  return deny(reasonCodeOf(first), rejections.map(rejectionMessage).join('; '));
}

export function deny(reason: AdmissionReason, message: string): AdmissionVerdict {
  return { allowed: false, reason, message: cap(escapeLogText(message), MAX_MESSAGE_CHARS), warnings: [] };
}

export function allow(warnings: readonly string[]): AdmissionVerdict {
  return { allowed: true, warnings: capWarnings(warnings) };
}

function capWarnings(warnings: readonly string[]): string[] {
  const unique = [...new Set(warnings)];
  const kept = unique.slice(0, MAX_WARNINGS).map((w) => cap(escapeLogText(w), MAX_WARNING_CHARS));
  if (unique.length > MAX_WARNINGS) kept.push(`and ${unique.length - MAX_WARNINGS} more warnings`);
  return kept;
}

function cap(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
