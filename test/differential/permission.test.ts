// Permission, proved against the real API server: for each scenario a user is allowed exactly what
// the scenario grants (a ServiceAccount with Roles, test/support/access.ts; or the harness's viewer,
// who reads everything, and stranger, who may do nothing), and the product's answer — the facts the
// cluster layer reads as that user, SelfSubjectAccessReviews included, judged by the one analysis —
// is set beside the server's own answer to the request the user's command sends: the real kubectl
// (`apply --server-side`, `apply`, `create`) run as that user with --dry-run=server. A refusal must
// be a `forbidden` finding whose words the server printed; an accepted request must get none; what
// the user may not even read is left not judged, never called allowed. The expected answer of each
// scenario is written by hand from RBAC's rules; a test that disagrees has found a bug until shown
// otherwise.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createClusterConnection, createFactsSource, verifyResource } from '../../server/src/cluster';
import { analyzeResource, type Finding } from '../../server/src/core/findings';
import { objectTarget, parseManifestText } from '../../server/src/core/manifest/manifest';
import type { ApplyMode } from '../../server/src/core/ssa/predict';
import { accessUser, type Grants, type PolicyRule } from '../support/access';
import { testCluster } from '../support/env';
import {
  connect,
  create,
  deleteObject,
  freshNamespace,
  objectOf,
  type Connection,
  type KubeObject,
} from '../support/seed';

/**
 * What the server answers first, and what the product must say: refused (403), the namespace not
 * found (404), accepted, or (product) not judged because it may not read.
 */
type Answer = 'forbidden' | 'notFound' | 'accepted' | 'unread';

interface Namespaces {
  /** The user's home, where its account lives and where the manifest goes unless it says otherwise. */
  home: string;
  /** Another namespace. */
  other: string;
  /** A namespace that does not exist. */
  gone: string;
}

interface Scenario {
  name: string;
  /** The harness's users, or an account with these grants. */
  user: 'viewer' | 'stranger' | ((ns: Namespaces) => Grants);
  /** Objects that exist before, created as admin. */
  history?: (ns: Namespaces) => KubeObject[];
  manifest: (ns: Namespaces) => string;
  mode: ApplyMode;
  /** The server's answer, by RBAC's rules. `unread`: the server refuses (403), and the product may not read the object. */
  expect: Answer;
  /** Then the missing namespace is created, and the same request gets this answer (what the 404 hid). */
  afterNamespace?: Answer;
}

const read: PolicyRule = { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] };
const readDeployments: PolicyRule = {
  apiGroups: ['apps'],
  resources: ['deployments'],
  verbs: ['get', 'list', 'watch'],
};
const configMaps = (...verbs: string[]): PolicyRule => ({ apiGroups: [''], resources: ['configmaps'], verbs });
const inHome =
  (...rules: PolicyRule[]) =>
  (ns: Namespaces): Grants => ({ namespaced: [{ namespace: ns.home, rules }] });

