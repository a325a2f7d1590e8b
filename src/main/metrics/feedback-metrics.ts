// Metrics of the Kubernetes-native feedback (Ingress status, Gateway API status and Events), read
// from the components' counters at scrape time and registered on the controller's registry:
// haptic_ingress_status_writes_total{outcome}, haptic_ingress_status_queued,
// haptic_gateway_status_writes_total{outcome}, haptic_gateway_status_queued,
// haptic_kube_events_total{outcome}. No label takes a user-controlled value.
import { Counter, Gauge, type Registry } from 'prom-client';

type WriterStats = { readonly stats: { readonly writes: number; readonly failures: number; readonly queued: number } };

export interface FeedbackStatsSource {
  readonly status?: WriterStats;
  readonly gatewayStatus?: WriterStats;
  readonly events?: { readonly stats: { readonly created: number; readonly patched: number; readonly suppressed: number; readonly failures: number } };
}

export function registerFeedbackMetrics(registry: Registry, source: FeedbackStatsSource): void {
  const registers = [registry];
  const { status, gatewayStatus, events } = source;
  if (status !== undefined) writerMetrics(registers, status, 'ingress', 'Ingress status writes (status.loadBalancer)', 'Ingresses');
  if (gatewayStatus !== undefined) writerMetrics(registers, gatewayStatus, 'gateway', 'Gateway API status writes (GatewayClass, Gateway, HTTPRoute)', 'Gateway API objects');
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

function writerMetrics(registers: Registry[], writer: WriterStats, prefix: string, writes: string, objects: string): void {
  new Counter({
    name: `haptic_${prefix}_status_writes_total`,
    help: `${writes} by outcome: ok, or failed (refused or unreachable; retried).`,
    labelNames: ['outcome'],
    registers,
    collect() {
      this.reset();
      this.inc({ outcome: 'ok' }, writer.stats.writes);
      this.inc({ outcome: 'failed' }, writer.stats.failures);
    },
  });
  new Gauge({
    name: `haptic_${prefix}_status_queued`,
    help: `${objects} whose status is waiting to be written (paced by the token bucket).`,
    registers,
    collect() {
      this.set(writer.stats.queued);
    },
  });
}
