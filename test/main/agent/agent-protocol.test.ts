import { describe, expect, it } from 'vitest';
import { parseApplyRequest } from '../../../src/main/agent/agent-protocol.js';
import { above } from '../../../src/main/agent/fence-file.js';
import { BearerAuth } from '../../../src/main/agent/bearer-auth.js';
import { rewriteBinds, renderRewrite } from '../../../src/main/agent/render-rewrite.js';
import { spyLogger } from '../../helpers/loggers.js';

const paths = { mapsDir: '/out/maps', filesDir: '/out/files', certsDir: '/out/certs', runDir: '/out/run' };
const valid = { epoch: 3, sequence: 7, checksum: 'abc', baseChecksum: null, full: true, paths, config: 'global\n', files: { maps: { 'hosts.map': 'a b\n' } }, runtimeOps: [], reload: true };

describe('parseApplyRequest', () => {
  it('accepts a full sync and fills in what was left out', () => {
    const parsed = parseApplyRequest(valid);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.request.files).toEqual({ maps: { 'hosts.map': 'a b\n' }, files: {}, certificates: {} });
    expect(parsed.request.runtimeOps).toEqual([]);
  });

  it('refuses an unknown runtime operation, naming where it is', () => {
    const parsed = parseApplyRequest({ ...valid, runtimeOps: [{ type: 'server-addr', backend: 'b', server: 's', address: '10.0.0.1' }, { type: 'shutdown sessions' }] });
    expect(parsed).toEqual({ ok: false, message: 'runtimeOps[1].type: unknown operation "shutdown sessions"' });
  });

  it('refuses a file name with a directory part, a missing epoch and a full sync without config', () => {
    expect(parseApplyRequest({ ...valid, files: { maps: { '../etc/passwd': 'x' } } })).toMatchObject({ ok: false, message: expect.stringContaining('not a plain file name') });
    expect(parseApplyRequest({ ...valid, epoch: undefined })).toMatchObject({ ok: false, message: expect.stringContaining('epoch') });
    expect(parseApplyRequest({ ...valid, config: undefined })).toMatchObject({ ok: false, message: 'full: a full sync needs config' });
    expect(parseApplyRequest({ ...valid, paths: { ...paths, runDir: 'relative' } })).toMatchObject({ ok: false, message: expect.stringContaining('paths.runDir') });
    expect(parseApplyRequest([])).toMatchObject({ ok: false, message: 'body: expected an object' });
  });

  it('keeps a removal (null) only in a partial apply', () => {
    const parsed = parseApplyRequest({ ...valid, full: false, config: undefined, files: { maps: { 'old.map': null } } });
    expect(parsed.ok && parsed.request.files.maps).toEqual({ 'old.map': null });
    expect(parseApplyRequest({ ...valid, files: { maps: { 'old.map': null } } }).ok).toBe(false);
  });
});

describe('fencing', () => {
  it('takes only an (epoch, sequence) above the highest accepted', () => {
    const fence = { epoch: 5, sequence: 10 };
    expect(above({ epoch: 5, sequence: 11 }, fence)).toBe(true);
    expect(above({ epoch: 6, sequence: 0 }, fence)).toBe(true);
    expect(above({ epoch: 5, sequence: 10 }, fence)).toBe(false);
    expect(above({ epoch: 4, sequence: 99 }, fence)).toBe(false);
  });
});

describe('render rewrite', () => {
  it('moves every bind to the bind address and keeps the ports', () => {
    const config = 'frontend a\n    bind *:80\n    bind :443 ssl crt x\n    bind 127.0.0.1:8404,[::]:8405\n    bind unix@/run/x.sock\n    bind ipv4@0.0.0.0:81\n';
    expect(rewriteBinds(config, '127.0.0.3')).toBe(
      'frontend a\n    bind 127.0.0.3:80\n    bind 127.0.0.3:443 ssl crt x\n    bind 127.0.0.3:8404,127.0.0.3:8405\n    bind unix@/run/x.sock\n    bind ipv4@127.0.0.3:81\n',
    );
  });

  it("puts the leader's directories and admin socket under the agent's dir, in the config, files and map operations", () => {
    const rewrite = renderRewrite(paths, '/agent');
    expect(rewrite.config('    stats socket /out/run/admin.sock mode 600\n    use_backend %[req.hdr(host),map(/out/maps/hosts.map)]\n')).toBe(
      '    stats socket /agent/run/admin.sock mode 600\n    use_backend %[req.hdr(host),map(/agent/maps/hosts.map)]\n',
    );
    expect(rewrite.file('files', '/out/certs/a.pem\n')).toBe('/agent/certs/a.pem\n');
    expect(rewrite.file('maps', '/out/certs/a.pem\n')).toBe('/out/certs/a.pem\n');
    expect(rewrite.op({ type: 'map-del', file: '/out/maps/hosts.map', key: 'k' })).toEqual({ type: 'map-del', file: '/agent/maps/hosts.map', key: 'k' });
  });
});

describe('BearerAuth', () => {
  it('accepts only the token, and logs a refused peer once, never with the token it sent', () => {
    const spy = spyLogger();
    const auth = new BearerAuth('s3cret', spy.logger);
    expect(auth.check('Bearer s3cret', '10.0.0.1')).toBe(true);
    expect(auth.check('Bearer wrong-guess', '10.0.0.2')).toBe(false);
    expect(auth.check('Bearer wrong-again', '10.0.0.2')).toBe(false);
    expect(auth.check(undefined, '10.0.0.3')).toBe(false);
    expect(auth.check('Basic s3cret', '10.0.0.3')).toBe(false);
    expect(spy.warn).toHaveBeenCalledTimes(2);
    expect(JSON.stringify(spy.warn.mock.calls)).not.toMatch(/wrong-guess|wrong-again|s3cret/);
  });
});
