// `haptic-reconciler run`: the controller. Parses the flags into ControllerOptions, runs the
// controller until SIGTERM or SIGINT, and makes sure the process exits 0 within 10 s of the
// signal (the Lease released, watches closed, HAProxy stopped). When it cannot start (see
// controller/preflight.ts; with --haproxy, also HAProxy refusing to start its first config) or a
// source fails for good, it stops everything and exits 1 with one `error:` line.
import { InvalidArgumentError, Option, type Command } from 'commander';
import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { defaultLogger } from '../core/logger.js';
import { runController, type RunOptions } from '../controller/run-controller.js';
import { DEFAULT_MAX_OLD_WORKERS } from '../haproxy/old-workers.js';
import { DEFAULT_HAPROXY_DOWN_LIMIT_MS } from '../haproxy/haproxy-downtime.js';
import { parseAgentAddresses } from '../fleet/agent-address.js';
import type { AgentEndpoint } from '../fleet/agent-client.js';
import type { FleetOptions } from '../fleet/fleet-targets.js';
import { checkPodSelection } from '../fleet/haproxy-pods.js';
import { DEFAULT_MAX_MANIFEST_BYTES } from '../sources/manifest/manifest-loader.js';
import { DEFAULT_TEMPLATE_SET_PATH } from '../template-set/template-set.js';
import { collect, nonNegativeInteger, positiveInteger, positiveNumber } from './options.js';

/** After a stop signal the process exits by this time, whatever is still open. */
const EXIT_DEADLINE_MS = 10_000;

interface RunFlags {
  manifests?: string;
  kubeconfig?: string;
  inCluster?: boolean;
  out: string;
  namespace?: string;
  templates: string;
  set: string[];
  setNew: string[];
  threads?: number;
  maxManifestBytes: number;
  metricsAddr: string;
  leaderElect: boolean;
  leaseNamespace: string;
  leaseName: string;
  identity: string;
  leaseDuration: number;
  renewDeadline: number;
  retryPeriod: number;
  haproxy: boolean;
  minDeploymentInterval: number;
  driftInterval: number;
  maxOldWorkers: number;
  haproxyDownLimit: number;
  agents?: string;
  haproxyPods?: string;
  haproxyNamespace?: string;
  agentPort: number;
  agentTokenFile?: string;
  agentCa?: string;
  agentInsecure: boolean;
  agentConcurrency: number;
  publishService?: string;
  publishAddress?: string;
  statusWritesPerSecond: number;
  updateStatusOnShutdown: boolean;
  events: boolean;
  webhookAddr?: string;
  webhookCert?: string;
  webhookKey?: string;
  webhookTimeout: number;
}

