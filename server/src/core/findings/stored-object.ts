// The API server's built-in validation of the object a request would store, for the few checks a
// merge commonly breaks: a server-side apply keeps the live object's fields that no manager gives
// up, so the manifest and the live object are each valid and their merge is not. Each check
// follows one function of k8s.io/kubernetes (v1.34) and gives the server's cause word for word:
//   - pkg/apis/core/validation/validation.go validateEnvVarValueFrom (called by ValidateEnv): an
//     env var with both `value` and `valueFrom`;
//   - pkg/apis/apps/validation/validation.go ValidatePodTemplateSpecForReplicaSet (Deployment,
//     ReplicaSet), ValidatePodTemplateSpecForStatefulSet, ValidateDaemonSetSpec, and core's
//     ValidatePodTemplateSpecForRC: a selector that does not match the template's labels;
//   - validateContainers and validateInitContainers: two containers with one name;
//   - validateContainerPorts: two ports of one container with one name;
//   - validateResourceRequirements: a request above its limit (cpu, memory, ephemeral-storage).
// The field errors print as k8s.io/apimachinery pkg/util/validation/field errors.go ErrorBody does.
// Pure: the object is handed in; the analysis (analysis.ts) picks it and words the findings.
import { isJsonObject, type JsonObject, type JsonValue } from '../json';
import { goQuote, type FieldPath, type PathElement } from '../ssa/path';
import { canonicalQuantity, compareQuantities, parseQuantity } from './quantity';

/** One cause of the server's 422, with where it comes from. */
export interface StoredViolation {
  /** The field as the server names it (`details.causes[].field`): `spec.template.spec.containers[0].env[2].valueFrom`. */
  readonly serverField: string;
  /** What the server says of it: `Invalid value: "": may not be specified when \`value\` is not empty`. */
  readonly body: string;
  /** The field in the product's notation (list items by their keys), where the finding is about. */
  readonly path: FieldPath;
  /** The fields that make the violation, the most telling first: the finding goes to the first one the manifest writes. */
  readonly places: readonly FieldPath[];
  /** The Kubernetes validation function the check follows. */
  readonly follows: string;
  /** What is wrong, for the user. */
  readonly what: string;
}

/** Where the pod spec of each kind is, by group and kind (the kinds whose validation checks a pod spec). */
const podSpecAt: Readonly<Record<string, readonly string[]>> = {
  '/Pod': ['spec'],
  '/PodTemplate': ['template', 'spec'],
  '/ReplicationController': ['spec', 'template', 'spec'],
  'apps/Deployment': ['spec', 'template', 'spec'],
  'apps/ReplicaSet': ['spec', 'template', 'spec'],
  'apps/StatefulSet': ['spec', 'template', 'spec'],
  'apps/DaemonSet': ['spec', 'template', 'spec'],
  'batch/Job': ['spec', 'template', 'spec'],
  'batch/CronJob': ['spec', 'jobTemplate', 'spec', 'template', 'spec'],
};

/** The kinds whose selector must match the template's labels, and how their selector is written. */
const selectorKinds: Readonly<Record<string, { follows: string; map: boolean }>> = {
  'apps/Deployment': { follows: 'ValidatePodTemplateSpecForReplicaSet', map: false },
  'apps/ReplicaSet': { follows: 'ValidatePodTemplateSpecForReplicaSet', map: false },
  'apps/StatefulSet': { follows: 'ValidatePodTemplateSpecForStatefulSet', map: false },
  'apps/DaemonSet': { follows: 'ValidateDaemonSetSpec', map: false },
  '/ReplicationController': { follows: 'ValidatePodTemplateSpecForRC', map: true },
};

/** The group of an apiVersion (`apps/v1` → `apps`, `v1` → ''). */
export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/** Where the pod spec of a kind is, when its validation checks one. */
export function podSpecPath(apiVersion: string, kind: string): readonly string[] | undefined {
  return podSpecAt[`${groupOf(apiVersion)}/${kind}`];
}

