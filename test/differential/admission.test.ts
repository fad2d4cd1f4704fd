// The differential proof of what admission does to the request an apply sends, besides the object's
// own validation (refusals.test.ts): the admission webhooks the server calls, and LimitRange and
// ResourceQuota for the Pods a request creates. Each scenario of test/differential/admission/*.yaml
// runs in a namespace of its own on the real kube-apiserver.
//
// Webhooks (webhooks.yaml): a real webhook server (test/support/webhook-server.ts: HTTPS on loopback,
// a CA of its own, AdmissionReview v1, recording each call) and the scenario's configurations,
// registered after the history is replayed. Each configuration is kept to its scenario (every
// webhook's namespaceSelector and objectSelector also require the label `kch-wh: <namespace>`,
// which the suite puts on the scenario's namespace and objects), so no other test's request ever
// reaches it. Then: the product judges the manifest (a connection of its own, so the webhooks are
// listed anew), the server gets the request kubectl sends as a dry run, and the webhooks it really
// called must be the ones the product names as certain, plus some of those it names as "may".
//
// LimitRange and ResourceQuota (quota.yaml): the scenario's LimitRanges and ResourceQuotas, each
// quota's `status.hard`/`status.used` written through the /status subresource as the quota
// controller would (the test cluster runs no controller manager). For a Pod, the request itself is
// the truth; for a workload, the Pods its controller would create from the template: the Pods the
// product says fit are created for real (the quota plugin adds each to `status.used`, as it does for
// the controller's), and the next one, sent as a dry run, must be refused in the product's words.
// The last test prints `admission agreement: N/N scenarios`.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import {
  createClusterConnection,
  createFactsSource,
  verifyResource,
  type VerifyAnswer,
} from '../../server/src/cluster';
import { analyzeResource, namedWebhook, type Finding } from '../../server/src/core/findings';
import { parseManifestText } from '../../server/src/core/manifest/manifest';
import { requireCluster } from '../support/env';
import { connect, create, objectOf, objectPath, request, type Connection, type KubeObject } from '../support/seed';
import { startWebhookServer, type WebhookServer } from '../support/webhook-server';
import { replayHistory } from './replay';
import { withNamespace, type HistoryStep } from './scenario';

interface WebhookSpec {
  name: string;
  type: 'validating' | 'mutating';
  /** Deny every call with this message. */
  deny?: string;
  [field: string]: unknown;
}

interface WebhookScenario {
  name: string;
  namespaceLabels?: Record<string, string>;
  history?: HistoryStep[];
  webhooks: WebhookSpec[];
  manifest: string;
  mode?: 'serverSide' | 'create';
  /** The webhooks (short names) the server is to call: a guard against a scenario that stopped provoking it. */
  called: string[];
  file: string;
}

interface QuotaSpec {
  name: string;
  hard: Record<string, string>;
  used: Record<string, string>;
  spec?: Record<string, unknown>;
}

interface QuotaScenario {
  name: string;
  limitRanges?: { limits: unknown[] }[];
  quotas?: QuotaSpec[];
  history?: HistoryStep[];
  manifest: string;
  /**
   * What the server answers the request (a Pod), or the Pod of a workload's template that the
   * product says is refused (else the first); `invalid`: a 422 before admission judges it.
   */
  server: 'accepted' | 'forbidden' | 'invalid';
  file: string;
}

const dir = path.join(import.meta.dirname, 'admission');
function load<T>(file: string): (T & { file: string })[] {
  const list = parseYaml(fs.readFileSync(path.join(dir, file), 'utf8')) as T[];
  assert.ok(Array.isArray(list), `${file}: a list`);
  return list.map((s) => ({ ...s, file }));
}
const webhookScenarios = load<WebhookScenario>('webhooks.yaml');
const quotaScenarios = load<QuotaScenario>('quota.yaml');
const outcomes = new Map<string, boolean>();
let admin: Connection;
let hooks: WebhookServer | undefined;
let ready = false;

before(async () => {
  if (!process.env.KCH_KUBECONFIG || !fs.existsSync(process.env.KCH_KUBECONFIG)) return;
  admin = connect('admin');
  hooks = await startWebhookServer();
  ready = true;
});

after(async () => {
  await hooks?.close();
});

describe('differential: admission webhooks vs the real kube-apiserver', { concurrency: 4 }, () => {
  for (const [n, scenario] of webhookScenarios.entries())
    test(`${scenario.file}: ${scenario.name}`, async (t) => {
      if (!requireCluster(t)) return;
      assert.ok(ready, 'the suite setup did not finish');
      outcomes.set(scenario.name, false);
      await runWebhookScenario(scenario, `kw${n}`);
      outcomes.set(scenario.name, true);
    });
});

