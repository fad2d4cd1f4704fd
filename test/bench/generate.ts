// The files the benchmark checks, generated so that every run measures the same shapes, and the
// histories that make every object in them exist before the run, as in the clusters users work
// with: each object applied server-side by a first manager (`kubectl`), then some changed by a
// second (an autoscaler, or a hand edit), the file following some of those changes and not others,
// so that applying it again meets conflicts that both the product and kubectl report. The shapes:
// Deployments as an application repository holds them, one ConfigMap (alone in its namespace, or
// among 20,000 others), an install file shaped like the big operator installs (many
// CustomResourceDefinitions with deep, heavily described openAPIV3Schema, then the objects that run
// the operator) and a directory of small files. Pure: test/bench/workloads.ts writes them to the cluster.
import { stringify } from 'yaml';

/** The fields of a bench Deployment that a history changes, and that a file may or may not follow. */
export interface DeploymentFields {
  replicas: number;
  image: string;
  /** The value of the container's `MODE` environment variable. */
  mode: string;
  /** The label `tier`. */
  tier: string;
}
export type ChangedField = keyof DeploymentFields;

/** What the first manager (`kubectl apply --server-side`) applied: the file as it was first written. */
export const applied: DeploymentFields = { replicas: 3, image: 'nginx:1.25', mode: 'prod', tier: 'frontend' };
/** What the second manager set: the autoscaler's replicas, or a hand edit. */
export const changed: DeploymentFields = { replicas: 5, image: 'nginx:1.26', mode: 'debug', tier: 'canary' };

/**
 * The history of the existing Deployment `web-i` after its first apply: every tenth scaled by an
 * autoscaler (replicas), the others edited by hand (`kubectl edit`), in turn the image, the `MODE`
 * environment value and the `tier` label.
 */
export const changeOf = (i: number): ChangedField =>
  i % 10 === 0 ? 'replicas' : (['image', 'mode', 'tier'] as const)[i % 3]!;

/**
 * Whether the file still says what was first applied where the other manager changed it (a
 * conflict with that manager), or was brought up to date with the hand edit (the value is shared,
 * no conflict): a quarter of the hand edits were never brought into the file, and no file follows
 * an autoscaler.
 */
export const fileKeepsApplied = (i: number): boolean => i % 10 === 0 || i % 4 === 1;

/** The fields the file of `web-i` says. */
export const fileFields = (i: number): DeploymentFields =>
  fileKeepsApplied(i) ? applied : { ...applied, [changeOf(i)]: changed[changeOf(i)] };

/** The field a change is to, in the API server's notation (its conflict messages, the findings' `path`). */
export const changedPath: Record<ChangedField, string> = {
  replicas: '.spec.replicas',
  image: '.spec.template.spec.containers[name="app"].image',
  mode: '.spec.template.spec.containers[name="app"].env[name="MODE"].value',
  tier: '.metadata.labels.tier',
};

/**
 * The second manager's write, as data: the autoscaler's PUT of the scale subresource, or `kubectl
 * edit`'s strategic-merge patch (an Update, which takes the field from the first manager).
 */
export type Change =
  | { kind: 'scale'; manager: 'kube-controller-manager'; replicas: number }
  | { kind: 'patch'; manager: 'kubectl-edit'; patch: Record<string, unknown> };

const autoscaler = (replicas: number): Change => ({ kind: 'scale', manager: 'kube-controller-manager', replicas });
const handEdit = (patch: Record<string, unknown>): Change => ({ kind: 'patch', manager: 'kubectl-edit', patch });
const containerEdit = (name: string, fields: Record<string, unknown>) =>
  handEdit({ spec: { template: { spec: { containers: [{ name, ...fields }] } } } });

export function deploymentChange(i: number): Change {
  switch (changeOf(i)) {
    case 'replicas':
      return autoscaler(changed.replicas);
    case 'image':
      return containerEdit('app', { image: changed.image });
    case 'mode':
      return containerEdit('app', { env: [{ name: 'MODE', value: changed.mode }] });
    case 'tier':
      return handEdit({ metadata: { labels: { tier: changed.tier } } });
  }
}

/**
 * The Deployment `web-i` as YAML text (flow mappings for the labels, as many repositories write
 * them). The bench types into the metadata label `app: web-i,`, which only that line holds.
 */
export const deploymentDoc = (
  namespace: string,
  i: number,
  fields: DeploymentFields = applied,
): string => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web-${i}
  namespace: ${namespace}
  labels: {app: web-${i}, tier: ${fields.tier}}
spec:
  replicas: ${fields.replicas}
  selector:
    matchLabels: {app: web-${i}}
  template:
    metadata:
      labels: {app: web-${i}}
    spec:
      containers:
      - name: app
        image: ${fields.image}
        env:
        - name: MODE
          value: ${fields.mode}
        ports:
        - containerPort: 8080
        resources: {limits: {cpu: 500m}}
