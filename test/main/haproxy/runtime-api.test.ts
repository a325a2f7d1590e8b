// RuntimeApi against a scripted socket: the exact lines it sends, how it cuts replies, and how
// HAProxy's error replies become RuntimeCommandError (the e2e tests repeat this against HAProxy).
import { describe, expect, it } from 'vitest';
import { RuntimeApi, cliArg } from '../../../src/main/haproxy/runtime-api.js';
import { ScriptedTransport, promptSession } from './scripted-transport.js';

describe('RuntimeApi.send', () => {
  it('sends one non-interactive line with the severity prefix and returns the output', async () => {
    const transport = new ScriptedTransport(["\n[warning]: IP changed from '127.0.0.1' to '127.0.0.5'\n\n"]);
    const api = new RuntimeApi({ socketPath: transport.socketPath, transport });
    const reply = await api.send('set server be/srv1 addr 127.0.0.5');
    expect(transport.requests).toEqual(['set severity-output string; set server be/srv1 addr 127.0.0.5\n']);
    expect(reply).toEqual({ command: 'set server be/srv1 addr 127.0.0.5', severity: 'warning', output: "[warning]: IP changed from '127.0.0.1' to '127.0.0.5'" });
  });

  it('throws RuntimeCommandError carrying the command and the reply on [err]', async () => {
    const transport = new ScriptedTransport(['\n[err]: No such backend.\n\n']);
    const api = new RuntimeApi({ socketPath: transport.socketPath, transport });
    await expect(api.send('set server nope/srv1 state ready')).rejects.toMatchObject({
      name: 'RuntimeCommandError',
      code: 'HAPROXY_COMMAND_FAILED',
      terminal: true,
      command: 'set server nope/srv1 state ready',
      reply: '[err]: No such backend.',
    });
  });

  it('refuses a command that would be two commands before sending anything', async () => {
    const transport = new ScriptedTransport([]);
    const api = new RuntimeApi({ socketPath: transport.socketPath, transport });
    await expect(api.send('show info; shutdown frontend http')).rejects.toThrow(TypeError);
    await expect(api.send(`add map /m ${cliArg('a;b')} be`)).rejects.toThrow(/unscripted/);
    expect(transport.requests).toEqual(['set severity-output string; add map /m a\\;b be\n']);
  });
});

describe('RuntimeApi.sendBatch', () => {
  it('pipelines commands in prompt mode and returns one reply per command', async () => {
    const transport = new ScriptedTransport([promptSession(['1 (initial 1)', '', '5 (initial 1)'])]);
    const api = new RuntimeApi({ socketPath: transport.socketPath, transport });
    const replies = await api.sendBatch(['get weight be/s1', 'set weight be/s1 5', 'get weight be/s1']);
    expect(transport.requests).toEqual(['prompt\nset severity-output string\nget weight be/s1\nset weight be/s1 5\nget weight be/s1\nquit\n']);
    expect(replies.map((r) => r.output)).toEqual(['1 (initial 1)', '', '5 (initial 1)']);
  });

  it('splits a long batch over connections and stops after the connection holding a failure', async () => {
    const transport = new ScriptedTransport([promptSession(['', '']), promptSession(['', '[err]: Key not found.'])]);
    const api = new RuntimeApi({ socketPath: transport.socketPath, transport, maxCommandsPerConnection: 2 });
    const commands = ['add map /m a x', 'add map /m b x', 'add map /m c x', 'del map /m zz', 'add map /m e x'];
    await expect(api.sendBatch(commands)).rejects.toMatchObject({ command: 'del map /m zz', index: 3, executed: 4, reply: '[err]: Key not found.' });
    expect(transport.requests).toHaveLength(2);
  });

  it('checks every command before opening the first connection', async () => {
    const transport = new ScriptedTransport([]);
    const api = new RuntimeApi({ socketPath: transport.socketPath, transport });
    await expect(api.sendBatch(['show info', 'x\ny'])).rejects.toThrow(TypeError);
    expect(transport.requests).toEqual([]);
  });

  it('sends a payload command as its first line with <<, the payload lines and an empty line, and drops the + prompts from its output', async () => {
    const transport = new ScriptedTransport([`\n> \n> + + + \n> \n> `]);
    const api = new RuntimeApi({ socketPath: transport.socketPath, transport });
    const replies = await api.sendBatch([{ line: 'add map @3 /m', payload: ['a/ be1', 'b/ be with spaces'] }, 'show info']);
    expect(transport.requests).toEqual(['prompt\nset severity-output string\nadd map @3 /m <<\na/ be1\nb/ be with spaces\n\nshow info\nquit\n']);
    expect(replies.map((r) => [r.command, r.output])).toEqual([
      ['add map @3 /m << (2 lines)', ''],
      ['show info', ''],
    ]);
  });

  it('reads an [err] after the + prompts of a payload command as its failure', async () => {
    const transport = new ScriptedTransport([`\n> \n> + + [err]: Missing value for key 'x'.\n\n> `]);
    const api = new RuntimeApi({ socketPath: transport.socketPath, transport });
    await expect(api.sendBatch([{ line: 'add map @3 /m', payload: ['x'] }])).rejects.toMatchObject({
      command: 'add map @3 /m << (1 lines)',
      reply: "[err]: Missing value for key 'x'.",
    });
  });

  it('refuses a payload HAProxy would cut or end early, and a one-line command that would start a payload, before connecting', async () => {
    const transport = new ScriptedTransport([]);
    const api = new RuntimeApi({ socketPath: transport.socketPath, transport, maxPayloadBytes: 64 });
    await expect(api.sendBatch([{ line: 'add map @1 /m', payload: ['k '.repeat(40)] }])).rejects.toThrow(/exceeds the 64-byte limit/);
    await expect(api.sendBatch([{ line: 'add map @1 /m', payload: ['a b', ''] }])).rejects.toThrow(/one non-empty line/);
    await expect(api.sendBatch([{ line: 'add map @1 /m', payload: [] }])).rejects.toThrow(/without payload/);
    await expect(api.sendBatch(['add map /m k v<<'])).rejects.toThrow(/starts a payload/);
    await expect(api.send('add map /m k <<')).rejects.toThrow(/starts a payload/);
    expect(transport.requests).toEqual([]);
  });

  it('rejects a nonsensical connection size with the value it got', () => {
    expect(() => new RuntimeApi({ socketPath: '/s', maxCommandsPerConnection: 0 })).toThrow(/got 0/);
    expect(() => new RuntimeApi({ socketPath: '/s', maxPayloadBytes: -1 })).toThrow(/maxPayloadBytes .* got -1/);
  });
});
