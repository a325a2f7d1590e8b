// The helpers that write a part of a model backend's section in one call, by name, as the default
// set calls them: each writes what a run of Handlebars blocks over the backend wrote before, and
// reads only the backend it is given, so it may be called inside a memo block.

import { backendOptionLines } from './backend-option-lines-helper.js';
import { ingressOptionLines } from './ingress-option-lines-helper.js';
import { serverLines } from './server-lines-helper.js';

export const BACKEND_LINE_HELPERS: Readonly<Record<string, (backend: unknown) => string>> = { serverLines, backendOptionLines, ingressOptionLines };
