// A template set for tests of the render gate's per-object verdict: the default set, with each
// backend's section also writing its Ingress's (or, for an HTTPRoute's backend, its HTTPRoute's)
// `test.haptic/deny-path` annotation raw into `http-request deny if { path -m reg <value> }`, and
// `test.haptic/set-header` raw into `http-request set-header X-Test <value>`. No object check looks at those annotations, so only
// HAProxy judges the values: a pattern PCRE2 refuses (`[\d-z]`, which JavaScript accepts), or a
// header value of two words (read as a condition that is not one), makes `haproxy -c` refuse the config
// at that backend's line, whatever the validator learns.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { REPO_ROOT } from './cli-process.js';

export const RAW_DENY_ANNOTATION = 'test.haptic/deny-path';
export const RAW_HEADER_ANNOTATION = 'test.haptic/set-header';

/** The YAML text of the template set (write it to a file for `--templates`). */
export async function rawAnnotationTemplateSet(): Promise<string> {
  const base = await readFile(join(REPO_ROOT, 'templates', 'default.yaml'), 'utf8');
  // Store reads are not allowed inside memo blocks: the backends are rendered without them.
  const memo = '  {{#memoEach backends}}\n\n  {{> backend}}\n  {{/memoEach}}\n';
  if (!base.includes(memo)) throw new Error('templates/default.yaml no longer renders its backends as this helper expects');
  const withoutMemo = base.replace(memo, '  {{#each backends}}\n\n  {{> backend}}\n  {{/each}}\n');
  const header = '    backend {{b.name}}\n';
  if (!withoutMemo.includes(header)) throw new Error('templates/default.yaml no longer opens a backend with `backend {{b.name}}`');
  const annotations = [
    `    {{#with (lookup metadata.annotations "${RAW_DENY_ANNOTATION}")}}`,
    '      http-request deny deny_status 403 if { path -m reg {{this}} }',
    '    {{/with}}',
    `    {{#with (lookup metadata.annotations "${RAW_HEADER_ANNOTATION}")}}`,
    '      http-request set-header X-Test {{this}}',
    '    {{/with}}',
  ];
  // `b.kind` is `HTTPRoute` for an HTTPRoute's backend, whose `b.ingress` is the route's name.
  const raw = [
    header.trimEnd(),
    '    {{#if b.kind}}',
    '    {{#each (fetch "httproutes" b.namespace b.ingress)}}',
    ...annotations,
    '    {{/each}}',
    '    {{else}}',
    '    {{#each (fetch "ingresses" b.namespace b.ingress)}}',
    ...annotations,
    '    {{/each}}',
    '    {{/if}}',
    '',
  ].join('\n');
  return withoutMemo.replace(header, raw);
}
