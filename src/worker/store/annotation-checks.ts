// The plug-in point for annotation checks. The object guard calls every registered check on every
// annotation of an object of the kinds it names; a check that finds a value bad rejects the
// whole object (scope 'annotation'), so a security annotation with a bad value never leaves its
// object served open. Registering or removing a check starts a new generation: verdicts cached
// under the old set of checks are not reused.
import type { KubeObject } from '../protocol.js';

export interface AnnotationCheck {
  /** A name for messages and for telling checks apart. */
  readonly name: string;
  /** Kinds (of the store the object entered) whose annotations this check reads. @default ['Ingress'] */
  readonly kinds?: readonly string[];
  /**
   * The problem with one annotation, or null when it is fine or not this check's business.
   * Called only with values that already passed the generic rules (a string of at most 4,096
   * characters without control characters). Must be pure and must not throw; a throw counts as
   * a rejection of the object. `kind` is the kind of the store the object entered.
   */
  check(key: string, value: string, object: KubeObject, kind: string): string | null;
  /**
   * Whether the value of `key` may hold line breaks (`\n`, `\r\n`): a value of several lines,
   * one rule per line. Every other control character is still refused, and the check then
   * reads the value with its line breaks. @default never
   */
  allowsLineBreaks?(key: string, kind: string): boolean;
  /**
   * Called with a batch of objects of `kind` about to be checked one by one (every object of a
   * store at its first render, then the ones that changed), so a check can do costly work for
   * all of them at once and find it done in `check`. A throw is ignored.
   */
  prepare?(objects: readonly KubeObject[], kind: string): void;
}

const checks: AnnotationCheck[] = [];
let generation = 0;

/**
 * Adds a check (to the kinds it names) for every render from now on. Returns a function that
 * removes it again.
 * @example registerAnnotationCheck({ name: 'ssl-redirect', check: (key, value) => key === 'haproxy.org/ssl-redirect' && !/^(true|false)$/.test(value) ? 'must be true or false' : null })
 */
export function registerAnnotationCheck(check: AnnotationCheck): () => void {
  if (typeof check.check !== 'function') throw new TypeError(`annotation check ${String(check.name)} has no check function`);
  checks.push(check);
  generation++;
  return () => {
    const at = checks.indexOf(check);
    if (at >= 0) {
      checks.splice(at, 1);
      generation++;
    }
  };
}

/** Bumped by every registration and removal; the guard's verdict cache is kept per generation. */
export function annotationChecksGeneration(): number {
  return generation;
}

/** The first problem a registered check finds with one annotation of an object of `kind`. */
export function annotationProblem(kind: string, key: string, value: string, object: KubeObject): string | null {
  for (const entry of checks) {
    if (!(entry.kinds ?? ['Ingress']).includes(kind)) continue;
    let problem: string | null;
    try {
      problem = entry.check(key, value, object, kind);
    } catch (error) {
      problem = `the ${entry.name} check failed: ${error instanceof Error ? error.message : String(error)}`;
    }
    if (problem !== null) return problem;
  }
  return null;
}

/**
 * Whether a registered check for `kind` lets the value of `key` hold line breaks. The generic
 * rules then refuse control characters other than `\n` and `\r\n` in it, instead of all of them.
 */
export function annotationAllowsLineBreaks(kind: string, key: string): boolean {
  for (const entry of checks) {
    if (!(entry.kinds ?? ['Ingress']).includes(kind) || entry.allowsLineBreaks === undefined) continue;
    try {
      if (entry.allowsLineBreaks(key, kind)) return true;
    } catch {
      // A throwing check allows nothing.
    }
  }
  return false;
}

/** Lets every registered check for `kind` prepare for checking `objects` (see AnnotationCheck.prepare). */
export function prepareAnnotationChecks(kind: string, objects: readonly KubeObject[]): void {
  if (objects.length === 0) return;
  for (const entry of checks) {
    if (!(entry.kinds ?? ['Ingress']).includes(kind) || entry.prepare === undefined) continue;
    try {
      entry.prepare(objects, kind);
    } catch {
      // Preparing is an optimization: each object's check still runs on its own.
    }
  }
}
