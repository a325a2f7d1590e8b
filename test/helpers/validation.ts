// Fixtures shared by the validator tests: the rendered directories, a self-signed EC certificate
// (CN example.test) with its key, a CA certificate, and a realistic render with its files.
import type { AuxiliaryFiles } from '../../src/worker/protocol.js';
import type { OutputPaths } from '../../src/worker/validate/validator.js';

export const PATHS: OutputPaths = {
  mapsDir: '/etc/haproxy/maps',
  filesDir: '/etc/haproxy/files',
  certsDir: '/etc/haproxy/certs',
};
/** Other directories: paths the configs name fall outside them, or inside other ones. */
export const OTHER_PATHS: OutputPaths = {
  mapsDir: '/etc/haproxy/maps',
  filesDir: '/srv/files',
  certsDir: '/etc/haproxy/maps/certs',
};
export const NESTED_PATHS: OutputPaths = {
  mapsDir: '/etc/haproxy',
  filesDir: '/etc/haproxy/files',
  certsDir: '/etc/haproxy/certs/',
};

export const CERT = `-----BEGIN CERTIFICATE-----
MIIBnzCCAUSgAwIBAgIUYPdGmW/o4ldx2DilPnGZ5mkR4gswCgYIKoZIzj0EAwIw
FzEVMBMGA1UEAwwMZXhhbXBsZS50ZXN0MCAXDTI2MTEyOTIzMDIxNFoYDzIxMjYx
MTA1MjMwMjE0WjAXMRUwEwYDVQQDDAxleGFtcGxlLnRlc3QwWTATBgcqhkjOPQIB
BggqhkjOPQMBBwNCAAQyKyEHMbyVij2C+0OfbxN4cGZ5QmsYwrzLQs9VaEf0cfNe
pH+arzX1fSyQ4MUy0GX25QCul2OtPNPNSy15jhWzo2wwajAdBgNVHQ4EFgQUKJrT
/n0mZDY68VmoYdDts3HQXcYwHwYDVR0jBBgwFoAUKJrT/n0mZDY68VmoYdDts3HQ
XcYwDwYDVR0TAQH/BAUwAwEB/zAXBgNVHREEEDAOggxleGFtcGxlLnRlc3QwCgYI
KoZIzj0EAwIDSQAwRgIhAOB65s+Yi6fqsjiB+qIgmm03HVmUohtm44TNl9fNEkJt
AiEAnT4UkTODud3jhcBikXaAtQeOaVuD42ZjIaaDDSYDDus=
-----END CERTIFICATE-----
`;
export const KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgib3dydcKDKprxbZY
Pn0xlYUE46E58CwFN2Z4BvhSeWOhRANCAAQyKyEHMbyVij2C+0OfbxN4cGZ5QmsY
wrzLQs9VaEf0cfNepH+arzX1fSyQ4MUy0GX25QCul2OtPNPNSy15jhWz
-----END PRIVATE KEY-----
`;

/** A CA certificate alone, without a key. */
export const CA_CERT = `-----BEGIN CERTIFICATE-----
MIIBfDCCASGgAwIBAgIUIovP/0lAZ+xbc5Yz3aSRhnu/m9swCgYIKoZIzj0EAwIw
EjEQMA4GA1UEAwwHdGVzdC1jYTAgFw0yNjExMjkyMzAyMTRaGA8yMTI2MTEwNTIz
MDIxNFowEjEQMA4GA1UEAwwHdGVzdC1jYTBZMBMGByqGSM49AgEGCCqGSM49AwEH
A0IABDu4xtmC81KLWEY2G+Vcn/nnB8XO8jSw8c6lsSYshyRXWE1FZmZOS4g4aWk0
F57TbGq3eeBAXJfqC06GwXBNDSajUzBRMB0GA1UdDgQWBBStLg/Z2uV/AoCmkIIy
6h3ZWZKACzAfBgNVHSMEGDAWgBStLg/Z2uV/AoCmkIIy6h3ZWZKACzAPBgNVHRMB
Af8EBTADAQH/MAoGCCqGSM49BAMCA0kAMEYCIQDujKnY4GjiojPyS7QtY6n5Po0y
xZh9oOb4tZ1L0MznOwIhAOl3p4udYB79EhyiGn/hqWdejWdTomy/9bNO6ilu8d0q
-----END CERTIFICATE-----
`;
export const PEM = CERT + KEY;

/** One backend per service port, with fixed server slots, as the default template renders it. */
export function backend(name: string, slots: number): string {
  const servers: string[] = [];
  for (let i = 1; i <= slots; i++) {
    servers.push(
      i <= 2
        ? `  server SRV_${i} 10.0.${i}.${(name.length % 200) + 1}:8080 weight 100`
        : `  server SRV_${i} 127.0.0.1:1 disabled`,
    );
  }
  return `backend ${name}
  balance roundrobin
  option httpchk GET /healthz
  http-check expect status 200
  default-server check inter 2s fall 3 rise 2
