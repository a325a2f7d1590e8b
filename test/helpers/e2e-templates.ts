// A template set for end-to-end tests of `run --haproxy`: the default set plus extra listeners.
// ConfigMaps named `extra-*` (data: `port`, `fetch`) each add a frontend that binds
// 127.0.0.1:<port> and names the sample fetch `fetch`. It comes before the defaults section, so
// it is a TCP listener that only holds its port. A port another program holds passes `haproxy -c`
// and fails only at reload; an unknown fetch is refused by `haproxy -c`: the two ways a render
// can fail after the templates.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { KubeObject } from '../../src/worker/protocol.js';
import { REPO_ROOT } from './cli-process.js';

/** The YAML text of the template set (write it to a file for `--templates`). */
export async function extendedTemplateSet(): Promise<string> {
  const base = await readFile(join(REPO_ROOT, 'templates', 'default.yaml'), 'utf8');
  const withStore = base.replace(/^watchedResources:\n/m, 'watchedResources:\n  configmaps:\n    apiVersion: v1\n    kind: ConfigMap\n    indexBy: [metadata.namespace, metadata.name]\n');
  const extra = [
    '  {{#each (list "configmaps")}}',
    '  frontend extra_{{metadata.name}}',
    '    bind 127.0.0.1:{{data.port}}',
    '    http-response set-header X-Extra %[{{data.fetch}}]',
    '    http-request return status 200 content-type text/plain string extra',
    '  {{/each}}',
  ].join('\n');
  return withStore.replace(/^haproxyConfig: \|\n/m, `haproxyConfig: |\n${extra}\n`);
}

/** The ConfigMap of one extra listener (`name` starts with `extra-`). */
export function extraListener(namespace: string, name: string, port: number, fetch = 'src'): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data: { port: String(port), fetch } };
}
