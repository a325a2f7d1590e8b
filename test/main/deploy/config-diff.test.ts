import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { diffRenders, type DiffInput } from '../../../src/main/deploy/config-diff.js';
import { changedWindow, indexConfig, parseSection, type ConfigSection } from '../../../src/main/deploy/config-index.js';
import { applyRuntimeView } from '../../../src/main/deploy/runtime-view.js';
import { InlinePipeline } from '../../../src/main/pipeline/inline-pipeline.js';
import type { PipelineResult } from '../../../src/main/pipeline/pipeline.js';
import { StoreProvider } from '../../../src/main/stores/store-provider.js';
import { loadTemplateSet } from '../../../src/main/template-set/template-set.js';
import type { KubeObject, TemplateSetSource } from '../../../src/worker/protocol.js';
import { endpointSlice, ingress, rule, service, storeNameFor, tlsSecret, withValues } from '../../helpers/cluster.js';

const MAPS_DIR = '/srv/haproxy/maps';
const BACKEND = 'ing_shop_web_web_80';
const signal = new AbortController().signal;

/** A cluster rendered by the real default template set, each render with the previous as baseline. */
class RenderedCluster {
  readonly stores: StoreProvider;
  #pipeline: InlinePipeline;
  #last: PipelineResult | undefined;

  constructor(readonly set: TemplateSetSource) {
    this.stores = new StoreProvider(set.stores);
    this.#pipeline = new InlinePipeline({ templateSet: set });
  }

  put(...objects: KubeObject[]): this {
    for (const object of objects) this.stores.store(storeNameFor(object, this.set.stores)).upsert(object);
    return this;
  }

  /** Renders with another template set from now on (a values change), keeping the baseline. */
  useSet(set: TemplateSetSource): this {
    this.#pipeline = new InlinePipeline({ templateSet: set });
    return this;
  }

  async render(): Promise<PipelineResult> {
    const baseline = this.#last === undefined ? undefined : { haproxyConfig: this.#last.haproxyConfig, auxiliaryFiles: this.#last.auxiliaryFiles };
    this.#last = await this.#pipeline.execute(signal, this.stores, 'reconcile', baseline === undefined ? {} : { baseline });
    return this.#last;
  }
}

function shopIngress(path = '/', host = 'shop.example.com', tls = false): KubeObject {
  return ingress('shop', 'web', {
    ingressClassName: 'haproxy',
    ...(tls ? { tls: [{ hosts: [host], secretName: 'shop-tls' }] } : {}),
    rules: [rule(host, { path, service: 'web' })],
  });
}

let set: TemplateSetSource;

beforeAll(async () => {
  set = await loadTemplateSet(undefined, { mapsDir: MAPS_DIR, filesDir: '/srv/haproxy/files', certsDir: '/srv/haproxy/certs' });
});

async function baseCluster(): Promise<{ cluster: RenderedCluster; before: PipelineResult }> {
  const cluster = new RenderedCluster(set).put(shopIngress(), service('shop', 'web'), endpointSlice('shop', 'web', ['10.0.0.1', '10.0.0.2']));
  return { cluster, before: await cluster.render() };
}

const diff = (a: DiffInput, b: DiffInput, options = {}) => diffRenders(a, b, { mapsDir: MAPS_DIR, ...options });