export function registerRun(program: Command): void {
  program
    .command('run')
    .description('the controller: watch a manifest directory or a cluster and keep --out (and optionally a local HAProxy) current')
    .option('--manifests <dir>', 'watch a directory of Kubernetes YAML/JSON')
    .option('--kubeconfig <file>', 'watch the cluster this kubeconfig points at')
    .option('--in-cluster', 'watch the cluster this pod runs in (service account)')
    .requiredOption('--out <dir>', 'output directory the leader keeps current: haproxy.cfg, maps/, files/, certs/')
    .option('--namespace <ns>', 'watch only this namespace')
    .option('--templates <file>', 'template set YAML', DEFAULT_TEMPLATE_SET_PATH)
    .option('--set <key=value>', 'override a template value; the key must exist (repeatable)', collect, [])
    .option('--set-new <key=value>', 'add or override a template value, new keys allowed (repeatable)', collect, [])
    .addOption(new Option('--threads <n>', 'render worker threads').argParser(positiveInteger))
    .addOption(new Option('--max-manifest-bytes <n>', 'larger manifest files are refused (--manifests)').default(DEFAULT_MAX_MANIFEST_BYTES).argParser(positiveInteger))
    .option('--metrics-addr <host:port>', 'serve /metrics, /healthz, /readyz here; "off" disables', '127.0.0.1:9100')
    .option('--leader-elect', 'elect a leader among replicas with a Kubernetes Lease', false)
    .option('--lease-namespace <ns>', 'namespace of the Lease', 'default')
    .option('--lease-name <name>', 'name of the Lease', 'haptic-reconciler')
    .option('--identity <id>', 'this replica in the election', defaultIdentity())
    .addOption(new Option('--lease-duration <s>', 'seconds a leader holds the Lease without renewing').default(15).argParser(positiveNumber))
    .addOption(new Option('--renew-deadline <s>', 'seconds the leader keeps trying to renew before it gives up').default(10).argParser(positiveNumber))
    .addOption(new Option('--retry-period <s>', 'seconds between election attempts and renewals').default(2).argParser(positiveNumber))
    .option('--haproxy', 'start and supervise a local HAProxy on the output (master socket <out>/run/master.sock)', false)
    .addOption(new Option('--min-deployment-interval <ms>', 'least time between two reloads').default(2000).argParser(nonNegativeInteger))
    .addOption(new Option('--drift-interval <ms>', 'redeploy when nothing was deployed for this long').default(60_000).argParser(positiveInteger))
    .addOption(new Option('--max-old-workers <n>', 'HAProxy workers left draining after reloads; the oldest past it are stopped').default(DEFAULT_MAX_OLD_WORKERS).argParser(nonNegativeInteger))
    .addOption(new Option('--haproxy-down-limit <ms>', '/healthz fails once HAProxy has not run for this long, every restart failing').default(DEFAULT_HAPROXY_DOWN_LIMIT_MS).argParser(positiveInteger))
    .option('--agents <host:port,...>', 'deploy to this fleet of agents (`haptic-reconciler agent` beside each HAProxy)')
    .option('--haproxy-pods <selector>', 'deploy to the agents of the Running Pods this label selector matches (with --kubeconfig or --in-cluster)')
    .option('--haproxy-namespace <ns>', 'look for the --haproxy-pods Pods in this namespace only (default: all namespaces)')
    .addOption(new Option('--agent-port <port>', 'the port of the agent in each --haproxy-pods Pod').default(5555).argParser(portNumber))
    .option('--agent-token-file <file>', 'file holding the bearer token the agents expect (with --agents or --haproxy-pods)')
    .option('--agent-ca <file>', 'talk HTTPS to the agents and verify their certificates against this PEM CA bundle')
    .option('--agent-insecure', 'allow plain HTTP (private keys included) to agents outside loopback', false)
    .addOption(new Option('--agent-concurrency <n>', 'applies in flight across the fleet').default(16).argParser(positiveInteger))
    .option('--publish-service <ns/name>', "publish this Service's load-balancer addresses (else externalIPs, else ClusterIP) in the status of the served Ingresses")
    .option('--publish-address <a[,b...]>', 'publish these IPs or host names in the status of the served Ingresses')
    .addOption(new Option('--status-writes-per-second <n>', 'pace of Ingress status writes').default(20).argParser(positiveNumber))
    .addOption(new Option('--update-status-on-shutdown <bool>', 'clear the published addresses when the controller stops for good (with --leader-elect: when it releases the Lease)').default(true).argParser(booleanFlag))
    .addOption(new Option('--events <bool>', 'write Kubernetes Events (events.k8s.io/v1) on rejected objects').default(true).argParser(booleanFlag))
    .option('--webhook-addr <host:port>', 'serve the validating admission webhook (HTTPS, POST /validate) here; needs --webhook-cert and --webhook-key')
    .option('--webhook-cert <file>', 'PEM certificate (chain) the webhook serves')
    .option('--webhook-key <file>', 'PEM private key of --webhook-cert')
    .addOption(new Option('--webhook-timeout <ms>', 'a review not checked by then is allowed, with a warning').default(2000).argParser(positiveInteger))
    .action(async (flags: RunFlags) => {
      process.exitCode = await runCommand(flags);
    });
}

