// The three agents of bench:fleet. By default each is `haptic-reconciler agent` in a process of
// its own, as deployed (one beside each HAProxy, never in the leader's process), its output (and
// its HAProxy's) in `<root>/<address>.log`, not through the leader's pipes; with
// `inProcess`, Agents and their servers run in the benchmark's own process, sharing the leader's
// event loop (each agent's work then delays the leader and the other agents).
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { Agent } from '../src/main/agent/agent.js';
import { startAgentServer, type AgentServer } from '../src/main/agent/agent-server.js';
import { BearerAuth } from '../src/main/agent/bearer-auth.js';
import type { AgentEndpoint } from '../src/main/fleet/agent-client.js';

const CLI = fileURLToPath(new URL('../src/main/cli/cli.ts', import.meta.url));

export interface BenchAgents {
  readonly endpoints: readonly AgentEndpoint[];
  stop(): Promise<void>;
}

export async function startBenchAgents(root: string, addresses: readonly string[], token: string, logger: Logger, inProcess: boolean): Promise<BenchAgents> {
  return inProcess ? inProcessAgents(root, addresses, token, logger) : childAgents(root, addresses, token);
}

async function inProcessAgents(root: string, addresses: readonly string[], token: string, logger: Logger): Promise<BenchAgents> {
  const agents: Agent[] = [];
  const servers: AgentServer[] = [];
  for (const address of addresses) {
    const agent = new Agent({ dir: join(root, address), bindAddress: address, logger });
    await agent.start();
    agents.push(agent);
    servers.push(await startAgentServer({ listen: `${address}:0`, agent, auth: new BearerAuth(token, logger), logger }));
  }
  return {
    endpoints: servers.map((server) => endpointOf(server.address)),
    stop: async () => {
      await Promise.all(servers.map((s) => s.close()));
      await Promise.all(agents.map((a) => a.stop()));
    },
  };
}

async function childAgents(root: string, addresses: readonly string[], token: string): Promise<BenchAgents> {
  const tokenFile = join(root, 'agent-token');
  await writeFile(tokenFile, `${token}\n`, { mode: 0o600 });
  const children: ChildProcess[] = [];
  try {
    const endpoints: AgentEndpoint[] = [];
    for (const address of addresses) {
      const dir = join(root, address);
      await mkdir(dir, { recursive: true });
      const log = join(root, `${address}.log`);
      const output = openSync(log, 'w');
      const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'agent', '--dir', dir, '--listen', `${address}:0`, '--token-file', tokenFile, '--bind-address', address], {
        stdio: ['ignore', output, output],
        env: { ...process.env, LOG_LEVEL: 'info' },
      });
      closeSync(output);
      children.push(child);
      endpoints.push(endpointOf(await listening(child, log, address)));
    }
    return { endpoints, stop: () => stopAll(children) };
  } catch (error) {
    await stopAll(children);
    throw error;
  }
}

/** The address the agent logged it serves on (`agent serving`), read from its log file. */
async function listening(child: ChildProcess, log: string, address: string): Promise<string> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const text = await readFile(log, 'utf8');
    for (const line of text.split('\n')) {
      if (!line.includes('"agent serving"')) continue;
      const listen = (JSON.parse(line) as { listen?: unknown }).listen;
      if (typeof listen === 'string') return listen;
    }
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`agent on ${address} exited (${String(child.exitCode ?? child.signalCode)}) before serving:\n${text.slice(-4096)}`);
    if (Date.now() > deadline) throw new Error(`agent on ${address} not serving within 60 s:\n${text.slice(-4096)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function stopAll(children: readonly ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
        }),
    ),
  );
}

function endpointOf(address: string): AgentEndpoint {
  const cut = address.lastIndexOf(':');
  return { host: address.slice(0, cut), port: Number(address.slice(cut + 1)) };
}
