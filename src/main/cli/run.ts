// `haptic-reconciler run`: the controller. Parses the flags into ControllerOptions, runs the
// controller until SIGTERM or SIGINT, and makes sure the process exits 0 within 10 s of the
// signal (the Lease released, watches closed, HAProxy stopped).
import { InvalidArgumentError, Option, type Command } from 'commander';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { defaultLogger } from '../core/logger.js';
import { runController, type RunOptions } from '../controller/run-controller.js';
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
    ...(webhook === undefined ? {} : { webhook }),
    ...(flags.haproxy ? { haproxy: { minDeploymentIntervalMs: flags.minDeploymentInterval, driftIntervalMs: flags.driftInterval } } : {}),
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
