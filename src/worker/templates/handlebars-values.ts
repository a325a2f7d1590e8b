// How the default set's Handlebars blocks read a value, for the helpers that write the same lines
// in one call (server-lines-helper.ts, backend-option-lines-helper.ts,
// ingress-option-lines-helper.ts): `#if`, `#with`, `#each` and `{{value}}` with noEscape.

/** `#if`: false for what JavaScript holds false, and for an empty list. */
export function truthy(value: unknown): boolean {
  return Boolean(value) && !(Array.isArray(value) && value.length === 0);
}

/** `#with`: renders for every value but undefined, null, false, '', NaN and an empty list (0 renders). */
export function present(value: unknown): boolean {
  return (Boolean(value) || value === 0) && !(Array.isArray(value) && value.length === 0);
}

/** A value as `{{value}}` writes it with noEscape: nothing for undefined and null. */
export function shown(value: unknown): string {
  return value === undefined || value === null ? '' : String(value);
}

/** A property as a path step reads it: undefined on undefined, null or a primitive without it. */
export function field(value: unknown, name: string): unknown {
  return value === null || value === undefined ? undefined : (value as Record<string, unknown>)[name];
}

/** The elements `#each` visits, for the lists the model holds (anything else visits none). */
export function elements(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : [];
}
