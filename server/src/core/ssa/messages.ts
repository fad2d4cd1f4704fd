// The API server's words for the 409s, reproduced character for character:
// - field paths: structured-merge-diff fieldpath/element.go PathElement.String, value.ToString;
// - manager names: k8s.io/apimachinery pkg/util/managedfields/internal/conflict.go printManager;
// - the apply conflict message: conflict.go getConflictMessage;
// - AlreadyExists / optimistic lock / uid mismatch: apimachinery pkg/api/errors/errors.go
//   NewAlreadyExists, NewConflict, registry/generic/registry/store.go OptimisticLockErrorMsg,
//   apiserver pkg/endpoints/handlers/patch.go (uid mismatch).
import type { JsonValue } from '../json';
import { formatPath, goQuote, type FieldPath } from './path';
import { compareGoStrings, goJson } from './field-set';

/** Who owns a field, as the server tells managers apart (managedfields.go BuildManagerIdentifier). */
export interface ManagerIdentity {
  readonly manager: string;
  readonly operation: 'Apply' | 'Update';
  /** Part of the identity for Update entries only. */
  readonly apiVersion?: string;
  readonly subresource?: string;
}

/** The server-side identifier string: JSON of the entry without time and fields. */
export function managerIdentifier(m: ManagerIdentity): string {
  const parts = [`"manager":${goJson(m.manager)}`, `"operation":${goJson(m.operation)}`];
  if (m.operation === 'Update' && m.apiVersion) parts.push(`"apiVersion":${goJson(m.apiVersion)}`);
  if (m.subresource) parts.push(`"subresource":${goJson(m.subresource)}`);
  return `{${parts.join(',')}}`;
}

/** `"kubectl"`, `"kubectl-edit" using apps/v1`, `"kube-controller-manager" with subresource "scale" using apps/v1`. */
export function describeManager(m: ManagerIdentity): string {
  let s = goQuote(m.manager);
  if (m.subresource) s += ` with subresource ${goQuote(m.subresource)}`;
  if (m.operation === 'Update') s += ` using ${m.apiVersion ?? ''}`;
  return s;
}

/** `.spec.template.spec.containers[name="app"].ports[containerPort=80,protocol="TCP"]`: path.ts prints it as the server does. */
export function formatServerPath(path: FieldPath): string {
  return formatPath(path);
}

// ---------------------------------------------------------------------------------------------
// Whole messages

/** One `details.causes[]` entry of the server's Status, predicted here or read from a dry run. */
export interface ConflictCause {
  /** `FieldManagerConflict` for ownership conflicts, `FieldValueInvalid` for a refused value. */
  readonly reason: string;
  /** `conflict with "kubectl-edit" using apps/v1` */
  readonly message: string;
  /** `.spec.replicas`, `.spec.template.spec.containers[name="app"].image`, `metadata.uid` */
  readonly field: string;
}

/** One `details.causes[]` entry per (manager, path). */
export function conflictCauses(conflicts: readonly { manager: ManagerIdentity; path: FieldPath }[]): ConflictCause[] {
  return conflicts.map((c) => ({
    reason: 'FieldManagerConflict',
    message: `conflict with ${describeManager(c.manager)}`,
    field: formatServerPath(c.path),
  }));
}

/**
 * `Apply failed with N conflicts: ...`. Managers are sorted by their identifier string as the
 * server sorts them; paths keep the given order (the server's set order within one manager).
 */
