// The order of an AgentTarget's exchanges, with a client whose answers the test releases one by
// one: a file write the Deployer did not wait for and the next runtime change never overlap, so
// the agent sees their (epoch, sequence) in the order they were called.
import { describe, expect, it } from 'vitest';
import type { AgentState } from '../../../src/main/agent/agent-protocol.js';
import type { DeployableRender } from '../../../src/main/deploy/deploy-target.js';
import type { AgentAnswer, AgentClient } from '../../../src/main/fleet/agent-client.js';
import { AgentTarget } from '../../../src/main/fleet/agent-target.js';
import { FencingToken } from '../../../src/main/fleet/fencing-token.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { silentLogger } from '../../helpers/loggers.js';

interface Sent {
  readonly method: string;
  readonly kind: string;
  readonly body: Record<string, unknown> | undefined;
  answer(): void;
}

/** An agent that answers each request only when the test says so, and fences as the agent does. */
class HeldClient {
  readonly address = '127.0.0.1:1';
  readonly sent: Sent[] = [];
  #waiters: { count: number; resolve: () => void }[] = [];
  state: AgentState = { epoch: 0, sequence: 0, checksum: 'c0', files: {}, haproxy: { version: null, running: true }, ready: true };

  send(method: 'GET' | 'POST', _path: string, kind: string, body?: unknown): Promise<AgentAnswer> {
    return new Promise((resolve) => {
      const request = body as Record<string, unknown> | undefined;
      this.sent.push({
        method,
        kind,
        body: request,
        answer: () => {
          if (request === undefined) return resolve({ status: 200, body: this.state as unknown as Record<string, unknown> });
          const epoch = request.epoch as number;
          const sequence = request.sequence as number;
          if (epoch < this.state.epoch || (epoch === this.state.epoch && sequence <= this.state.sequence)) {
            return resolve({ status: 409, body: { ok: false, error: 'fenced', state: this.state } });
          }
          this.state = { ...this.state, epoch, sequence, checksum: request.checksum as string };
          resolve({ status: 200, body: { ok: true, applied: 1, state: this.state } });
        },
      });
      for (const waiter of this.#waiters.filter((w) => this.sent.length >= w.count)) waiter.resolve();
      this.#waiters = this.#waiters.filter((w) => this.sent.length < w.count);
    });
  }

  /** Resolves once `count` requests have been sent. */
  whenSent(count: number): Promise<void> {
    if (this.sent.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ count, resolve }));
  }
}

function render(checksum: string): DeployableRender {
  return { renderId: checksum, checksum, haproxyConfig: `global # ${checksum}\n`, auxiliaryFiles: { maps: {}, files: {}, certificates: {} } };
}

async function turns(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

describe('AgentTarget exchange order', () => {
  it('sends the next runtime change only after the file write called before it was answered, with a higher sequence', async () => {
    const client = new HeldClient();
    const target = new AgentTarget({ client: client as unknown as AgentClient, fence: new FencingToken(() => 3, new FakeClock()), paths: { mapsDir: '/m', filesDir: '/f', certsDir: '/c', runDir: '/r' }, keysAllowed: true, logger: silentLogger() });
    const written = target.writeFiles(render('c1'), 'serving');
    const applied = target.applyRuntime([{ type: 'server-addr', backend: 'be', server: 'srv1', address: '10.0.0.2', port: 80 }]);
    const checked = target.currentChecksum();
    await turns();
    // The state read before the write; nothing else yet.
    expect(client.sent.map((s) => s.kind)).toEqual(['state']);
    client.sent[0]?.answer();
    await client.whenSent(2);
    await turns();
    expect(client.sent.map((s) => s.kind)).toEqual(['state', 'files']);
    client.sent[1]?.answer();
    await written;
    await client.whenSent(3);
    expect(client.sent.map((s) => s.kind)).toEqual(['state', 'files', 'runtime']);
    client.sent[2]?.answer();
    expect(await applied).toEqual({ applied: 1 });
    await client.whenSent(4);
    client.sent[3]?.answer();
    expect(await checked).toBe('c1');
    const [files, runtime] = [client.sent[1]?.body, client.sent[2]?.body] as [Record<string, number>, Record<string, number>];
    expect(runtime.sequence).toBeGreaterThan(files.sequence);
    expect(target.health()).toBe('ok');
  });

  it('keeps its order after an exchange that failed', async () => {
    const client = new HeldClient();
    const target = new AgentTarget({ client: client as unknown as AgentClient, fence: new FencingToken(() => 3, new FakeClock()), paths: { mapsDir: '/m', filesDir: '/f', certsDir: '/c', runDir: '/r' }, keysAllowed: true, logger: silentLogger() });
    client.state = { ...client.state, checksum: null };
    // An agent that serves nothing cannot take runtime operations: the call rejects, the next one still runs.
    const refused = target.applyRuntime([{ type: 'server-addr', backend: 'be', server: 'srv1', address: '10.0.0.2', port: 80 }]);
    const written = target.writeFiles(render('c1'), 'serving');
    await turns();
    client.sent[0]?.answer();
    await expect(refused).rejects.toThrow(/serves no render yet/);
    await client.whenSent(2);
    expect(client.sent.map((s) => s.kind)).toEqual(['state', 'files']);
    client.sent[1]?.answer();
    await written;
    expect(client.state.checksum).toBe('c1');
  });
});
