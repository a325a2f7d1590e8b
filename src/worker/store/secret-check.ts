// The Secret check. `data` must be strict base64 and `stringData` plain strings; the view merges
// `stringData` into `data` (base64, `stringData` winning, as the API server does), so templates
// only ever see base64. A TLS Secret (type kubernetes.io/tls, or one with tls.crt / tls.key) must
// hold a certificate and key HAProxy can load (tls-material.ts); if not, the Secret is rejected
// with scope 'tls' and the hosts that use it lose TLS, never the whole render.
import type { KubeObject } from '../protocol.js';
import { isRecord, rejected, type KindOutcome } from './field-rules.js';
import { quote } from './log-text.js';
import { parseTlsPair, type TlsMaterial } from './tls-material.js';
import { MAX_SECRET_VALUE } from './value-limits.js';

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export function checkSecret(object: KubeObject): KindOutcome & { readonly material?: TlsMaterial } {
  const data = object.data ?? {};
  const stringData = object.stringData ?? {};
  const tls = object.type === 'kubernetes.io/tls' || hasTlsKey(data) || hasTlsKey(stringData);
  const scope = tls ? 'tls' : 'object';
  if (object.type !== undefined && typeof object.type !== 'string') return rejected(scope, `type ${quote(object.type)} is not a string`);
  if (!isRecord(data)) return rejected(scope, `data is ${quote(object.data)}, not a mapping`);
  if (!isRecord(stringData)) return rejected(scope, `stringData is ${quote(object.stringData)}, not a mapping`);
  const merged: Record<string, string> = {};
  for (const [key, value] of Object.entries(data)) {
    const problem = base64Problem(value);
    if (problem !== null) return rejected(scope, `data[${quote(key)}] ${problem}`);
    merged[key] = value as string;
  }
  for (const [key, value] of Object.entries(stringData)) {
    if (typeof value !== 'string') return rejected(scope, `stringData[${quote(key)}] is ${quote(value)}, not a string`);
    if (value.length > MAX_SECRET_VALUE) return rejected(scope, `stringData[${quote(key)}] is over ${MAX_SECRET_VALUE} characters`);
    merged[key] = Buffer.from(value, 'utf8').toString('base64');
  }
  let material: TlsMaterial | undefined;
  if (tls) {
    const crt = merged['tls.crt'];
    const key = merged['tls.key'];
    if (crt === undefined || key === undefined) return rejected('tls', `has no ${crt === undefined ? 'tls.crt' : 'tls.key'}`);
    const parsed = parseTlsPair(decode(crt), decode(key));
    if ('problem' in parsed) return rejected('tls', parsed.problem);
    material = parsed.material;
  }
  const outcome = object.stringData === undefined ? { dropped: [] } : { patch: { data: Object.freeze(merged), stringData: undefined }, dropped: [] };
  return material === undefined ? outcome : { ...outcome, material };
}

function hasTlsKey(entries: unknown): boolean {
  return isRecord(entries) && ('tls.crt' in entries || 'tls.key' in entries);
}

function base64Problem(value: unknown): string | null {
  if (typeof value !== 'string') return `is ${quote(value)}, not a string`;
  const compact = value.replace(/[\r\n\t ]/g, '');
  if (compact.length % 4 !== 0 || !BASE64.test(compact)) return 'is not base64';
  if ((compact.length / 4) * 3 > MAX_SECRET_VALUE + 3) return `is over ${MAX_SECRET_VALUE} bytes`;
  return null;
}

function decode(base64: string): string {
  return Buffer.from(base64, 'base64').toString('utf8');
}
