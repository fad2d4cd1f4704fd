// The force preview (core/findings/force-preview.ts) on histories captured from the real API server
// (test/fixtures/force-preview/, see its README.md): for each, the managers and fields the preview
// says forcing takes must be exactly what the server's own answer to the forced apply shows taken
// (the history's `forced` managedFields, walked here independently of the product), and who takes
// them back is what the hand-written cases say.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { predictionOf, type ResourceFacts } from '../../server/src/core/findings/analysis';
import { forceLine, forcePreview, kubectlForceCommand, renderForcePreview, shellQuote, type AutoscalerFacts, type ForcePreview } from '../../server/src/core/findings/force-preview';
import type { JsonObject } from '../../server/src/core/json';
import { parseManifestText } from '../../server/src/core/manifest/manifest';
import { schema } from './findings-fixtures';

const dir = path.join(import.meta.dirname, '..', 'fixtures', 'force-preview');

interface ForceHistory {
  name: string;
  resource: { group: string; resource: string };
  fieldManager: string;
  manifest: string;
  live: JsonObject;
  autoscalers: JsonObject[];
  forced: { managedFields: ManagedEntry[] };
}

interface ManagedEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  subresource?: string;
  fieldsV1: FieldsV1;
}
interface FieldsV1 {
  [element: string]: FieldsV1;
}

interface Case {
  name: string;
  history: string;
  autoscalers?: 'unknown';
  losses: {
    manager: string;
    operation: 'Apply' | 'Update';
    subresource?: string;
    fields: string[];
    withoutForce?: boolean;
    takesBack?: { certainty: string; kind: string; by: string; paths: string[] };
    line?: string;
  }[];
}

function history(name: string): ForceHistory {
  return { name, ...(parse(fs.readFileSync(path.join(dir, `${name}.yaml`), 'utf8')) as Omit<ForceHistory, 'name'>) };
}

const histories = fs.readdirSync(dir).filter((f) => f.endsWith('.yaml') && !f.endsWith('.cases.yaml')).map((f) => f.replace(/\.yaml$/, '')).sort();

function previewOf(h: ForceHistory, autoscalers: AutoscalerFacts = { state: 'read', autoscalers: h.autoscalers }): ForcePreview {
  const parsed = parseManifestText(h.manifest);
  const resource = parsed.resources[0]!;
  const facts: ResourceFacts = { kind: { state: 'served', group: h.resource.group, resource: h.resource.resource, namespaced: true }, live: { state: 'exists', object: h.live }, schema };
  const settings = { fieldManager: h.fieldManager, applyMode: 'serverSide' as const };
  return forcePreview({
    object: { apiVersion: resource.apiVersion, kind: resource.kind, name: resource.name!, ...(resource.namespace ? { namespace: resource.namespace } : {}) },
    prediction: predictionOf(resource, facts, settings),
    live: h.live,
    fieldManager: h.fieldManager,
    autoscalers,
    invocation: { file: `k8s/${h.name}.yaml` },
  });
}

// ---------------------------------------------------------------------------------------------
// The oracle: the server's managedFields before and after the forced dry run, walked here.

/** `.spec.replicas`, `[name="app"]`: one FieldsV1 element as the server prints paths. */
function element(key: string): string {
  const rest = key.slice(2);
  switch (key.slice(0, 2)) {
    case 'f:':
      return `.${rest}`;
    case 'k:':
      return `[${Object.entries(JSON.parse(rest) as Record<string, unknown>).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',')}]`;
    case 'v:':
      return `[=${JSON.stringify(JSON.parse(rest))}]`;
    case 'i:':
      return `[${rest}]`;
    default:
      throw new Error(`unknown FieldsV1 element ${key}`);
  }
}

/** Every path an entry owns: leaves, and the nodes marked with `.`. */
function owned(node: FieldsV1, prefix = ''): string[] {
  return Object.entries(node).flatMap(([key, child]) => {
    if (key === '.') return [prefix];
    const p = prefix + element(key);
    return Object.keys(child).length === 0 ? [p] : owned(child, p);
  });
}

const identity = (e: { manager: string; operation: string; subresource?: string; apiVersion?: string }) =>
  JSON.stringify([e.manager, e.operation, e.subresource ?? '', e.operation === 'Update' ? (e.apiVersion ?? '') : '']);

/** Per manager (other than the applier), what it owned before and no longer owns in the server's forced answer. */
function takenByServer(h: ForceHistory): Map<string, string[]> {
  const before = (h.live.metadata as unknown as { managedFields?: ManagedEntry[] }).managedFields ?? [];
  const after = new Map(h.forced.managedFields.map((e) => [identity(e), new Set(owned(e.fieldsV1))]));
  const taken = new Map<string, string[]>();
  for (const e of before) {
    if (e.manager === h.fieldManager && e.operation === 'Apply') continue;
    const kept = after.get(identity(e)) ?? new Set<string>();
    const lost = owned(e.fieldsV1).filter((p) => !kept.has(p)).sort();
    if (lost.length > 0) taken.set(identity(e), lost);
  }
  return taken;
}

function takenByPreview(p: ForcePreview): Map<string, string[]> {
  return new Map(p.losses.map((l) => [identity(l), l.fields.map((f) => f.path).sort()]));
}