const configMap = (name: string, namespace: string, value = '1'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace },
  data: { a: value },
});
const configMapText = (name: string, namespace?: string, value = '1') =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n${namespace ? `  namespace: ${namespace}\n` : ''}data:\n  a: "${value}"\n`;
const deployment = (namespace: string): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'nginx:1.25' }] } },
  },
});
const deploymentText = (replicas = 1) =>
  `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: ${replicas}\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: app\n        image: nginx:1.25\n`;
const priorityClass = (name: string): KubeObject => ({
  apiVersion: 'scheduling.k8s.io/v1',
  kind: 'PriorityClass',
  metadata: { name },
  value: 1000,
});
const priorityClassText = (name: string) =>
  `apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: ${name}\nvalue: 1000\n`;

const scenarios: Scenario[] = [
  // The harness's users.
  {
    name: 'viewer: a server-side apply of an existing Deployment is refused (patch)',
    user: 'viewer',
    history: (ns) => [deployment(ns.home)],
    manifest: () => deploymentText(2),
    mode: 'serverSide',
    expect: 'forbidden',
  },
  {
    name: 'viewer: a client-side apply of an existing ConfigMap is refused (patch, after its GET)',
    user: 'viewer',
    history: (ns) => [configMap('settings', ns.home)],
    manifest: () => configMapText('settings', undefined, '2'),
    mode: 'clientSide',
    expect: 'forbidden',
  },
  {
    name: 'viewer: kubectl create of a new ConfigMap is refused (create)',
    user: 'viewer',
    manifest: () => configMapText('fresh'),
    mode: 'create',
    expect: 'forbidden',
  },
  {
    name: 'viewer: a server-side apply of a missing ConfigMap is refused (patch)',
    user: 'viewer',
    manifest: () => configMapText('fresh'),
    mode: 'serverSide',
    expect: 'forbidden',
  },
  {
    name: 'stranger: may not even read — the server refuses, the product leaves it not judged',
    user: 'stranger',
    history: (ns) => [configMap('settings', ns.home)],
    manifest: () => configMapText('settings', undefined, '2'),
    mode: 'serverSide',
    expect: 'unread',
  },
  // Allowed in one namespace only.
  {
    name: 'a writer of its own namespace applies there',
    user: inHome(configMaps('get', 'list', 'watch', 'patch', 'create')),
    history: (ns) => [configMap('settings', ns.home)],
    manifest: () => configMapText('settings', undefined, '1'),
    mode: 'serverSide',
    expect: 'accepted',
  },
  {
    name: 'a writer of its own namespace, reading another, is refused there',
    user: (ns) => ({
      namespaced: [
        { namespace: ns.home, rules: [configMaps('get', 'list', 'watch', 'patch', 'create')] },
        { namespace: ns.other, rules: [read] },
      ],
    }),
    history: (ns) => [configMap('settings', ns.other)],
    manifest: (ns) => configMapText('settings', ns.other, '2'),
    mode: 'serverSide',
    expect: 'forbidden',
  },
  {
    name: 'a writer of its own namespace, reading another, may not create there either',
    user: (ns) => ({
      namespaced: [
        { namespace: ns.home, rules: [configMaps('get', 'list', 'watch', 'patch', 'create')] },
        { namespace: ns.other, rules: [read] },
      ],
    }),
    manifest: (ns) => configMapText('fresh', ns.other),
    mode: 'create',
    expect: 'forbidden',
  },
  // Create, not patch.
  {
    name: 'create but not patch: a server-side apply of an existing object is refused',
    user: inHome(configMaps('get', 'list', 'watch', 'create')),
    history: (ns) => [configMap('settings', ns.home)],
    manifest: () => configMapText('settings', undefined, '2'),
    mode: 'serverSide',
    expect: 'forbidden',
  },
  {
    name: 'create but not patch: a server-side apply of a missing object is a PATCH too, refused',
    user: inHome(configMaps('get', 'list', 'watch', 'create')),
    manifest: () => configMapText('fresh'),
    mode: 'serverSide',
    expect: 'forbidden',
  },
  {
    name: 'create but not patch: kubectl create of a new object is accepted',
    user: inHome(configMaps('get', 'list', 'watch', 'create')),
    manifest: () => configMapText('fresh'),
    mode: 'create',
    expect: 'accepted',
  },
  {
    name: 'create but not patch: a client-side apply of a missing object is a GET and a POST, accepted',
    user: inHome(configMaps('get', 'list', 'watch', 'create')),
    manifest: () => configMapText('fresh'),
    mode: 'clientSide',
    expect: 'accepted',
  },
  {
    name: 'create but not patch: a client-side apply of an existing object is refused',
    user: inHome(configMaps('get', 'list', 'watch', 'create')),
    history: (ns) => [configMap('settings', ns.home)],
    manifest: () => configMapText('settings', undefined, '2'),
    mode: 'clientSide',
    expect: 'forbidden',
  },
  // Patch, not create.
  {
    name: 'patch but not create: a server-side apply of a missing object is refused at the create it makes',
    user: inHome(configMaps('get', 'list', 'watch', 'patch')),
    manifest: () => configMapText('fresh'),
    mode: 'serverSide',
    expect: 'forbidden',
  },
  {
    name: 'patch but not create: a server-side apply of an existing object is accepted',
    user: inHome(configMaps('get', 'list', 'watch', 'patch')),
    history: (ns) => [configMap('settings', ns.home)],
    manifest: () => configMapText('settings', undefined, '1'),
    mode: 'serverSide',
    expect: 'accepted',
  },
  {
    name: 'patch but not create: a client-side apply of a missing object is refused (its POST)',
    user: inHome(configMaps('get', 'list', 'watch', 'patch')),
    manifest: () => configMapText('fresh'),
    mode: 'clientSide',
    expect: 'forbidden',
  },
  {
    name: 'patch but not create: a client-side apply of an existing object is accepted',
    user: inHome(configMaps('get', 'list', 'watch', 'patch')),
    history: (ns) => [configMap('settings', ns.home)],
    manifest: () => configMapText('settings', undefined, '2'),
    mode: 'clientSide',
    expect: 'accepted',
  },
  // One named object (resourceNames).
  {
    name: 'resourceNames: patch of the one named object is accepted',
    user: inHome(read, { apiGroups: [''], resources: ['configmaps'], verbs: ['patch'], resourceNames: ['mine'] }),
    history: (ns) => [configMap('mine', ns.home)],
    manifest: () => configMapText('mine', undefined, '1'),
    mode: 'serverSide',
    expect: 'accepted',
  },
  {
    name: 'resourceNames: patch of another object is refused',
    user: inHome(read, { apiGroups: [''], resources: ['configmaps'], verbs: ['patch'], resourceNames: ['mine'] }),
    history: (ns) => [configMap('theirs', ns.home)],
    manifest: () => configMapText('theirs', undefined, '2'),
    mode: 'serverSide',
    expect: 'forbidden',
  },
  {
    name: 'resourceNames: a server-side apply creates the one named missing object (its create names it)',
    user: inHome(read, {
      apiGroups: [''],
      resources: ['configmaps'],
      verbs: ['patch', 'create'],
      resourceNames: ['mine'],
    }),
    manifest: () => configMapText('mine'),
    mode: 'serverSide',
    expect: 'accepted',
  },
  {
    name: 'resourceNames: kubectl create of that name is refused (a POST names no object)',
    user: inHome(read, {
      apiGroups: [''],
      resources: ['configmaps'],
      verbs: ['patch', 'create'],
      resourceNames: ['mine'],
    }),
    manifest: () => configMapText('mine'),
    mode: 'create',
    expect: 'forbidden',
  },
  // A subresource is not the resource.
  {
    name: 'patch of deployments/scale only: applying the Deployment is refused',
    user: inHome(readDeployments, {
      apiGroups: ['apps'],
      resources: ['deployments/scale'],
      verbs: ['patch', 'update'],
    }),
    history: (ns) => [deployment(ns.home)],
    manifest: () => deploymentText(3),
    mode: 'serverSide',
    expect: 'forbidden',
  },
  {
    name: 'patch of deployments: applying the Deployment is accepted',
    user: inHome(readDeployments, { apiGroups: ['apps'], resources: ['deployments'], verbs: ['patch'] }),
    history: (ns) => [deployment(ns.home)],
    manifest: () => deploymentText(1),
    mode: 'serverSide',
    expect: 'accepted',
  },
  // A cluster-scoped kind.
  {
    name: 'cluster scope: reading PriorityClasses but not patching them, the apply is refused at the cluster scope',
    user: () => ({
      cluster: [{ apiGroups: ['scheduling.k8s.io'], resources: ['priorityclasses'], verbs: ['get', 'list', 'watch'] }],
    }),
    history: (ns) => [priorityClass(`kch-perm-${ns.home}`)],
    manifest: (ns) => priorityClassText(`kch-perm-${ns.home}`),
    mode: 'serverSide',
    expect: 'forbidden',
  },
  {
    name: 'cluster scope: a Role in a namespace does not reach a cluster-scoped kind',
    user: (ns) => ({
      cluster: [{ apiGroups: ['scheduling.k8s.io'], resources: ['priorityclasses'], verbs: ['get', 'list', 'watch'] }],
      namespaced: [
        {
          namespace: ns.home,
          rules: [{ apiGroups: ['scheduling.k8s.io'], resources: ['priorityclasses'], verbs: ['patch', 'create'] }],
        },
      ],
    }),
    manifest: (ns) => priorityClassText(`kch-perm-new-${ns.home}`),
    mode: 'create',
    expect: 'forbidden',
  },
  {
    name: 'cluster scope: a ClusterRole that may patch applies',
    user: () => ({
      cluster: [
        { apiGroups: ['scheduling.k8s.io'], resources: ['priorityclasses'], verbs: ['get', 'list', 'watch', 'patch'] },
      ],
    }),
    history: (ns) => [priorityClass(`kch-perm-${ns.home}`)],
    manifest: (ns) => priorityClassText(`kch-perm-${ns.home}`),
    mode: 'serverSide',
    expect: 'accepted',
  },
];

// A namespace that does not exist: a user's Roles cannot live there, so what it may do there comes
// from a ClusterRole. Reading namespaces lets the product learn that it is missing.
const clusterWide = (...verbs: string[]): Grants => ({
  cluster: [configMaps(...verbs), { apiGroups: [''], resources: ['namespaces'], verbs: ['get'] }],
});
scenarios.push(
  {
    name: 'missing namespace: a user who may not patch is refused before the namespace is looked for',
    user: () => clusterWide('get', 'list', 'watch'),
    manifest: (ns) => configMapText('fresh', ns.gone),
    mode: 'serverSide',
    expect: 'forbidden',
  },
  {
    name: 'missing namespace: may patch, not create — the server-side apply finds the namespace missing (404) before it authorizes the create',
    user: () => clusterWide('get', 'list', 'watch', 'patch'),
    manifest: (ns) => configMapText('fresh', ns.gone),
    mode: 'serverSide',
    expect: 'notFound',
    afterNamespace: 'forbidden',
  },
  {
    name: 'missing namespace: may patch, not create — a client-side apply is refused at its POST (403)',
    user: () => clusterWide('get', 'list', 'watch', 'patch'),
    manifest: (ns) => configMapText('fresh', ns.gone),
    mode: 'clientSide',
    expect: 'forbidden',
  },
  {
    name: 'missing namespace: may create — kubectl create finds the namespace missing (404)',
    user: () => clusterWide('get', 'list', 'watch', 'create'),
    manifest: (ns) => configMapText('fresh', ns.gone),
    mode: 'create',
    expect: 'notFound',
  },
);

const cluster = testCluster();
let admin: Connection;
const kubectlCache = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-permission-kubectl-'));
const cleanups: (() => Promise<unknown>)[] = [];

before(() => {
  if (cluster) admin = connect('admin');
});

after(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
  fs.rmSync(kubectlCache, { recursive: true, force: true });
});

/** The user's command with --dry-run=server: the server's answer to what kubectl sends. */
function kubectlAnswer(
  kubeconfig: string,
  context: string,
  mode: ApplyMode,
  text: string,
): Promise<{ code: number; stderr: string }> {
  const command = mode === 'serverSide' ? ['apply', '--server-side'] : mode === 'clientSide' ? ['apply'] : ['create'];
  const args = ['--kubeconfig', kubeconfig, '--context', context, '--cache-dir', kubectlCache, ...command];
  args.push('--dry-run=server', '-o', 'name', '-f', '-');
  return new Promise((resolve, reject) => {
    const child = spawn('kubectl', args, {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, KUBECONFIG: kubeconfig },
    });
    let stderr = '';
    child.stdout.resume();
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stderr }));
    child.stdin.end(text);
  });
}

/** The product's answer: the facts read as the user, judged by the analysis. */
async function productAnswer(
  kubeconfig: string,
  context: string,
  mode: ApplyMode,
  text: string,
): Promise<{ answer: Answer; finding?: Finding; why: string }> {
  const connection = await createClusterConnection({ kubeconfig, context });
  const facts = createFactsSource(connection);
  try {
    const resource = parseManifestText(text).resources[0]!;
    const loaded = await facts.read(objectTarget(resource));
    if (!loaded.ok)
      return { answer: loaded.problem.kind === 'forbidden' ? 'unread' : 'accepted', why: loaded.problem.message };
    const settings = { fieldManager: 'kubectl', applyMode: mode };
    const findings = analyzeResource(resource, loaded.facts, settings);
    const forbidden = findings.find((f) => f.code === 'forbidden');
    const why = findings.map((f) => `${f.code}: ${f.message}`).join('\n');
    if (forbidden) {
      // The product's own dry run as the user (the editor's confirmation, --verify) hears the refusal it predicted.
      const verified = await verifyResource(connection, resource, findings, loaded.facts, settings);
      assert.ok(verified.ok && verified.verification?.agrees, `the product's dry run: ${JSON.stringify(verified)}`);
    }
    // A refusal the server answers after the namespace's 404 says so; the 404 is then the answer.
    if (findings.some((f) => f.code === 'namespace-not-found')) return { answer: 'notFound', why };
    return forbidden ? { answer: 'forbidden', finding: forbidden, why } : { answer: 'accepted', why };
  } finally {
    facts.dispose();
    connection.dispose();
  }
}

