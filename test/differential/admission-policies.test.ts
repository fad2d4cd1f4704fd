// The differential proof of ValidatingAdmissionPolicies (admissionregistration.k8s.io/v1): for
// every scenario of test/differential/admission-policies/*.yaml, on the real kube-apiserver (its
// ValidatingAdmissionPolicy plugin is on by default):
//   1. make the scenario's namespace (with its labels) and create its policies, bindings and params
//      (`setup`, where `${namespace}` is the scenario's namespace: every policy of a scenario
//      selects that namespace, or is the one Gateway API ships, so no other test meets it);
//   2. replay the history of writes (as admin, replay.ts);
//   3. judge the manifest as the product does, on a connection made after the setup;
//   4. send the request kubectl sends (a server-side apply or a create) with dryRun=All, again
//      until the server's policy cache has the new policies (the answer the scenario is built to
//      get), and read its status and Warning headers;
//   5. agreement: a refusal in the server's words word for word (admission-policy-denies), each
//      policy warning in its words (admission-policy-warns), nothing where the server accepted
//      without a warning; `unknown` scenarios: the product says admission-policy-unknown and
//      nothing else of the policy.
// The policies are deleted after their scenario. The last test prints `admission policy agreement`.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as path from 'node:path';
import { before, describe, test } from 'node:test';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { createClusterConnection, createFactsSource } from '../../server/src/cluster';
import { analyzeResource } from '../../server/src/core/findings';
import { parseManifestText } from '../../server/src/core/manifest/manifest';
import { requireCluster } from '../support/env';
import {
  connect,
  create,
  deleteObject,
  objectOf,
  objectPath,
  request,
  type Connection,
  type KubeObject,
} from '../support/seed';
import { replayHistory } from './replay';
import { withNamespace, type HistoryStep } from './scenario';

interface PolicyScenario {
  name: string;
  about?: string;
  namespaceLabels?: Record<string, string>;
  /** Policies, bindings and params (YAML documents), `${namespace}` replaced. */
  setup: string;
  history?: HistoryStep[];
  manifest: string;
  mode?: 'serverSide' | 'create';
  server: 'accepted' | 'forbidden' | 'invalid';
  /** Whether the server answers with a policy's warning. */
  warned?: boolean;
  /** Words the server's refusal holds once its caches have the setup (a param's value). */
  expect?: string;
  /** The product says it cannot tell. */
  unknown?: boolean;
  /** Run alone: its policy has the fixed name its project ships it with. */
  shared?: boolean;
  file: string;
}

const dir = path.join(import.meta.dirname, 'admission-policies');

function load(): PolicyScenario[] {
  const out: PolicyScenario[] = [];
  const names = new Set<string>();
  for (const file of fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()) {
    const list = parseYaml(fs.readFileSync(path.join(dir, file), 'utf8')) as PolicyScenario[];
    assert.ok(Array.isArray(list), `${file}: a list of scenarios`);
    for (const s of list) {
      assert.ok(typeof s.name === 'string' && !names.has(s.name), `${file}: a unique name (${s.name})`);
      names.add(s.name);
      assert.ok(['accepted', 'forbidden', 'invalid'].includes(s.server), `${file}: ${s.name}: server`);
      out.push({ ...s, file });
    }
  }
  return out;
}

const scenarios = load();
const outcomes = new Map<string, boolean>();
let admin: Connection | undefined;

function adminConnection(): Connection {
  admin ??= connect('admin');
  return admin;
}

// Params are of a custom kind: a built-in paramKind's informer in kube-apiserver stops for good once
// no binding names it, and its params are then never found again until a restart
// (https://github.com/kubernetes/kubernetes/issues/133827); scenarios delete their bindings, so a
// ConfigMap param would break the next run. Custom kinds' informers are made again.
const paramsCrd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'policyparams.kch.test' },
  spec: {
    group: 'kch.test',
    names: { kind: 'PolicyParam', plural: 'policyparams', singular: 'policyparam', listKind: 'PolicyParamList' },
    scope: 'Namespaced',
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
};

before(async () => {
  if (!process.env.KCH_KUBECONFIG || !fs.existsSync(process.env.KCH_KUBECONFIG)) return;
  const conn = adminConnection();
  const made = await request(conn, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
    query: { fieldManager: 'kch-test-setup' },
    body: paramsCrd,
  });
  assert.ok([201, 409].includes(made.status), `the params CRD: ${made.status}`);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const listed = await request(conn, 'GET', '/apis/kch.test/v1/policyparams', {});
    if (listed.status === 200) break;
    assert.ok(Date.now() < deadline, 'the params CRD is not served');
    await new Promise((r) => setTimeout(r, 200));
  }
});

