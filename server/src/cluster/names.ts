// The one place where request paths are built from names. A name goes into a URL only after it
// passed the check the API server itself would apply, so a manifest can never steer a request
// somewhere else: `encodeURIComponent` keeps `.` and `..`, and URL parsing then resolves them
// (`namespaces/../secrets` would become a cluster-wide list of Secrets).
//
// The rules are apimachinery's: every name that is a path segment may not be `.` or `..` nor
// contain `/` or `%` (apimachinery/pkg/api/validation/path, IsValidPathSegmentName); a namespace is
// an RFC 1123 label (ValidateNamespaceName); an object's name is what its kind's validation asks,
// an RFC 1123 subdomain for most kinds and every custom resource (NameIsDNSSubdomain).
import type { NamespaceOrigin } from '../core/manifest/manifest';
import type { ApiResourceInfo, ClusterProblem, ClusterResult } from './types';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

/**
 * Names of kinds whose validation asks only for a path segment are not limited in length by the
 * server; a URL is, in practice (proxies and servers refuse a request line of several KB).
 */
const MAX_PATH_SEGMENT_LENGTH = 1024;

export type NameRule = 'pathSegment' | 'dns1123Subdomain' | 'dns1123Label' | 'dns1035Label';

/**
 * Built-in kinds whose name is not an RFC 1123 subdomain, by `group/Kind` (core group: `/Kind`).
 * RBAC names may hold `:` (`system:controller:...`), a CSR may be called anything, an APIService
 * is `version.group`, an IPAddress may be an IPv6 address, Events are named by their clients.
 */
const NAME_RULES: Record<string, NameRule> = {
  '/Namespace': 'dns1123Label',
  '/Service': 'dns1035Label',
  '/Event': 'pathSegment',
  '/ComponentStatus': 'pathSegment',
  'events.k8s.io/Event': 'pathSegment',
  'rbac.authorization.k8s.io/Role': 'pathSegment',
  'rbac.authorization.k8s.io/ClusterRole': 'pathSegment',
  'rbac.authorization.k8s.io/RoleBinding': 'pathSegment',
  'rbac.authorization.k8s.io/ClusterRoleBinding': 'pathSegment',
  'certificates.k8s.io/CertificateSigningRequest': 'pathSegment',
  'apiregistration.k8s.io/APIService': 'pathSegment',
  'networking.k8s.io/IPAddress': 'pathSegment',
  'internal.apiserver.k8s.io/StorageVersion': 'pathSegment',
};

export function nameRule(group: string, kind: string): NameRule {
  return NAME_RULES[`${group}/${kind}`] ?? 'dns1123Subdomain';
}

/** Why the API server would refuse `value` as a name under `rule`; empty when it would not. */
export function nameProblems(value: string, rule: NameRule): string[] {
  if (value === '') return ['may not be empty'];
  const segment = pathSegmentProblems(value);
  // A name that is no path segment is also no DNS name; the path-segment words say why plainly.
  if (segment.length > 0) return segment;
  switch (rule) {
    case 'pathSegment':
      return value.length > MAX_PATH_SEGMENT_LENGTH
        ? [`must be no more than ${MAX_PATH_SEGMENT_LENGTH} characters`]
        : [];
    case 'dns1123Label':
      return dnsProblems(
        value,
        63,
        DNS1123_LABEL,
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
      );
    case 'dns1035Label':
      return dnsProblems(
        value,
        63,
        DNS1035_LABEL,
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
      );
    case 'dns1123Subdomain':
      return dnsProblems(
        value,
        253,
        DNS1123_SUBDOMAIN,
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
      );
  }
}

function pathSegmentProblems(value: string): string[] {
  const problems: string[] = [];
  if (value === '.' || value === '..') problems.push(`may not be '${value}'`);
  for (const forbidden of ['/', '%']) if (value.includes(forbidden)) problems.push(`may not contain '${forbidden}'`);
  return problems;
}

function dnsProblems(value: string, maxLength: number, pattern: RegExp, rule: string): string[] {
  const problems: string[] = [];
  if (value.length > maxLength) problems.push(`must be no more than ${maxLength} characters`);
  if (!pattern.test(value)) problems.push(rule);
  return problems;
}

function invalidName(
  field: 'metadata.name' | 'metadata.namespace',
  value: string,
  problems: string[],
  origin: NamespaceOrigin = 'manifest',
): ClusterProblem {
  const shown = JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
  const what =
    field === 'metadata.name'
      ? `metadata.name ${shown}`
      : origin === 'manifest'
        ? `metadata.namespace ${shown}`
        : `the default namespace ${shown} (from the namespace setting or the kubeconfig context)`;
  return {
    kind: 'invalidName',
    field,
    message: `${what} is not a name the API server accepts: ${problems.join('; ')}. The cluster is not asked about this object.`,
  };
}