describe('diffRenders on renders of the default template set', () => {
  it('finds nothing to do between two renders of the same cluster', async () => {
    const { cluster, before } = await baseCluster();
    expect(diff(before, await cluster.render())).toEqual({ runtimeOps: [], structural: false, reasons: [] });
  });

  it('turns a changed EndpointSlice address into one runtime address change', async () => {
    const { cluster, before } = await baseCluster();
    cluster.put(endpointSlice('shop', 'web', ['10.0.0.1', '10.0.0.3']));
    const after = await cluster.render();
    expect(after.auxiliaryFiles.files['server-slots.txt']).not.toBe(before.auxiliaryFiles.files['server-slots.txt']);
    expect(diff(before, after)).toEqual({
      runtimeOps: [{ type: 'server-addr', backend: BACKEND, server: 'srv2', address: '10.0.0.3', port: 8080 }],
      structural: false,
      reasons: [],
    });
  });

  it('fills a free slot for a second endpoint at runtime: its address, then ready', async () => {
    const cluster = new RenderedCluster(set).put(shopIngress(), service('shop', 'web'), endpointSlice('shop', 'web', ['10.0.0.1']));
    const before = await cluster.render();
    cluster.put(endpointSlice('shop', 'web', ['10.0.0.1', '10.0.0.2']));
    expect(diff(before, await cluster.render())).toEqual({
      runtimeOps: [
        { type: 'server-addr', backend: BACKEND, server: 'srv2', address: '10.0.0.2', port: 8080 },
        { type: 'server-state', backend: BACKEND, server: 'srv2', state: 'ready' },
      ],
      structural: false,
      reasons: [],
    });
  });

  it('puts a slot whose endpoint went away into maintenance before parking its address', async () => {
    const { cluster, before } = await baseCluster();
    cluster.put(endpointSlice('shop', 'web', ['10.0.0.1']));
    expect(diff(before, await cluster.render()).runtimeOps).toEqual([
      { type: 'server-state', backend: BACKEND, server: 'srv2', state: 'maint' },
      { type: 'server-addr', backend: BACKEND, server: 'srv2', address: '127.0.0.1', port: 1 },
    ]);
  });

  it('calls a new Ingress structural (a new backend), and replaces the first-match map its host sorts into', async () => {
    const { cluster, before } = await baseCluster();
    cluster.put(
      ingress('blog', 'site', { ingressClassName: 'haproxy', rules: [rule('blog.example.com', { path: '/', service: 'site' })] }),
      service('blog', 'site'),
      endpointSlice('blog', 'site', ['10.1.0.1']),
    );
    const result = diff(before, await cluster.render());
    expect(result.structural).toBe(true);
    expect(result.reasons.some((r) => r.startsWith('backend ing_blog_site_site_80 added'))).toBe(true);
    // The map is sorted and the new host sorts first: `add map` would append it, so the map is replaced.
    expect(result.runtimeOps).toEqual([
      {
        type: 'map-replace',
        file: `${MAPS_DIR}/host-prefix.map`,
        entries: [
          ['blog.example.com/', 'ing_blog_site_site_80'],
          ['shop.example.com/', BACKEND],
        ],
      },
    ]);
  });

  it('turns a path change into map operations on the absolute map path, without a reload', async () => {
    const { cluster, before } = await baseCluster();
    cluster.put(shopIngress('/store'));
    expect(diff(before, await cluster.render())).toEqual({
      // A Prefix path matches itself exactly and everything below it.
      runtimeOps: [
        { type: 'map-add', file: `${MAPS_DIR}/host-exact.map`, key: 'shop.example.com/store', value: BACKEND },
        { type: 'map-del', file: `${MAPS_DIR}/host-prefix.map`, key: 'shop.example.com/' },
        { type: 'map-add', file: `${MAPS_DIR}/host-prefix.map`, key: 'shop.example.com/store/', value: BACKEND },
      ],
      structural: false,
      reasons: [],
    });
  });

  it('calls a timeout change structural and names the line', async () => {
    const { cluster, before } = await baseCluster();
    cluster.useSet(withValues(set, { timeoutServer: '30s' }));
    const result = diff(before, await cluster.render());
    expect(result.structural).toBe(true);
    expect(result.runtimeOps).toEqual([]);
    expect(result.reasons).toEqual([expect.stringMatching(/^defaults .*"timeout server 50s" \+"timeout server 30s"/)]);
  });

  it('calls a new certificate structural', async () => {
    const { cluster, before } = await baseCluster();
    cluster.put(shopIngress('/', 'shop.example.com', true), tlsSecret('shop', 'shop-tls'));
    const result = diff(before, await cluster.render());
    expect(result.structural).toBe(true);
    expect(result.reasons).toEqual(expect.arrayContaining(['certificate shop_shop-tls.pem added', 'file crt-list.txt changed']));
  });
});

function config(...servers: string[]): string {
  return ['global', '  daemon', '', 'backend be', '  balance roundrobin', ...servers.map((s) => `  ${s}`), ''].join('\n');
}

function input(haproxyConfig: string, maps: Record<string, string> = {}, files: Record<string, string> = {}): DiffInput {
  return { haproxyConfig, auxiliaryFiles: { maps, files, certificates: {} } };
}

