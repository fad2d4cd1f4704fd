// The differential proof of the conflict engine. For every scenario of
// test/differential/scenarios/*.yaml, in a namespace of its own on the real kube-apiserver:
//   1. replay the history of writes (as admin, through test/support/seed.ts);
//   2. predict as the product does, from reads only: the live object and the schema through the
//      product's ClusterConnection (list+watch cache, /openapi/v3), the manifest through the
//      product's parser, then core/ssa/predict.ts;
//   3. ask the server the same question (apply, update or create, per mode) over plain HTTPS,
//      exactly as the real kubectl sends it (its request, read off its log: oracle.ts
//      kubectlSends), whose object must be the one the product sends; the product's own
//      dry run (cluster/dry-run.ts, the request the editor and the check send) must hear the same;
//   4. the two answers must be equal: success, or the same status code, reason and message and
//      the same causes, as the server sent them (oracle.ts reads them; nothing is translated);
//   5. when a server-side apply is accepted, apply it for real and compare what disappeared (a
//      plain JSON before/after walk along the server's managedFields, oracle.ts) with the
//      predicted deletions.
// The last test prints `agreement: N/N scenarios` and fails unless every scenario agreed.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import {
  createClusterConnection,
  createFactsSource,
  dryRunManifestOf,
  sendDryRun,
  sentManifest,
  type ClusterConnection,
  type DryRunOutcome,
  type FactsSource,
} from '../../server/src/cluster';
import {
  analyzeResource,
  type AnalysisSettings,
  type Finding,
  type ResourceFacts,
} from '../../server/src/core/findings';
import { docsLinks } from '../../server/src/core/findings/catalogue';
import { definedKinds, withDefinedKinds } from '../../server/src/core/findings/kind-served';
import type { JsonObject } from '../../server/src/core/json';
import { parseManifestText, type ManifestResource } from '../../server/src/core/manifest/manifest';
import { conflictCauses, describeManager, formatServerPath } from '../../server/src/core/ssa/messages';
import { predictApply, type ApplyPrediction } from '../../server/src/core/ssa/predict';
import { requireCluster } from '../support/env';
import {
  apply,
  connect,
  deleteObject,
  freshNamespace,
  get,
  objectOf,
  objectPath,
  request,
  update,
  type Connection,
  type KubeObject,
} from '../support/seed';
import { installWidgetCrd, waitForOpenApi } from '../support/seed-crd';
import {
  crdEstablished,
  guessedResource,
  kubectlRuns,
  kubectlSends,
  notServedTruth,
  removedRoots,
  sendRaw,
  serverStatus,
  topMost,
  type KubectlRequest,
  type RawAnswer,
  type ServerStatus,
} from './oracle';
import { applyCrd, replayHistory } from './replay';
import {
  crdDir,
  crdSteps,
  historyIn,
  loadScenarios,
  withNamespace,
  type Scenario,
  type ServerAnswer,
} from './scenario';
import { auditSentinel } from '../support/cluster';

const scenarios = loadScenarios();
const outcomes = new Map<string, 'agreed' | 'disagreed' | 'excluded'>();

// This run's own: the audit log of a long-running local server holds earlier runs' requests too.
const userAgent = `kch-differential-${process.pid}-${Date.now().toString(36)}`;
let admin: Connection;
let connection: ClusterConnection;
let facts: FactsSource;
let ready = false;
// kubectl's discovery cache, this run's own (kubectl is run for each manifest: oracle.ts kubectlSends).
const kubectlCache = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-differential-kubectl-'));

before(async () => {
  if (!process.env.KCH_KUBECONFIG || !fs.existsSync(process.env.KCH_KUBECONFIG)) return;
  admin = connect('admin');
  // CRDs first: the product's OpenAPI index is read once, and must already list their versions.
  await installWidgetCrd(admin);
  for (const file of fs.readdirSync(crdDir).filter((f) => f.endsWith('.yaml'))) {
    const crd = parseYaml(fs.readFileSync(path.join(crdDir, file), 'utf8')) as KubeObject;
    objectOf(await apply(admin, 'kch-test-setup', crd, { force: true }), `install ${file}`);
  }
  // A scenario that changes a CRD's schema starts from the CRD's first state, installed here so
  // that discovery lists it when the product connects (its history applies it again, unchanged).
  for (const scenario of scenarios) {
    const first = crdSteps(scenario.history)[0];
    if (first && !scenario.excluded) await applyCrd(admin, first);
  }
  await waitForOpenApi(admin, ['apis/kch.example.com/v1', ...crdVersions()]);
  connection = await createClusterConnection(
    { kubeconfig: process.env.KCH_KUBECONFIG, context: 'admin' },
    { userAgent },
  );
  facts = createFactsSource(connection);
  ready = true;
});

after(() => {
  fs.rmSync(kubectlCache, { recursive: true, force: true });
  facts?.dispose();
  connection?.dispose();
});

describe('differential: prediction vs the real kube-apiserver', { concurrency: 6 }, () => {
  for (const [n, scenario] of scenarios.entries()) {
    test(`${scenario.file}: ${scenario.name}`, async (t) => {
      if (scenario.excluded) {
        outcomes.set(scenario.name, 'excluded');
        t.skip(`excluded: ${scenario.excluded}`);
        return;
      }
      if (!requireCluster(t)) return;
      assert.ok(ready, 'the suite setup did not finish');
      outcomes.set(scenario.name, 'disagreed');
      await runScenario(scenario, `kd${n}`);
      outcomes.set(scenario.name, 'agreed');
    });
  }
});