/**
 * The path of a resource's collection (`/apis/apps/v1/namespaces/web/deployments`), or why it
 * cannot be built. Group, version and resource come from discovery; they are checked as well, so
 * that even an odd server's discovery document cannot make a path leave its place.
 */
export function collectionPath(
  resource: ApiResourceInfo,
  namespace: string,
  origin: NamespaceOrigin = 'manifest',
): ClusterResult<string> {
  const served = servedSegments(resource);
  if (!served.ok) return served;
  if (!resource.namespaced) return { ok: true, value: `${served.value}/${resource.resource}` };
  const problems = nameProblems(namespace, 'dns1123Label');
  if (problems.length > 0)
    return { ok: false, problem: invalidName('metadata.namespace', namespace, problems, origin) };
  return { ok: true, value: `${served.value}/namespaces/${encodeURIComponent(namespace)}/${resource.resource}` };
}

/** The collection of a kind in every namespace (`/apis/apps/v1/deployments`): a list across namespaces. */
export function allNamespacesPath(resource: ApiResourceInfo): ClusterResult<string> {
  const served = servedSegments(resource);
  return served.ok ? { ok: true, value: `${served.value}/${resource.resource}` } : served;
}

/** The path of one object, or why the API server would refuse its name or namespace. */
export function objectPath(
  resource: ApiResourceInfo,
  namespace: string,
  name: string,
  origin: NamespaceOrigin = 'manifest',
): ClusterResult<string> {
  const collection = collectionPath(resource, namespace, origin);
  if (!collection.ok) return collection;
  const problem = checkObjectName(resource, name);
  if (problem) return { ok: false, problem };
  return { ok: true, value: `${collection.value}/${encodeURIComponent(name)}` };
}

/** Why the API server would refuse `name` for this kind (undefined when it would accept it). */
export function checkObjectName(
  resource: Pick<ApiResourceInfo, 'group' | 'kind'>,
  name: string,
): ClusterProblem | undefined {
  const problems = nameProblems(name, nameRule(resource.group, resource.kind));
  return problems.length > 0 ? invalidName('metadata.name', name, problems) : undefined;
}

/** `/api/v1` or `/apis/apps/v1`, with the discovery-provided segments checked. */
function servedSegments(resource: ApiResourceInfo): ClusterResult<string> {
  const bad =
    (resource.group !== '' && nameProblems(resource.group, 'dns1123Subdomain').length > 0) ||
    nameProblems(resource.version, 'dns1123Label').length > 0 ||
    nameProblems(resource.resource, 'pathSegment').length > 0 ||
    encodeURIComponent(resource.resource) !== resource.resource;
  if (bad) {
    return {
      ok: false,
      problem: {
        kind: 'other',
        message: `The cluster's discovery names a resource that is not a valid URL path: ${JSON.stringify(`${resource.apiVersion} ${resource.resource}`)}.`,
      },
    };
  }
  return {
    ok: true,
    value: resource.group ? `/apis/${resource.group}/${resource.version}` : `/api/${resource.version}`,
  };
}

/**
 * A server-relative URL another response handed us (the OpenAPI index's `serverRelativeURL`):
 * accepted only as an absolute path under `prefix` without dot segments or escapes that could
 * turn into them, so it cannot point at another path of the server or at another host.
 */
export function checkServerRelativePath(path: string, prefix: string): boolean {
  if (!path.startsWith(prefix) || path.startsWith('//')) return false;
  if (/[\\%#?\s]/.test(path)) return false;
  return path.split('/').every((segment) => segment !== '.' && segment !== '..');
}

/**
 * The field selector of one object by name (`metadata.name=web`), for a LIST or WATCH of that object
 * alone; or why the API server would refuse the name, in which case nothing is requested. The value
 * is escaped as apimachinery's fields.EscapeValue escapes it (`\`, `,` and `=`, which only the names
 * of path-segment kinds can hold), so a name cannot add a selector of its own.
 */
export function nameSelector(resource: Pick<ApiResourceInfo, 'group' | 'kind'>, name: string): ClusterResult<string> {
  const problem = checkObjectName(resource, name);
  if (problem) return { ok: false, problem };
  return { ok: true, value: `metadata.name=${name.replace(/[\\,=]/g, (c) => `\\${c}`)}` };
}
