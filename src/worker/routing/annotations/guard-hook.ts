// Plugs the annotation parsers into the object guard (store/annotation-checks.ts), so a bad value
// rejects its object where every rejection is made and reported: an Ingress with a bad value of
// any annotation here (above all allow, deny and auth) is never served, and a Service with a bad
// value of a Service annotation is rejected likewise. Registered once, when routing is loaded
// (ingress-options.ts imports this module), which every render does before its first guard call.
import type { KubeObject } from '../../protocol.js';
import { registerAnnotationCheck } from '../../store/annotation-checks.js';
import { readAnnotations } from './annotation-reader.js';
import { authProblem } from './auth.js';
import { prefetchRegexes } from './regex-prefetch.js';
import { lookupAnnotation, type AnnotationTarget } from './registry.js';

/** The problem with one annotation of an Ingress or Service, or null when it is fine or not ours. */
export function annotationValueProblem(key: string, value: string, object: KubeObject, kind: string): string | null {
  if (kind !== 'Ingress' && kind !== 'Service') return null;
  const found = lookupAnnotation(key);
  // Unknown, refused and misplaced names are warnings of the routing model, not rejections.
  if (found?.kind !== 'known' || !found.spec.appliesTo.includes(kind)) return null;
  if (!found.spec.multiLine && /[\r\n]/.test(value)) return `${found.spec.name} takes a single line`;
  const parsed = found.spec.parse(value);
  if (!parsed.ok) {
    return found.spec.security ? `${found.spec.name} ${parsed.reason}; the Ingress is rejected rather than served without it` : `${found.spec.name} ${parsed.reason}`;
  }
  if (found.spec.family === 'auth') {
    const namespace = typeof object.metadata?.namespace === 'string' ? object.metadata.namespace : '';
    return authProblem(readAnnotations(object, kind as AnnotationTarget).values, namespace);
  }
  return null;
}

registerAnnotationCheck({
  name: 'haproxy.org annotations',
  kinds: ['Ingress', 'Service'],
  check: annotationValueProblem,
  // Multi-line annotations, and refused ones (a snippet is usually several lines): those are
  // ignored with a warning, and must not cost the object its routes for a line break.
  // Every new regular expression of a batch of Ingresses goes to HAProxy in one run.
  prepare: (objects, kind) => {
    if (kind === 'Ingress') prefetchRegexes(objects);
  },
  allowsLineBreaks: (key) => {
    const found = lookupAnnotation(key);
    return found?.kind === 'refused' || (found?.kind === 'known' && found.spec.multiLine === true);
  },
});