/** The server's answer to what kubectl sends, and the product's, are both `expect`; a refusal in the server's words. */
async function agree(
  expect: Answer,
  kubeconfig: string,
  context: string,
  mode: ApplyMode,
  text: string,
): Promise<void> {
  const server = await kubectlAnswer(kubeconfig, context, mode, text);
  const serverAnswer: Answer = /\(Forbidden\)/.test(server.stderr)
    ? 'forbidden'
    : /\(NotFound\).*namespaces "[^"]+" not found/.test(server.stderr)
      ? 'notFound'
      : 'accepted';
  assert.equal(
    serverAnswer !== 'accepted' || server.code === 0,
    true,
    `kubectl failed otherwise than 403 or 404:\n${server.stderr}`,
  );
  assert.equal(
    serverAnswer,
    expect === 'unread' ? 'forbidden' : expect,
    `the server answered otherwise than the scenario says:\n${server.stderr}`,
  );
  const product = await productAnswer(kubeconfig, context, mode, text);
  assert.equal(product.answer, expect, `the product: ${product.why}\nthe server: ${server.stderr}`);
  if (product.finding) {
    assert.ok(product.finding.serverMessage, 'a refusal in the server words: the cluster named the user');
    assert.ok(
      server.stderr.includes(product.finding.serverMessage!),
      `the server's words:\n${server.stderr}\nthe product's:\n${product.finding.serverMessage}`,
    );
  }
}

