// A GitOps controller and an autoscaler fighting, in a real VS Code: a Deployment that a Flux
// Kustomization applies (its labels, applied by kustomize-controller, the Kustomization object of the
// real CRD beside it) and that a HorizontalPodAutoscaler targets. Its file, as Git holds it, shows
// the fight on the `replicas:` line naming the Kustomization and the autoscaler, and the quick fix
// removes that line. The screenshot is docs/gitops-fight.png.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { requireCluster } from '../support/env';
import { seedAppliers } from '../support/seed-appliers';
import { apply, connect, objectOf } from '../support/seed';
import { positionOfKey, requireEditor, startEditor } from './harness';

test(
  'a Flux-applied Deployment an autoscaler targets: the fight on its replicas line, and the quick fix removes the line',
  { timeout: 600_000 },
  async (t) => {
    const cluster = requireCluster(t);
    const prepared = cluster && requireEditor(t);
    if (!cluster || !prepared) return;
    const admin = connect('admin', cluster.kubeconfig);
    const scene = await seedAppliers(admin, 'e2e-fight');
    const namespace = scene.namespace;
    objectOf(
      await apply(admin, 'kch-test-setup', {
        apiVersion: 'autoscaling/v2',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name: 'web-autoscaler', namespace },
        spec: {
          scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'flux-web' },
          minReplicas: 2,
          maxReplicas: 8,
          metrics: [
            { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } },
          ],
        },
      }),
      'the autoscaler',
    );
    // The file as Git holds it (what kustomize-controller applied).
    const text = [
      'apiVersion: apps/v1',
      'kind: Deployment',
      'metadata:',
      '  name: flux-web',
      `  namespace: ${namespace}`,
      'spec:',
      '  replicas: 2',
      '  selector:',
      '    matchLabels:',
      '      app: flux-web',
      '  template:',
      '    metadata:',
      '      labels:',
      '        app: flux-web',
      '    spec:',
      '      containers:',
      '        - name: web',
      '          image: nginx:1.25-alpine',
      '',
    ].join('\n');
    const editor = await startEditor(t, {
      name: 'gitops-fight',
      ...prepared,
      files: {
        'apps/shop/deployment.yaml': text,
        '.vscode/settings.json': JSON.stringify(
          { 'kubeConflictHints.kubeconfig': cluster.kubeconfig, 'kubeConflictHints.context': 'admin' },
          null,
          2,
        ),
      },
    });
    await editor.openFile('apps/shop/deployment.yaml');
    const problems = await editor.waitForProblems(
      (ps) => ps.some((p) => p.severity === 'error' && p.message.startsWith('Flux Kustomization')),
      'the fight between the Kustomization and the autoscaler',
    );
    const fight = problems.find((p) => p.severity === 'error' && p.message.startsWith('Flux Kustomization'))!;
    assert.match(
      fight.message,
      new RegExp(
        `^Flux Kustomization ${namespace}/shop sets replicas: 2 every 10m, and the HorizontalPodAutoscaler web-autoscaler sets it to its own count: they fight over \\.spec\\.replicas`,
      ),
    );
    const at = positionOfKey(text, 'replicas');
    await editor.hover(at, { expect: /Flux Kustomization/ });
    await editor.screenshot('fight');
    await editor.quickFix(at, 'Remove replicas from Git (leave it to the autoscaler)');
    const saved = await editor.save();
    assert.equal(
      saved,
      text
        .split('\n')
        .filter((line) => line.trim() !== 'replicas: 2')
        .join('\n'),
      'the quick fix removes the replicas line and nothing else',
    );
    await editor.waitForProblems(
      (ps) => !ps.some((p) => p.message.startsWith('Flux Kustomization')),
      'the fight gone once Git leaves replicas to the autoscaler',
    );
    await editor.screenshot('after-quick-fix');
  },
);
