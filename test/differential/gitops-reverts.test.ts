// A change by hand to an object a GitOps controller applies: the product's `gitops-reverts` findings
// against what the controller's own apply code really takes back. Per scenario, in a namespace of
// its own, against the real kube-apiserver with Argo CD's and Flux's CRDs:
//   1. the controller applies Git (Flux's fluxcd/pkg/ssa with kustomize-controller's options, Argo CD's
//      kubectl server-side sync, or helm-controller's install and drift correction with fluxcd/pkg/ssa's
//      jsondiff), and its policy object (Kustomization, Application, HelmRelease) exists;
//   2. the product checks the user's manifest (`check --format json`, reads only): the fields it says
//      will not stay;
//   3. the user applies the manifest by hand (server-side, forcing, as the user's field manager), then
//      the controller syncs Git again with its own code;
//   4. the fields whose user value did not stay (put back, or removed) must be exactly those named.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { stringify } from 'yaml';
import { requireCluster } from '../support/env';
import {
  argoServerSideApply,
  ensureFluxApply,
  fluxApply,
  helmDriftCorrect,
  respectIgnoreDifferences,
} from '../support/gitops-appliers';
import { installApplierCrds } from '../support/seed-appliers';
import { apply, connect, create, freshNamespace, get, objectOf, type KubeObject } from '../support/seed';
import { runCli, scratchDir, writeFiles } from '../cli/cli-process';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

interface Scenario {
  readonly name: string;
  readonly tool: 'flux' | 'argocd' | 'flux-helm';
  /** What Git holds (Deployment web, replicas 3, label app). */
  readonly git?: (d: Deployment) => void;
  /** The user's manifest: Git's with these changes. */
  readonly user: (d: Deployment) => void;
  /** The user's field manager (default kubectl). */
  readonly manager?: string;
  /** Argo CD: the Application's policy. */
  readonly argo?: { selfHeal: boolean; ignoreReplicas?: boolean; respect?: boolean };
  /** Flux HelmRelease: its spec.driftDetection.mode. */
  readonly helm?: { mode: 'enabled' | 'warn' | 'disabled' };
  /** The fields the product must name, in the server's notation. */
  readonly reverted: readonly string[];
}

type Deployment = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels: Record<string, string>; annotations?: Record<string, string> };
  spec: {
    replicas: number;
    minReadySeconds?: number;
    selector: { matchLabels: Record<string, string> };
    template: {
      metadata: { labels: Record<string, string>; annotations?: Record<string, string> };
      spec: { containers: { name: string; image: string }[] };
    };
  };
};

function gitDeployment(): Deployment {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', labels: { app: 'web' } },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'web', image: 'nginx:1.25' }] },
      },
    },
  };
}

const ssa = (mode: string) => (d: Deployment) => {
  d.metadata.annotations = { ...d.metadata.annotations, 'kustomize.toolkit.fluxcd.io/ssa': mode };
};