describe('diffRenders rules', () => {
  it('sets a changed weight, and the default weight of 1 when the parameter goes', () => {
    const weighted = diff(input(config('server s1 10.0.0.1:80 weight 5')), input(config('server s1 10.0.0.1:80 weight 7')));
    expect(weighted.runtimeOps).toEqual([{ type: 'server-weight', backend: 'be', server: 's1', weight: 7 }]);
    const dropped = diff(input(config('server s1 10.0.0.1:80 weight 5')), input(config('server s1 10.0.0.1:80')));
    expect(dropped.runtimeOps).toEqual([{ type: 'server-weight', backend: 'be', server: 's1', weight: 1 }]);
  });

  it('sets IPv6 addresses without brackets', () => {
    const result = diff(input(config('server s1 [fd00::1]:80')), input(config('server s1 [fd00::2]:80')));
    expect(result.runtimeOps).toEqual([{ type: 'server-addr', backend: 'be', server: 's1', address: 'fd00::2', port: 80 }]);
  });

  it('calls any other server parameter, or a server added, structural', () => {
    expect(diff(input(config('server s1 10.0.0.1:80')), input(config('server s1 10.0.0.1:80 maxconn 5'))).reasons).toEqual([
      'backend be: server s1: parameters changed ("maxconn 5")',
    ]);
    expect(diff(input(config('server s1 10.0.0.1:80')), input(config('server s1 10.0.0.1:80', 'server s2 10.0.0.2:80'))).structural).toBe(true);
  });

  it('fills a slot at runtime at once and leaves its new health check to the next reload', () => {
    const result = diff(input(config('server s1 127.0.0.1:1 disabled')), input(config('server s1 10.0.0.7:8080 check')));
    expect(result.runtimeOps).toEqual([
      { type: 'server-addr', backend: 'be', server: 's1', address: '10.0.0.7', port: 8080 },
      { type: 'server-state', backend: 'be', server: 's1', state: 'ready' },
    ]);
    expect(result.structural).toBe(true);
    expect(result.reasons).toEqual(['backend be: server s1: health check added (next reload)']);
    const emptied = diff(input(config('server s1 10.0.0.7:8080 check')), input(config('server s1 127.0.0.1:1 disabled')));
    expect(emptied.runtimeOps[0]).toEqual({ type: 'server-state', backend: 'be', server: 's1', state: 'maint' });
    expect(emptied.reasons).toEqual(['backend be: server s1: health check removed (next reload)']);
  });

  it('needs nothing for a change of server-slots.txt alone, but a reload for any other file', () => {
    const cfg = config('server s1 10.0.0.1:80');
    expect(diff(input(cfg, {}, { 'server-slots.txt': 'a' }), input(cfg, {}, { 'server-slots.txt': 'b' }))).toEqual({ runtimeOps: [], structural: false, reasons: [] });
    expect(diff(input(cfg, {}, { 'other.txt': 'a' }), input(cfg, {}, { 'other.txt': 'b' })).reasons).toEqual(['file other.txt changed']);
  });

  it('calls a map file added or removed structural', () => {
    const cfg = config();
    expect(diff(input(cfg, {}), input(cfg, { 'new.map': 'a b\n' })).reasons).toEqual(['map new.map added']);
    expect(diff(input(cfg, { 'old.map': 'a b\n' }), input(cfg, {})).reasons).toEqual(['map old.map removed']);
  });

  it('sets a changed value in place', () => {
    const result = diff(input('', { 'm.map': 'a x\nb y\n' }), input('', { 'm.map': 'a x\nb z\n' }));
    expect(result.runtimeOps).toEqual([{ type: 'map-set', file: `${MAPS_DIR}/m.map`, key: 'b', value: 'z' }]);
  });

  it('replaces a map through a new version when an entry must land before existing ones', () => {
    // `add map` appends; a first-match map (map_beg, map_reg) needs /api/v2 ahead of /api.
    const result = diff(input('', { 'm.map': '/api old\n' }), input('', { 'm.map': '/api/v2 new\n/api old\n' }));
    expect(result.runtimeOps).toEqual([
      { type: 'map-replace', file: `${MAPS_DIR}/m.map`, entries: [['/api/v2', 'new'], ['/api', 'old']] },
    ]);
  });

  it('adds an entry to an exact-match map wherever it sorts: there order cannot change a lookup', () => {
    const cfg = `frontend f\n  use_backend %[path,map(${MAPS_DIR}/m.map)]\n`;
    const result = diff(input(cfg, { 'm.map': '/b old\n' }), input(cfg, { 'm.map': '/a new\n/b old\n' }));
    expect(result.runtimeOps).toEqual([{ type: 'map-add', file: `${MAPS_DIR}/m.map`, key: '/a', value: 'new' }]);
    const prefix = `frontend f\n  use_backend %[path,map_beg(${MAPS_DIR}/m.map)]\n`;
    expect(diff(input(prefix, { 'm.map': '/b old\n' }), input(prefix, { 'm.map': '/a new\n/b old\n' })).runtimeOps.map((op) => op.type)).toEqual(['map-replace']);
  });

  it('replaces a map through a new version past the threshold, or when a key repeats', () => {
    const many = diff(input('', { 'm.map': '' }), input('', { 'm.map': 'a 1\nb 2\nc 3\n' }), { versionedMapThreshold: 2 });
    expect(many.runtimeOps.map((op) => op.type)).toEqual(['map-replace']);
    const repeated = diff(input('', { 'm.map': 'a 1\n' }), input('', { 'm.map': 'a 1\na 2\n' }));
    expect(repeated.runtimeOps.map((op) => op.type)).toEqual(['map-replace']);
  });

  it('lists 20 reasons and counts the rest', () => {
    const sections = (n: number) => Array.from({ length: n }, (_, i) => `backend b${i}\n  balance roundrobin\n`).join('');
    const result = diff(input(''), input(sections(25)));
    expect(result.reasons).toHaveLength(21);
    expect(result.reasons.at(-1)).toBe('... and 5 more');
  });

  it('finds the one changed slot among 5,000 backends', () => {
    const big = (address: string) =>
      Array.from({ length: 5000 }, (_, i) => `backend b${i}\n  balance roundrobin\n  server srv1 ${i === 4321 ? address : `10.0.${i >> 8}.${i & 255}:80`}\n  server srv2 127.0.0.1:1 disabled\n`).join('\n');
    const result = diff(input(big('10.0.16.225:80')), input(big('10.9.9.9:81')));
    expect(result).toEqual({ runtimeOps: [{ type: 'server-addr', backend: 'b4321', server: 'srv1', address: '10.9.9.9', port: 81 }], structural: false, reasons: [] });
  });
});

