// Compile-time preparation of `{{#memo key}}` blocks (and of `{{#memoEach list}}`, whose block is
// a memo block of each element). A memo block's text is cached per key
// object, so it must depend on nothing but that object and the template set's constants;
// otherwise a cached text could go stale and the incremental render would differ from a cold
// one. This walk, run on each template's syntax tree before it is compiled, rejects what could
// reach outside: every `../` path (Handlebars adds a `../` level only when a block's context is
// loosely unequal to the current one, which the template text cannot tell, so no depth is
// provably inside the block; block parameters declared inside it do the job), block parameters
// declared outside it,
// `@root` fields other than `values` and `paths`, @data variables of enclosing blocks, and
// dynamic partials; partials called inside a memo block are checked by the same rules. It also
// gives every memo block an ID (a hidden hash argument) under which the engine caches its text.
// Store reads, `emit` and `warn` are refused at run time instead (see the engine's helpers).

/** The hash argument that carries a memo block's ID. */
export const MEMO_ID = '__memoId';

/** @root fields a memo block may read: both are fixed for a compiled template set. */
const ROOT_FIELDS = new Set(['values', 'paths']);
/** @data variables that the iteration helpers set inside the block. */
const ITERATION_DATA = new Set(['index', 'key', 'first', 'last']);

type Node = hbs.AST.Node;

/** Where a node sits relative to the innermost enclosing memo block. */
interface InMemo {
  /** Whether an `each` inside the memo block sets @index / @key / @first / @last. */
  readonly iterating: boolean;
  /** Block parameters declared inside the memo block. */
  readonly params: ReadonlySet<string>;
  /** The partials being checked, to stop on recursion. */
  readonly partials: readonly string[];
}

/**
 * Checks and numbers the memo blocks of one template (named like `haproxyConfig` or
 * `templateSnippets/backend`). Throws an Error naming the template, line and offending
 * expression. `snippets` are the parsed partials a memo block may call.
 */
