// The one-shot digests the checksum is built from give what a Hash object gives for the same
// text and encoding, on any UTF-16 text (lone surrogates included) and any latin1 text.
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sha256, sha256Latin1 } from '../../../src/worker/render/sha256.js';

const anyText = fc.oneof(fc.string({ unit: 'binary', maxLength: 80 }), fc.string({ unit: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)), maxLength: 4 }), fc.string({ maxLength: 80 }));
const latin1Text = fc.string({ unit: fc.integer({ min: 0, max: 255 }).map((c) => String.fromCharCode(c)), maxLength: 96 });

describe('one-shot SHA-256', () => {
  it('gives the digest of a Hash object fed the text as UTF-8, in hex and in binary', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        expect(sha256(text, 'hex')).toBe(createHash('sha256').update(text).digest('hex'));
        expect(sha256(text, 'binary')).toBe(createHash('sha256').update(text).digest('binary'));
      }),
      { numRuns: 2000 },
    );
  });

  it('gives the digest of a Hash object fed the text as latin1, in hex and in binary', () => {
    fc.assert(
      fc.property(latin1Text, (text) => {
        expect(sha256Latin1(text, 'hex')).toBe(createHash('sha256').update(text, 'latin1').digest('hex'));
        expect(sha256Latin1(text, 'binary')).toBe(createHash('sha256').update(text, 'latin1').digest('binary'));
      }),
      { numRuns: 2000 },
    );
  });
});
