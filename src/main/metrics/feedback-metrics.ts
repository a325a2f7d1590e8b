// Metrics of the Kubernetes-native feedback (Ingress status and Events), read from the
// components' counters at scrape time and registered on the controller's registry:
// haptic_ingress_status_writes_total{outcome}, haptic_ingress_status_queued,
// haptic_kube_events_total{outcome}. No label takes a user-controlled value.
import { Counter, Gauge, type Registry } from 'prom-client';

export interface FeedbackStatsSource {
  readonly status?: { readonly stats: { readonly writes: number; readonly failures: number; readonly queued: number } };
  readonly events?: { readonly stats: { readonly created: number; readonly patched: number; readonly suppressed: number; readonly failures: number } };
}

export function registerFeedbackMetrics(registry: Registry, source: FeedbackStatsSource): void {
  const registers = [registry];
  const { status, events } = source;
  if (status !== undefined) {
    new Counter({
      name: 'haptic_ingress_status_writes_total',
      help: 'Ingress status writes (status.loadBalancer) by outcome: ok, or failed (refused or unreachable; retried).',
      labelNames: ['outcome'],
      registers,
      collect() {
        this.reset();
        this.inc({ outcome: 'ok' }, status.stats.writes);
        this.inc({ outcome: 'failed' }, status.stats.failures);
      },
    });
    new Gauge({
      name: 'haptic_ingress_status_queued',
      help: 'Ingresses whose status is waiting to be written (paced by the token bucket).',
      registers,
      collect() {
        this.set(status.stats.queued);
      },
    });
  }
  if (events !== undefined) {
    new Counter({
      name: 'haptic_kube_events_total',
      help: 'Kubernetes Events by outcome: created, patched (a series update), suppressed (rate limit), failed.',
      labelNames: ['outcome'],
      registers,
      collect() {
        this.reset();
        const stats = events.stats;
        this.inc({ outcome: 'created' }, stats.created);
        this.inc({ outcome: 'patched' }, stats.patched);
        this.inc({ outcome: 'suppressed' }, stats.suppressed);
        this.inc({ outcome: 'failed' }, stats.failures);
      },
    });
  }
}
