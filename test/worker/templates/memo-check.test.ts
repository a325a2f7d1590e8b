// checkMemoBlocks on its own: the walk over a parsed template that accepts a memo block reading
// only its key object (and @root.values / @root.paths) and throws, with the line and the reason,
// for any read that could reach outside it. It also tags each memo block with its cache ID.
// memo.test.ts covers the same rules end to end through the TemplateEngine.
import Handlebars from 'handlebars';
import { describe, expect, it } from 'vitest';
import { checkMemoBlocks, MEMO_ID } from '../../../src/worker/templates/memo-check.js';

type Program = ReturnType<typeof Handlebars.parse>;

/** Parses every snippet, as the engine does before it checks any template. */
function parseSnippets(snippets: Record<string, string>): Map<string, Program> {
  return new Map(Object.entries(snippets).map(([name, text]) => [name, Handlebars.parse(text)]));
}

/** Checks `text` as the template `haproxyConfig`; returns the parsed program. */
function check(text: string, snippets: Record<string, string> | Map<string, Program> = {}): Program {
  const program = Handlebars.parse(text);
  checkMemoBlocks(program, 'haproxyConfig', snippets instanceof Map ? snippets : parseSnippets(snippets));
  return program;
}

/** The message checkMemoBlocks throws for `text`; fails the test when it accepts it. */
function rejection(text: string, snippets: Record<string, string> = {}): string {
  try {
    check(text, snippets);
  } catch (error) {
    expect(error).toBeInstanceOf(Error);
    return (error as Error).message;
  }
  throw new Error(`expected the memo check to reject ${JSON.stringify(text)}`);
}

/** The `__memoId` of every memo block in `program`, in document order (nested blocks included). */
function memoIds(program: Program): (string | undefined)[] {
  const ids: (string | undefined)[] = [];
  const walk = (body: Program | undefined): void => {
    for (const node of body?.body ?? []) {
      if (node.type !== 'BlockStatement') continue;
      const block = node as hbs.AST.BlockStatement;
      if (block.path.original === 'memo') {
        const pair = block.hash?.pairs.find((p) => p.key === MEMO_ID);
        ids.push(pair === undefined ? undefined : (pair.value as hbs.AST.StringLiteral).value);
      }
      walk(block.program);
      walk(block.inverse);
    }
  };
  walk(program);
  return ids;
}

describe('checkMemoBlocks: what a memo block may read', () => {
  it('accepts a block that reads only its key, @root.values, @root.paths and what it declares itself', () => {
    const template = [
      '{{#each values.items as |item|}}',
      '{{#memo item}}',
      '{{name}} {{port}} {{@root.values.port}} {{@root.paths.mapsDir}} {{concat name (lower kind) sep=@root.values.sep}}',
      '{{#each servers as |server i|}}{{i}}:{{server.name}} {{@index}}{{@key}}{{#if @first}}^{{/if}}{{#if @last}}${{/if}}{{/each}}',
      '{{#with this as |self|}}{{self.name}}{{/with}}',
      '{{/memo}}',
      '{{/each}}',
    ].join('\n');
    expect(() => check(template)).not.toThrow();
  });

  it('accepts the block parameters the memo block declares on itself', () => {
    expect(() => check('{{#memo values.item as |it|}}{{it.name}}{{/memo}}')).not.toThrow();
  });

  it('accepts, outside any memo block, every read it refuses inside one', () => {
    const template = '{{#each values.items as |item|}}{{../x}} {{item.name}} {{@index}} {{@root.storeVersion}} {{> (lookup . "p")}}{{/each}}';
    expect(() => check(template)).not.toThrow();
  });

  it('accepts a block parameter of an outer block inside the memo block’s else branch', () => {
    // The memo helper never renders an else branch, so nothing read there can go into its cache.
    expect(() => check('{{#each values.items as |item|}}{{#memo this}}x{{else}}{{item.name}} {{@index}}{{/memo}}{{/each}}')).not.toThrow();
  });

  it('accepts an outer block parameter as the key of the memo block', () => {
    expect(() => check('{{#each values.items as |item|}}{{#memo item}}{{name}}{{/memo}}{{/each}}')).not.toThrow();
  });

  it('accepts a name inside the block that an inner block declares again as its own parameter', () => {
    expect(() => check('{{#each values.items as |item|}}{{#memo this}}{{#each list as |item|}}{{item}}{{/each}}{{/memo}}{{/each}}')).not.toThrow();
  });
});

