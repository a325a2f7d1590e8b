// The server address check keeps the answer of the last address asked: asked again, back to
// back or in any order, and over more distinct addresses than a map of answers would keep, it
// gives what the check itself gives.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkServerAddress, serverAddressProblem } from '../../../src/worker/validate/structure/addresses.js';

const PARTS = ['127.0.0.1', '10.0.0.1', '[::1]', '::1', 'ipv4@', 'ipv6@', 'unix@', 'fd@', 'abns@', '/run/x.sock', 'host.example', '*', '', ':', ':1', ':0', ':65536', ':+1', ':-1', ':80-90', ':8080', '${PORT}', 'a@b', '%', '1.2.3.4.5'];
const address = fc.oneof(
  { weight: 4, arbitrary: fc.array(fc.constantFrom(...PARTS), { minLength: 1, maxLength: 3 }).map((parts) => parts.join('')) },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
);

describe('server address answers', () => {
  it('gives the answer of the check itself for every address, asked again and again', () => {
    fc.assert(
      fc.property(fc.array(address, { minLength: 1, maxLength: 40 }), fc.array(fc.nat(), { maxLength: 80 }), (addresses, picks) => {
        for (const addr of addresses) expect(serverAddressProblem(addr)).toBe(checkServerAddress(addr));
        for (const pick of picks) {
          const addr = addresses[pick % addresses.length] as string;
          expect(serverAddressProblem(addr)).toBe(checkServerAddress(addr));
        }
      }),
      { numRuns: 500 },
    );
  });

  it('still answers right once more addresses were asked than it keeps', () => {
    // Every one of them has a problem, so an answer lost on the way shows as null.
    const many = Array.from({ length: 10_000 }, (_, i) => (i % 3 === 0 ? `10.${(i >> 8) & 255}.${i & 255}.1:${65_536 + i}` : i % 3 === 1 ? `bad@${i}` : `[::${i.toString(16)}]:`));
    expect(many.every((addr) => checkServerAddress(addr) !== null)).toBe(true);
    for (const round of [0, 1]) for (const addr of round === 0 ? many : [...many].reverse()) expect(serverAddressProblem(addr)).toBe(checkServerAddress(addr));
  });
});
