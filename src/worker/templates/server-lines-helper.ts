// `{{serverLines backend}}`: a model backend's `server` lines, one per slot, each ending in a
// newline. The default set wrote them as an `each` over the slots with an `if` or two per slot;
// that loop was about half of the Handlebars work of a cold render (10 slots a backend, each an
// iteration frame, a block call and its program wrappers). One call per backend writes the same
// text. It reads only the backend it is given, so it may be called inside a memo block.

import { shown, truthy } from './handlebars-values.js';

/** The backend fields the lines are written from (routing/model.ts's Backend). */
interface SlotsOf {
  readonly servers?: readonly { readonly name?: unknown; readonly address?: unknown; readonly enabled?: unknown }[];
  readonly dns?: unknown;
  readonly options?: { readonly cookie?: unknown };
}

/** The server lines of `backend`: empty when it has no servers (or is not a backend). */
export function serverLines(backend: unknown): string {
  if (backend === null || typeof backend !== 'object') return '';
  const { servers, dns, options } = backend as SlotsOf;
  if (!Array.isArray(servers)) return '';
  const resolved = truthy(dns) ? ' resolvers dns init-addr last,libc,none' : '';
  const cookie = options !== null && typeof options === 'object' && truthy(options.cookie);
  let text = '';
  for (const slot of servers as NonNullable<SlotsOf['servers']>) {
    // As `each` renders a null element: with an empty context.
    const server = slot ?? {};
    const name = shown(server.name);
    text += `  server ${name} ${shown(server.address)}${truthy(server.enabled) ? resolved : ' disabled'}${cookie ? ` cookie ${name}` : ''}\n`;
  }
  return text;
}
