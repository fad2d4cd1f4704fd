// What an edit must do to the object, computed on the JSON value alone: the check every planned
// text edit passes before it is offered. The text edits are planned on the node tree; this side
// never looks at it, so an edit that would also change an aliased copy, reveal a duplicate key or
// break the YAML is caught by comparing the re-read text with these values.
import { isJsonObject, jsonAt, jsonEqual, type JsonObject, type JsonValue } from '../json';
import type { LocateOptions } from './manifest';
import type { FieldPath } from '../ssa/path';

/** Where a path points inside a JSON value: object keys and array indexes. */
export type JsonAddress = readonly (string | number)[];

/** Resolves a field path as locate() does on the node tree (key fields may take schema defaults). */
export function addressOf(object: JsonValue, path: FieldPath, options: LocateOptions = {}): JsonAddress | undefined {
  const address: (string | number)[] = [];
  let value: JsonValue = object;
  for (let i = 0; i < path.length; i++) {
    const element = path[i]!;
    if (element.kind === 'field') {
      if (!isJsonObject(value) || !Object.prototype.hasOwnProperty.call(value, element.name)) return undefined;
      address.push(element.name);
      value = value[element.name]!;
      continue;
    }
    if (!Array.isArray(value)) return undefined;
    let at: number;
    if (element.kind === 'index') at = element.index < value.length ? element.index : -1;
    else if (element.kind === 'value') at = value.findIndex((v) => jsonEqual(v, element.value));
    else {
      const listPath = path.slice(0, i);
      at = value.findIndex(
        (item) =>
          isJsonObject(item) &&
          Object.entries(element.fields).every(([name, want]) => {
            const have = Object.prototype.hasOwnProperty.call(item, name)
              ? item[name]
              : options.keyFieldDefault?.(listPath, name);
            return have !== undefined && jsonEqual(have, want);
          }),
      );
    }
    if (at < 0) return undefined;
    address.push(at);
    value = value[at]!;
  }
  return address;
}

/** A deep copy that shares nothing (aliased YAML nodes share their JSON value in the manifest model). */
export function cloneJson<T extends JsonValue>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

function compareAddresses(a: JsonAddress, b: JsonAddress): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x === y) continue;
    if (typeof x === 'number' && typeof y === 'number') return x - y;
    return String(x) < String(y) ? -1 : 1;
  }
  return a.length - b.length;
}

function isPrefix(prefix: JsonAddress, of: JsonAddress): boolean {
  return prefix.length <= of.length && prefix.every((p, i) => p === of[i]);
}

function deleteChild(container: JsonValue, step: string | number): void {
  if (typeof step === 'number' && Array.isArray(container)) container.splice(step, 1);
  else if (typeof step === 'string' && isJsonObject(container)) delete (container as JsonObject)[step];
}

function isEmptyCollection(value: JsonValue | undefined): boolean {
  return Array.isArray(value) ? value.length === 0 : isJsonObject(value) && Object.keys(value).length === 0;
}

/**
 * The object without the fields at `addresses`, and without the maps and lists that are left empty
 * by that, up to (never including) the root and the addresses `keep` protects.
 */
export function withoutFields(
  object: JsonObject,
  addresses: readonly JsonAddress[],
  keep: (address: JsonAddress) => boolean,
): JsonObject {
  const result = cloneJson(object);
  // Deepest and last first, so an index still points at its item when a list loses several.
  // An address inside another one goes with it.
  const outermost = addresses.filter(
    (a, i) => !addresses.some((b, j) => j !== i && isPrefix(b, a) && (b.length < a.length || j < i)),
  );
  const sorted = [...outermost].sort(compareAddresses).reverse();
  for (const address of sorted) {
    if (address.length === 0) continue;
    let at = address;
    for (;;) {
      const container = jsonAt(result, at.slice(0, -1));
      if (container === undefined) break;
      deleteChild(container, at.at(-1)!);
      const parent = at.slice(0, -1);
      if (parent.length === 0 || keep(parent) || !isEmptyCollection(container)) break;
      at = parent;
    }
  }
  return result;
}

/** The object with `value` at `address` (which exists). */
export function withValue(object: JsonObject, address: JsonAddress, value: JsonValue): JsonObject {
  const result = cloneJson(object);
  const container = jsonAt(result, address.slice(0, -1));
  const step = address.at(-1);
  if (typeof step === 'number' && Array.isArray(container)) container[step] = cloneJson(value);
  else if (typeof step === 'string' && isJsonObject(container)) {
    Object.defineProperty(container, step, {
      value: cloneJson(value),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return result;
}
