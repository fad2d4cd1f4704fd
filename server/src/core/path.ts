import type { JsonValue } from './json';

/**
 * One step of a field path, as structured-merge-diff's fieldpath.PathElement
 * (fieldpath/element.go): exactly one of a struct field / map key, the key fields of an item of an
 * associative list (x-kubernetes-list-type: map), the value of a set item (list-type: set), or
 * a list index.
 */
export type PathElement =
  | { readonly kind: 'field'; readonly name: string }
  | { readonly kind: 'key'; readonly fields: Readonly<Record<string, JsonValue>> }
  | { readonly kind: 'value'; readonly value: JsonValue }
  | { readonly kind: 'index'; readonly index: number };

export type FieldPath = readonly PathElement[];

export const field = (name: string): PathElement => ({ kind: 'field', name });
export const key = (fields: Record<string, JsonValue>): PathElement => ({ kind: 'key', fields });
export const setValue = (value: JsonValue): PathElement => ({ kind: 'value', value });
export const index = (i: number): PathElement => ({ kind: 'index', index: i });