describe('differential: admission policies with a shipped name, one at a time', { concurrency: 1 }, () => {
  for (const [n, s] of scenarios.entries()) if (s.shared) scenarioTest(s, n);
});

describe('differential: admission policies vs the real kube-apiserver', { concurrency: 4 }, () => {
  for (const [n, s] of scenarios.entries()) if (!s.shared) scenarioTest(s, n);
});

function scenarioTest(scenario: PolicyScenario, n: number): void {
  test(`${scenario.file}: ${scenario.name}`, async (t) => {
    if (!requireCluster(t)) return;
    outcomes.set(scenario.name, false);
    await runScenario(scenario, `kap${n}`);
    outcomes.set(scenario.name, true);
  });
}

test('admission policy agreement over the corpus', (t) => {
  if (!requireCluster(t)) return;
  const agreed = scenarios.filter((s) => outcomes.get(s.name) === true);
  const line = `admission policy agreement: ${agreed.length}/${scenarios.length} scenarios`;
  console.log(line);
  t.diagnostic(line);
  const refused = scenarios.filter((s) => s.server !== 'accepted').length;
  assert.ok(refused >= 20, `${refused} refused scenarios; at least 20 are needed`);
  assert.ok(scenarios.length - refused >= 20, `${scenarios.length - refused} accepted scenarios; at least 20`);
  assert.deepEqual(
    scenarios.filter((s) => outcomes.get(s.name) !== true).map((s) => s.name),
    [],
    'every scenario must agree with the server',
  );
});

// -------------------------------------------------------------------------------------------------

const policyWarning = /^Validation failed for ValidatingAdmissionPolicy /;

async function runScenario(scenario: PolicyScenario, prefix: string): Promise<void> {
  const conn = adminConnection();
  const namespace = `${prefix}-${Math.random().toString(36).slice(2, 8)}`;
  objectOf(
    await create(conn, 'kch-test-setup', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: namespace, ...(scenario.namespaceLabels ? { labels: scenario.namespaceLabels } : {}) },
    }),
    `namespace ${namespace}`,
  );
  const made: KubeObject[] = [];
  try {
    const docs = parseAllDocuments(scenario.setup.replaceAll('${namespace}', namespace))
      .map((doc) => doc.toJS() as KubeObject | null)
      .filter((obj): obj is KubeObject => obj !== null);
    const isPolicy = (o: KubeObject) =>
      o.kind === 'ValidatingAdmissionPolicy' || o.kind === 'ValidatingAdmissionPolicyBinding';
    // The params first: a binding's params are there when the policy starts to judge.
    for (const obj of [...docs.filter((o) => !isPolicy(o)), ...docs.filter(isPolicy)]) {
      const kind = obj.kind;
      const placed =
        kind === 'ValidatingAdmissionPolicy' || kind === 'ValidatingAdmissionPolicyBinding'
          ? obj
          : { ...obj, metadata: { namespace, ...obj.metadata } };
      if (kind === 'PolicyParam') {
        const made = await request(conn, 'POST', `/apis/kch.test/v1/namespaces/${namespace}/policyparams`, {
          query: { fieldManager: 'kch-test-setup' },
          body: placed,
        });
        assert.equal(made.status, 201, `PolicyParam ${obj.metadata.name}`);
        continue;
      }
      objectOf(await create(conn, 'kch-test-setup', placed), `${kind} ${obj.metadata.name}`);
      if (kind === 'ValidatingAdmissionPolicy' || kind === 'ValidatingAdmissionPolicyBinding') made.push(placed);
    }
    await judge(scenario, namespace, conn);
  } finally {
    for (const obj of made.reverse()) await deleteObject(conn, obj);
  }
}

