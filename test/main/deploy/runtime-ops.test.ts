import { describe, expect, it } from 'vitest';
import { commandCount, mapPayloadLine, preparedMapVersion, prepareMapCommand, runtimeCommand, versionedMapCommands, type MapReplaceOp } from '../../../src/main/deploy/runtime-ops.js';
import { checkedCommandText, commandText, type PayloadCommand } from '../../../src/main/haproxy/cli-payload.js';

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

  it('renders a map replacement as prepare, one payload command of the entries in file order, and commit', () => {
    const op = { type: 'map-replace', file: '/m.map', entries: [['b', '2'], ['a', 'be with spaces']] } as const;
    expect(prepareMapCommand(op)).toBe('prepare map /m.map');
    const version = preparedMapVersion('New version created: 7\n');
    const { adds, commit } = versionedMapCommands(op, version, 15_360);
    expect(adds).toEqual([{ line: 'add map @7 /m.map', payload: ['b 2', 'a be with spaces'] }]);
    expect(commandText(adds[0] as PayloadCommand)).toBe('add map @7 /m.map <<\nb 2\na be with spaces\n');
    expect(commit).toBe('commit map @7 /m.map');
    expect(commandCount(op)).toBe(4);
    expect(() => preparedMapVersion('[err]: Unknown map identifier')).toThrow(/prepare map/);
  });

  it('splits the entries into payload commands that each fit the byte limit, keeping file order', () => {
    const entries = Array.from({ length: 1_000 }, (_, i) => [`host${i}.example.com/path`, `ing_ns_name_svc_${i} extra words`] as const);
    const op: MapReplaceOp = { type: 'map-replace', file: '/out/maps/host-prefix.map', entries };
    const max = 4_096;
    const { adds } = versionedMapCommands(op, '3', max);
    expect(adds.length).toBeGreaterThan(1);
    for (const add of adds) {
      expect(typeof add).toBe('object');
      const bytes = Buffer.byteLength(`${commandText(add)}\n`);
      expect(bytes).toBeLessThanOrEqual(max);
      expect(checkedCommandText(add, 4_096, max)).toBe(commandText(add));
    }
    // Every command but the last is full: one more entry would not have fitted.
    const entryBytes = Buffer.byteLength(`${entries[999]?.[0]} ${entries[999]?.[1]}\n`);
    for (const add of adds.slice(0, -1)) expect(Buffer.byteLength(`${commandText(add)}\n`) + entryBytes).toBeGreaterThan(max);
    const sent = adds.flatMap((add) => (add as PayloadCommand).payload);
    expect(sent).toEqual(entries.map(([k, v]) => `${k} ${v}`));
  });

  it('counts the UTF-8 bytes of entries that are not plain ASCII when it splits', () => {
    const entries = Array.from({ length: 200 }, (_, i) => [`bücher${i}.example/ü`, `be_ü\tx ${i}`] as const);
    const max = 1_024;
    const { adds } = versionedMapCommands({ type: 'map-replace', file: '/m.map', entries }, '1', max);
    for (const add of adds) expect(Buffer.byteLength(`${commandText(add)}\n`)).toBeLessThanOrEqual(max);
    expect(adds.flatMap((add) => (add as PayloadCommand).payload)).toEqual(entries.map(([k, v]) => `${k} ${v}`));
  });

  it('sends an entry a payload line cannot carry as its own escaped add map line, in its place', () => {
    const entries = [
      ['a/', 'be1'],
      ['key with space/', 'be2'],
      ['b/', ' leading blank'],
      ['c/', 'be3'],
      ['d/', ''],
      ['e/', 'be4'],
    ] as const;
    const { adds } = versionedMapCommands({ type: 'map-replace', file: '/m.map', entries }, '2', 15_360);
    expect(adds).toEqual([
      { line: 'add map @2 /m.map', payload: ['a/ be1'] },
      'add map @2 /m.map key\\ with\\ space/ be2',
      'add map @2 /m.map b/ \\ leading\\ blank',
      { line: 'add map @2 /m.map', payload: ['c/ be3'] },
      'add map @2 /m.map d/ ',
      { line: 'add map @2 /m.map', payload: ['e/ be4'] },
    ]);
    expect(mapPayloadLine('k', 'v;with\\back slash')).toBe('k v;with\\back slash');
    expect(mapPayloadLine('k\tx', 'v')).toBeUndefined();
    expect(mapPayloadLine('', 'v')).toBeUndefined();
    expect(mapPayloadLine('k', 'v\r')).toBeUndefined();
  });

  it('sends an entry longer than any payload as its own line, and refuses a line break as before', () => {
    const long = 'x'.repeat(300);
    const { adds } = versionedMapCommands({ type: 'map-replace', file: '/m.map', entries: [['a', 'b'], [long, 'v'], ['c', 'd']] }, '1', 200);
    expect(adds).toEqual([{ line: 'add map @1 /m.map', payload: ['a b'] }, `add map @1 /m.map ${long} v`, { line: 'add map @1 /m.map', payload: ['c d'] }]);
    expect(() => versionedMapCommands({ type: 'map-replace', file: '/m.map', entries: [['a', 'b\nshutdown sessions']] }, '1', 15_360)).toThrow(TypeError);
  });
});
