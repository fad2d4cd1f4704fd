// Secret values are never read: a session that opens Secret manifests (one whose `data` another
// manager owns, one the editor's own manager applied), watches them change and confirms them with
// dry runs sends no request whose answer can carry a value. Two witnesses:
// - the API server's audit log, which records every answer about Secrets (see the audit policy in
//   test/support/cluster.ts): each is metadata only (PartialObjectMetadata[List]), a Status, or a
//   Table without the object (cells: name, type, number of keys, age), which tells a Secret's type
//   and answers the immutable probe and the dry runs;
// - a recording proxy between the editor and the server, for what the audit log does not record:
//   the Accept header of every request and the watch stream's events.
import assert from 'node:assert/strict';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { editorUserAgent } from '../../server/src/lsp/session';
import { readAuditEvents, waitForAuditEvent, type AuditEvent } from '../support/cluster';
import { requireCluster } from '../support/env';
import { startTestServer } from '../support/lsp-client';
import { recordCluster } from '../support/recording-proxy';
import { apply, connect, create, freshNamespace, objectOf, patch } from '../support/seed';
import { chartInstalledElsewhere } from '../support/charts';
import { requireTool } from '../tools/tools';
import { pathToFileURL } from 'node:url';

const metadataOnlyAccept = /^application\/json;as=PartialObjectMetadata(List)?;g=meta\.k8s\.io;v=v1$/;
const tableAccept = 'application/json;as=Table;g=meta.k8s.io;v=v1';

/** A Table answer that holds no value: the Secret printer's four columns, and rows without their object. */
function tableWithoutValues(
  table: { columnDefinitions?: { name?: string }[]; rows?: { cells?: unknown[]; object?: unknown }[] } | undefined,
): boolean {
  const columns = (table?.columnDefinitions ?? []).map((c) => c.name);
  return (
    JSON.stringify(columns) === JSON.stringify(['Name', 'Type', 'Data', 'Age']) &&
    (table?.rows ?? []).every((r) => (r.object ?? null) === null && typeof r.cells?.[2] === 'number')
  );
}