describe('differential: LimitRange and ResourceQuota vs the real kube-apiserver', { concurrency: 4 }, () => {
  for (const [n, scenario] of quotaScenarios.entries())
    test(`${scenario.file}: ${scenario.name}`, async (t) => {
      if (!requireCluster(t)) return;
      assert.ok(ready, 'the suite setup did not finish');
      outcomes.set(scenario.name, false);
      await runQuotaScenario(scenario, `kq${n}`);
      outcomes.set(scenario.name, true);
    });
});

test('admission agreement over the corpus', (t) => {
  if (!requireCluster(t)) return;
  const all = [...webhookScenarios, ...quotaScenarios];
  const agreed = all.filter((s) => outcomes.get(s.name) === true);
  const line = `admission agreement: ${agreed.length}/${all.length} scenarios`;
  console.log(line);
  t.diagnostic(line);
  assert.ok(webhookScenarios.length >= 10, `${webhookScenarios.length} webhook scenarios; at least 10 are needed`);
  assert.ok(quotaScenarios.length >= 30, `${quotaScenarios.length} quota scenarios; at least 30 (15 pairs) are needed`);
  assert.deepEqual(
    all.filter((s) => outcomes.get(s.name) !== true).map((s) => s.name),
    [],
  );
});

// -------------------------------------------------------------------------------------------------

const guard = 'kch-wh';

function withLabel(obj: KubeObject, key: string, value: string): KubeObject {
  return { ...obj, metadata: { ...obj.metadata, labels: { ...(obj.metadata?.labels ?? {}), [key]: value } } };
}

/** The history's objects carry the scenario's label too (an old object's labels meet the objectSelector). */
function labelledHistory(history: HistoryStep[], namespace: string): HistoryStep[] {
  return history.map((step) => {
    if ('apply' in step)
      return { ...step, apply: { ...step.apply, object: withLabel(step.apply.object, guard, namespace) } };
    if ('create' in step)
      return { ...step, create: { ...step.create, object: withLabel(step.create.object, guard, namespace) } };
    return step;
  });
}

async function namespaceFor(prefix: string, labels: Record<string, string> = {}): Promise<string> {
  const namespace = `${prefix}-${Math.random().toString(36).slice(2, 8)}`;
  objectOf(
    await create(admin, 'kch-test-setup', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: namespace, labels: { ...labels, [guard]: namespace } },
    }),
    `namespace ${namespace}`,
  );
  return namespace;
}

/** The scenario's text, placed in its namespace and labelled; the resource parsed from it. */
function placedResource(manifest: string, namespace: string, label: boolean) {
  let text = withNamespace(manifest, namespace);
  if (label) {
    const parsed = parseManifestText(text);
    const object = parsed.resources[0]!.object as unknown as KubeObject;
    text = JSON.stringify(withLabel(object, guard, namespace));
  }
  const parsed = parseManifestText(text);
  assert.equal(parsed.resources.length, 1, `one object: ${JSON.stringify(parsed.problems)}`);
  return parsed.resources[0]!;
}

function selectorWithGuard(selector: unknown, namespace: string): Record<string, unknown> {
  const s = (selector ?? {}) as { matchLabels?: Record<string, string> };
  return { ...s, matchLabels: { ...(s.matchLabels ?? {}), [guard]: namespace } };
}

