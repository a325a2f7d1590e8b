// Fixtures shared by the validator tests: the rendered directories and a self-signed EC
// certificate (CN example.test) with its key.
import type { OutputPaths } from '../../src/worker/validate/validator.js';

export const PATHS: OutputPaths = {
  mapsDir: '/etc/haproxy/maps',
  filesDir: '/etc/haproxy/files',
  certsDir: '/etc/haproxy/certs',
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