test('the product sent the cluster only reads and dry runs', async (t) => {
  const cluster = requireCluster(t);
  if (!cluster) return;
  // Without the audit log this proof cannot be made: under CI that is a failure, not a pass.
  if (!cluster.auditLog) {
    if (process.env.CI === 'true')
      assert.fail('KCH_AUDIT_LOG is not set: the audit log is the only proof of what the product sent');
    t.skip('KCH_AUDIT_LOG is not set');
    return;
  }
  // Predictions read (GET, LIST, WATCH, OpenAPI); the verifier writes with dryRun=All. The audit
  // log sees every request the product's connection (this run's user agent) sent. A sentinel
  // request sent after the product's last one must be in the log first: then the product's are too.
  await auditSentinel(cluster.auditLog, (p) => request(admin, 'GET', p));
  const sent = readAudit(cluster.auditLog).filter((e) => e.userAgent === userAgent);
  assert.ok(sent.length > scenarios.length, `only ${sent.length} requests from the product in the audit log`);
  const writes = sent.filter((e) => !['get', 'list', 'watch'].includes(e.verb));
  assert.ok(writes.length > 0, 'the verifier sent no dry run at all');
  const real = writes.filter((e) => !/[?&]dryRun=All(&|$)/.test(e.requestURI)).map((e) => `${e.verb} ${e.requestURI}`);
  assert.deepEqual(real, [], 'product requests that would change the cluster');
});

test('agreement over the whole corpus', (t) => {
  if (!requireCluster(t)) return;
  const counted = scenarios.filter((s) => !s.excluded);
  const agreed = counted.filter((s) => outcomes.get(s.name) === 'agreed');
  const excluded = scenarios.length - counted.length;
  const line = `agreement: ${agreed.length}/${counted.length} scenarios${excluded ? ` (${excluded} excluded, reasons in the corpus)` : ''}`;
  console.log(line);
  t.diagnostic(line);
  assert.ok(counted.length >= 60, `the corpus has ${counted.length} scenarios; at least 60 are needed`);
  const failed = counted.filter((s) => outcomes.get(s.name) !== 'agreed').map((s) => s.name);
  assert.deepEqual(failed, [], 'every scenario must agree with the server');
});

// -------------------------------------------------------------------------------------------------

function readAudit(auditLog: string): { verb: string; requestURI: string; userAgent?: string }[] {
  return fs
    .readFileSync(auditLog, 'utf8')
    .split('\n')
    .filter(Boolean)
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as { verb: string; requestURI: string; userAgent?: string }];
      } catch {
        return [];
      }
    });
}

async function runScenario(scenario: Scenario, prefix: string): Promise<void> {
  // A namespace that is never created has a name like the others, so nothing else can have made it.
  const namespace =
    scenario.namespace === 'absent'
      ? `${prefix}-${Math.random().toString(36).slice(2, 8)}`
      : await freshNamespace(admin, prefix);
  const text = withNamespace(scenario.manifest, namespace);
  const parsed = parseManifestText(text);
  // Several objects only where the manifest places them itself: the last is judged, the others are the files applied with it.
  const several = scenario.manifest.includes('${namespace}');
  assert.ok(
    several ? parsed.resources.length >= 1 : parsed.resources.length === 1,
    `the manifest must hold one object: ${JSON.stringify(parsed.problems)}`,
  );
  const resources = parsed.resources;
  const resource = resources[resources.length - 1]!;
  const ref = {
    apiVersion: resource.apiVersion,
    kind: resource.kind,
    metadata: { name: resource.name ?? '', namespace },
  };
  // `${namespace}` in a history names the scenario's own cluster-scoped objects (see withNamespace).
  await replayHistory(admin, historyIn(scenario.history, namespace), ref, namespace);

  const fieldManager = scenario.fieldManager ?? 'kubectl';
  const mode = scenario.mode ?? 'serverSide';
  // After a CRD upgrade the product is asked afresh, as by a user who opens the manifest then:
  // the suite's long-lived connection read that CRD's schema before the change.
  const fresh =
    crdSteps(scenario.history).length > 0
      ? await createClusterConnection({ kubeconfig: process.env.KCH_KUBECONFIG!, context: 'admin' }, { userAgent })
      : undefined;
  const product = fresh ? { connection: fresh, facts: createFactsSource(fresh) } : { connection, facts };
  try {
    await predictAndCompare(scenario, product, text, resources, ref, namespace, fieldManager, mode);
  } finally {
    if (fresh) {
      product.facts.dispose();
      fresh.dispose();
    }
  }
}

