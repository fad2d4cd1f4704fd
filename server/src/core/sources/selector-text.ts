// A label selector written as text (`app=web,tier!=db`, `env in (prod,staging)`, `!canary`), as
// Kustomize's patch targets and Flux's ignore-rule targets take it, matched against a label or
// annotation map the way apimachinery's labels.Parse and Selector.Matches do: every requirement must
// hold; `!=` and `notin` hold for a key that is absent. A selector that does not parse selects nothing.
import { isJsonObject, type JsonValue } from '../json';

export function matchesSelectorText(selector: string, map: JsonValue | undefined): boolean {
  const m = isJsonObject(map) ? map : {};
  const value = (key: string) => (typeof m[key] === 'string' ? (m[key] as string) : undefined);
  const terms = splitTerms(selector);
  if (terms === undefined) return false;
  return terms.every((term) => {
    const set = /^(\S+)\s+(in|notin)\s*\(([^()]*)\)$/.exec(term);
    if (set) {
      const values = set[3]!.split(',').map((v) => v.trim());
      const v = value(set[1]!);
      return set[2] === 'in' ? v !== undefined && values.includes(v) : v === undefined || !values.includes(v);
    }
    const ne = /^([^!=\s]+)\s*!=\s*(.*)$/.exec(term);
    if (ne) return value(ne[1]!) !== ne[2]!.trim();
    const eq = /^([^!=\s]+)\s*==?\s*(.*)$/.exec(term);
    if (eq) return value(eq[1]!) === eq[2]!.trim();
    if (term.startsWith('!')) return !(term.slice(1).trim() in m);
    return term in m;
  });
}

/** The comma-separated requirements, commas inside `( … )` kept; undefined when the brackets do not pair. */
function splitTerms(selector: string): string[] | undefined {
  const out: string[] = [];
  let depth = 0;
  let current = '';
  for (const c of selector) {
    if (c === '(') depth++;
    if (c === ')') depth--;
    if (depth < 0) return undefined;
    if (c === ',' && depth === 0) {
      out.push(current);
      current = '';
    } else current += c;
  }
  if (depth !== 0) return undefined;
  out.push(current);
  return out.map((t) => t.trim()).filter(Boolean);
}