test(
  'a session with Secret manifests: no answer it asks for can carry a Secret value',
  { timeout: 120_000 },
  async (t) => {
    const cluster = requireCluster(t);
    if (!cluster) return;
    assert.ok(cluster.auditLog, 'KCH_AUDIT_LOG names the audit log');
    const admin = connect('admin', cluster.kubeconfig);
    const namespace = await freshNamespace(admin, 'kch-secret-values');
    const planted = (label: string) => `${label}-${crypto.randomBytes(6).toString('hex')}`;
    const values = {
      created: planted('created'),
      edited: planted('edited'),
      applied: planted('applied'),
      rotated: planted('rotated'),
      frozen: planted('frozen'),
    };
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const forbidden = Object.values(values).flatMap((v) => [v, b64(v)]);
    const leaks = (text: string) => forbidden.filter((v) => text.includes(v));

    // `kubectl create secret`, then `kubectl edit` of its value: kubectl-edit owns data.password.
    const db = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'db', namespace },
      type: 'Opaque',
      data: { password: b64(values.created) },
    };
    objectOf(await create(admin, 'kubectl-create', db), 'create db');
    objectOf(
      await patch(admin, 'kubectl-edit', db, { data: { password: b64(values.edited) } }, { type: 'merge' }),
      'edit db',
    );
    // Applied by the editor's own field manager: a dry-run apply of the same manifest is accepted,
    // and the server's answer to an accepted apply is the whole would-be object.
    const tls = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'tls', namespace },
      type: 'Opaque',
      stringData: { key: values.applied },
    };
    objectOf(await apply(admin, 'kubectl', tls), 'apply tls');
    // Immutable, with another type than the manifest's: both are learned without a value.
    const frozen = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'frozen', namespace },
      type: 'example.com/token',
      immutable: true,
      data: { token: b64(values.frozen) },
    };
    objectOf(await apply(admin, 'kubectl', frozen), 'apply frozen');

    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-secret-values-'));
    const { proxy, kubeconfig } = await recordCluster(cluster, 'admin', path.join(scratch, 'kubeconfig'));
    const since = Date.now() - 1000;
    const server = await startTestServer({ settings: { kubeconfig, fieldManager: 'kubectl' } });
    try {
      const uri = 'file:///w/secrets.yaml';
      const manifest =
        `apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n  namespace: ${namespace}\ntype: Opaque\ndata:\n  password: ${b64('typed-in-the-editor')}\n` +
        `---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: tls\n  namespace: ${namespace}\ntype: Opaque\nstringData:\n  key: ${values.applied}\n`;
      const frozenManifest = `apiVersion: v1\nkind: Secret\nmetadata:\n  name: frozen\n  namespace: ${namespace}\ntype: Opaque\nimmutable: true\ndata:\n  token: ${b64('typed-in-the-editor')}\n`;
      await server.open(uri, manifest);
      // The whole judgement (objects and schema): nothing claims to know a value. Both exist, and of
      // db's password, which kubectl-edit owns, only that whether it changes cannot be known.
      const exists = await server.diagnosticsUntil(
        uri,
        (d) => d.filter((x) => x.code === 'exists').length === 2 && d.some((x) => x.code === 'secret-data-unverified'),
      );
      assert.deepEqual(
        exists.map((d) => d.code).sort(),
        ['exists', 'exists', 'secret-data-unverified'],
        `only existence and the unknown value are claimed (the types are the live ones): ${JSON.stringify(exists.map((d) => d.message))}`,
      );
      assert.match(
        exists.find((d) => d.code === 'secret-data-unverified')!.message,
        /^\.data\.password is managed by "kubectl-edit" using v1: Secret values are never read/,
      );
      // The immutable Secret: its new type is refused, and whether its data changes is unknown.
      const frozenUri = 'file:///w/frozen.yaml';
      await server.open(frozenUri, frozenManifest);
      const judged = await server.diagnosticsUntil(
        frozenUri,
        (d) =>
          d.some((x) => x.code === 'field-immutable') && d.some((x) => x.code === 'secret-immutable-data-unverified'),
      );
      assert.deepEqual(
        judged.filter((d) => d.code === 'field-immutable').map((d) => d.range.start.line),
        [5],
        'on type:',
      );
      assert.match(
        judged.find((d) => d.code === 'field-immutable')!.message,
        /type: Invalid value: "Opaque": field is immutable/,
      );
      assert.deepEqual(leaks(JSON.stringify(judged)), []);
      const hover = (await server.hover(uri, { line: 7, character: 4 }))!.contents as { value: string };
      assert.deepEqual(leaks(hover.value), []);

      // A change while the watch is open: the event passes through the proxy.
      const secretsWatch = () =>
        proxy
          .exchanges()
          .find(
            (e) =>
              e.url.includes(`/namespaces/${namespace}/secrets?`) && e.url.includes('watch=true') && e.status === 200,
          );
      await until(() => secretsWatch() !== undefined, "the watch of the namespace's Secrets");
      const rotated = objectOf(
        await patch(admin, 'kubectl-edit', db, { data: { password: b64(values.rotated) } }, { type: 'merge' }),
        'rotate db',
      );
      // On the watch, or on a later one (or the list after it) where a busy machine had the first one
      // closed and opened again: whichever carried the rotation to the product is what is checked below.
      await until(
        () =>
          proxy
            .exchanges()
            .some(
              (e) =>
                e.url.includes(`/namespaces/${namespace}/secrets`) &&
                e.status === 200 &&
                e.body.includes(`"resourceVersion":"${rotated.metadata.resourceVersion}"`),
            ),
        "the rotation's watch event",
        60_000,
      );

      const verified = (await server.request('kubeConflictHints/verify', { uri })) as {
        agreed: number;
        differences: string[];
        failed: string[];
      };
      assert.deepEqual(verified.failed, []);
      // The server refuses db (kubectl-edit owns the value, which the prediction never read) and accepts tls.
      assert.equal(verified.differences.length, 1, JSON.stringify(verified));
      assert.match(
        verified.differences[0]!,
        /^Secret "db": the server answered Apply failed with 1 conflict: conflict with "kubectl-edit" using v1: \.data\.password; /,
      );
      assert.equal(verified.agreed, 1, 'tls: the dry run accepts it, as predicted');
      assert.deepEqual(leaks(JSON.stringify(verified)), []);

      // Sentinel: the product's last request before the assertions. Its audit event comes after the
      // dry runs' and the list's, whose absence is then meaningful.
      const sentinel = `sentinel-${crypto.randomBytes(4).toString('hex')}`;
      await server.open(
        'file:///w/sentinel.yaml',
        `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${sentinel}\n  namespace: ${namespace}\n`,
      );
      await server.diagnostics('file:///w/sentinel.yaml');
      assert.ok(
        await waitForAuditEvent(
          cluster.auditLog,
          (e) =>
            e.userAgent === editorUserAgent &&
            e.objectRef?.resource === 'configmaps' &&
            e.objectRef.namespace === namespace,
        ),
        'the sentinel request reached the audit log',
      );
      for (const name of ['db', 'tls', 'frozen']) {
        assert.ok(
          await waitForAuditEvent(
            cluster.auditLog,
            (e) => fromProduct(e, since, namespace) && e.verb === 'patch' && e.objectRef?.name === name,
          ),
          `the dry run of ${name} in the audit log (the server drops the event of a PATCH whose body it cannot write as JSON)`,
        );
      }
    } finally {
      await server.shutdown();
      await proxy.stop();
      fs.rmSync(scratch, { recursive: true, force: true });
    }

    // The audit log: every answer about Secrets the product got was metadata only, a Table without
    // the object, or a Status.
    const events = readAuditEvents(cluster.auditLog).filter(
      (e) => fromProduct(e, since, namespace) && e.stage === 'ResponseComplete',
    );
    const verbs = new Set(events.map((e) => e.verb));
    assert.ok(
      verbs.has('list') && verbs.has('patch') && verbs.has('get'),
      `the product lists, gets (as a Table) and dry-runs the Secrets: ${[...verbs].join(', ')}`,
    );
    // A watch's events are not in the audit log (the proxy below sees them); a refusal (the 409 of
    // db) is recorded as its status, which is all it answers.
    for (const event of events.filter((e) => e.verb !== 'watch')) {
      const refused = (event.responseStatus?.code ?? 0) >= 400;
      const kind = refused ? 'Status' : event.responseObject?.kind;
      const table =
        kind === 'Table' &&
        event.requestURI.includes('includeObject=None') &&
        tableWithoutValues(event.responseObject as Parameters<typeof tableWithoutValues>[0]);
      assert.ok(
        kind === 'PartialObjectMetadata' || kind === 'PartialObjectMetadataList' || kind === 'Status' || table,
        `${event.verb} ${event.requestURI} was answered with a ${kind}: it can carry Secret values`,
      );
      assert.deepEqual(
        leaks(JSON.stringify([event.responseObject ?? {}, event.responseStatus ?? {}])),
        [],
        `${event.verb} ${event.requestURI}`,
      );
    }
    // The proxy: every request for Secrets asked for metadata only (watches included) or a Table
    // without the object, and no answer of any request held a value (the test's own writes do not go
    // through it). The copy kubectl's last-applied annotation keeps: test/security/hostile-repo/.
    const exchanges = proxy.exchanges();
    const secretRequests = exchanges.filter((e) => /\/secrets([/?]|$)/.test(e.url));
    assert.ok(
      secretRequests.some((e) => e.url.includes('watch=true')),
      'the Secrets were watched',
    );
    const asTable = (e: { method: string; url: string; accept: string }) =>
      e.accept === tableAccept && /[?&]includeObject=None(&|$)/.test(e.url) && !e.url.includes('watch=true');
    assert.deepEqual(
      secretRequests
        .filter((e) => !metadataOnlyAccept.test(e.accept) && !asTable(e))
        .map((e) => `${e.method} ${e.url} Accept: ${e.accept}`),
      [],
    );
    // The immutable Secret was asked about with a JSON Patch of tests alone, as a dry run.
    const probes = secretRequests.filter(
      (e) =>
        e.method === 'PATCH' && e.url.includes('/secrets/frozen?') && e.contentType === 'application/json-patch+json',
    );
    assert.ok(
      probes.length > 0 &&
        probes.every(
          (e) =>
            e.url.includes('dryRun=All') &&
            (JSON.parse(e.requestBody) as { op: string }[]).every((op) => op.op === 'test'),
        ),
      JSON.stringify(probes.map((e) => e.url)),
    );
    assert.deepEqual(
      exchanges.filter((e) => leaks(e.body).length > 0).map((e) => `${e.method} ${e.url}`),
      [],
    );
  },
);