async function predictAndCompare(
  scenario: Scenario,
  { connection, facts }: { connection: ClusterConnection; facts: FactsSource },
  text: string,
  resources: readonly ManifestResource[],
  ref: KubeObject,
  namespace: string,
  fieldManager: string,
  mode: NonNullable<Scenario['mode']>,
): Promise<void> {
  const resource = resources[resources.length - 1]!;
  // (a) The product's prediction, from reads only.
  const target = { apiVersion: resource.apiVersion, kind: resource.kind, name: resource.name ?? '', namespace };
  // A cluster-scoped kind's collection is shared by the scenarios: its watch brings this one's
  // object a moment after the history wrote it. The product is asked once it has seen that write.
  if (scenario.manifest.includes('${namespace}')) await untilSeen(facts, target, ref);
  const loaded = await facts.load(target);
  // An object without a name (generateName) is always a new one: the editor and the check do not
  // look it up (the cluster layer calls the empty name invalid and asks nothing).
  const known: typeof loaded =
    resource.name === undefined && resource.generateName !== undefined
      ? { ...loaded, live: { state: 'absent' } }
      : loaded;
  // A kind the cluster does not serve, a namespace that does not exist: judged before any ownership.
  if (known.kind.state === 'notServed' || known.namespace?.state === 'missing') {
    await compareRefusal(scenario, connection, text, resources, known, namespace, fieldManager, mode);
    return;
  }
  assert.equal(
    resources.length,
    1,
    'only a kind or a namespace the files define is judged with the files applied with it',
  );
  assert.equal(known.kind.state, 'served', `kind: ${JSON.stringify(known.kind)}`);
  if (known.kind.state !== 'served') return;
  assert.ok(
    known.live.state === 'exists' || known.live.state === 'absent',
    `live object: ${JSON.stringify(known.live)}`,
  );
  assert.ok(known.schema, `no schema for ${resource.apiVersion}`);
  const live = known.live.state === 'exists' ? known.live.object : undefined;
  const prediction = predictApply({
    manifestObject: resource.object,
    live,
    schema: known.schema,
    fieldManager,
    mode,
    resource: { group: known.kind.group, resource: known.kind.resource },
    ...(known.versions ? { versions: known.versions } : {}),
  });
  const predicted = predictedStatus(prediction);

  // (b) The server's answer to what kubectl sends, as it sent it.
  const exists = live !== undefined;
  const command = mode === 'create' ? 'create' : mode === 'clientSide' ? 'apply' : 'apply --server-side';
  const kubectl = await kubectlSends(process.env.KCH_KUBECONFIG!, 'admin', kubectlCache, command, fieldManager, text);
  const productSends = sentManifest(dryRunManifestOf(resource), { applyMode: mode }, exists).object;
  let request: KubectlRequest;
  if ('refused' in kubectl) {
    // kubectl sends nothing; its words are what the user reads. The server is asked what the
    // product's own dry run sends (what a client without kubectl's check would get).
    assert.equal(scenario.kubectl, 'refuses', `kubectl refused the manifest: ${kubectl.refused}`);
    request = await requestOf(mode, productSends, fieldManager, exists);
  } else {
    assert.equal(
      scenario.kubectl,
      undefined,
      `the scenario says kubectl refuses it, but kubectl sent ${kubectl.sent.method} ${kubectl.sent.url}`,
    );
    request = kubectl.sent;
    // A client-side apply sends kubectl's own patch (or the object with its last-applied
    // annotation): not the product's object, by design of that mode.
    if (mode !== 'clientSide')
      assert.deepEqual(productSends, JSON.parse(request.body), 'the product sends the object kubectl sends');
  }
  const { answer, dryRunSaid } = await askServer(connection, scenario, resource, request, fieldManager, exists);
  const server = serverStatus(answer);

  // KCH_DIFF_VERBOSE=1 prints both answers (and what a real apply deleted) of every scenario.
  const report = [
    `${scenario.name}`,
    `  predicted ${JSON.stringify(predicted ?? 'accepted')}`,
    `  server    ${JSON.stringify(server ?? 'accepted')}`,
  ];
  const findings = analyzeResource(resource, known, { fieldManager, applyMode: mode });
  const validation = findings.filter((f) => validationCodes.has(f.code) || undecidedCodes.has(f.code));
  if (validation.length > 0) report.push(`  product   422 naming ${JSON.stringify(validation.map(fieldOf))}`);
  if (dryRunSaid) report.push(`  (its dry run answered ${JSON.stringify(dryRunSaid)}; the real request is the truth)`);
  const printReport = () => process.env.KCH_DIFF_VERBOSE && console.log(report.join('\n'));
  const checksDeletions = mode === 'serverSide' && server === undefined && live !== undefined;
  if (!checksDeletions) printReport();
  // The history still provokes the situation the scenario is about.
  assert.equal(
    kindOfAnswer(server),
    scenario.server,
    `the server answered ${JSON.stringify(server ?? 'accepted')}; the scenario expects ${scenario.server}`,
  );

  // (c) Agreement. The server's validation (422) comes after every other refusal; the product
  // predicts it as findings that each name the field the server will name.
  if (server?.code === 422 && validation.length > 0 && (predicted === undefined || predicted.code === 422)) {
    assertValidationCauses(server, predicted, findings);
  } else if (prediction.unconverted.length > 0) {
    assertWithinUnconverted(prediction, predicted, server);
  } else if (prediction.uncertain.length > 0 && (server === undefined || server.causes.length > 0)) {
    assertWithinUncertain(prediction, predicted, server);
  } else if (
    predicted === undefined &&
    (server === undefined || (server.code === 422 && server.reason === 'Invalid'))
  ) {
    // Past ownership and the lock the server validates the object it would store (422 Invalid):
    // its causes are compared with the product's findings by field and word.
    assertValidationCauses(server, predicted, findings);
  } else {
    assert.deepEqual(predicted, server, `problems: ${JSON.stringify(prediction.problems)}`);
  }
  // A refusal the product foresees comes after an answer it foresaw too, or it is the server's.
  const sure = validation.filter((f) => validationCodes.has(f.code));
  if (sure.length > 0)
    assert.ok(
      server !== undefined,
      `the product says the server refuses ${JSON.stringify(sure.map(fieldOf))}; the server accepts`,
    );
  if ('refused' in kubectl) {
    // `json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.labels of type string`:
    // the prediction must refuse the manifest at that field.
    const field = /Go struct field \w+\.(\S+) of type/.exec(kubectl.refused)?.[1];
    assert.ok(field, `kubectl's words name no field: ${kubectl.refused}`);
    assert.ok(
      predicted && predicted.code !== 409 && predicted.message.includes(`.${field}`),
      `kubectl refuses ${field}; the prediction says ${JSON.stringify(predicted ?? 'accepted')}`,
    );
    // What the user reads (the editor's and the check's finding) is kubectl's refusal, word for word.
    const words = /json: cannot unmarshal .*/.exec(kubectl.refused)?.[0] ?? kubectl.refused;
    const findings = analyzeResource(resource, known, { fieldManager, applyMode: mode });
    assert.ok(
      findings.some((f) => f.code === 'invalid-manifest' && f.severity === 'error' && f.message.includes(words)),
      `kubectl says ${JSON.stringify(words)}; the product says ${JSON.stringify(findings.map((f) => f.message))}`,
    );
  }

  // (d) Deletions: the real apply, and what disappeared, judged on plain JSON.
  if (checksDeletions) {
    let beforeApply = objectOf(await get(admin, ref), 'read before the real apply');
    // After a CRD change the stored managedFields are still those of the old schema; the server
    // reconciles them at its next write. The oracle reads them as that write sees them: the answer
    // of a dry-run update that changes nothing.
    if (crdSteps(scenario.history).length > 0)
      beforeApply = objectOf(
        await update(admin, 'kch-oracle', beforeApply, { dryRun: true }),
        'dry-run update before the real apply',
      );
    const applied = objectOf(
      await apply(admin, fieldManager, JSON.parse(JSON.stringify(resource.object)) as KubeObject),
      'the real apply',
    );
    const removed = removedRoots(beforeApply as never, applied as never);
    const predictedDeletions = topMost(prediction.deletions.map(formatServerPath));
    report.push(`  deleted   ${JSON.stringify(removed)}`);
    printReport();
    assert.deepEqual(predictedDeletions, removed, 'predicted deletions vs the fields the real apply removed');
    // What the user reads: one would-delete finding per removed item or subtree, exactly those.
    const findings = analyzeResource(resource, known, { fieldManager, applyMode: mode });
    const wouldDelete = findings.filter((f) => f.code === 'would-delete').map((f) => f.path ?? '');
    assert.deepEqual(
      [...wouldDelete].sort(),
      [...removed].sort(),
      'would-delete findings vs the fields the real apply removed',
    );
  }
}