/** The checks that fail on `stored`, an object of `apiVersion`/`kind` as the request would store it. */
export function storedObjectViolations(apiVersion: string, kind: string, stored: JsonObject): StoredViolation[] {
  const gk = `${groupOf(apiVersion)}/${kind}`;
  const specAt = podSpecAt[gk];
  if (!specAt) return [];
  const out: StoredViolation[] = [];
  const selector = selectorKinds[gk];
  if (selector) out.push(...selectorMismatch(stored, selector.map, selector.follows));
  const spec = at(stored, specAt);
  if (isJsonObject(spec)) out.push(...podSpecViolations(spec, specAt));
  return out;
}

// ---------------------------------------------------------------------------------------------
// The selector and the template's labels

function selectorMismatch(stored: JsonObject, isMap: boolean, follows: string): StoredViolation[] {
  const spec = isJsonObject(stored.spec) ? stored.spec : undefined;
  const template = spec && isJsonObject(spec.template) ? spec.template : undefined;
  if (!spec || !template) return [];
  const meta = isJsonObject(template.metadata) ? template.metadata : {};
  const labels = meta.labels;
  if (labels !== undefined && labels !== null && !isStringMap(labels)) return [];
  const labelSet: Record<string, string> = isStringMap(labels) ? labels : {};
  const matches = isMap ? mapSelectorMatches(spec.selector, labelSet) : labelSelectorMatches(spec.selector, labelSet);
  // An empty selector, or one the server calls invalid for another reason: not this check.
  if (matches !== false) return [];
  const labelsPath = ['spec', 'template', 'metadata', 'labels'];
  return [
    {
      serverField: labelsPath.join('.'),
      body: `Invalid value: ${isStringMap(labels) ? goJsonStringMap(labels) : 'null'}: \`selector\` does not match template \`labels\``,
      path: fields(labelsPath),
      places: [fields(labelsPath), fields(['spec', 'selector'])],
      follows,
      what: "the selector does not match the pod template's labels",
    },
  ];
}

