// The template engine: one Handlebars environment per worker (or per inline pipeline), with
// `noEscape` because HTML escaping corrupts HAProxy ACLs, and prototype access left blocked.
// Template sets are compiled once and cached by content hash (bounded). Helpers reach the
// current render's stores, baseline and warnings through Handlebars' @data, never through globals.
// Renders are incremental: each compiled set keeps a routing model builder that reuses what
// unchanged Ingresses contributed, and `{{#memo obj}}` blocks reuse their text for as long as
// `obj` (a model object that keeps its identity while its content is unchanged) lives.
import Handlebars from 'handlebars';
import { join } from 'node:path/posix';
import { modelOptions, type RoutingModel } from '../routing/model.js';
import { RoutingBuilder } from '../routing/routing-builder.js';
import type { ModelSource } from '../routing/model-source.js';
import { checkMemoBlocks, MEMO_ID } from './memo-check.js';
import { MemoCache } from './memo-cache.js';
import { registerMemoHelper } from './memo-helper.js';
import { OutputPieces, piecePlaces } from './output-pieces.js';
import { httpResourceContent } from './http-resource-helper.js';
import { BACKEND_LINE_HELPERS } from './backend-line-helpers.js';
import type { AuxiliaryFiles, KubeObject, OutputPaths, RenderBaseline, TemplateSetSource } from '../protocol.js';
import type { Warn } from '../routing/findings.js';

type HandlebarsEnv = typeof Handlebars;
type Template = Handlebars.TemplateDelegate;

/** A template name plus its compiled function. Names read like `maps/host-exact.map`. */
interface CompiledSet {
  readonly hash: string;
  readonly haproxyConfig: Template;
  readonly snippets: Record<string, Template>;
  readonly maps: [string, Template][];
  readonly files: [string, Template][];
  readonly certificates: [string, Template][];
  /** The routing model builder of this set (its options come from the set's values). */
  readonly builder: RoutingBuilder;
  /** Text of each memo block by key object, and the blocks themselves. */
  readonly memo: MemoCache;
  /** The config's memo blocks that are rendered as pieces, and the last assembly of them (output-pieces.ts). */
  readonly pieceIds: ReadonlySet<string>;
  readonly pieces: OutputPieces;
}

/** Per-render state that helpers read through `@scope`. */
export interface RenderScope {
  readonly reader: ModelSource;
  readonly values: Readonly<Record<string, unknown>>;
  readonly baseline: RenderBaseline | undefined;
  readonly paths: OutputPaths;
  /** Warnings of the render; the routing model adds a finding to those that report a rejection. */
  readonly warn: Warn;
  /** Files emitted with the `emit` block helper, by kind. */
  readonly emitted: { maps: Record<string, string>; files: Record<string, string>; certificates: Record<string, string> };
  routing?: RoutingModel;
  /** Set by the engine: the set's memo cache, and how many memo blocks are being rendered. */
  memo?: MemoCache;
  memoDepth?: number;
  /** Set by the memo helper: whether the memo block being rendered holds another memo block. */
  memoNested?: boolean;
  /** Set by the engine while the config renders as pieces: the memo blocks placed as pieces, and their texts in order. */
  pieceIds?: ReadonlySet<string>;
  pieces?: string[];
  /** Set by the engine: the stores templates read themselves (`list`, `fetch`, `getSingle`), not through the model. */
  templateReads?: Set<string>;
}

export type { OutputPaths } from '../protocol.js';

export interface RenderedOutput {
  readonly haproxyConfig: string;
  readonly auxiliaryFiles: AuxiliaryFiles;
}

/** A template that failed to compile or render, named as `<section>/<name>`. */
export class TemplateError extends Error {
  constructor(readonly template: string, message: string) {
    super(`template ${template}: ${message}`);
    this.name = 'TemplateError';
  }
}

/** Entries of maps/files/sslCertificates whose key is `*` only emit files (see `emit`). */
export const GENERATOR_KEY = '*';

const MAX_CACHED_SETS = 4;

export function outputPaths(values: Readonly<Record<string, unknown>>): OutputPaths {
  return {
    mapsDir: String(values.mapsDir ?? '/etc/haproxy/maps'),
    filesDir: String(values.filesDir ?? '/etc/haproxy/files'),
    certsDir: String(values.certsDir ?? '/etc/haproxy/certs'),
  };
}

export class TemplateEngine {
  readonly #hb: HandlebarsEnv;
  /** Insertion-ordered: the oldest set is evicted first. */
  readonly #compiled = new Map<string, CompiledSet>();