${servers.join('\n')}
`;
}

/**
 * A realistic rendered configuration: HTTP, HTTPS and status frontends routing through host and
 * path maps to per-service backends. With p = real directories it passes `haproxy -c` of
 * HAProxy 2.6 (checked while writing these tests; the tests themselves do not need HAProxy).
 */
export function realisticConfig(p: OutputPaths = PATHS, extraBackends: readonly string[] = []): string {
  return `# rendered by haptic-reconciler
global
  maxconn 2000
  log stdout format raw local0
  stats socket /tmp/haptic-validator-test.sock mode 600 level admin expose-fd listeners
  stats timeout 30s
  ssl-default-bind-options ssl-min-ver TLSv1.2 no-tls-tickets
  ssl-default-bind-ciphersuites TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384
  tune.ssl.default-dh-param 2048
  hard-stop-after 30s

defaults
  mode http
  log global
  option httplog
  option dontlognull
  option http-keep-alive
  no option http-server-close
  timeout connect 5s
  timeout client 30s
  timeout server 30s
  timeout http-request 10s
  errorfile 503 ${p.filesDir}/503.http

frontend http
  bind :8080
  # Blocked sources are an ACL pattern file: one column.
  acl blocked src -f ${p.mapsDir}/blocked.acl
  acl acme path_beg /.well-known/acme-challenge/
  http-request deny deny_status 403 if blocked !acme
  http-request set-header X-Forwarded-Proto http
  http-request set-var(txn.host) req.hdr(host),field(1,:),lower
  use_backend %[var(txn.host),map(${p.mapsDir}/host.map,be_default_404)]
  default_backend be_default_404

frontend https
  bind :8443 ssl crt ${p.certsDir}/ alpn h2,http/1.1
  http-request set-header X-Forwarded-Proto "https"
  http-request set-var(txn.path) "path"
  use_backend %[base,map_beg(${p.mapsDir}/path-prefix.map)] if { base,map_beg(${p.mapsDir}/path-prefix.map) -m found }
  use_backend %[var(txn.host),map(${p.mapsDir}/host.map,be_default_404)]

frontend status
  bind 127.0.0.1:8404
  http-request return status 200 content-type text/plain string ok if { path /healthz }
  stats enable
  stats uri /stats
  stats refresh 10s

backend be_default_404
  http-request return status 404 content-type "text/plain" file ${p.filesDir}/404.txt

${backend('be_default_echo_80', 4)}
${backend('be_shop_web_8080', 4)}
${extraBackends.join('\n')}`;
}

export function realisticAux(): AuxiliaryFiles {
  return {
    maps: {
      'host.map': '# host -> backend\necho.example.test be_default_echo_80\nshop.example.test be_shop_web_8080\n',
      'path-prefix.map': 'shop.example.test/api be_shop_web_8080\nshop.example.test/ be_shop_web_8080\n',
      'blocked.acl': '192.0.2.0/24\n198.51.100.7\n',
    },
    files: {
      '404.txt': 'not found\n',
      '503.http': 'HTTP/1.0 503 Service Unavailable\r\nCache-Control: no-cache\r\nContent-Type: text/plain\r\n\r\nno server\n',
    },
    certificates: { 'example.test.pem': PEM },
  };
}

export function aux(partial: Partial<AuxiliaryFiles> = {}): AuxiliaryFiles {
  return { maps: {}, files: {}, certificates: {}, ...partial };
}

/** A config around `body`, with the defaults every proxy needs. */
export function withDefaults(body: string): string {
  return `defaults\n  mode http\n  timeout connect 5s\n  timeout client 5s\n  timeout server 5s\n${body}`;
}
