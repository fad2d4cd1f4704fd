// What a controller's apply did, read off the objects the API server returned before and after it,
// with no product code: each managedFields entry's owned paths (FieldsV1 keys joined by `.`), and
// each leaf value that changed (a JSON walk, lists by index). The prediction is compared in the same
// terms (its managedFields encoded as FieldsV1, its object walked the same way).
import type { KubeObject } from '../support/seed';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** `manager operation [subresource]` → sorted owned paths. */
export function ownersOf(managedFields: readonly unknown[] | undefined): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const raw of managedFields ?? []) {
    const e = raw as { manager: string; operation: string; subresource?: string; fieldsV1?: Record<string, Json> };
    const key = `${e.manager} ${e.operation}${e.subresource ? ` /${e.subresource}` : ''}`;
    const paths: string[] = [];
    const walk = (node: Record<string, Json>, prefix: string[]): void => {
      for (const [k, child] of Object.entries(node)) {
        if (k === '.') {
          paths.push(prefix.join('.'));
          continue;
        }
        const sub = (child ?? {}) as Record<string, Json>;
        if (Object.keys(sub).length === 0) paths.push([...prefix, k].join('.'));
        else walk(sub, [...prefix, k]);
      }
    };
    walk(e.fieldsV1 ?? {}, []);
    if (paths.length > 0) out[key] = [...(out[key] ?? []), ...paths].sort();
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

const IGNORED = ['/metadata/managedFields', '/metadata/resourceVersion', '/metadata/generation', '/status'];

function leaves(value: Json | undefined, prefix = '', out = new Map<string, string>()): Map<string, string> {
  if (IGNORED.some((p) => prefix === p || prefix.startsWith(`${p}/`))) return out;
  if (Array.isArray(value)) {
    if (value.length === 0) out.set(prefix, '[]');
    value.forEach((v, i) => leaves(v, `${prefix}/${i}`, out));
  } else if (value !== null && typeof value === 'object') {
    if (Object.keys(value).length === 0) out.set(prefix, '{}');
    for (const [k, v] of Object.entries(value))
      leaves(v, `${prefix}/${k.replaceAll('~', '~0').replaceAll('/', '~1')}`, out);
  } else if (value !== undefined) out.set(prefix, JSON.stringify(value));
  return out;
}

/** Every leaf (JSON pointer) whose value differs between the two objects: `pointer: before → after`. */
export function valueChanges(before: KubeObject | Json | undefined, after: KubeObject | Json | undefined): string[] {
  const b = leaves(before as Json | undefined);
  const a = leaves(after as Json | undefined);
  const out: string[] = [];
  for (const k of new Set([...b.keys(), ...a.keys()])) {
    if (b.get(k) !== a.get(k)) out.push(`${k}: ${b.get(k) ?? '(none)'} → ${a.get(k) ?? '(none)'}`);
  }
  return out.sort();
}
