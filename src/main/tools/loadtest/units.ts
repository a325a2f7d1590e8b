// Rounding and unit conversions shared by the load test's measurements. Histograms are recorded
// in microseconds (perf_hooks histograms hold integers, and renders and probes are sub-ms to
// seconds); reports are in ms and MB, rounded so the JSON stays readable.
import type { RecordableHistogram } from 'node:perf_hooks';

export function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** A duration in ms as a histogram value: whole microseconds, at least 1. */
export function toMicros(ms: number): number {
  return Math.max(1, Math.round(ms * 1000));
}

/** A percentile of a histogram recorded in microseconds, in ms; 0 when empty. */
export function percentileMs(histogram: RecordableHistogram, q: number): number {
  return histogram.count === 0 ? 0 : histogram.percentile(q) / 1000;
}

/** Bytes as MB, to 0.1 MB. */
export function toMb(bytes: number): number {
  return round(bytes / 2 ** 20, 1);
}
