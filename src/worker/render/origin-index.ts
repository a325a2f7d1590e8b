// Which object each part of a render came from, built after the templates ran: the config's
// sections as line ranges (one entry per section, never per line), each backend (and the userlist
// named after it) tied to the Ingress the routing model built it for, and the backend names that
// map and file entries refer to. The render gate maps HAProxy's `[file:line]` back to an object
// with it; the same ranges are the config's sections keyed by origin. Cost: one scan for the
// lines that open a section, and one map of the model's backends.
import type { KubeObject, OriginIndex, OriginObject, OriginSection } from '../protocol.js';
import type { RoutingModel } from '../routing/model.js';
import type { StoreReader } from '../routing/model-source.js';
import { objectVersion } from '../store/render-exclusions.js';

/** HAProxy's section keywords: a line starting (unindented) with one opens a section. */
const SECTION_KEYWORDS = new Set([
  'global', 'defaults', 'frontend', 'backend', 'listen', 'userlist', 'resolvers', 'peers', 'cache',
  'ring', 'http-errors', 'program', 'mailers', 'fcgi-app', 'crt-store', 'log-forward',
]);

/** A userlist named `<backend>_users` belongs to that backend (the default template set's rule). */
const USERLIST_SUFFIX = '_users';

export interface OriginInputs {
  readonly config: string;
  /** The model, when the templates read it (undefined: no object produced anything). */
  readonly routing: RoutingModel | undefined;
  readonly reader: StoreReader;
  /** The store the model reads Ingresses from. */
  readonly ingressStore: string;
}

export function buildOriginIndex(inputs: OriginInputs): OriginIndex {
  const objects: OriginObject[] = [];
  const names: Record<string, number> = Object.create(null) as Record<string, number>;
  if (inputs.routing !== undefined && inputs.routing.backends.length > 0) {
    const ingresses = new Map<string, KubeObject>();
    for (const ingress of inputs.reader.list(inputs.ingressStore)) ingresses.set(`${ingress.metadata.namespace ?? ''}/${ingress.metadata.name}`, ingress);
    const byIngress = new Map<string, number>();
    for (const backend of inputs.routing.backends) {
      const key = `${backend.namespace}/${backend.ingress}`;
      let index = byIngress.get(key);
      if (index === undefined) {
        const object = ingresses.get(key);
        index = objects.length;
        objects.push({ kind: 'Ingress', namespace: backend.namespace, name: backend.ingress, version: object === undefined ? '' : objectVersion(object) });
        byIngress.set(key, index);
      }
      names[backend.name] = index;
      names[`${backend.name}${USERLIST_SUFFIX}`] = index;
    }
  }
  return { objects, sections: configSections(inputs.config, names), names };
}

/** The config's sections, in order, each from its keyword line to the line before the next one. */
export function configSections(config: string, names: Readonly<Record<string, number>>): OriginSection[] {
  const sections: OriginSection[] = [];
  let line = 1;
  let at = 0;
  let open: { keyword: string; name: string; firstLine: number } | undefined;
  while (at <= config.length) {
    const end = config.indexOf('\n', at);
    const stop = end === -1 ? config.length : end;
    const first = config.charCodeAt(at);
    // Only unindented lines can open a section: a cheap test before any slicing.
    if (stop > at && first !== 32 && first !== 9 && first !== 35) {
      const words = config.slice(at, stop).trim().split(/\s+/);
      const keyword = words[0] ?? '';
      if (SECTION_KEYWORDS.has(keyword)) {
        if (open !== undefined) sections.push(close(open, line - 1, names));
        open = { keyword, name: words[1] ?? '', firstLine: line };
      }
    }
    if (end === -1) break;
    at = end + 1;
    line++;
  }
  if (open !== undefined) sections.push(close(open, line, names));
  return sections;
}

function close(open: { keyword: string; name: string; firstLine: number }, lastLine: number, names: Readonly<Record<string, number>>): OriginSection {
  const owned = open.keyword === 'backend' || open.keyword === 'userlist' || open.keyword === 'listen';
  const object = owned && Object.hasOwn(names, open.name) ? (names[open.name] as number) : -1;
  return { keyword: open.keyword, name: open.name, firstLine: open.firstLine, lastLine, object };
}