async function runWebhookScenario(scenario: WebhookScenario, prefix: string): Promise<void> {
  const namespace = await namespaceFor(prefix, scenario.namespaceLabels);
  const resource = placedResource(scenario.manifest, namespace, true);
  const namespaced = resource.kind !== 'Namespace' && !/^(ClusterRole|PriorityClass)$/.test(resource.kind);
  const ref = {
    apiVersion: resource.apiVersion,
    kind: resource.kind,
    metadata: { name: resource.name ?? '', ...(namespaced ? { namespace } : {}) },
  };
  await replayHistory(admin, labelledHistory(scenario.history ?? [], namespace), ref, namespace);

  // The scenario's configurations, each webhook kept to this scenario, then a probe that says they are live.
  const full = (short: string) => `${short}.${namespace}.kch.test`;
  const webhookOf = (w: WebhookSpec) => {
    const { name, type: _type, deny, ...rest } = w;
    void _type;
    return {
      admissionReviewVersions: ['v1'],
      sideEffects: 'None',
      timeoutSeconds: 10,
      ...rest,
      name: full(name),
      clientConfig: {
        url: `${hooks!.base}/${namespace}/${name}${deny !== undefined ? `/deny/${encodeURIComponent(deny)}` : ''}`,
        caBundle: Buffer.from(hooks!.caBundle).toString('base64'),
      },
      namespaceSelector: selectorWithGuard(rest.namespaceSelector, namespace),
      objectSelector: selectorWithGuard(rest.objectSelector, namespace),
    };
  };
  const configs: { path: string; name: string }[] = [];
  const register = async (type: 'validating' | 'mutating', name: string, webhooks: unknown[]) => {
    const kind = type === 'validating' ? 'ValidatingWebhookConfiguration' : 'MutatingWebhookConfiguration';
    const collection = `/apis/admissionregistration.k8s.io/v1/${kind.toLowerCase()}s`;
    const answer = await request(admin, 'POST', collection, {
      body: { apiVersion: 'admissionregistration.k8s.io/v1', kind, metadata: { name }, webhooks },
    });
    assert.ok(answer.status === 201, `${kind} ${name}: ${answer.status} ${JSON.stringify(answer.body)}`);
    configs.push({ path: `${collection}/${name}`, name });
  };
  try {
    for (const type of ['mutating', 'validating'] as const) {
      const list = scenario.webhooks.filter((w) => w.type === type).map(webhookOf);
      if (list.length > 0) await register(type, `${namespace}-${type}`, list);
    }
    await register('validating', `${namespace}-probe`, [
      webhookOf({
        name: 'probe',
        type: 'validating',
        rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
        objectSelector: { matchLabels: { 'kch-probe': namespace } },
      }),
    ]);
    await untilProbed(namespace);

    // (a) The product, from reads only: a connection of its own lists the webhooks as they are now.
    const mode = scenario.mode ?? 'serverSide';
    const connection = await createClusterConnection(
      { kubeconfig: process.env.KCH_KUBECONFIG!, context: 'admin' },
      { userAgent: `kch-differential-admission-${process.pid}` },
    );
    const facts = createFactsSource(connection);
    let findings: Finding[];
    let verified: VerifyAnswer;
    try {
      const known = await facts.load({
        apiVersion: resource.apiVersion,
        kind: resource.kind,
        name: resource.name ?? '',
        ...(namespaced ? { namespace } : {}),
      });
      assert.equal(known.webhooks?.state, 'known', `the webhooks' facts: ${JSON.stringify(known.webhooks)}`);
      findings = analyzeResource(resource, known, { fieldManager: 'kubectl', applyMode: mode });
      // The product's own confirmation (check --verify) beside its findings; its webhook calls come before the count below.
      verified = await verifyResource(connection, resource, findings, known, {
        fieldManager: 'kubectl',
        applyMode: mode,
      });
    } finally {
      facts.dispose();
      connection.dispose();
    }
    const named = findings.flatMap((f) => {
      const n = namedWebhook(f);
      return n && n.name.endsWith(`.${namespace}.kch.test`) ? [{ ...n, short: n.name.split('.')[0]! }] : [];
    });

    // (b) The server: the request kubectl sends, as a dry run; the calls the webhook server saw.
    const before = hooks!.callsOf(namespace).length;
    const collection = (await objectPath(admin, ref as KubeObject)).replace(/\/[^/]*$/, '');
    const body = JSON.stringify(resource.object);
    const answer =
      mode === 'serverSide'
        ? await request(admin, 'PATCH', `${collection}/${encodeURIComponent(resource.name ?? '')}`, {
            query: { dryRun: 'All', fieldManager: 'kubectl', force: 'false' },
            contentType: 'application/apply-patch+yaml',
            body: JSON.parse(body) as unknown,
          })
        : await request(admin, 'POST', collection, {
            query: { dryRun: 'All', fieldManager: 'kubectl-create' },
            body: JSON.parse(body) as unknown,
          });
    const calls = hooks!.callsOf(namespace).slice(before);
    const called = [...new Set(calls.map((c) => c.webhook))].sort();
    const report = [
      scenario.name,
      `  server  ${answer.status} ${JSON.stringify((answer.body as { message?: string }).message ?? '')} called ${JSON.stringify(called)} ${JSON.stringify(calls.map((c) => c.operation))}`,
      ...named.map((n) => `  product ${n.short} ${n.certain ? 'will' : 'may'}`),
    ].join('\n');
    if (process.env.KCH_DIFF_VERBOSE) console.log(report);
    assert.deepEqual(called, [...scenario.called].sort(), `the scenario still provokes its calls\n${report}`);
    assert.ok(
      calls.every((c) => c.dryRun),
      'every call of a dry run says dryRun',
    );

    // (c) Agreement: the certain ones were called, and every call was named.
    const certain = named.filter((n) => n.certain).map((n) => n.short);
    const maybe = named.filter((n) => !n.certain).map((n) => n.short);
    assert.deepEqual(
      certain.filter((n) => !called.includes(n)),
      [],
      `named as certain, not called\n${report}`,
    );
    assert.deepEqual(
      called.filter((n) => !certain.includes(n) && !maybe.includes(n)),
      [],
      `called, not named\n${report}`,
    );
    const denied = scenario.webhooks.filter((w) => w.deny !== undefined && called.includes(w.name));
    if (denied.length > 0) {
      const message = (answer.body as { message?: string }).message ?? '';
      assert.ok(answer.status >= 400, `a webhook denied: ${report}`);
      assert.ok(
        denied.some((w) => message.includes(`admission webhook "${full(w.name)}" denied the request: ${w.deny}`)),
        `the server's words: ${message}`,
      );
    } else assert.ok(answer.status < 300, `the server refused: ${report}`);
    assert.ok(
      verified.ok && verified.verification?.agrees !== false,
      `the product's dry run: ${JSON.stringify(verified)}`,
    );
  } finally {
    for (const c of configs) await request(admin, 'DELETE', c.path);
  }
}