/** A ReplicationController's map selector: undefined when empty (the server defaults it to the template's labels). */
function mapSelectorMatches(selector: JsonValue | undefined, labels: Record<string, string>): boolean | undefined {
  if (!isStringMap(selector) || Object.keys(selector).length === 0) return undefined;
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

/** metav1.LabelSelectorAsSelector, then Matches: undefined for an empty or malformed selector. */
function labelSelectorMatches(selector: JsonValue | undefined, labels: Record<string, string>): boolean | undefined {
  if (!isJsonObject(selector)) return undefined;
  const matchLabels = selector.matchLabels ?? {};
  const expressions = selector.matchExpressions ?? [];
  if (!isStringMap(matchLabels) || !Array.isArray(expressions)) return undefined;
  if (Object.keys(matchLabels).length + expressions.length === 0) return undefined;
  let matches = Object.entries(matchLabels).every(([k, v]) => labels[k] === v);
  for (const e of expressions) {
    if (!isJsonObject(e) || typeof e.key !== 'string') return undefined;
    const values = e.values ?? [];
    if (!Array.isArray(values) || !values.every((v) => typeof v === 'string')) return undefined;
    const has = Object.hasOwn(labels, e.key);
    switch (e.operator) {
      case 'In':
        if (values.length === 0) return undefined;
        matches &&= has && values.includes(labels[e.key]!);
        break;
      case 'NotIn':
        if (values.length === 0) return undefined;
        matches &&= !has || !values.includes(labels[e.key]!);
        break;
      case 'Exists':
        if (values.length > 0) return undefined;
        matches &&= has;
        break;
      case 'DoesNotExist':
        if (values.length > 0) return undefined;
        matches &&= !has;
        break;
      default:
        return undefined;
    }
  }
  return matches;
}

// ---------------------------------------------------------------------------------------------
// The pod spec

function podSpecViolations(spec: JsonObject, specAt: readonly string[]): StoredViolation[] {
  const out: StoredViolation[] = [];
  const lists = ['containers', 'initContainers'] as const;
  const regular = containerList(spec.containers);
  // validateContainers: names unique among the regular containers.
  const seen = new Set<string>();
  regular.forEach((c, i) => {
    const name = typeof c.name === 'string' ? c.name : '';
    if (seen.has(name)) out.push(duplicateContainer(specAt, 'containers', i, name, 'containers', 'validateContainers'));
    else seen.add(name);
  });
  // validateInitContainers: an init container's name unique among the regular and init containers.
  const all = new Set(regular.map((c) => (typeof c.name === 'string' ? c.name : '')));
  const regularNames = new Set(all);
  containerList(spec.initContainers).forEach((c, i) => {
    const name = typeof c.name === 'string' ? c.name : '';
    if (all.has(name))
      out.push(
        duplicateContainer(
          specAt,
          'initContainers',
          i,
          name,
          regularNames.has(name) ? 'containers' : 'initContainers',
          'validateInitContainers',
        ),
      );
    else if (name !== '') all.add(name);
  });
  for (const list of lists) {
    containerList(spec[list]).forEach((c, i) => {
      const base = [...specAt, list];
      const item = containerElement(c, i);
      const index = `${base.join('.')}[${i}]`;
      const who = `${list === 'containers' ? 'container' : 'init container'} ${goQuote(String(c.name ?? ''))}`;
      out.push(...envViolations(c, [...fields(base), item], index, who));
      out.push(...portViolations(c, [...fields(base), item], index, who));
      out.push(...resourceViolations(c, [...fields(base), item], index, who));
    });
  }
  return out;
}

function duplicateContainer(
  specAt: readonly string[],
  list: 'containers' | 'initContainers',
  i: number,
  name: string,
  firstIn: 'containers' | 'initContainers',
  follows: string,
): StoredViolation {
  const item: FieldPath = [...fields([...specAt, list]), { kind: 'key', fields: { name } }];
  const first: FieldPath = [...fields([...specAt, firstIn]), { kind: 'key', fields: { name } }];
  return {
    serverField: `${[...specAt, list].join('.')}[${i}].name`,
    body: `Duplicate value: ${goQuote(name)}`,
    path: [...item, field('name')],
    places: [
      [...item, field('name')],
      [...first, field('name')],
    ],
    follows,
    what:
      firstIn === list
        ? `two ${list === 'containers' ? 'containers' : 'init containers'} are named ${goQuote(name)}`
        : `an init container and a container are both named ${goQuote(name)}`,
  };
}

/** validateEnvVarValueFrom: `valueFrom` with a source, beside a `value` that is not empty. */
function envViolations(c: JsonObject, container: FieldPath, index: string, who: string): StoredViolation[] {
  const out: StoredViolation[] = [];
  const env = Array.isArray(c.env) ? c.env : [];
  env.forEach((e, j) => {
    if (!isJsonObject(e) || !isJsonObject(e.valueFrom)) return;
    const from = e.valueFrom;
    const sources = ['fieldRef', 'resourceFieldRef', 'configMapKeyRef', 'secretKeyRef', 'fileKeyRef'].filter(
      (s) => from[s] !== undefined && from[s] !== null,
    );
    if (sources.length === 0 || typeof e.value !== 'string' || e.value === '') return;
    const item: FieldPath = [...container, field('env'), typeof e.name === 'string' ? key({ name: e.name }) : idx(j)];
    out.push({
      serverField: `${index}.env[${j}].valueFrom`,
      body: 'Invalid value: "": may not be specified when `value` is not empty',
      path: [...item, field('valueFrom')],
      places: [[...item, field('valueFrom')], [...item, field('value')], item],
      follows: 'validateEnvVarValueFrom',
      what: `env var ${goQuote(String(e.name ?? ''))} of ${who} would hold both value and valueFrom`,
    });
  });
  return out;
}

/** validateContainerPorts: a port name used twice in one container (the second is the duplicate). */
function portViolations(c: JsonObject, container: FieldPath, index: string, who: string): StoredViolation[] {
  const out: StoredViolation[] = [];
  const ports = Array.isArray(c.ports) ? c.ports : [];
  const names = new Map<string, FieldPath>();
  ports.forEach((p, j) => {
    if (!isJsonObject(p) || typeof p.name !== 'string' || p.name === '') return;
    // A name the server calls invalid for its own reasons is not this check.
    if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/.test(p.name) || p.name.length > 15 || !/[a-z]/.test(p.name)) return;
    if (p.name.includes('--')) return;
    const item: FieldPath = [
      ...container,
      field('ports'),
      typeof p.containerPort === 'number'
        ? key({ containerPort: p.containerPort, protocol: typeof p.protocol === 'string' ? p.protocol : 'TCP' })
        : idx(j),
    ];
    const first = names.get(p.name);
    if (!first) {
      names.set(p.name, item);
      return;
    }
    out.push({
      serverField: `${index}.ports[${j}].name`,
      body: `Duplicate value: ${goQuote(p.name)}`,
      path: [...item, field('name')],
      places: [
        [...item, field('name')],
        [...first, field('name')],
      ],
      follows: 'validateContainerPorts',
      what: `two ports of ${who} are named ${goQuote(p.name)}`,
    });
  });
  return out;
}