async function runCommand(flags: RunFlags): Promise<number> {
  const chosen = [flags.manifests !== undefined, flags.kubeconfig !== undefined, flags.inCluster === true].filter(Boolean).length;
  if (chosen !== 1) throw new InvalidArgumentError('run needs exactly one of --manifests DIR, --kubeconfig FILE or --in-cluster');
  const fleet = await fleetFrom(flags);
  if (flags.manifests !== undefined && (flags.publishService !== undefined || flags.publishAddress !== undefined)) {
    throw new InvalidArgumentError('--publish-service and --publish-address write Ingress status on an API server: use them with --kubeconfig or --in-cluster');
  }
  const webhook = webhookOptions(flags);
  const logger = defaultLogger();
  const options: RunOptions = {
    source:
      flags.manifests !== undefined
        ? { manifests: resolve(flags.manifests) }
        : flags.kubeconfig !== undefined
          ? { kubeconfig: resolve(flags.kubeconfig) }
          : { inCluster: true },
    out: resolve(flags.out),
    templates: resolve(flags.templates),
    set: flags.set,
    setNew: flags.setNew,
    metricsAddr: flags.metricsAddr,
    limits: { maxFileBytes: flags.maxManifestBytes },
    logger,
    ...(flags.namespace === undefined ? {} : { namespace: flags.namespace }),
    ...(flags.threads === undefined ? {} : { threads: flags.threads }),
    ...(flags.leaderElect
      ? {
          leaderElection: {
            namespace: flags.leaseNamespace,
            name: flags.leaseName,
            identity: flags.identity,
            leaseDurationMs: flags.leaseDuration * 1000,
            renewDeadlineMs: flags.renewDeadline * 1000,
            retryPeriodMs: flags.retryPeriod * 1000,
          },
        }
      : {}),
    ...(flags.haproxy ? { haproxy: { minDeploymentIntervalMs: flags.minDeploymentInterval, driftIntervalMs: flags.driftInterval, maxOldWorkers: flags.maxOldWorkers, downLimitMs: flags.haproxyDownLimit } } : {}),
    ...(fleet === undefined ? {} : { fleet: { ...fleet, minDeploymentIntervalMs: flags.minDeploymentInterval, driftIntervalMs: flags.driftInterval } }),
    ...(flags.manifests === undefined
      ? {
          feedback: {
            statusWritesPerSecond: flags.statusWritesPerSecond,
            updateStatusOnShutdown: flags.updateStatusOnShutdown,
            events: flags.events,
            ...(flags.publishService === undefined ? {} : { publishService: flags.publishService }),
            ...(flags.publishAddress === undefined ? {} : { publishAddress: flags.publishAddress }),
          },
        }
      : {}),
    ...(webhook === undefined ? {} : { webhook }),
  };
  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stop.signal.aborted) return;
    logger.info({ signal }, 'stopping');
    stop.abort(new Error(`received ${signal}`));
    // Whatever still holds the loop open (a hung socket), the process ends in time.
    setTimeout(() => {
      logger.error({ deadlineMs: EXIT_DEADLINE_MS }, 'shutdown took too long; exiting');
      logger.flush?.();
      process.exit(process.exitCode ?? 0);
    }, EXIT_DEADLINE_MS - 500).unref();
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  try {
    await runController(options, stop.signal);
    return 0;
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
}

/** The flags `fleetFrom` reads. */
export type FleetFlags = Pick<RunFlags, 'manifests' | 'leaderElect' | 'haproxy' | 'agents' | 'haproxyPods' | 'haproxyNamespace' | 'agentPort' | 'agentTokenFile' | 'agentCa' | 'agentInsecure' | 'agentConcurrency'>;

