// Reading an annotation parser's `Parsed` result in tests: the value, or the reason it refused;
// each fails the test when the parse went the other way.
import type { Parsed } from '../../src/worker/routing/annotations/values.js';

/** The reason a parse refused its input (the test fails when it did not). */
export function reason<T>(parsed: Parsed<T>): string {
  if (parsed.ok) throw new Error(`expected a refusal, got ${JSON.stringify(parsed.value)}`);
  return parsed.reason;
}

/** The value a parse accepted (the test fails when it refused). */
export function value<T>(parsed: Parsed<T>): T {
  if (!parsed.ok) throw new Error(`expected a value, got the refusal: ${parsed.reason}`);
  return parsed.value;
}
