// The rig of the Gateway API end-to-end tests: the conformance suite's infra backends (echo
// servers v1, v2, v3 on 127.0.0.2..4) as Services with EndpointSlices, and `gatewayScenario`,
// which renders our GatewayClass, a Gateway `same-namespace` with one HTTP listener on a free
// port and the scenario's objects, runs a real HAProxy on it and hands the body a client;
// `settled`, the conformance suite's rule for a case against a running controller: it passes
// after 3 matching answers in a row within 30 s.
import { join } from 'node:path';
import { expect } from 'vitest';
import type { KubeObject } from '../../src/worker/protocol.js';
import { endpointSlice, service } from './cluster.js';
import { eventually } from './eventually.js';
import { send, type Reply, type RequestOptions } from './e2e-client.js';
import type { EchoFleet, EchoServer } from './e2e-echo.js';
import { renderToDir, withHaproxy, type RenderedDir } from './e2e-render.js';
import { gateway, gatewayClass } from './gateway-objects.js';
import { freePorts } from './haproxy-harness.js';

export const INFRA = 'infra';

export async function startInfraBackends(echoes: EchoFleet): Promise<EchoServer[]> {
  return [await echoes.start('v1', '127.0.0.2'), await echoes.start('v2', '127.0.0.3'), await echoes.start('v3', '127.0.0.4')];
}

/** Services v1, v2, v3 of `ns` (port 80) backed by the echo servers. */
export function infraServices(backends: readonly EchoServer[], ns = INFRA): KubeObject[] {
  return backends.flatMap((b) => [service(ns, b.name), endpointSlice(ns, b.name, [b.host], { name: 'http', port: b.port })]);
}

export type GatewayClient = (request: Omit<RequestOptions, 'port' | 'host'> & { host?: string; port?: number }) => Promise<Reply>;

export interface ScenarioOptions {
  readonly values?: Record<string, unknown>;
  /** Warnings about Gateway API objects the render may give (all others fail the scenario). */
  readonly allowWarnings?: boolean;
}

let counter = 0;

export async function gatewayScenario(
  root: string,
  backends: readonly EchoServer[],
  objects: (port: number) => KubeObject[],
  body: (client: GatewayClient, port: number, rendered: RenderedDir) => Promise<void>,
  options: ScenarioOptions = {},
): Promise<void> {
  const [port] = (await freePorts(1)) as [number];
  const all = [gatewayClass(), gateway(INFRA, 'same-namespace', [{ name: 'http', port }]), ...infraServices(backends), ...objects(port)];
  const rendered = await renderToDir(join(root, `out-${++counter}`), all, options.values ?? {});
  if (options.allowWarnings !== true) expect(rendered.result.warnings.filter((w) => w.includes('HTTPRoute') || w.includes('Gateway'))).toEqual([]);
  await withHaproxy(rendered, () => body((request) => send({ host: 'example.com', port, ...request }), port, rendered));
}

export function expectBackend(reply: Reply, backend: string, path?: string): void {
  expect(reply.status, reply.body).toBe(200);
  expect(reply.echo?.name).toBe(backend);
  if (path !== undefined) expect(reply.echo?.url).toBe(path);
}

/** Answers in a row that make a case pass, and the time they have to come (the conformance suite's rule). */
export const SETTLED_ANSWERS = 3;
export const SETTLED_WITHIN_MS = 30_000;

/**
 * Asks `probe` until it gives SETTLED_ANSWERS matching answers (not undefined) in a row, within
 * SETTLED_WITHIN_MS; returns the last. A probe that throws, or answers undefined, starts the count over.
 */
export async function settled<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  let streak = 0;
  const wrapped = async (): Promise<{ value: T } | undefined> => {
    let value: T | undefined;
    try {
      value = await probe();
    } catch (error) {
      streak = 0;
      throw error;
    }
    streak = value === undefined ? 0 : streak + 1;
    return value !== undefined && streak >= SETTLED_ANSWERS ? { value } : undefined;
  };
  return (await eventually(wrapped, `${SETTLED_ANSWERS} answers in a row: ${what}`, SETTLED_WITHIN_MS, 50)).value;
}