const scenarios: Scenario[] = [
  {
    name: 'Flux: replicas Git sets go back, a label Git does not set is removed',
    tool: 'flux',
    user: (d) => {
      d.spec.replicas = 5;
      d.metadata.labels.team = 'checkout';
    },
    reverted: ['.spec.replicas', '.metadata.labels.team'],
  },
  {
    name: 'Flux: an image changed by hand goes back to Git',
    tool: 'flux',
    user: (d) => {
      d.spec.template.spec.containers[0].image = 'nginx:1.26';
    },
    reverted: ['.spec.template.spec.containers[name="web"].image'],
  },
  {
    name: 'Flux: fields Git does not set are removed, even one deep in the template',
    tool: 'flux',
    user: (d) => {
      d.spec.minReadySeconds = 10;
      d.spec.template.metadata.annotations = { 'example.com/restarted': 'now' };
    },
    reverted: ['.spec.minReadySeconds', '.spec.template.metadata.annotations.example.com/restarted'],
  },
  {
    name: 'Flux with ssa: Merge keeps what Git does not set, still puts back what it does',
    tool: 'flux',
    git: ssa('Merge'),
    user: (d) => {
      ssa('Merge')(d);
      d.spec.replicas = 5;
      d.metadata.labels.team = 'checkout';
    },
    reverted: ['.spec.replicas'],
  },
  {
    name: 'Flux with ssa: IfNotPresent leaves an existing object alone',
    tool: 'flux',
    git: ssa('IfNotPresent'),
    user: (d) => {
      ssa('IfNotPresent')(d);
      d.spec.replicas = 5;
      d.metadata.labels.team = 'checkout';
    },
    reverted: [],
  },
  {
    name: 'Flux with ssa: Ignore leaves the object alone',
    tool: 'flux',
    git: ssa('Ignore'),
    user: (d) => {
      ssa('Ignore')(d);
      d.spec.replicas = 5;
    },
    reverted: [],
  },
  {
    name: 'Flux: a field manager Flux does not take over keeps the fields Git does not set',
    tool: 'flux',
    manager: 'platform-tool',
    user: (d) => {
      d.spec.replicas = 5;
      d.metadata.labels.team = 'checkout';
    },
    reverted: ['.spec.replicas'],
  },
  {
    name: 'Flux: the same values as Git are no change to take back',
    tool: 'flux',
    user: () => undefined,
    reverted: [],
  },
  {
    name: 'Flux HelmRelease, drift detection enabled: the fields helm-controller wrote go back, a label it does not render stays',
    tool: 'flux-helm',
    helm: { mode: 'enabled' },
    user: (d) => {
      d.spec.replicas = 5;
      d.spec.template.spec.containers[0].image = 'nginx:1.26';
      d.metadata.labels.team = 'checkout';
    },
    reverted: ['.spec.replicas', '.spec.template.spec.containers[name="web"].image'],
  },
  {
    name: 'Flux HelmRelease, drift detection warn: the drift is reported, nothing goes back',
    tool: 'flux-helm',
    helm: { mode: 'warn' },
    user: (d) => {
      d.spec.replicas = 5;
      d.spec.template.spec.containers[0].image = 'nginx:1.26';
    },
    reverted: [],
  },
  {
    name: 'Flux HelmRelease, drift detection disabled: nothing goes back',
    tool: 'flux-helm',
    helm: { mode: 'disabled' },
    user: (d) => {
      d.spec.replicas = 5;
    },
    reverted: [],
  },
  {
    name: 'Flux HelmRelease, drift detection enabled, the object annotated driftDetection: disabled: nothing goes back',
    tool: 'flux-helm',
    helm: { mode: 'enabled' },
    git: (d) => {
      d.metadata.annotations = { ...d.metadata.annotations, 'helm.toolkit.fluxcd.io/driftDetection': 'disabled' };
    },
    user: (d) => {
      d.spec.replicas = 5;
      d.spec.template.spec.containers[0].image = 'nginx:1.26';
    },
    reverted: [],
  },
  {
    name: 'Argo CD with self-heal: Git’s fields go back, a label Git does not set stays',
    tool: 'argocd',
    argo: { selfHeal: true },
    user: (d) => {
      d.spec.replicas = 5;
      d.spec.template.spec.containers[0].image = 'nginx:1.26';
      d.metadata.labels.team = 'checkout';
    },
    reverted: ['.spec.replicas', '.spec.template.spec.containers[name="web"].image'],
  },
  {
    name: 'Argo CD: ignoreDifferences without RespectIgnoreDifferences, the next sync still writes Git’s replicas',
    tool: 'argocd',
    argo: { selfHeal: true, ignoreReplicas: true },
    user: (d) => {
      d.spec.replicas = 5;
    },
    reverted: ['.spec.replicas'],
  },
  {
    name: 'Argo CD: ignoreDifferences with RespectIgnoreDifferences keeps the hand-set replicas',
    tool: 'argocd',
    argo: { selfHeal: true, ignoreReplicas: true, respect: true },
    user: (d) => {
      d.spec.replicas = 5;
      d.spec.template.spec.containers[0].image = 'nginx:1.26';
    },
    reverted: ['.spec.template.spec.containers[name="web"].image'],
  },
];

/** Every leaf of a manifest, in the server's notation (list items of objects by their name). */
function leaves(value: Json, prefix = '', out = new Map<string, Json>()): Map<string, Json> {
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      const name = item && typeof item === 'object' && !Array.isArray(item) ? item.name : undefined;
      leaves(item, `${prefix}[${typeof name === 'string' ? `name=${JSON.stringify(name)}` : i}]`, out);
    });
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) leaves(v, `${prefix}.${k}`, out);
  } else out.set(prefix, value);
  return out;
}

function at(value: Json, path: string): Json | undefined {
  return leaves(value).get(path);
}

const admin = () => connect('admin');
let crdsReady: Promise<void> | undefined;
const outcomes: boolean[] = [];

after(() => {
  if (outcomes.length === 0) return;
  console.log(`agreement: ${outcomes.filter(Boolean).length}/${outcomes.length} revert scenarios`);
});

