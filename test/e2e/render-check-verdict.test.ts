// `render --check` when HAProxy refuses one object: the object is reported as a rejection with
// its manifest's file:line and HAProxy's message, the rest is rendered again without it and
// written (exit 2), and the written config passes `haproxy -c`. The value reaches HAProxy through
// a test template set that writes an annotation raw (raw-annotation-templates.ts).
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkConfigFile } from '../../src/main/haproxy/haproxy-check.js';
import { REPO_ROOT } from '../helpers/cli-process.js';
import { SKIP_HAPROXY, skipNotice } from '../helpers/haproxy-harness.js';
import { RAW_DENY_ANNOTATION, rawAnnotationTemplateSet } from '../helpers/raw-annotation-templates.js';

skipNotice('test/e2e/render-check-verdict.test.ts');

const exec = promisify(execFile);
const CLI = join(REPO_ROOT, 'src', 'main', 'cli', 'cli.ts');

const ingress = (namespace: string, name: string, host: string, deny: string): string => `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: ${name}
  namespace: ${namespace}
  annotations:
    ${RAW_DENY_ANNOTATION}: '${deny}'
spec:
  ingressClassName: haproxy
  rules:
  - host: ${host}
    http:
      paths:
      - path: /
        pathType: Prefix
        backend: { service: { name: web, port: { number: 80 } } }
`;
const service = (namespace: string): string => `apiVersion: v1
kind: Service
metadata: { name: web, namespace: ${namespace} }
spec: { ports: [{ name: http, port: 80, targetPort: 8080 }] }
`;

let dir: string;

describe.skipIf(SKIP_HAPROXY)('render --check with an object HAProxy refuses', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'render-check-verdict-'));
    await mkdir(join(dir, 'manifests'));
    await writeFile(join(dir, 'templates.yaml'), await rawAnnotationTemplateSet());
    await writeFile(join(dir, 'manifests', 'shop.yaml'), [service('shop'), ingress('shop', 'good', 'good.test', '^/private')].join('---\n'));
    await writeFile(join(dir, 'manifests', 'evil.yaml'), [service('evil'), ingress('evil', 'bad', 'bad.test', '[\\d-z]')].join('---\n'));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('rejects that object with its file:line and the reason HAProxy gave, writes the rest, and exits 2', async () => {
    const out = join(dir, 'out');
    const run = await exec(process.execPath, ['--import', 'tsx', CLI, 'render', '--manifests', join(dir, 'manifests'), '--out', out, '--templates', join(dir, 'templates.yaml'), '--check', '--threads', '1'], {
      cwd: REPO_ROOT,
      timeout: 120_000,
    }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code?: number; stdout?: string; stderr?: string }) => ({ code: error.code ?? -1, stdout: error.stdout ?? '', stderr: error.stderr ?? '' }),
    );
    expect(run.code).toBe(2);
    expect(run.stdout).toContain('valid');
    expect(run.stderr).toMatch(/rejected: \S*evil\.yaml:6: Ingress evil\/bad: HAProxy refused it: parsing \[haproxy\.cfg:\d+\] : error detected while parsing an 'http-request deny' condition : regex '\[\\d-z\]' is invalid/);
    expect(run.stderr).toContain('1 objects rejected');
    const config = await readFile(join(out, 'haproxy.cfg'), 'utf8');
    expect(config).toContain('backend ing_shop_good_web_80');
    expect(config).not.toContain('evil');
    // What was written is what HAProxy accepted (its maps and files under the output directory).
    expect(config).toContain(join(out, 'maps'));
    expect((await checkConfigFile(join(out, 'haproxy.cfg'))).ok).toBe(true);
  }, 120_000);
});
