import { describe, expect, it } from 'vitest';
import { commandCount, preparedMapVersion, prepareMapCommand, runtimeCommand, versionedMapCommands } from '../../../src/main/deploy/runtime-ops.js';

describe('runtime operations as Runtime API commands', () => {
  it('renders server changes as set server commands', () => {
    expect(runtimeCommand({ type: 'server-addr', backend: 'be', server: 'srv1', address: '10.0.0.1', port: 8080 })).toBe('set server be/srv1 addr 10.0.0.1 port 8080');
    expect(runtimeCommand({ type: 'server-addr', backend: 'be', server: 'srv1', address: 'fd00::1' })).toBe('set server be/srv1 addr fd00::1');
    expect(runtimeCommand({ type: 'server-state', backend: 'be', server: 'srv1', state: 'maint' })).toBe('set server be/srv1 state maint');
    expect(runtimeCommand({ type: 'server-weight', backend: 'be', server: 'srv1', weight: 3 })).toBe('set server be/srv1 weight 3');
  });

  it('renders map changes with the absolute map path, escaping what would split a command', () => {
    const file = '/srv/out/maps/host-exact.map';
    expect(runtimeCommand({ type: 'map-add', file, key: 'a.example/x;y z', value: 'be' })).toBe(`add map ${file} a.example/x\\;y\\ z be`);
    expect(runtimeCommand({ type: 'map-del', file, key: 'k' })).toBe(`del map ${file} k`);
    expect(runtimeCommand({ type: 'map-set', file, key: 'k', value: 'v' })).toBe(`set map ${file} k v`);
    expect(() => runtimeCommand({ type: 'map-add', file, key: 'a\nshutdown sessions', value: 'be' })).toThrow(TypeError);
  });

  it('renders a map replacement as prepare, versioned adds in file order, and commit', () => {
    const op = { type: 'map-replace', file: '/m.map', entries: [['b', '2'], ['a', '1']] } as const;
    expect(prepareMapCommand(op)).toBe('prepare map /m.map');
    const version = preparedMapVersion('New version created: 7\n');
    expect(versionedMapCommands(op, version)).toEqual({ adds: ['add map @7 /m.map b 2', 'add map @7 /m.map a 1'], commit: 'commit map @7 /m.map' });
    expect(commandCount(op)).toBe(4);
    expect(() => preparedMapVersion('[err]: Unknown map identifier')).toThrow(/prepare map/);
  });
});
