// Who applies an object and the policy of the GitOps object that does (cluster/gitops.ts, through the
// one facts path, cluster/facts.ts), against the real kube-apiserver with Argo CD's and Flux's CRDs:
// the Application a bare tracking id names found in its controller's namespace, the Application in
// the object's own namespace, the Kustomization and HelmRelease read by name; a Kustomization that
// does not exist, a user who may not read them, a kind the cluster does not serve are unknown with
// the reason, never a guess. The requests are a GET per name and, for a bare Argo CD name, one LIST
// that selects that name: never a LIST of a namespace's Applications or Kustomizations. For
// `--applier auto` (and the editor's applier setting), the sources: one LIST of each kind across
// namespaces, and of GitRepositories for the Kustomizations' URLs.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import {
  createClusterConnection,
  createFactsSource,
  type ClusterConnection,
  type FactsSource,
} from '../../../server/src/cluster';
import type { Discovery } from '../../../server/src/cluster/discovery';
import { GitopsPolicies } from '../../../server/src/cluster/gitops';
import type { ClusterTransport } from '../../../server/src/cluster/http';
import type { ResourceFacts } from '../../../server/src/core/findings';
import type { ApplierPolicy, PolicyFacts } from '../../../server/src/core/gitops/model';
import { auditSentinel, readAuditEvents } from '../../support/cluster';
import { requireCluster } from '../../support/env';
import { connect, create, objectOf, request, type KubeObject } from '../../support/seed';
import { seedAppliers } from '../../support/seed-appliers';

const open: { dispose(): void }[] = [];
after(() => open.forEach((c) => c.dispose()));

async function factsOf(source: FactsSource, object: KubeObject): Promise<ResourceFacts> {
  const answer = await source.read({
    apiVersion: object.apiVersion,
    kind: object.kind,
    name: object.metadata.name,
    namespace: object.metadata.namespace!,
  });
  assert.ok(answer.ok, `facts of ${object.metadata.name}`);
  return answer.facts;
}

const policyOf = (facts: ResourceFacts): PolicyFacts | undefined => facts.appliers?.policies[0];
const readPolicy = (facts: ResourceFacts): ApplierPolicy | undefined => {
  const p = policyOf(facts);
  return p?.state === 'read' ? p.policy : undefined;
};
const reason = (facts: ResourceFacts): string => {
  const p = policyOf(facts);
  return p?.state === 'unknown' ? p.reason : `not unknown: ${JSON.stringify(p)}`;
};

test('the policies the marks name, read by name; unknown with the reason when absent or forbidden', async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  const admin = connect('admin', cluster.kubeconfig);
  const scene = await seedAppliers(admin, 'gitops-policies');
  const userAgent = `kch-gitops-test-${process.pid}`;
  const connection: ClusterConnection = await createClusterConnection(
    { kubeconfig: cluster.kubeconfig, context: 'admin' },
    { userAgent },
  );
  open.push(connection);
  const source = createFactsSource(connection);
  open.push(source);
  const o = scene.objects;

  const argo = await factsOf(source, o['argo-tracked']);
  assert.deepEqual(
    readPolicy(argo) && { name: readPolicy(argo)!.name, namespace: readPolicy(argo)!.namespace },
    { name: scene.app, namespace: scene.controllerNamespace },
    "a bare name: the Application in its controller's namespace, not the one of that name elsewhere",
  );
  const billing = await factsOf(source, o['argo-other-namespace']);
  assert.equal(readPolicy(billing)?.namespace, scene.namespace);
  const billingPolicy = readPolicy(billing);
  assert.equal(billingPolicy?.kind === 'argocd' && billingPolicy.automated, false);

  const flux = await factsOf(source, o['flux-kustomize']);
  assert.deepEqual(readPolicy(flux), {
    kind: 'flux-kustomize',
    name: 'shop',
    namespace: scene.namespace,
    interval: '10m',
    suspend: false,
    force: false,
    prune: true,
    path: './apps/shop',
  });
  const helm = await factsOf(source, o['flux-helm']);
  const helmPolicy = readPolicy(helm);
  assert.equal(helmPolicy?.kind === 'flux-helm' && helmPolicy.driftDetection, 'enabled');
  assert.equal(helm.appliers?.policies.length, 1, 'the Helm release has no policy to read');

  assert.match(reason(await factsOf(source, o['flux-gone'])), /^Flux Kustomization .*\/gone does not exist/);
  assert.match(reason(await factsOf(source, o['manager-only'])), /no label or annotation on the object names/);
  assert.equal((await factsOf(source, o['argo-copied'])).appliers, undefined, 'a copied tracking id names nobody');
  assert.equal((await factsOf(source, o.plain)).appliers, undefined);

  // The editor's peek answers the same once the reads have landed (they were read above).
  const peeked = source.peek({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    name: 'flux-web',
    namespace: scene.namespace,
  });
  assert.deepEqual(peeked.appliers, flux.appliers);

  // What was sent: a GET per policy object, and for the bare Argo CD name one LIST selecting that name.
  await auditSentinel(cluster.auditLog, (p) => request(admin, 'GET', p));
  const mine = readAuditEvents(cluster.auditLog).filter(
    (e) =>
      e.userAgent === userAgent &&
      ['applications', 'kustomizations', 'helmreleases'].includes(e.objectRef?.resource ?? ''),
  );
  assert.ok(mine.length >= 4, 'the policies were read');
  for (const e of mine) {
    if (e.verb === 'get') continue;
    assert.equal(e.verb, 'list', e.requestURI);
    assert.equal(e.objectRef?.resource, 'applications', e.requestURI);
    assert.equal(e.objectRef?.namespace, undefined, e.requestURI);
    assert.match(e.requestURI, new RegExp(`fieldSelector=metadata.name%3D${scene.app}$`), e.requestURI);
  }

  // A user who may read nothing: each policy is unknown, with the server's refusal.
  const stranger = await createClusterConnection({ kubeconfig: cluster.kubeconfig, context: 'stranger' });
  open.push(stranger);
  const refused = await stranger.gitopsPolicies.get({
    kind: 'flux-kustomize',
    name: 'shop',
    namespace: scene.namespace,
    evidence: 'test',
  });
  assert.equal(refused?.state, 'unknown');
  assert.match(refused?.state === 'unknown' ? refused.reason : '', /may not be read: .*forbidden/);
  const bare = await stranger.gitopsPolicies.get({ kind: 'argocd', name: scene.app, evidence: 'test' });
  assert.match(
    bare?.state === 'unknown' ? bare.reason : '',
    /without its namespace .* may not be listed across namespaces/,
  );
});

