// The repository a GitOps controller applies from: `check --applier flux|argocd|argocd-ssa|flux-helm` (and
// `auto`, detected from the Argo CD Application whose source path holds the file) against what the
// controller's own apply code really takes. Per scenario, in a namespace of its own, against the
// real kube-apiserver:
//   1. the controller applies Git once (Flux's fluxcd/pkg/ssa resource manager with
//      kustomize-controller's options, kubectl as Argo CD's sync sends it, or Helm 4's forced
//      server-side upgrade, the code helm-controller runs), then other writers
//      change the object (a kubectl edit, a label, a deploy script, the scale subresource);
//   2. the product checks what Git now holds as the controller's request (`check --applier … -o
//      json`, reads only): the fields it says the controller takes (`gitops-takes`);
//   3. the controller syncs Git again with its own code;
//   4. the fields whose value the sync changed and that another manager than the controller owned
//      before it must be exactly those the product named (a named map or list item covers the
//      fields under it).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { stringify } from 'yaml';
import { requireCluster } from '../support/env';
import { installGitopsCrds } from '../support/gitops-crds';
import {
  argoClientSideApply,
  argoServerSideApply,
  ensureFluxApply,
  fluxApply,
  helmUpgrade,
  respectIgnoreDifferences,
} from '../support/gitops-appliers';
import { connect, create, freshNamespace, get, objectOf, type KubeObject } from '../support/seed';
import { runCli, scratchDir, writeFiles } from '../cli/cli-process';
import { replayHistory } from './replay';
import { requireTool } from '../tools/tools';
import type { HistoryStep } from './scenario';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Tool = 'flux' | 'argocd' | 'argocd-ssa' | 'flux-helm';

interface Scenario {
  readonly name: string;
  readonly tool: Tool;
  /** `--applier` as given (default: the tool); `auto` needs the Application and a repository. */
  readonly applier?: 'auto';
  /** What Git holds at the judged sync: Git's Deployment with these changes. */
  readonly git?: (d: Deployment) => void;
  /** Git at the first sync, when it differs. */
  readonly firstGit?: (d: Deployment) => void;
  /** What happens between the two syncs (`${namespace}` replaced). */
  readonly between: readonly HistoryStep[];
  /** Argo CD: the Application's ignoreDifferences of /spec/replicas with RespectIgnoreDifferences. */
  readonly respectReplicas?: boolean;
  /** Git's file is a resource of a kustomization in the source path: checked through the overlay kustomize builds. */
  readonly overlay?: boolean;
  /** The context the check runs as (default admin): CI often reads with a credential that may not write. */
  readonly context?: 'viewer';
  /** A HorizontalPodAutoscaler targets the Deployment: the controller's replicas start a fight, said too. */
  readonly autoscaler?: boolean;
  /** The fields the scenario is about, in the server's notation: what the controller takes. */
  readonly taken: readonly string[];
}

interface Deployment {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels: Record<string, string>; annotations?: Record<string, string> };
  spec: {
    replicas?: number;
    selector: { matchLabels: Record<string, string> };
    template: {
      metadata: { labels: Record<string, string> };
      spec: { containers: { name: string; image: string; env?: { name: string; value: string }[] }[] };
    };
  };
}

function gitDeployment(namespace: string): Deployment {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace, labels: { app: 'web' } },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'web', image: 'nginx:1.25', env: [{ name: 'MODE', value: 'production' }] }] },
      },
    },
  };
}

const target = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' };
const kubectlEditReplicas: HistoryStep = { patch: { manager: 'kubectl-edit', body: { spec: { replicas: 5 } } } };
const kubectlLabel: HistoryStep = {
  patch: { manager: 'kubectl-label', type: 'merge', body: { metadata: { labels: { tier: 'frontend' } } } },
};
const scriptImage: HistoryStep = {
  patch: {
    manager: 'deploy-script',
    body: { spec: { template: { spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } } } },
  },
};

