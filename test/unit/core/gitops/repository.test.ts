// Which GitOps source applies a file of the repository (server/src/core/gitops/repository.ts): the
// repository compared as a user reads it, the path rules of Argo CD's directory sources (recurse,
// include, exclude, the skip marker, kustomize or Helm taking over) and of Flux's generated
// kustomization (every YAML file below, a kustomization in a subfolder deciding for it).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  applicationSources,
  applierOfSources,
  globMatch,
  kustomizationSource,
  repositoryKey,
  sourcesOfFile,
  type RepositorySource,
} from '../../../../server/src/core/gitops/repository';
import { applicationPolicy, kustomizationPolicy } from '../../../../server/src/core/gitops/policy';
import type { JsonObject, JsonValue } from '../../../../server/src/core/json';

test('a repository URL is its host and path, whatever the scheme, user, port or .git', () => {
  const cases: [string, string | undefined][] = [
    ['https://github.com/Org/Shop.git', 'github.com/org/shop'],
    ['https://github.com/org/shop', 'github.com/org/shop'],
    ['https://github.com/org/shop/', 'github.com/org/shop'],
    ['git@github.com:org/shop.git', 'github.com/org/shop'],
    ['ssh://git@github.com/org/shop.git', 'github.com/org/shop'],
    ['ssh://git@github.com:22/org/shop.git', 'github.com/org/shop'],
    ['https://user:token@gitlab.example.com/group/sub/shop.git', 'gitlab.example.com/group/sub/shop'],
    ['  https://github.com/org/shop.git  ', 'github.com/org/shop'],
    ['file:///srv/git/shop.git', undefined],
    ['/srv/git/shop', undefined],
    ['./shop', undefined],
    ['', undefined],
    ['https://github.com', undefined],
  ];
  for (const [url, key] of cases) assert.equal(repositoryKey(url), key, url);
});

test("globs match as Argo CD's (gobwas/glob, `*` crossing folders), without a regular expression's backtracking", () => {
  const cases: [string, string, boolean][] = [
    ['*.yaml', 'web.yaml', true],
    ['*.yaml', 'sub/web.yaml', true],
    ['*.yaml', 'web.yml', false],
    ['{*.yaml,*.yml}', 'web.yml', true],
    ['{prod,staging}/*', 'prod/web.yaml', true],
    ['{prod,staging}/*', 'dev/web.yaml', false],
    ['web-?.yaml', 'web-1.yaml', true],
    ['web-?.yaml', 'web-10.yaml', false],
    ['web-[0-9].yaml', 'web-7.yaml', true],
    ['web-[!0-9].yaml', 'web-7.yaml', false],
    ['web-[!0-9].yaml', 'web-a.yaml', true],
    ['config\\*.yaml', 'config*.yaml', true],
    ['config\\*.yaml', 'configx.yaml', false],
    ['{a,{b,c}}.yaml', 'c.yaml', true],
    ['{unbalanced', 'unbalanced', false],
    ['[unclosed', 'unclosed', false],
  ];
  for (const [pattern, text, expected] of cases)
    assert.equal(globMatch(pattern, text), expected, `${pattern} ~ ${text}`);
  // A pattern written to make a backtracking matcher take exponential time answers at once.
  const hostile = `${'*a'.repeat(40)}b`;
  const started = process.cpuUsage();
  assert.equal(globMatch(hostile, 'a'.repeat(200)), false);
  const { user, system } = process.cpuUsage(started);
  assert.ok(
    user + system < 2_000_000,
    `a hostile pattern is matched in bounded work (${(user + system) / 1000} ms of CPU)`,
  );
  // Brace alternatives are bounded: 2^10 alternatives are refused, not expanded.
  assert.equal(globMatch('{a,b}'.repeat(10), 'a'.repeat(10)), false);
});

const repo = 'https://github.com/org/shop.git';
const argo = (path: string, directory?: RepositorySource['directory'], repoURL = repo): RepositorySource => ({
  applier: { kind: 'argocd', name: 'shop', namespace: 'argocd' },
  repoURL,
  path,
  ...(directory ? { directory } : {}),
});
const flux = (path: string, repoURL = repo): RepositorySource => ({
  applier: { kind: 'flux-kustomize', name: 'apps', namespace: 'flux-system' },
  repoURL,
  path,
});

interface Case {
  name: string;
  file: string;
  text?: string;
  source: RepositorySource;
  kustomizations?: string[];
  charts?: string[];
  remotes?: string[];
  expected: 'none' | 'sends' | `rendered by ${'kustomization' | 'chart'} at ${string}`;
}

