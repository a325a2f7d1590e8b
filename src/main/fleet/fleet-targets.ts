// The DeployTargets of a static fleet (`run --agents`): one AgentTarget per address, sharing one
// ConcurrencyLimit (`--agent-concurrency`), one FencingToken, one RenderDigests (each render
// hashed once for all) and the leader's output paths. Plain HTTP to an address outside loopback is
// refused here unless `insecure`: the renders carry private keys. Discovered Pods
// (`run --haproxy-pods`) get their targets from the same factory, one at a time; a Pod outside
// loopback without TLS or `insecure` gets no private key.
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Clock } from '../core/clock.js';
import { outputPathsIn } from '../output/output-directory.js';
import { isLoopback } from './agent-address.js';
import { AgentClient, type AgentEndpoint } from './agent-client.js';
import { AgentTarget } from './agent-target.js';
import { ConcurrencyLimit } from './concurrency-limit.js';
import { FencingToken } from './fencing-token.js';
import { RenderDigests } from './render-digests.js';

export interface FleetOptions {
  /** The static fleet (`--agents`); empty when the fleet is discovered (`pods`). */
  readonly agents: readonly AgentEndpoint[];
  /** Discover the fleet: the Pods matching `selector` (`--haproxy-pods`), their agents on `port`. */
  readonly pods?: { readonly selector: string; readonly namespace?: string; readonly port: number };
  /** The bearer token (`--agent-token-file`). */
  readonly token: string;
  /** PEM CA bundle (`--agent-ca`): HTTPS, agent certificates verified against it. */
  readonly ca?: string;
  /** Allow plain HTTP, private keys included, to addresses outside loopback (`--agent-insecure`). */
  readonly insecure?: boolean;
  /** Applies in flight across the fleet. @default 16 */
  readonly concurrency?: number;
  /** Per request. @default 10_000 */
  readonly timeoutMs?: number;
}

export interface FleetTargetsContext {
  /** The leader's `--out`: the paths its renders name. */
  readonly out: string;
  /** The current term's epoch. */
  readonly epoch: () => number;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly onRequest?: (kind: string, seconds: number, bytesSent: number) => void;
}

export function fleetTargets(options: FleetOptions, context: FleetTargetsContext): AgentTarget[] {
  if (options.agents.length === 0) throw new TypeError('--agents lists no agent');
  const tls = options.ca !== undefined;
  const insecure = options.insecure ?? false;
  if (!tls && !insecure) {
    const remote = options.agents.find((agent) => !isLoopback(agent.host));
    if (remote !== undefined) {
      throw new TypeError(`agent ${remote.host}:${remote.port} is outside loopback: give --agent-ca to reach it over HTTPS, or --agent-insecure to send renders (private keys included) in clear`);
    }
  }
  const create = agentTargetFactory(options, context);
  return options.agents.map((endpoint) => create(endpoint));
}

/** Makes the AgentTarget of one agent; all of one factory share the concurrency limit, the fence and the render digests. */
export function agentTargetFactory(options: FleetOptions, context: FleetTargetsContext): (endpoint: AgentEndpoint) => AgentTarget {
  const tls = options.ca !== undefined;
  const insecure = options.insecure ?? false;
  const limit = new ConcurrencyLimit(options.concurrency ?? 16);
  const fence = new FencingToken(context.epoch, context.clock);
  const digests = new RenderDigests();
  const paths = { ...outputPathsIn(context.out), runDir: join(context.out, 'run') };
  return (endpoint) =>
    new AgentTarget({
      client: new AgentClient({
        endpoint,
        token: options.token,
        limit,
        ...(options.ca === undefined ? {} : { ca: options.ca }),
        ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
        ...(context.onRequest === undefined ? {} : { onRequest: context.onRequest }),
      }),
      fence,
      paths: { mapsDir: paths.mapsDir, filesDir: paths.filesDir, certsDir: paths.certsDir, runDir: paths.runDir },
      keysAllowed: tls || insecure || isLoopback(endpoint.host),
      logger: context.logger,
      digests,
    });
}
