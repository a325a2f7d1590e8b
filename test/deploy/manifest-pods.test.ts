// The pods of the shipped manifests run locked down (non-root, no privilege escalation, read-only
// root filesystem, no capabilities, seccomp RuntimeDefault), probe /healthz and /readyz on the port
// their own flags listen on, and find every path of their command line on a volume.
import { describe, expect, it } from 'vitest';
import { documentName, isRecord, manifestVariants, type ManifestDocument } from '../helpers/kube-manifests.js';
import { argsOf, containerPort, flagValue, listOf, podTemplateOf, portOfAddress, type Fields, type PodTemplate } from '../helpers/kube-pods.js';

/** The flag whose address serves /healthz and /readyz, per subcommand. */
const PROBED_ADDRESS: Readonly<Record<string, string>> = { run: '--metrics-addr', agent: '--listen' };
/** Flags naming a directory the process writes. */
const WRITTEN_DIRS = ['--out', '--dir'];

interface Pod {
  readonly where: string;
  readonly template: PodTemplate;
}

function pods(): Pod[] {
  const seen = new Set<string>();
  return manifestVariants().flatMap((variant) =>
    variant.documents.flatMap((document: ManifestDocument) => {
      const template = podTemplateOf(document.object);
      const key = JSON.stringify([document.file, template]);
      if (template === undefined || seen.has(key)) return [];
      seen.add(key);
      return [{ where: `${variant.name}: ${documentName(document)}`, template }];
    }),
  );
}

const all = pods();

function security(pod: Pod, container: Fields): { pod: Fields; container: Fields } {
  return { pod: isRecord(pod.template.spec.securityContext) ? pod.template.spec.securityContext : {}, container: isRecord(container.securityContext) ? container.securityContext : {} };
}

/** The volume mount a path lies on (the longest mount path that contains it). */
function mountOf(container: Fields, path: string): Fields | undefined {
  return listOf(container.volumeMounts)
    .filter((m) => path === m.mountPath || path.startsWith(`${String(m.mountPath).replace(/\/$/, '')}/`))
    .sort((a, b) => String(b.mountPath).length - String(a.mountPath).length)[0];
}