function fromProduct(e: AuditEvent, since: number, namespace: string): boolean {
  return (
    e.userAgent === editorUserAgent &&
    e.objectRef?.resource === 'secrets' &&
    e.objectRef.namespace === namespace &&
    Date.parse(e.requestReceivedTimestamp ?? '') >= since
  );
}

async function until(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test(
  "finding where a chart is installed reads Helm's release records as metadata only: the values they hold never arrive",
  { timeout: 180_000 },
  async (t) => {
    const cluster = requireCluster(t);
    const helm = requireTool(t, 'helm4');
    if (!cluster || !helm) return;
    // A release whose values hold a secret: Helm keeps them in its release record (a Secret's data).
    const planted = `release-value-${crypto.randomBytes(6).toString('hex')}`;
    const { repo, chart, namespace } = await chartInstalledElsewhere(cluster, helm, 'kch-release-records', [
      `dbPassword=${planted}`,
    ]);
    const { proxy, kubeconfig } = await recordCluster(cluster, 'admin', path.join(repo, 'kubeconfig'));
    t.after(() => proxy.stop());
    // No release or namespace named: the editor asks the cluster where the chart is installed.
    const server = await startTestServer({
      settings: { kubeconfig, helmPath: helm },
      workspaceFolders: [pathToFileURL(repo).href],
    });
    t.after(() => server.shutdown());
    const template = path.join(chart, 'templates', 'deployment.yaml');
    await server.open(pathToFileURL(template).href, fs.readFileSync(template, 'utf8'));
    const found = await server.diagnosticsUntil(
      pathToFileURL(template).href,
      (ds) => ds.some((d) => d.code === 'field-conflict'),
      90_000,
    );
    assert.match(
      found.find((d) => d.code === 'field-conflict')!.message,
      new RegExp(`release web in namespace ${namespace}`),
      'the release was found (from its objects and records)',
    );

    const secretRequests = proxy.exchanges().filter((e) => /\/secrets([/?]|$)/.test(e.url));
    assert.ok(
      secretRequests.some((e) => e.url.startsWith('/api/v1/secrets?') && e.url.includes('labelSelector=owner%3Dhelm')),
      'the release records were listed',
    );
    for (const e of secretRequests) {
      assert.match(e.accept, metadataOnlyAccept, `${e.method} ${e.url}`);
      const body = JSON.parse(e.body || '{}') as { kind?: string; items?: { data?: unknown }[] };
      assert.ok(
        body.kind === 'PartialObjectMetadataList' || body.kind === 'PartialObjectMetadata' || body.kind === 'Status',
        `${e.url} answered a ${body.kind}`,
      );
      assert.ok(
        (body.items ?? []).every((i) => i.data === undefined),
        `${e.url}: no item carries data`,
      );
    }
    const b64 = Buffer.from(planted).toString('base64');
    assert.deepEqual(
      proxy
        .exchanges()
        .filter((e) => e.body.includes(planted) || e.body.includes(b64))
        .map((e) => e.url),
      [],
    );
  },
);