let agreed = 0;

describe('permission: the product against the server, per user', () => {
  for (const scenario of scenarios) {
    test(scenario.name, async (t) => {
      if (!cluster) {
        if (process.env.CI === 'true') throw new Error('no local kube-apiserver');
        t.skip('no local kube-apiserver: run through `npm test` or `npm run cluster:up`');
        return;
      }
      const ns: Namespaces = {
        home: await freshNamespace(admin, 'kch-perm'),
        other: await freshNamespace(admin, 'kch-perm-other'),
        gone: `kch-perm-gone-${Math.random().toString(36).slice(2, 8)}`,
      };
      cleanups.push(
        () => deleteObject(admin, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns.home } }),
        () => deleteObject(admin, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns.other } }),
      );
      for (const object of scenario.history?.(ns) ?? []) {
        objectOf(await create(admin, 'kch-test-setup', object), `history ${object.kind}`);
        if (!object.metadata.namespace) cleanups.push(() => deleteObject(admin, object));
      }
      let kubeconfig = cluster.kubeconfig;
      let context: string = typeof scenario.user === 'string' ? scenario.user : '';
      if (typeof scenario.user === 'function') {
        const user = await accessUser(admin, ns.home, 'applier', scenario.user(ns));
        cleanups.push(user.cleanup);
        kubeconfig = user.kubeconfig;
        context = user.context;
      }
      const text = scenario.manifest(ns);
      // A manifest without a namespace goes to the context's: the account's context names its home; the
      // harness's contexts name none, so the home namespace is written into the manifest for them.
      const withNamespace =
        typeof scenario.user === 'function' || /namespace:|PriorityClass/.test(text)
          ? text
          : text.replace(/^( {2}name: .*)$/m, `$1\n  namespace: ${ns.home}`);
      // An accepted server-side apply sets what the history set: no conflict stands in the way of the answer.
      await agree(scenario.expect, kubeconfig, context, scenario.mode, withNamespace);
      if (scenario.afterNamespace) {
        objectOf(
          await create(admin, 'kch-test-setup', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns.gone } }),
          `namespace ${ns.gone}`,
        );
        cleanups.push(() => deleteObject(admin, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns.gone } }));
        await agree(scenario.afterNamespace, kubeconfig, context, scenario.mode, withNamespace);
      }
      agreed++;
    });
  }

  after(() => console.log(`permission agreement: ${agreed}/${scenarios.length} scenarios`));
});
