// replaceMap against a scripted socket: prepare, the entries as payload commands, and a commit
// sent only once HAProxy accepted every entry (the e2e tests repeat this against HAProxy).
import { describe, expect, it } from 'vitest';
import { RuntimeApi } from '../../../src/main/haproxy/runtime-api.js';
import { replaceMap } from '../../../src/main/haproxy/map-replace.js';
import { ScriptedTransport } from './scripted-transport.js';

const op = { type: 'map-replace', file: '/m.map', entries: [['a/', 'be1'], ['b/', 'be2 with spaces']] } as const;

describe('replaceMap', () => {
  it('prepares a version, adds the entries to it in one payload command, then commits it on its own connection', async () => {
    const transport = new ScriptedTransport(['\nNew version created: 4\n\n', '\n> \n> + + + \n> ', '\n\n']);
    await replaceMap(new RuntimeApi({ socketPath: transport.socketPath, transport }), op);
    expect(transport.requests).toEqual([
      'set severity-output string; prepare map /m.map\n',
      'prompt\nset severity-output string\nadd map @4 /m.map <<\na/ be1\nb/ be2 with spaces\n\nquit\n',
      'set severity-output string; commit map @4 /m.map\n',
    ]);
  });

  it('does not commit a version HAProxy refused an entry of', async () => {
    const transport = new ScriptedTransport(['\nNew version created: 5\n\n', "\n> \n> + + + [err]: unable to parse 'be2 with spaces'.\n\n> "]);
    const api = new RuntimeApi({ socketPath: transport.socketPath, transport });
    await expect(replaceMap(api, op)).rejects.toMatchObject({ name: 'RuntimeCommandError', reply: "[err]: unable to parse 'be2 with spaces'." });
    expect(transport.requests).toHaveLength(2);
    expect(transport.requests.some((request) => request.includes('commit map'))).toBe(false);
  });
});