const scenarios: Scenario[] = [
  {
    name: 'Flux takes replicas a kubectl edit changed (checked with a credential that may only read)',
    tool: 'flux',
    context: 'viewer',
    between: [kubectlEditReplicas],
    taken: ['.spec.replicas'],
  },
  {
    name: 'Flux removes a label kubectl label added that Git does not set',
    tool: 'flux',
    between: [kubectlLabel],
    taken: ['.metadata.labels.tier'],
  },
  {
    name: 'Flux removes two labels kubectl label added, one whose name starts with the other and a dot',
    tool: 'flux',
    between: [
      {
        patch: {
          manager: 'kubectl-label',
          type: 'merge',
          body: { metadata: { labels: { tier: 'frontend', 'tier.example.com/owner': 'me' } } },
        },
      },
    ],
    taken: ['.metadata.labels.tier', '.metadata.labels.tier.example.com/owner'],
  },
  {
    name: 'Flux takes an image another tool changed, from that tool',
    tool: 'flux',
    between: [scriptImage],
    taken: ['.spec.template.spec.containers[name="web"].image'],
  },
  {
    name: 'Flux leaves an annotation another tool added that Git does not set',
    tool: 'flux',
    between: [
      { patch: { manager: 'deploy-script', body: { metadata: { annotations: { 'deployed-by': 'script' } } } } },
    ],
    taken: [],
  },
  {
    name: 'Flux takes replicas from the scale subresource (an autoscaler)',
    tool: 'flux',
    between: [{ scale: { manager: 'kube-controller-manager', replicas: 5 } }],
    taken: ['.spec.replicas'],
  },
  {
    name: 'Flux removes an env var kubectl edit added, and takes the replicas',
    tool: 'flux',
    between: [
      kubectlEditReplicas,
      {
        patch: {
          manager: 'kubectl-edit',
          body: {
            spec: { template: { spec: { containers: [{ name: 'web', env: [{ name: 'DEBUG', value: '1' }] }] } } },
          },
        },
      },
    ],
    taken: ['.spec.replicas', '.spec.template.spec.containers[name="web"].env[name="DEBUG"]'],
  },
  {
    name: 'Flux: a change in Git to its own field takes nothing from anyone',
    tool: 'flux',
    between: [],
    git: (d) => {
      d.spec.template.spec.containers[0]!.image = 'nginx:1.26';
    },
    taken: [],
  },
  {
    name: 'Flux with ssa: IfNotPresent leaves the object alone',
    tool: 'flux',
    firstGit: (d) => {
      d.metadata.annotations = { 'kustomize.toolkit.fluxcd.io/ssa': 'IfNotPresent' };
    },
    git: (d) => {
      d.metadata.annotations = { 'kustomize.toolkit.fluxcd.io/ssa': 'IfNotPresent' };
    },
    between: [kubectlEditReplicas, kubectlLabel],
    taken: [],
  },
  {
    name: 'Argo CD server-side takes replicas a kubectl edit changed, leaves a label Git does not set',
    tool: 'argocd-ssa',
    between: [kubectlEditReplicas, kubectlLabel],
    taken: ['.spec.replicas'],
  },
  {
    name: 'Argo CD server-side takes an image from a deploy script',
    tool: 'argocd-ssa',
    between: [scriptImage],
    taken: ['.spec.template.spec.containers[name="web"].image'],
  },
  {
    name: 'Argo CD server-side with RespectIgnoreDifferences on replicas keeps the hand-set count',
    tool: 'argocd-ssa',
    respectReplicas: true,
    between: [kubectlEditReplicas, scriptImage],
    taken: ['.spec.template.spec.containers[name="web"].image'],
  },
  {
    name: 'Argo CD client-side takes replicas a kubectl edit changed',
    tool: 'argocd',
    between: [kubectlEditReplicas, kubectlLabel],
    taken: ['.spec.replicas'],
  },
  {
    name: 'Flux detected from the Kustomization whose GitRepository and path hold the file (--applier auto); its replicas fight the autoscaler',
    tool: 'flux',
    applier: 'auto',
    autoscaler: true,
    between: [kubectlLabel, kubectlEditReplicas],
    taken: ['.metadata.labels.tier', '.spec.replicas'],
  },
  {
    name: 'Flux helm-controller (Helm 4’s forced upgrade) takes replicas a kubectl edit changed, leaves a label',
    tool: 'flux-helm',
    between: [kubectlEditReplicas, kubectlLabel],
    taken: ['.spec.replicas'],
  },
  {
    name: 'Flux helm-controller takes an image from a deploy script',
    tool: 'flux-helm',
    between: [scriptImage],
    taken: ['.spec.template.spec.containers[name="web"].image'],
  },
  {
    name: 'Flux detected for an overlay its source path builds (--applier auto): the take lands on the resource file',
    tool: 'flux',
    applier: 'auto',
    overlay: true,
    between: [kubectlEditReplicas],
    taken: ['.spec.replicas'],
  },
  {
    name: 'Argo CD detected from the Application whose path holds the file (--applier auto)',
    tool: 'argocd-ssa',
    applier: 'auto',
    between: [kubectlEditReplicas],
    taken: ['.spec.replicas'],
  },
];

