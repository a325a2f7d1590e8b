// The Gateway API sample (examples/gateway) loads and renders cleanly: every object is taken,
// the route is accepted on the Gateway's listener, and the config serves it on port 8080.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/main/core/paths.js';
import { renderManifestDir } from '../helpers/golden.js';

describe('the Gateway API sample', () => {
  it('renders without load errors or warnings, with the route accepted and bound on port 8080', async () => {
    const { result, loadErrors } = await renderManifestDir(join(PACKAGE_ROOT, 'examples', 'gateway'));
    expect(loadErrors).toEqual([]);
    expect(result.warnings).toEqual([]);
    expect(result.gatewayStatus?.httpRoutes[0]?.parents[0]?.conditions).toEqual([
      { type: 'Accepted', status: 'True', reason: 'Accepted' },
      { type: 'ResolvedRefs', status: 'True', reason: 'ResolvedRefs' },
    ]);
    expect(result.gatewayStatus?.gateways[0]?.listeners[0]?.attachedRoutes).toBe(1);
    expect(result.haproxyConfig).toContain('bind *:8080');
    expect(result.haproxyConfig).toContain('use_backend gw_shop_shop_1_0 if { var(txn.host) -m str shop.example.com } { rand(100) -m int lt 90 }');
    expect(result.haproxyConfig).toContain('http-request set-header x-shop-api "v2"');
  });
});