for (const scenario of scenarios) {
  test(scenario.name, async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    const conn = admin();
    crdsReady ??= installApplierCrds(conn).then(() => ensureFluxApply().then(() => undefined));
    await crdsReady;
    const namespace = await freshNamespace(conn, 'reverts');
    const git = gitDeployment();
    git.metadata.namespace = namespace;
    scenario.git?.(git);
    const app = `shop-${namespace.slice(-6)}`;
    if (scenario.tool === 'flux') {
      objectOf(
        await apply(conn, 'kch-test-setup', {
          apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
          kind: 'Kustomization',
          metadata: { name: 'apps', namespace },
          spec: { interval: '10m', path: './apps', prune: true, sourceRef: { kind: 'GitRepository', name: 'repo' } },
        }),
        'Kustomization',
      );
    } else if (scenario.tool === 'flux-helm') {
      objectOf(
        await apply(conn, 'kch-test-setup', {
          apiVersion: 'helm.toolkit.fluxcd.io/v2',
          kind: 'HelmRelease',
          metadata: { name: 'web', namespace },
          spec: {
            interval: '5m',
            chart: { spec: { chart: 'web', sourceRef: { kind: 'HelmRepository', name: 'charts' } } },
            driftDetection: { mode: scenario.helm!.mode },
          },
        }),
        'HelmRelease',
      );
      // What helm-controller's post-renderer adds to each object of the release: its origin labels.
      git.metadata.labels = {
        ...git.metadata.labels,
        'helm.toolkit.fluxcd.io/name': 'web',
        'helm.toolkit.fluxcd.io/namespace': namespace,
      };
    } else {
      const argo = scenario.argo!;
      objectOf(
        await create(conn, 'kch-test-setup', {
          apiVersion: 'argoproj.io/v1alpha1',
          kind: 'Application',
          metadata: { name: app, namespace },
          spec: {
            project: 'default',
            source: { repoURL: 'https://github.com/example/shop.git', path: 'deploy', targetRevision: 'main' },
            destination: { server: 'https://kubernetes.default.svc', namespace },
            syncPolicy: {
              automated: { selfHeal: argo.selfHeal },
              syncOptions: ['ServerSideApply=true', ...(argo.respect ? ['RespectIgnoreDifferences=true'] : [])],
            },
            ...(argo.ignoreReplicas
              ? { ignoreDifferences: [{ group: 'apps', kind: 'Deployment', jsonPointers: ['/spec/replicas'] }] }
              : {}),
          },
          status: { controllerNamespace: namespace },
        } as KubeObject),
        'Application',
      );
      // What Argo CD adds to the target it applies: its tracking id naming the Application.
      git.metadata.annotations = {
        ...git.metadata.annotations,
        'argocd.argoproj.io/tracking-id': `${namespace}_${app}:apps/Deployment:${namespace}/web`,
      };
    }
    let installed = false;
    const sync = async () => {
      if (scenario.tool === 'flux') await fluxApply(cluster.kubeconfig, stringify(git), { name: 'apps', namespace });
      else if (scenario.tool === 'flux-helm') {
        // The install creates the release's objects as helm-controller; later reconciliations run
        // the drift detection only when the mode is not disabled, and correct only when enabled.
        const mode = installed ? scenario.helm!.mode : 'install';
        installed = true;
        if (mode !== 'disabled')
          await helmDriftCorrect(cluster.kubeconfig, stringify(git), { name: 'web', namespace }, mode);
      } else {
        const live = await get(conn, git as unknown as KubeObject);
        const target =
          scenario.argo?.respect && live.ok
            ? respectIgnoreDifferences(git as unknown as KubeObject, live.object, [
                { jsonPointers: ['/spec/replicas'] },
              ])
            : stringify(git);
        await argoServerSideApply(cluster.kubeconfig, target);
      }
    };
    await sync();

    // The user's manifest: Git's file (without what the controller adds), changed by hand.
    const user = gitDeployment();
    user.metadata.namespace = namespace;
    scenario.git?.(user);
    scenario.user(user);
    const dir = scratchDir('reverts');
    writeFiles(dir, { 'web.yaml': stringify(user) });
    const manager = scenario.manager ?? 'kubectl';
    const run = await runCli(
      [
        'check',
        '--kubeconfig',
        cluster.kubeconfig,
        '--context',
        'admin',
        '--field-manager',
        manager,
        '-o',
        'json',
        'web.yaml',
      ],
      { cwd: dir },
    );
    assert.ok(run.status === 0 || run.status === 1, run.stderr);
    const said = (JSON.parse(run.stdout) as { findings: { code: string; path?: string }[] }).findings
      .filter((f) => f.code === 'gitops-reverts')
      .map((f) => f.path ?? '')
      .sort();

    // The truth: the user's apply by hand, then the controller's own sync of Git.
    objectOf(await apply(conn, manager, user as unknown as KubeObject, { force: true }), 'the apply by hand');
    await sync();
    const after = objectOf(await get(conn, user as unknown as KubeObject), 'read web after the sync');
    const userLeaves = leaves(user as unknown as Json);
    const before = leaves(git as unknown as Json);
    const taken = [...userLeaves]
      .filter(([path, value]) => {
        const now = at(after as unknown as Json, path);
        // A value the user did not change (the same as Git's) cannot be taken back.
        const changed = before.get(path) === undefined || JSON.stringify(before.get(path)) !== JSON.stringify(value);
        return changed && JSON.stringify(now) !== JSON.stringify(value);
      })
      .map(([path]) => path)
      .sort();
    const agreed = JSON.stringify(said) === JSON.stringify(taken);
    outcomes.push(agreed);
    assert.deepEqual(said, taken, 'the product names exactly the fields the controller took back');
    assert.deepEqual(taken, [...scenario.reverted].sort(), 'the scenario says what the controller does');
  });
}
