import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { contextNamespace, loadKubeConfig } from '../../../src/main/sources/kubernetes/kube-config.js';
import { useKubernetesSource } from './kubernetes-source-harness.js';

const kube = useKubernetesSource();

describe('loadKubeConfig', () => {
  it('loads a kubeconfig file with its current context and namespace', async () => {
    const kubeConfig = loadKubeConfig(await kube.api.writeKubeconfig(kube.dir, 'shop'));
    expect(kubeConfig.getCurrentCluster()?.server).toBe(kube.api.url);
    expect(contextNamespace(kubeConfig)).toBe('shop');
  });

  it('refuses a plain-http server without insecure-skip-tls-verify, which client-node would only reject per request', async () => {
    const file = join(kube.dir, 'plain-http');
    const config = {
      clusters: [{ name: 'c', cluster: { server: 'http://127.0.0.1:8001' } }],
      users: [{ name: 'u', user: {} }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'x',
    };
    await writeFile(file, JSON.stringify(config));
    expect(() => loadKubeConfig(file)).toThrow(/plain http .*insecure-skip-tls-verify: true/);
  });

  it('names the file it cannot read, and a missing in-cluster environment', () => {
    expect(() => loadKubeConfig(join(kube.dir, 'missing'))).toThrow(/cannot read kubeconfig .*missing/);
    vi.stubEnv('KUBERNETES_SERVICE_HOST', '');
    try {
      expect(() => loadKubeConfig('in-cluster')).toThrow(/KUBERNETES_SERVICE_HOST/);
    } finally {
      vi.unstubAllEnvs();
    }
  });
});
