// Names and namespaces the API server would refuse never reach a URL. `encodeURIComponent` keeps
// `.` and `..`, and URL parsing resolves them: a Secret manifest in namespace ".." would make the
// editor list and watch every namespace's Secrets, a namespace of "." a request for
// /api/v1/namespaces/configmaps. Each such manifest gets a finding on the refused name instead, and
// the API server's audit log shows no request outside the paths the valid manifests need.
import assert from 'node:assert/strict';
import * as crypto from 'node:crypto';
import { test } from 'node:test';
import type { Diagnostic } from 'vscode-languageserver-protocol';
import { editorUserAgent } from '../../../server/src/lsp/session';
import { readAuditEvents, waitForAuditEvent, waitForAuditLog, type AuditEvent } from '../../support/cluster';
import { requireCluster } from '../../support/env';
import { startTestServer } from '../../support/lsp-client';
import { configMap, connect, create, freshNamespace, objectOf } from '../../support/seed';

interface Hostile {
  what: string;
  yaml: (namespace: string) => string;
  /** The line of the refused value in its document, and the field named. */
  line: number;
  field: 'metadata.name' | 'metadata.namespace';
}

const hostile: Hostile[] = [
  {
    what: 'a Secret in namespace ".."',
    yaml: () => 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n  namespace: ".."\n',
    line: 4,
    field: 'metadata.namespace',
  },
  {
    what: 'a ConfigMap in namespace "."',
    yaml: () => 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  namespace: "."\n',
    line: 4,
    field: 'metadata.namespace',
  },
  {
    what: 'a ConfigMap in namespace "a/b"',
    yaml: () => 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  namespace: a/b\n',
    line: 4,
    field: 'metadata.namespace',
  },
  {
    what: 'a ConfigMap named "../x"',
    yaml: (ns) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ../x\n  namespace: ${ns}\n`,
    line: 3,
    field: 'metadata.name',
  },
  {
    what: 'a Secret named "%2e%2e"',
    yaml: (ns) => `apiVersion: v1\nkind: Secret\nmetadata:\n  name: "%2e%2e"\n  namespace: ${ns}\n`,
    line: 3,
    field: 'metadata.name',
  },
  {
    what: 'a Namespace named ".."',
    yaml: () => 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ".."\n',
    line: 3,
    field: 'metadata.name',
  },
  {
    what: 'a ClusterRole named "../../api/v1/secrets"',
    yaml: () =>
      'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: ../../api/v1/secrets\n',
    line: 3,
    field: 'metadata.name',
  },
  {
    what: 'a ConfigMap in namespace "Default"',
    yaml: () => 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  namespace: Default\n',
    line: 4,
    field: 'metadata.namespace',
  },
  {
    what: 'a Secret with a 300-character name',
    yaml: (ns) => `apiVersion: v1\nkind: Secret\nmetadata:\n  name: ${'x'.repeat(300)}\n  namespace: ${ns}\n`,
    line: 3,
    field: 'metadata.name',
  },
];

test(
  'held: manifests with names the API server refuses: a finding each, and no request outside the expected paths',
  { timeout: 120_000 },
  async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    assert.ok(cluster.auditLog, 'KCH_AUDIT_LOG names the audit log');
    const admin = connect('admin', cluster.kubeconfig);
    const namespace = await freshNamespace(admin, 'kch-hostile-names');
    // A valid object beside the hostile ones: its requests are the expected ones, and its finding and
    // audit events are the positive signals that everything the session would send has been sent.
    const sentinel = `sentinel-${crypto.randomBytes(4).toString('hex')}`;
    objectOf(await create(admin, 'kubectl-create', configMap(namespace, sentinel, { a: '1' })), 'sentinel');

    const since = Date.now() - 1000;
    const server = await startTestServer({ settings: { kubeconfig: cluster.kubeconfig, context: 'admin' } });
    const uri = 'file:///w/hostile.yaml';
    const documents = [
      ...hostile.map((h) => h.yaml(namespace)),
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${sentinel}\n  namespace: ${namespace}\ndata:\n  a: "1"\n`,
    ];
    const text = documents.join('---\n');
    const firstLine = documents.map((_, i) =>
      documents.slice(0, i).reduce((lines, d) => lines + d.split('\n').length, 0),
    );
    try {
      await server.open(uri, text);
      const ds = await server.diagnosticsUntil(
        uri,
        (d) => byCode(d, 'invalid-manifest').length === hostile.length && byCode(d, 'exists').length === 1,
      );
      hostile.forEach((h, i) => {
        const finding = byCode(ds, 'invalid-manifest').find((d) => d.range.start.line === firstLine[i]! + h.line);
        assert.ok(
          finding,
          `no finding on the ${h.field} of ${h.what}: ${JSON.stringify(ds.map((d) => [d.range.start.line, d.message]))}`,
        );
        assert.match(
          finding.message,
          new RegExp(
            `^${h.field.replace('.', '\\.')} ".*" is not a name the API server accepts: .+\\. The cluster is not asked about this object\\.$`,
          ),
        );
        assert.equal(finding.severity, 1, 'an error: the API server refuses the manifest');
      });
      const verified = (await server.request('kubeConflictHints/verify', { uri })) as {
        agreed: number;
        differences: string[];
        failed: string[];
      };
      assert.equal(verified.failed.length, hostile.length, JSON.stringify(verified));
      assert.ok(
        verified.failed.every((f) => /is not a name the API server accepts/.test(f)),
        JSON.stringify(verified.failed),
      );
      assert.equal(verified.agreed, 1, 'the sentinel was confirmed by a dry run');

      // Sentinel: a request the product sends only after every answer above, a relist on refresh.
      // Once its audit event is in, the events of everything sent before are too.
      const isSentinelList = (e: AuditEvent) =>
        fromProduct(e, since) &&
        e.verb === 'list' &&
        e.objectRef?.namespace === namespace &&
        e.objectRef.resource === 'configmaps';
      const listCount = (events: AuditEvent[]) => events.filter(isSentinelList).length;
      assert.ok(
        await waitForAuditEvent(
          cluster.auditLog,
          (e) => fromProduct(e, since) && e.verb === 'patch' && e.objectRef?.name === sentinel,
        ),
        "the sentinel's dry run",
      );
      const listed = await waitForAuditLog(cluster.auditLog, (events) => listCount(events) >= 1);
      assert.ok(listed, "the sentinel's list");
      const lists = listCount(listed);
      await server.request('kubeConflictHints/refresh', null);
      assert.ok(
        await waitForAuditLog(cluster.auditLog, (events) => listCount(events) > lists),
        'the relist after the refresh',
      );
    } finally {
      await server.shutdown();
    }

    const expected = [
      /^\/api$/,
      /^\/apis$/,
      /^\/openapi\/v3(\/[a-z0-9.\-/]+)?$/,
      new RegExp(`^/api/v1/namespaces/${namespace}/configmaps(/${sentinel})?$`),
      // The ValidatingAdmissionPolicies and their bindings (cluster-scoped lists and watches), and
      // the namespace's labels when a policy on the cluster selects namespaces (docs/security.md).
      /^\/apis\/admissionregistration\.k8s\.io\/v1\/validatingadmissionpolic(ies|ybindings)$/,
      // The admission webhooks (one list each per session), and whether the user may send the
      // apply's requests (access reviews, created with dryRun=All; the user's name once).
      /^\/apis\/admissionregistration\.k8s\.io\/v1\/(validating|mutating)webhookconfigurations$/,
      /^\/apis\/authorization\.k8s\.io\/v1\/selfsubjectaccessreviews$/,
      /^\/apis\/authentication\.k8s\.io\/v1\/selfsubjectreviews$/,
      new RegExp(`^/api/v1/namespaces/${namespace}$`),
    ];
    const sent = readAuditEvents(cluster.auditLog).filter((e) => fromProduct(e, since));
    assert.ok(sent.length > 0);
    const unexpected = sent.filter((e) => !expected.some((re) => re.test(e.requestURI.split('?')[0]!)));
    assert.deepEqual(
      unexpected.map((e) => `${e.verb} ${e.requestURI}`),
      [],
    );
  },
);