export function applyConflictMessage(conflicts: readonly { manager: ManagerIdentity; path: FieldPath }[]): string {
  if (conflicts.length === 1) {
    const only = conflicts[0] as { manager: ManagerIdentity; path: FieldPath };
    return `Apply failed with 1 conflict: conflict with ${describeManager(only.manager)}: ${formatServerPath(only.path)}`;
  }
  const groups = new Map<string, { manager: ManagerIdentity; paths: FieldPath[] }>();
  for (const c of conflicts) {
    const id = managerIdentifier(c.manager);
    const g = groups.get(id) ?? { manager: c.manager, paths: [] };
    g.paths.push(c.path);
    groups.set(id, g);
  }
  const lines: string[] = [];
  for (const id of [...groups.keys()].sort(compareGoStrings)) {
    const g = groups.get(id) as { manager: ManagerIdentity; paths: FieldPath[] };
    lines.push(`conflicts with ${describeManager(g.manager)}:`);
    for (const p of g.paths) lines.push(`- ${formatServerPath(p)}`);
  }
  return `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
}

/** `deployments.apps`, or just `configmaps` for the core group (schema.GroupResource.String). */
export function qualifiedResource(resource: { readonly group: string; readonly resource: string }): string {
  return resource.group === '' ? resource.resource : `${resource.resource}.${resource.group}`;
}

/**
 * The server's 403 for a request its authorizer refused (apiserver responsewriters.forbiddenMessage
 * inside errors.NewForbidden): `deployments.apps "web" is forbidden: User "dev" cannot patch resource
 * "deployments" in API group "apps" in the namespace "prod"`. No name for a request that names no
 * object (a create POSTed to the collection); `at the cluster scope` for a cluster-scoped kind; a
 * subresource joins the resource (`deployments/scale`), never the qualified resource before it.
 */
export function forbiddenMessage(request: {
  readonly verb: string;
  readonly group: string;
  readonly resource: string;
  readonly subresource?: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly user: string;
  readonly reason?: string;
}): string {
  const { verb, group, resource, subresource, namespace, name, user, reason } = request;
  const what = subresource ? `${resource}/${subresource}` : resource;
  const where = namespace ? `in the namespace ${goQuote(namespace)}` : 'at the cluster scope';
  const said = `User ${goQuote(user)} cannot ${verb} resource ${goQuote(what)} in API group ${goQuote(group)} ${where}${reason ? `: ${reason}` : ''}`;
  const qualified = qualifiedResource({ group, resource });
  return name ? `${qualified} ${goQuote(name)} is forbidden: ${said}` : `${qualified} is forbidden: ${said}`;
}

export function alreadyExistsMessage(resource: { group: string; resource: string }, name: string): string {
  return `${qualifiedResource(resource)} ${goQuote(name)} already exists`;
}

export const OPTIMISTIC_LOCK_MESSAGE =
  'the object has been modified; please apply your changes to the latest version and try again';

export function optimisticLockMessage(resource: { group: string; resource: string }, name: string): string {
  return `Operation cannot be fulfilled on ${qualifiedResource(resource)} ${goQuote(name)}: ${OPTIMISTIC_LOCK_MESSAGE}`;
}

/** errors.NewInvalid: `Deployment.apps "web" is invalid: <field errors>` (schema.GroupKind.String). */
export function invalidMessage(kind: string, group: string, name: string, fieldErrors: string): string {
  return `${group === '' ? kind : `${kind}.${group}`} ${goQuote(name)} is invalid: ${fieldErrors}`;
}

export function uidMismatchMessage(resource: { group: string; resource: string }, name: string, uid: string): string {
  return `Operation cannot be fulfilled on ${qualifiedResource(resource)} ${goQuote(name)}: uid mismatch: the provided object specified uid ${uid}, and no existing object was found`;
}

// ---------------------------------------------------------------------------------------------
// Refusals before ownership (a 400 or a 500, not a 409), in the server's words

/**
 * A decoded JSON value as Go's fmt prints the structured-merge-diff value that holds it
 * (value.valueUnstructured): `%v` gives `&{true}`, `%#v` `&value.valueUnstructured{Value:true}`,
 * `%T` of the plain value `bool`. Integral numbers are int64 after decoding, others float64.
 */
export function goValueV(v: JsonValue): string {
  return `&{${goPlain(v, false)}}`;
}

export function goValueSharpV(v: JsonValue): string {
  return `&value.valueUnstructured{Value:${goPlain(v, true)}}`;
}

export function goTypeName(v: JsonValue): string {
  if (v === null) return '<nil>';
  if (Array.isArray(v)) return '[]interface {}';
  if (typeof v === 'object') return 'map[string]interface {}';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int64' : 'float64';
  return typeof v === 'boolean' ? 'bool' : 'string';
}

function goNumber(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 2 ** 63) return BigInt(n).toString();
  // float64 in %v / %#v: strconv 'g', shortest digits, an exponent below 1e-4 and from 1e6 on.
  const exp = Math.floor(Math.log10(Math.abs(n)));
  if (exp < -4 || exp >= 6) return n.toExponential().replace(/e([+-])(\d)$/, 'e$10$2');
  return String(n);
}

/** `%v` (sharp false) or `%#v` (sharp true) of the interface{} the decoder produced. */
function goPlain(v: JsonValue, sharp: boolean): string {
  if (v === null) return sharp ? 'interface {}(nil)' : '<nil>';
  if (typeof v === 'boolean') return String(v);
  if (typeof v === 'number') return goNumber(v);
  if (typeof v === 'string') return sharp ? goQuote(v) : v;
  if (Array.isArray(v)) {
    const items = v.map((x) => goPlain(x, sharp));
    return sharp ? `[]interface {}{${items.join(', ')}}` : `[${items.join(' ')}]`;
  }
  // fmt prints map keys sorted.
  const keys = Object.keys(v).sort(compareGoStrings);
  if (sharp)
    return `map[string]interface {}{${keys.map((k) => `${goQuote(k)}:${goPlain(v[k] as JsonValue, true)}`).join(', ')}}`;
  return `map[${keys.map((k) => `${k}:${goPlain(v[k] as JsonValue, false)}`).join(' ')}]`;
}

/** typed/helpers.go ValidationErrors.Error: one error alone, several under `errors:`. */
export function validationErrorsMessage(errors: readonly { path: FieldPath; message: string }[]): string {
  const one = (e: { path: FieldPath; message: string }) =>
    e.path.length === 0 ? e.message : `${formatServerPath(e.path)}: ${e.message}`;
  if (errors.length === 1) return one(errors[0]!);
  return ['errors:', ...errors.map((e) => `  ${one(e)}`)].join('\n');
}

/**
 * structuredmerge.go Apply: the applied configuration cannot be typed, a 500 naming the object
 * as `namespace/name; group/version, Kind=Kind` (objectGVKNN).
 */
export function typedPatchRefusalMessage(
  config: { apiVersion?: JsonValue; kind?: JsonValue; metadata?: JsonValue },
  errors: readonly { path: FieldPath; message: string }[],
): string {
  const meta =
    config.metadata !== null && typeof config.metadata === 'object' && !Array.isArray(config.metadata)
      ? config.metadata
      : {};
  const str = (v: JsonValue | undefined) => (typeof v === 'string' ? v : '');
  // schema.GroupVersionKind.String: `group/version, Kind=kind`, so `/v1` for the core group.
  const apiVersion = str(config.apiVersion);
  const object = `${str(meta.namespace)}/${str(meta.name)}; ${apiVersion.includes('/') ? apiVersion : `/${apiVersion}`}, Kind=${str(config.kind)}`;
  return `failed to create typed patch object (${object}): ${validationErrorsMessage(errors)}`;
}
