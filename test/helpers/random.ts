// Draws from a seeded random source, shared by the property tests' generators.

export type Random = () => number;

export const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
export const chance = (random: Random, p: number): boolean => random() < p;
export const between = (random: Random, lo: number, hi: number): number => lo + Math.floor(random() * (hi - lo + 1));