/** Sends a dry-run create the probe webhook matches until the webhook server sees it: the configurations are then live. */
async function untilProbed(namespace: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const seen = hooks!.callsOf(namespace).filter((c) => c.webhook === 'probe').length;
    await request(admin, 'POST', `/api/v1/namespaces/${namespace}/configmaps`, {
      query: { dryRun: 'All' },
      body: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'kch-probe', labels: { 'kch-probe': namespace, [guard]: namespace } },
      },
    });
    if (hooks!.callsOf(namespace).filter((c) => c.webhook === 'probe').length > seen) return;
    assert.ok(Date.now() < deadline, 'the webhook configurations did not become live');
    await new Promise((r) => setTimeout(r, 200));
  }
}

// -------------------------------------------------------------------------------------------------

const quotaCodes = new Set(['limit-range-forbidden', 'limit-range-pods-refused', 'quota-exceeded']);

async function runQuotaScenario(scenario: QuotaScenario, prefix: string): Promise<void> {
  const namespace = await namespaceFor(prefix);
  for (const [i, lr] of (scenario.limitRanges ?? []).entries())
    objectOf(
      await create(admin, 'kch-test-setup', {
        apiVersion: 'v1',
        kind: 'LimitRange',
        metadata: { name: `lr${i}`, namespace },
        spec: lr,
      } as KubeObject),
      'limit range',
    );
  for (const q of scenario.quotas ?? []) {
    const made = objectOf(
      await create(admin, 'kch-test-setup', {
        apiVersion: 'v1',
        kind: 'ResourceQuota',
        metadata: { name: q.name, namespace },
        spec: { ...(q.spec ?? {}), hard: q.hard },
      } as KubeObject),
      'quota',
    );
    // What the quota controller would write: the quota's hard, and the usage it counted.
    const status = await request(admin, 'PUT', `/api/v1/namespaces/${namespace}/resourcequotas/${q.name}/status`, {
      body: { ...made, status: { hard: q.hard, used: q.used } },
    });
    assert.equal(status.status, 200, `quota status: ${JSON.stringify(status.body)}`);
  }
  const resource = placedResource(scenario.manifest, namespace, false);
  const ref = {
    apiVersion: resource.apiVersion,
    kind: resource.kind,
    metadata: { name: resource.name ?? '', namespace },
  };
  await replayHistory(admin, scenario.history ?? [], ref, namespace);

  // (a) The product (the quotas' status as written above; LIST per namespace on a fresh connection).
  const connection = await createClusterConnection(
    { kubeconfig: process.env.KCH_KUBECONFIG!, context: 'admin' },
    { userAgent: `kch-differential-admission-${process.pid}` },
  );
  const facts = createFactsSource(connection);
  let findings: Finding[];
  let verified: VerifyAnswer;
  try {
    const known = await facts.load({
      apiVersion: resource.apiVersion,
      kind: resource.kind,
      name: resource.name ?? '',
      namespace,
    });
    assert.equal(
      known.namespacePolicies?.state,
      'known',
      `the namespace's policies: ${JSON.stringify(known.namespacePolicies)}`,
    );
    findings = analyzeResource(resource, known, { fieldManager: 'kubectl', applyMode: 'serverSide' });
    verified = await verifyResource(connection, resource, findings, known, {
      fieldManager: 'kubectl',
      applyMode: 'serverSide',
    });
  } finally {
    facts.dispose();
    connection.dispose();
  }
  const said = findings.filter((f) => quotaCodes.has(f.code));
  const report = [scenario.name, ...said.map((f) => `  product ${f.code}: ${f.message}`)].join('\n');
  if (process.env.KCH_DIFF_VERBOSE) console.log(report);
  assert.ok(said.length <= 1, `one answer at most\n${report}`);
  // The product's own confirmation agrees with its findings (a workload's Pods are no answer of its dry run).
  assert.ok(
    verified.ok && verified.verification?.agrees !== false,
    `the product's dry run: ${JSON.stringify(verified)}`,
  );
  const finding = said[0];

  // (b) The server.
  const isPod = resource.kind === 'Pod';
  if (isPod) {
    const answer = await request(admin, 'PATCH', `/api/v1/namespaces/${namespace}/pods/${resource.name ?? ''}`, {
      query: { dryRun: 'All', fieldManager: 'kubectl', force: 'false' },
      contentType: 'application/apply-patch+yaml',
      body: resource.object,
    });
    const message = (answer.body as { message?: string }).message ?? '';
    const kind = answer.status === 403 ? 'forbidden' : answer.status === 422 ? 'invalid' : 'accepted';
    assert.equal(kind, scenario.server, `${answer.status} ${message}\n${report}`);
    if (answer.status === 403) assert.equal(finding?.serverMessage, message, `the 403 word for word\n${report}`);
    else if (answer.status === 422) {
      // A LimitRange default that puts a request above its limit: the Pod is invalid, in the server's words.
      const invalid = findings.filter((f) => f.code === 'invalid-merged-object');
      assert.ok(invalid.length > 0, `the server's 422: ${message}\n${report}`);
      for (const f of invalid) assert.ok(message.includes(f.serverMessage!), `${f.serverMessage} in ${message}`);
      assert.equal(finding, undefined, report);
    } else assert.equal(finding, undefined, `the server accepted: ${answer.status} ${message}\n${report}`);
    return;
  }
  // A workload: the Pods its controller would create, as the template makes them.
  const pod = podOfTemplate(resource.object as Record<string, unknown>, namespace);
  const m = finding ? /Pod (\d+) of /.exec(finding.message) : null;
  const fit = m ? Number(m[1]) - 1 : 0;
  for (let i = 1; i <= fit; i++) {
    const made = await request(admin, 'POST', `/api/v1/namespaces/${namespace}/pods`, {
      query: { fieldManager: 'kch-test-controller' },
      body: { ...pod, metadata: { ...pod.metadata, name: `fits-${i}` } },
    });
    assert.equal(made.status, 201, `Pod ${i}, which the product says fits: ${JSON.stringify(made.body)}`);
  }
  const answer = await request(admin, 'POST', `/api/v1/namespaces/${namespace}/pods`, {
    query: { dryRun: 'All' },
    body: pod,
  });
  const message = (answer.body as { message?: string }).message ?? '';
  assert.equal(
    answer.status === 403 ? 'forbidden' : answer.status === 422 ? 'invalid' : 'accepted',
    scenario.server,
    `${answer.status} ${message}\n${report}`,
  );
  if (answer.status === 403)
    assert.equal(
      `pods "${pod.metadata.name}" is forbidden: ${finding?.serverMessage ?? ''}`,
      message,
      `the refusal word for word\n${report}`,
    );
  else if (answer.status === 422)
    assert.ok(
      finding?.code === 'limit-range-pods-refused' && message.includes(finding.serverMessage ?? '\u0000'),
      `the Pod's 422: ${message}\n${report}`,
    );
  else assert.equal(finding, undefined, `the server accepted the Pod: ${answer.status} ${message}\n${report}`);
}

function podOfTemplate(object: Record<string, unknown>, namespace: string) {
  let template: unknown = object;
  const at = object.kind === 'CronJob' ? ['spec', 'jobTemplate', 'spec', 'template'] : ['spec', 'template'];
  for (const n of at) template = (template as Record<string, unknown> | undefined)?.[n];
  const t = template as { metadata?: { labels?: unknown }; spec?: unknown };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'kch-pod-of-template', namespace, ...(t.metadata?.labels ? { labels: t.metadata.labels } : {}) },
    spec: t.spec,
  };
}