const cases: Case[] = [
  {
    name: 'Argo CD: a file in the source path',
    file: 'apps/shop/web.yaml',
    source: argo('apps/shop'),
    expected: 'sends',
  },
  {
    name: 'Argo CD: the path written ./apps/shop/',
    file: 'apps/shop/web.yaml',
    source: argo('./apps/shop/'),
    expected: 'sends',
  },
  {
    name: 'Argo CD: JSON and jsonnet files too',
    file: 'apps/shop/web.json',
    source: argo('apps/shop'),
    expected: 'sends',
  },
  { name: 'Argo CD: not a manifest name', file: 'apps/shop/README.md', source: argo('apps/shop'), expected: 'none' },
  {
    name: 'Argo CD: a subfolder is not read by default',
    file: 'apps/shop/db/db.yaml',
    source: argo('apps/shop'),
    expected: 'none',
  },
  {
    name: 'Argo CD: a subfolder is read with recurse',
    file: 'apps/shop/db/db.yaml',
    source: argo('apps/shop', { recurse: true }),
    expected: 'sends',
  },
  {
    name: 'Argo CD: exclude leaves a file out',
    file: 'apps/shop/db/db.yaml',
    source: argo('apps/shop', { recurse: true, exclude: 'db/*' }),
    expected: 'none',
  },
  {
    name: 'Argo CD: include keeps only what it matches',
    file: 'apps/shop/web.yaml',
    source: argo('apps/shop', { include: '{svc-*,deploy-*}' }),
    expected: 'none',
  },
  {
    name: 'Argo CD: the skip marker leaves a file out',
    file: 'apps/shop/web.yaml',
    text: '# +argocd:skip-file-rendering\nkind: ConfigMap\n',
    source: argo('apps/shop'),
    expected: 'none',
  },
  {
    name: 'Argo CD: a kustomization in the path decides',
    file: 'apps/shop/web.yaml',
    source: argo('apps/shop'),
    kustomizations: ['apps/shop'],
    expected: 'rendered by kustomization at apps/shop',
  },
  {
    name: 'Argo CD: a chart in the path decides',
    file: 'apps/shop/templates/web.yaml',
    source: argo('apps/shop'),
    charts: ['apps/shop'],
    expected: 'rendered by chart at apps/shop',
  },
  { name: 'Argo CD: a file outside the path', file: 'apps/cart/web.yaml', source: argo('apps/shop'), expected: 'none' },
  {
    name: 'Argo CD: a folder named like the path',
    file: 'apps/shop-old/web.yaml',
    source: argo('apps/shop'),
    expected: 'none',
  },
  { name: 'Argo CD: the whole repository', file: 'web.yaml', source: argo(''), expected: 'sends' },
  {
    name: 'Argo CD: another repository',
    file: 'apps/shop/web.yaml',
    source: argo('apps/shop', undefined, 'https://github.com/org/other.git'),
    expected: 'none',
  },
  {
    name: 'Argo CD: the same repository cloned over SSH',
    file: 'apps/shop/web.yaml',
    source: argo('apps/shop'),
    remotes: ['git@github.com:org/shop.git'],
    expected: 'sends',
  },
  {
    name: 'a path that leaves the repository matches nothing',
    file: 'apps/shop/web.yaml',
    source: argo('../shop'),
    expected: 'none',
  },
  {
    name: 'Flux: a file in the path',
    file: 'clusters/prod/apps/web.yaml',
    source: flux('./clusters/prod'),
    expected: 'sends',
  },
  { name: 'Flux: JSON is not read', file: 'clusters/prod/web.json', source: flux('./clusters/prod'), expected: 'none' },
  {
    name: 'Flux: the kustomization of the path decides',
    file: 'clusters/prod/web.yaml',
    source: flux('./clusters/prod'),
    kustomizations: ['clusters/prod'],
    expected: 'rendered by kustomization at clusters/prod',
  },
  {
    name: 'Flux: a kustomization in a subfolder decides for what is below it',
    file: 'clusters/prod/shop/base/web.yaml',
    source: flux('./clusters/prod'),
    kustomizations: ['clusters/prod/shop'],
    expected: 'rendered by kustomization at clusters/prod/shop',
  },
  {
    name: 'Flux: a kustomization file itself is not an object it sends',
    file: 'clusters/prod/kustomization.yaml',
    source: flux('./clusters/prod'),
    expected: 'none',
  },
  {
    name: 'Flux: outside the path',
    file: 'clusters/staging/web.yaml',
    source: flux('./clusters/prod'),
    expected: 'none',
  },
];

for (const c of cases) {
  test(`which source applies a file: ${c.name}`, () => {
    const matches = sourcesOfFile(
      { remotes: c.remotes ?? [repo], path: c.file, ...(c.text !== undefined ? { text: c.text } : {}) },
      [c.source],
      {
        hasKustomization: (folder) => (c.kustomizations ?? []).includes(folder),
        hasChart: (folder) => (c.charts ?? []).includes(folder),
      },
    );
    const got = matches.map((m) => (m.how === 'sends' ? 'sends' : `rendered by ${m.by} at ${m.folder}`));
    assert.deepEqual(got, c.expected === 'none' ? [] : [c.expected]);
  });
}