describe('checkMemoBlocks: reads it refuses', () => {
  it("rejects '../', naming the line, the path and the way out", () => {
    expect(rejection('global\n{{#with values}}\n{{#memo item}}{{../x}}{{/memo}}\n{{/with}}')).toBe(
      "line 3: memo block reads '../x': '../' is not allowed inside a memo block (name outer values with block parameters declared inside it, e.g. {{#each servers as |server|}})",
    );
  });

  it("rejects '../' even where it would only climb to the key, from an each inside the block", () => {
    // Handlebars may skip a '../' level when a block keeps its context, so no depth is provably inside.
    expect(rejection('{{#memo values.item}}{{#each list}}{{../name}}{{/each}}{{/memo}}')).toContain("memo block reads '../name'");
  });

  it("rejects '../' in helper arguments, hash values and sub-expressions", () => {
    expect(rejection('{{#memo values.item}}{{concat name ../x}}{{/memo}}')).toContain("'../x'");
    expect(rejection('{{#memo values.item}}{{concat name sep=../sep}}{{/memo}}')).toContain("'../sep'");
    expect(rejection('{{#memo values.item}}{{#if (eq ../mode "tcp")}}t{{/if}}{{/memo}}')).toContain("'../mode'");
  });

  it('rejects a block parameter declared by a block around the memo block', () => {
    expect(rejection('{{#each values.items as |item index|}}\n{{#memo this}}{{index}}{{/memo}}{{/each}}')).toBe(
      "line 2: memo block reads block parameter 'index' of a block outside it",
    );
    expect(rejection('{{#with values as |v|}}{{#memo v.item}}{{#each list}}{{v.port}}{{/each}}{{/memo}}{{/with}}')).toContain(
      "block parameter 'v' of a block outside it",
    );
  });

  for (const data of ['@index', '@key', '@first', '@last']) {
    it(`rejects ${data} of an each around the memo block`, () => {
      expect(rejection(`{{#each values.items}}{{#memo this}}\n{{${data}}}{{/memo}}{{/each}}`)).toBe(
        `line 2: memo block reads ${data}, which belongs to a block outside it`,
      );
    });
  }

  it('rejects iteration data in a block inside the memo block that is not an each', () => {
    expect(rejection('{{#each values.items}}{{#memo this}}{{#with inner}}{{@index}}{{/with}}{{/memo}}{{/each}}')).toContain('@index');
  });

  it('rejects iteration data in the else branch of an each inside the memo block', () => {
    expect(rejection('{{#each values.items}}{{#memo this}}{{#each list}}x{{else}}{{@index}}{{/each}}{{/memo}}{{/each}}')).toContain('@index');
  });

  it('rejects @data variables other than the iteration ones', () => {
    expect(rejection('{{#memo values.item}}{{@scope}}{{/memo}}')).toBe('line 1: memo block reads @scope, which belongs to a block outside it');
  });

  it('rejects @root fields other than values and paths, and @root itself', () => {
    expect(rejection('{{#memo values.item}}\n\n{{@root.storeVersion}}{{/memo}}')).toBe(
      'line 3: memo block reads @root.storeVersion; inside a memo block @root offers only values and paths',
    );
    expect(rejection('{{#memo values.item}}{{#each @root.routing.backends}}{{name}}{{/each}}{{/memo}}')).toContain('@root.routing.backends');
    expect(rejection('{{#memo values.item}}{{json @root}}{{/memo}}')).toContain('memo block reads @root;');
  });

  it('rejects, in a memo block nested in another, a block parameter the outer memo block declares', () => {
    expect(rejection('{{#each values.outers}}{{#memo this}}{{#with label as |f|}}{{#memo @root.values.shared}}{{f}}{{/memo}}{{/with}}{{/memo}};{{/each}}')).toMatch(
      /block parameter 'f' of a block outside it/,
    );
  });

  it('rejects, in a memo block nested in another, iteration data of an each in the outer memo block', () => {
    expect(rejection('{{#memo values.item}}{{#each list}}{{#memo this}}[{{@index}}]{{/memo}}{{/each}}{{/memo}}')).toMatch(/@index, which belongs to a block outside it/);
  });

  it('accepts a nested memo block that reads only what it declares itself', () => {
    expect(() => check('{{#memo values.item}}{{#each list}}{{#memo this}}{{#each servers as |s|}}{{s.name}}{{@index}}{{/each}}{{/memo}}{{/each}}{{/memo}}')).not.toThrow();
  });

  it('rejects a dynamic partial', () => {
    expect(rejection('{{#memo values.item}}\n{{> (lookup . "partial")}}{{/memo}}')).toBe(
      'line 2: memo block calls a dynamic partial; only named template snippets can be checked',
    );
  });

  it('rejects a violation in the arguments of a partial call', () => {
    expect(rejection('{{#each values.items}}{{#memo this}}{{> entry position=@index}}{{/memo}}{{/each}}', { entry: '{{position}}' })).toContain('@index');
  });

  it('reports the first violation in document order', () => {
    expect(rejection('{{#memo values.item}}\n{{@root.storeVersion}}\n{{../x}}\n{{/memo}}')).toMatch(/^line 2: /);
  });
});

