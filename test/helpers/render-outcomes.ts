// Comparing an incremental render's outcome with a cold one's: the contract of the incremental
// render tests is that an incremental render gives exactly what a fresh engine gives for the same
// stores and baseline (config, every auxiliary file, checksum, warnings in order; or the same
// failure), and that the routing model builder caches one entry per accepted Ingress.
import { GuardedReader } from '../../src/worker/store/guarded-reader.js';
import type { IndexedStore } from '../../src/worker/store/indexed-store.js';
import { acceptsClass, classPolicy, modelOptions, type ClassPolicy } from '../../src/worker/routing/ingress-model.js';
import { guardObject } from '../../src/worker/store/object-guard.js';
import type { AuxiliaryFiles, KubeObject, RenderBaseline, RenderOutcome, TemplateSetSource } from '../../src/worker/protocol.js';

export type Success = Extract<RenderOutcome, { ok: true }>;

/** The first line where two texts differ, or undefined when they are equal. */
export function firstLineDifference(label: string, incremental: string, cold: string): string | undefined {
  if (incremental === cold) return undefined;
  const a = incremental.split('\n');
  const b = cold.split('\n');
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i]) {
      return `${label} line ${i + 1}: incremental ${a[i] === undefined ? '(no line)' : JSON.stringify(a[i])}, cold ${b[i] === undefined ? '(no line)' : JSON.stringify(b[i])}`;
    }
  }
  return `${label}: texts differ`;
}

function filesDifference(incremental: AuxiliaryFiles, cold: AuxiliaryFiles): string | undefined {
  for (const kind of ['maps', 'files', 'certificates'] as const) {
    const names = [...new Set([...Object.keys(incremental[kind]), ...Object.keys(cold[kind])])].sort();
    for (const name of names) {
      const a = incremental[kind][name];
      const b = cold[kind][name];
      if (a === undefined || b === undefined) return `${kind}/${name}: only the ${a === undefined ? 'cold' : 'incremental'} render has it`;
      const difference = firstLineDifference(`${kind}/${name}`, a, b);
      if (difference !== undefined) return difference;
    }
  }
  return undefined;
}

function warningsDifference(incremental: readonly string[], cold: readonly string[]): string | undefined {
  return firstLineDifference('warnings', incremental.join('\n'), cold.join('\n'));
}

export function summary(outcome: RenderOutcome): string {
  return outcome.ok ? 'ok' : `${outcome.phase} failure: ${outcome.message}`;
}

/** A readable description of the first difference between two outcomes, or undefined. */
export function outcomeDifference(incremental: RenderOutcome, cold: RenderOutcome): string | undefined {
  if (incremental.ok !== cold.ok) return `incremental ${summary(incremental)}; cold ${summary(cold)}`;
  if (!incremental.ok && !cold.ok) {
    if (incremental.phase !== cold.phase) return `failure phase: incremental ${incremental.phase}, cold ${cold.phase}`;
    return (
      firstLineDifference('failure message', incremental.message, cold.message) ?? warningsDifference(incremental.warnings, cold.warnings)
    );
  }
  const a = incremental as Success;
  const b = cold as Success;
  return (
    firstLineDifference('haproxy.cfg', a.haproxyConfig, b.haproxyConfig) ??
    filesDifference(a.auxiliaryFiles, b.auxiliaryFiles) ??
    (a.checksum === b.checksum ? undefined : `checksum: incremental ${a.checksum}, cold ${b.checksum}`) ??
    warningsDifference(a.warnings, b.warnings) ??
    originsDifference(a, b)
  );
}

/** The origin index (objects, names, sections) of an incremental render against a cold one's. */
function originsDifference(a: Success, b: Success): string | undefined {
  const view = (s: Success): string => JSON.stringify({ objects: s.origins?.objects, names: { ...s.origins?.names }, sections: s.origins?.sections });
  const [ia, ib] = [view(a), view(b)];
  return ia === ib ? undefined : firstLineDifference('origins', ia.replaceAll('},', '},\n'), ib.replaceAll('},', '},\n'));
}

/** The outcome without its timings, for deep equality. */
export function comparable(outcome: RenderOutcome): unknown {
  if (!outcome.ok) return { ok: false, phase: outcome.phase, message: outcome.message, warnings: outcome.warnings };
  return { ok: true, haproxyConfig: outcome.haproxyConfig, auxiliaryFiles: outcome.auxiliaryFiles, checksum: outcome.checksum, warnings: outcome.warnings };
}

export function asBaseline(outcome: Success): RenderBaseline {
  return { haproxyConfig: outcome.haproxyConfig, auxiliaryFiles: outcome.auxiliaryFiles };
}

/** Whether the routing model builder accepts this Ingress: the guard passes it and its class is ours. */
function accepted(object: KubeObject, classes: ClassPolicy): boolean {
  return guardObject(object).ok && acceptsClass(object, classes);
}

export function acceptedIngresses(stores: ReadonlyMap<string, IndexedStore>, set: TemplateSetSource): number {
  const classes = classPolicy(new GuardedReader((name) => stores.get(name), () => undefined), modelOptions(set.values));
  return (stores.get('ingresses')?.list() ?? []).filter((o) => accepted(o, classes)).length;
}