/** The findings that judge an object before ownership: the cluster cannot take it (yet). */
const refusalCodes: readonly string[] = [
  'kind-not-served',
  'kind-from-new-crd',
  'namespace-not-found',
  'namespace-from-files',
];

/** The cause a kind-not-served finding names, by the documentation it points to (kind-served.ts picks both together). */
const causeByDocs: Record<string, string> = {
  [docsLinks.crdVersions]: 'crd-version-not-served',
  [docsLinks.apiVersions]: 'built-in-version-not-served',
  [docsLinks.customResources]: 'crd-not-installed',
};

/**
 * A kind the cluster does not serve, or a namespace that does not exist: the product's judgement
 * is a finding (analyzeResource, with the kinds and namespaces the files applied with it define,
 * as the check and the editor gather them), and the truth is kubectl's and the server's:
 * - what kubectl does with the manifest (dry run): the request it sends for the object, or its
 *   refusal before sending (`resource mapping not found ...: no matches for kind ...`);
 * - the server's answer to that request, or where kubectl sends none, to the request it would send
 *   at the path the kind would have (a 404: the group-version, or the resource, is not served);
 * - for a kind, why the server does not serve it, from its own lists (oracle.ts notServedTruth):
 *   the CRD of that kind and the versions it serves, or the server's own group-versions;
 * - for the files applied together, the real `kubectl apply` of the files as the user runs it:
 *   a Namespace sent first makes the object's apply succeed; a CRD sent in the same pass is created
 *   while the object is refused, and the object applies once the CRD is established.
 */
