// The PEM scan of one certificate file: counts its certificates, private keys and CRLs, or
// names the first malformed block. It depends on the text alone, so IncrementalValidator caches
// it per text; what the counts must be (a key, or a key file next to it) is decided by the
// AuxiliaryChecker, which knows how the file is used.

const PEM_KEY_LABELS: ReadonlySet<string> = new Set(['PRIVATE KEY', 'RSA PRIVATE KEY', 'EC PRIVATE KEY']);

export interface PemSummary {
  readonly certificates: number;
  readonly keys: number;
  readonly crls: number;
  readonly problem: string | null;
  readonly problemLine: number | undefined;
}

/**
 * Walks the PEM blocks of a file: each BEGIN needs its END with the same label, and the body
 * must be valid base64 (RFC 1421 headers such as Proc-Type are skipped). Text outside blocks is
 * ignored, as OpenSSL does.
 */
export function scanPem(text: string): PemSummary {
  let certificates = 0;
  let keys = 0;
  let crls = 0;
  let label: string | null = null;
  let beginLine = 0;
  let body = 0;
  let padding = false;
  let inHeaders = false;
  let pos = 0;
  let lineNo = 0;
  while (pos < text.length) {
    let end = text.indexOf('\n', pos);
    if (end < 0) end = text.length;
    const line = text.slice(pos, end).trim();
    pos = end + 1;
    lineNo++;
    if (label === null) {
      if (line.startsWith('-----BEGIN ') && line.endsWith('-----')) {
        label = line.slice(11, -5);
        beginLine = lineNo;
        body = 0;
        padding = false;
        inHeaders = true;
      }
      continue;
    }
    if (line.startsWith('-----END ')) {
      const endLabel = line.endsWith('-----') ? line.slice(9, -5) : line.slice(9);
      if (endLabel !== label) {
        return pemProblem(`PEM block '${label}' opened at line ${beginLine} ends with '${endLabel}'`, lineNo);
      }
      if (body === 0 || body % 4 !== 0) {
        return pemProblem(`PEM block '${label}' opened at line ${beginLine} has an invalid base64 body`, beginLine);
      }
      if (label === 'CERTIFICATE' || label === 'TRUSTED CERTIFICATE') certificates++;
      else if (PEM_KEY_LABELS.has(label)) keys++;
      else if (label === 'X509 CRL') crls++;
      label = null;
      continue;
    }
    if (line === '') {
      inHeaders = false;
      continue;
    }
    if (inHeaders && body === 0 && line.indexOf(':') > 0) continue;
    inHeaders = false;
    for (let i = 0; i < line.length; i++) {
      const c = line.charCodeAt(i);
      const isB64 = (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 47;
      if (c === 61) padding = true;
      else if (!isB64 || padding) return pemProblem(`PEM block '${label}' has invalid base64 data`, lineNo);
      body++;
    }
  }
  if (label !== null) return pemProblem(`PEM block '${label}' opened at line ${beginLine} has no END line`, beginLine);
  if (certificates + keys + crls === 0 && text.indexOf('-----BEGIN ') < 0) {
    return pemProblem('not PEM data (no -----BEGIN ...----- block)', undefined);
  }
  return { certificates, keys, crls, problem: null, problemLine: undefined };
}

function pemProblem(problem: string, problemLine: number | undefined): PemSummary {
  return { certificates: 0, keys: 0, crls: 0, problem, problemLine };
}
