// The Kubernetes half of the public API, a separate entry point (`haptic-reconciler/kubernetes`):
// it loads @kubernetes/client-node, which takes about a second, so embedders who only render
// manifests or feed their own stores never pay for it.
export { KubernetesSource, kubernetesSource, type KubernetesSourceOptions } from './sources/kubernetes/kubernetes-source.js';
export { loadKubeConfig, contextNamespace } from './sources/kubernetes/kube-config.js';
