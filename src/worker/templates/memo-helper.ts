// The `{{#memo key}}...{{/memo}}` block helper (and its keyed loop, `{{#memoEach list}}`): renders
// the block with `key` as its context, once per key object: the text is reused for as long as
// `key` lives. The block may read only its
// context, and @root.values / @root.paths (checked when the set is compiled, memo-check.ts);
// store reads, emit and warn throw inside it. A key that is not an object renders the block
// without caching. Each block's body is recorded in the set's MemoCache, so that a block can be
// run again for one key outside a render (MemoCache.rerender).
import type Handlebars from 'handlebars';
import { MEMO_ID } from './memo-check.js';
import { PIECE_MARK } from './output-pieces.js';
import type { RenderScope } from './template-engine.js';

interface MemoOptions {
  data: { scope: RenderScope; root?: unknown };
  hash: Record<string, unknown>;
  fn?: (context: unknown, options?: { data?: unknown }) => string;
  inverse?: (context: unknown) => string;
}

/**
 * Handlebars builds text by concatenation, which V8 keeps as a rope of pieces until something
 * reads it. A cached text is part of every later render's output; flattening it once here saves
 * re-walking its pieces each time the whole output is read (validated, hashed, copied to the
 * main thread). Converting a string to a number is what makes V8 flatten it; the value is unused.
 * A block that holds memo blocks is not flattened: its pieces are their cached texts, flat
 * already, and a flat copy would hold all of them a second time (for a
 * `{{#memo backends}}` over memo blocks, most of the config).
 */
function flatten(text: string): string {
  void Number(text);
  return text;
}

/**
 * A top-level memo block's text, as the caller rendering the config as pieces wants it: a
 * placeholder in the output, the text set aside (output-pieces.ts). Any other block's, as it is.
 */
function placed(scope: RenderScope, id: string, text: string): string {
  if (scope.pieces === undefined || (scope.memoDepth ?? 0) > 0 || scope.pieceIds?.has(id) !== true) return text;
  scope.pieces.push(text);
  return PIECE_MARK;
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

/** The block, its key and its ID, or an Error naming what is wrong with the call. */
function memoCall(helper: string, args: unknown[]): { options: MemoOptions; key: unknown; id: string } {
  const params = args.slice(0, -1);
  const options = args[args.length - 1] as MemoOptions;
  if (options.fn === undefined) throw new Error(`${helper} must be used as a block helper`);
  if (params.length !== 1) throw new Error(`${helper} takes one key ${helper === 'memo' ? 'object' : 'list'}, got ${params.length} arguments`);
  const id = options.hash[MEMO_ID];
  if (typeof id !== 'string') throw new Error(`${helper} block was not prepared by the template engine`);
  return { options, key: params[0], id };
}

/**
 * Registers `memo` and `memoEach` on a Handlebars environment; `scopeOf` reads the render's scope
 * from a helper's options. `{{#memoEach list}}...{{/memoEach}}` is the keyed loop: the text of
 * `{{#memo list}}{{#each this}}...{{/each}}{{/memo}}`, with the block a memo block of each element
 * (its text cached per element object), so a list that differs from the last in a few elements
 * costs those elements and a join, not a run of the block per element. The block is checked as a
 * memo block (memo-check.ts): @index and the like are refused, since a cached element text may
 * not depend on its position. Elements that are not objects are rendered each time.
 */
export function registerMemoHelper(hb: typeof Handlebars, scopeOf: (options: MemoOptions) => RenderScope): void {
  hb.registerHelper('memoEach', function (this: unknown, ...args: unknown[]) {
    const { options, key, id } = memoCall('memoEach', args);
    const scope = scopeOf(options);
    const block = options.fn as NonNullable<MemoOptions['fn']>;
    if (key !== undefined && key !== null && !Array.isArray(key)) throw new Error(`memoEach takes a list, got ${typeof key}`);
    // As `each`: an empty list renders the {{else}} block, if any, in the enclosing context.
    if (key === undefined || key === null || key.length === 0) return options.inverse?.(this) ?? '';
    scope.memo?.record(id, (next, frame) => run(block, next, frame.data as MemoOptions['data']).text);
    // The enclosing memo block, if any, holds this one.
    if ((scope.memoDepth ?? 0) > 0) scope.memoNested = true;
    const lists = scope.memo?.texts(`${id}[]`);
    const whole = lists?.get(key);
    if (whole !== undefined) return placed(scope, id, whole);
    const texts = scope.memo?.texts(id);
    const data = { scope, root: { values: scope.values, paths: scope.paths } };
    const element = (value: unknown): string => {
      const cacheable = texts !== undefined && value !== null && typeof value === 'object';
      let text = cacheable ? texts.get(value) : undefined;
      if (text === undefined) {
        const ran = run(block, value, data);
        text = ran.text;
        if (cacheable) texts.set(value, ran.nested ? text : flatten(text));
      }
      return text;
    };
    const text = scope.memo === undefined ? key.map(element).join('') : scope.memo.keyedText(id, key, element, texts);
    lists?.set(key, text);
    return placed(scope, id, text);
  });
  hb.registerHelper('memo', function (...args: unknown[]) {
    const { options, key, id } = memoCall('memo', args);
    const scope = scopeOf(options);
    const block = options.fn as NonNullable<MemoOptions['fn']>;
    scope.memo?.record(id, (next, frame) => run(block, next, frame.data as MemoOptions['data']).text);
    // The enclosing memo block, if any, holds this one.
    if ((scope.memoDepth ?? 0) > 0) scope.memoNested = true;
    const texts = key !== null && typeof key === 'object' ? scope.memo?.texts(id) : undefined;
    const cached = texts?.get(key as object);
    if (cached !== undefined) return placed(scope, id, cached);
    // A fresh data frame: @index and friends of enclosing blocks are not visible inside.
    const { text, nested } = run(block, key, { scope, root: { values: scope.values, paths: scope.paths } });
    if (texts !== undefined) texts.set(key as object, nested ? text : flatten(text));
    return placed(scope, id, text);
  });
}