`;

/** An object that exists before the run: what its first manager applied, then what changed it. */
export interface Existing {
  /** Applied server-side as `kubectl`: one object, as YAML text. */
  applied: string;
  change?: Change;
}

/** Objects that all exist, the file (or files) that holds them, and the conflicts applying it meets. */
export interface ExistingWorkload {
  /** The file; for a directory, its files by name. */
  text: string;
  files?: { name: string; text: string }[];
  existing: Existing[];
  /**
   * What applying the file as `kubectl` conflicts on: `kind/name` (the kind in lower case, as
   * kubectl prints it) → the fields' paths, in the API server's notation.
   */
  conflicts: Map<string, string[]>;
}

export const conflictCount = (w: { conflicts: Map<string, string[]> }): number =>
  [...w.conflicts.values()].reduce((n, paths) => n + paths.length, 0);

/** `count` Deployments `web-0`…, every one existing with its history; the file as `fileFields` says. */
export function existingDeployments(namespace: string, count: number): ExistingWorkload {
  const docs: string[] = [];
  const existing: Existing[] = [];
  const conflicts = new Map<string, string[]>();
  for (let i = 0; i < count; i++) {
    docs.push(deploymentDoc(namespace, i, fileFields(i)));
    existing.push({ applied: deploymentDoc(namespace, i), change: deploymentChange(i) });
    if (fileKeepsApplied(i)) conflicts.set(`deployment/web-${i}`, [changedPath[changeOf(i)]]);
  }
  return { text: docs.join('---\n'), existing, conflicts };
}

/**
 * The one object: a ConfigMap `settings` applied by `kubectl` with `mode: prod`, its `mode` then
 * edited by hand to `debug`; the file still says `prod`, a conflict on `.data.mode`.
 */
export function settingsConfigMap(namespace: string): ExistingWorkload {
  const text = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: ${namespace}
data:
  mode: prod
  level: info
  region: eu-west-1
`;
  return {
    text,
    existing: [{ applied: text, change: handEdit({ data: { mode: 'debug' } }) }],
    conflicts: new Map([['configmap/settings', ['.data.mode']]]),
  };
}

/** How many other ConfigMaps share the crowded namespace with `settings`. */
export const crowd = 20_000;

/** The i-th of the crowd: a small ConfigMap as applications hold them (a properties file, a label). */
export function crowdConfigMap(namespace: string, i: number): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `app-config-${String(i).padStart(5, '0')}`, namespace, labels: { app: `app-${i % 500}` } },
    data: { 'app.properties': `server.port=8080\nfeature.f${i}=on\nlog.level=info\n` },
  };
}

// A deterministic generator, so the install file is the same bytes on every run.
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const words =
  'the of a to field is when this specifies which must be set in for an if not will default value resource controller reference name namespace selector label template policy spec status condition'.split(
    ' ',
  );

function description(next: () => number): string {
  // Real CRDs carry the Go doc comments of every field: a few sentences, often several lines.
  const n = 12 + Math.floor(next() * 60);
  return Array.from({ length: n }, () => words[Math.floor(next() * words.length)]).join(' ') + '.';
}

function schema(next: () => number, depth: number): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  const fields = depth === 0 ? 6 : 3 + Math.floor(next() * 5);
  for (let f = 0; f < fields; f++) {
    const name = `${words[Math.floor(next() * words.length)]}${words[Math.floor(next() * words.length)]!.replace(/^./, (c) => c.toUpperCase())}${f}`;
    const roll = next();
    if (depth < 4 && roll < 0.25) properties[name] = { description: description(next), ...schema(next, depth + 1) };
    else if (depth < 4 && roll < 0.35) {
      properties[name] = {
        description: description(next),
        type: 'array',
        items: schema(next, depth + 1),
        'x-kubernetes-list-type': 'atomic',
      };
    } else if (roll < 0.8)
      properties[name] = {
        description: description(next),
        type: 'string',
        ...(roll < 0.6 ? { enum: ['Always', 'Never', 'IfNotPresent'] } : {}),
      };
    else if (roll < 0.9)
      properties[name] = { description: description(next), type: 'integer', format: 'int32', minimum: 0 };
    else properties[name] = { description: description(next), type: 'boolean' };
  }
  return { type: 'object', properties, ...(next() < 0.3 ? { required: Object.keys(properties).slice(0, 1) } : {}) };
}

/** The group of the install file's CustomResourceDefinitions (cluster-wide: the bench removes them). */
export const installGroup = 'bench.kch.example.com';

