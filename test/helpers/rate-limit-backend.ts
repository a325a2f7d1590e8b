// A bare routing-model backend for the rate-limit table tests: only its name and whether its
// Ingress sets a rate limit matter to RateLimitTables.
import type { Backend } from '../../src/worker/routing/model.js';

export function rateLimitBackend(name: string, rateLimited: boolean): Backend {
  const sslRedirect = { enabled: false, code: 302, port: 443 };
  return Object.freeze({
    name,
    namespace: 'shop',
    ingress: name,
    service: 'web',
    port: '80',
    dns: false,
    options: {},
    ingressOptions: rateLimited ? { sslRedirect, rateLimit: { requests: 10, periodMs: 1000, status: 403 } } : { sslRedirect },
    servers: [],
  } as unknown as Backend);
}