/** validateResourceRequirements: a request of cpu, memory or ephemeral storage above its limit. */
function resourceViolations(c: JsonObject, container: FieldPath, index: string, who: string): StoredViolation[] {
  const out: StoredViolation[] = [];
  const resources = isJsonObject(c.resources) ? c.resources : undefined;
  const requests = resources && isJsonObject(resources.requests) ? resources.requests : {};
  const limits = resources && isJsonObject(resources.limits) ? resources.limits : {};
  for (const name of ['cpu', 'memory', 'ephemeral-storage']) {
    if (!Object.hasOwn(requests, name) || !Object.hasOwn(limits, name)) continue;
    const request = parseQuantity(requests[name]);
    const limit = parseQuantity(limits[name]);
    if (!request || !limit || compareQuantities(request, limit) <= 0) continue;
    const r = canonicalQuantity(request);
    const l = canonicalQuantity(limit);
    if (r === undefined || l === undefined) continue;
    const res: FieldPath = [...container, field('resources')];
    out.push({
      serverField: `${index}.resources.requests`,
      body: `Invalid value: ${goQuote(r)}: must be less than or equal to ${name} limit of ${l}`,
      path: [...res, field('requests')],
      places: [
        [...res, field('requests'), field(name)],
        [...res, field('limits'), field(name)],
      ],
      follows: 'validateResourceRequirements',
      what: `${who} would request more ${name} (${r}) than its limit (${l})`,
    });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Helpers

const field = (name: string): PathElement => ({ kind: 'field', name });
const key = (f: Record<string, JsonValue>): PathElement => ({ kind: 'key', fields: f });
const idx = (index: number): PathElement => ({ kind: 'index', index });
const fields = (names: readonly string[]): FieldPath => names.map(field);

function containerList(v: JsonValue | undefined): JsonObject[] {
  return Array.isArray(v) ? v.filter(isJsonObject) : [];
}

function containerElement(c: JsonObject, i: number): PathElement {
  return typeof c.name === 'string' ? key({ name: c.name }) : idx(i);
}

function at(obj: JsonObject, names: readonly string[]): JsonValue | undefined {
  let v: JsonValue | undefined = obj;
  for (const n of names) v = isJsonObject(v) ? v[n] : undefined;
  return v;
}

function isStringMap(v: unknown): v is Record<string, string> {
  return isJsonObject(v) && Object.values(v).every((x) => typeof x === 'string');
}

/** encoding/json of a map[string]string: keys sorted by bytes, HTML characters escaped. */
function goJsonStringMap(m: Record<string, string>): string {
  const keys = Object.keys(m).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const s = (x: string) =>
    JSON.stringify(x).replace(/[<>&\u2028\u2029]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return `{${keys.map((k) => `${s(k)}:${s(m[k]!)}`).join(',')}}`;
}

/** Whether `obj` writes the field at `path` (list items found by their keys, a port's protocol TCP when left out). */
export function writesPath(obj: JsonValue | undefined, path: FieldPath): boolean {
  let v: JsonValue | undefined = obj;
  for (const el of path) {
    if (el.kind === 'field') v = isJsonObject(v) && Object.hasOwn(v, el.name) ? v[el.name] : undefined;
    else if (el.kind === 'index') v = Array.isArray(v) ? v[el.index] : undefined;
    else if (el.kind === 'key') {
      const want = el.fields;
      v = Array.isArray(v)
        ? v.find(
            (item) =>
              isJsonObject(item) &&
              Object.entries(want).every(([k, w]) => (item[k] ?? (k === 'protocol' ? 'TCP' : undefined)) === w),
          )
        : undefined;
    } else v = undefined;
    if (v === undefined) return false;
  }
  return true;
}
