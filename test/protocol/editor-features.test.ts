// The editor features over real JSON-RPC, against the real local kube-apiserver: diagnostics of
// every kind, quick fixes applied and checked again, hovers, and a change made on the cluster
// reaching the diagnostics without the user doing anything.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Diagnostic } from 'vscode-languageserver-protocol';
import { requireCluster, testCluster } from '../support/env';
import { editorUserAgent } from '../../server/src/lsp/session';
import { startTestServer, type TestServer } from '../support/lsp-client';
import { auditSentinel, readAuditEvents } from '../support/cluster';
import {
  apply,
  autoscale,
  connect,
  type Connection,
  create,
  freshNamespace,
  get,
  type KubeObject,
  objectOf,
  request,
  update,
} from '../support/seed';

const codes = (ds: Diagnostic[]) => ds.map((d) => String(d.code)).sort();
const byCode = (ds: Diagnostic[], code: string) => ds.filter((d) => d.code === code);

function deployment(namespace: string, name: string, replicas: number, image: string): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image }] } },
    },
  };
}

const deploymentYaml = (namespace: string, name: string, extra = '') => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  namespace: ${namespace}${extra}
spec:
  replicas: 3
  selector:
    matchLabels:
      app: ${name}
  template:
    metadata:
      labels:
        app: ${name}
    spec:
      containers:
        - name: app
          image: nginx:1.25
