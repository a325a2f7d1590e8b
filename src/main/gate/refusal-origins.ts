// From HAProxy's refusal back to the objects that caused it. `haproxy -c` names what it refused
// as `[<config>:<line>]` (a directive), `at line <n> of file '<map>'` (a map or pattern-file
// entry), or `in backend '<name>'`; the render's origin index says which object produced that
// config section, or which backend a map entry routes to. Each object gets HAProxy's own
// message as its reason, sanitised (control characters escaped, the PID dropped) and capped.
import { basename } from 'node:path';
import type { AuxiliaryFiles, OriginIndex, OriginObject } from '../../worker/protocol.js';
import { escapeLogText } from '../../worker/store/object-guard.js';

/** The longest reason kept per object, in characters. */
export const MAX_REASON_CHARS = 600;

/** An object HAProxy's message names, with the lines of the message that name it. */
export interface RefusedObject {
  readonly object: OriginObject;
  readonly reason: string;
}

/** What a render must hold for its refusal to be traced: its texts and its origin index. */
export interface TraceableRender {
  readonly haproxyConfig: string;
  readonly auxiliaryFiles: AuxiliaryFiles;
  readonly origins?: OriginIndex | undefined;
}

const CONFIG_LOCATION = /\[([^\]\n]*?):(\d+)\]/g;
const FILE_LOCATION = /at line (\d+) of file '([^'\n]+)'/g;
const NAMED_SECTION = /in (backend|userlist|listen) '([^'\n]+)'/g;

/**
 * The objects HAProxy's output names, each once, in the order first named. Lines that name no
 * object of the index (a frontend, the global section, a file the index does not know) add
 * nothing: when none is left, the caller narrows the refusal down another way.
 */
export function refusedObjects(output: string, render: TraceableRender): RefusedObject[] {
  const origins = render.origins;
  if (origins === undefined || origins.objects.length === 0) return [];
  const found = new Map<number, string[]>();
  for (const raw of output.split('\n')) {
    if (!raw.includes('[ALERT]')) continue;
    const line = raw.trim();
    for (const index of objectsOfLine(line, render, origins)) {
      const lines = found.get(index) ?? [];
      if (lines.length === 0) found.set(index, lines);
      if (!lines.includes(line)) lines.push(line);
    }
  }
  return [...found].map(([index, lines]) => ({ object: origins.objects[index] as OriginObject, reason: reasonOf(lines) }));
}

/** HAProxy's lines as a rejection reason: without the `[ALERT] (pid) : config :` prefix, escaped, capped. */
export function reasonOf(lines: readonly string[]): string {
  const text = lines.map((line) => line.replace(/^\[ALERT\]\s*\(\d+\)\s*:\s*(config\s*:\s*)?/, '')).join('; ');
  const escaped = escapeLogText(text);
  const capped = escaped.length > MAX_REASON_CHARS ? `${escaped.slice(0, MAX_REASON_CHARS)}… (${escaped.length} characters)` : escaped;
  return `HAProxy refused it: ${capped}`;
}

function objectsOfLine(line: string, render: TraceableRender, origins: OriginIndex): Set<number> {
  const objects = new Set<number>();
  // A map or file entry: the entry's line names the backend it routes to.
  let fileEntry = false;
  for (const match of line.matchAll(FILE_LOCATION)) {
    const text = auxiliaryText(render.auxiliaryFiles, match[2] as string);
    if (text === undefined) continue;
    fileEntry = true;
    const entry = lineOf(text, Number(match[1]));
    for (const word of entry?.trim().split(/\s+/) ?? []) {
      const index = objectNamed(origins, word);
      if (index !== undefined) objects.add(index);
    }
  }
  // A directive of the config (when a file entry was named, the directive is only where the file was loaded).
  if (!fileEntry) {
    for (const match of line.matchAll(CONFIG_LOCATION)) {
      if (!isConfigName(match[1] as string)) continue;
      const index = sectionObject(origins, Number(match[2]));
      if (index !== undefined) objects.add(index);
    }
    if (objects.size === 0) {
      for (const match of line.matchAll(NAMED_SECTION)) {
        const index = objectNamed(origins, match[2] as string);
        if (index !== undefined) objects.add(index);
      }
    }
  }
  return objects;
}

function isConfigName(file: string): boolean {
  return file === 'haproxy.cfg' || file.endsWith('/haproxy.cfg') || file.endsWith('.cfg');
}

function objectNamed(origins: OriginIndex, name: string): number | undefined {
  return Object.hasOwn(origins.names, name) ? origins.names[name] : undefined;
}

/** The object of the section holding `line` (binary search over the sections' ranges). */
function sectionObject(origins: OriginIndex, line: number): number | undefined {
  const sections = origins.sections;
  let low = 0;
  let high = sections.length - 1;
  while (low <= high) {
    const mid = (low + high) >> 1;
    const section = sections[mid];
    if (section === undefined) return undefined;
    if (line < section.firstLine) high = mid - 1;
    else if (line > section.lastLine) low = mid + 1;
    else return section.object >= 0 ? section.object : undefined;
  }
  return undefined;
}

/** A map or file of the render by the path HAProxy printed (its directory is the output's). */
function auxiliaryText(aux: AuxiliaryFiles, path: string): string | undefined {
  const name = basename(path);
  const kind = path.includes('/maps/') ? aux.maps : path.includes('/files/') ? aux.files : undefined;
  const text = kind?.[name] ?? aux.maps[name] ?? aux.files[name];
  return typeof text === 'string' ? text : undefined;
}

/** The 1-based line `n` of `text`, found without splitting the whole text. */
function lineOf(text: string, n: number): string | undefined {
  if (!Number.isInteger(n) || n < 1) return undefined;
  let at = 0;
  for (let line = 1; line < n; line++) {
    const next = text.indexOf('\n', at);
    if (next === -1) return undefined;
    at = next + 1;
  }
  const end = text.indexOf('\n', at);
  return text.slice(at, end === -1 ? text.length : end);
}