async function judge(scenario: PolicyScenario, namespace: string, conn: Connection): Promise<void> {
  const text = withNamespace(scenario.manifest, namespace);
  const parsed = parseManifestText(text);
  assert.equal(parsed.resources.length, 1, `one object: ${JSON.stringify(parsed.problems)}`);
  const resource = parsed.resources[0]!;
  const ref = {
    apiVersion: resource.apiVersion,
    kind: resource.kind,
    metadata: { name: resource.name ?? '', ...(resource.namespace ? { namespace: resource.namespace } : {}) },
  };
  await replayHistory(conn, scenario.history ?? [], ref, namespace);

  // (a) The server first: again until its policy cache holds the new policies.
  const mode = scenario.mode ?? 'serverSide';
  const collection = (await objectPath(conn, ref as KubeObject)).replace(/\/[^/]*$/, '');
  const body = JSON.stringify(resource.object);
  const ask = () =>
    mode === 'serverSide'
      ? send(
          conn,
          'PATCH',
          `${collection}/${encodeURIComponent(resource.name ?? '')}`,
          { dryRun: 'All', fieldManager: 'kubectl', fieldValidation: 'Strict', force: 'false' },
          'application/apply-patch+yaml',
          body,
        )
      : send(
          conn,
          'POST',
          collection,
          { dryRun: 'All', fieldManager: 'kubectl-create', fieldValidation: 'Strict' },
          'application/json',
          body,
        );
  const kindOf = (a: Answer) =>
    a.status < 300 ? 'accepted' : a.status === 422 ? 'invalid' : a.status === 403 ? 'forbidden' : 'other';
  const warnedOf = (a: Answer) => a.warnings.some((w) => policyWarning.test(w));
  // An answer the policies do not change (accepted, no warning) is taken once the cache had time.
  if (scenario.server === 'accepted' && !scenario.warned) await new Promise((r) => setTimeout(r, 2500));
  let answer = await ask();
  const deadline = Date.now() + 20_000;
  while (
    (kindOf(answer) !== scenario.server ||
      warnedOf(answer) !== (scenario.warned === true) ||
      (scenario.expect !== undefined && !JSON.stringify(answer.body).includes(scenario.expect))) &&
    Date.now() < deadline
  ) {
    await new Promise((r) => setTimeout(r, 250));
    answer = await ask();
  }
  const status = answer.status < 300 ? undefined : (answer.body as { code: number; message: string });
  const warnings = answer.warnings.filter((w) => policyWarning.test(w));

  // (b) The product, on a connection made now: it reads the policies the setup made.
  const connection = await createClusterConnection(
    { kubeconfig: process.env.KCH_KUBECONFIG!, context: 'admin' },
    { userAgent: `kch-differential-policies-${process.pid}` },
  );
  const source = createFactsSource(connection);
  let findings;
  try {
    const known = await source.load({
      apiVersion: resource.apiVersion,
      kind: resource.kind,
      name: resource.name ?? '',
      ...(resource.namespace ? { namespace: resource.namespace } : {}),
    });
    assert.equal(known.admissionPolicies?.state, 'known', JSON.stringify(known.admissionPolicies));
    findings = analyzeResource(resource, known, { fieldManager: 'kubectl', applyMode: mode });
  } finally {
    source.dispose();
    connection.dispose();
  }
  const denies = findings.filter((f) => f.code === 'admission-policy-denies');
  const warns = findings.filter((f) => f.code === 'admission-policy-warns');
  const unknown = findings.filter((f) => f.code === 'admission-policy-unknown');
  const report = [
    scenario.name,
    `  server  ${answer.status} ${status?.message ?? ''} ${JSON.stringify(answer.warnings)}`,
    ...findings.map((f) => `  product ${f.code}: ${f.serverMessage ?? f.message}`),
  ].join('\n');
  if (process.env.KCH_DIFF_VERBOSE) console.log(report);

  assert.equal(kindOf(answer), scenario.server, `the scenario no longer provokes its answer\n${report}`);
  assert.equal(warnedOf(answer), scenario.warned === true, `the server's warnings\n${report}`);

  if (scenario.unknown) {
    assert.ok(unknown.length > 0, `the product should say it cannot tell\n${report}`);
    assert.deepEqual([...denies, ...warns], [], `nothing but unknown\n${report}`);
    return;
  }
  assert.deepEqual(unknown, [], `the product says unknown\n${report}`);
  if (status) {
    assert.equal(denies.length, 1, `one refusal\n${report}`);
    assert.equal(denies[0]!.serverMessage, status.message, `the refusal word for word\n${report}`);
  } else assert.deepEqual(denies, [], `the product says refused; the server accepted\n${report}`);
  assert.deepEqual(
    warns.map((f) => f.serverMessage).sort(),
    [...warnings].sort(),
    `the policies' warnings word for word\n${report}`,
  );
}

interface Answer {
  status: number;
  body: unknown;
  warnings: string[];
}

/** One request; the answer's JSON and its Warning headers (RFC 7234 `299 - "text"`), each as the server wrote it. */
function send(
  conn: Connection,
  method: string,
  urlPath: string,
  query: Record<string, string>,
  contentType: string,
  text: string | undefined,
): Promise<Answer> {
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