export function checkMemoBlocks(program: hbs.AST.Program, template: string, snippets: ReadonlyMap<string, hbs.AST.Program>): void {
  let counter = 0;
  const fail = (node: Node, where: string, message: string): never => {
    throw new Error(`${where}line ${node.loc.start.line}: ${message}`);
  };

  const visitProgram = (body: hbs.AST.Program | undefined, memo: InMemo | null, where: string): void => {
    if (body === undefined || body === null) return;
    for (const statement of body.body) visit(statement, memo, where);
  };

  const visitExpression = (node: Node, memo: InMemo | null, where: string): void => {
    switch (node.type) {
      case 'PathExpression':
        if (memo !== null) checkPath(node as hbs.AST.PathExpression, memo, where);
        return;
      case 'SubExpression': {
        const sub = node as hbs.AST.SubExpression;
        visitExpression(sub.path, memo, where);
        visitCall(sub.params, sub.hash, memo, where);
        return;
      }
      default:
        return;
    }
  };

  const visitCall = (params: readonly hbs.AST.Expression[], hash: hbs.AST.Hash | undefined, memo: InMemo | null, where: string): void => {
    for (const param of params) visitExpression(param, memo, where);
    for (const pair of hash?.pairs ?? []) visitExpression(pair.value, memo, where);
  };

  const checkPath = (path: hbs.AST.PathExpression, memo: InMemo, where: string): void => {
    const head = path.parts[0];
    if (path.data) {
      if (head === 'root') {
        if (!ROOT_FIELDS.has(path.parts[1] ?? '')) {
          fail(path, where, `memo block reads @${path.original.replace(/^@/, '')}; inside a memo block @root offers only values and paths`);
        }
        return;
      }
      if (head !== undefined && ITERATION_DATA.has(head) && memo.iterating) return;
      fail(path, where, `memo block reads ${path.original}, which belongs to a block outside it`);
    }
    if (path.depth > 0) {
      fail(path, where, `memo block reads '${path.original}': '../' is not allowed inside a memo block (name outer values with block parameters declared inside it, e.g. {{#each servers as |server|}})`);
    }
    // A plain name may be a block parameter of an enclosing block outside the memo block.
    if (path.depth === 0 && head !== undefined && outerParams.has(head) && !memo.params.has(head)) {
      fail(path, where, `memo block reads block parameter '${head}' of a block outside it`);
    }
  };

  /** Block parameters declared by the blocks enclosing the current memo block (outside it). */
  let outerParams = new Set<string>();

  const visit = (node: Node, memo: InMemo | null, where: string): void => {
    switch (node.type) {
      case 'MustacheStatement':
      case 'Decorator': {
        const m = node as hbs.AST.MustacheStatement;
        visitExpression(m.path, memo, where);
        visitCall(m.params, m.hash, memo, where);
        return;
      }
      case 'BlockStatement':
      case 'DecoratorBlock': {
        const block = node as hbs.AST.BlockStatement;
        visitExpression(block.path, memo, where);
        visitCall(block.params, block.hash, memo, where);
        const helper = block.path.original;
        const declared = block.program?.blockParams ?? [];
        if ((helper === 'memo' || helper === 'memoEach') && block.path.depth === 0 && !block.path.data) {
          prepare(block);
          // A memo block nested in another is cached on its own key: what the outer block
          // declares (block parameters, an each's @index) lies outside it.
          const saved = outerParams;
          if (memo !== null) outerParams = new Set([...saved, ...memo.params]);
          visitProgram(block.program, { iterating: false, params: new Set(declared), partials: memo?.partials ?? [] }, where);
          outerParams = saved;
          visitProgram(block.inverse, memo, where);
          return;
        }
        if (memo === null) {
          const saved = outerParams;
          outerParams = new Set([...saved, ...declared]);
          visitProgram(block.program, null, where);
          outerParams = saved;
          visitProgram(block.inverse, null, where);
          return;
        }
        const inner: InMemo = {
          ...memo,
          iterating: helper === 'each' ? true : memo.iterating,
          params: new Set([...memo.params, ...declared]),
        };
        visitProgram(block.program, inner, where);
        visitProgram(block.inverse, memo, where);
        return;
      }
      case 'PartialStatement':
      case 'PartialBlockStatement': {
        const partial = node as hbs.AST.PartialStatement;
        visitCall(partial.params, partial.hash, memo, where);
        if (node.type === 'PartialBlockStatement') visitProgram((node as hbs.AST.PartialBlockStatement).program, memo, where);
        if (memo === null) return;
        const name = partial.name.type === 'PathExpression' ? (partial.name as hbs.AST.PathExpression) : null;
        if (name === null || name.data) fail(node, where, 'memo block calls a dynamic partial; only named template snippets can be checked');
        const snippet = snippets.get((name as hbs.AST.PathExpression).original);
        if (snippet === undefined) return; // Handlebars reports the missing partial when it renders.
        const partialName = (name as hbs.AST.PathExpression).original;
        if (memo.partials.includes(partialName)) return;
        // Block parameters do not reach into a partial: a name there is a context property.
        const saved = outerParams;
        outerParams = new Set();
        visitProgram(snippet, { ...memo, params: new Set(), partials: [...memo.partials, partialName] }, `${where}snippet ${partialName}, `);
        outerParams = saved;
        return;
      }
      default:
        return;
    }
  };

  // Memo blocks inside a partial are numbered by the partial's own template walk; a walk through
  // a partial on behalf of a caller finds their ID already there and leaves it.
  const prepare = (block: hbs.AST.BlockStatement): void => {
    if (block.hash?.pairs.some((p) => p.key === MEMO_ID)) return;
    const id = `${template}#${++counter}`;
    const value = { type: 'StringLiteral', value: id, original: id, loc: block.loc } as hbs.AST.StringLiteral;
    const pair = { type: 'HashPair', key: MEMO_ID, value, loc: block.loc } as hbs.AST.HashPair;
    if (block.hash === undefined || block.hash === null) block.hash = { type: 'Hash', pairs: [pair], loc: block.loc } as hbs.AST.Hash;
    else block.hash.pairs.push(pair);
  };

  visitProgram(program, null, '');
}