describe('checkMemoBlocks: partials called from a memo block', () => {
  it('accepts a snippet that reads its context, @root.values and iteration data of an each inside the block', () => {
    const snippets = { entry: '{{name}} {{@root.values.port}} {{@index}}' };
    expect(() => check('{{#memo values.item}}{{#each list}}{{> entry}}{{/each}}{{/memo}}', snippets)).not.toThrow();
  });

  it('rejects a violation in a snippet, naming the snippet and its line', () => {
    expect(rejection('{{#memo values.item}}{{> entry}}{{/memo}}', { entry: 'name\n{{../x}}' })).toMatch(/^snippet entry, line 2: memo block reads '\.\.\/x'/);
  });

  it('names every snippet on the way to a violation in a snippet called from a snippet', () => {
    const snippets = { outer: '<{{> inner}}>', inner: '\n\n{{@root.storeVersion}}' };
    expect(rejection('{{#memo values.item}}{{> outer}}{{/memo}}', snippets)).toBe(
      'snippet outer, snippet inner, line 3: memo block reads @root.storeVersion; inside a memo block @root offers only values and paths',
    );
  });

  it('reads a name in a snippet as a context property, not as a block parameter of the caller', () => {
    expect(() => check('{{#each values.items as |item|}}{{#memo this}}{{> entry}}{{/memo}}{{/each}}', { entry: '{{item.name}}' })).not.toThrow();
  });

  it('stops at a snippet that calls itself', () => {
    const snippets = { tree: '{{name}}{{#each children}}{{> tree}}{{/each}}' };
    expect(() => check('{{#memo values.root}}{{> tree}}{{/memo}}', snippets)).not.toThrow();
  });

  it('leaves a partial it does not know to the renderer', () => {
    expect(() => check('{{#memo values.item}}{{> missing}}{{/memo}}')).not.toThrow();
  });

  it('does not check the snippets called outside a memo block', () => {
    expect(() => check('{{> entry}}', { entry: '{{../x}} {{@root.storeVersion}} {{@index}}' })).not.toThrow();
  });
});

describe('checkMemoBlocks: memo block IDs', () => {
  it('tags each memo block with an ID made of the template name and its number in document order', () => {
    const program = check('{{#memo values.a}}{{#memo b}}x{{/memo}}{{/memo}}{{#each values.list}}{{#memo this}}y{{/memo}}{{/each}}');
    expect(memoIds(program)).toEqual(['haproxyConfig#1', 'haproxyConfig#2', 'haproxyConfig#3']);
  });

  it('keeps the hash arguments the block already has', () => {
    const program = check('{{#memo values.a mode="x"}}y{{/memo}}');
    const block = program.body[0] as hbs.AST.BlockStatement;
    expect(block.hash.pairs.map((p) => p.key)).toEqual(['mode', MEMO_ID]);
  });

  it('leaves the ID a snippet’s own check gave its memo block when a caller’s walk passes through it', () => {
    const snippets = parseSnippets({ entry: '{{#memo this}}{{name}}{{/memo}}' });
    const entry = snippets.get('entry') as Program;
    checkMemoBlocks(entry, 'templateSnippets/entry', snippets);
    check('{{#memo values.item}}{{> entry}}{{/memo}}', snippets);

    expect(memoIds(entry)).toEqual(['templateSnippets/entry#1']);
  });

  it('tags nothing in a template without memo blocks', () => {
    const program = check('{{#each values.items}}{{name}}{{/each}}');
    expect(JSON.stringify(program)).not.toContain(MEMO_ID);
  });
});
