import { describe, expect, it } from 'vitest';

describe('the public API', () => {
  it('exports the engine, the controller parts and the whole controller from the package root', async () => {
    const api = await import('../../src/main/index.js');
    for (const name of [
      'Engine', 'EventBus', 'Reconciler', 'Coordinator', 'PoolPipeline', 'InlinePipeline', 'StoreProvider',
      'ManifestSource', 'WatcherSet', 'SingleReplicaElector', 'LeaseElector', 'RenderGate', 'Deployer',
      'DriftPreventionMonitor', 'HaproxyProcess', 'LocalHaproxyTarget', 'RuntimeApi', 'MasterCli',
      'ControllerMetrics', 'MetricsAdapter', 'OutputDirectory', 'OutputWriter', 'assembleController', 'runController',
    ]) {
      expect(typeof (api as Record<string, unknown>)[name], name).toBe('function');
    }
  });

  it('keeps dev tooling out of the package root', async () => {
    const api = (await import('../../src/main/index.js')) as Record<string, unknown>;
    for (const name of ['runDemo', 'runLoadtest', 'SyntheticCluster', 'SyntheticChurn', 'startEchoBackend', 'lineChartSvg', 'KubernetesSource']) {
      expect(api[name], name).toBeUndefined();
    }
  });

  it('offers the Kubernetes source on its own entry point', async () => {
    const kube = await import('../../src/main/kubernetes.js');
    expect(typeof kube.KubernetesSource).toBe('function');
    expect(typeof kube.loadKubeConfig).toBe('function');
  });
});
