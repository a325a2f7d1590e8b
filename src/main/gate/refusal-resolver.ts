// One refusal round: which objects to take out of renders after HAProxy refused (or could not
// finish checking) a render. First HAProxy's own `[file:line]` messages, mapped back through the
// render's origin index; when they name no object (a timeout, an error outside any object's
// section), bisection: render without half the namespaces, check, narrow down, then the same over
// the objects of each guilty namespace. Shared by the render gate and `render --check`.
import type { Exclusion, OriginObject, RenderExclusions } from '../../worker/protocol.js';
import type { HaproxyVerdict } from '../haproxy/haproxy-check.js';
import { findCulprits } from './culprit-search.js';
import { reasonOf, refusedObjects, type TraceableRender } from './refusal-origins.js';
import type { CheckableRender } from './render-checker.js';

export type GateRender = CheckableRender & TraceableRender;

export interface RefusalInputs {
  readonly render: GateRender;
  /** HAProxy's output on it (rewritten to the real paths), or the timeout's message. */
  readonly message: string;
  readonly timedOut: boolean;
  /** What the refused render already left out. */
  readonly exclusions: RenderExclusions;
  /** Judges a trial render (the caller applies its timeout: a timeout is a refusal). */
  readonly check?: (render: GateRender, signal: AbortSignal) => Promise<HaproxyVerdict>;
  /** Renders the current stores with these exclusions (trial renders of the bisection). */
  readonly rerender?: (exclusions: RenderExclusions, signal: AbortSignal) => Promise<GateRender>;
  /** Culprits looked for per level of the bisection. @default 4 */
  readonly maxCulprits?: number;
}

export interface RefusalRound {
  /** The objects to take out; empty when nothing could be named. */
  readonly exclusions: readonly Exclusion[];
  readonly method: 'lines' | 'bisection' | 'none' | 'transient';
  /** Trial renders checked by the bisection. */
  readonly checks: number;
}

export async function resolveRefusal(inputs: RefusalInputs, signal: AbortSignal): Promise<RefusalRound> {
  if (!inputs.timedOut) {
    const named = refusedObjects(inputs.message, inputs.render);
    if (named.length > 0) return { exclusions: named.map(({ object, reason }) => exclusionOf(object, reason)), method: 'lines', checks: 0 };
  }
  const { check, rerender } = inputs;
  const objects = inputs.render.origins?.objects ?? [];
  if (check === undefined || rerender === undefined || objects.length === 0) return { exclusions: [], method: 'none', checks: 0 };
  const passes = async (extra: RenderExclusions): Promise<boolean> => {
    signal.throwIfAborted();
    const trial = await rerender({ objects: [...inputs.exclusions.objects, ...extra.objects], namespaces: extra.namespaces ?? [] }, signal);
    return (await check(trial, signal)).ok;
  };
  // A timeout may be the host's load rather than the config: checked once more before anyone is
  // blamed, so an innocent object is never taken out for a slow moment.
  if (inputs.timedOut && (await check(inputs.render, signal)).ok) return { exclusions: [], method: 'transient', checks: 1 };
  const namespaces = [...new Set(objects.map((o) => o.namespace))].sort();
  const byNamespace = await findCulprits(namespaces, (excluded) => passes({ objects: [], namespaces: excluded }), inputs.maxCulprits);
  let checks = byNamespace.checks + (inputs.timedOut ? 1 : 0);
  const reason = bisectionReason(inputs);
  const found: Exclusion[] = [];
  for (const namespace of byNamespace.culprits) {
    const others = byNamespace.culprits.filter((n) => n !== namespace);
    const own = objects.filter((o) => o.namespace === namespace);
    const byObject = await findCulprits(own, (excluded) => passes({ objects: excluded.map((o) => exclusionOf(o, reason)), namespaces: others }), inputs.maxCulprits);
    checks += byObject.checks;
    // An object is taken out only when the render passes without it: when none of the namespace's
    // objects is to blame (something else of the namespace is), nothing of it is.
    if (byObject.resolved) for (const object of byObject.culprits) found.push(exclusionOf(object, reason));
  }
  return { exclusions: found, method: found.length > 0 ? 'bisection' : 'none', checks };
}

function bisectionReason(inputs: RefusalInputs): string {
  if (inputs.timedOut) return `HAProxy could not check the config in time (${inputs.message}); it passes without this object (found by bisection)`;
  const first = inputs.message.split('\n').find((line) => line.includes('[ALERT]')) ?? inputs.message.split('\n')[0] ?? '';
  return `${reasonOf([first.trim()])} (the config passes without this object: found by bisection)`;
}

function exclusionOf(object: OriginObject, reason: string): Exclusion {
  return { kind: object.kind, namespace: object.namespace, name: object.name, version: object.version, reason };
}
