// The property names of a dormant store's texts (compact-object.ts), each written as one
// character. The objects of one store repeat the same few dozen names (`"metadata":`,
// `"namespace":`, `"pathType":`), about half of a synthetic Ingress's, Service's or
// EndpointSlice's JSON text. A store gives each name a code the first time it meets it, from
// U+0002 to U+001F: JSON.stringify escapes every control character inside a string, so a raw one
// in the text is always a code, and the text stays one byte a character. The codes are never
// reassigned, so a text reads back the same for as long as the store holds it.
// Coding is a substitution of text alone: each `"…":` the quotes of the text delimit (a property
// name; in a text with escaped quotes, maybe some other stretch of it) becomes a code, and decoding
// puts back exactly what its code stands for, so any JSON text reads back as it was written.

/** The first and last code (U+0001 marks a stamped text, compact-object.ts). */
const FIRST_CODE = 0x02;
const LAST_CODE = 0x1f;
/** Longer names are left as they are. */
const MAX_NAME = 64;

export class DormantKeys {
  /** Code character by property name. */
  readonly #codes = new Map<string, string>();
  /** `"name":` by code point. */
  readonly #names: string[] = [];

  /** `text` (JSON) with the property names the store has codes for, or gets them now, as their codes. */
  encode(text: string): string {
    let out = '';
    let at = 0;
    for (let open = text.indexOf('"'); open >= 0; ) {
      const close = text.indexOf('"', open + 1);
      if (close < 0) break;
      if (text.charCodeAt(close + 1) === 58) {
        const code = this.#codeOf(text.slice(open + 1, close));
        if (code !== undefined) {
          out += text.slice(at, open) + code;
          at = close + 2;
        }
      }
      open = text.indexOf('"', close + 1);
    }
    return at === 0 ? text : out + text.slice(at);
  }

  /** The JSON text `encode` was given. */
  decode(text: string): string {
    return text.replace(CODES, (code) => this.#names[code.charCodeAt(0)] as string);
  }

  #codeOf(name: string): string | undefined {
    const known = this.#codes.get(name);
    if (known !== undefined) return known;
    const point = FIRST_CODE + this.#codes.size;
    // A long stretch, or one up to an escaped quote, is no property name worth a code the store keeps for good.
    if (point > LAST_CODE || name.length > MAX_NAME || name.includes('\\')) return undefined;
    const code = String.fromCharCode(point);
    // Copies of their own: a slice of the text would keep the whole object's text alive.
    this.#codes.set(JSON.parse(JSON.stringify(name)) as string, code);
    this.#names[point] = JSON.parse(JSON.stringify(`"${name}":`)) as string;
    return code;
  }
}

// eslint-disable-next-line no-control-regex -- the codes are control characters
const CODES = /[\u0002-\u001f]/g;