// The controllers' objects as the cluster answers them (their CRDs' shapes: argo-cd v3.5.7
// application-crd.yaml, kustomize-controller v1.9.6 and source-controller's GitRepository), read as
// hostile input: a value of another type is not written.
const application = (spec: JsonObject): JsonObject => ({
  apiVersion: 'argoproj.io/v1alpha1',
  kind: 'Application',
  metadata: { name: 'shop', namespace: 'argocd' },
  spec,
});
const kustomization = (spec: JsonObject): JsonObject => ({
  apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
  kind: 'Kustomization',
  metadata: { name: 'apps', namespace: 'flux-system' },
  spec: { interval: '10m', ...spec },
});
const gitRepository = (name: string, namespace: string, url: JsonValue): JsonObject => ({
  apiVersion: 'source.toolkit.fluxcd.io/v1',
  kind: 'GitRepository',
  metadata: { name, namespace },
  spec: { url },
});

test("an Application's sources: each with a repository and a path, its directory options; a chart source has no folder", () => {
  const app = application({
    source: {
      repoURL: 'https://github.com/org/shop.git',
      path: 'deploy',
      directory: { recurse: true, exclude: '*.json' },
    },
    sources: [
      { repoURL: 'https://charts.example.com', chart: 'web' },
      { repoURL: 'https://github.com/org/extra.git', path: 7 },
      { repoURL: 'https://github.com/org/extra.git', path: 'more', directory: { include: 5 } },
    ],
  });
  assert.deepEqual(applicationSources(app), [
    {
      applier: { kind: 'argocd', name: 'shop', namespace: 'argocd' },
      repoURL: 'https://github.com/org/shop.git',
      path: 'deploy',
      directory: { recurse: true, exclude: '*.json' },
    },
    {
      applier: { kind: 'argocd', name: 'shop', namespace: 'argocd' },
      repoURL: 'https://github.com/org/extra.git',
      path: 'more',
      directory: {},
    },
  ]);
  assert.deepEqual(applicationSources({ ...app, kind: 'ApplicationSet' }), []);
  assert.deepEqual(applicationSources(null), []);
});

test("a Kustomization's source: the GitRepository its sourceRef names (its own namespace unless another is said), and that one's URL", () => {
  const repos = [
    gitRepository('repo', 'flux-system', 'ssh://git@github.com/org/fleet.git'),
    gitRepository('repo', 'other', 'https://github.com/org/other.git'),
    gitRepository('bad', 'flux-system', 42),
  ];
  assert.deepEqual(
    kustomizationSource(kustomization({ path: './apps', sourceRef: { kind: 'GitRepository', name: 'repo' } }), repos),
    {
      applier: { kind: 'flux-kustomize', name: 'apps', namespace: 'flux-system' },
      repoURL: 'ssh://git@github.com/org/fleet.git',
      path: './apps',
    },
  );
  assert.equal(
    kustomizationSource(
      kustomization({ path: './apps', sourceRef: { kind: 'GitRepository', name: 'repo', namespace: 'other' } }),
      repos,
    )?.repoURL,
    'https://github.com/org/other.git',
  );
  for (const sourceRef of [
    { kind: 'OCIRepository', name: 'repo' },
    { kind: 'GitRepository', name: 'bad' },
    { kind: 'GitRepository', name: 'missing' },
    'repo',
  ])
    assert.equal(
      kustomizationSource(kustomization({ path: './apps', sourceRef }), repos),
      undefined,
      JSON.stringify(sourceRef),
    );
});

test('the applier of a file: Argo CD (server-side with ServerSideApply=true) or Flux, with the policy; a chart is left to Helm', () => {
  const argo = applicationPolicy(application({ syncPolicy: { syncOptions: ['ServerSideApply=true'] } }))!;
  const fluxPolicy = kustomizationPolicy(kustomization({ path: './apps' }))!;
  const argoSource: RepositorySource = {
    applier: { kind: 'argocd', name: 'shop', namespace: 'argocd' },
    repoURL: 'https://github.com/org/shop.git',
    path: 'deploy',
  };
  const fluxSource: RepositorySource = {
    applier: { kind: 'flux-kustomize', name: 'apps', namespace: 'flux-system' },
    repoURL: 'https://github.com/org/shop.git',
    path: './apps',
  };
  const argoApplier = applierOfSources([{ source: argoSource, how: 'sends' }], [argo, fluxPolicy]);
  assert.equal(argoApplier?.name, 'argocd-ssa');
  assert.equal(argoApplier?.policy, argo);
  assert.equal(
    argoApplier?.because,
    'Argo CD Application argocd/shop (path deploy of https://github.com/org/shop.git)',
  );
  assert.equal(applierOfSources([{ source: argoSource, how: 'sends' }], [])?.name, 'argocd');
  const fluxApplier = applierOfSources(
    [{ source: fluxSource, how: 'rendered', by: 'kustomization', folder: 'apps' }],
    [argo, fluxPolicy],
  );
  assert.equal(fluxApplier?.name, 'flux');
  assert.equal(fluxApplier?.policy, fluxPolicy);
  assert.equal(
    applierOfSources([{ source: argoSource, how: 'rendered', by: 'chart', folder: 'deploy' }], [argo]),
    undefined,
  );
  assert.equal(applierOfSources([], [argo]), undefined);
});
