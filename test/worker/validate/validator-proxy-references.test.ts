// The validation phase on proxy names and the references between proxies, maps and resolvers.
import { describe, expect, it } from 'vitest';
import { validateStructure } from '../../../src/worker/validate/validator.js';
import { PATHS, aux, withDefaults } from '../../helpers/validation.js';
import { expectOneError, messages } from '../../helpers/validation-report.js';

describe("phase 'validation': proxy names and references", () => {
  it('a use_backend naming a missing backend is an error naming the line', () => {
    const config = withDefaults('frontend fe\n  bind :80\n  use_backend be_missing if TRUE\n  default_backend be\nbackend be\n');
    expectOneError(validateStructure(config, aux(), PATHS), config, 'be_missing', /use_backend in 'fe' names unknown backend 'be_missing'/);
  });

  it('a default_backend naming a frontend is an error', () => {
    const config = withDefaults('frontend fe\n  bind :80\n  default_backend other\nfrontend other\n  bind :81\n');
    expectOneError(validateStructure(config, aux(), PATHS), config, 'default_backend other', /names frontend 'other'/);
  });

  it('a backend referenced before its declaration resolves', () => {
    const config = withDefaults('listen both\n  bind :80\n  use_backend later if TRUE\n  server s1 10.0.0.1:80\nbackend later\n');
    expect(messages(validateStructure(config, aux(), PATHS))).toEqual([]);
  });

  it('a frontend and a backend may share a name, but a listen clashes with both and duplicates clash', () => {
    const config = withDefaults(`frontend app
  bind :80
  default_backend app
backend app
  server s1 10.0.0.1:80
listen app
  bind :81
backend app
`);
    const report = validateStructure(config, aux(), PATHS);
    expect(messages(report)).toEqual([
      "haproxy.cfg:11: listen 'app' has the same name as frontend 'app' declared at line 6",
      "haproxy.cfg:13: backend 'app' has the same name as backend 'app' declared at line 9",
    ]);
  });

  it('duplicate named sections of other kinds are errors', () => {
    const config = 'cache assets\n  total-max-size 4\nresolvers dns\n  nameserver a 10.0.0.53:53\ncache assets\n';
    expect(messages(validateStructure(config, aux(), PATHS))).toEqual([
      "haproxy.cfg:5: cache section 'assets' has the same name as the one declared at line 1",
    ]);
  });

  it('a server naming an unknown resolvers section is an error', () => {
    const config = withDefaults('resolvers dns\n  nameserver a 10.0.0.53:53\nbackend be\n  server s1 app.example.test:80 resolvers dnz init-addr none\n');
    expectOneError(validateStructure(config, aux(), PATHS), config, 'resolvers dnz', /unknown resolvers section 'dnz'/);
  });

  it("every value of a map routing use_backend must name a backend, reported with the map's line", () => {
    const config = withDefaults(`frontend fe
  bind :80
  use_backend %[req.hdr(host),lower,map_str(${PATHS.mapsDir}/host.map)]
backend be_a
backend be_b
`);
    const maps = { 'host.map': 'a.test be_a\n# comment\nb.test be_b\nc.test be_c\n' };
    const issue = expectOneError(validateStructure(config, aux({ maps }), PATHS), config, 'use_backend', /unknown backend 'be_c'/);
    expect(issue.message).toBe("use_backend routes through maps/host.map, whose line 4 ('c.test') names unknown backend 'be_c'");
  });

  it("a map converter's default value in use_backend must name a backend", () => {
    const config = withDefaults(`frontend fe
  bind :80
  use_backend %[base,map_beg(${PATHS.mapsDir}/paths.map,be_fallback)]
backend be_a
`);
    const maps = { 'paths.map': 'a.test/ be_a\n' };
    expectOneError(validateStructure(config, aux({ maps }), PATHS), config, 'use_backend', /names unknown backend 'be_fallback'/);
  });

  it('map values are not taken as backend names when another converter follows the map', () => {
    const config = withDefaults(`frontend fe
  bind :80
  use_backend be_%[req.hdr(host),map(${PATHS.mapsDir}/suffix.map,none)]
  use_backend %[req.hdr(host),map(${PATHS.mapsDir}/suffix.map),lower]
backend be_a
`);
    const maps = { 'suffix.map': 'a.test a\n' };
    expect(messages(validateStructure(config, aux({ maps }), PATHS))).toEqual([]);
  });
});
