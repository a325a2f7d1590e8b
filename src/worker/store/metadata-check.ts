// The metadata rules every object follows, whatever its kind: a DNS name and namespace, an RFC
// 3339 creationTimestamp (route ownership is decided by it), labels by Kubernetes' rules, and
// annotations with qualified keys and values that are short, single-line strings passing every
// registered annotation check. A bad label or annotation rejects the object; `annotations:` left
// empty (null) is only dropped; kubectl's last-applied copy of the object is dropped unread.
import type { KubeObject } from '../protocol.js';
import { annotationAllowsLineBreaks, annotationProblem } from './annotation-checks.js';
import { CONTROL, isDnsLabel, isDnsSubdomain, isLabelValue, isQualifiedName, isRecord, isTimestamp, rejected as reject, type Problem } from './field-rules.js';
import { quote } from './log-text.js';
import { MAX_ANNOTATION_VALUE, MAX_ANNOTATIONS_TOTAL, MAX_QUALIFIED_NAME } from './value-limits.js';

/** Annotations no template reads, dropped from the view without a word (the watcher strips it too). */
const IGNORED_ANNOTATIONS = new Set(['kubectl.kubernetes.io/last-applied-configuration']);

type Metadata = KubeObject['metadata'];

/**
 * The metadata as templates may see it (the same object when unchanged), or the object's
 * rejection. Objects of a `namespaced` kind must name their namespace.
 */
export function checkMetadata(object: KubeObject, kind: string, namespaced: boolean): { rejected: Problem } | { metadata: Metadata; dropped: Problem[] } {
  const meta = object.metadata as Record<string, unknown>;
  if (!isDnsSubdomain(meta.name)) return reject('object', `metadata.name ${quote(meta.name)} is not a valid DNS subdomain`);
  if (namespaced && (meta.namespace === undefined || meta.namespace === '')) return reject('object', 'metadata.namespace is missing');
  if (meta.namespace !== undefined && meta.namespace !== '' && !isDnsLabel(meta.namespace)) {
    return reject('object', `metadata.namespace ${quote(meta.namespace)} is not a valid DNS label`);
  }
  if (meta.creationTimestamp !== undefined && !isTimestamp(meta.creationTimestamp)) {
    return reject('object', `metadata.creationTimestamp ${quote(meta.creationTimestamp)} is not an RFC 3339 time`);
  }
  const labels = meta.labels;
  if (labels !== undefined) {
    if (!isRecord(labels)) return reject('object', `metadata.labels is ${quote(labels)}, not a mapping`);
    for (const [key, value] of Object.entries(labels)) {
      if (key.length > MAX_QUALIFIED_NAME || !isQualifiedName(key)) return reject('object', `metadata.labels key ${quote(key)} is not a valid label key`);
      if (!isLabelValue(value)) return reject('object', `metadata.labels[${quote(key)}] value ${quote(value)} is not a valid label value`);
    }
  }
  const dropped: Problem[] = [];
  const annotations = meta.annotations;
  if (annotations === undefined) return { metadata: object.metadata, dropped };
  if (annotations === null) {
    const rest: Metadata = { ...object.metadata };
    delete rest.annotations;
    dropped.push({ scope: 'annotation', reason: 'metadata.annotations is empty (null), not a mapping; ignored' });
    return { metadata: Object.freeze(rest), dropped };
  }
  if (!isRecord(annotations)) return reject('annotation', `metadata.annotations is ${quote(annotations)}, not a mapping`);
  let total = 0;
  let kept: Record<string, string> | undefined;
  for (const [key, value] of Object.entries(annotations)) {
    if (IGNORED_ANNOTATIONS.has(key)) {
      kept ??= { ...(annotations as Record<string, string>) };
      delete kept[key];
      continue;
    }
    if (key.length > MAX_QUALIFIED_NAME || !isQualifiedName(key)) return reject('annotation', `metadata.annotations key ${quote(key)} is not a valid annotation key`);
    if (typeof value !== 'string') return reject('annotation', `${annotationAt(key)} is ${quote(value)}, not a string`);
    // Multi-line annotations (path-rewrite, *-set-header) hold one rule per line; their parsers check each line.
    if (CONTROL.test(annotationAllowsLineBreaks(kind, key) ? value.replace(/\r?\n/g, '') : value)) {
      return reject('annotation', `${annotationAt(key)} ${quote(value)} contains a control character (newline or similar)`);
    }
    if (value.length > MAX_ANNOTATION_VALUE) return reject('annotation', `${annotationAt(key)} is ${value.length} characters long, over the limit of ${MAX_ANNOTATION_VALUE}`);
    total += key.length + value.length;
    if (total > MAX_ANNOTATIONS_TOTAL) return reject('annotation', `metadata.annotations are over ${MAX_ANNOTATIONS_TOTAL} characters in total`);
    const problem = annotationProblem(kind, key, value, object);
    if (problem !== null) return reject('annotation', `${annotationAt(key)} ${quote(value)}: ${problem}`);
  }
  return { metadata: kept === undefined ? object.metadata : Object.freeze({ ...object.metadata, annotations: Object.freeze(kept) }), dropped };
}

/** How a reason names an annotation (spelled out only when one is refused). */
function annotationAt(key: string): string {
  return `metadata.annotations[${quote(key)}]`;
}
