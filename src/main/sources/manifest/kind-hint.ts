// The "did you mean" of the manifest loader: a document whose kind no store watches, but which is
// one typo (or a case slip) away from a kind one does, is almost surely that kind misspelt. It is
// reported with the watched kind it resembles instead of being counted silently as unwatched.

/** The watched kind `kind` resembles (same letters in another case, or a small edit away), if any. */
export function resembledKind(kind: string, watched: readonly string[]): string | undefined {
  if (watched.includes(kind)) return undefined;
  const lower = kind.toLowerCase();
  const sameCase = watched.find((w) => w.toLowerCase() === lower);
  if (sameCase !== undefined) return sameCase;
  // One edit for short names, two for longer ones: `Servce`, `Ingres`, `Secrets`, `EndpointSlices`.
  let best: { kind: string; distance: number } | undefined;
  for (const candidate of watched) {
    const allowed = Math.min(candidate.length, lower.length) <= 4 ? 1 : 2;
    const distance = editDistance(lower, candidate.toLowerCase(), allowed);
    if (distance <= allowed && (best === undefined || distance < best.distance)) best = { kind: candidate, distance };
  }
  return best?.kind;
}

/**
 * Optimal string alignment distance (insertions, deletions, substitutions and swaps of two
 * neighbours), or `limit + 1` as soon as it must exceed `limit`: kinds are short, this is cheap.
 */
function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min((previous[j] as number) + 1, (row[j - 1] as number) + 1, (previous[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, (before[j - 2] as number) + 1);
      row.push(value);
      rowMin = Math.min(rowMin, value);
    }
    if (rowMin > limit) return limit + 1;
    before = previous;
    previous = row;
  }
  return previous[b.length] as number;
}
