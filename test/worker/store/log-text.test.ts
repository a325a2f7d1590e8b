// Log text built from object fields is escaped: warnings and rejections print names and values
// JSON-style, so a name holding an ANSI escape (`\u001b[31m`) and a newline can neither repaint a
// terminal nor forge a second log line.
import { beforeAll, describe, expect, it } from 'vitest';
import { escapeLogText } from '../../../src/worker/store/object-guard.js';
import type { KubeObject, TemplateSetSource } from '../../../src/worker/protocol.js';
import { defaultTemplateSet, endpointSlice, ingress, renderOk, rule, service } from '../../helpers/cluster.js';

// eslint-disable-next-line no-control-regex -- looking for raw control characters is the point
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
const HOSTILE = 'evil\u001b[31m\nrejected Ingress shop/web: forged line';

let set: TemplateSetSource;
beforeAll(async () => {
  set = await defaultTemplateSet();
});

const healthy = (): KubeObject[] => [ingress('shop', 'web', { rules: [rule('shop.example.com', { path: '/', service: 'web' })] }), service('shop', 'web'), endpointSlice('shop', 'web', ['10.0.0.1'])];

describe('warnings and rejections built from object fields', () => {
  it('print a name holding an ANSI escape and a newline escaped, JSON-style, never raw', () => {
    const out = renderOk(set, [...healthy(), ingress('shop', HOSTILE, { rules: [rule('x.example.com', { path: '/', service: 'web' })] })]);
    expect(out.warnings).toHaveLength(1);
    const [warning] = out.warnings as [string];
    expect(warning).not.toMatch(UNPRINTABLE);
    expect(warning).toBe(
      'rejected Ingress shop/evil\\u001b[31m\\nrejected Ingress shop/web: forged line: metadata.name "evil\\u001b[31m\\nrejected Ingress shop/web: forged line" is not a valid DNS subdomain',
    );
    expect(out.rejections).toEqual([{ kind: 'Ingress', namespace: 'shop', name: 'evil\\u001b[31m\\nrejected Ingress shop/web: forged line', scope: 'object', reason: expect.any(String) }]);
    for (const rejection of out.rejections) expect(Object.values(rejection).join(' ')).not.toMatch(UNPRINTABLE);
  });

  it('print hostile values (paths, addresses, annotations) escaped as well', () => {
    const out = renderOk(set, [
      ...healthy(),
      ingress('shop', 'paths', { rules: [rule('p.example.com', { path: '/a\u001b]0;title\u0007', service: 'web' })] }),
      endpointSlice('shop', 'web', ['10.0.0.2\u009b2J'], undefined, 'web-csi'),
      ingress('shop', 'notes', {}, { annotations: { note: 'right\u202eleft\u2028next\u001b[2J' } }),
    ]);
    expect(out.warnings.length).toBeGreaterThanOrEqual(3);
    for (const warning of out.warnings) expect(warning).not.toMatch(UNPRINTABLE);
    expect(out.warnings.join('\n')).toContain('\\u001b]0;title\\u0007');
    expect(out.warnings.join('\n')).toContain('\\u009b2J');
    expect(out.warnings.join('\n')).toContain('right\\u202eleft\\u2028next\\u001b[2J');
  });
});

describe('escapeLogText', () => {
  it('escapes C0 and C1 controls, DEL, line separators and bidi overrides, and leaves everything else alone', () => {
    expect(escapeLogText('a\nb\tc\rd\u001be\u007ff\u009bg\u2028h\u202ei\u2066j')).toBe('a\\nb\\tc\\rd\\u001be\\u007ff\\u009bg\\u2028h\\u202ei\\u2066j');
    expect(escapeLogText('plain "quoted" \\ text, ünïcödé, 日本')).toBe('plain "quoted" \\ text, ünïcödé, 日本');
  });
});
