// A resumed hash is the sha256 of the whole text, whatever was patched and whatever base was named.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SourceHash } from '../../../src/main/agent/source-hash.js';

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

function configOf(lines: number, seed: number): string {
  return Array.from({ length: lines }, (_, i) => `    server s${i} 10.0.${seed % 250}.${i % 250}:80 é`).join('\n');
}

describe('SourceHash', () => {
  it('gives the sha256 of the whole text after chained patches anywhere in it', () => {
    const hash = new SourceHash();
    let text = configOf(12_000, 1);
    expect(hash.digest(text)).toBe(sha256(text));
    for (let step = 0; step < 12; step++) {
      const start = Math.floor((step * 7919 * 37) % text.length);
      const end = Math.min(text.length, start + (step % 4) * 50);
      const next = text.slice(0, start) + `\n    server x${step} 10.9.9.${step}:80\n`.repeat(step % 3) + text.slice(end);
      expect(hash.digest(next, text, start)).toBe(sha256(next));
      text = next;
    }
  });

  it('hashes afresh when the base is not the text it hashed last', () => {
    const hash = new SourceHash();
    const one = configOf(5_000, 1);
    const two = configOf(5_000, 2);
    hash.digest(one);
    const next = `${two}\nbackend more\n`;
    expect(hash.digest(next, two, two.length)).toBe(sha256(next));
    // A wrong claim about the shared start goes unnoticed only when the base is the last text: here it is not.
    expect(hash.digest(one, two, one.length)).toBe(sha256(one));
  });
});
