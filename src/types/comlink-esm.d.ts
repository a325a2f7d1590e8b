// comlink ships ESM builds without an exports map; its CommonJS (UMD) entry exposes its API only
// as a default export under Node's ESM loader. These declarations type the ESM files.
declare module 'comlink/dist/esm/comlink.mjs' {
  export * from 'comlink';
}
declare module 'comlink/dist/esm/node-adapter.mjs' {
  import type { Endpoint } from 'comlink';
  import type { NodeEndpoint } from 'comlink/dist/umd/node-adapter.js';
  export default function nodeEndpoint(nep: NodeEndpoint): Endpoint;
}
