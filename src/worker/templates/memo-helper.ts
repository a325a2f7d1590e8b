// The `{{#memo key}}...{{/memo}}` block helper: renders the block with `key` as its context, once
// per key object: the text is reused for as long as `key` lives. The block may read only its
// context, and @root.values / @root.paths (checked when the set is compiled, memo-check.ts);
// store reads, emit and warn throw inside it. A key that is not an object renders the block
// without caching. Each block's body is recorded in the set's MemoCache, so that a block can be
// run again for one key outside a render (MemoCache.rerender).
import type Handlebars from 'handlebars';
import { MEMO_ID } from './memo-check.js';
import type { RenderScope } from './template-engine.js';

interface MemoOptions {
  data: { scope: RenderScope; root?: unknown };
  hash: Record<string, unknown>;
  fn?: (context: unknown, options?: { data?: unknown }) => string;
}

/**
 * Handlebars builds text by concatenation, which V8 keeps as a rope of pieces until something
 * reads it. A cached text is part of every later render's output; flattening it once here saves
 * re-walking its pieces each time the whole output is read (validated, hashed, copied to the
 * main thread). Converting a string to a number is what makes V8 flatten it; the value is unused.
 * A block that holds memo blocks is not flattened: its pieces are their cached texts, flat
 * already, and a flat copy would hold all of them a second time (for the default set's
 * `{{#memo backends}}`, most of the config).
 */
function flatten(text: string): string {
  void Number(text);
  return text;
}

/** Runs a memo block's body for `key`, with store reads, emit and warn refused inside it; `nested` tells whether it ran a memo block. */
function run(block: NonNullable<MemoOptions['fn']>, key: unknown, data: MemoOptions['data']): { text: string; nested: boolean } {
  const { scope } = data;
  const outer = scope.memoNested;
  scope.memoNested = false;
  scope.memoDepth = (scope.memoDepth ?? 0) + 1;
  try {
    const text = block(key, { data });
    return { text, nested: scope.memoNested };
  } finally {
    scope.memoDepth--;
    scope.memoNested = outer;
  }
}

/** Registers `memo` on a Handlebars environment; `scopeOf` reads the render's scope from a helper's options. */
export function registerMemoHelper(hb: typeof Handlebars, scopeOf: (options: MemoOptions) => RenderScope): void {
  hb.registerHelper('memo', function (...args: unknown[]) {
    const params = args.slice(0, -1);
    const options = args[args.length - 1] as MemoOptions;
    if (options.fn === undefined) throw new Error('memo must be used as a block helper');
    if (params.length !== 1) throw new Error(`memo takes one key object, got ${params.length} arguments`);
    const id = options.hash[MEMO_ID];
    if (typeof id !== 'string') throw new Error('memo block was not prepared by the template engine');
    const scope = scopeOf(options);
    const key = params[0];
    const block = options.fn;
    scope.memo?.record(id, (next, frame) => run(block, next, frame.data as MemoOptions['data']).text);
    // The enclosing memo block, if any, holds this one.
    if ((scope.memoDepth ?? 0) > 0) scope.memoNested = true;
    const texts = key !== null && typeof key === 'object' ? scope.memo?.texts(id) : undefined;
    const cached = texts?.get(key as object);
    if (cached !== undefined) return cached;
    // A fresh data frame: @index and friends of enclosing blocks are not visible inside.
    const { text, nested } = run(block, key, { scope, root: { values: scope.values, paths: scope.paths } });
    if (texts !== undefined) texts.set(key as object, nested ? text : flatten(text));
    return text;
  });
}
