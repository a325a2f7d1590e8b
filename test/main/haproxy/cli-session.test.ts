// CliSession against a small UNIX socket server that answers like HAProxy's CLI in prompt mode
// (each command's output, a blank line, then `> `): one session for many exchanges, its setup
// sent once, and a new session after HAProxy closed one, after close(), after a timeout on the
// injected clock, and after bytes that belong to no exchange.
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CliSession } from '../../../src/main/haproxy/cli-session.js';
import { parseSessionReplies } from '../../../src/main/haproxy/cli-reply.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { eventually } from '../../helpers/eventually.js';

let dir: string;
const servers: Server[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cli-session-'));
});

afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

interface FakeCli {
  readonly path: string;
  /** Every line each connection received, one array per connection. */
  readonly sessions: string[][];
  readonly sockets: Socket[];
}

/** Answers `echo X` with X, `hang` with nothing; other commands print nothing. */
async function fakeCli(): Promise<FakeCli> {
  const path = join(dir, 'admin.sock');
  const sessions: string[][] = [];
  const sockets: Socket[] = [];
  const server = createServer((socket) => {
    const lines: string[] = [];
    sessions.push(lines);
    sockets.push(socket);
    let buffered = '';
    socket.on('data', (chunk) => {
      buffered += chunk.toString('utf8');
      let cut: number;
      while ((cut = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, cut);
        buffered = buffered.slice(cut + 1);
        lines.push(line);
        if (line === 'hang') continue;
        socket.write(`${line.startsWith('echo ') ? `${line.slice(5)}\n` : ''}\n> `);
      }
    });
    socket.on('error', () => undefined);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return { path, sessions, sockets };
}

const replies = (raw: string, count: number): string[] => parseSessionReplies(raw, count, 'admin.sock');

describe('CliSession', () => {
  it('runs many exchanges on one session, sending prompt and the severity setting only once', async () => {
    const cli = await fakeCli();
    const session = new CliSession({ socketPath: cli.path });
    expect(replies(await session.exchange('echo a\necho b\n', 2), 2)).toEqual(['a', 'b']);
    expect(replies(await session.exchange('echo c\n', 1), 1)).toEqual(['c']);
    expect(cli.sessions).toEqual([['prompt', 'set severity-output string', 'echo a', 'echo b', 'echo c']]);
    session.close();
  });

  it('opens a new session after HAProxy closed the last one, and after close()', async () => {
    const cli = await fakeCli();
    const session = new CliSession({ socketPath: cli.path });
    await session.exchange('echo a\n', 1);
    cli.sockets[0]?.end();
    await eventually(() => !session.connected, 'the session to notice the close');
    expect(replies(await session.exchange('echo b\n', 1), 1)).toEqual(['b']);
    session.close();
    expect(replies(await session.exchange('echo c\n', 1), 1)).toEqual(['c']);
    expect(cli.sessions.map((lines) => lines.at(-1))).toEqual(['echo a', 'echo b', 'echo c']);
    session.close();
  });

  it('fails an exchange whose reply never completes with reason timeout, and starts over on the next', async () => {
    const cli = await fakeCli();
    const clock = new FakeClock();
    const session = new CliSession({ socketPath: cli.path, clock, timeoutMs: 5_000 });
    const pending = session.exchange('hang\n', 1);
    await eventually(() => cli.sessions[0]?.includes('hang') === true, 'the command to arrive');
    await clock.advance(5_000);
    await expect(pending).rejects.toMatchObject({ reason: 'timeout' });
    expect(replies(await session.exchange('echo b\n', 1), 1)).toEqual(['b']);
    expect(cli.sessions).toHaveLength(2);
    session.close();
  });

  it('drops a session that receives bytes while no exchange runs', async () => {
    const cli = await fakeCli();
    const session = new CliSession({ socketPath: cli.path });
    await session.exchange('echo a\n', 1);
    cli.sockets[0]?.write('late\n> ');
    await eventually(() => !session.connected, 'the session to be dropped');
    expect(replies(await session.exchange('echo b\n', 1), 1)).toEqual(['b']);
    expect(cli.sessions).toHaveLength(2);
    session.close();
  });

  it('fails the exchange under way when close() is called', async () => {
    const cli = await fakeCli();
    const session = new CliSession({ socketPath: cli.path });
    const pending = session.exchange('hang\n', 1);
    await eventually(() => cli.sessions[0]?.includes('hang') === true, 'the command to arrive');
    session.close();
    await expect(pending).rejects.toMatchObject({ reason: 'closed' });
  });
});
