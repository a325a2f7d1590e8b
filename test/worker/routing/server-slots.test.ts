import { beforeAll, describe, expect, it } from 'vitest';
import { assignSlots, PARKED_ADDRESS, parseSlotFile, SERVER_SLOTS_FILE } from '../../../src/worker/routing/ingress-model.js';
import type { KubeObject, RenderBaseline, TemplateSetSource } from '../../../src/worker/protocol.js';
import { defaultTemplateSet, endpointSlice, ingress, renderOk, rule, service, withValues, type RenderSuccess } from '../../helpers/cluster.js';
import { serverLines, WEB } from './ingress-fixtures.js';

describe('server slots', () => {
  const slots = (servers: readonly { address: string; enabled: boolean }[]): string[] => servers.map((s) => (s.enabled ? s.address : '-'));

  it('fills slots in order and parks the rest, disabled, at the parking address', () => {
    const servers = assignSlots(['10.0.0.1:80', '10.0.0.2:80'], undefined, 4);
    expect(servers).toEqual([
      { name: 'srv1', address: '10.0.0.1:80', enabled: true },
      { name: 'srv2', address: '10.0.0.2:80', enabled: true },
      { name: 'srv3', address: PARKED_ADDRESS, enabled: false },
      { name: 'srv4', address: PARKED_ADDRESS, enabled: false },
    ]);
  });

  it('keeps surviving endpoints in their slots and puts new endpoints into freed slots', () => {
    const servers = assignSlots(['b:1', 'c:1', 'd:1', 'e:1'], ['a:1', 'b:1', '', 'c:1'], 4);
    expect(slots(servers)).toEqual(['d:1', 'b:1', 'e:1', 'c:1']);
  });

  it('grows by whole blocks when the endpoints outnumber the slots', () => {
    const eleven = Array.from({ length: 11 }, (_, i) => `10.0.0.${i + 1}:80`);
    expect(assignSlots(eleven, undefined, 10)).toHaveLength(20);
    expect(assignSlots(eleven.slice(0, 10), undefined, 10)).toHaveLength(10);
    expect(assignSlots([], undefined, 10)).toHaveLength(10);
    const previous = eleven.slice(0, 10);
    const grown = assignSlots(eleven, previous, 10);
    expect(slots(grown).slice(0, 10)).toEqual(previous);
    expect(slots(grown).slice(10)).toEqual(['10.0.0.11:80', '-', '-', '-', '-', '-', '-', '-', '-', '-']);
  });

  it('keeps the slot count of a baseline while at least half the slots are in use, and shrinks it after a spike', () => {
    const previous = Array.from({ length: 20 }, (_, i) => `10.0.0.${i + 1}:80`);
    const stays = assignSlots(previous.slice(5), previous, 10);
    expect(stays).toHaveLength(20);
    expect(slots(stays).slice(5)).toEqual(previous.slice(5));
    // One endpoint left of 20: back to one block, the survivor moved into it.
    const servers = assignSlots(['10.0.0.20:80'], previous, 10);
    expect(servers).toHaveLength(10);
    expect(slots(servers).filter((s) => s !== '-')).toEqual(['10.0.0.20:80']);
  });

  describe('across renders with a baseline', () => {
    let set: TemplateSetSource;
    beforeAll(async () => {
      set = await defaultTemplateSet();
    });

    const cluster = (addresses: string[]): KubeObject[] => [
      ingress('shop', 'web', { rules: [rule('shop.example.com', { service: 'web' })] }),
      service('shop', 'web'),
      endpointSlice('shop', 'web', addresses),
    ];
    const baselineOf = (out: RenderSuccess): RenderBaseline => ({ haproxyConfig: out.haproxyConfig, auxiliaryFiles: out.auxiliaryFiles });

    it('writes the slot assignment to server-slots.txt', () => {
      const out = renderOk(set, cluster(['10.0.0.1', '10.0.0.2']));
      // One line per backend: its slots in order, '-' for an empty one.
      expect(out.auxiliaryFiles.files[SERVER_SLOTS_FILE]).toBe(`${WEB} 10.0.0.1:8080 10.0.0.2:8080 - - - - - - - -\n`);
      expect(parseSlotFile(out.auxiliaryFiles.files[SERVER_SLOTS_FILE]).get(WEB)).toEqual(['10.0.0.1:8080', '10.0.0.2:8080', '', '', '', '', '', '', '', '']);
    });

    it('keeps surviving endpoints in their slots through endpoint churn and changes only the freed slot', () => {
      const first = renderOk(set, cluster(['10.0.0.1', '10.0.0.2', '10.0.0.3']));
      // 10.0.0.1 goes away; 10.0.0.0 (which sorts first) arrives.
      const second = renderOk(set, cluster(['10.0.0.0', '10.0.0.2', '10.0.0.3']), baselineOf(first));
      const before = serverLines(first.haproxyConfig, WEB);
      const after = serverLines(second.haproxyConfig, WEB);
      expect(after).toHaveLength(before.length);
      const changed = after.map((line, i) => (line === before[i] ? null : `${before[i]} -> ${line}`)).filter((c) => c !== null);
      expect(changed).toEqual(['server srv1 10.0.0.1:8080 -> server srv1 10.0.0.0:8080']);
    });

    it('renders slots from scratch in sorted order without a baseline', () => {
      const out = renderOk(set, cluster(['10.0.0.0', '10.0.0.2', '10.0.0.3']));
      expect(serverLines(out.haproxyConfig, WEB).slice(0, 3)).toEqual([
        'server srv1 10.0.0.0:8080',
        'server srv2 10.0.0.2:8080',
        'server srv3 10.0.0.3:8080',
      ]);
    });

    it('disables the slot of a removed endpoint without moving the others', () => {
      const first = renderOk(set, cluster(['10.0.0.1', '10.0.0.2', '10.0.0.3']));
      const second = renderOk(set, cluster(['10.0.0.1', '10.0.0.3']), baselineOf(first));
      expect(serverLines(second.haproxyConfig, WEB).slice(0, 3)).toEqual([
        'server srv1 10.0.0.1:8080',
        `server srv2 ${PARKED_ADDRESS} disabled`,
        'server srv3 10.0.0.3:8080',
      ]);
    });

    it('grows a backend by a whole block of serverSlots when it runs out of slots', () => {
      const small = withValues(set, { serverSlots: 4 });
      const first = renderOk(small, cluster(['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4']));
      expect(serverLines(first.haproxyConfig, WEB)).toHaveLength(4);
      const second = renderOk(small, cluster(['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4', '10.0.0.5']), baselineOf(first));
      const lines = serverLines(second.haproxyConfig, WEB);
      expect(lines).toHaveLength(8);
      expect(lines.slice(0, 4)).toEqual(serverLines(first.haproxyConfig, WEB));
      expect(lines[4]).toBe('server srv5 10.0.0.5:8080');
    });
  });
});
