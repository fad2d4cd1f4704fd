#!/usr/bin/env node
// `npm run test:mutations`: plants each fault of a fixed list in a scratch copy of the project and
// runs the tests that must notice it. A fault in server/src/core/ must be caught by the unit tests
// alone (no cluster); a fault in server/src/cluster/ by the cluster-layer tests against the local
// kube-apiserver (started here when it is not running, and stopped again). The working tree is
// never touched. Exit code 1 when any fault survives, or when the tests fail without any fault.
//   node scripts/mutations.mjs                 every mutation
//   node scripts/mutations.mjs --only=a,b      some of them (by id)
//   node scripts/mutations.mjs --list          the list
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const core = (f) => `server/src/core/${f}`;
const cluster = (f) => `server/src/cluster/${f}`;

// The unit tests that judge the engine: captured fixtures and pure tests, a few seconds.
const ENGINE = ['test/unit/engine-predict.test.ts', 'test/unit/engine-fieldset.test.ts', 'test/unit/fieldsv1.test.ts', 'test/unit/schema.test.ts', 'test/unit/path.test.ts'];

/**
 * Each mutation: a plausible fault, as one exact text replacement (the text must occur exactly
 * once), and the tests that must fail. `rule` says which behaviour of the server it breaks.
 */
const mutations = [
  // Rules the real server taught us (test/fixtures/engine/predict-rules.yaml pins each).
  { id: 'forgiveness-any-apiversion', rule: 'forgiveness needs a last-applied configuration at the request\'s apiVersion', file: core('ssa/predict.ts'),
    from: "if (!isJsonObject(lastApplied) || lastApplied.apiVersion !== apiVersion) return undefined;", to: 'if (!isJsonObject(lastApplied)) return undefined;', tests: ENGINE },
  { id: 'forgiveness-any-manager', rule: 'only the manager called kubectl is forgiven', file: core('ssa/predict.ts'),
    from: "if (conflicts.length > 0 && input.fieldManager === 'kubectl') {", to: 'if (conflicts.length > 0) {', tests: ENGINE },
  { id: 'forgiveness-off', rule: 'conflicts the last client-side apply set are forgiven', file: core('ssa/predict.ts'),
    from: '    if (allowed) {\n', to: '    if (allowed && false) {\n', tests: ENGINE },
  { id: 'managedfields-null-refused', rule: 'managedFields: null in an apply is allowed', file: core('ssa/predict.ts'),
    from: "meta.managedFields !== undefined && meta.managedFields !== null) {", to: 'meta.managedFields !== undefined) {', tests: ENGINE },
  { id: 'managedfields-in-manifest-off', rule: 'an apply carrying managedFields is refused (400)', file: core('ssa/predict.ts'),
    from: "if (mode === 'serverSide' && meta.managedFields !== undefined", to: "if (false && meta.managedFields !== undefined", tests: ENGINE },
  { id: 'type-problems-off', rule: 'a value the schema cannot type is refused (500)', file: core('ssa/fieldset.ts'),
    from: '  visit(root, value);\n  return problems;\n}', to: '  visit(root, value);\n  return [];\n}', tests: ENGINE },
  { id: 'type-problem-words', rule: 'the refusal names the value as Go prints it', file: core('ssa/fieldset.ts'),
    from: 'const got = { string: goValueSharpV(v),', to: 'const got = { string: goValueV(v),', tests: ENGINE },
  { id: 'rv-on-create-off', rule: 'a create with a resourceVersion fails in the storage (500)', file: core('ssa/predict.ts'),
    from: "if (creates && typeof meta.resourceVersion === 'string'", to: "if (false && typeof meta.resourceVersion === 'string'", tests: ENGINE },
  { id: 'rv-on-create-existing-clientside', rule: 'a client-side apply of an existing object is an update, not a create', file: core('ssa/predict.ts'),
    from: "const creates = mode === 'create' || (mode === 'clientSide' && !live);", to: "const creates = mode === 'create' || mode === 'clientSide';", tests: ENGINE },
  { id: 'uid-incarnation-409', rule: 'a uid of another incarnation is 422 Invalid, not a 409', file: core('ssa/predict.ts'),
    from: "      code: 422,\n      reason: 'Invalid',", to: "      code: 409,\n      reason: 'Conflict',", tests: ENGINE },
  { id: 'uid-incarnation-off', rule: 'a uid of another incarnation is refused', file: core('ssa/predict.ts'),
    from: "if (uid !== undefined && uid !== '' && uid !== liveUid) {", to: 'if (false) {', tests: ENGINE },
  { id: 'uid-on-missing-off', rule: 'an apply naming a uid no object has is a 409 uid mismatch', file: core('ssa/predict.ts'),
    from: "      if (uid) statuses.push(", to: '      if (false) statuses.push(', tests: ENGINE },
  { id: 'rv-empty-is-stale', rule: 'resourceVersion "" is no precondition', file: core('ssa/predict.ts'),
    from: "if (rv !== undefined && !/^0*$/.test(rv) && rv !== liveRv) {", to: 'if (rv !== undefined && rv !== liveRv) {', tests: ENGINE },
  { id: 'rv-zero-is-stale', rule: 'resourceVersion "0" is no precondition (an unconditional update)', file: core('ssa/predict.ts'),
    from: "if (rv !== undefined && !/^0*$/.test(rv) && rv !== liveRv) {", to: "if (rv !== undefined && rv !== '' && rv !== liveRv) {", tests: ENGINE },
  { id: 'create-rv-zero-refused', rule: 'a create with resourceVersion "0" is accepted', file: core('ssa/predict.ts'),
    from: "&& /[1-9]/.test(meta.resourceVersion)) {", to: ') {', tests: ENGINE },
  { id: 'generate-name-collides', rule: 'a create with generateName never collides', file: core('ssa/predict.ts'),
    from: "const generated = typeof meta.generateName === 'string' && meta.generateName !== '' && name === '';", to: 'const generated = false;', tests: ENGINE },
  // The apply itself (structured-merge-diff).
  { id: 'conflict-rule-modified-only', rule: 'conflicts are owned ∩ (modified ∪ added)', file: core('ssa/predict.ts'),
    from: 'const changed = unionSets(comparison.modified, comparison.added);', to: 'const changed = comparison.modified;', tests: ENGINE },
  { id: 'prune-off', rule: 'what the applier dropped is removed', file: core('ssa/predict.ts'),
    from: 'if (lastSet && !isEmptySet(lastSet)) merged = prune(', to: 'if (false) merged = prune(', tests: ENGINE },
  { id: 'before-first-apply-off', rule: 'an object without managedFields is owned by before-first-apply', file: core('ssa/predict.ts'),
    from: '  if (managers.size === 0) {', to: '  if (false) {', tests: ENGINE },
  { id: 'status-not-reset', rule: 'status is reset by the main resource and never conflicts there', file: core('ssa/predict.ts'),
    from: "return atom?.map && 'status' in atom.map.fields ? [[{ kind: 'field', name: 'status' }]] : [];", to: 'return [];', tests: ENGINE },
  { id: 'compare-loose-equality', rule: 'a number never equals a string (maxSurge 1 vs "1%", quantities as written)', file: core('ssa/merge.ts'),
    from: '      else if (!jsonEqual(r, l)) insertPath(result.modified, path);', to: '      else if (!jsonEqual(r, l) && String(r) !== String(l) && parseFloat(String(r)) !== parseFloat(String(l))) insertPath(result.modified, path);', tests: ENGINE },
  { id: 'list-key-defaults-off', rule: 'a missing list key takes its schema default (protocol TCP)', file: core('ssa/fieldset.ts'),
    from: '        if (def !== undefined && def !== null) fields[name] = def;', to: '', tests: ENGINE },
  { id: 'list-keys-first-only', rule: 'list items are keyed by all their key fields', file: core('ssa/fieldset.ts'),
    from: '    for (const name of list.keys) {', to: '    for (const name of list.keys.slice(0, 1)) {', tests: ENGINE },
  { id: 'atomic-map-granular', rule: 'an atomic map (a selector) conflicts as a whole', file: core('ssa/merge.ts'),
    from: "        if (a.map.elementRelationship === 'atomic' || emptyPromoteToLeaf) return leafFn();", to: '        if (emptyPromoteToLeaf) return leafFn();', tests: ENGINE },
  { id: 'atomic-list-granular', rule: 'an atomic list (args) conflicts as a whole', file: core('ssa/merge.ts'),
    from: "        if (a.list.elementRelationship === 'atomic' || emptyPromoteToLeaf) return leafFn();", to: '        if (emptyPromoteToLeaf) return leafFn();', tests: ENGINE },
  { id: 'message-without-subresource', rule: 'the cause names the subresource a manager wrote through', file: core('ssa/messages.ts'),
    from: '  if (m.subresource) s += ` with subresource ${goQuote(m.subresource)}`;', to: '', tests: ENGINE },
  { id: 'message-managers-unsorted', rule: 'the conflict message lists managers sorted as the server does', file: core('ssa/messages.ts'),
    from: '  for (const id of [...groups.keys()].sort(compareGoStrings)) {', to: '  for (const id of [...groups.keys()]) {', tests: ENGINE },
  { id: 'update-identity-without-version', rule: 'an Update manager is told apart by the apiVersion it wrote at', file: core('ssa/managed-fields.ts'),
    from: "      ...(operation === 'Update' ? { apiVersion: raw.apiVersion } : {}),\n", to: '', tests: ENGINE },
  // The cluster layer, against the real server.
  { id: 'writes-without-dry-run', rule: 'every write the product sends carries dryRun=All', file: cluster('http.ts'),
    from: "    if (request.method !== 'GET') url.searchParams.set('dryRun', 'All');\n", to: '', tests: ['test/cluster-layer/verifier.test.ts'] },
  { id: 'verifier-force', rule: 'the dry-run apply is sent with force=false', file: cluster('verifier.ts'),
    from: "query: { fieldManager: options.fieldManager, force: 'false',", to: "query: { fieldManager: options.fieldManager, force: 'true',", tests: ['test/cluster-layer/verifier.test.ts'] },
  { id: 'verifier-already-exists', rule: 'AlreadyExists is told apart by its reason', file: cluster('verifier.ts'),
    from: "  if (reason === 'AlreadyExists') return 'alreadyExists';", to: '', tests: ['test/cluster-layer/verifier.test.ts'] },
  // A disposed connection is silenced twice (its watches stop, its transport refuses); the fault
  // is a dispose that does neither.
  { id: 'dispose-keeps-watching', rule: 'a disposed connection sends nothing more', file: cluster('connection.ts'),
    from: '      liveObjects.dispose();\n      openApi.dispose();\n      transport.dispose();', to: '      openApi.dispose();', tests: ['test/unit/cluster-watch.test.ts'] },
  { id: 'secret-read-in-full', rule: 'Secrets are read as metadata only', file: cluster('live-objects.ts'),
    from: "return readsMetadataOnly(this.resource) ? { accept: metadataOnly[form] } : {};", to: 'return {};', tests: ['test/security/secret-values.test.ts'] },
  { id: 'secret-last-applied-kept', rule: 'the values a client-side apply left in last-applied never enter the cache', file: cluster('live-objects.ts'),
    from: "return redactSecret({ ...object, apiVersion: this.resource.apiVersion, kind: this.resource.kind });", to: 'return { ...object, apiVersion: this.resource.apiVersion, kind: this.resource.kind };', tests: ['test/cluster-layer/live-objects.test.ts'] },
];