function crd(next: () => number, i: number): Record<string, unknown> {
  const plural = `widgets${i}`;
  const group = installGroup;
  const versions = ['v1', 'v1beta1'].map((name, v) => ({
    name,
    served: true,
    storage: v === 0,
    subresources: { status: {} },
    additionalPrinterColumns: [
      { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
    ],
    schema: {
      openAPIV3Schema: {
        description: description(next),
        type: 'object',
        properties: {
          apiVersion: { type: 'string', description: description(next) },
          kind: { type: 'string', description: description(next) },
          metadata: { type: 'object' },
          spec: { description: description(next), ...schema(next, 1) },
          status: { description: description(next), ...schema(next, 2) },
        },
      },
    },
  }));
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}`, labels: { 'app.kubernetes.io/part-of': 'bench-operator' } },
    spec: {
      group,
      names: { kind: `Widget${i}`, listKind: `Widget${i}List`, plural, singular: `widget${i}` },
      scope: 'Namespaced',
      versions,
    },
  };
}

/**
 * The objects that run the operator; the history of the i-th Deployment: every fourth scaled by an
 * autoscaler, every fourth but two its image edited by hand, the others as applied.
 */
function operatorObjects(namespace: string): { object: Record<string, unknown>; change?: Change; conflict?: string }[] {
  const out: { object: Record<string, unknown>; change?: Change; conflict?: string }[] = [];
  const labels = { 'app.kubernetes.io/part-of': 'bench-operator' };
  for (let i = 0; i < 12; i++) {
    const name = `operator-${i}`;
    out.push({ object: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace, labels } } });
    out.push({
      object: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name, namespace, labels },
        rules: [{ apiGroups: [installGroup], resources: ['*'], verbs: ['get', 'list', 'watch', 'update', 'patch'] }],
      },
    });
    out.push({
      object: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name, namespace, labels },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
        subjects: [{ kind: 'ServiceAccount', name, namespace }],
      },
    });
    out.push({
      object: {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name, namespace, labels },
        spec: { selector: { app: name }, ports: [{ name: 'metrics', port: 8443, targetPort: 8443 }] },
      },
    });
    const history =
      i % 4 === 0
        ? { change: autoscaler(2), conflict: '.spec.replicas' }
        : i % 4 === 2
          ? {
              change: containerEdit('manager', { image: 'registry.example.com/operator:1.1' }),
              conflict: '.spec.template.spec.containers[name="manager"].image',
            }
          : {};
    out.push({
      object: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name, namespace, labels },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: name } },
          template: {
            metadata: { labels: { app: name } },
            spec: {
              serviceAccountName: name,
              containers: [
                {
                  name: 'manager',
                  image: 'registry.example.com/operator:1.0',
                  args: ['--leader-elect'],
                  resources: { limits: { cpu: '500m', memory: '128Mi' } },
                },
              ],
            },
          },
        },
      },
      ...history,
    });
  }
  return out;
}

/**
 * The install file: CRDs until the file is about 1.7 MB, then 60 objects in `namespace`. Every
 * object exists as the file says, but for the operator Deployments' histories.
 */
export function crdInstallFile(namespace: string): ExistingWorkload & { crds: number; objects: number } {
  const next = rng(20261130);
  const docs: string[] = [];
  const existing: Existing[] = [];
  const conflicts = new Map<string, string[]>();
  let size = 0;
  let crds = 0;
  while (size < 1_700_000) {
    const doc = stringify(crd(next, crds++), { lineWidth: 100 });
    docs.push(doc);
    existing.push({ applied: doc });
    size += doc.length;
  }
  const objects = operatorObjects(namespace);
  for (const { object, change, conflict } of objects) {
    const doc = stringify(object);
    docs.push(doc);
    existing.push({ applied: doc, ...(change ? { change } : {}) });
    const metadata = object.metadata as { name: string };
    if (conflict) conflicts.set(`${String(object.kind).toLowerCase()}/${metadata.name}`, [conflict]);
  }
  return { text: docs.join('---\n'), existing, conflicts, crds, objects: objects.length };
}

/**
 * A directory of `files` files: each a Deployment `web-i` (existing, with its history, as
 * `existingDeployments` has it), every third one followed by its Service (existing as written).
 */
export function directoryFiles(namespace: string, files: number): ExistingWorkload & { objects: number } {
  const deployments = existingDeployments(namespace, files);
  const out: { name: string; text: string }[] = [];
  const existing: Existing[] = [];
  for (let i = 0; i < files; i++) {
    let text = deploymentDoc(namespace, i, fileFields(i));
    existing.push(deployments.existing[i]!);
    if (i % 3 === 0) {
      const service = `apiVersion: v1\nkind: Service\nmetadata:\n  name: web-${i}\n  namespace: ${namespace}\nspec:\n  selector: {app: web-${i}}\n  ports:\n  - port: 80\n    targetPort: 8080\n`;
      text += `---\n${service}`;
      existing.push({ applied: service });
    }
    out.push({ name: `web-${String(i).padStart(3, '0')}.yaml`, text });
  }
  return {
    text: out.map((f) => f.text).join('---\n'),
    files: out,
    existing,
    conflicts: deployments.conflicts,
    objects: existing.length,
  };
}
