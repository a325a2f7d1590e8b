// StructureOps: the contract between the StructureParser, which reads one text and records
// every step that touches state shared by the whole configuration, and the StructureState,
// which replays them in configuration order. An op depends only on the text it came from;
// why that makes chunked replay exact is explained in ../phases.ts.
import type { SectionKind } from '../keywords.js';
import type { MapConverter } from '../map-converters.js';

/** What a referenced path is used as: decides its base (crt-base, ca-base) and its messages. */
export type RefKind = 'map' | 'pattern' | 'crt' | 'crt-list' | 'ca-file' | 'crl-file' | 'errorfile' | 'file';

/** The section a line belongs to, as its header declared it. */
export interface Section {
  readonly kind: SectionKind;
  readonly name: string;
  /** A defaults section with a name (ACLs and rules are allowed only there). */
  readonly named: boolean;
}

/**
 * One step of the line by line pass that the parser cannot take alone. `line` is relative to the
 * parsed text; StructureState.apply() adds the text's offset.
 */
export type StructureOp =
  /** An error decided by the line and its section alone. */
  | { readonly op: 'error'; readonly line: number; readonly message: string }
  /** An error quoting another line of the same section: `${head}${at}${tail}`. */
  | { readonly op: 'error-at'; readonly line: number; readonly head: string; readonly at: number; readonly tail: string }
  /** `<kind> [<name>] from <defaults>`: the defaults section must be declared above. */
  | { readonly op: 'from'; readonly line: number; readonly kind: SectionKind; readonly name: string; readonly from: string }
  | { readonly op: 'proxy'; readonly line: number; readonly kind: 'frontend' | 'backend' | 'listen'; readonly name: string }
  | { readonly op: 'defaults'; readonly name: string }
  /** A named section other than proxies and defaults (resolvers, userlist, cache, ...). */
  | { readonly op: 'section'; readonly line: number; readonly kind: SectionKind; readonly name: string }
  /** One valid address of a bind line. */
  | { readonly op: 'bind'; readonly line: number; readonly addr: string; readonly section: Section }
  /** A referenced file path: its verdict depends on crt-base / ca-base and on the rendered files. */
  | { readonly op: 'path'; readonly line: number; readonly kind: RefKind; readonly raw: string }
  /** A map converter in a `use_backend` / `default_backend` target. */
  | { readonly op: 'map-target'; readonly line: number; readonly conv: MapConverter; readonly keyword: string; readonly proxy: string }
  | { readonly op: 'backend-ref'; readonly line: number; readonly name: string; readonly keyword: string; readonly proxy: string }
  | { readonly op: 'section-ref'; readonly line: number; readonly kind: string; readonly name: string; readonly what: string }
  | { readonly op: 'crt-base' | 'ca-base'; readonly value: string | null }
  /** The parser threw: the pass ends here with an internal error, as it would have. */
  | { readonly op: 'throw'; readonly message: string };
