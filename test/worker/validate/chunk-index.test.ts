// The chunk index files chunk records by a hash of their first line: records whose lines hash
// alike (the same line, or a collision) share an entry and are told apart by their whole texts,
// so a lookup finds exactly the record of the text asked for, whatever was added and removed.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ChunkIndex, headKey, newChunk, type ChunkRecord } from '../../../src/worker/validate/incremental/chunk-index.js';

describe('ChunkIndex', () => {
  it('finds each record by its text when the first lines of several hash alike', () => {
    const index = new ChunkIndex();
    const a = newChunk('backend a\n  server s1 1.2.3.4:80\n');
    const b = newChunk('backend a\n  server s1 5.6.7.8:80\n');
    // Another first line under the same key, as a hash collision would file it.
    const c: ChunkRecord = { ...newChunk('backend c\n'), key: a.key };
    for (const record of [a, b, c]) index.add(record);

    expect(index.find(a.key, a.text)).toBe(a);
    expect(index.find(a.key, b.text)).toBe(b);
    expect(index.find(a.key, c.text)).toBe(c);
    index.remove(b);
    expect(index.find(a.key, b.text)).toBeUndefined();
    expect(index.find(a.key, c.text)).toBe(c);
    index.remove(a);
    expect(index.find(a.key, c.text)).toBe(c);
    expect(index.size).toBe(1);
  });

  it('keys a record by its first line wherever the line stands in a text', () => {
    fc.assert(
      fc.property(fc.string(), fc.string({ unit: fc.constantFrom('a', 'b', ' ', '\u00e9', '\u{1f600}') }), fc.string(), (before, line, rest) => {
        const text = `${line}\n${rest}`;
        const record = newChunk(text);
        const config = before + text;
        expect(record.key).toBe(headKey(config, before.length, before.length + line.length));
        expect(record.headLength).toBe(line.length);
      }),
    );
  });

  it('gives different lines different keys, as a rule', () => {
    const lines = Array.from({ length: 10_000 }, (_, i) => `backend ing_team-${i % 200}_app-${i}_app-${i}_80`);
    const keys = new Set(lines.map((line) => headKey(line, 0, line.length)));
    expect(keys.size).toBeGreaterThan(9_990);
  });
});
