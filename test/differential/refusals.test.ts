// The differential proof of what refuses an apply besides ownership: the object the request would
// store, judged by the server's built-in validation (422 Invalid), and Pod Security admission (403
// Forbidden for a Pod, a warning for a workload whose Pods it refuses). For every scenario of
// test/differential/refusals/*.yaml, in a namespace of its own (with the scenario's labels) on the
// real kube-apiserver:
//   1. replay the history of writes (as admin, test/differential/replay.ts);
//   2. judge the manifest as the product does (the product's facts source, then analyzeResource);
//   3. send the request kubectl sends (a server-side apply with force=false, or a create) with
//      dryRun=All over plain HTTPS, and read the status and the Warning headers as they came;
//   4. the product's findings must say exactly what the server said: each cause of a 422 by its
//      field and words, a 403 in its words, each Pod Security warning in its words, and nothing
//      where the server accepted without a warning. A workload whose Pods the product says are
//      refused, with no warning to compare with, is checked by a dry-run create of a Pod made of
//      its template in the same namespace.
// The last test prints `refusals agreement: N/N scenarios`.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import {
  createClusterConnection,
  createFactsSource,
  type ClusterConnection,
  type FactsSource,
} from '../../server/src/cluster';
import { analyzeResource, type Finding } from '../../server/src/core/findings';
import { parseManifestText } from '../../server/src/core/manifest/manifest';
import { requireCluster } from '../support/env';
import { connect, create, objectOf, objectPath, type Connection, type KubeObject } from '../support/seed';
import { replayHistory } from './replay';
import { withNamespace, type HistoryStep } from './scenario';

interface RefusalScenario {
  name: string;
  about?: string;
  /** Labels of the scenario's namespace (Pod Security's `pod-security.kubernetes.io/*`). */
  namespaceLabels?: Record<string, string>;
  history?: HistoryStep[];
  manifest: string;
  mode?: 'serverSide' | 'create';
  /** The answer the scenario is built to get: a guard against a history that stopped provoking it. */
  server: 'accepted' | 'invalid' | 'forbidden';
  /** Whether the server is to answer with a Pod Security warning. */
  warned?: boolean;
  file: string;
}

const dir = path.join(import.meta.dirname, 'refusals');

function loadRefusalScenarios(): RefusalScenario[] {
  const out: RefusalScenario[] = [];
  const names = new Set<string>();
  for (const file of fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()) {
    const list = parseYaml(fs.readFileSync(path.join(dir, file), 'utf8')) as RefusalScenario[];
    assert.ok(Array.isArray(list), `${file}: a list of scenarios`);
    for (const s of list) {
      assert.ok(typeof s.name === 'string' && !names.has(s.name), `${file}: a unique name (${s.name})`);
      names.add(s.name);
      assert.ok(['accepted', 'invalid', 'forbidden'].includes(s.server), `${file}: ${s.name}: server`);
      out.push({ ...s, file });
    }
  }
  return out;
}

const scenarios = loadRefusalScenarios();
const outcomes = new Map<string, boolean>();
const userAgent = `kch-differential-refusals-${process.pid}`;
let admin: Connection;
let connection: ClusterConnection;
let facts: FactsSource;
let ready = false;

before(async () => {
  if (!process.env.KCH_KUBECONFIG || !fs.existsSync(process.env.KCH_KUBECONFIG)) return;
  admin = connect('admin');
  connection = await createClusterConnection(
    { kubeconfig: process.env.KCH_KUBECONFIG, context: 'admin' },
    { userAgent },
  );
  facts = createFactsSource(connection);
  ready = true;
});

after(() => {
  facts?.dispose();
  connection?.dispose();
});

describe('differential: refusals of the stored object vs the real kube-apiserver', { concurrency: 4 }, () => {
  for (const [n, scenario] of scenarios.entries()) {
    test(`${scenario.file}: ${scenario.name}`, async (t) => {
      if (!requireCluster(t)) return;
      assert.ok(ready, 'the suite setup did not finish');
      outcomes.set(scenario.name, false);
      await runScenario(scenario, `kr${n}`);
      outcomes.set(scenario.name, true);
    });
  }
});

test('refusals agreement over the corpus', (t) => {
  if (!requireCluster(t)) return;
  const agreed = scenarios.filter((s) => outcomes.get(s.name) === true);
  const line = `refusals agreement: ${agreed.length}/${scenarios.length} scenarios`;
  console.log(line);
  t.diagnostic(line);
  assert.ok(scenarios.length >= 50, `the corpus has ${scenarios.length} scenarios; at least 50 are needed`);
  assert.deepEqual(
    scenarios.filter((s) => outcomes.get(s.name) !== true).map((s) => s.name),
    [],
    'every scenario must agree with the server',
  );
});

// -------------------------------------------------------------------------------------------------

