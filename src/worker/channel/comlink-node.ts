// comlink over Node's worker_threads MessagePort, shared by the pool (main side) and the worker.
import * as Comlink from 'comlink/dist/esm/comlink.mjs';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import type { Remote as ComlinkRemote } from 'comlink';
import type { MessagePort } from 'node:worker_threads';

export type Remote<T> = ComlinkRemote<T>;

export function exposeOn<T>(api: T, port: MessagePort): void {
  Comlink.expose(api, nodeEndpoint(port as unknown as Parameters<typeof nodeEndpoint>[0]));
}

export function wrapPort<T>(port: MessagePort): Remote<T> {
  return Comlink.wrap<T>(nodeEndpoint(port as unknown as Parameters<typeof nodeEndpoint>[0]));
}

export function releaseRemote(remote: Remote<unknown>): void {
  remote[Comlink.releaseProxy]();
}