  constructor() {
    this.#hb = Handlebars.create();
    registerHelpers(this.#hb);
  }

  get cachedSets(): number {
    return this.#compiled.size;
  }

  /** Compiles (or fetches from cache) every template of the set; throws TemplateError. */
  compile(set: TemplateSetSource): CompiledSet {
    const cached = this.#compiled.get(set.hash);
    if (cached !== undefined) return cached;
    // Parse everything first: Handlebars compiles lazily and would report syntax errors at first
    // use, and memo blocks are checked against the snippets they call.
    const parse = (name: string, text: string): hbs.AST.Program => {
      try {
        return this.#hb.parse(text);
      } catch (error) {
        throw new TemplateError(name, (error as Error).message);
      }
    };
    const snippetAsts = new Map<string, hbs.AST.Program>();
    for (const name of Object.keys(set.snippets).sort()) snippetAsts.set(name, parse(`templateSnippets/${name}`, set.snippets[name] as string));
    let pieceIds: ReadonlySet<string> = new Set();
    const compile = (name: string, ast: hbs.AST.Program): Template => {
      try {
        checkMemoBlocks(ast, name, snippetAsts);
        if (name === 'haproxyConfig') pieceIds = piecePlaces(ast, MEMO_ID);
        return this.#hb.compile(ast, { noEscape: true, strict: false, knownHelpersOnly: false });
      } catch (error) {
        throw error instanceof TemplateError ? error : new TemplateError(name, (error as Error).message);
      }
    };
    const entries = (section: string, record: Readonly<Record<string, string>>): [string, Template][] =>
      Object.keys(record)
        .sort()
        .map((name) => [name, compile(`${section}/${name}`, parse(`${section}/${name}`, record[name] as string))]);
    const snippets: Record<string, Template> = {};
    for (const [name, ast] of snippetAsts) snippets[name] = compile(`templateSnippets/${name}`, ast);
    const compiled: CompiledSet = {
      hash: set.hash,
      haproxyConfig: compile('haproxyConfig', parse('haproxyConfig', set.haproxyConfig)),
      snippets,
      maps: entries('maps', set.maps),
      files: entries('files', set.files),
      certificates: entries('sslCertificates', set.sslCertificates),
      builder: new RoutingBuilder(modelOptions(set.values), set.values),
      memo: new MemoCache(),
      pieceIds,
      pieces: new OutputPieces(),
    };
    this.#compiled.set(set.hash, compiled);
    while (this.#compiled.size > MAX_CACHED_SETS) this.#compiled.delete(this.#compiled.keys().next().value as string);
    return compiled;
  }

  /** The memo blocks of a compiled set (compiled now if it is not cached). */
  memoOf(set: TemplateSetSource): MemoCache {
    return this.compile(set).memo;
  }

  /**
   * Compiles the set and renders it once against empty stores. Handlebars compiles lazily and
   * reports unknown helpers only at run time, so this is what proves a set usable; it also
   * leaves the compiled templates warm for the first real render.
   */
  dryRun(set: TemplateSetSource): void {
    const empty = (): readonly KubeObject[] => [];
    this.render(
      set,
      {
        reader: { list: empty, fetch: empty, getSingle: () => undefined, store: () => undefined, reject: () => undefined },
        values: set.values,
        baseline: undefined,
        paths: outputPaths(set.values),
        warn: () => undefined,
        emitted: { maps: {}, files: {}, certificates: {} },
      },
      0,
    );
  }

  /** Renders the config and every auxiliary file; throws TemplateError naming the template. */
  render(set: TemplateSetSource, scope: RenderScope, storeVersion: number): RenderedOutput {
    const compiled = this.compile(set);
    scope.memo = compiled.memo;
    compiled.memo.beginRender();
    scope.memoDepth = 0;
    scope.templateReads = new Set();
    const context = {
      values: scope.values,
      storeVersion,
      paths: scope.paths,
      /** The Ingress routing model, built on first use and shared by every template of the render. */
      get routing(): RoutingModel {
        scope.routing ??= compiled.builder.build(scope.reader, scope.baseline, scope.warn);
        return scope.routing;
      },
    };
    const run = (name: string, template: Template, data: RenderScope = scope): string => {
      try {
        return template(context, { data: { scope: data }, partials: compiled.snippets, allowProtoPropertiesByDefault: false, allowProtoMethodsByDefault: false });
      } catch (error) {
        throw new TemplateError(name, (error as Error).message);
      }
    };
    const staticFiles = (label: string, list: [string, Template][]): Record<string, string> => {
      const out: Record<string, string> = {};
      for (const [name, template] of list) {
        const text = run(`${label}/${name}`, template);
        if (name !== GENERATOR_KEY) out[name] = text;
      }
      return out;
    };
    // Every template runs before the sections are assembled, so a file emitted from any
    // template (the config included) lands in its section.
    const maps = staticFiles('maps', compiled.maps);
    const files = staticFiles('files', compiled.files);
    const certificates = staticFiles('sslCertificates', compiled.certificates);
    const haproxyConfig = configAsPieces(compiled, scope, (data) => run('haproxyConfig', compiled.haproxyConfig, data));
    const merge = (kind: 'maps' | 'files' | 'certificates', target: Record<string, string>): Record<string, string> => {
      for (const [name, text] of Object.entries(scope.emitted[kind])) {
        if (name in target) throw new TemplateError(`${kind}/${name}`, 'emitted file clashes with a template of the same name');
        target[name] = text;
      }
      return target;
    };
    return { haproxyConfig, auxiliaryFiles: { maps: merge('maps', maps), files: merge('files', files), certificates: merge('certificates', certificates) } };
  }
}

/**
 * The config rendered as pieces (output-pieces.ts): the last render's very string when it is the
 * same text. A frame that holds a placeholder character of its own (object text read by the
 * templates directly) cannot be assembled: the config is then rendered again whole, in a scope
 * that drops what the first run already reported (warnings, emitted files: the same again).
 */
function configAsPieces(compiled: CompiledSet, scope: RenderScope, render: (scope: RenderScope) => string): string {
  if (compiled.pieceIds.size === 0) return render(scope);
  const pieces: string[] = [];
  scope.pieceIds = compiled.pieceIds;
  scope.pieces = pieces;
  let frame: string;
  try {
    frame = render(scope);
  } finally {
    scope.pieceIds = undefined;
    scope.pieces = undefined;
  }
  const assembled = compiled.pieces.assemble(frame, pieces);
  if (assembled !== undefined) return assembled;
  return render({ ...scope, warn: () => undefined, emitted: { maps: {}, files: {}, certificates: {} } });
}

interface HelperOptions {
  data: { scope: RenderScope; root?: unknown };
  hash: Record<string, unknown>;
  fn?: (context: unknown, options?: { data?: unknown }) => string;
  inverse?: (context: unknown) => string;
}

function scopeOf(options: HelperOptions): RenderScope {
  const scope = options.data.scope as RenderScope | undefined;
  if (scope === undefined) throw new Error('helper called outside a render');
  return scope;
}

/** The scope, for helpers whose effect a memo block could not replay (store reads, emit, warn). */
function unmemoizedScope(options: HelperOptions, helper: string): RenderScope {
  const scope = scopeOf(options);
  if ((scope.memoDepth ?? 0) > 0) {
    throw new Error(`${helper} cannot be used inside a memo block: a memo block's text may depend only on its key object and @root.values / @root.paths`);
  }
  return scope;
}

/** The reader for a template's own store read, noted in the scope (see RenderScope.templateReads). */
function storeReader(options: HelperOptions, helper: string, store: unknown): ModelSource {
  const scope = unmemoizedScope(options, helper);
  scope.templateReads?.add(String(store));
  return scope.reader;
}

/** Handlebars passes its options object last; these split it from the positional arguments. */
function split(args: unknown[]): { params: unknown[]; options: HelperOptions } {
  return { params: args.slice(0, -1), options: args[args.length - 1] as HelperOptions };
}

function getPath(object: unknown, path: string): unknown {
  let value: unknown = object;
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object' || !Object.prototype.hasOwnProperty.call(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

function compareValues(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const sa = a === undefined || a === null ? '' : String(a);
  const sb = b === undefined || b === null ? '' : String(b);
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

function indentText(text: string, width: number): string {
  const pad = ' '.repeat(Math.max(0, width));
  return text
    .split('\n')
    .map((line) => (line === '' ? line : pad + line))
    .join('\n');
}

function registerHelpers(hb: HandlebarsEnv): void {
  // Store reads never throw into a template: a missing store reads as empty.
  hb.registerHelper('list', (...args: unknown[]) => {
    const { params, options } = split(args);
    return storeReader(options, 'list', params[0]).list(String(params[0]));
  });
  hb.registerHelper('fetch', (...args: unknown[]) => {
    const { params, options } = split(args);
    return storeReader(options, 'fetch', params[0]).fetch(String(params[0]), params.slice(1).map(String));
  });
  hb.registerHelper('getSingle', (...args: unknown[]) => {
    const { params, options } = split(args);
    return storeReader(options, 'getSingle', params[0]).getSingle(String(params[0]), params.slice(1).map(String));
  });
  // {{httpResource "name"}}: the template set's HTTP resource (see http-resource-helper.ts).
  hb.registerHelper('httpResource', (...args: unknown[]) => {
    const { params, options } = split(args);
    return httpResourceContent(unmemoizedScope(options, 'httpResource').reader, String(params[0]));
  });
  hb.registerHelper('sortBy', (list: unknown, path: unknown) => {
    if (!Array.isArray(list)) return [];
    const key = typeof path === 'string' ? path : '';
    return [...list].sort((a, b) => compareValues(key === '' ? a : getPath(a, key), key === '' ? b : getPath(b, key)));
  });
  hb.registerHelper('join', (list: unknown, separator: unknown) =>
    Array.isArray(list) ? list.map(String).join(typeof separator === 'string' ? separator : ',') : '',
  );
  hb.registerHelper('default', (value: unknown, fallback: unknown) =>
    value === undefined || value === null || value === '' ? fallback : value,
  );
  hb.registerHelper('get', (object: unknown, path: unknown) => getPath(object, String(path)));
  hb.registerHelper('indent', function (this: unknown, ...args: unknown[]) {
    const { params, options } = split(args);
    const width = Number(params[0] ?? 0);
    const text = options.fn !== undefined ? options.fn(this) : String(params[1] ?? '');
    return indentText(text, width);
  });
  hb.registerHelper('concat', (...args: unknown[]) => split(args).params.map((p) => (p === undefined || p === null ? '' : String(p))).join(''));
  hb.registerHelper('eq', (a: unknown, b: unknown) => a === b);
  hb.registerHelper('ne', (a: unknown, b: unknown) => a !== b);
  hb.registerHelper('gt', (a: unknown, b: unknown) => compareValues(a, b) > 0);
  hb.registerHelper('lt', (a: unknown, b: unknown) => compareValues(a, b) < 0);
  hb.registerHelper('not', (a: unknown) => !a);
  hb.registerHelper('and', (...args: unknown[]) => split(args).params.every(Boolean));
  hb.registerHelper('or', (...args: unknown[]) => split(args).params.some(Boolean));
  hb.registerHelper('len', (value: unknown) =>
    Array.isArray(value) ? value.length : typeof value === 'string' ? value.length : value !== null && typeof value === 'object' ? Object.keys(value).length : 0,
  );
  hb.registerHelper('b64decode', (value: unknown) => (typeof value === 'string' ? Buffer.from(value, 'base64').toString('utf8') : ''));
  hb.registerHelper('json', (value: unknown) => JSON.stringify(value));
  hb.registerHelper('mapPath', (...args: unknown[]) => {
    const { params, options } = split(args);
    return join(scopeOf(options).paths.mapsDir, String(params[0]));
  });
  hb.registerHelper('filePath', (...args: unknown[]) => {
    const { params, options } = split(args);
    return join(scopeOf(options).paths.filesDir, String(params[0]));
  });
  hb.registerHelper('certPath', (...args: unknown[]) => {
    const { params, options } = split(args);
    return join(scopeOf(options).paths.certsDir, params.length === 0 ? '' : String(params[0]));
  });
  // {{#emit "certificates" name}}content{{/emit}}: adds an auxiliary file whose name is only
  // known at render time (one certificate per TLS secret, say). Renders to nothing in place.
  hb.registerHelper('emit', function (this: unknown, ...args: unknown[]) {
    const { params, options } = split(args);
    const kind = String(params[0]);
    const name = params[1];
    if (kind !== 'maps' && kind !== 'files' && kind !== 'certificates') {
      throw new Error(`emit: kind must be maps, files or certificates, got ${JSON.stringify(kind)}`);
    }
    if (typeof name !== 'string' || name === '' || name.includes('/') || name.includes('..')) {
      throw new Error(`emit: invalid file name ${JSON.stringify(name)}`);
    }
    if (options.fn === undefined) throw new Error('emit must be used as a block helper');
    unmemoizedScope(options, 'emit').emitted[kind][name] = options.fn(this);
    return '';
  });
  registerMemoHelper(hb, scopeOf);
  for (const [name, lines] of Object.entries(BACKEND_LINE_HELPERS)) hb.registerHelper(name, (backend: unknown) => lines(backend));
  hb.registerHelper('warn', (...args: unknown[]) => {
    const { params, options } = split(args);
    unmemoizedScope(options, 'warn').warn(params.map(String).join(' '));
    return '';
  });
}

export type { KubeObject };
export { HTTP_RESOURCE_STORE } from './http-resource-helper.js';
