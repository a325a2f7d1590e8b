// sha256 (hex) on the thread pool (WebCrypto), for texts large enough that hashing them on the
// main thread would hold it up: the main thread only encodes the text (or nothing, for bytes).
import { webcrypto } from 'node:crypto';

export async function sha256Off(data: string | Uint8Array): Promise<string> {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  return Buffer.from(await webcrypto.subtle.digest('SHA-256', bytes)).toString('hex');
}
