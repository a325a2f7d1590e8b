// The app, backend name and config reading the Ingress model tests share.
import type { KubeObject } from '../../../src/worker/protocol.js';
import { endpointSlice, ingress, service } from '../../helpers/cluster.js';

/** An Ingress `ns/name` with one rule, a Service `web` (port 80 named http) and its endpoints. */
export function app(spec: Record<string, unknown>, ns = 'shop', name = 'web'): KubeObject[] {
  return [ingress(ns, name, spec), service(ns, 'web'), endpointSlice(ns, 'web', ['10.0.0.1'])];
}

/** `server …` lines of one backend section of a rendered config. */
export function serverLines(config: string, backend: string): string[] {
  const section = config.split(/\n(?=backend |frontend )/).find((s) => s.startsWith(`backend ${backend}\n`));
  if (section === undefined) throw new Error(`backend ${backend} is not in the config`);
  return section
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('server '));
}

/** The backend of `app`'s Ingress shop/web for Service web, port 80. */
export const WEB = 'ing_shop_web_web_80';