test('held: a namespace setting the API server refuses: a finding, and no request for the objects it would place', async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  const since = Date.now() - 1000;
  const server = await startTestServer({
    settings: { kubeconfig: cluster.kubeconfig, context: 'admin', namespace: '..' },
  });
  try {
    const uri = 'file:///w/default-namespace.yaml';
    await server.open(uri, 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n');
    const [finding] = await server.diagnosticsUntil(uri, (d) => byCode(d, 'invalid-manifest').length === 1);
    assert.deepEqual(finding!.range.start, { line: 3, character: 8 }, 'on the name: the namespace is not in the text');
    assert.match(
      finding!.message,
      /^the default namespace "\.\." \(from the namespace setting or the kubeconfig context\) is not a name the API server accepts/,
    );
    // Sentinel: a valid object opened afterwards; once its list is in the audit log, so is any
    // request the first manifest could have caused.
    await server.open(
      'file:///w/sentinel.yaml',
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sentinel\n  namespace: default\n',
    );
    await server.diagnostics('file:///w/sentinel.yaml');
    assert.ok(
      await waitForAuditEvent(
        cluster.auditLog!,
        (e) =>
          fromProduct(e, since) &&
          e.verb === 'list' &&
          e.objectRef?.resource === 'configmaps' &&
          e.objectRef.namespace === 'default',
      ),
      "the sentinel's list reached the audit log",
    );
  } finally {
    await server.shutdown();
  }
  assert.deepEqual(
    readAuditEvents(cluster.auditLog!)
      .filter((e) => fromProduct(e, since) && e.objectRef?.resource === 'secrets')
      .map((e) => e.requestURI),
    [],
  );
});

function fromProduct(e: AuditEvent, since: number): boolean {
  return e.userAgent === editorUserAgent && Date.parse(e.requestReceivedTimestamp ?? '') >= since;
}

function byCode(ds: Diagnostic[], code: string): Diagnostic[] {
  return ds.filter((d) => d.code === code);
}