describe('changedWindow', () => {
  const header = (text: string, at: number): boolean => /^\s*(global|defaults|frontend|backend|listen)\b/.test(text.slice(at, text.indexOf('\n', at) + 1 || undefined));
  const section = fc.record({
    keyword: fc.constantFrom('backend', 'frontend', 'defaults', 'listen'),
    name: fc.constantFrom('a', 'b', 'c', 'd'),
    lines: fc.array(fc.constantFrom('  balance roundrobin', '  server s1 10.0.0.1:80', '  server s1 10.0.0.2:80', '  mode http', '', '  server s2 127.0.0.1:1 disabled'), { maxLength: 4 }),
  });
  const configText = fc.array(section, { maxLength: 8 }).map((sections) => sections.map((s) => [`${s.keyword} ${s.name}`, ...s.lines].join('\n')).join('\n'));

  it('leaves out only text both configs share, and cuts them at section headers', () => {
    fc.assert(
      fc.property(configText, configText, fc.constantFrom('', '\n', '# top\n'), (x, y, preamble) => {
        const a = preamble + x;
        const b = preamble + y;
        const w = changedWindow(a, b);
        expect(a.slice(0, w.start)).toBe(b.slice(0, w.start));
        expect(a.slice(w.endA)).toBe(b.slice(w.endB));
        expect(w.start === 0 || (a[w.start - 1] === '\n' && header(a, w.start) && header(b, w.start))).toBe(true);
        expect(w.endA === a.length || (a[w.endA - 1] === '\n' && header(a, w.endA) && header(b, w.endB))).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('gives the same diff as a diff of the whole configs', () => {
    fc.assert(
      fc.property(configText, configText, (x, y) => {
        const whole = diffRenders(input(x), input(y));
        // Shared text wrapped around both: the window excludes it; the result must not change.
        const pad = Array.from({ length: 50 }, (_, i) => `backend pad${i}\n  server s1 10.0.0.1:80\n`).join('');
        const padded = diffRenders(input(pad + x + '\n' + pad), input(pad + y + '\n' + pad));
        expect(padded.runtimeOps).toEqual(whole.runtimeOps);
        expect(padded.structural).toBe(whole.structural);
      }),
      { numRuns: 300 },
    );
  });

  it('calls a blank line added or removed inside a section no change, wherever the section lies', () => {
    const pad = Array.from({ length: 50 }, (_, i) => `backend pad${i}\n  server s1 10.0.0.1:80\n`).join('');
    for (const [x, y] of [
      ['backend c\n\n', 'backend c\n'],
      ['backend c\n  balance first\n', 'backend c\n\n  balance first\n   \n'],
    ] as const) {
      for (const [a, b] of [[x, y], [pad + x + pad, pad + y + pad]]) {
        const result = diffRenders(input(a as string), input(b as string));
        expect(result.structural).toBe(false);
        expect(result.runtimeOps).toEqual([]);
      }
    }
    // A non-blank line still counts.
    expect(diffRenders(input(`${pad}backend c\n`), input(`${pad}backend c\n  balance first\n`)).structural).toBe(true);
  });

  it('numbers lines from the top of the config in reasons', () => {
    const pad = Array.from({ length: 100 }, (_, i) => `backend b${i}\n  balance roundrobin\n`).join('');
    const result = diff(input(`${pad}backend last\n  balance first\n`), input(`${pad}backend last\n  balance leastconn\n`));
    expect(result.reasons).toEqual(['backend last (line 201): -"balance first" +"balance leastconn"']);
  });
});

describe('indexConfig', () => {
  it('opens a section at a keyword at any indentation, and numbers repeated headers', () => {
    const index = indexConfig('# top\ndefaults\n  mode http\ndefaults\n  backend be\n  balance first\n  server s1 1.2.3.4:80\n');
    expect(index.text.slice(0, index.preambleEnd)).toBe('# top\n');
    expect(index.sections.map((s) => [s.key, s.lineNumber])).toEqual([
      ['defaults', 2],
      ['defaults#1', 4],
      ['backend be', 5],
    ]);
    const backend = parseSection(index, index.sections[2] as ConfigSection);
    expect(backend.body).toEqual(['  balance first']);
    expect(backend.servers.map((s) => [s.name, s.host, s.port])).toEqual([['s1', '1.2.3.4', 80]]);
  });
});

describe('applyRuntimeView', () => {
  it('leaves only the structural part of a mixed change, and diffs a revert back to the old slots', async () => {
    const { cluster, before } = await baseCluster();
    cluster.put(
      endpointSlice('shop', 'web', ['10.0.0.1', '10.0.0.3']),
      ingress('blog', 'site', { ingressClassName: 'haproxy', rules: [rule('blog.example.com', { path: '/', service: 'site' })] }),
      service('blog', 'site'),
      endpointSlice('blog', 'site', ['10.1.0.1']),
    );
    const after = await cluster.render();
    const live = { ...before, renderId: 'before' };
    const next = { ...after, renderId: 'after' };
    const change = diff(live, next);
    expect(change.structural).toBe(true);
    const view = applyRuntimeView(live, next, change.runtimeOps, { mapsDir: MAPS_DIR });
    expect(view.checksum).toMatch(/^view:/);
    const rest = diff(view, next);
    expect(rest.runtimeOps).toEqual([]);
    expect(rest.structural).toBe(true);
    // Going back from the view to the old render undoes exactly the runtime part.
    const back = diff(view, live);
    expect(back.structural).toBe(false);
    expect(back.runtimeOps).toEqual([
      { type: 'server-addr', backend: BACKEND, server: 'srv2', address: '10.0.0.2', port: 8080 },
      { type: 'map-del', file: `${MAPS_DIR}/host-prefix.map`, key: 'blog.example.com/' },
    ]);
    expect(view.auxiliaryFiles.maps['host-prefix.map']).toBe(after.auxiliaryFiles.maps['host-prefix.map']);
  });
});
