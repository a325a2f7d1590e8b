// Kubeconfig loading: from a kubeconfig file (`--kubeconfig FILE`) or from the pod's service
// account (`--in-cluster`). It fails at start-up, with the reason, on what client-node would only
// reject at the first request (no current cluster, a plain-http server without
// `insecure-skip-tls-verify`, in-cluster variables or token missing), so a misconfigured
// controller exits instead of retrying a request that can never work.
import { KubeConfig } from '@kubernetes/client-node';
import { accessSync, constants } from 'node:fs';

/** The service account token mounted into every pod that has one. */
export const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/**
 * Loads a kubeconfig file, or the in-cluster configuration for the literal `'in-cluster'` (a file
 * of that name must be given as `./in-cluster`). Throws with the reason when it cannot work.
 */
export function loadKubeConfig(from: string): KubeConfig {
  const kc = new KubeConfig();
  if (from === 'in-cluster') {
    const host = process.env.KUBERNETES_SERVICE_HOST;
    const port = process.env.KUBERNETES_SERVICE_PORT;
    if (host === undefined || host === '' || port === undefined || port === '') {
      throw new Error('in-cluster configuration needs KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT (is this running in a pod?)');
    }
    try {
      accessSync(SERVICE_ACCOUNT_TOKEN, constants.R_OK);
    } catch {
      throw new Error(`in-cluster configuration needs a service account token at ${SERVICE_ACCOUNT_TOKEN} (automountServiceAccountToken: false?)`);
    }
    kc.loadFromCluster();
  } else {
    try {
      kc.loadFromFile(from);
    } catch (error) {
      throw new Error(`cannot read kubeconfig ${from}: ${(error as Error).message}`, { cause: error });
    }
  }
  const cluster = kc.getCurrentCluster();
  const where = from === 'in-cluster' ? 'the in-cluster configuration' : `kubeconfig ${from}`;
  if (cluster === null) throw new Error(`${where} has no current context with a cluster (current-context: ${JSON.stringify(kc.getCurrentContext())})`);
  let url: URL;
  try {
    url = new URL(cluster.server);
  } catch {
    throw new Error(`${where}: cluster ${cluster.name} has no valid server URL: ${JSON.stringify(cluster.server)}`);
  }
  // client-node refuses plain http unless TLS verification is switched off, but only when a
  // request is made; `kubectl proxy` users hit this, so say what to set.
  if (url.protocol === 'http:' && cluster.skipTLSVerify !== true) {
    throw new Error(`${where}: cluster ${cluster.name} uses plain http (${cluster.server}); client-node only allows that with insecure-skip-tls-verify: true`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`${where}: cluster ${cluster.name} server must be http(s), got ${cluster.server}`);
  return kc;
}

/** The namespace of the current context (in-cluster: the pod's), if it names one. */
export function contextNamespace(kc: KubeConfig): string | undefined {
  const context = kc.getContextObject(kc.getCurrentContext());
  const namespace = context?.namespace?.trim();
  return namespace === undefined || namespace === '' ? undefined : namespace;
}
