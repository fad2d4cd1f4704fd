// metadata.managedFields as plain records: who owns which field set
// (k8s.io/apimachinery pkg/util/managedfields/internal/managedfields.go DecodeManagedFields).
import { isJsonObject, type JsonObject, type JsonValue } from '../json';
import { decodeFieldsV1, type FieldSet } from './field-set';
import { managerIdentifier, type ManagerIdentity } from './messages';

export interface ManagedFieldsEntry {
  readonly identity: ManagerIdentity;
  /** The apiVersion the set was recorded at (for Apply entries too, where it is not identity). */
  readonly apiVersion: string;
  readonly fields: FieldSet;
  readonly time?: string;
}

/**
 * Decodes managedFields. Entries the server would refuse (no apiVersion, unknown operation or
 * fieldsType) are reported and skipped; a later entry with the same identity replaces an earlier
 * one, as the server's map does.
 */
export function decodeManagedFields(managedFields: JsonValue | undefined): {
  entries: ManagedFieldsEntry[];
  problems: string[];
} {
  const problems: string[] = [];
  const byId = new Map<string, ManagedFieldsEntry>();
  if (!Array.isArray(managedFields)) return { entries: [], problems };
  managedFields.forEach((raw, i) => {
    if (!isJsonObject(raw)) return void problems.push(`managedFields[${i}] is not an object`);
    const operation = raw.operation;
    if (operation !== 'Apply' && operation !== 'Update')
      return void problems.push(`managedFields[${i}]: operation must be \`Apply\` or \`Update\``);
    if (typeof raw.apiVersion !== 'string' || raw.apiVersion === '')
      return void problems.push(`managedFields[${i}]: apiVersion must not be empty`);
    if (raw.fieldsType !== 'FieldsV1') return void problems.push(`managedFields[${i}]: fieldsType must be FieldsV1`);
    const identity: ManagerIdentity = {
      manager: typeof raw.manager === 'string' ? raw.manager : '',
      operation,
      ...(operation === 'Update' ? { apiVersion: raw.apiVersion } : {}),
      ...(typeof raw.subresource === 'string' && raw.subresource !== '' ? { subresource: raw.subresource } : {}),
    };
    const entry: ManagedFieldsEntry = {
      identity,
      apiVersion: raw.apiVersion,
      fields: decodedFieldsV1(raw.fieldsV1),
      ...(typeof raw.time === 'string' ? { time: raw.time } : {}),
    };
    byId.set(managerIdentifier(identity), entry);
  });
  return { entries: [...byId.values()], problems };
}

/**
 * A FieldsV1 object decoded once per text. Managers write the same field names into every object
 * they manage alike (`f:metadata`, `k:{"name":"app"}`; values are not in it), and the editor judges
 * the same live objects again on every keystroke: the sets are never changed once made, so one
 * decoded set is shared by every entry of the same text, and what is worked out from a set
 * (predict.ts: reconciled with a schema, named fields made members) is kept with it.
 */
const decodedSets = new Map<string, FieldSet>();
const decodedSetsLimit = 512;
/** The same entry read again (the force preview, the editor's next judgement): not even printed to find its set. */
const decodedEntries = new WeakMap<JsonObject, FieldSet>();

function decodedFieldsV1(fieldsV1: JsonValue | undefined): FieldSet {
  if (!isJsonObject(fieldsV1)) return decodeFieldsV1(fieldsV1);
  const seen = decodedEntries.get(fieldsV1);
  if (seen) return seen;
  const text = JSON.stringify(fieldsV1);
  let set = decodedSets.get(text);
  if (!set) {
    set = decodeFieldsV1(fieldsV1);
    if (decodedSets.size >= decodedSetsLimit) decodedSets.clear();
    decodedSets.set(text, set);
  }
  decodedEntries.set(fieldsV1, set);
  return set;
}
