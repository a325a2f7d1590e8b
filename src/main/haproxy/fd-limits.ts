// How many file descriptors HAProxy 2.6 needs, and whether a maxconn fits the limit it inherits.
// `haproxy -c` accepts any maxconn, but a started HAProxy raises RLIMIT_NOFILE to what it needs
// and, with 2.6's strict limits, exits with "Cannot raise FD limit" when it cannot. This catches
// that before HAProxy is started. The formula is haproxy.c's compute_ideal_maxsock(), checked
// against the numbers 2.6.12 prints (see DESCRIPTOR_OVERHEAD and the e2e tests).
import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { FdLimitError } from '../core/errors.js';
import { fdSettingsOfConfig } from './fd-config-scan.js';

export { fdSettingsOfConfig, type ConfigFdSettings } from './fd-config-scan.js';

/** RLIMIT_NOFILE of this process; children (HAProxy) inherit it. Infinity for "unlimited". */
export interface FdLimit {
  readonly soft: number;
  readonly hard: number;
}

/** What besides connections holds descriptors in a HAProxy process. */
export interface FdShape {
  /** `bind` lines (one listening socket each). */
  readonly listeners: number;
  /** `stats socket` lines. */
  readonly statsSockets: number;
  /** Servers with a health check (one socket each), agent checks, and `port`/`agent-port` settings. */
  readonly checkSockets: number;
  /** `nbthread`; HAProxy 2.6 defaults to the CPUs it may run on, at most 64. */
  readonly threads: number;
  /** Started with -W (HaproxyProcess always is). */
  readonly masterWorker: boolean;
}

/**
 * The `fd-hard-limit` the default template emits (values.fdHardLimit): HAProxy sizes its
 * descriptor table for the lower of this and the host's hard limit, so a host allowing millions
 * of descriptors does not make each HAProxy reserve memory for them. 65,536 leaves room for
 * about 32,000 connections, beyond what one default-configured instance is expected to carry.
 */
export const DEFAULT_FD_HARD_LIMIT = 65_536;

/**
 * Descriptors HAProxy 2.6 reserves besides 2 per connection, from haproxy.c and measured with
 * 2.6.12 (`Cannot raise FD limit to N`, maxconn 10000, 3 binds, 2 threads):
 * - 10 reserved, plus 1 per listener (each `bind` and each `stats socket`);
 * - the CLI frontend's own maxconn (10) once any `stats socket` exists, or always under -W, where
 *   the worker also gets a socket pair to the master (1) and the master's CLI proxy 10 + 1;
 * - 1 per server with a health check, 1 per agent check, 1 per `port`/`agent-port` setting;
 * - 3 per thread (an epoll fd and a wake-up pipe).
 * Measured: plain 20,019 without / 20,030 with a stats socket; -W 20,041 / 20,042 / 20,043 with
 * 0 / 1 / 2 stats sockets; -W with nbthread 1: 20,038 / 20,039; -W with 40 checked servers: 20,081.
 */
export function descriptorOverhead(shape: FdShape): number {
  const cli = shape.masterWorker ? 22 : shape.statsSockets > 0 ? 10 : 0;
  return 10 + shape.listeners + shape.statsSockets + cli + shape.checkSockets + 3 * shape.threads;
}

/** Descriptors HAProxy raises its limit to for `maxconn` (2 per connection: client and server side). */
export function descriptorsNeeded(maxconn: number, shape: FdShape): number {
  return 2 * maxconn + descriptorOverhead(shape);
}

/** The most descriptors HAProxy may use: the hard limit (it raises its soft limit itself), capped by fd-hard-limit. */
export function usableDescriptors(limit: FdLimit, fdHardLimit?: number): number {
  return fdHardLimit !== undefined && fdHardLimit > 0 ? Math.min(limit.hard, fdHardLimit) : limit.hard;
}

/** The maxconn HAProxy derives when none is set (compute_ideal_maxconn, no pipes, no SSL engines); at least 100. */
export function derivedMaxconn(limit: FdLimit, shape: FdShape, fdHardLimit?: number): number {
  const usable = usableDescriptors(limit, fdHardLimit);
  if (!Number.isFinite(usable)) return Number.POSITIVE_INFINITY;
  return Math.max(100, Math.floor((usable - descriptorOverhead(shape)) / 2));
}

/** The CPUs HAProxy would start a thread on (sched affinity), capped at its 64-thread default maximum. */
export function defaultThreads(): number {
  return Math.min(64, availableParallelism());
}