const args = process.argv.slice(2);
if (args.includes('--list')) {
  for (const m of mutations) console.log(`${m.id.padEnd(36)} ${m.file}  ${m.rule}`);
  process.exit(0);
}
const only = args.find((a) => a.startsWith('--only='))?.slice('--only='.length).split(',');
const selected = only ? mutations.filter((m) => only.includes(m.id)) : mutations;
if (only && selected.length !== only.length) {
  console.error(`mutations: unknown id(s): ${only.filter((id) => !mutations.some((m) => m.id === id)).join(', ')}`);
  process.exit(2);
}

// Every mutation must still apply: a text that moved is a broken list, not a caught fault.
for (const m of selected) {
  const text = fs.readFileSync(path.join(root, m.file), 'utf8');
  const count = text.split(m.from).length - 1;
  if (count !== 1) {
    console.error(`mutations: ${m.id}: the text to replace occurs ${count} times in ${m.file}; update the list`);
    process.exit(2);
  }
}

// The scratch copy: every file git knows (tracked or new, not ignored), node_modules linked.
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kch-mutations-'));
const listed = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' });
if (listed.status !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
for (const rel of listed.stdout.split('\0').filter(Boolean)) {
  const from = path.join(root, rel);
  if (!fs.existsSync(from) || fs.lstatSync(from).isDirectory() || rel === 'node_modules' || rel.startsWith('node_modules/')) continue;
  fs.mkdirSync(path.dirname(path.join(scratch, rel)), { recursive: true });
  fs.copyFileSync(from, path.join(scratch, rel));
}
fs.symlinkSync(path.join(root, 'node_modules'), path.join(scratch, 'node_modules'));

// The cluster, only when a cluster mutation is selected.
const env = { ...process.env };
delete env.CI; // a skipped test must not pass for a failure: the baseline below runs the same way
let startedCluster = false;
const needsCluster = selected.some((m) => m.file.startsWith('server/src/cluster/'));
const clusterCli = ['--import', 'tsx', 'test/support/cluster-cli.ts'];
function clusterEnv() {
  const info = JSON.parse(fs.readFileSync(path.join(root, '.cache/cluster/env.json'), 'utf8'));
  return { KCH_KUBECONFIG: info.kubeconfig, KCH_AUDIT_LOG: info.auditLog, KCH_SERVER: info.server };
}
const coreEnv = { ...env };
for (const k of ['KCH_KUBECONFIG', 'KCH_AUDIT_LOG', 'KCH_SERVER']) delete coreEnv[k];
let withCluster;

function runTests(files, testEnv) {
  const started = Date.now();
  const r = spawnSync('node', ['--import', 'tsx', '--test', '--test-reporter=dot', ...files], { cwd: scratch, env: testEnv, encoding: 'utf8', timeout: 10 * 60_000 });
  const out = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  const skipped = Number(/# skipped (\d+)/.exec(out)?.[1] ?? /ℹ skipped (\d+)/.exec(out)?.[1] ?? 0);
  return { ok: r.status === 0, timedOut: r.error?.code === 'ETIMEDOUT', seconds: (Date.now() - started) / 1000, out, skipped };
}

const results = [];
let exitCode = 0;
try {
  if (needsCluster) {
    if (!fs.existsSync(path.join(root, '.cache/cluster/env.json'))) {
      const up = spawnSync('node', [...clusterCli, 'up'], { cwd: root, stdio: 'inherit' });
      if (up.status !== 0) throw new Error('the local kube-apiserver did not start');
      startedCluster = true;
    }
    withCluster = { ...env, ...clusterEnv(), CI: 'true' }; // with a cluster, nothing may skip
  }
  const envFor = (m) => (m.file.startsWith('server/src/cluster/') ? withCluster : coreEnv);

  // Baseline: the same tests on the unmutated copy must pass, else a "caught" means nothing.
  const baselines = new Map();
  for (const m of selected) baselines.set(`${m.file.startsWith('server/src/cluster/')}|${m.tests.join(' ')}`, m);
  for (const m of baselines.values()) {
    const base = runTests(m.tests, envFor(m));
    if (!base.ok) {
      console.error(base.out.split('\n').slice(-40).join('\n'));
      throw new Error(`the tests fail without any mutation: ${m.tests.join(' ')}`);
    }
    console.log(`baseline passes (${base.seconds.toFixed(0)} s): ${m.tests.join(' ')}`);
  }

  for (const m of selected) {
    const file = path.join(scratch, m.file);
    const original = fs.readFileSync(file, 'utf8');
    let r;
    try {
      fs.writeFileSync(file, original.replace(m.from, () => m.to));
      r = runTests(m.tests, envFor(m));
    } finally {
      fs.writeFileSync(file, original);
    }
    const caught = !r.ok;
    results.push({ ...m, caught, seconds: r.seconds, timedOut: r.timedOut });
    console.log(`${caught ? 'caught  ' : 'SURVIVED'} ${m.id.padEnd(36)} ${r.seconds.toFixed(0).padStart(4)} s  ${m.file}: ${m.rule}${r.timedOut ? ' (timed out)' : ''}`);
  }
  const survivors = results.filter((r) => !r.caught);
  console.log(`\nmutations: ${results.length - survivors.length}/${results.length} caught${survivors.length ? `; survived: ${survivors.map((s) => s.id).join(', ')}` : ''}`);
  if (survivors.length > 0) exitCode = 1;
} catch (e) {
  console.error(`mutations: ${e instanceof Error ? e.message : String(e)}`);
  exitCode = 2;
} finally {
  fs.rmSync(scratch, { recursive: true, force: true });
  if (startedCluster) spawnSync('node', [...clusterCli, 'down'], { cwd: root, stdio: 'inherit' });
}
process.exit(exitCode);
