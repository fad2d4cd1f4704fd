// What a write took from each field manager, read from the server's own managedFields before and
// after it: the oracle of the force preview's takeover list. Written here, independent of the
// product's FieldsV1 code, with paths printed as the server prints them (`.spec.replicas`,
// `.spec.template.spec.containers[name="app"].image`).

export interface FieldsV1 {
  [element: string]: FieldsV1;
}

export interface ManagedEntryLike {
  manager: string;
  operation: 'Apply' | 'Update' | string;
  apiVersion?: string;
  subresource?: string;
  fieldsV1?: FieldsV1;
}

/** One FieldsV1 element as a path step. */
function element(key: string): string {
  const rest = key.slice(2);
  switch (key.slice(0, 2)) {
    case 'f:':
      return `.${rest}`;
    case 'k:':
      return `[${Object.entries(JSON.parse(rest) as Record<string, unknown>)
        .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
        .join(',')}]`;
    case 'v:':
      return `[=${JSON.stringify(JSON.parse(rest))}]`;
    case 'i:':
      return `[${rest}]`;
    default:
      throw new Error(`unknown FieldsV1 element ${key}`);
  }
}

/** Every path an entry owns: the leaves, and the nodes marked with `.`. */
export function ownedPaths(node: FieldsV1 | undefined, prefix = ''): string[] {
  return Object.entries(node ?? {}).flatMap(([key, child]) => {
    if (key === '.') return [prefix];
    const p = prefix + element(key);
    return Object.keys(child).length === 0 ? [p] : ownedPaths(child, p);
  });
}

/** A manager as the server tells them apart (an Update's apiVersion is part of it). */
export function managerKey(e: {
  manager: string;
  operation: string;
  subresource?: string;
  apiVersion?: string;
}): string {
  return JSON.stringify([
    e.manager,
    e.operation,
    e.subresource ?? '',
    e.operation === 'Update' ? (e.apiVersion ?? '') : '',
  ]);
}

/** Per manager other than the applier: the paths it owned before and no longer owns after, sorted. */
export function takenFrom(
  before: readonly ManagedEntryLike[],
  after: readonly ManagedEntryLike[],
  applier: string,
): Map<string, string[]> {
  const kept = new Map(after.map((e) => [managerKey(e), new Set(ownedPaths(e.fieldsV1))]));
  const taken = new Map<string, string[]>();
  for (const e of before) {
    if (e.manager === applier && e.operation === 'Apply') continue;
    const still = kept.get(managerKey(e)) ?? new Set<string>();
    const lost = ownedPaths(e.fieldsV1)
      .filter((p) => !still.has(p))
      .sort();
    if (lost.length > 0) taken.set(managerKey(e), lost);
  }
  return taken;
}
