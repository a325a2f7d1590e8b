// The config rendered as pieces (output-pieces.ts): its top-level memo blocks' texts set aside and
// put back into the frame, which must give exactly what rendering it whole gives.
import fc from 'fast-check';
import Handlebars from 'handlebars';
import { describe, expect, it } from 'vitest';
import type { TemplateSetSource } from '../../../src/worker/protocol.js';
import { checkMemoBlocks, MEMO_ID } from '../../../src/worker/templates/memo-check.js';
import { OutputPieces, piecePlaces } from '../../../src/worker/templates/output-pieces.js';
import { TemplateEngine } from '../../../src/worker/templates/template-engine.js';
import { renderScope } from '../../helpers/scope.js';

let hashCounter = 0;
const PATHS = { mapsDir: '/maps', filesDir: '/files', certsDir: '/certs' };

function templateSet(haproxyConfig: string, snippets: Record<string, string> = {}): TemplateSetSource {
  return { hash: `output-pieces-test-${++hashCounter}`, stores: [], snippets, maps: {}, files: {}, sslCertificates: {}, values: {}, haproxyConfig };
}

/** The same template rendered whole: called as a snippet, none of its memo blocks is a piece. */
function wholeSet(template: string): TemplateSetSource {
  return templateSet('{{> body}}', { body: template });
}

function render(engine: TemplateEngine, set: TemplateSetSource, values: Record<string, unknown>): { config: string; warnings: string[]; emitted: Record<string, string> } {
  const harness = renderScope(() => undefined, values, PATHS);
  const output = engine.render(set, harness.scope, 1);
  return { config: output.haproxyConfig, warnings: harness.warnings, emitted: output.auxiliaryFiles.files };
}

function placesOf(text: string): string[] {
  const program = Handlebars.parse(text);
  checkMemoBlocks(program, 'haproxyConfig', new Map());
  return [...piecePlaces(program, MEMO_ID)].sort();
}

/** Templates with top-level memo blocks in every place the walk tells apart. */
const TEMPLATES = [
  'head\n{{#memo values.a}}a={{name}}\n{{/memo}}mid {{values.n}}\n{{#memo values.b}}b={{name}}{{/memo}}tail\n',
  '{{#with values}}{{#if flag}}{{#memo a}}[{{name}}]{{/memo}}{{else}}{{#memo b}}<{{name}}>{{/memo}}{{/if}}{{/with}}',
  '{{#each values.list}}{{#memo this}}{{name}};{{/memo}}{{/each}}|{{#memoEach values.list}}{{name}},{{/memoEach}}',
  '{{#indent 2}}{{#memo values.a}}x\n{{name}}\n{{/memo}}{{/indent}}{{#memo values.b}}{{#memo this}}{{name}}{{/memo}}{{/memo}}',
  '{{#unless values.flag}}{{#memo values.a}}{{name}}{{/memo}}{{/unless}}{{#emit "files" "f"}}{{#memo values.b}}{{name}}{{/memo}}{{/emit}}',
];

describe('the config rendered as pieces', () => {
  it('places only memo blocks outside other memo blocks and under if, unless, each and with alone', () => {
    expect(placesOf(TEMPLATES[1] as string)).toEqual(['haproxyConfig#1', 'haproxyConfig#2']);
    expect(placesOf(TEMPLATES[3] as string)).toEqual(['haproxyConfig#2']);
    expect(placesOf(TEMPLATES[4] as string)).toEqual(['haproxyConfig#1']);
    expect(placesOf('{{#memo values.a}}{{/memo}}{{> snippet}}')).toEqual(['haproxyConfig#1']);
  });

  it('renders what the template called as a snippet (never in pieces) renders on a fresh engine, over any sequence of values that keep, replace or change their objects', () => {
    const item = fc.record({ name: fc.constantFrom('x', 'y', 'z\n'), fresh: fc.boolean() });
    const step = fc.record({ a: item, b: item, flag: fc.boolean(), n: fc.nat(3), list: fc.array(item, { maxLength: 4 }) });
    fc.assert(
      fc.property(fc.constantFrom(...TEMPLATES), fc.array(step, { minLength: 1, maxLength: 6 }), (template, steps) => {
        const engine = new TemplateEngine();
        const set = templateSet(template);
        const kept = new Map<string, { name: string }>();
        // A name not fresh is the object the last step had for it: the memo blocks' texts are reused.
        const objectOf = (x: { name: string; fresh: boolean }): { name: string } => {
          const known = kept.get(x.name);
          if (!x.fresh && known !== undefined) return known;
          const made = { name: x.name };
          kept.set(x.name, made);
          return made;
        };
        for (const s of steps) {
          const values = { a: objectOf(s.a), b: objectOf(s.b), flag: s.flag, n: s.n, list: s.list.map(objectOf) };
          expect(render(engine, set, values)).toEqual(render(new TemplateEngine(), wholeSet(template), values));
        }
      }),
      { numRuns: 150 },
    );
  });

  it('renders a config whose own text holds the placeholder character whole, reporting its warnings once', () => {
    const template = '{{warn "careful"}}{{values.raw}}{{#memo values.a}}{{name}}{{/memo}}{{values.raw}}';
    const values = { raw: 'q\u0000r', a: { name: 'n' } };
    const engine = new TemplateEngine();
    const set = templateSet(template);
    for (let i = 0; i < 2; i++) {
      const out = render(engine, set, values);
      expect(out.config).toBe('q\u0000rnq\u0000r');
      expect(out.warnings).toEqual(['careful']);
    }
  });
});

describe('OutputPieces', () => {
  it('puts each piece in its placeholder, and refuses a frame with another count of them', () => {
    const pieces = new OutputPieces();
    expect(pieces.assemble('a\u0000b\u0000c', ['1', '2'])).toBe('a1b2c');
    expect(pieces.assemble('a\u0000b\u0000c', ['1', '3'])).toBe('a1b3c');
    expect(pieces.assemble('a\u0000b\u0000c', ['1'])).toBeUndefined();
    expect(pieces.assemble('a\u0000b\u0000c', ['1', '3'])).toBe('a1b3c');
  });
});
