// Measures the main event loop over a flood: event-loop delay (percentiles and max, net of the
// monitor's resolution), utilisation, and the max delay per SERIES_WINDOW_MS window for the
// chart. It wraps the churn, so the measurement spans exactly its start to its last change.
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import type { SyntheticChurn } from '../../sources/synthetic/synthetic-churn.js';
import { round } from './units.js';

/** Sampling interval of the event-loop delay monitor; reported delays are net of it. */
const ELD_RESOLUTION_MS = 1;
export const SERIES_WINDOW_MS = 250;
const MAX_SERIES_POINTS = 20_000;

export interface FloodMeasurement {
  readonly floodMs: number;
  /** performance.now() right after the flood's last change. */
  readonly lastChangeAt: number;
  readonly eldP50Ms: number;
  readonly eldP99Ms: number;
  readonly eldMaxMs: number;
  readonly elu: number;
  /** One point per window: its end (ms since the flood started) and its max delay. */
  readonly series: readonly { readonly tMs: number; readonly eldMaxMs: number }[];
}

/**
 * Runs `churn` until its last change and measures the main event loop meanwhile. The churn
 * applies every change due by each tick, so a tick that fires late (an inline render held the
 * loop) catches up, as a watcher would after a stall: both modes apply the same changes.
 */
export async function measureFlood(churn: Pick<SyntheticChurn, 'start'>): Promise<FloodMeasurement> {
  const eld = monitorEventLoopDelay({ resolution: ELD_RESOLUTION_MS });
  const eldWindow = monitorEventLoopDelay({ resolution: ELD_RESOLUTION_MS });
  const series: { tMs: number; eldMaxMs: number }[] = [];
  let started = performance.now();
  const closeWindow = (final = false): void => {
    const point = { tMs: round(performance.now() - started, 0), eldMaxMs: round(netDelayMs(eldWindow.max), 2) };
    eldWindow.reset();
    const last = series.at(-1);
    // A sliver of a window at the end joins the previous one rather than plotting a stray point.
    if (final && last !== undefined && point.tMs - last.tMs < SERIES_WINDOW_MS / 2) {
      last.tMs = point.tMs;
      last.eldMaxMs = Math.max(last.eldMaxMs, point.eldMaxMs);
    } else if (series.length < MAX_SERIES_POINTS) {
      series.push(point);
    }
  };
  let windows: NodeJS.Timeout | undefined;
  try {
    eld.enable();
    eldWindow.enable();
    const eluStart = performance.eventLoopUtilization();
    started = performance.now();
    windows = setInterval(() => closeWindow(), SERIES_WINDOW_MS);
    const lastChangeAt = await churn.start();
    const floodMs = performance.now() - started;
    const elu = performance.eventLoopUtilization(eluStart).utilization;
    clearInterval(windows);
    closeWindow(true);
    return {
      floodMs,
      lastChangeAt,
      eldP50Ms: round(netDelayMs(eld.percentile(50)), 2),
      eldP99Ms: round(netDelayMs(eld.percentile(99)), 2),
      eldMaxMs: round(netDelayMs(eld.max), 2),
      elu: round(elu, 4),
      series,
    };
  } finally {
    clearInterval(windows);
    eld.disable();
    eldWindow.disable();
  }
}

/** A monitor's delay (ns) in ms, net of the monitor's own sampling interval. */
function netDelayMs(nanoseconds: number): number {
  return Math.max(0, nanoseconds / 1e6 - ELD_RESOLUTION_MS);
}
