// UnixSocketTransport against small local UNIX socket servers: a full exchange, a connect
// failure, a reply cut at its size bound, and a timeout driven by a FakeClock (no sleeping).
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UnixSocketTransport } from '../../../src/main/haproxy/cli-transport.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { eventually } from '../../helpers/eventually.js';

let dir: string;
const servers: Server[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cli-'));
});

afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

async function serve(onLine: (line: string, socket: Socket) => void): Promise<string> {
  const path = join(dir, 's.sock');
  const server = createServer((socket) => {
    let buffered = '';
    socket.on('data', (chunk) => {
      buffered += chunk.toString('utf8');
      if (buffered.endsWith('\n')) onLine(buffered, socket);
    });
    socket.on('error', () => undefined);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return path;
}

describe('UnixSocketTransport', () => {
  it('writes the request and resolves with everything read until the server closes', async () => {
    const path = await serve((line, socket) => socket.end(`echo:${line}\n`));
    const transport = new UnixSocketTransport({ socketPath: path });
    expect(await transport.exchange('show info\n')).toBe('echo:show info\n\n');
  });

  it('fails with reason connect when nothing listens', async () => {
    const transport = new UnixSocketTransport({ socketPath: join(dir, 'missing.sock') });
    await expect(transport.exchange('show info\n')).rejects.toMatchObject({ code: 'HAPROXY_CLI_FAILED', reason: 'connect', terminal: false });
  });

  it('fails with reason timeout when the reply never ends, on the injected clock', async () => {
    let connected = false;
    const path = await serve(() => {
      connected = true;
    });
    const clock = new FakeClock();
    const transport = new UnixSocketTransport({ socketPath: path, clock, timeoutMs: 5_000 });
    const pending = transport.exchange('show proc\n');
    await eventually(() => connected, 'the request to arrive');
    await clock.advance(5_000);
    await expect(pending).rejects.toMatchObject({ reason: 'timeout', message: expect.stringContaining('no complete reply within 5000 ms') });
  });

  it('fails with reason reply-too-large instead of buffering an unbounded reply', async () => {
    const path = await serve((_line, socket) => socket.end('x'.repeat(10_000)));
    const transport = new UnixSocketTransport({ socketPath: path, maxReplyBytes: 1_000 });
    await expect(transport.exchange('show map\n')).rejects.toMatchObject({ reason: 'reply-too-large' });
  });

  it('refuses a socket path longer than a UNIX socket address holds', () => {
    expect(() => new UnixSocketTransport({ socketPath: `/${'d'.repeat(120)}/s.sock` })).toThrow(/longer than 107 bytes/);
  });
});
