// A render scope for template engine tests: guarded reads over the given stores, and the
// warnings the render raises collected in an array.
import { GuardedReader } from '../../src/worker/store/guarded-reader.js';
import type { IndexedStore } from '../../src/worker/store/indexed-store.js';
import type { OutputPaths, RenderScope } from '../../src/worker/templates/template-engine.js';

export interface ScopeHarness {
  readonly scope: RenderScope;
  readonly warnings: string[];
}

export function renderScope(lookup: (store: string) => IndexedStore | undefined, values: Record<string, unknown>, paths: OutputPaths): ScopeHarness {
  const warnings: string[] = [];
  const warn = (message: string): void => {
    warnings.push(message);
  };
  return {
    warnings,
    scope: {
      reader: new GuardedReader(lookup, warn),
      values,
      baseline: undefined,
      paths,
      warn,
      emitted: { maps: {}, files: {}, certificates: {} },
    },
  };
}
