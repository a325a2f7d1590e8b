// A client of the admission webhook for tests: a self-signed serving certificate, AdmissionReview
// JSON as the API server sends it, and a POST over HTTPS that pins the test's certificate.
import { request as httpsRequest } from 'node:https';
import { generateSelfSigned } from '../../src/main/output/default-certificate.js';

export interface ServingPem {
  readonly cert: string;
  readonly key: string;
}

/** A new self-signed certificate and its key, as the webhook's --webhook-cert/--webhook-key hold them. */
export async function servingPem(): Promise<ServingPem> {
  const both = await generateSelfSigned(Date.now(), 'CN=haptic-webhook.test');
  const at = both.indexOf('-----BEGIN PRIVATE KEY-----');
  return { cert: both.slice(0, at), key: both.slice(at) };
}

export interface Reply {
  readonly status: number;
  readonly text: string;
}

/** POSTs `body` to `https://127.0.0.1:<port><path>`, trusting only `cert`. */
export function postReview(port: number, cert: string, body: string | Buffer, path = '/validate'): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      // The certificate names no IP address: it is pinned, and the name is not checked.
      { host: '127.0.0.1', port, path, method: 'POST', ca: cert, checkServerIdentity: () => undefined, headers: { 'content-type': 'application/json' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export interface ReviewOptions {
  readonly uid?: string;
  readonly kind?: string;
  readonly group?: string;
  readonly operation?: string;
  readonly namespace?: string;
}

/** An AdmissionReview (admission.k8s.io/v1) of `object`, as the API server sends it. */
export function admissionReview(object: unknown, options: ReviewOptions = {}): string {
  const kind = options.kind ?? 'Ingress';
  const group = options.group ?? (kind === 'Ingress' ? 'networking.k8s.io' : kind === 'HTTPRoute' || kind === 'Gateway' ? 'gateway.networking.k8s.io' : '');
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: options.uid ?? 'b2c3d4e5-0000-4000-8000-000000000001',
      kind: { group, version: 'v1', kind },
      resource: { group, version: 'v1', resource: `${kind.toLowerCase()}s` },
      namespace: options.namespace ?? 'team-b',
      operation: options.operation ?? 'CREATE',
      userInfo: { username: 'tenant' },
      object,
      dryRun: false,
    },
  });
}

export interface ReviewResponse {
  readonly apiVersion: string;
  readonly kind: string;
  readonly response: { uid: string; allowed: boolean; status: { code: number; reason?: string; message?: string }; warnings?: string[] };
}
