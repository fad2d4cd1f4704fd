// The files the benchmark checks, generated so that every run measures the same shapes: plain
// Deployments as an application repository holds them, an install file shaped like the big
// operator installs (many CustomResourceDefinitions with deep, heavily described openAPIV3Schema,
// then the objects that run the operator), and a directory of small files.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';

/**
 * Which Deployments exist in the cluster before the run (each scaled by an autoscaler, so a
 * server-side apply by kubectl conflicts on spec.replicas): every tenth of the first 200 and every
 * hundredth after that, so the 200-object file and the 2,000-object file both carry conflicts
 * spread over the whole file.
 */
export const seeded = (i: number): boolean => (i < 200 && i % 10 === 0) || i % 100 === 0;

export const deploymentDoc = (namespace: string, i: number, replicas = 3): string => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web-${i}
  namespace: ${namespace}
  labels: {app: web-${i}}
spec:
  replicas: ${replicas}
  selector:
    matchLabels: {app: web-${i}}
  template:
    metadata:
      labels: {app: web-${i}}
    spec:
      containers:
      - name: app
        image: nginx:1.25
        ports:
        - containerPort: 8080
        resources: {limits: {cpu: 500m}}
`;

export function deploymentsFile(namespace: string, count: number): { text: string; conflicts: number } {
  const text = Array.from({ length: count }, (_, i) => deploymentDoc(namespace, i)).join('---\n');
  let conflicts = 0;
  for (let i = 0; i < count; i++) if (seeded(i)) conflicts++;
  return { text, conflicts };
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

function crd(next: () => number, i: number): Record<string, unknown> {
  const plural = `widgets${i}`;
  const group = 'bench.kch.example.com';
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

function operatorObjects(namespace: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const labels = { 'app.kubernetes.io/part-of': 'bench-operator' };
  for (let i = 0; i < 12; i++) {
    const name = `operator-${i}`;
    out.push({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace, labels } });
    out.push({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name, namespace, labels },
      rules: [
        { apiGroups: ['bench.kch.example.com'], resources: ['*'], verbs: ['get', 'list', 'watch', 'update', 'patch'] },
      ],
    });
    out.push({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name, namespace, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects: [{ kind: 'ServiceAccount', name, namespace }],
    });
    out.push({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace, labels },
      spec: { selector: { app: name }, ports: [{ name: 'metrics', port: 8443, targetPort: 8443 }] },
    });
    out.push({
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
    });
  }
  return out;
}

/** The install file: CRDs until the file is about 1.7 MB, then 60 objects in `namespace`. */
export function crdInstallFile(namespace: string): { text: string; crds: number; objects: number } {
  const next = rng(20261130);
  const docs: string[] = [];
  let size = 0;
  let crds = 0;
  while (size < 1_700_000) {
    const doc = stringify(crd(next, crds++), { lineWidth: 100 });
    docs.push(doc);
    size += doc.length;
  }
  const objects = operatorObjects(namespace);
  for (const o of objects) docs.push(stringify(o));
  return { text: docs.join('---\n'), crds, objects: objects.length };
}

/** A directory of `files` files: each a Deployment, every third one followed by its Service. */
export function writeDirectory(dir: string, namespace: string, files: number): { objects: number } {
  fs.mkdirSync(dir, { recursive: true });
  let objects = 0;
  for (let i = 0; i < files; i++) {
    let text = deploymentDoc(namespace, i);
    objects++;
    if (i % 3 === 0) {
      text += `---\napiVersion: v1\nkind: Service\nmetadata:\n  name: web-${i}\n  namespace: ${namespace}\nspec:\n  selector: {app: web-${i}}\n  ports:\n  - port: 80\n    targetPort: 8080\n`;
      objects++;
    }
    fs.writeFileSync(path.join(dir, `web-${String(i).padStart(3, '0')}.yaml`), text);
  }
  return { objects };
}