/** The codes this suite holds to the server. */
const invalidCode = 'invalid-merged-object';
const forbiddenCode = 'pod-security-forbidden';
const warningCode = 'pod-security-warning';

async function runScenario(scenario: RefusalScenario, prefix: string): Promise<void> {
  const namespace = `${prefix}-${Math.random().toString(36).slice(2, 8)}`;
  objectOf(
    await create(admin, 'kch-test-setup', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: namespace, ...(scenario.namespaceLabels ? { labels: scenario.namespaceLabels } : {}) },
    }),
    `namespace ${namespace}`,
  );
  const text = withNamespace(scenario.manifest, namespace);
  const parsed = parseManifestText(text);
  assert.equal(parsed.resources.length, 1, `one object: ${JSON.stringify(parsed.problems)}`);
  const resource = parsed.resources[0]!;
  const ref = {
    apiVersion: resource.apiVersion,
    kind: resource.kind,
    metadata: { name: resource.name ?? '', namespace },
  };
  await replayHistory(admin, scenario.history ?? [], ref, namespace);

  // (a) The product, from reads only.
  const mode = scenario.mode ?? 'serverSide';
  const target = { apiVersion: resource.apiVersion, kind: resource.kind, name: resource.name ?? '', namespace };
  const known = await untilCurrent(facts, target, ref);
  assert.equal(known.namespace?.state, 'exists', `the namespace's facts: ${JSON.stringify(known.namespace)}`);
  const findings = analyzeResource(resource, known, { fieldManager: 'kubectl', applyMode: mode });

  // (b) The server: what kubectl sends, as a dry run.
  const collection = (await objectPath(admin, ref as KubeObject)).replace(/\/[^/]*$/, '');
  const body = JSON.stringify(resource.object);
  const answer =
    mode === 'serverSide'
      ? await send(
          admin,
          'PATCH',
          `${collection}/${encodeURIComponent(resource.name ?? '')}`,
          { dryRun: 'All', fieldManager: 'kubectl', fieldValidation: 'Strict', force: 'false' },
          'application/apply-patch+yaml',
          body,
        )
      : await send(
          admin,
          'POST',
          collection,
          { dryRun: 'All', fieldManager: 'kubectl-create', fieldValidation: 'Strict' },
          'application/json',
          body,
        );
  const status = answer.status >= 200 && answer.status < 300 ? undefined : (answer.body as ServerStatusBody);
  const podWarnings = answer.warnings.filter((w) => w.startsWith('would violate PodSecurity'));
  const report = [
    scenario.name,
    `  server  ${answer.status} ${status?.message ?? ''} ${JSON.stringify(podWarnings)}`,
    ...findings.map((f) => `  product ${f.code} ${f.serverField ?? f.path ?? ''}: ${f.serverMessage ?? f.message}`),
  ].join('\n');
  if (process.env.KCH_DIFF_VERBOSE) console.log(report);

  // The scenario still provokes its situation.
  const kind = !status ? 'accepted' : status.code === 422 ? 'invalid' : status.code === 403 ? 'forbidden' : 'other';
  assert.equal(kind, scenario.server, `the server answered ${answer.status} ${status?.message ?? ''}\n${report}`);
  assert.equal(
    podWarnings.length > 0,
    scenario.warned === true,
    `the server's warnings: ${JSON.stringify(answer.warnings)}`,
  );

  // (c) Agreement.
  const invalid = findings.filter((f) => f.code === invalidCode);
  const forbidden = findings.filter((f) => f.code === forbiddenCode);
  const warnings = findings.filter((f) => f.code === warningCode);
  if (status?.code === 422) {
    const causes = (status.details?.causes ?? []).map((c) => ({
      field: c.field ?? '',
      words: `${c.field}: ${c.message}`,
    }));
    for (const f of invalid)
      assert.ok(
        causes.some((c) => c.field === f.serverField && c.words === f.serverMessage),
        `the product says ${JSON.stringify(f.serverMessage)}; the server said ${JSON.stringify(causes.map((c) => c.words))}`,
      );
    const named = new Set(findings.filter((f) => f.code === invalidCode || f.code === 'field-immutable').map(fieldOf));
    assert.deepEqual(
      causes.map((c) => bare(c.field)).filter((field) => !named.has(field)),
      [],
      `causes of the server's 422 the product did not name\n${report}`,
    );
  } else
    assert.deepEqual(
      invalid.map(fieldOf),
      [],
      `the product says the server refuses; it answered ${answer.status}\n${report}`,
    );

  if (status?.code === 403) {
    assert.ok(forbidden.length > 0, `the server refused the Pod: ${status.message}\n${report}`);
    for (const f of forbidden) assert.equal(f.serverMessage, status.message, 'the 403 word for word');
  } else
    assert.deepEqual(
      forbidden.map((f) => f.message),
      [],
      `the product says the Pod is refused; the server answered ${answer.status}`,
    );

  // Warnings come only with a success: each of the server's is one the product quotes, and back.
  const quoted = [...new Set(warnings.flatMap((f) => (f.serverMessage !== undefined ? [f.serverMessage] : [])))];
  assert.deepEqual(quoted.sort(), [...podWarnings].sort(), `Pod Security warnings\n${report}`);

  // A workload whose Pods the product says are refused: a Pod of its template, created as a dry run, is.
  const podsRefused = warnings.filter((f) => /every Pod (it creates|made from it) is refused/.test(f.message));
  if (podsRefused.length > 0 && !status) await assertPodsRefused(resource.object, namespace, podsRefused);
}

