// A render checked until HAProxy accepts it or no object can be blamed: each refusal round takes
// the objects behind the refusal out (refusal-resolver.ts) and renders again. For one-shot callers
// (`render --check`); the render gate runs the same rounds through the Coordinator instead.
import type { RenderExclusions } from '../../worker/protocol.js';
import type { HaproxyVerdict } from '../haproxy/haproxy-check.js';
import { ObjectExclusions } from './object-exclusions.js';
import { resolveRefusal, type GateRender } from './refusal-resolver.js';

/** Rounds before giving up: each takes at least one object out. @default 32 */
export const MAX_REFUSAL_ROUNDS = 32;

export interface CheckedRender<R extends GateRender> {
  /** The last render: the one HAProxy accepted when `verdict.ok`. */
  readonly render: R;
  readonly verdict: HaproxyVerdict;
  /** Every object taken out, with HAProxy's reason (also among the render's rejections). */
  readonly exclusions: RenderExclusions;
  readonly rounds: number;
}

export async function checkWithExclusions<R extends GateRender>(
  first: R,
  check: (render: GateRender, signal: AbortSignal) => Promise<HaproxyVerdict>,
  rerender: (exclusions: RenderExclusions, signal: AbortSignal) => Promise<R>,
  signal: AbortSignal,
  maxRounds = MAX_REFUSAL_ROUNDS,
): Promise<CheckedRender<R>> {
  const exclusions = new ObjectExclusions();
  let render = first;
  for (let rounds = 0; ; rounds++) {
    const verdict = await check(render, signal);
    if (verdict.ok || !verdict.refused || rounds >= maxRounds) return { render, verdict, exclusions: exclusions.current(), rounds };
    const round = await resolveRefusal({ render, message: verdict.message, timedOut: false, exclusions: exclusions.current(), check, rerender }, signal);
    if (exclusions.add(round.exclusions) === 0) return { render, verdict, exclusions: exclusions.current(), rounds };
    render = await rerender(exclusions.current(), signal);
  }
}
