// Where a finding is shown: the range of the text that writes a field, or of its nearest written
// ancestor, with the schema's help for list items whose keys are left to their defaults.
import {
  firstCharacter,
  locate,
  locateScalarInText,
  type LocateOptions,
  type ManifestResource,
  type Range,
} from '../manifest/manifest';
import type { FieldPath } from '../ssa/path';
import { fieldType, resolveType, rootTypeFor, type SchemaModel, type TypeRef } from '../ssa/schema';

/** Where a field is written: its key, its value, and the kind of node the value is. */
export interface FieldRange {
  readonly key: Range;
  readonly value: Range;
  readonly node?: string;
}

/** Where a path is written, or the nearest written ancestor: key range, value range, node kind. */
export function rangeFor(resource: ManifestResource, path: FieldPath, schema: SchemaModel | undefined): FieldRange {
  // Most findings sit on a key written on one line with its value (an object's name): placed
  // from the text, the document needs no node tree.
  const options = locateOptions(resource, schema);
  const written = locateScalarInText(resource, path, options);
  if (written) return { key: written.keyRange, value: written.valueRange, node: 'scalar' };
  for (let n = path.length; n >= 0; n--) {
    const loc = locate(resource, path.slice(0, n), options);
    if (loc) {
      // The root's "key" would be the whole document; point at its first line instead.
      if (n === 0) return { key: firstCharacter(resource.range), value: firstCharacter(resource.range) };
      return n === path.length
        ? { key: loc.keyRange, value: loc.valueRange, node: loc.node.kind }
        : { key: loc.keyRange, value: loc.keyRange };
    }
  }
  return { key: firstCharacter(resource.range), value: firstCharacter(resource.range) };
}

/** The schema tells which key fields an item may leave to their default (a port's protocol). */
export function locateOptions(resource: ManifestResource, schema: SchemaModel | undefined): LocateOptions {
  if (!schema) return {};
  const root = rootTypeFor(schema, resource.apiVersion, resource.kind);
  if (!root) return {};
  return {
    keyFieldDefault: (listPath, fieldName) => {
      const list = typeAt(schema, root, listPath);
      const item = list?.list ? resolveType(schema, list.list.elementType) : undefined;
      return item?.map?.fields[fieldName]?.default;
    },
  };
}

function typeAt(schema: SchemaModel, root: TypeRef, path: FieldPath) {
  let atom = resolveType(schema, root);
  for (const el of path) {
    if (!atom) return undefined;
    if (el.kind === 'field') {
      const t = atom.map ? fieldType(atom.map, el.name) : undefined;
      atom = t ? resolveType(schema, t) : undefined;
    } else {
      atom = atom.list ? resolveType(schema, atom.list.elementType) : undefined;
    }
  }
  return atom;
}

/** `metadata.<name>`, as a field path. */
export const metadataPath = (name: string): FieldPath => [
  { kind: 'field', name: 'metadata' },
  { kind: 'field', name },
];
