// `{{#memoEach list}}`, the keyed loop: the text of an `each` over the list, with each element's
// text cached per element object, checked when the set compiles as a memo block is.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TemplateSetSource } from '../../../src/worker/protocol.js';
import { TemplateEngine, TemplateError } from '../../../src/worker/templates/template-engine.js';
import { renderScope } from '../../helpers/scope.js';

let hashCounter = 0;

function templateSet(haproxyConfig: string): TemplateSetSource {
  return { hash: `memo-each-test-${++hashCounter}`, stores: [], snippets: {}, maps: {}, files: {}, sslCertificates: {}, values: {}, haproxyConfig };
}

function render(engine: TemplateEngine, set: TemplateSetSource, values: Record<string, unknown>): string {
  return engine.render(set, renderScope(() => undefined, values, { mapsDir: '/maps', filesDir: '/files', certsDir: '/certs' }).scope, 1).haproxyConfig;
}

function compileError(text: string): TemplateError {
  try {
    new TemplateEngine().compile(templateSet(text));
  } catch (error) {
    expect(error).toBeInstanceOf(TemplateError);
    return error as TemplateError;
  }
  throw new Error('expected the set to be refused');
}

/** An entry whose `key` counts how often a block reads it. */
function counted(key: string, backend: string, reads: { n: number }): { key: string; backend: string } {
  return {
    get key() {
      reads.n++;
      return key;
    },
    backend,
  };
}

const KEYED = '{{#memoEach values.list}}{{key}} {{backend}}\n{{/memoEach}}';
const EACH = '{{#memo values.list}}{{#each this}}{{key}} {{backend}}\n{{/each}}{{/memo}}';

describe('memoEach, the keyed loop', () => {
  it('renders what an each over the list renders, for every list of entries a sequence of changes gives', () => {
    const entry = fc.record({ key: fc.constantFrom('a', 'b', 'c.example.com/x'), backend: fc.constantFrom('be_1', 'be_2') });
    // Each step keeps, replaces, inserts or drops elements of the previous list (kept ones are the same objects).
    const step = fc.array(fc.oneof(fc.record({ keep: fc.nat() }), fc.record({ fresh: entry })), { maxLength: 8 });
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 8 }), (steps) => {
        const engine = new TemplateEngine();
        const set = templateSet(KEYED);
        let list: { key: string; backend: string }[] = [];
        for (const s of steps) {
          list = s.map((x) => ('keep' in x && list.length > 0 ? (list[x.keep % list.length] as { key: string; backend: string }) : 'fresh' in x ? { ...x.fresh } : { key: 'z', backend: 'be_3' }));
          expect(render(engine, set, { list })).toBe(render(new TemplateEngine(), templateSet(EACH), { list }));
        }
      }),
      { numRuns: 200 },
    );
  });

  it('runs the block only for the elements that are new objects, and not at all for the same list', () => {
    const engine = new TemplateEngine();
    const set = templateSet(KEYED);
    const reads = { n: 0 };
    const list = Array.from({ length: 100 }, (_, i) => counted(`h${i}`, 'be', reads));
    expect(render(engine, set, { list }).split('\n')).toHaveLength(101);
    expect(reads.n).toBe(100);
    reads.n = 0;
    expect(render(engine, set, { list })).toContain('h99 be\n');
    expect(reads.n).toBe(0);
    const next = list.slice();
    next[50] = counted('h50-new', 'be', reads);
    const text = render(engine, set, { list: next });
    expect(reads.n).toBe(1);
    expect(text).toContain('h49 be\nh50-new be\nh51 be\n');
  });

  it('renders a long list after inserts, removals and replacements at its start, middle and end as an each does', () => {
    const engine = new TemplateEngine();
    const set = templateSet(KEYED);
    const entry = (i: number): { key: string; backend: string } => ({ key: `h${i}.test/p`, backend: `be_${i % 7}` });
    let list = Array.from({ length: 200 }, (_, i) => entry(i));
    const edits: ((l: typeof list) => typeof list)[] = [
      (l) => [entry(1000), ...l],
      (l) => l.slice(1),
      (l) => [...l.slice(0, 100), entry(1001), ...l.slice(101)],
      (l) => [...l.slice(0, 50), ...l.slice(52)],
      (l) => [...l, entry(1002), entry(1003)],
      (l) => l.slice(0, -1),
      (l) => [...l.slice(0, 10), { key: 'a-much-longer-key.example.com/with/a/path', backend: 'be_long' }, ...l.slice(10)],
      (l) => l.slice(0, 0),
      () => Array.from({ length: 50 }, (_, i) => entry(i)),
    ];
    for (const edit of edits) {
      list = edit(list);
      expect(render(engine, set, { list })).toBe(render(new TemplateEngine(), templateSet(EACH), { list }));
    }
  });

  it('renders elements that are not objects every time, and the else block for an empty or missing list', () => {
    const engine = new TemplateEngine();
    const set = templateSet('{{#memoEach values.list}}[{{this}}]{{else}}none{{/memoEach}}');
    expect(render(engine, set, { list: ['a', 'b', 3] })).toBe('[a][b][3]');
    expect(render(engine, set, { list: [] })).toBe('none');
    expect(render(engine, set, {})).toBe('none');
  });

  it('refuses, when the set compiles, a block that reads its position or what lies outside the element', () => {
    expect(compileError('{{#memoEach values.list}}{{@index}} {{key}}{{/memoEach}}').message).toContain('memo block reads @index, which belongs to a block outside it');
    expect(compileError('{{#memoEach values.list}}{{../values.x}}{{/memoEach}}').message).toContain("'../' is not allowed inside a memo block");
    expect(compileError('{{#memoEach values.list}}{{@root.storeVersion}}{{/memoEach}}').message).toContain('inside a memo block @root offers only values and paths');
  });

  it('refuses a key that is not a list, naming the helper', () => {
    const error = (() => {
      try {
        render(new TemplateEngine(), templateSet(KEYED), { list: { key: 'a' } });
      } catch (e) {
        return e as Error;
      }
      return undefined;
    })();
    expect(error?.message).toContain('memoEach takes a list, got object');
  });
});
