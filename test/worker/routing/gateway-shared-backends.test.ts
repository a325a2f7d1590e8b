// An HTTPRoute's references to one Service port share one backend section when their rules give
// that backend the same filters and timeout (the first reference's, `gw_<ns>_<route>_<rule>_<ref>`),
// and get one each when they differ: fewer sections and server slots, the same routing.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/worker/protocol.js';
import { endpointSlice, service } from '../../helpers/cluster.js';
import { renderToDir, type RenderedDir } from '../../helpers/e2e-render.js';
import { gateway, gatewayClass, httpRoute, ref } from '../../helpers/gateway-objects.js';

let root: string;
let counter = 0;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'haptic-gateway-shared-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const app = [service('infra', 'app'), endpointSlice('infra', 'app', ['127.0.0.2'], { name: 'http', port: 9000 })];
const prefix = (value: string) => ({ path: { type: 'PathPrefix', value } });
const render = (rules: Record<string, unknown>[]): Promise<RenderedDir> =>
  renderToDir(join(root, `out-${++counter}`), [gatewayClass(), gateway('infra', 'gw', [{ name: 'http', port: 18091 }]), httpRoute('infra', 'r', { parentRefs: [{ name: 'gw' }], rules }), ...app] as KubeObject[]);
const sections = (rendered: RenderedDir) => rendered.result.haproxyConfig.match(/^backend gw_\S+/gm) ?? [];
const pathMap = (rendered: RenderedDir) => readFile(join(rendered.paths.mapsDir, 'gateway-0-path-prefix.map'), 'utf8');

describe('the backends of an HTTPRoute', () => {
  it('are one section for rules to the same Service port without filters, every path routed to it', async () => {
    const rendered = await render([
      { matches: [prefix('/')], backendRefs: [ref('app')] },
      { matches: [prefix('/api')], backendRefs: [ref('app')] },
    ]);
    expect(sections(rendered)).toEqual(['backend gw_infra_r_0_0']);
    const map = await pathMap(rendered);
    expect(map).toContain('/api/ gw_infra_r_0_0');
    expect(map).not.toContain('gw_infra_r_1_0');
  });

  it('are one section each for rules to the same Service port whose filters or timeouts differ', async () => {
    const rendered = await render([
      { matches: [prefix('/')], backendRefs: [ref('app')] },
      { matches: [prefix('/a')], backendRefs: [ref('app')], filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'x-a', value: '1' }] } }] },
      { matches: [prefix('/b')], backendRefs: [ref('app')], timeouts: { request: '5s' } },
      { matches: [prefix('/c')], backendRefs: [ref('app')], filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'x-a', value: '1' }] } }] },
    ]);
    expect(sections(rendered)).toEqual(['backend gw_infra_r_0_0', 'backend gw_infra_r_1_0', 'backend gw_infra_r_2_0']);
    expect(await pathMap(rendered)).toContain('/c/ gw_infra_r_1_0');
  });
});
