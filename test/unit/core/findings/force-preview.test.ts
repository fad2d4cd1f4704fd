// The force preview (core/findings/force-preview.ts) on histories captured from the real API server
// (test/fixtures/force-preview/, see its README.md): for each, the managers and fields the preview
// says forcing takes must be exactly what the server's own answer to the forced apply shows taken
// (the history's `forced` managedFields, walked by test/support/managed-fields-oracle.ts, not by
// the product), and who takes
// them back is what the hand-written cases say.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { predictionOf, type ResourceFacts } from '../../../../server/src/core/findings';
import {
  forceLine,
  forcePreview,
  kubectlForceCommand,
  renderForcePreview,
  shellQuote,
  type AutoscalerFacts,
  type ForcePreview,
} from '../../../../server/src/core/findings/force-preview';
import type { JsonObject } from '../../../../server/src/core/json';
import { parseManifestText } from '../../../../server/src/core/manifest/manifest';
import { managerKey, takenFrom, type ManagedEntryLike } from '../../../support/managed-fields-oracle';
import { schema } from '../../../support/findings-fixtures';

const dir = path.join(import.meta.dirname, '..', '..', '..', 'fixtures', 'force-preview');

interface ForceHistory {
  name: string;
  resource: { group: string; resource: string };
  fieldManager: string;
  manifest: string;
  live: JsonObject;
  autoscalers: JsonObject[];
  forced: { managedFields: ManagedEntryLike[] };
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

const histories = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith('.yaml') && !f.endsWith('.cases.yaml'))
  .map((f) => f.replace(/\.yaml$/, ''))
  .sort();

function previewOf(
  h: ForceHistory,
  autoscalers: AutoscalerFacts = { state: 'read', autoscalers: h.autoscalers },
): ForcePreview {
  const parsed = parseManifestText(h.manifest);
  const resource = parsed.resources[0]!;
  const facts: ResourceFacts = {
    kind: { state: 'served', group: h.resource.group, resource: h.resource.resource, namespaced: true },
    live: { state: 'exists', object: h.live },
    schema,
  };
  const settings = { fieldManager: h.fieldManager, applyMode: 'serverSide' as const };
  return forcePreview({
    object: {
      apiVersion: resource.apiVersion,
      kind: resource.kind,
      name: resource.name!,
      ...(resource.namespace ? { namespace: resource.namespace } : {}),
    },
    prediction: predictionOf(resource, facts, settings),
    live: h.live,
    fieldManager: h.fieldManager,
    autoscalers,
    invocation: { file: `k8s/${h.name}.yaml` },
  });
}

/** Per manager, what the server's answer to the forced apply no longer gives it. */
function takenByServer(h: ForceHistory): Map<string, string[]> {
  const before = (h.live.metadata as unknown as { managedFields?: ManagedEntryLike[] }).managedFields ?? [];
  return takenFrom(before, h.forced.managedFields, h.fieldManager);
}

function takenByPreview(p: ForcePreview): Map<string, string[]> {
  return new Map(p.losses.map((l) => [managerKey(l), l.fields.map((f) => f.path).sort()]));
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
      const preview = previewOf(
        h,
        c.autoscalers === 'unknown'
          ? { state: 'unknown', reason: 'HorizontalPodAutoscalers may not be listed here' }
          : undefined,
      );
      assert.deepEqual(
        preview.losses.map((l) => ({
          manager: l.manager,
          operation: l.operation,
          subresource: l.subresource,
          fields: l.fields.map((f) => f.path),
          withoutForce: l.fields.some((f) => f.withoutForce) || undefined,
          takesBack: l.takesBack && {
            certainty: l.takesBack.certainty,
            kind: l.takesBack.kind,
            by: l.takesBack.by,
            paths: [...l.takesBack.paths],
          },
        })),
        c.losses.map((l) => ({
          manager: l.manager,
          operation: l.operation,
          subresource: l.subresource,
          fields: l.fields,
          withoutForce: l.withoutForce,
          takesBack: l.takesBack,
        })),
      );
      for (const [i, expected] of c.losses.entries()) {
        if (!expected.line) continue;
        const loss = preview.losses[i]!;
        const manager = {
          manager: loss.manager,
          operation: loss.operation,
          ...(loss.operation === 'Update' ? { apiVersion: loss.apiVersion } : {}),
          ...(loss.subresource ? { subresource: loss.subresource } : {}),
        };
        assert.equal(forceLine(preview, { path: expected.fields[0], manager }), expected.line);
      }
    });
  }
});

