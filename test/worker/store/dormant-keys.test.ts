// DormantKeys writes a dormant store's property names as one-character codes: whatever JSON text
// it is given, decoding what it encoded gives that text back, and a store meeting the same names
// again writes them as the same codes.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DormantKeys } from '../../../src/worker/store/dormant-keys.js';

/** Names that make the quotes of a text hard to follow: quotes, backslashes, colons, control characters. */
const trickyName = fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('"', '\\', ':', '":', ',"a":', '\u0002', '\u001f', '\u0001', 'a"b', '}', ''));
const json = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.oneof(trickyName, fc.integer(), fc.boolean(), fc.constant(null)),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(trickyName, tie('value'), { maxKeys: 5 }),
  ),
})).value;

describe('DormantKeys', () => {
  it('gives back every JSON text it encoded, for any names and values', () => {
    fc.assert(
      fc.property(fc.array(json, { minLength: 1, maxLength: 6 }), (values) => {
        const keys = new DormantKeys();
        const texts = values.map((v) => JSON.stringify(v));
        const encoded = texts.map((t) => keys.encode(t));
        expect(encoded.map((t) => keys.decode(t))).toEqual(texts);
      }),
      { numRuns: 2000 },
    );
  });

  it('writes each property name as one character, the same one in every text of the store', () => {
    const keys = new DormantKeys();
    const first = keys.encode('{"metadata":{"name":"a","namespace":"b"}}');
    const second = keys.encode('{"metadata":{"namespace":"c","name":"d"}}');

    expect(first).toBe('{\u0002{\u0003"a",\u0004"b"}}');
    expect(second).toBe('{\u0002{\u0004"c",\u0003"d"}}');
  });

  it('leaves the names past its thirty codes as they are', () => {
    const keys = new DormantKeys();
    const many = JSON.stringify(Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, i])));
    const encoded = keys.encode(many);

    expect(encoded.startsWith('{\u00020,\u00031,')).toBe(true);
    expect(encoded.endsWith(',"k39":39}')).toBe(true);
    expect(keys.decode(encoded)).toBe(many);
  });

  it('gives no code to a name longer than 64 characters, nor to a stretch that ends at an escaped quote', () => {
    const keys = new DormantKeys();
    const long = JSON.stringify({ ['x'.repeat(65)]: 1, q: 'a\\":' });
    const encoded = keys.encode(long);

    expect(encoded).toBe(`{"${'x'.repeat(65)}":1,\u0002${JSON.stringify('a\\":')}}`);
  });

  it('reads back a text whose escaped quotes look like a property name', () => {
    const keys = new DormantKeys();
    const text = JSON.stringify({ a: 'x":', b: ['":', '\\":'], 'c"': { '": ': '"' } });

    expect(keys.decode(keys.encode(text))).toBe(text);
  });
});