async function compareRefusal(
  scenario: Scenario,
  connection: ClusterConnection,
  text: string,
  resources: readonly ManifestResource[],
  known: ResourceFacts,
  namespace: string,
  fieldManager: string,
  mode: NonNullable<Scenario['mode']>,
): Promise<void> {
  const resource = resources[resources.length - 1]!;
  // (a) The product's judgement: the finding the editor and the check show.
  const settings = withDefinedKinds<AnalysisSettings>(
    { fieldManager, applyMode: mode },
    definedKinds(resources, 'manifest.yaml'),
  );
  const findings = analyzeResource(resource, known, settings);
  const judged = findings.filter((f) => refusalCodes.includes(f.code));
  assert.equal(
    judged.length,
    1,
    `one judgement before ownership; the product said ${JSON.stringify(findings.map((f) => `${f.code}: ${f.message}`))}`,
  );
  const finding: Finding = judged[0]!;

  // (b) What kubectl does with the manifest, and the server's answer for this object.
  const command = mode === 'create' ? 'create' : mode === 'clientSide' ? 'apply' : 'apply --server-side';
  const kubectl = (dryRun: boolean) =>
    kubectlRuns(process.env.KCH_KUBECONFIG!, 'admin', kubectlCache, command, fieldManager, text, { dryRun });
  const dryRun = await kubectl(true);
  const sent = dryRun.writes.find((w) => sends(w, resource));
  const refusal = dryRun.refusals.find((r) => r.includes(`name: ${JSON.stringify(resource.name ?? '')}`));
  if (sent)
    assert.equal(
      scenario.kubectl,
      undefined,
      `the scenario says kubectl refuses it, but kubectl sent ${sent.method} ${sent.url}`,
    );
  else
    assert.ok(
      scenario.kubectl === 'refuses' && refusal,
      `kubectl sent nothing for the object; it said ${JSON.stringify(dryRun.refusals)}`,
    );
  const request = sent ?? guessedRequest(mode, resource, namespace, fieldManager);
  const answer = await sendRaw(admin, request.method, request.url, {}, request.contentType, request.body);
  const server = serverStatus(answer);
  const report = [
    `${scenario.name}`,
    `  product   ${finding.code} (${finding.severity}): ${finding.message}`,
    `  kubectl   ${sent ? `${sent.method} ${sent.url.replace(/\?.*/, '')}` : refusal}`,
    `  server    ${JSON.stringify(server ?? 'accepted')}`,
  ];
  try {
    assert.equal(
      kindOfAnswer(server),
      scenario.server,
      `the server answered ${JSON.stringify(server ?? 'accepted')}; the scenario expects ${scenario.server}`,
    );
    // kubectl's words, where it refuses: the product quotes them.
    const kubectlWords = refusal ? /no matches for kind "[^"]*" in version "[^"]*"/.exec(refusal)?.[0] : undefined;
    if (finding.code === 'kind-not-served' || finding.code === 'kind-from-new-crd') {
      assert.ok(
        kubectlWords,
        `kubectl maps every kind before it sends: it must refuse this one (${JSON.stringify(dryRun.refusals)})`,
      );
      // Where the product says what kubectl answers, it says it word for word (it must, where it tells of the one-pass failure).
      const quoted = /no matches for kind "[^"]*" in version "[^"]*"/.exec(finding.message)?.[0];
      if (quoted !== undefined || finding.code === 'kind-from-new-crd')
        assert.equal(quoted, kubectlWords, `kubectl's words vs the product's ${JSON.stringify(finding.message)}`);
    }
    switch (finding.code) {
      case 'namespace-not-found': {
        assert.ok(
          sent && server,
          'kubectl sends an object bound for a namespace that does not exist, and the server refuses it',
        );
        // What the request is refused for before the namespace is looked at (its body, its uid) is answered first.
        const first = known.schema
          ? predictedStatus(
              predictApply({
                manifestObject: resource.object,
                live: undefined,
                schema: known.schema,
                fieldManager,
                mode,
                resource: {
                  group: known.kind.state === 'served' ? known.kind.group : '',
                  resource: known.kind.state === 'served' ? known.kind.resource : '',
                },
              }),
            )
          : undefined;
        if (first) {
          assert.deepEqual(first, server, 'the answer the server gives before the namespace');
          assert.ok(
            finding.message.includes('comes only after that is fixed'),
            `the server answers ${JSON.stringify(server.message)} first; the product's namespace finding says ${JSON.stringify(finding.message)}`,
          );
          assert.equal(finding.severity, 'error', 'the apply fails');
          break;
        }
        // The server refuses the object for its namespace: an error, in the server's words and status.
        assert.equal(finding.serverMessage, server.message);
        assert.ok(
          finding.message.includes(`(${server.code} ${server.reason})`),
          `the server answers ${server.code} ${server.reason}; the product says ${JSON.stringify(finding.message)}`,
        );
        assert.equal(finding.severity, 'error', 'the apply fails');
        // The product's own dry run (what "Confirm with a dry-run apply" and --verify send) hears the same.
        if (mode !== 'clientSide')
          assertVerifierHeard(
            await sendDryRun(connection, dryRunManifestOf(resource), { fieldManager, applyMode: mode }, false),
            answer,
            `dry-run ${mode}`,
          );
        break;
      }
      case 'kind-not-served': {
        const truth = await notServedTruth(admin, resource.apiVersion, resource.kind);
        report.push(`  served    ${JSON.stringify(truth)}`);
        assert.ok(!truth.groupVersionListsKind, `discovery of ${resource.apiVersion} lists ${resource.kind}`);
        assert.equal(
          causeByDocs[finding.docs ?? ''],
          truth.cause,
          `the product's cause (its link ${finding.docs}) vs the server's lists`,
        );
        const instead = /\(served: ([^)]*)\)/.exec(finding.message)?.[1]?.split(', ') ?? [];
        assert.deepEqual(
          [...instead].sort(),
          [...truth.servedInstead].sort(),
          'the apiVersions the product names instead vs those the server serves the kind at',
        );
        assert.equal(finding.severity, 'error', 'the apply fails');
        break;
      }
      case 'namespace-from-files': {
        // Alone (a dry run creates no Namespace) the object is refused for its namespace, in the words the product quotes.
        assert.ok(
          sent && server,
          'kubectl sends the object, and the server refuses it while the Namespace does not exist',
        );
        assert.ok(
          finding.message.includes(server.message),
          `the server says ${JSON.stringify(server.message)}; the product says ${JSON.stringify(finding.message)}`,
        );
        // The files applied for real, in their order: the Namespace first, then the object is accepted.
        const real = await kubectl(false);
        report.push(`  applied   ${JSON.stringify(real.stdout.trim().split('\n'))}, exit ${real.code}`);
        assert.equal(
          real.code,
          0,
          `the real apply of the files failed: ${real.refusals.join('; ')} ${real.log
            .split('\n')
            .filter((l) => /^Error/.test(l))
            .join('; ')}`,
        );
        objectOf(
          await get(admin, {
            apiVersion: resource.apiVersion,
            kind: resource.kind,
            metadata: { name: resource.name ?? '', namespace },
          }),
          'the object after the real apply of the files',
        );
        assert.notEqual(finding.severity, 'error', 'the files applied in their order succeed');
        break;
      }
      case 'kind-from-new-crd': {
        // One real pass creates the CRD and refuses the object with kubectl's words; once the CRD
        // is established, the object's own request is accepted.
        const crds = resources.filter((r) => r.kind === 'CustomResourceDefinition').map((r) => r.name ?? '');
        try {
          const first = await kubectl(false);
          report.push(
            `  pass 1    ${JSON.stringify(first.stdout.trim().split('\n'))}; ${JSON.stringify(first.refusals)}`,
          );
          assert.ok(
            first.refusals.some((r) => r.includes(kubectlWords!)),
            `the first pass: ${JSON.stringify(first.refusals)}`,
          );
          for (const name of crds) await until(() => crdEstablished(admin, name), `CRD ${name} established`);
          const second = await kubectl(true);
          const again = second.writes.find((w) => sends(w, resource));
          assert.ok(again, `once the CRD is established kubectl sends the object: ${JSON.stringify(second.refusals)}`);
          const accepted = serverStatus(
            await sendRaw(admin, again.method, again.url, {}, again.contentType, again.body),
          );
          report.push(`  pass 2    ${JSON.stringify(accepted ?? 'accepted')}`);
          assert.equal(accepted, undefined, 'the object is accepted once its CRD is established');
        } finally {
          for (const name of crds)
            await deleteObject(admin, {
              apiVersion: 'apiextensions.k8s.io/v1',
              kind: 'CustomResourceDefinition',
              metadata: { name },
            });
        }
        assert.notEqual(finding.severity, 'error', 'the files applied in two passes succeed');
        break;
      }
      default:
        assert.fail(`no comparison for ${finding.code}`);
    }
  } finally {
    if (process.env.KCH_DIFF_VERBOSE) console.log(report.join('\n'));
  }
}

