import { allRoutes } from '../rules/table.js';

/** Edits (insert, delete, replace) between two short words: how a typo is recognised. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const replace = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
      row.push(Math.min(replace, (previous[j] as number) + 1, (row[j - 1] as number) + 1));
    }
    previous = row;
  }
  return previous[b.length] as number;
}

/** Versions as people prefer them: v1 first, then the newest beta. */
const byPreference = (a: string, b: string): number => Number(b === 'v1') - Number(a === 'v1') || b.localeCompare(a);

/**
 * Why an object of one of our API groups has no rules here, with a "did you mean", or undefined when the group
 * is not ours (another kind, skipped). Kinds and versions are compared as written: Kubernetes is case-sensitive.
 */
export function unknownKind(apiVersion: string, kind: string): string | undefined {
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const routes = [...allRoutes().values()].filter((r) => r.group === group);
  if (routes.length === 0) return undefined;
  const versions = routes.filter((r) => r.kind === kind).map((r) => r.version);
  if (versions.length > 0) {
    const suggested = [...new Set(versions)].sort(byPreference)[0] as string;
    return `${apiVersion} is not a version of ${kind} this webhook knows; did you mean ${group}/${suggested}?`;
  }
  const kinds = [...new Set(routes.map((r) => r.kind))];
  const nearest = kinds.map((k) => ({ k, d: distance(k.toLowerCase(), kind.toLowerCase()) })).sort((x, y) => x.d - y.d)[0];
  const hint = nearest !== undefined && nearest.d <= 3 ? `; did you mean ${nearest.k}?` : `; the kinds are ${kinds.join(', ')}`;
  return `${kind} is not a kind of ${group}${hint}`;
}
