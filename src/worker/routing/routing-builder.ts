// The routing model of a render: the Ingress model (model-builder.ts) and the Gateway API model
// (gateway-builder.ts) in one. They share the backends list and the server-slot file (route
// backends `gw_…` after the Ingress ones `ing_…`), so every backend gets its slots the same way
// and endpoint changes of route backends go through the Runtime API as Ingress ones do, and the
// server slot and output budgets, which HTTPRoutes share with Ingresses (route-budget.ts), and
// the health-check budget (check-budget.ts), taken over both kinds of backends. Without Gateway
// API objects the model is exactly the Ingress model, object for object. Both builders' caches
// follow store changes only, so when the render gate's exclusions change (a refused object left
// out, a trial render without some namespaces, or either ending) the model is built afresh.
import type { RenderBaseline } from '../protocol.js';
import { CheckBudget } from './check-budget.js';
import { GatewayModelBuilder } from './gateway-builder.js';
import { gatewayOptions } from './gateway-model.js';
import type { Backend, ModelOptions, RoutingModel } from './model.js';
import { RoutingModelBuilder } from './model-builder.js';
import type { ModelSource } from './model-source.js';
import { SERVER_SLOTS_FILE } from './server-slots.js';

export class RoutingBuilder {
  readonly #options: ModelOptions;
  readonly #values: Readonly<Record<string, unknown>>;
  #ingress: RoutingModelBuilder;
  #gateway: GatewayModelBuilder;
  /** Over Ingress and route backends together: the Ingress builder's own covers only its backends. */
  #checkBudget = new CheckBudget();
  /** The exclusions the builders' caches were built under (model-source.ts). */
  #exclusions = '';
  #last: { ingress: RoutingModel; gateway: unknown; model: RoutingModel } | undefined;
  /** The backends of the last model with route backends, and the two lists they were joined from. */
  #joined: { ingress: readonly Backend[]; gateway: readonly Backend[]; backends: readonly Backend[] } | undefined;

  /** Where the route backends' lines start in the latest baseline's slot text (-1: none). */
  #routeSlotsAt: { readonly text: string; readonly at: number } | undefined;

  constructor(options: ModelOptions, values: Readonly<Record<string, unknown>>) {
    this.#options = options;
    this.#values = values;
    this.#ingress = new RoutingModelBuilder(options);
    this.#gateway = new GatewayModelBuilder(options, gatewayOptions(values));
  }

  get cachedIngresses(): number {
    return this.#ingress.cachedIngresses;
  }

  build(source: ModelSource, baseline: RenderBaseline | undefined, warn: (message: string) => void): RoutingModel {
    const exclusions = source.exclusionKey ?? '';
    if (exclusions !== this.#exclusions) this.#forget(exclusions);
    const text = baseline?.auxiliaryFiles.files[SERVER_SLOTS_FILE] ?? '';
    // Searched once per slot text: the baseline is usually the last render's, the same string.
    const known = this.#routeSlotsAt;
    const at = known !== undefined && known.text === text ? known.at : routeSlotsAt(text);
    this.#routeSlotsAt = { text, at };
    let ingressBaseline = baseline;
    let routeSlots = '';
    if (baseline !== undefined && at >= 0) {
      routeSlots = text.slice(at);
      ingressBaseline = { ...baseline, auxiliaryFiles: { ...baseline.auxiliaryFiles, files: { ...baseline.auxiliaryFiles.files, [SERVER_SLOTS_FILE]: text.slice(0, at) } } } as RenderBaseline;
    }
    // The budgets are the namespaces' whatever they serve: the Ingress builder decides them over
    // its Ingresses and the routes the Gateway builder would serve, which then keeps to them.
    const routes = this.#gateway.measure(source, routeSlots);
    const ingress = this.#ingress.build(source, ingressBaseline, warn, routes);
    const gateway = this.#gateway.build(source, routeSlots, warn, this.#ingress.routeLimits);
    if (gateway.model.status.gatewayClasses.length === 0) return ingress;
    const last = this.#last;
    if (last !== undefined && last.ingress === ingress && last.gateway === gateway) return last.model;
    const model: RoutingModel = {
      ...ingress,
      backends: gateway.backends.length === 0 ? ingress.backends : this.#joinedBackends(ingress.backends, gateway.backends),
      resolvers: ingress.resolvers || gateway.backends.some((b) => b.dns),
      serverSlotsFile: ingress.serverSlotsFile + gateway.slotText,
      gateway: gateway.model,
    };
    this.#last = { ingress, gateway, model };
    return model;
  }

  /** Starts both builders over: what they kept was read under other exclusions. */
  #forget(exclusions: string): void {
    this.#exclusions = exclusions;
    this.#ingress = new RoutingModelBuilder(this.#options);
    this.#gateway = new GatewayModelBuilder(this.#options, gatewayOptions(this.#values));
    this.#checkBudget = new CheckBudget();
    this.#last = undefined;
    this.#joined = undefined;
  }

  /** Both lists under the check budget; the last result while both are the same arrays (the budget gives what it gave). */
  #joinedBackends(ingress: readonly Backend[], gateway: readonly Backend[]): readonly Backend[] {
    const joined = this.#joined;
    if (joined !== undefined && joined.ingress === ingress && joined.gateway === gateway) return joined.backends;
    const backends = this.#checkBudget.apply([...ingress, ...gateway]);
    this.#joined = { ingress, gateway, backends };
    return backends;
  }
}

/** Where the first line of a route backend (`gw_…`) starts in a slot file, or -1: the Ingress backends' lines come first. */
function routeSlotsAt(text: string): number {
  if (text.startsWith('gw_')) return 0;
  const newline = text.indexOf('\ngw_');
  return newline < 0 ? -1 : newline + 1;
}