/** Every leaf of an object in the server's notation (list items of objects by their name, else index). */
function leaves(value: Json | undefined, prefix = '', out = new Map<string, string>()): Map<string, string> {
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      const name = item && typeof item === 'object' && !Array.isArray(item) ? item.name : undefined;
      leaves(item, `${prefix}[${typeof name === 'string' ? `name=${JSON.stringify(name)}` : i}]`, out);
    });
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) leaves(v, `${prefix}.${k}`, out);
  } else if (value !== undefined) out.set(prefix, JSON.stringify(value));
  return out;
}

/** The paths a managedFields entry owns, in the same notation (a list item's key as `[name="x"]`). */
function ownedPaths(fields: Json, prefix = '', out: string[] = []): string[] {
  if (!fields || typeof fields !== 'object' || Array.isArray(fields)) return out;
  for (const [k, v] of Object.entries(fields)) {
    if (k === '.') {
      out.push(prefix);
      continue;
    }
    let step: string;
    if (k.startsWith('f:')) step = `.${k.slice(2)}`;
    else if (k.startsWith('k:')) {
      const key = JSON.parse(k.slice(2)) as Record<string, Json>;
      step = `[${Object.entries(key)
        .map(([n, x]) => `${n}=${JSON.stringify(x)}`)
        .join(',')}]`;
    } else step = `[${k}]`;
    const below = v && typeof v === 'object' && !Array.isArray(v) ? Object.keys(v).length : 0;
    if (below === 0) out.push(prefix + step);
    else ownedPaths(v, prefix + step, out);
  }
  return out;
}

const under = (leaf: string, p: string) => leaf === p || leaf.startsWith(`${p}.`) || leaf.startsWith(`${p}[`);

const IGNORED = ['.metadata.managedFields', '.metadata.resourceVersion', '.metadata.generation', '.status'];

/** The leaves the sync changed that another manager than the controller owned before it. */
function takenLeaves(before: KubeObject, after: KubeObject, controller: string): string[] {
  const b = leaves(before as unknown as Json);
  const a = leaves(after as unknown as Json);
  const others = (before.metadata.managedFields ?? [])
    .filter((e) => (e as { manager: string }).manager !== controller)
    .flatMap((e) => ownedPaths((e as { fieldsV1?: Json }).fieldsV1 ?? null));
  return [...new Set([...b.keys(), ...a.keys()])]
    .filter((leaf) => !IGNORED.some((p) => under(leaf, p)))
    .filter((leaf) => b.get(leaf) !== a.get(leaf))
    .filter((leaf) => others.some((p) => under(leaf, p)))
    .sort();
}

const managers: Record<Tool, string> = {
  flux: 'kustomize-controller',
  argocd: 'argocd-controller',
  'argocd-ssa': 'argocd-controller',
  // The truth is Helm 4's own upgrade, which the Helm CLI sends as `helm` (helm-controller runs the
  // same code under its own name): Git's fields are that manager's, never another's taken.
  'flux-helm': 'helm',
};

const admin = () => connect('admin');
let crdsReady: Promise<void> | undefined;
const outcomes: boolean[] = [];

after(() => {
  if (outcomes.length === 0) return;
  console.log(`agreement: ${outcomes.filter(Boolean).length}/${outcomes.length} controller-request scenarios`);
});

