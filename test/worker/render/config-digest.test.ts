// The block-wise config digest: whatever path a text took (hashed at once, or changed into from
// earlier texts), the same text has the same digest, and different texts differ.
import { describe, expect, it } from 'vitest';
import type { TextEdit } from '../../../src/worker/protocol.js';
import { ConfigDigest } from '../../../src/worker/render/config-digest.js';
import { applyEdits } from '../../../src/worker/render/text-window.js';

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

/** Random edits of `text` for ConfigDigest.edit: most inside one block (as the endpoint lane makes them), some across blocks, making or joining blank lines, or at the end. */
function edits(text: string, rnd: () => number, terminator: string): TextEdit[] {
  const out: TextEdit[] = [];
  const count = 1 + Math.floor(rnd() * 4);
  let from = 0;
  for (let e = 0; e < count && from < text.length; e++) {
    const at = from + Math.floor(rnd() * Math.min(text.length - from, text.length / count));
    const kind = rnd();
    const remove = Math.min(text.length - at, kind < 0.7 ? Math.floor(rnd() * 12) : Math.floor(rnd() * 600));
    const inserts = ['7', '10.9.9.9:80', '', 'x'.repeat(20), kind < 0.9 ? 'y' : terminator, '\n', '\n\n\n'];
    out.push({ at, remove, text: inserts[Math.floor(rnd() * inserts.length)] as string });
    from = at + remove + 1 + Math.floor(rnd() * 200);
  }
  if (rnd() < 0.05) out.push({ at: text.length, remove: 0, text: '\nbackend tail\n' });
  return out.filter((edit, i) => i === 0 || edit.at >= (out[i - 1] as TextEdit).at + (out[i - 1] as TextEdit).remove);
}

/** Where each block starts: after each first terminator from the previous start. */
function blockStarts(text: string, terminator: string): number[] {
  const starts: number[] = [];
  for (let at = 0; at < text.length; ) {
    starts.push(at);
    const found = text.indexOf(terminator, at);
    at = found < 0 ? text.length : found + terminator.length;
  }
  return starts;
}

/** What `find` gives, the long way: the first block whose key is the needle's, if it starts with the needle. */
function naiveFind(text: string, starts: readonly number[], needle: string, keyEnd: string): number {
  const keyOf = (t: string): string => (t.includes(keyEnd) ? t.slice(0, t.indexOf(keyEnd)) : t);
  const key = keyOf(needle);
  for (let j = 0; j < starts.length; j++) {
    const block = text.slice(starts[j], starts[j + 1] ?? text.length);
    if (keyOf(block) === key) return text.startsWith(needle, starts[j]) ? (starts[j] as number) : -1;
  }
  return -1;
}

function slotLines(backends: number, rnd: () => number): string {
  let text = '';
  for (let i = 0; i < backends; i++) text += `ing_b${i} 10.0.${i % 250}.${Math.floor(rnd() * 250)}:8080 - -\n`;
  return text;
}

describe('ConfigDigest.edit', () => {
  for (const [name, terminator, keyEnd, make] of [
    ['config blocks', '\n\n', '\n', config],
    ['file lines', '\n', ' ', slotLines],
  ] as const) {
    it(`gives the text the edits make and the digest a cold digest of it gives, over random edit sequences (${name})`, () => {
      const rnd = random(23);
      const kept = new ConfigDigest(terminator, keyEnd);
      let text = make(500, rnd);
      kept.digest(text);
      for (let i = 0; i < 400; i++) {
        const batch = edits(text, rnd, terminator);
        const next = applyEdits(text, batch) as string;
        const edited = kept.edit(batch);
        expect(edited?.text, `edit ${i}`).toBe(next);
        expect(edited?.digest, `edit ${i}`).toBe(new ConfigDigest(terminator, keyEnd).digest(next));
        text = next;
        // Now and then a whole render's way in, from the edited text: the two ways mix.
        if (i % 37 === 0) {
          text = edit(text, rnd);
          expect(kept.digest(text), `digest after edit ${i}`).toBe(new ConfigDigest(terminator, keyEnd).digest(text));
        }
        // A block found by the start of its text is where a search of the text from scratch finds it.
        const starts = blockStarts(text, terminator);
        const j = Math.floor(rnd() * starts.length);
        const from = starts[j] as number;
        const needle = text.slice(from, from + 1 + Math.floor(rnd() * 60));
        expect(kept.find(needle), `find after edit ${i}`).toBe(naiveFind(text, starts, needle, keyEnd));
      }
    });
  }

  it('finds a block by its key where it starts, follows edits, and says -1 where no block starts with the text', () => {
    const rnd = random(29);
    const kept = new ConfigDigest();
    const text = config(50, rnd);
    kept.digest(text);
    const section = (i: number, t: string): string => {
      const at = t.indexOf(`backend b${i}\n`);
      return t.slice(at, t.indexOf('\n', t.indexOf('server', at)) + 1);
    };
    expect(kept.find(section(20, text))).toBe(text.indexOf('backend b20\n'));
    expect(kept.find('backend b20\n  server s1 10.255.')).toBe(-1);
    expect(kept.find('backend nowhere\n')).toBe(-1);
    // An edit that makes block 10 longer moves every later block.
    const at = text.indexOf('backend b10\n') + 'backend b10\n'.length;
    const edited = kept.edit([{ at, remove: 0, text: '  balance roundrobin\n' }]);
    const now = edited?.text as string;
    expect(kept.find(section(20, now))).toBe(now.indexOf('backend b20\n'));
    expect(kept.find(section(10, now))).toBe(now.indexOf('backend b10\n'));
    // A block renamed by an edit is found under its new key, not the old one.
    const rename = now.indexOf('backend b30\n') + 'backend b3'.length;
    const renamed = kept.edit([{ at: rename, remove: 1, text: '0x' }])?.text as string;
    expect(kept.find('backend b30x\n')).toBe(renamed.indexOf('backend b30x\n'));
    expect(kept.find('backend b30\n')).toBe(-1);
  });

  it('finds each of two blocks whose keys hash alike where it starts, and -1 for a third key of that hash', () => {
    // 'backend b129599' and 'backend b732382' have the same 32-bit FNV-1a hash, as do 'backend b129598' and 'backend b732383'.
    const text = 'global\n\nbackend b129599\n  server s1 10.0.0.1:80\n\nbackend b732382\n  server s1 10.0.0.2:80\n\nbackend b129598\n  server s1 10.0.0.3:80\n';
    const kept = new ConfigDigest();
    kept.digest(text);

    expect(kept.find('backend b129599\n')).toBe(text.indexOf('backend b129599\n'));
    expect(kept.find('backend b732382\n  server')).toBe(text.indexOf('backend b732382\n'));
    expect(kept.find('backend b129598\n')).toBe(text.indexOf('backend b129598\n'));
    expect(kept.find('backend b732383\n')).toBe(-1);
  });

  it('edits nothing without a text, and leaves an out-of-range edit to the caller', () => {
    const kept = new ConfigDigest();
    expect(kept.edit([{ at: 0, remove: 0, text: 'x' }])).toBeUndefined();
    kept.digest('global\n\nbackend a\n');
    expect(kept.edit([{ at: 5, remove: 100, text: 'x' }])).toBeUndefined();
    expect(kept.digest('global\n\nbackend a\n')).toBe(new ConfigDigest().digest('global\n\nbackend a\n'));
  });
});
