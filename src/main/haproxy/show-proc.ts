// Parses the master CLI's `show proc` into data. Format of HAProxy 2.6 (captured from 2.6.12):
//   #<PID>          <type>          <reloads>       <uptime>        <version>
//   25632           master          2 [failed: 1]   0d00h00m36s     2.6.12-1+deb12u4
//   # workers
//   26279           worker          1               0d00h00m04s     2.6.12-1+deb12u4
//   # programs               (and `# old workers` while an earlier worker still drains)
import { HaproxyCliError } from '../core/errors.js';

export interface ProcEntry {
  readonly pid: number;
  /** For the master: times it was reloaded. For a worker: reloads it has survived (0 = newest). */
  readonly reloads: number;
  readonly uptimeSeconds: number;
  readonly version: string;
}

export interface MasterEntry extends ProcEntry {
  /** Reloads whose new config did not start; the master then keeps the previous worker. */
  readonly failedReloads: number;
}

export interface ProgramEntry extends ProcEntry {
  readonly name: string;
}

export interface ProcSnapshot {
  readonly master: MasterEntry;
  /** Workers of the current generation (one, without nbproc). */
  readonly workers: readonly ProcEntry[];
  /** Workers of earlier generations still finishing their connections. */
  readonly oldWorkers: readonly ProcEntry[];
  readonly programs: readonly ProgramEntry[];
}

type Section = 'master' | 'workers' | 'oldWorkers' | 'programs';

const SECTION_HEADERS: Readonly<Record<string, Section>> = {
  '# workers': 'workers',
  '# old workers': 'oldWorkers',
  '# programs': 'programs',
};

// pid, type (or program name), reloads, optional "[failed: N]", uptime, version (may be "-").
const ROW = /^(\d+)\s+(\S+)\s+(\d+)(?:\s+\[failed:\s*(\d+)\])?\s+(\S+)\s+(\S.*?)\s*$/;

export function parseShowProc(text: string, socketPath = 'master CLI'): ProcSnapshot {
  let section: Section = 'master';
  let master: MasterEntry | undefined;
  const workers: ProcEntry[] = [];
  const oldWorkers: ProcEntry[] = [];
  const programs: ProgramEntry[] = [];
  for (const rawLine of text.split('\n')) {
    const line = rawLine.trim();
    if (line === '' || line.startsWith('#<PID>')) continue;
    const header = SECTION_HEADERS[line];
    if (header !== undefined) {
      section = header;
      continue;
    }
    const match = ROW.exec(line);
    if (match === null) throw new HaproxyCliError(socketPath, 'protocol', `unexpected 'show proc' line: ${JSON.stringify(line.slice(0, 200))}`);
    const [, pid, type, reloads, failed, uptime, version] = match as unknown as [string, string, string, string, string | undefined, string, string];
    const entry: ProcEntry = { pid: Number(pid), reloads: Number(reloads), uptimeSeconds: parseUptime(uptime), version };
    if (section === 'master' && type === 'master') master = { ...entry, failedReloads: Number(failed ?? 0) };
    else if (section === 'workers') workers.push(entry);
    else if (section === 'oldWorkers') oldWorkers.push(entry);
    else if (section === 'programs') programs.push({ ...entry, name: type });
    else throw new HaproxyCliError(socketPath, 'protocol', `'show proc' row outside of a section: ${JSON.stringify(line.slice(0, 200))}`);
  }
  if (master === undefined) throw new HaproxyCliError(socketPath, 'protocol', `'show proc' named no master: ${JSON.stringify(text.slice(0, 200))}`);
  return { master, workers, oldWorkers, programs };
}

/** `0d00h02m07s` → 127; anything else → NaN (the uptime is informative only). */
export function parseUptime(text: string): number {
  const match = /^(\d+)d(\d+)h(\d+)m(\d+)s$/.exec(text);
  if (match === null) return Number.NaN;
  const [, d, h, m, s] = match.map(Number) as [number, number, number, number, number];
  return ((d * 24 + h) * 60 + m) * 60 + s;
}