for (const scenario of scenarios) {
  test(scenario.name, async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    const conn = admin();
    crdsReady ??= installGitopsCrds(conn).then(() => ensureFluxApply().then(() => undefined));
    await crdsReady;
    const namespace = await freshNamespace(conn, 'takes');
    const app = `shop-${namespace.slice(-6)}`;
    const repoURL = `https://git.example.com/team/${namespace}.git`;
    const argo = scenario.tool === 'argocd' || scenario.tool === 'argocd-ssa';
    if (scenario.tool === 'flux-helm' && !requireTool(t, 'helm4')) return;
    if (argo) {
      objectOf(
        await create(conn, 'kch-test-setup', {
          apiVersion: 'argoproj.io/v1alpha1',
          kind: 'Application',
          metadata: { name: app, namespace },
          spec: {
            project: 'default',
            source: { repoURL, path: 'deploy', targetRevision: 'main' },
            destination: { server: 'https://kubernetes.default.svc', namespace },
            syncPolicy: {
              automated: { selfHeal: true },
              syncOptions: [
                ...(scenario.tool === 'argocd-ssa' ? ['ServerSideApply=true'] : []),
                ...(scenario.respectReplicas ? ['RespectIgnoreDifferences=true'] : []),
              ],
            },
            ...(scenario.respectReplicas
              ? { ignoreDifferences: [{ group: 'apps', kind: 'Deployment', jsonPointers: ['/spec/replicas'] }] }
              : {}),
          },
          status: { controllerNamespace: namespace },
        } as KubeObject),
        'Application',
      );
    }
    if (scenario.tool === 'flux' && scenario.applier === 'auto') {
      // The Kustomization that applies ./deploy of the GitRepository whose URL is the file's remote.
      objectOf(
        await create(conn, 'kch-test-setup', {
          apiVersion: 'source.toolkit.fluxcd.io/v1',
          kind: 'GitRepository',
          metadata: { name: 'repo', namespace },
          spec: { url: repoURL, interval: '1m', ref: { branch: 'main' } },
        } as KubeObject),
        'GitRepository',
      );
      objectOf(
        await create(conn, 'kch-test-setup', {
          apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
          kind: 'Kustomization',
          metadata: { name: 'apps', namespace },
          spec: { interval: '10m', path: './deploy', prune: true, sourceRef: { kind: 'GitRepository', name: 'repo' } },
        } as KubeObject),
        'Kustomization',
      );
    }
    if (scenario.autoscaler)
      objectOf(
        await create(conn, 'kch-test-setup', {
          apiVersion: 'autoscaling/v2',
          kind: 'HorizontalPodAutoscaler',
          metadata: { name: 'web-hpa', namespace },
          spec: {
            scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
            minReplicas: 2,
            maxReplicas: 6,
          },
        } as KubeObject),
        'HorizontalPodAutoscaler',
      );
    const owner = { name: 'apps', namespace };
    const gitAt = (change?: (d: Deployment) => void): Deployment => {
      const d = gitDeployment(namespace);
      change?.(d);
      return d;
    };
    // What the controller sends: Git's object, with Argo CD's tracking id.
    const sent = (d: Deployment): Deployment =>
      argo
        ? {
            ...d,
            metadata: {
              ...d.metadata,
              annotations: {
                ...d.metadata.annotations,
                'argocd.argoproj.io/tracking-id': `${namespace}_${app}:apps/Deployment:${namespace}/web`,
              },
            },
          }
        : d;
    const sync = async (d: Deployment) => {
      const text = stringify(sent(d));
      if (scenario.tool === 'flux') await fluxApply(cluster.kubeconfig, text, owner);
      else if (scenario.tool === 'flux-helm') await helmUpgrade(cluster.kubeconfig, text, { name: 'web', namespace });
      else if (scenario.tool === 'argocd') await argoClientSideApply(cluster.kubeconfig, text);
      else {
        const live = await get(conn, sent(d) as unknown as KubeObject);
        const body =
          scenario.respectReplicas && live.ok
            ? respectIgnoreDifferences(sent(d) as unknown as KubeObject, live.object, [
                { jsonPointers: ['/spec/replicas'] },
              ])
            : text;
        await argoServerSideApply(cluster.kubeconfig, body);
      }
    };
    await sync(gitAt(scenario.firstGit ?? scenario.git));
    const steps = JSON.parse(JSON.stringify(scenario.between).replaceAll('${namespace}', namespace)) as HistoryStep[];
    await replayHistory(
      conn,
      steps,
      { apiVersion: target.apiVersion, kind: target.kind, metadata: { name: target.name, namespace } },
      namespace,
    );

    // The product: Git's file as the controller's request, from reads only.
    const git = gitAt(scenario.git);
    const dir = scratchDir('takes');
    const file = scenario.applier === 'auto' ? path.join('deploy', 'web.yaml') : 'web.yaml';
    writeFiles(dir, {
      [file]: stringify(git),
      ...(scenario.overlay ? { [path.join('deploy', 'kustomization.yaml')]: 'resources:\n- web.yaml\n' } : {}),
    });
    const kustomize = scenario.overlay ? requireTool(t, 'kustomize') : undefined;
    if (scenario.overlay && !kustomize) return;
    if (scenario.applier === 'auto') {
      // A clone of the Application's repository: its remote is the Application's repoURL.
      const git = (...args: string[]) => spawnSync('git', args, { cwd: dir, encoding: 'utf8' });
      assert.equal(git('init', '-q').status, 0, 'git init');
      assert.equal(
        git('remote', 'add', 'origin', repoURL.replace('https://', 'git@').replace('.com/', '.com:')).status,
        0,
      );
    }
    const run = await runCli(
      [
        'check',
        '--kubeconfig',
        cluster.kubeconfig,
        '--context',
        scenario.context ?? 'admin',
        '--applier',
        scenario.applier ?? scenario.tool,
        ...(kustomize ? ['--kustomize-binary', kustomize] : []),
        '-o',
        'json',
        file,
      ],
      { cwd: dir },
    );
    assert.ok(run.status === 0 || run.status === 1, run.stderr);
    const report = JSON.parse(run.stdout) as {
      findings: { code: string; path?: string; message: string; file: string }[];
      objects?: unknown;
    };
    const said = report.findings
      .filter((f) => f.code === 'gitops-takes')
      .map((f) => f.path ?? '')
      .sort();
    if (process.env.KCH_DIFF_VERBOSE) console.log(scenario.name, JSON.stringify(report.findings, null, 1));
    if (scenario.applier === 'auto' && said.length > 0)
      assert.match(
        report.findings.find((f) => f.code === 'gitops-takes')!.message,
        argo
          ? new RegExp(`^Argo CD application ${app} takes`)
          : new RegExp(
              `^Flux Kustomization ${namespace}/apps (takes|removes) .* at its next reconciliation \\(every 10m\\)`,
            ),
        'the detected controller object is named',
      );
    for (const f of report.findings.filter((x) => x.code === 'gitops-takes'))
      assert.equal(f.file, file, 'said on the file that writes the field');
    const fights = report.findings.filter((f) => f.code === 'gitops-fight');
    if (scenario.autoscaler)
      assert.match(
        fights[0]?.message ?? JSON.stringify(report.findings),
        new RegExp(
          `^Flux Kustomization ${namespace}/apps sets replicas: 3 every 10m, and the HorizontalPodAutoscaler web-hpa sets`,
        ),
      );
    else assert.deepEqual(fights, [], 'no autoscaler, no fight');
    assert.deepEqual(
      report.findings.filter((f) => f.code === 'forbidden' || f.code === 'permission-unknown'),
      [],
      "the controller sends with its own credential: the user's may only read",
    );
    assert.ok(
      !report.findings.some((f) => f.code === 'field-conflict'),
      'a controller forces its apply: no field-conflict',
    );

    // The truth: the controller's own sync of Git.
    const before = objectOf(await get(conn, git as unknown as KubeObject), 'read web before the sync');
    await sync(git);
    const afterSync = objectOf(await get(conn, git as unknown as KubeObject), 'read web after the sync');
    const truth = takenLeaves(before, afterSync, managers[scenario.tool]);
    const covered =
      truth.every((leaf) => said.some((p) => under(leaf, p))) &&
      said.every((p) => truth.some((leaf) => under(leaf, p)));
    outcomes.push(covered);
    assert.ok(
      covered,
      `the product names exactly the fields the controller took: said ${JSON.stringify(said)}, taken ${JSON.stringify(truth)}`,
    );
    assert.deepEqual(said, [...scenario.taken].sort(), 'the scenario says what the controller takes');
  });
}
