// SHA-256 of a text in one call. The digests kept per config block and per map line are of short
// texts, many thousands a render: Node's one-shot crypto.hash (20.12 on) costs a fraction of a
// Hash object's createHash().update().digest() for them. A runtime without it takes the Hash
// object's way, to the same digest.
import * as crypto from 'node:crypto';

/** How a digest is spelled: hex, or 32 bytes as a latin1 string ('binary'). */
type DigestEncoding = 'hex' | 'binary';

const oneShot: ((algorithm: string, data: crypto.BinaryLike, encoding: DigestEncoding) => string) | undefined = (crypto as { hash?: (algorithm: string, data: crypto.BinaryLike, encoding: DigestEncoding) => string }).hash;

/** SHA-256 of `text` as UTF-8. */
export function sha256(text: string, encoding: DigestEncoding): string {
  return oneShot === undefined ? crypto.createHash('sha256').update(text).digest(encoding) : oneShot('sha256', text, encoding);
}

/** SHA-256 of `text` as latin1 (one byte per character: joined digests). */
export function sha256Latin1(text: string, encoding: DigestEncoding): string {
  return oneShot === undefined ? crypto.createHash('sha256').update(text, 'latin1').digest(encoding) : oneShot('sha256', Buffer.from(text, 'latin1'), encoding);
}
