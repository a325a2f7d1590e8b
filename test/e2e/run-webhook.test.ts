// `haptic-reconciler run --webhook-addr --webhook-cert --webhook-key` as an operator runs it: a
// real process watching the example manifests serves the admission webhook over HTTPS, and its
// verdicts follow what the controller watches, for Ingresses and for the Gateway API kinds. A
// partial set of webhook flags is refused.
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLES_DIR } from '../../src/main/core/paths.js';
import { admissionReview, postReview, servingPem, type ReviewResponse, type ServingPem } from '../helpers/admission-client.js';
import { startCli, type CliProcess } from '../helpers/cli-process.js';
import { ingress, rule } from '../helpers/cluster.js';
import { eventually } from '../helpers/eventually.js';
import { gateway, gatewayClass, httpRoute, ref } from '../helpers/gateway-objects.js';

let dir: string;
let controller: CliProcess;
let pem: ServingPem;
let port: number;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'run-webhook-'));
  const manifests = join(dir, 'manifests');
  await cp(EXAMPLES_DIR, manifests, { recursive: true });
  // Objects from the API server carry their creation time; a manifest without one counts as the
  // newest claimant (as in the render), so the owner here has one.
  await writeFile(join(manifests, 'owner.yaml'), JSON.stringify(ingress('team-a', 'owner', { ingressClassName: 'haproxy', rules: [rule('owned.example.com', { service: 'web' })] }, { creationTimestamp: '2024-01-01T00:00:00Z' })));
  const older = { creationTimestamp: '2024-01-01T00:00:00Z' };
  const edge = gateway('infra', 'edge', [{ name: 'http', port: 18080, allowedRoutes: { namespaces: { from: 'All' } } }]);
  const route = httpRoute('team-a', 'owner', { parentRefs: [{ name: 'edge', namespace: 'infra' }], hostnames: ['routed.example.com'], rules: [{ backendRefs: [ref('web')] }] }, older);
  await writeFile(join(manifests, 'gateway.yaml'), [gatewayClass(), { ...edge, metadata: { ...edge.metadata, ...older } }, route].map((o) => JSON.stringify(o)).join('\n---\n'));
  pem = await servingPem();
  await writeFile(join(dir, 'tls.crt'), pem.cert);
  await writeFile(join(dir, 'tls.key'), pem.key, { mode: 0o600 });
  controller = startCli([
    'run', '--manifests', manifests, '--out', join(dir, 'out'), '--metrics-addr', 'off', '--threads', '1',
    '--webhook-addr', '127.0.0.1:0', '--webhook-cert', join(dir, 'tls.crt'), '--webhook-key', join(dir, 'tls.key'),
  ]);
  port = Number(await eventually(() => /"webhook":"127\.0\.0\.1:(\d+)"/.exec(controller.output())?.[1], 'the webhook address in the log', 60_000));
}, 90_000);

afterAll(async () => {
  await controller?.stop('SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

describe('run --webhook-addr', () => {
  it('denies a host another namespace owns once it has read the manifests', async () => {
    const taker = ingress('intruder', 'steal', { ingressClassName: 'haproxy', rules: [rule('owned.example.com', { path: '/admin', service: 'web' })] });
    const response = await eventually(async () => {
      const reply = await postReview(port, pem.cert, admissionReview(taker, { namespace: 'intruder' }));
      const review = (JSON.parse(reply.text) as ReviewResponse).response;
      return review.allowed ? undefined : review;
    }, 'a denial of the conflicting Ingress', 30_000);
    expect(response.status).toMatchObject({ code: 403, reason: 'HostConflict' });
    expect(response.status.message).toContain('host owned.example.com belongs to namespace team-a (Ingress team-a/owner claimed it first)');
  });

  it('allows an Ingress on a free host', async () => {
    const good = ingress('intruder', 'own', { ingressClassName: 'haproxy', rules: [rule('own.example.com', { service: 'web' })] });
    const reply = await postReview(port, pem.cert, admissionReview(good, { namespace: 'intruder' }));
    expect((JSON.parse(reply.text) as ReviewResponse).response).toMatchObject({ allowed: true });
  });
});

describe('run --webhook-addr with Gateway API objects', () => {
  it('denies an HTTPRoute hostname another namespace owns, and a Gateway listener on a held port', async () => {
    const taker = httpRoute('intruder', 'steal', { parentRefs: [{ name: 'edge', namespace: 'infra' }], hostnames: ['routed.example.com'], rules: [{ backendRefs: [ref('web')] }] });
    const response = await eventually(async () => {
      const reply = await postReview(port, pem.cert, admissionReview(taker, { kind: 'HTTPRoute', namespace: 'intruder' }));
      const review = (JSON.parse(reply.text) as ReviewResponse).response;
      return review.allowed ? undefined : review;
    }, 'a denial of the conflicting HTTPRoute', 30_000);
    expect(response.status).toMatchObject({ code: 403, reason: 'HostConflict' });
    expect(response.status.message).toContain('hostname routed.example.com belongs to HTTPRoute team-a/owner');
    const late = gateway('intruder', 'late', [{ name: 'http', port: 18080 }]);
    const reply = await postReview(port, pem.cert, admissionReview(late, { kind: 'Gateway', namespace: 'intruder' }));
    expect((JSON.parse(reply.text) as ReviewResponse).response).toMatchObject({ allowed: false, status: { reason: 'ProtocolConflict' } });
  });
});

describe('run with part of the webhook flags', () => {
  it('exits with an error naming the flags the webhook needs', async () => {
    const partial = startCli(['run', '--manifests', EXAMPLES_DIR, '--out', join(dir, 'out-partial'), '--metrics-addr', 'off', '--webhook-addr', '127.0.0.1:0']);
    expect(await partial.exited).not.toBe(0);
    expect(partial.output()).toContain('--webhook-addr HOST:PORT, --webhook-cert FILE and --webhook-key FILE');
  });
});
