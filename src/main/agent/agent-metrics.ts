// AgentMetrics: the agent's own Prometheus metrics on `--metrics-addr`, in a registry of their own:
// applies by answer, HAProxy restarts, and whether it is ready. Labels come from the fixed sets
// below (HTTP statuses the agent answers), never from request data.
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';

const STATUSES = ['200', '400', '401', '409', '412', '413', '422', '500', '502', '503'] as const;

export class AgentMetrics {
  readonly registry = new Registry();
  readonly #applies: Counter<'status'>;
  readonly #restarts: Counter;

  constructor(ready: () => boolean) {
    collectDefaultMetrics({ register: this.registry });
    this.#applies = new Counter({ name: 'haptic_agent_applies_total', help: 'Apply requests by the HTTP status answered', labelNames: ['status'], registers: [this.registry] });
    for (const status of STATUSES) this.#applies.inc({ status }, 0);
    this.#restarts = new Counter({ name: 'haptic_haproxy_restarts_total', help: 'HAProxy restart attempts after unexpected exits', registers: [this.registry] });
    new Gauge({
      name: 'haptic_agent_ready',
      help: '1 while HAProxy serves a config the leader gave',
      registers: [this.registry],
      collect() {
        this.set(ready() ? 1 : 0);
      },
    });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  metrics(): Promise<string> {
    return this.registry.metrics();
  }

  countApply(status: number): void {
    const label = String(status);
    this.#applies.inc({ status: (STATUSES as readonly string[]).includes(label) ? label : '500' });
  }

  countHaproxyRestart(): void {
    this.#restarts.inc();
  }
}