/** Whether a request kubectl sent carries this object. */
function sends(sent: KubectlRequest, resource: ManifestResource): boolean {
  try {
    const body = JSON.parse(sent.body) as { kind?: string; metadata?: { name?: string } };
    return body.kind === resource.kind && body.metadata?.name === resource.name;
  } catch {
    return false;
  }
}

/**
 * The request kubectl would send for an object of a kind it cannot map, at the path the kind would
 * have: its resource name guessed as kubectl guesses one, in the object's namespace.
 */
function guessedRequest(
  mode: NonNullable<Scenario['mode']>,
  resource: ManifestResource,
  namespace: string,
  fieldManager: string,
): KubectlRequest {
  const base = resource.apiVersion.includes('/') ? `/apis/${resource.apiVersion}` : `/api/${resource.apiVersion}`;
  const collection = `${base}/namespaces/${namespace}/${guessedResource(resource.kind)}`;
  const query = (q: Record<string, string>) =>
    `?${new URLSearchParams({ dryRun: 'All', fieldManager, fieldValidation: 'Strict', ...q }).toString()}`;
  const body = JSON.stringify(resource.object);
  if (mode === 'serverSide')
    return {
      method: 'PATCH',
      url: `${collection}/${encodeURIComponent(resource.name ?? '')}${query({ force: 'false' })}`,
      contentType: 'application/apply-patch+yaml',
      body,
    };
  return { method: 'POST', url: collection + query({}), contentType: 'application/json', body };
}

