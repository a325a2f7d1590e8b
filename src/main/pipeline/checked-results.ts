// The results this package's executors built (toPipelineResult): frozen, of the shape the
// Coordinator reads, so its defensive read (result-check.ts) takes them as they are instead of
// copying every list of a 10,000-Ingress render. Any other object is read field by field.
const checked = new WeakSet<object>();

/** Freezes `result` and records it as well formed; returns it. */
export function markChecked<T extends object>(result: T): T {
  checked.add(Object.freeze(result));
  return result;
}

/** Whether `value` is a result markChecked recorded. */
export function isChecked(value: unknown): boolean {
  return typeof value === 'object' && value !== null && checked.has(value);
}