/**
 * A lower bound for the default template's output, from values alone: status, http and https
 * binds and the runtime socket, but no health checks (their number depends on the cluster). For
 * an early `--set maxconn` check; HaproxyProcess checks the rendered config exactly before it starts.
 */
export function defaultTemplateShape(values: Readonly<Record<string, unknown>>): FdShape {
  const socket = values.runtimeSocket;
  return { listeners: 3, statsSockets: typeof socket === 'string' && socket !== '' ? 1 : 0, checkSockets: 0, threads: defaultThreads(), masterWorker: true };
}

/** The shape of a rendered config (threads default to the CPUs HAProxy would use). */
export function fdShapeOfConfig(configText: string, masterWorker = true): FdShape {
  const s = fdSettingsOfConfig(configText);
  return { listeners: s.listeners, statsSockets: s.statsSockets, checkSockets: s.checkSockets, threads: s.threads ?? defaultThreads(), masterWorker };
}

/**
 * Throws FdLimitError when `values.maxconn` is set and HAProxy could not raise its descriptor
 * limit far enough for it; returns the descriptors needed (undefined when maxconn is unset, as
 * HAProxy then derives one that fits). A maxconn that is not a positive integer is a TypeError.
 */
export function checkMaxconnFits(values: Readonly<Record<string, unknown>>, fdLimit: FdLimit, shape: FdShape = defaultTemplateShape(values)): number | undefined {
  const maxconn = optionalPositiveInteger('maxconn', values.maxconn);
  if (maxconn === undefined) return undefined;
  return checkFits(maxconn, fdLimit, shape, optionalPositiveInteger('fdHardLimit', values.fdHardLimit));
}

/** The same check for a rendered config: maxconn, fd-hard-limit and the shape come from its text. */
export function checkConfigFits(configText: string, fdLimit: FdLimit, masterWorker = true): number | undefined {
  const settings = fdSettingsOfConfig(configText);
  if (settings.maxconn === undefined) return undefined;
  return checkFits(settings.maxconn, fdLimit, fdShapeOfConfig(configText, masterWorker), settings.fdHardLimit);
}

/** Parses /proc/<pid>/limits' "Max open files" row. */
export function parseProcLimits(text: string): FdLimit | undefined {
  const match = /^Max open files\s+(\S+)\s+(\S+)/m.exec(text);
  if (match === null) return undefined;
  const value = (s: string): number => (s === 'unlimited' ? Number.POSITIVE_INFINITY : Number(s));
  const soft = value(match[1] as string);
  const hard = value(match[2] as string);
  return Number.isNaN(soft) || Number.isNaN(hard) ? undefined : { soft, hard };
}

/** This process's descriptor limit (what a spawned HAProxy inherits), or undefined where /proc is missing. */
export async function readFdLimit(limitsFile = '/proc/self/limits'): Promise<FdLimit | undefined> {
  try {
    return parseProcLimits(await readFile(limitsFile, 'utf8'));
  } catch {
    return undefined;
  }
}

function checkFits(maxconn: number, fdLimit: FdLimit, shape: FdShape, fdHardLimit: number | undefined): number {
  const needed = descriptorsNeeded(maxconn, shape);
  const usable = usableDescriptors(fdLimit, fdHardLimit);
  if (needed <= usable) return needed;
  const overhead = descriptorOverhead(shape);
  const capped = fdHardLimit !== undefined && fdHardLimit > 0 && fdHardLimit < fdLimit.hard;
  const source = capped ? `fd-hard-limit ${fdHardLimit}` : `the hard RLIMIT_NOFILE of ${fdLimit.hard} (ulimit -Hn)`;
  throw new FdLimitError(
    maxconn,
    needed,
    usable,
    `maxconn ${maxconn} needs ${needed} file descriptors (2 x ${maxconn} + ${overhead} for listeners, CLI sockets, checks and ${shape.threads} threads), ` +
      `but HAProxy may open at most ${usable} (${source}), so it would refuse to start with "Cannot raise FD limit". ` +
      `Set maxconn to at most ${Math.max(0, Math.floor((usable - overhead) / 2))}, leave it unset so HAProxy derives one that fits, or raise the limit.`,
  );
}

function optionalPositiveInteger(name: string, value: unknown): number | undefined {
  if (value === undefined || value === null || value === '' || value === false || value === 0) return undefined;
  const number = typeof value === 'string' ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isInteger(number) || number < 1) {
    throw new TypeError(`values.${name} must be a positive integer, got ${JSON.stringify(value)}`);
  }
  return number;
}