describe('the text and the command', () => {
  test('the view names every manager with its time, every field, who takes it back, and the command; it says nothing was sent', () => {
    const h = history('autoscaled-and-edited');
    const text = renderForcePreview(previewOf(h));
    const edit = (
      h.live.metadata as unknown as { managedFields: { manager: string; time?: string }[] }
    ).managedFields.find((m) => m.manager === 'kubectl-edit')!;
    assert.match(text, /would take 2 fields from 2 managers:/);
    assert.match(
      text,
      /^kube-controller-manager \(Update, subresource scale, apps\/v1, no time recorded\)\n {2}\.spec\.replicas {2}live 5 → manifest 3\n {2}Will be taken back by kube-controller-manager: an autoscaler \(HorizontalPodAutoscaler web\) scales this Deployment\.$/m,
    );
    assert.ok(text.includes(`kubectl-edit (Update, apps/v1, last written ${edit.time})`), text);
    assert.match(
      text,
      /^ {2}kubectl apply --server-side --force-conflicts --field-manager=kubectl -f k8s\/autoscaled-and-edited\.yaml$/m,
    );
    assert.match(text, /Nothing has been sent/);
  });

  const commands: {
    name: string;
    invocation: Parameters<typeof kubectlForceCommand>[0];
    manager: string;
    namespaced: boolean;
    expect: string;
  }[] = [
    {
      name: 'the defaults',
      invocation: { file: 'web.yaml' },
      manager: 'kubectl',
      namespaced: true,
      expect: 'kubectl apply --server-side --force-conflicts --field-manager=kubectl -f web.yaml',
    },
    {
      name: "the settings' kubeconfig, context and namespace, for an object that names no namespace",
      invocation: {
        file: '/work/k8s/web.yaml',
        kubeconfig: '/home/me/.kube/staging',
        context: 'staging',
        namespace: 'shop',
      },
      manager: 'ci-deploy',
      namespaced: false,
      expect:
        'kubectl apply --server-side --force-conflicts --field-manager=ci-deploy --kubeconfig=/home/me/.kube/staging --context=staging --namespace=shop -f /work/k8s/web.yaml',
    },
    {
      name: 'no namespace flag for an object that names its own (kubectl refuses one that differs)',
      invocation: { file: 'web.yaml', namespace: 'shop' },
      manager: 'kubectl',
      namespaced: true,
      expect: 'kubectl apply --server-side --force-conflicts --field-manager=kubectl -f web.yaml',
    },
    {
      name: 'words a shell would split or expand are quoted',
      invocation: { file: "my app's/web $1.yaml", context: 'arn:aws:eks:eu-west-1:1:cluster/prod' },
      manager: 'team a',
      namespaced: true,
      expect: `kubectl apply --server-side --force-conflicts '--field-manager=team a' --context=arn:aws:eks:eu-west-1:1:cluster/prod -f 'my app'\\''s/web $1.yaml'`,
    },
    {
      name: 'the standard input',
      invocation: { file: '-' },
      manager: 'kubectl',
      namespaced: true,
      expect: 'kubectl apply --server-side --force-conflicts --field-manager=kubectl -f -',
    },
  ];
  for (const c of commands) {
    test(`the command: ${c.name}`, () =>
      assert.equal(kubectlForceCommand(c.invocation, c.manager, c.namespaced), c.expect));
  }

  test('a quoted word is read back unchanged by a POSIX shell', async () => {
    const { execFileSync } = await import('node:child_process');
    for (const word of ["it's", 'a b', '$HOME', '`x`', '"q"', '', 'plain']) {
      assert.equal(execFileSync('sh', ['-c', `printf %s ${shellQuote(word)}`], { encoding: 'utf8' }), word);
    }
  });
});
