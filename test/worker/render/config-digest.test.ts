// The block-wise config digest: whatever path a text took (hashed at once, or changed into from
// earlier texts), the same text has the same digest, and different texts differ.
import { describe, expect, it } from 'vitest';
import { ConfigDigest } from '../../../src/worker/render/config-digest.js';

/** A deterministic pseudo-random source (xorshift). */
function random(seed: number): () => number {
  let x = seed;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

function config(sections: number, rnd: () => number): string {
  const parts: string[] = ['global\n  maxconn 100\n'];
  for (let i = 0; i < sections; i++) parts.push(`\nbackend b${i}\n  server s1 10.0.${i % 250}.${Math.floor(rnd() * 250)}:80${rnd() < 0.1 ? '\n' : ''}\n`);
  return parts.join('');
}

/** `text` with one random edit: a change, an insertion, a deletion, blank lines made or joined. */
function edit(text: string, rnd: () => number): string {
  const at = Math.floor(rnd() * text.length);
  const remove = Math.floor(rnd() * (rnd() < 0.8 ? 40 : 2000));
  const inserts = ['', '\n', '\n\n', 'x', '\nbackend extra\n  server s9 10.9.9.9:80\n', '\n\n\n'];
  return text.slice(0, at) + (inserts[Math.floor(rnd() * inserts.length)] as string) + text.slice(Math.min(text.length, at + remove));
}

describe('ConfigDigest', () => {
  it('gives a text changed into the same digest as the text hashed at once, over random edits', () => {
    const rnd = random(17);
    const kept = new ConfigDigest();
    let text = config(600, rnd);
    expect(kept.digest(text)).toBe(new ConfigDigest().digest(text));
    for (let i = 0; i < 300; i++) {
      text = edit(text, rnd);
      expect(kept.digest(text), `edit ${i}`).toBe(new ConfigDigest().digest(text));
    }
  });

  it('tells texts apart that differ in one character, and handles empty texts', () => {
    const a = config(300, random(3));
    const b = a.replace('server s1 10.0.150.', 'server s1 10.0.151.');
    expect(b).not.toBe(a);
    const kept = new ConfigDigest();
    const da = kept.digest(a);
    expect(kept.digest(b)).not.toBe(da);
    expect(kept.digest(a)).toBe(da);
    expect(kept.digest('')).toBe(new ConfigDigest().digest(''));
    expect(kept.digest(a)).toBe(da);
  });

  it('uses the prefix and suffix it is told instead of measuring them', () => {
    const a = config(200, random(5));
    const at = a.indexOf('backend b100');
    const b = `${a.slice(0, at)}backend b100x${a.slice(at + 'backend b100'.length)}`;
    const kept = new ConfigDigest();
    kept.digest(a);
    expect(kept.digest(b, { prefix: at, suffix: a.length - at - 'backend b100'.length })).toBe(new ConfigDigest().digest(b));
  });
});