describe('the preview takes what the server takes when the apply is forced', () => {
  assert.ok(histories.length >= 5, 'the captured histories are there');
  for (const name of histories) {
    test(name, () => {
      const h = history(name);
      const server = takenByServer(h);
      assert.ok(server.size > 0, 'the forced apply takes something: the history is worth its place');
      assert.deepEqual(takenByPreview(previewOf(h)), server);
    });
  }
});

describe('who takes the fields back', () => {
  const cases = parse(fs.readFileSync(path.join(dir, 'force-preview.cases.yaml'), 'utf8')) as Case[];
  for (const c of cases) {
    test(c.name, () => {
      const h = history(c.history);
      const preview = previewOf(h, c.autoscalers === 'unknown' ? { state: 'unknown', reason: 'HorizontalPodAutoscalers may not be listed here' } : undefined);
      assert.deepEqual(
        preview.losses.map((l) => ({ manager: l.manager, operation: l.operation, subresource: l.subresource, fields: l.fields.map((f) => f.path), withoutForce: l.fields.some((f) => f.withoutForce) || undefined, takesBack: l.takesBack && { certainty: l.takesBack.certainty, kind: l.takesBack.kind, by: l.takesBack.by, paths: [...l.takesBack.paths] } })),
        c.losses.map((l) => ({ manager: l.manager, operation: l.operation, subresource: l.subresource, fields: l.fields, withoutForce: l.withoutForce, takesBack: l.takesBack })),
      );
      for (const [i, expected] of c.losses.entries()) {
        if (!expected.line) continue;
        const loss = preview.losses[i]!;
        const manager = { manager: loss.manager, operation: loss.operation, ...(loss.operation === 'Update' ? { apiVersion: loss.apiVersion } : {}), ...(loss.subresource ? { subresource: loss.subresource } : {}) };
        assert.equal(forceLine(preview, { path: expected.fields[0], manager }), expected.line);
      }
    });
  }
});

describe('the text and the command', () => {
  test('the view names every manager with its time, every field, who takes it back, and the command; it says nothing was sent', () => {
    const h = history('autoscaled-and-edited');
    const text = renderForcePreview(previewOf(h));
    const edit = (h.live.metadata as unknown as { managedFields: { manager: string; time?: string }[] }).managedFields.find((m) => m.manager === 'kubectl-edit')!;
    assert.match(text, /would take 2 fields from 2 managers:/);
    assert.match(text, /^kube-controller-manager \(Update, subresource scale, apps\/v1, no time recorded\)\n {2}\.spec\.replicas {2}live 5 → manifest 3\n {2}Will be taken back by kube-controller-manager: an autoscaler \(HorizontalPodAutoscaler web\) scales this Deployment\.$/m);
    assert.ok(text.includes(`kubectl-edit (Update, apps/v1, last written ${edit.time})`), text);
    assert.match(text, /^ {2}kubectl apply --server-side --force-conflicts --field-manager=kubectl -f k8s\/autoscaled-and-edited\.yaml$/m);
    assert.match(text, /Nothing has been sent/);
  });

  const commands: { name: string; invocation: Parameters<typeof kubectlForceCommand>[0]; manager: string; namespaced: boolean; expect: string }[] = [
    { name: 'the defaults', invocation: { file: 'web.yaml' }, manager: 'kubectl', namespaced: true, expect: 'kubectl apply --server-side --force-conflicts --field-manager=kubectl -f web.yaml' },
    {
      name: 'the settings\' kubeconfig, context and namespace, for an object that names no namespace',
      invocation: { file: '/work/k8s/web.yaml', kubeconfig: '/home/me/.kube/staging', context: 'staging', namespace: 'shop' },
      manager: 'ci-deploy',
      namespaced: false,
      expect: 'kubectl apply --server-side --force-conflicts --field-manager=ci-deploy --kubeconfig=/home/me/.kube/staging --context=staging --namespace=shop -f /work/k8s/web.yaml',
    },
    { name: 'no namespace flag for an object that names its own (kubectl refuses one that differs)', invocation: { file: 'web.yaml', namespace: 'shop' }, manager: 'kubectl', namespaced: true, expect: 'kubectl apply --server-side --force-conflicts --field-manager=kubectl -f web.yaml' },
    { name: 'words a shell would split or expand are quoted', invocation: { file: "my app's/web $1.yaml", context: 'arn:aws:eks:eu-west-1:1:cluster/prod' }, manager: 'team a', namespaced: true, expect: `kubectl apply --server-side --force-conflicts '--field-manager=team a' --context=arn:aws:eks:eu-west-1:1:cluster/prod -f 'my app'\\''s/web $1.yaml'` },
    { name: 'the standard input', invocation: { file: '-' }, manager: 'kubectl', namespaced: true, expect: 'kubectl apply --server-side --force-conflicts --field-manager=kubectl -f -' },
  ];
  for (const c of commands) {
    test(`the command: ${c.name}`, () => assert.equal(kubectlForceCommand(c.invocation, c.manager, c.namespaced), c.expect));
  }

  test('a quoted word is read back unchanged by a POSIX shell', async () => {
    const { execFileSync } = await import('node:child_process');
    for (const word of ["it's", 'a b', '$HOME', '`x`', '"q"', '', 'plain']) {
      assert.equal(execFileSync('sh', ['-c', `printf %s ${shellQuote(word)}`], { encoding: 'utf8' }), word);
    }
  });
});
