// Refuses a template set before any worker sees it: every template must compile, and a dry render
// against empty stores must succeed (that catches unknown helpers and partials, which Handlebars
// only reports at run time). A worker module that failed at load would make the pool hang.
import { IndexedStore } from '../worker/indexed-store.js';
import type { TemplateSetSource } from '../worker/protocol.js';
import { TemplateEngine } from '../worker/template-engine.js';

export class TemplateSetRejected extends Error {
  constructor(message: string) {
    super(`template set rejected: ${message}`);
    this.name = 'TemplateSetRejected';
  }
}

export function assertTemplateSetRenders(set: TemplateSetSource, engine: TemplateEngine = new TemplateEngine()): void {
  const empty = new Map(set.stores.map((def) => [def.name, new IndexedStore(def.name, def.indexBy)]));
  try {
    engine.compile(set);
    engine.render(
      set,
      {
        reader: {
          list: (name) => empty.get(name)?.list() ?? [],
          fetch: (name, keys) => empty.get(name)?.fetch(keys) ?? [],
          getSingle: (name, keys) => empty.get(name)?.getSingle(keys),
        },
        values: set.values,
        baseline: undefined,
        paths: { mapsDir: '/maps', filesDir: '/files', certsDir: '/certs' },
        warn: () => undefined,
        emitted: { maps: {}, files: {}, certificates: {} },
      },
      0,
    );
  } catch (error) {
    throw new TemplateSetRejected((error as Error).message);
  }
}