interface ServerStatusBody {
  code: number;
  message: string;
  details?: { causes?: { field?: string; message?: string }[] };
}

const bare = (field: string): string => field.replace(/^\./, '').replace(/\[[^\]]*\]/g, '[]');
const fieldOf = (f: Finding): string => bare(f.serverField ?? f.path ?? '');

/** The facts once the product's cache holds the object the history left (or its absence). */
async function untilCurrent(
  source: FactsSource,
  target: Parameters<FactsSource['load']>[0],
  ref: { apiVersion: string; kind: string; metadata: { name: string; namespace: string } },
) {
  const held = await send(admin, 'GET', await objectPath(admin, ref as KubeObject), {}, 'application/json', undefined);
  const want =
    held.status === 200
      ? (held.body as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion
      : undefined;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const loaded = await source.load(target);
    const seen =
      loaded.live.state === 'exists'
        ? (loaded.live.object.metadata as { resourceVersion?: string } | undefined)?.resourceVersion
        : undefined;
    if (seen === want && (want !== undefined || loaded.live.state === 'absent')) return loaded;
    assert.ok(Date.now() < deadline, `the product's cache did not see resourceVersion ${String(want)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The Pod a workload's controller would create from its template, sent as a dry-run create: it must be refused as the findings say. */
async function assertPodsRefused(object: Record<string, unknown>, namespace: string, said: Finding[]): Promise<void> {
  let template: unknown = object;
  const kind = object.kind;
  const at =
    kind === 'CronJob'
      ? ['spec', 'jobTemplate', 'spec', 'template']
      : kind === 'PodTemplate'
        ? ['template']
        : ['spec', 'template'];
  for (const n of at) template = (template as Record<string, unknown> | undefined)?.[n];
  const t = template as { metadata?: { labels?: unknown; annotations?: unknown }; spec?: unknown };
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'kch-pod-of-template',
      namespace,
      ...(t.metadata?.labels ? { labels: t.metadata.labels } : {}),
      ...(t.metadata?.annotations ? { annotations: t.metadata.annotations } : {}),
    },
    spec: t.spec,
  };
  const answer = await send(
    admin,
    'POST',
    `/api/v1/namespaces/${namespace}/pods`,
    { dryRun: 'All' },
    'application/json',
    JSON.stringify(pod),
  );
  assert.equal(answer.status, 403, `a Pod of the template: ${JSON.stringify(answer.body)}`);
  const message = (answer.body as ServerStatusBody).message;
  for (const f of said) {
    const m =
      /every Pod (?:it creates|made from it) is refused \(403 Forbidden, (violates PodSecurity "[^"]+")\): (.*?)\.( The server|$)/.exec(
        f.message,
      );
    assert.ok(m, `the finding names the refusal: ${f.message}`);
    assert.ok(
      message.includes(m[1]!) && message.includes(m[2]!),
      `the Pod's refusal ${JSON.stringify(message)} holds ${JSON.stringify(m[2])}`,
    );
  }
}

/** One request; the answer's JSON and its Warning headers (RFC 7234 `299 - "text"`), each as the server wrote it. */
function send(
  conn: Connection,
  method: string,
  urlPath: string,
  query: Record<string, string>,
  contentType: string,
  text: string | undefined,
): Promise<{ status: number; body: unknown; warnings: string[] }> {
  const url = new URL(urlPath, conn.server);
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      {
        method,
        ca: conn.ca,
        timeout: 30_000,
        headers: {
          Authorization: `Bearer ${conn.token}`,
          Accept: 'application/json',
          'Content-Type': contentType,
          'User-Agent': 'kch-test-oracle',
        },
      },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (data += chunk));
        res.on('end', () => {
          const warnings: string[] = [];
          for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) {
            if (res.rawHeaders[i]!.toLowerCase() !== 'warning') continue;
            const m = /^\d{3} \S+ "((?:[^"\\]|\\.)*)"/.exec(res.rawHeaders[i + 1]!);
            if (m) warnings.push(m[1]!.replace(/\\(.)/g, '$1'));
          }
          let body: unknown = data;
          try {
            body = JSON.parse(data);
          } catch {
            // kept as text
          }
          resolve({ status: res.statusCode ?? 0, body, warnings });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${url.pathname}: timeout`)));
    req.on('error', reject);
    req.end(text);
  });
}
