// `haptic-reconciler agent`: one beside each HAProxy of a fleet (see src/main/agent/). Reads the
// token and TLS files, starts the Agent (its HAProxy on the kept render, if any), serves the agent
// API on --listen and, unless off, metrics and probes on --metrics-addr; SIGTERM or SIGINT stops
// the server and HAProxy and exits 0.
import { InvalidArgumentError, Option, type Command } from 'commander';
import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { Agent } from '../agent/agent.js';
import { AgentMetrics } from '../agent/agent-metrics.js';
import { startAgentServer } from '../agent/agent-server.js';
import { BearerAuth } from '../agent/bearer-auth.js';
import { defaultLogger } from '../core/logger.js';
import { startHttpEndpoints } from '../metrics/http-endpoints.js';
import { positiveInteger } from './options.js';

interface AgentFlags {
  dir: string;
  listen: string;
  tokenFile: string;
  bindAddress?: string;
  tlsCert?: string;
  tlsKey?: string;
  metricsAddr: string;
  maxBodyBytes: number;
}

export function registerAgent(program: Command): void {
  program
    .command('agent')
    .description('run beside one HAProxy of a fleet: supervise it and apply what the leader sends (GET /v1/state, POST /v1/apply)')
    .requiredOption('--dir <dir>', 'where the render, the sockets (run/) and the agent state are kept')
    .requiredOption('--listen <host:port>', 'serve the agent API, /healthz and /readyz here')
    .requiredOption('--token-file <file>', 'file holding the bearer token the leader sends')
    .option('--bind-address <addr>', 'make every bind of the render listen on this IP address')
    .option('--tls-cert <file>', 'serve the agent API over HTTPS with this PEM certificate (needs --tls-key)')
    .option('--tls-key <file>', 'the PEM private key of --tls-cert')
    .option('--metrics-addr <host:port>', 'serve /metrics, /healthz, /readyz here; "off" disables', 'off')
    .addOption(new Option('--max-body-bytes <n>', 'larger apply bodies get 413').default(256 * 1024 * 1024).argParser(positiveInteger))
    .action(async (flags: AgentFlags) => {
      process.exitCode = await agentCommand(flags);
    });
}

async function agentCommand(flags: AgentFlags): Promise<number> {
  if (flags.bindAddress !== undefined && isIP(flags.bindAddress) === 0) throw new InvalidArgumentError(`--bind-address must be an IP address, got ${JSON.stringify(flags.bindAddress)}`);
  if ((flags.tlsCert === undefined) !== (flags.tlsKey === undefined)) throw new InvalidArgumentError('--tls-cert and --tls-key go together');
  const logger = defaultLogger();
  const token = (await readFile(resolve(flags.tokenFile), 'utf8').catch((error: unknown) => {
    throw new InvalidArgumentError(`--token-file ${flags.tokenFile}: ${(error as Error).message}`);
  })).trim();
  if (token === '') throw new InvalidArgumentError(`--token-file ${flags.tokenFile} is empty`);
  const tls = flags.tlsCert === undefined ? undefined : { cert: await readFile(resolve(flags.tlsCert), 'utf8'), key: await readFile(resolve(flags.tlsKey as string), 'utf8') };
  const hooks: { onRestart?: () => void } = {};
  const agent = new Agent({ dir: resolve(flags.dir), logger, ...(flags.bindAddress === undefined ? {} : { bindAddress: flags.bindAddress }), onHaproxyRestart: () => hooks.onRestart?.() });
  const metrics = new AgentMetrics(() => agent.ready);
  hooks.onRestart = () => metrics.countHaproxyRestart();
  await agent.start();
  const server = await startAgentServer({
    listen: flags.listen,
    agent,
    auth: new BearerAuth(token, logger),
    logger,
    maxBodyBytes: flags.maxBodyBytes,
    onApply: (status) => metrics.countApply(status),
    ...(tls === undefined ? {} : { tls }),
  });
  const endpoints = await startHttpEndpoints({ address: flags.metricsAddr, metrics, readiness: () => ({ ready: agent.ready }), logger });
  logger.info({ listen: server.address, tls: tls !== undefined, metrics: endpoints.address ?? 'off', dir: agent.dir }, 'agent serving');
  await new Promise<void>((done) => {
    const stop = (signal: NodeJS.Signals): void => {
      logger.info({ signal }, 'stopping');
      done();
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
  setTimeout(() => process.exit(0), 9_500).unref();
  await Promise.all([server.close(), endpoints.close()]);
  await agent.stop();
  return 0;
}