`;

/** Builds the history of issue 3's acceptance test: kubectl applies, someone edits, an autoscaler scales. */
async function contestedDeployment(admin: Connection, namespace: string, name: string): Promise<void> {
  objectOf(await apply(admin, 'kubectl', deployment(namespace, name, 3, 'nginx:1.25')), 'apply');
  const live = objectOf(await get(admin, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace } }));
  (live.spec as any).template.spec.containers[0].image = 'nginx:1.26';
  objectOf(await update(admin, 'kubectl-edit', live), 'edit');
  await autoscale(admin, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace } }, 5);
}

describe(
  'editor features against the real API server',
  { skip: !testCluster() && process.env.CI !== 'true' ? 'no local kube-apiserver' : false },
  () => {
    let admin: Connection;
    let namespace: string;
    let server: TestServer;

    before(async () => {
      const cluster = testCluster();
      if (!cluster) throw new Error('no local kube-apiserver: run through npm test');
      admin = connect('admin', cluster.kubeconfig);
      namespace = await freshNamespace(admin, 'editor');
      server = await startTestServer({ settings: { kubeconfig: cluster.kubeconfig, context: 'admin' } });
    });
    after(async () => server?.shutdown());

    test("an autoscaler and a kubectl edit: two conflict warnings, on the exact values, in the server's words", async () => {
      await contestedDeployment(admin, namespace, 'web');
      const uri = 'file:///w/web.yaml';
      const text = deploymentYaml(namespace, 'web');
      await server.open(uri, text);
      const ds = await server.diagnosticsUntil(uri, (d) => byCode(d, 'field-conflict').length === 2);
      const [image, replicas] = byCode(ds, 'field-conflict').sort((a, b) => b.range.start.line - a.range.start.line);
      assert.equal(
        replicas!.message,
        '.spec.replicas is managed by "kube-controller-manager" with subresource "scale" using apps/v1 (an autoscaler): live 5, manifest 3 — kubectl apply --server-side would fail',
      );
      assert.deepEqual(replicas!.range, { start: { line: 6, character: 12 }, end: { line: 6, character: 13 } });
      assert.match(
        image!.message,
        /^\.spec\.template\.spec\.containers\[name="app"\]\.image is managed by "kubectl-edit" using apps\/v1 \(a manual kubectl edit\): live "nginx:1\.26", manifest "nginx:1\.25"/,
      );
      assert.equal(
        text.split('\n')[image!.range.start.line]!.slice(image!.range.start.character, image!.range.end.character),
        'nginx:1.25',
      );
      for (const d of [image!, replicas!]) {
        assert.equal(d.severity, 1, 'the apply would fail: an error');
        assert.equal(d.source, 'kube-conflict-hints');
        assert.match(d.codeDescription!.href, /^https:\/\/kubernetes\.io\/docs\//);
      }
      assert.equal(byCode(ds, 'exists').length, 1, 'the object exists: a hint names its managers');
      assert.equal(
        byCode(ds, 'exists')[0]!.severity,
        4,
        'news, not a problem: a hint, which editors keep off the Problems panel',
      );
      for (const d of ds)
        assert.match(
          d.codeDescription?.href ?? '',
          /^https:\/\/kubernetes\.io\/docs\//,
          `${d.code} has a documentation link`,
        );
      assert.match(byCode(ds, 'exists')[0]!.message, /"kubectl-edit"/);
    });

    test('the severity setting raises a quiet finding: "exists" named there is shown as the user chose, off it a hint again', async () => {
      await contestedDeployment(admin, namespace, 'raised');
      const uri = 'file:///w/raised.yaml';
      await server.open(uri, deploymentYaml(namespace, 'raised'));
      const exists = async (severity: number) =>
        byCode(await server.diagnosticsUntil(uri, (d) => byCode(d, 'exists')[0]?.severity === severity), 'exists')[0]!;
      assert.equal((await exists(4)).severity, 4);
      const settings = { kubeconfig: testCluster()!.kubeconfig, context: 'admin' };
      try {
        server.setSettings({ ...settings, severity: { exists: 'information' } });
        await server.change(uri, `${deploymentYaml(namespace, 'raised')}\n`);
        assert.equal((await exists(3)).severity, 3, 'information, as chosen');
        server.setSettings({ ...settings, severity: { exists: 'warning' } });
        await server.change(uri, deploymentYaml(namespace, 'raised'));
        assert.equal((await exists(2)).severity, 2, 'a warning, as chosen');
      } finally {
        server.setSettings(settings);
      }
      await server.change(uri, `${deploymentYaml(namespace, 'raised')}\n`);
      assert.equal((await exists(4)).severity, 4);
    });

    test('a keystroke that changes no finding is answered "unchanged"; one that moves a finding gets the new report', async () => {
      await contestedDeployment(admin, namespace, 'typed');
      const uri = 'file:///w/typed.yaml';
      const text = deploymentYaml(namespace, 'typed');
      await server.open(uri, text);
      await server.diagnosticsUntil(uri, (d) => byCode(d, 'field-conflict').length === 2);
      type Report = { kind: string; resultId?: string; items?: Diagnostic[] };
      const pull = (previousResultId?: string) =>
        server.request('textDocument/diagnostic', {
          textDocument: { uri },
          ...(previousResultId ? { previousResultId } : {}),
        }) as Promise<Report>;
      const first = await pull();
      assert.equal(first.kind, 'full');
      assert.ok(first.resultId, 'a full report names itself');
      // A space typed after a label value (a label changed by one character would now leave the
      // selector unmatched, which the server refuses): the same findings, in the same places.
      await server.insert(uri, text.lastIndexOf('app: typed') + 'app: typed'.length, ' ');
      const same = await pull(first.resultId);
      assert.deepEqual(same, { kind: 'unchanged', resultId: first.resultId });
      // A client that holds another report (or none) gets the full one.
      assert.equal((await pull('no-such-report')).kind, 'full');
      // A line added at the top moves every finding: a new full report.
      await server.insert(uri, 0, '# a comment\n');
      const moved = await pull(first.resultId);
      assert.equal(moved.kind, 'full');
      assert.notEqual(moved.resultId, first.resultId);
      assert.deepEqual(
        byCode(moved.items!, 'field-conflict')
          .map((d) => d.range.start.line)
          .sort(),
        byCode(first.items!, 'field-conflict')
          .map((d) => d.range.start.line + 1)
          .sort(),
      );
      await server.close(uri);
    });

    test('hovering replicas shows its owner and what that manager is', async () => {
      const uri = 'file:///w/web.yaml';
      const hover = await server.hover(uri, { line: 6, character: 4 });
      const text = (hover!.contents as { value: string }).value;
      assert.match(text, /\.spec\.replicas/);
      assert.match(text, /kube-controller-manager/);
      // The server records no time for writes through the scale subresource.
      assert.match(text, /\| kube-controller-manager \| Update \| scale \| apps\/v1 \| _not recorded_ \|/);
      assert.match(text, /Live value: `5` \(manifest: `3`\)/);
      assert.match(text, /HorizontalPodAutoscaler/);
      const onImage = await server.hover(uri, { line: 17, character: 12 });
      assert.match(
        (onImage!.contents as { value: string }).value,
        /\| kubectl-edit \| Update \| {2}\| apps\/v1 \| \d+ (s|min) ago \(20\d\d-\d\d-\d\dT[\d:]+Z\) \|/,
      );
      const onName = await server.hover(uri, { line: 3, character: 10 });
      assert.match((onName!.contents as { value: string }).value, /Exists, created .* ago/);
    });

    test('quick fix "remove" drops replicas; "use the live value" shares the image; both warnings go away', async () => {
      const uri = 'file:///w/web.yaml';
      let ds = await server.diagnostics(uri);
      const replicas = byCode(ds, 'field-conflict').find((d) => d.message.startsWith('.spec.replicas'))!;
      const actions = await server.codeActions(uri, replicas.range, [replicas]);
      const remove = actions.find((a) => a.title.startsWith('Remove .spec.replicas'));
      assert.ok(remove, `no remove action among ${actions.map((a) => a.title).join(' | ')}`);
      assert.equal(remove.isPreferred, true, 'dropping replicas is the right answer to an autoscaler');
      await server.applyEdit(remove.edit!);
      assert.doesNotMatch(server.text(uri), /replicas:/);
      ds = await server.diagnosticsUntil(uri, (d) => byCode(d, 'field-conflict').length === 1);
      const image = byCode(ds, 'field-conflict')[0]!;
      const share = (await server.codeActions(uri, image.range, [image])).find((a) =>
        a.title.startsWith('Use the live value "nginx:1.26"'),
      );
      assert.ok(share);
      await server.applyEdit(share.edit!);
      assert.match(server.text(uri), /image: nginx:1\.26/);
      ds = await server.diagnostics(uri);
      assert.deepEqual(byCode(ds, 'field-conflict'), []);
    });

    test('a change made on the cluster reaches the diagnostics without any action in the editor', async () => {
      const uri = 'file:///w/web.yaml';
      await server.diagnosticsUntil(uri, (d) => byCode(d, 'field-conflict').length === 0);
      const live = objectOf(
        await get(admin, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace } }),
      );
      (live.spec as any).template.spec.containers[0].image = 'nginx:1.27';
      objectOf(await update(admin, 'kubectl-edit', live), 'second edit');
      const ds = await server.diagnosticsUntil(uri, (d) => byCode(d, 'field-conflict').length === 1, 15000);
      assert.match(byCode(ds, 'field-conflict')[0]!.message, /live "nginx:1\.27", manifest "nginx:1\.26"/);
    });

    test('typing in one document of a file: a change on the cluster to another of its objects still reaches the diagnostics', async () => {
      // A keystroke re-reads the facts of the document typed in only; the others' follow the cluster's changes.
      objectOf(await apply(admin, 'kubectl', deployment(namespace, 'typed-a', 3, 'nginx:1.25')), 'apply a');
      objectOf(await apply(admin, 'kubectl', deployment(namespace, 'typed-b', 3, 'nginx:1.25')), 'apply b');
      const uri = 'file:///w/two.yaml';
      const text = `${deploymentYaml(namespace, 'typed-a')}---\n${deploymentYaml(namespace, 'typed-b')}`;
      await server.open(uri, text);
      await server.diagnosticsUntil(uri, (d) => byCode(d, 'exists').length === 2);
      const typeInA = async () => {
        await server.insert(uri, server.text(uri).indexOf('app: typed-a') + 'app: typed-a'.length, 'x');
        return server.diagnostics(uri);
      };
      for (let i = 0; i < 3; i++) assert.deepEqual(byCode(await typeInA(), 'field-conflict'), []);
      const live = objectOf(
        await get(admin, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'typed-b', namespace } }),
      );
      (live.spec as any).template.spec.containers[0].image = 'nginx:1.27';
      objectOf(await update(admin, 'kubectl-edit', live), 'edit b');
      const ds = await server.diagnosticsUntil(uri, (d) => byCode(d, 'field-conflict').length === 1, 15000);
      assert.match(byCode(ds, 'field-conflict')[0]!.message, /live "nginx:1\.27", manifest "nginx:1\.25"/);
      // Typed in again, the conflict of the other document stays where it is.
      const after = await typeInA();
      assert.deepEqual(
        byCode(after, 'field-conflict').map((d) => d.range),
        byCode(ds, 'field-conflict').map((d) => d.range),
      );
      await server.close(uri);
    });

    test("create mode: an existing ConfigMap is an AlreadyExists error in the server's words", async () => {
      objectOf(
        await create(admin, 'kubectl-create', {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'app-config', namespace },
          data: { a: '1' },
        }),
      );
      const uri = 'file:///w/cm.yaml';
      server.setSettings({ kubeconfig: testCluster()!.kubeconfig, context: 'admin', applyMode: 'create' });
      try {
        await server.open(
          uri,
          `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-config\n  namespace: ${namespace}\ndata:\n  a: "2"\n`,
        );
        const ds = await server.diagnosticsUntil(uri, (d) => byCode(d, 'already-exists').length === 1);
        const d = byCode(ds, 'already-exists')[0]!;
        assert.equal(d.severity, 1);
        assert.match(d.message, /^configmaps "app-config" already exists; managed by "kubectl-create"/);
        assert.deepEqual(d.range.start, { line: 3, character: 8 });
      } finally {
        server.setSettings({ kubeconfig: testCluster()!.kubeconfig, context: 'admin' });
      }
    });

    test('a stale resourceVersion is an error, and its quick fix removes it', async () => {
      objectOf(
        await apply(admin, 'kubectl', {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'locked', namespace },
          data: { v: '1' },
        }),
      );
      const first = objectOf(
        await get(admin, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'locked', namespace } }),
      );
      const staleRv = (first.metadata as any).resourceVersion as string;
      objectOf(
        await apply(admin, 'kubectl', {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'locked', namespace },
          data: { v: '2' },
        }),
      );
      const uri = 'file:///w/locked.yaml';
      await server.open(
        uri,
        `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: locked\n  namespace: ${namespace}\n  resourceVersion: "${staleRv}"\ndata:\n  v: "2"\n`,
      );
      const ds = await server.diagnosticsUntil(uri, (d) => byCode(d, 'stale-resource-version').length === 1);
      const d = byCode(ds, 'stale-resource-version')[0]!;
      assert.equal(d.severity, 1);
      assert.match(
        d.message,
        /the object has been modified; please apply your changes to the latest version and try again/,
      );
      const fix = (await server.codeActions(uri, d.range, [d])).find((a) =>
        a.title.startsWith('Remove metadata.resourceVersion'),
      );
      assert.ok(fix);
      await server.applyEdit(fix.edit!);
      assert.doesNotMatch(server.text(uri), /resourceVersion/);
      assert.deepEqual(byCode(await server.diagnostics(uri), 'stale-resource-version'), []);
    });

    test('a field the last apply set and the manifest dropped: the apply would delete it', async () => {
      objectOf(
        await apply(admin, 'kubectl', {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'shrinking', namespace, labels: { team: 'a', tier: 'web' } },
          data: { k: 'v' },
        }),
      );
      const uri = 'file:///w/shrinking.yaml';
      await server.open(
        uri,
        `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shrinking\n  namespace: ${namespace}\n  labels:\n    team: a\ndata:\n  k: v\n`,
      );
      const ds = await server.diagnosticsUntil(uri, (d) => byCode(d, 'would-delete').length === 1);
      const d = byCode(ds, 'would-delete')[0]!;
      assert.equal(d.severity, 2, 'a surprise, not a failure: a warning');
      assert.match(d.message, /^This apply would delete \.metadata\.labels\.tier \(live "web"\)/);
    });

    test('a port the manifest dropped, keyed by containerPort and a defaulted protocol: the warning shows the item the server would delete', async () => {
      const name = 'dropped-port';
      const withPorts = (ports: object[]): KubeObject => {
        const d = deployment(namespace, name, 1, 'nginx:1.25');
        (d.spec as any).template.spec.containers[0].ports = ports;
        return d;
      };
      // Port 80 twice: TCP by default, and UDP. The manifest keeps the first and drops the second.
      objectOf(
        await apply(admin, 'kubectl', withPorts([{ containerPort: 80 }, { containerPort: 80, protocol: 'UDP' }])),
        'apply',
      );
      const live = objectOf(await get(admin, withPorts([])));
      const shorter = objectOf(
        await apply(admin, 'kubectl', withPorts([{ containerPort: 80 }]), { dryRun: true }),
        'dry-run apply',
      );
      const portsOf = (o: KubeObject) => (o.spec as any).template.spec.containers[0].ports as object[];
      const deleted = portsOf(live).filter(
        (p) => !portsOf(shorter).some((q) => JSON.stringify(q) === JSON.stringify(p)),
      );
      assert.equal(deleted.length, 1, 'the server deletes one port');
      const uri = 'file:///w/dropped-port.yaml';
      await server.open(
        uri,
        deploymentYaml(namespace, name).replace(
          'image: nginx:1.25\n',
          'image: nginx:1.25\n          ports:\n            - containerPort: 80\n',
        ),
      );
      const ds = await server.diagnosticsUntil(uri, (d) => byCode(d, 'would-delete').length > 0);
      assert.deepEqual(
        byCode(ds, 'would-delete').map((d) => d.message.replace(/: .*$/, '')),
        [
          `This apply would delete .spec.template.spec.containers[name="app"].ports[containerPort=80,protocol="UDP"] (live ${JSON.stringify(deleted[0])})`,
        ],
      );
    });

    test('an object controlled by another object warns that its controller reverts changes', async () => {
      const owner = objectOf(
        await apply(admin, 'kubectl', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owner', namespace } }),
      );
      objectOf(
        await apply(admin, 'some-operator', {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: {
            name: 'owned',
            namespace,
            ownerReferences: [
              {
                apiVersion: 'v1',
                kind: 'ConfigMap',
                name: 'owner',
                uid: (owner.metadata as any).uid,
                controller: true,
              },
            ],
          },
        }),
      );
      const uri = 'file:///w/owned.yaml';
      await server.open(uri, `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: owned\n  namespace: ${namespace}\n`);
      const ds = await server.diagnosticsUntil(uri, (d) => byCode(d, 'controlled-by').length === 1);
      assert.match(byCode(ds, 'controlled-by')[0]!.message, /^Controlled by ConfigMap "owner"/);
    });

    test('a uid that names another incarnation of the object is an error, and its quick fix removes it', async () => {
      objectOf(
        await apply(admin, 'kubectl', {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'reborn', namespace },
          data: { v: '1' },
        }),
      );
      const uri = 'file:///w/reborn.yaml';
      await server.open(
        uri,
        `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: reborn\n  namespace: ${namespace}\n  uid: 0b7c2d1e-0000-4000-8000-000000000000\ndata:\n  v: "1"\n`,
      );
      const ds = await server.diagnosticsUntil(uri, (d) => byCode(d, 'uid-mismatch').length === 1);
      const d = byCode(ds, 'uid-mismatch')[0]!;
      assert.equal(d.severity, 1);
      assert.deepEqual(d.range.start, { line: 5, character: 7 });
      const fix = (await server.codeActions(uri, d.range, [d])).find((a) => a.title.startsWith('Remove metadata.uid'));
      assert.ok(fix);
      await server.applyEdit(fix.edit!);
      assert.deepEqual(byCode(await server.diagnostics(uri), 'uid-mismatch'), []);
    });

    test('remove all contested fields: of one resource, and of the file as source.fixAll', async () => {
      for (const name of ['multi-a', 'multi-b']) await contestedDeployment(admin, namespace, name);
      const uri = 'file:///w/multi.yaml';
      await server.open(uri, `${deploymentYaml(namespace, 'multi-a')}---\n${deploymentYaml(namespace, 'multi-b')}`);
      let ds = await server.diagnosticsUntil(uri, (d) => byCode(d, 'field-conflict').length === 4);
      const first = byCode(ds, 'field-conflict')[0]!;
      const actions = await server.codeActions(uri, first.range, [first]);
      const resourceWide = actions.find((a) => a.title === 'Remove all 2 contested fields of Deployment "multi-a"');
      assert.ok(resourceWide, actions.map((a) => a.title).join(' | '));
      assert.ok(actions.some((a) => a.title === 'Remove all 4 contested fields in this file'));
      await server.applyEdit(resourceWide.edit!);
      ds = await server.diagnosticsUntil(uri, (d) => byCode(d, 'field-conflict').length === 2);
      assert.ok(
        byCode(ds, 'field-conflict').every((d) => d.range.start.line > 20),
        'only multi-b still conflicts',
      );
      const fixAll = await server.codeActions(
        uri,
        { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
        [],
        ['source.fixAll'],
      );
      assert.equal(fixAll.length, 1);
      assert.equal(fixAll[0]!.kind, 'source.fixAll');
      await server.applyEdit(fixAll[0]!.edit!);
      ds = await server.diagnostics(uri);
      assert.deepEqual(byCode(ds, 'field-conflict'), []);
      assert.ok(server.text(uri).includes('image: nginx:1.25') === false, 'the contested image lines are gone');
      assert.equal((server.text(uri).match(/kind: Deployment/g) ?? []).length, 2, 'both resources are still there');
    });

    test('a fix that cannot be made safely is offered disabled, with the reason', async () => {
      await contestedDeployment(admin, namespace, 'aliased');
      const uri = 'file:///w/aliased.yaml';
      const text = deploymentYaml(namespace, 'aliased').replace(
        '  replicas: 3\n',
        '  replicas: &count 3\n  minReadySeconds: *count\n',
      );
      await server.open(uri, text);
      const ds = await server.diagnosticsUntil(uri, (d) => byCode(d, 'field-conflict').length === 2);
      const replicas = byCode(ds, 'field-conflict').find((d) => d.message.startsWith('.spec.replicas'))!;
      const remove = (await server.codeActions(uri, replicas.range, [replicas])).find((a) =>
        a.title.startsWith('Remove .spec.replicas'),
      );
      assert.ok(remove);
      assert.equal(remove.edit, undefined);
      assert.match(remove.disabled!.reason, /count/);
    });

    test('fix all removes every contested field that can go, and leaves the one that cannot with its warning', async () => {
      // replicas carries an anchor that minReadySeconds uses, so it cannot be removed; the image can.
      await contestedDeployment(admin, namespace, 'fixall-aliased');
      const uri = 'file:///w/fixall-aliased.yaml';
      const text = deploymentYaml(namespace, 'fixall-aliased').replace(
        '  replicas: 3\n',
        '  replicas: &count 3\n  minReadySeconds: *count\n',
      );
      await server.open(uri, text);
      await server.diagnosticsUntil(uri, (d) => byCode(d, 'field-conflict').length === 2);
      const fixAll = await server.codeActions(
        uri,
        { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
        [],
        ['source.fixAll'],
      );
      assert.deepEqual(
        fixAll.map((a) => a.title),
        ['Remove all 1 contested fields in this file'],
      );
      await server.applyEdit(fixAll[0]!.edit!);
      assert.ok(!server.text(uri).includes('image: nginx:1.25'), 'the contested image is gone');
      assert.ok(server.text(uri).includes('replicas: &count 3'), 'replicas, which an alias uses, stays');
      const ds = await server.diagnosticsUntil(uri, (d) => byCode(d, 'field-conflict').length === 1);
      assert.match(byCode(ds, 'field-conflict')[0]!.message, /^\.spec\.replicas/);
    });

    test('a code lens above each resource sums up owners and conflicts', async () => {
      await contestedDeployment(admin, namespace, 'lens');
      const uri = 'file:///w/lens.yaml';
      await server.open(
        uri,
        `${deploymentYaml(namespace, 'lens')}---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: not-there-yet\n  namespace: ${namespace}\n`,
      );
      await server.diagnosticsUntil(uri, (d) => byCode(d, 'field-conflict').length === 2);
      const lenses = await server.codeLenses(uri);
      assert.deepEqual(
        lenses.map((l) => [l.range.start.line, l.command?.title]),
        [
          [0, '2 field conflicts · managed by kubectl, kube-controller-manager, kubectl-edit'],
          [19, 'new object: nothing to conflict with'],
        ],
      );
    });

    test('"show ownership" renders the live object with each line\'s owners', async () => {
      const result = (await server.request('kubeConflictHints/ownership', {
        uri: 'file:///w/lens.yaml',
        position: { line: 3, character: 2 },
      })) as { title: string; text: string };
      assert.match(result.title, /^Deployment editor-.*\/lens \(live, with owners\)$/);
      assert.match(result.text, /\n {2}replicas: 5 +# kube-controller-manager \(Update, scale\)\n/);
      assert.match(result.text, /image: nginx:1\.26 +# kubectl-edit \(Update\)/);
      assert.doesNotMatch(result.text, /managedFields/);
    });

    test('confirming by dry run: the server agrees with the prediction', async () => {
      const result = (await server.request('kubeConflictHints/verify', { uri: 'file:///w/lens.yaml' })) as {
        agreed: number;
        differences: string[];
        failed: string[];
      };
      assert.deepEqual(result, { agreed: 2, differences: [], failed: [] });
    });

    test('a Secret: its values are never read, so no conflict is claimed on them and hovers do not show them', async () => {
      // The manifest holds the live value: the server would share ownership of data.password. Without
      // the live value an engine would take it for a new field and claim a conflict with kubectl-create.
      objectOf(
        await create(admin, 'kubectl-create', {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 'db', namespace, labels: { tier: 'db' } },
          data: { password: 'aHVudGVyMg==' },
        }),
      );
      const uri = 'file:///w/secret.yaml';
      await server.open(
        uri,
        `apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n  namespace: ${namespace}\n  labels:\n    tier: cache\ndata:\n  password: aHVudGVyMg==\n`,
      );
      const ds = await server.diagnosticsUntil(uri, (d) => byCode(d, 'field-conflict').length === 1);
      assert.match(
        byCode(ds, 'field-conflict')[0]!.message,
        /^\.metadata\.labels\.tier is managed by "kubectl-create"/,
      );
      const hover = (await server.hover(uri, { line: 8, character: 4 }))!.contents as { value: string };
      assert.doesNotMatch(hover.value, /hunter2|aHVudGVyMg==/);
    });

    test('a kind the cluster does not serve is a warning on the kind', async () => {
      const uri = 'file:///w/old.yaml';
      await server.open(
        uri,
        `apiVersion: extensions/v1beta1\nkind: Deployment\nmetadata:\n  name: old\n  namespace: ${namespace}\n`,
      );
      const ds = await server.diagnosticsUntil(uri, (d) => byCode(d, 'kind-not-served').length === 1);
      assert.deepEqual(ds[0]!.range.start, { line: 1, character: 6 });
    });

    test('a list conflict: the message shows the item where the live and the manifest lists part, not the first items they share', async () => {
      const args = [
        '--listen-address=0.0.0.0:8080',
        '--log-level=info',
        '--metrics-bind-address=:9090',
        '--cache-dir=/var/cache/shop',
        '--catalog-url=http://catalog.shop.svc:8080',
        '--payment-url=http://payments.shop.svc:8080',
      ];
      const object = deployment(namespace, 'lists', 1, 'nginx:1.25');
      (object.spec as any).template.spec.containers[0].args = args;
      objectOf(await apply(admin, 'kubectl', object), 'apply');
      // Someone edits one item of the (atomic) list: the list is theirs now.
      const live = objectOf(
        await get(admin, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'lists', namespace } }),
      );
      (live.spec as any).template.spec.containers[0].args[4] = '--catalog-url=http://catalog-v2.shop.svc:8080';
      objectOf(await update(admin, 'kubectl-edit', live), 'edit');
      const uri = 'file:///w/lists.yaml';
      await server.open(
        uri,
        deploymentYaml(namespace, 'lists').replace(/^ {2}replicas: 3$/m, '  replicas: 1') +
          `          args:\n${args.map((a) => `            - ${a}\n`).join('')}`,
      );
      const ds = await server.diagnosticsUntil(uri, (d) => byCode(d, 'field-conflict').length === 1);
      const message = byCode(ds, 'field-conflict')[0]!.message;
      assert.match(message, /^\.spec\.template\.spec\.containers\[name="app"\]\.args is managed by "kubectl-edit"/);
      // Both lists begin with the same four items: each is shown from the fifth, where they part.
      assert.ok(message.includes('live ..."--catalog-url=http://catalog-v2.shop.svc:8080",'), message);
      assert.ok(message.includes('manifest ..."--catalog-url=http://catalog.shop.svc:8080",'), message);
    });

    test('a new object gets no finding; a broken document does not stop the others', async () => {
      const uri = 'file:///w/mixed.yaml';
      await server.open(
        uri,
        `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: brand-new\n  namespace: ${namespace}\n---\nkind: [unclosed\n---\n${deploymentYaml(namespace, 'web')}`,
      );
      const ds = await server.diagnosticsUntil(
        uri,
        (d) => d.some((x) => x.code === 'yaml-syntax') && byCode(d, 'exists').length === 1,
      );
      assert.ok(
        codes(ds).every((c) => ['yaml-syntax', 'exists', 'field-conflict'].includes(c)),
        codes(ds).join(','),
      );
      assert.ok(
        ds.every((d) => d.range.start.line >= 5),
        'nothing is reported on the new ConfigMap',
      );
    });
  },
);

test('an unreachable cluster: the status says so and the server keeps answering', async () => {
  const kubeconfig = `${process.env.TMPDIR ?? '/tmp'}/kch-unreachable-${process.pid}.yaml`;
  const fs = await import('node:fs');
  fs.writeFileSync(
    kubeconfig,
    `apiVersion: v1\nkind: Config\nclusters:\n- name: gone\n  cluster:\n    server: https://127.0.0.1:9\ncontexts:\n- name: gone\n  context: {cluster: gone, user: u}\ncurrent-context: gone\nusers:\n- name: u\n  user: {token: x}\n`,
  );
  const server = await startTestServer({ settings: { kubeconfig } });
  try {
    // The cluster is contacted once a manifest is open.
    await server.open('file:///w/a.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n');
    assert.deepEqual(await server.diagnostics('file:///w/a.yaml'), []);
    const status = (await server.waitForNotification(
      'kubeConflictHints/status',
      (p) => (p as { health: string }).health === 'unreachable',
    )) as { context: string };
    assert.equal(status.context, 'gone');
    const hover = await server.hover('file:///w/a.yaml', { line: 1, character: 2 });
    assert.ok(hover, 'hovers still answer');
  } finally {
    await server.shutdown();
    fs.rmSync(kubeconfig, { force: true });
  }
});

