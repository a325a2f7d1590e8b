// The stable reason of an admission denial made from a guard rejection: the same reason the
// rejection's Event carries. One mapping, kept apart so that it can read the rejection's own
// reason code once rejections carry one, instead of deriving it from the scope.
import type { AdmissionReason, Rejection } from '../protocol.js';

/** The reason of a denial for `rejection` (an object or a part of one the render would leave out). */
export function admissionReasonOf(rejection: Rejection): AdmissionReason {
  switch (rejection.scope) {
    case 'annotation':
      return 'InvalidAnnotation';
    case 'tls':
      return 'InvalidTLS';
    case 'endpoint':
      return 'EndpointRefused';
    case 'object':
    case 'path':
      // A TLS Secret the checks refuse is a broken TLS entry for every Ingress that names it.
      return rejection.kind === 'Secret' ? 'InvalidTLS' : 'Rejected';
    default: {
      const never: never = rejection.scope;
      return never;
    }
  }
}