describe('pods in deploy/kubernetes', () => {
  it('finds the controller and the HAProxy pods', () => {
    const commands = all.flatMap((p) => p.template.containers.map((c) => argsOf(c)[0]));
    expect(commands).toContain('run');
    expect(commands).toContain('agent');
  });

  for (const pod of all) {
    for (const container of pod.template.containers) {
      const where = `${pod.where} container ${String(container.name)}`;

      it(`${where}: runs as non-root, without privilege escalation or capabilities, on a read-only root filesystem under seccomp RuntimeDefault`, () => {
        const context = security(pod, container);
        const pick = (key: string): unknown => context.container[key] ?? context.pod[key];
        expect(pick('runAsNonRoot')).toBe(true);
        expect(Number(pick('runAsUser'))).toBeGreaterThan(0);
        expect(context.container.allowPrivilegeEscalation).toBe(false);
        expect(context.container.privileged ?? false).toBe(false);
        expect(context.container.readOnlyRootFilesystem).toBe(true);
        const capabilities = isRecord(context.container.capabilities) ? context.container.capabilities : {};
        expect(capabilities.drop).toContain('ALL');
        const lowPorts = listOf(container.ports).some((p) => Number(p.containerPort) < 1024);
        expect(capabilities.add ?? [], 'only NET_BIND_SERVICE, and only for a port below 1024').toEqual(lowPorts ? ['NET_BIND_SERVICE'] : []);
        expect((isRecord(pick('seccompProfile')) ? pick('seccompProfile') : {}) as Fields).toEqual({ type: 'RuntimeDefault' });
        for (const key of ['hostNetwork', 'hostPID', 'hostIPC']) expect(pod.template.spec[key] ?? false, key).toBe(false);
      });

      it(`${where}: requests CPU and memory, and limits memory`, () => {
        const resources = isRecord(container.resources) ? container.resources : {};
        const requests = isRecord(resources.requests) ? resources.requests : {};
        const limits = isRecord(resources.limits) ? resources.limits : {};
        expect(requests.cpu).toBeDefined();
        expect(requests.memory).toBeDefined();
        expect(limits.memory).toBeDefined();
      });

      it(`${where}: probes /healthz (liveness) and /readyz (readiness) on a declared port, the one its flags serve them on`, () => {
        const args = argsOf(container);
        const addressFlag = PROBED_ADDRESS[args[0] ?? ''];
        expect(addressFlag, `a probed address flag for ${String(args[0])}`).toBeDefined();
        const served = portOfAddress(flagValue(args, addressFlag));
        expect(served, `${addressFlag} HOST:PORT`).toBeDefined();
        const https = flagValue(args, '--tls-cert') !== undefined;
        for (const [kind, path] of [
          ['livenessProbe', '/healthz'],
          ['readinessProbe', '/readyz'],
          ['startupProbe', '/healthz'],
        ] as const) {
          const probe = container[kind];
          if (kind === 'startupProbe' && probe === undefined) continue;
          const httpGet = isRecord(probe) && isRecord(probe.httpGet) ? probe.httpGet : undefined;
          expect(httpGet, kind).toBeDefined();
          expect(httpGet?.path, kind).toBe(path);
          expect(containerPort(container, httpGet?.port), `${kind} port ${String(httpGet?.port)} is a containerPort`).toBe(served);
          expect(httpGet?.scheme ?? 'HTTP', `${kind} scheme`).toBe(https ? 'HTTPS' : 'HTTP');
        }
      });

      it(`${where}: every path in its command line is on a volume: written directories on writable emptyDirs, files on the volume that holds them`, () => {
        const args = argsOf(container);
        const volumes = new Map(listOf(pod.template.spec.volumes).map((v) => [String(v.name), v]));
        const absolute = args.filter((a) => a.startsWith('/'));
        expect(absolute.length).toBeGreaterThan(0);
        for (const path of absolute) {
          const mount = mountOf(container, path);
          expect(mount, `${path} is on no volume mount (the root filesystem is read-only)`).toBeDefined();
          const volume = volumes.get(String(mount?.name));
          expect(volume, `volume ${String(mount?.name)}`).toBeDefined();
          const written = WRITTEN_DIRS.some((flag) => flagValue(args, flag) === path);
          if (written) {
            expect(volume?.emptyDir, `${path} is written: an emptyDir`).toBeDefined();
            expect(mount?.readOnly ?? false, `${path} is written`).toBe(false);
          }
          const secret = isRecord(volume?.secret) ? volume.secret : undefined;
          if (secret !== undefined && Array.isArray(secret.items)) {
            const relativePath = path.slice(String(mount?.mountPath).replace(/\/$/, '').length + 1);
            expect(listOf(secret.items).map((i) => i.path), `${path} is projected from Secret ${String(secret.secretName)}`).toContain(relativePath);
          }
        }
        const tmp = mountOf(container, '/tmp/x');
        expect(tmp?.readOnly ?? false, '/tmp (haproxy -c runs there) is a writable volume').toBe(false);
        expect(volumes.get(String(tmp?.name))?.emptyDir).toBeDefined();
      });

      it(`${where}: an annotated scrape port is the port of --metrics-addr, and a declared containerPort`, () => {
        const port = pod.template.annotations['prometheus.io/port'];
        if (port === undefined) return;
        const served = portOfAddress(flagValue(argsOf(container), '--metrics-addr'));
        expect(Number(port)).toBe(served);
        expect(containerPort(container, served)).toBe(served);
      });

      it(`${where}: every $(VAR) in its command line is set from the downward API or a literal`, () => {
        const env = new Map(listOf(container.env).map((e) => [String(e.name), e]));
        for (const arg of argsOf(container)) {
          for (const [, name] of arg.matchAll(/\$\(([A-Za-z_]\w*)\)/g)) expect(env.has(name), `${arg}: env ${name}`).toBe(true);
        }
      });
    }
  }

  it('the controller runs 2 replicas with Lease election, its identity the pod name', () => {
    const deployments = manifestVariants()
      .flatMap((v) => v.documents)
      .filter((d) => d.object.kind === 'Deployment' && podTemplateOf(d.object)?.containers.some((c) => argsOf(c)[0] === 'run'));
    for (const deployment of deployments) {
      expect((deployment.object.spec as Fields).replicas, documentName(deployment)).toBe(2);
      const container = podTemplateOf(deployment.object)?.containers.find((c) => argsOf(c)[0] === 'run') ?? {};
      const args = argsOf(container);
      expect(args).toContain('--leader-elect');
      expect(args).toContain('--in-cluster');
      expect(args, 'run --haproxy would start a local HAProxy on a replica that may be a follower').not.toContain('--haproxy');
      const identity = flagValue(args, '--identity');
      const variable = /^\$\((\w+)\)$/.exec(identity ?? '')?.[1];
      const env = listOf(container.env).find((e) => e.name === variable);
      expect(env?.valueFrom, `--identity ${String(identity)}`).toEqual({ fieldRef: { fieldPath: 'metadata.name' } });
    }
  });
});