test('a user the cluster does not authorize: the status says forbidden', async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  const server = await startTestServer({ settings: { kubeconfig: cluster.kubeconfig, context: 'stranger' } });
  try {
    await server.open('file:///w/s.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\n');
    await server.diagnostics('file:///w/s.yaml');
    await server.waitForNotification(
      'kubeConflictHints/status',
      (p) => (p as { health: string }).health === 'forbidden',
    );
  } finally {
    await server.shutdown();
  }
});

test('an untrusted workspace: no cluster is contacted and the status says why', async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  // Requests of this process's language servers that the API server received from now on.
  assert.ok(cluster.auditLog, 'KCH_AUDIT_LOG: the audit log is the only proof that nothing was sent');
  const since = Date.now();
  const productRequests = () =>
    readAuditEvents(cluster.auditLog).filter(
      (e) =>
        e.userAgent === editorUserAgent &&
        Date.parse((e as { requestReceivedTimestamp?: string }).requestReceivedTimestamp ?? '') >= since,
    ).length;
  await auditSentinel(cluster.auditLog, (p) => request(connect('admin'), 'GET', p));
  const before = productRequests();
  const server = await startTestServer({
    initializationOptions: { clusterAccess: false },
    settings: { kubeconfig: cluster.kubeconfig, context: 'admin' },
  });
  try {
    const status = (await server.waitForNotification('kubeConflictHints/status')) as { health: string };
    assert.equal(status.health, 'disabled');
    await server.open(
      'file:///w/u.yaml',
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-config\n  namespace: default\n',
    );
    assert.deepEqual(await server.diagnostics('file:///w/u.yaml'), []);
    assert.ok(await server.hover('file:///w/u.yaml', { line: 3, character: 8 }));
  } finally {
    await server.shutdown();
  }
  // The server has stopped; a sentinel sent now reaches the log after anything it had sent.
  await auditSentinel(cluster.auditLog, (p) => request(connect('admin'), 'GET', p));
  assert.equal(productRequests(), before, 'the untrusted workspace made the product send a request');
});

test('the audit log: everything the product sent was a read or a dry run', async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  assert.ok(cluster.auditLog, 'KCH_AUDIT_LOG: the audit log is the only proof of what the product sent');
  // The language servers above have shut down; the sentinel shows the log has caught up with them.
  await auditSentinel(cluster.auditLog, (p) => request(connect('admin'), 'GET', p));
  const sent = readAuditEvents(cluster.auditLog).filter(
    (e) => e.stage === 'ResponseComplete' && e.userAgent?.startsWith('kube-conflict-hints'),
  );
  assert.ok(sent.length > 0, 'the tests above made the product send requests; the audit log must show them');
  const writes = sent.filter(
    (e) => !['get', 'list', 'watch'].includes(e.verb) && !/[?&]dryRun=All(&|$)/.test(e.requestURI),
  );
  assert.deepEqual(
    writes.map((e) => `${e.verb} ${e.requestURI}`),
    [],
  );
});