/** Waits for a positive signal from the server (never a fixed sleep as proof). */
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`${what}: not after 60 s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The prediction as the status the server would send: undefined for a success. */
function predictedStatus(p: ApplyPrediction): ServerStatus | undefined {
  const s = p.status;
  if (!s) return undefined;
  return {
    code: s.code,
    reason: s.reason,
    message: s.message,
    causes: [...new Set((s.causes ?? []).map((c) => `${c.message} @ ${c.field}`))].sort(),
  };
}

/**
 * Where the live value was never read (a Secret's `data`), the product names the conflicts it
 * cannot decide. Then every conflict it is sure of must be the server's, every conflict of the
 * server must be one of those or an undecided one, and when the server's are exactly the sure
 * ones, the whole answer must be the predicted one, word for word.
 */
function assertWithinUncertain(
  p: ApplyPrediction,
  predicted: ServerStatus | undefined,
  server: ServerStatus | undefined,
): void {
  const sure = predicted?.causes ?? [];
  const undecided = conflictCauses(p.uncertain).map((c) => `${c.message} @ ${c.field}`);
  const said = server?.causes ?? [];
  if (JSON.stringify([...said].sort()) === JSON.stringify([...sure].sort())) {
    assert.deepEqual(predicted, server, 'the server reports exactly the sure conflicts: the whole answer must match');
    return;
  }
  assert.deepEqual(
    sure.filter((c) => !said.includes(c)),
    [],
    `sure conflicts the server does not report (it said ${JSON.stringify(server ?? 'accepted')})`,
  );
  assert.deepEqual(
    said.filter((c) => !sure.includes(c) && !undecided.includes(c)),
    [],
    `server conflicts the product neither predicted nor named as undecided (${JSON.stringify(undecided)})`,
  );
}

/**
 * A manager recorded at another apiVersion that only the server can compare (a conversion
 * webhook, fields that move without a known conversion): the product names it instead of
 * deciding. Then whatever it is sure of must hold: every sure conflict is the server's, and every
 * conflict of the server is a sure one or one with a manager it named; a server that cannot
 * convert (its webhook unreachable) answers 500, and the product must not have claimed a 409.
 */
function assertWithinUnconverted(
  p: ApplyPrediction,
  predicted: ServerStatus | undefined,
  server: ServerStatus | undefined,
): void {
  const sure = predicted?.causes ?? [];
  const named = p.unconverted.map((u) => `conflict with ${describeManager(u.manager)}`);
  if (server && server.code === 500) {
    assert.ok(
      /^conversion webhook for /.test(server.message) && p.unconverted.some((u) => /webhook/.test(u.reason)),
      `the server could not convert (${server.message}); the product named ${JSON.stringify(p.unconverted)}`,
    );
    assert.deepEqual(sure, [], 'the product was sure of conflicts the server never reached');
    return;
  }
  const said = server?.causes ?? [];
  assert.deepEqual(
    sure.filter((c) => !said.includes(c)),
    [],
    `sure conflicts the server does not report (it said ${JSON.stringify(server ?? 'accepted')})`,
  );
  assert.deepEqual(
    said.filter((c) => !sure.includes(c) && !named.some((n) => c.startsWith(`${n} @ `))),
    [],
    `server conflicts with managers the product neither predicted nor named (${JSON.stringify(named)})`,
  );
}

/**
 * Findings that predict a refusal of the server's validation (422 Invalid), each naming the field
 * its `details.causes` entry will name (`serverField`, else `path`), and findings that say the
 * product cannot know whether a field passes (the server may name it or not).
 */
const validationCodes = new Set<string>(['field-immutable', 'validation-rule-fails', 'invalid-merged-object']);
const undecidedCodes = new Set<string>(['validation-rule-unknown', 'secret-immutable-data-unverified']);

/** A field as a 422 cause names it, without list selectors (the server names an item by index, the product by key). */
const bare = (field: string): string => field.replace(/^\./, '').replace(/\[[^\]]*\]/g, '[]');
const fieldOf = (f: { path?: string; serverField?: string }): string => bare(f.serverField ?? f.path ?? '<nil>');

/**
 * The server's answer (a 422, or acceptance) against the product's validation findings: every field
 * the product is sure of is one the server names, in the server's words where the finding knows
 * them (the whole message, or its cause `field: words`); every field the server names is one the
 * product named as sure, as undecided, or in its own predicted status (a uid of another
 * incarnation, which the engine predicts).
 */
function assertValidationCauses(
  server: ServerStatus | undefined,
  predicted: ServerStatus | undefined,
  findings: readonly Finding[],
): void {
  const causes = (server?.causes ?? []).map((c) => {
    const at = c.lastIndexOf(' @ ');
    return { field: bare(c.slice(at + 3)), words: `${c.slice(at + 3)}: ${c.slice(0, at)}` };
  });
  const serverFields = new Set(causes.map((c) => c.field));
  const sure = findings.filter((f) => validationCodes.has(f.code));
  for (const f of sure) {
    assert.ok(
      serverFields.has(fieldOf(f)),
      `the product is sure the server refuses ${fieldOf(f)}; the server said ${JSON.stringify(server ?? 'accepted')}`,
    );
    if (f.serverMessage !== undefined)
      assert.ok(
        f.serverMessage === server?.message || causes.some((c) => c.words === f.serverMessage),
        `the server's words for ${fieldOf(f)}: the product says ${JSON.stringify(f.serverMessage)}, the server ${JSON.stringify(server?.message)}`,
      );
  }
  const predictedFields = (predicted?.causes ?? []).map((c) => bare(c.slice(c.lastIndexOf(' @ ') + 3)));
  for (const field of predictedFields)
    assert.ok(
      serverFields.has(field),
      `the prediction names ${field}; the server said ${JSON.stringify(server ?? 'accepted')}`,
    );
  const named = new Set([
    ...sure.map(fieldOf),
    ...findings.filter((f) => undecidedCodes.has(f.code)).map(fieldOf),
    ...predictedFields,
  ]);
  assert.deepEqual(
    [...serverFields].filter((field) => !named.has(field)).sort(),
    [],
    `fields of the server's 422 the product neither predicted nor named as undecided (${JSON.stringify(findings.map((f) => `${f.code} ${f.path ?? ''}`))})`,
  );
}

