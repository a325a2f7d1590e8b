// What the agent logs per apply, against a real HAProxy on 127.0.0.6: a reload (a full sync here)
// is logged at info; a runtime change, one per endpoint change, only at debug, once its answer is out.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from '../../../src/main/agent/agent.js';
import { parseApplyRequest } from '../../../src/main/agent/agent-protocol.js';
import { EchoFleet, type EchoServer } from '../../helpers/e2e-echo.js';
import { freePorts, SKIP_HAPROXY, skipNotice } from '../../helpers/haproxy-harness.js';
import { agentConfig } from '../../helpers/agent-config.js';

skipNotice('test/main/agent/agent-log.test.ts');

const ADDRESS = '127.0.0.6';
const leader = { mapsDir: '/leader/out/maps', filesDir: '/leader/out/files', certsDir: '/leader/out/certs', runDir: '/leader/out/run' };

interface Line {
  readonly level: number;
  readonly msg: string;
  readonly reload?: boolean;
  readonly checksum?: string;
}

describe.skipIf(SKIP_HAPROXY)('the agent log', () => {
  let root: string;
  let agent: Agent;
  let one: EchoServer;
  let two: EchoServer;
  let httpPort: number;
  let sequence = 0;
  const echoes = new EchoFleet();
  const lines: Line[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line) as Line) });

  const config = (port: number): string => agentConfig({ runDir: leader.runDir, httpPort, port, frontend: ['    default_backend be_shop'] });
  const apply = async (body: Record<string, unknown>): Promise<number> => {
    const parsed = parseApplyRequest({ epoch: 1, sequence: ++sequence, paths: leader, runtimeOps: [], reload: false, ...body });
    if (!parsed.ok) throw new Error(parsed.message);
    return (await agent.apply(parsed.request)).status;
  };
  const applied = (): Line[] => lines.filter((line) => line.msg === 'applied');

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'agent-log-'));
    [httpPort] = (await freePorts(1)) as [number];
    one = await echoes.start('one');
    two = await echoes.start('two');
    agent = new Agent({ dir: join(root, 'agent'), bindAddress: ADDRESS, logger });
    await agent.start();
  }, 30_000);

  afterAll(async () => {
    await agent?.stop();
    await echoes.stopAll();
    await rm(root, { recursive: true, force: true });
  });

  it('logs a reload at info and a runtime change at debug only, after its answer', async () => {
    expect(await apply({ full: true, checksum: 'c1', baseChecksum: null, config: config(one.port), reload: true })).toBe(200);
    expect(applied()).toMatchObject([{ level: 30, reload: true, checksum: 'c1' }]);
    const runtime = [{ type: 'server-addr', backend: 'be_shop', server: 's1', address: '127.0.0.1', port: two.port }];
    expect(await apply({ checksum: 'c1', baseChecksum: 'c1', runtimeOps: runtime })).toBe(200);
    // Not in front of the answer: the line follows in a later turn of the event loop.
    expect(applied()).toHaveLength(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(applied()).toMatchObject([
      { level: 30, reload: true },
      { level: 20, reload: false, checksum: 'c1' },
    ]);
  });
});