test("a kind the cluster does not serve: the controller's CRD is not installed, said as such", async () => {
  const notServed = {
    resolve: () => Promise.resolve({ ok: false, problem: { kind: 'kindNotServed', message: 'not served' } }),
  } as unknown as Discovery;
  const transport = {
    send: () => assert.fail('nothing is asked of a kind that is not served'),
  } as unknown as ClusterTransport;
  const policies = new GitopsPolicies(transport, notServed, { initialBackoffMs: 10, maxBackoffMs: 10 });
  open.push(policies);
  const answer = await policies.get({ kind: 'flux-helm', name: 'web', namespace: 'apps', evidence: 'test' });
  assert.deepEqual(answer, {
    state: 'unknown',
    sighting: { kind: 'flux-helm', name: 'web', namespace: 'apps', evidence: 'test' },
    reason:
      "the cluster does not serve Flux HelmReleases (helm.toolkit.fluxcd.io/v2): the controller's CustomResourceDefinition is not installed here",
  });
  // A Helm release has no policy object; a name the API server would refuse never reaches a URL.
  assert.equal(await policies.get({ kind: 'helm', name: 'web', namespace: 'apps', evidence: 'test' }), undefined);
});

test('the sources for --applier auto: every Application and Kustomization as the folder of the repository it applies, in one LIST of each across namespaces; none for a user who may not list them, and why', async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  const admin = connect('admin', cluster.kubeconfig);
  const scene = await seedAppliers(admin, 'gitops-sources');
  // The GitRepository the scene's Kustomization names: its URL is the repository.
  objectOf(
    await create(admin, 'kch-test-setup', {
      apiVersion: 'source.toolkit.fluxcd.io/v1',
      kind: 'GitRepository',
      metadata: { name: 'shop', namespace: scene.namespace },
      spec: { url: 'ssh://git@github.com/example/fleet.git', interval: '1m' },
    } as KubeObject),
    'GitRepository',
  );
  const userAgent = `kch-gitops-sources-${process.pid}`;
  const connection = await createClusterConnection({ kubeconfig: cluster.kubeconfig, context: 'admin' }, { userAgent });
  open.push(connection);
  assert.equal(connection.gitopsPolicies.peekRepositorySources(), undefined, 'nothing known before the read');
  const read = await connection.gitopsPolicies.repositorySources();
  assert.deepEqual(read.unread, []);
  const mine = read.sources.filter(
    (s) => s.applier.namespace === scene.namespace || s.applier.namespace === scene.controllerNamespace,
  );
  assert.deepEqual(
    mine.map((s) => `${s.applier.kind} ${s.applier.name} ${s.repoURL} ${s.path}`).sort(),
    [
      'argocd billing https://github.com/example/billing.git .',
      `argocd ${scene.app} https://github.com/example/other.git .`,
      `argocd ${scene.app} https://github.com/example/shop.git deploy/shop`,
      `flux-kustomize shop ssh://git@github.com/example/fleet.git ./apps/shop`,
    ].sort(),
  );
  assert.ok(
    read.policies.some((p) => p.kind === 'flux-kustomize' && p.name === 'shop' && p.namespace === scene.namespace),
  );
  assert.equal(connection.gitopsPolicies.peekRepositorySources(), read, 'the peek answers the read');
  await auditSentinel(cluster.auditLog, (p) => request(admin, 'GET', p));
  // Discovery aside (GETs of /api and /apis), the reads of objects.
  const sent = readAuditEvents(cluster.auditLog).filter((e) => e.userAgent === userAgent && e.objectRef?.resource);
  assert.deepEqual(sent.map((e) => `${e.verb} ${e.objectRef?.resource} ${e.objectRef?.namespace ?? '(all)'}`).sort(), [
    'list applications (all)',
    'list gitrepositories (all)',
    'list kustomizations (all)',
  ]);

  const stranger = await createClusterConnection({ kubeconfig: cluster.kubeconfig, context: 'stranger' });
  open.push(stranger);
  const refused = await stranger.gitopsPolicies.repositorySources();
  assert.deepEqual(refused.sources, []);
  assert.match(refused.unread.join('\n'), /Applications .* may not be listed across namespaces: .*forbidden/);
});