/** Waits until the product's live object is the one the server holds (its resourceVersion), or both have none. */
async function untilSeen(
  facts: FactsSource,
  target: Parameters<FactsSource['load']>[0],
  ref: KubeObject,
): Promise<void> {
  // A kind not served or a namespace that is missing has no live object to wait for.
  const first = await facts.load(target);
  if (first.kind.state !== 'served' || first.namespace?.state === 'missing') return;
  const held = await get(admin, ref);
  const want = held.ok ? held.object.metadata.resourceVersion : undefined;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const live = (await facts.load(target)).live;
    const seen =
      live.state === 'exists'
        ? (live.object.metadata as { resourceVersion?: string } | undefined)?.resourceVersion
        : undefined;
    if (seen === want && (want !== undefined || live.state === 'absent')) return;
    assert.ok(
      Date.now() < deadline,
      `the product's cache did not see resourceVersion ${String(want)} of ${target.kind} ${target.name} within 30 s (it has ${String(seen)})`,
    );
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Only for the corpus's guard (`server:` in a scenario): which kind of answer the server gave. */
function kindOfAnswer(s: ServerStatus | undefined): ServerAnswer {
  if (!s) return 'accepted';
  if (s.code === 404) return 'notFound';
  if (s.code !== 409) return 'rejected';
  if (s.reason === 'AlreadyExists') return 'alreadyExists';
  if (s.causes.length > 0) return 'fieldConflict';
  if (/uid mismatch/.test(s.message)) return 'uidMismatch';
  return /the object has been modified/.test(s.message) ? 'staleResourceVersion' : 'rejected';
}

/** What the product's verifier heard must be what the server said (it is the product's own path). */
function assertVerifierHeard(outcome: DryRunOutcome, raw: RawAnswer, what: string): void {
  const status = serverStatus(raw);
  if (!status) {
    assert.equal(outcome.outcome, 'accepted', `${what}: the verifier heard ${JSON.stringify(outcome)}`);
    return;
  }
  const heard =
    outcome.outcome === 'conflict'
      ? outcome.message
      : outcome.outcome === 'rejected'
        ? outcome.problem.message
        : '(accepted)';
  assert.ok(
    heard.includes(status.message),
    `${what}: the verifier heard ${JSON.stringify(heard)}; the server said ${JSON.stringify(status.message)}`,
  );
}

/**
 * The server's answer to what the user sends: kubectl's own request, replayed as it was sent
 * (method, path, query, content type, body: oracle.ts kubectlSends). The product's own dry run,
 * sent by the function the editor and the check use (cluster/dry-run.ts sendDryRun), must hear
 * the same answer.
 */
async function askServer(
  connection: ClusterConnection,
  scenario: Scenario,
  resource: ManifestResource,
  sent: KubectlRequest,
  fieldManager: string,
  exists: boolean,
): Promise<{ answer: RawAnswer; dryRunSaid?: ServerStatus | 'accepted' }> {
  const mode = scenario.mode ?? 'serverSide';
  const dry = await sendRaw(admin, sent.method, sent.url, {}, sent.contentType, sent.body);
  if (mode !== 'clientSide')
    assertVerifierHeard(
      await sendDryRun(connection, dryRunManifestOf(resource), { fieldManager, applyMode: mode }, exists),
      dry,
      `dry-run ${mode}`,
    );
  if (sent.method !== 'POST') return { answer: dry };
  // A create is sent for real too: the same request without dryRun.
  const real = new URL(sent.url, 'https://kubectl.invalid');
  real.searchParams.delete('dryRun');
  return confirmCreate(
    dry,
    await sendRaw(admin, sent.method, real.pathname + real.search, {}, sent.contentType, sent.body),
  );
}

/**
 * The request kubectl would send with this object, where kubectl sends none (it refused the
 * manifest): as `apply --server-side` and `create` send it, JSON and `fieldValidation=Strict`.
 */
async function requestOf(
  mode: NonNullable<Scenario['mode']>,
  object: JsonObject,
  fieldManager: string,
  exists: boolean,
): Promise<KubectlRequest> {
  const target = await objectPath(admin, object as unknown as KubeObject);
  const query = (q: Record<string, string>) =>
    `?${new URLSearchParams({ dryRun: 'All', fieldManager, fieldValidation: 'Strict', ...q }).toString()}`;
  const body = JSON.stringify(object);
  if (mode === 'serverSide')
    return {
      method: 'PATCH',
      url: target + query({ force: 'false' }),
      contentType: 'application/apply-patch+yaml',
      body,
    };
  const collection = target.replace(/\/[^/]*$/, '');
  if (mode === 'create' || !exists)
    return { method: 'POST', url: collection + query({}), contentType: 'application/json', body };
  return { method: 'PATCH', url: target + query({}), contentType: 'application/strategic-merge-patch+json', body };
}

/**
 * A dry-run create stops before the storage's own checks (DryRunnableStorage.Create), so it accepts
 * what a real create refuses — a resourceVersion on the new object (storage/etcd3 store.go Create,
 * a 500). A create in the scenario's throw-away namespace is harmless: it is sent for real too, and
 * the real answer is the truth where the two differ.
 */
function confirmCreate(dry: RawAnswer, real: RawAnswer): { answer: RawAnswer; dryRunSaid?: ServerStatus | 'accepted' } {
  const d = serverStatus(dry);
  const r = serverStatus(real);
  return JSON.stringify(d) === JSON.stringify(r) ? { answer: real } : { answer: real, dryRunSaid: d ?? 'accepted' };
}

/** Group-versions of the CRDs in test/differential/crds, as OpenAPI index keys. */
function crdVersions(): string[] {
  const out: string[] = [];
  for (const file of fs.readdirSync(crdDir).filter((f) => f.endsWith('.yaml'))) {
    const crd = parseYaml(fs.readFileSync(path.join(crdDir, file), 'utf8')) as {
      spec: { group: string; versions: { name: string; served: boolean }[] };
    };
    // A version that is not served publishes no OpenAPI.
    for (const v of crd.spec.versions) if (v.served) out.push(`apis/${crd.spec.group}/${v.name}`);
  }
  return out;
}