/** The fleet flags, checked before anything starts: a malformed address or a missing token stops `run` here. */
export async function fleetFrom(flags: FleetFlags): Promise<FleetOptions | undefined> {
  if (flags.leaderElect && flags.haproxy) {
    throw new InvalidArgumentError(
      "run --leader-elect --haproxy is refused: only the leader deploys, so a follower's local HAProxy would serve nothing while looking ready. Run HAProxy in a fleet instead: `haptic-reconciler agent` beside each HAProxy and `run --leader-elect --agents HOST:PORT,...`",
    );
  }
  if (flags.haproxyNamespace !== undefined && flags.haproxyPods === undefined) throw new InvalidArgumentError('--haproxy-namespace needs --haproxy-pods SELECTOR');
  if (flags.agents === undefined && flags.haproxyPods === undefined) {
    if (flags.agentTokenFile !== undefined || flags.agentCa !== undefined) throw new InvalidArgumentError('--agent-token-file and --agent-ca need --agents or --haproxy-pods');
    return undefined;
  }
  const fleetFlag = flags.agents === undefined ? '--haproxy-pods' : '--agents';
  if (flags.agents !== undefined && flags.haproxyPods !== undefined) throw new InvalidArgumentError('--agents and --haproxy-pods exclude each other: name a static fleet or discover it from Pods');
  if (flags.haproxy) throw new InvalidArgumentError(`--haproxy and ${fleetFlag} exclude each other: deploy to a local HAProxy or to a fleet of agents`);
  if (flags.haproxyPods !== undefined && flags.manifests !== undefined) throw new InvalidArgumentError('--haproxy-pods discovers Pods on an API server: use it with --kubeconfig or --in-cluster, not --manifests');
  let agents: AgentEndpoint[] = [];
  let pods: FleetOptions['pods'];
  try {
    if (flags.agents !== undefined) agents = parseAgentAddresses(flags.agents);
    if (flags.haproxyPods !== undefined) {
      checkPodSelection(flags.haproxyPods, flags.haproxyNamespace);
      pods = { selector: flags.haproxyPods, port: flags.agentPort, ...(flags.haproxyNamespace === undefined ? {} : { namespace: flags.haproxyNamespace }) };
    }
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
  if (flags.agentTokenFile === undefined) throw new InvalidArgumentError(`${fleetFlag} needs --agent-token-file FILE (the bearer token the agents expect)`);
  const token = (await readFlagFile('--agent-token-file', flags.agentTokenFile)).trim();
  if (token === '') throw new InvalidArgumentError(`--agent-token-file ${flags.agentTokenFile} is empty`);
  const ca = flags.agentCa === undefined ? undefined : await readFlagFile('--agent-ca', flags.agentCa);
  return { agents, token, insecure: flags.agentInsecure, concurrency: flags.agentConcurrency, ...(ca === undefined ? {} : { ca }), ...(pods === undefined ? {} : { pods }) };
}

async function readFlagFile(flag: string, file: string): Promise<string> {
  try {
    return await readFile(resolve(file), 'utf8');
  } catch (error) {
    throw new InvalidArgumentError(`${flag} ${file}: ${(error as Error).message}`);
  }
}

function portNumber(text: string): number {
  const port = Number(text);
  if (!/^\d{1,5}$/.test(text) || port < 1 || port > 65_535) throw new InvalidArgumentError(`expected a port 1-65535, got ${JSON.stringify(text)}`);
  return port;
}

function booleanFlag(text: string): boolean {
  if (text === 'true') return true;
  if (text === 'false') return false;
  throw new InvalidArgumentError(`expected true or false, got ${JSON.stringify(text)}`);
}

function webhookOptions(flags: RunFlags): RunOptions['webhook'] {
  const given = [flags.webhookAddr, flags.webhookCert, flags.webhookKey];
  if (given.every((v) => v === undefined)) return undefined;
  if (flags.webhookAddr === undefined || flags.webhookCert === undefined || flags.webhookKey === undefined) {
    throw new InvalidArgumentError('the admission webhook needs all of --webhook-addr HOST:PORT, --webhook-cert FILE and --webhook-key FILE');
  }
  return { address: flags.webhookAddr, certFile: resolve(flags.webhookCert), keyFile: resolve(flags.webhookKey), timeoutMs: flags.webhookTimeout };
}

function defaultIdentity(): string {
  return `${hostname()}-${process.pid}`;
}
