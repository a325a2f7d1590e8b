// The targets of the scaling curve, each as a ratio or figure measured in one run of bench:scale,
// with `met`. A target whose sizes the run did not include is listed with measured: null. The
// HTTPRoute cluster is compared with the Ingress cluster of the same size (routeTargets).
import type { Row } from './lib.js';

export interface Target {
  readonly target: string;
  readonly limit: string;
  readonly measured: number | null;
  readonly met: boolean | null;
  readonly [key: string]: string | number | boolean | null;
}

const round = (value: number): number => Number(value.toPrecision(3));

/** The row of size `n`, if the run had it. */
function rowOf(rows: readonly Row[], n: number): Row | undefined {
  return rows.find((r) => Number(r.ingresses) === n);
}

function target(name: string, limit: number, measured: number | undefined, unit = '×'): Target {
  const value = measured === undefined || !Number.isFinite(measured) ? null : round(measured);
  return { target: name, limit: `≤ ${limit}${unit === '×' || unit === '' ? unit : ` ${unit}`}`, measured: value, met: value === null ? null : value <= limit };
}

export function scaleTargets(rows: readonly Row[]): Target[] {
  const small = rowOf(rows, 1_000);
  const largest = [...rows].sort((a, b) => Number(b.ingresses) - Number(a.ingresses))[0];
  const out: Target[] = [];
  for (const row of rows.filter((r) => Number(r.ingresses) >= 10_000)) {
    const n = Number(row.ingresses);
    const ratio = (key: string): number | undefined => (small === undefined ? undefined : Number(row[key]) / Number(small[key]));
    out.push(target(`1 Ingress changed at ${n} / the same at 1,000`, 2, ratio('ingressChangeTotalMs')));
    out.push(target(`1 EndpointSlice changed at ${n} / the same at 1,000`, 2, ratio('sliceChangeTotalMs')));
    // Flat in N: the main thread's time per execute against the same at 1,000.
    out.push(target(`main-thread time, 1 EndpointSlice changed at ${n} / the same at 1,000`, 2, ratio('sliceChangeMainThreadMs')));
    if (row.ingressChangeCpuMs !== undefined) out.push(target(`1 Ingress changed at ${n} / the same at 1,000, CPU time (inline)`, 2, ratio('ingressChangeCpuMs')));
  }
  if (largest !== undefined && Number(largest.ingresses) >= 10_000) {
    out.push(target(`1 Ingress changed at ${largest.ingresses} / cold at ${largest.ingresses}`, 0.005, Number(largest.ingressChangeOverCold), ''));
    out.push(target(`main-thread dispatch of a 1-change render at ${largest.ingresses}`, 1, Number(largest.dispatchMs), 'ms'));
    // The whole execute as the main thread sees it, result included: 1 Ingress and 1 EndpointSlice changed.
    out.push(target(`main-thread time of a 1-Ingress-change execute at ${largest.ingresses}`, 1, Number(largest.ingressChangeMainThreadMs), 'ms'));
    out.push(target(`main-thread time of a 1-EndpointSlice-change execute at ${largest.ingresses}`, 1, Number(largest.sliceChangeMainThreadMs), 'ms'));
  }
  if (largest !== undefined && Number(largest.ingresses) >= 10_000 && largest.liveHeapPerIngressKiB !== undefined) {
    const n = largest.ingresses;
    out.push(target(`live heap per Ingress of the rendering worker at ${n}, after a full GC`, 5, Number(largest.liveHeapPerIngressKiB), 'KiB'));
    if (largest.spareLiveHeapPerIngressKiB !== null) {
      out.push(target(`live heap per Ingress of each spare worker at ${n}, after a full GC`, 2, Number(largest.spareLiveHeapPerIngressKiB), 'KiB'));
    }
  }
  const tenK = rowOf(rows, 10_000);
  if (tenK !== undefined) out.push(target('cold render + validate per Ingress at 10,000, in a worker', 0.1, Number(tenK.coldTotalMs) / 10_000, 'ms'));
  return out;
}

/**
 * The HTTPRoute cluster's per-object costs against the Ingress cluster of the same size in the
 * same run: 1 HTTPRoute changed against 1 Ingress changed, 1 EndpointSlice changed in each, and
 * the cold render per object (the same N apps either way, so per object is per row).
 */
export function routeTargets(rows: readonly Row[], routeRows: readonly Row[]): Target[] {
  const out: Target[] = [];
  for (const route of routeRows) {
    const n = Number(route.routes);
    const ingress = rowOf(rows, n);
    const ratio = (routeKey: string, ingressKey: string): number | undefined => (ingress === undefined ? undefined : Number(route[routeKey]) / Number(ingress[ingressKey]));
    out.push(target(`1 HTTPRoute changed / 1 Ingress changed, N=${n}`, 1.5, ratio('routeChangeTotalMs', 'ingressChangeTotalMs')));
    if (route.routeChangeCpuMs !== undefined) out.push(target(`1 HTTPRoute changed / 1 Ingress changed, CPU time (inline), N=${n}`, 1.5, ratio('routeChangeCpuMs', 'ingressChangeCpuMs')));
    out.push(target(`1 EndpointSlice changed, HTTPRoute cluster / Ingress cluster, N=${n}`, 1.5, ratio('sliceChangeTotalMs', 'sliceChangeTotalMs')));
    out.push(target(`cold render + validate per HTTPRoute / per Ingress, N=${n}`, 1.5, ratio('coldTotalMs', 'coldTotalMs')));
  }
  return out;
}
