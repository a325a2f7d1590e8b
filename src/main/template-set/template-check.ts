// Refuses a template set before any worker sees it: every template must compile, and a dry render
// against empty stores must succeed (that catches unknown helpers and partials, which Handlebars
// only reports at run time). A worker module that failed at load would make the pool hang.
import type { TemplateSetSource } from '../../worker/protocol.js';
import { TemplateEngine } from '../../worker/templates/template-engine.js';
import { TemplateSetRejected } from '../core/errors.js';

export { TemplateSetRejected } from '../core/errors.js';

export function assertTemplateSetRenders(set: TemplateSetSource, engine: TemplateEngine = new TemplateEngine()): void {
  try {
    engine.dryRun(set);
  } catch (error) {
    throw new TemplateSetRejected((error as Error).message);
  }
}
