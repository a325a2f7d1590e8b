// A deployment to make, as the InstanceDeployer plans it: a render and why it goes out.
import type { EventEnvelope } from '../events/events.js';
import type { DeployableRender } from './deploy-target.js';

/** A deployment to make. */
export interface Job {
  readonly render: DeployableRender;
  readonly storeVersion: number | undefined;
  /** `deployment.completed.reason`: the render's trigger, `drift_prevention` or `revert`. */
  readonly reason: string;
  readonly cause: Pick<EventEnvelope, 'eventId' | 'correlationId'>;
  /** Reload even when nothing changed (drift prevention). */
  readonly force: boolean;
  /** Known good (a revert target): no gate verdict needed. */
  readonly trusted: boolean;
  /** The runtime part of a mixed change went out; the reload remains. */
  readonly runtimeDone: boolean;
  /**
   * The checksum `deployment.completed` names when `render` is a view of another render (a
   * passed render reloaded with newer server slots names the passed render: what it serves).
   */
  readonly names?: string;
}

/** A job for `render`, neither forced nor trusted. */
export function jobFor(render: DeployableRender, reason: string, cause: Pick<EventEnvelope, 'eventId' | 'correlationId'>): Job {
  return { render, storeVersion: undefined, reason, cause, force: false, trusted: false, runtimeDone: false };
}
