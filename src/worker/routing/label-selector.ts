// Kubernetes label selectors (matchLabels and matchExpressions, ANDed), for a Gateway listener's
// `allowedRoutes.namespaces.selector`. The store check has made sure of their shape. An empty
// selector matches every object, as in Kubernetes.

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

export function matchesSelector(selector: LabelSelector, labels: Readonly<Record<string, string>>): boolean {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) if (labels[key] !== value) return false;
  for (const term of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, term.key);
    const values = term.values ?? [];
    switch (term.operator) {
      case 'In':
        if (!has || !values.includes(labels[term.key] as string)) return false;
        break;
      case 'NotIn':
        if (has && values.includes(labels[term.key] as string)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}
