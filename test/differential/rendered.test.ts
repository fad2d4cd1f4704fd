// The differential proof for rendered sources: Kustomize overlays and Helm charts, one suite. Every
// scenario of test/differential/rendered/*.yaml runs in a namespace of its own on the real
// kube-apiserver, through its renderer family's module (render-kustomize.ts, render-helm.ts): write
// the sources and replay the history; render with the real tool and send every rendered object to
// the server as a dry run, as that tool sends it — the truth; run the product; its conflicts must
// be the server's, object by object, each on the source line the scenario names by hand (see each
// module for what else its family proves).
// The last test prints `agreement: N/N rendered scenarios (K Kustomize overlays, H Helm charts)`
// and fails unless every scenario agreed and each family has the scenarios it needs.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { requireCluster } from '../support/env';
import { loadRenderedScenarios } from './rendered-scenario';
import { renderers } from './renderers';

/** The acceptance: at least this many rendered scenarios, overlays and charts together. */
const minimumTotal = 30;

const scenarios = loadRenderedScenarios(renderers);
const outcomes = new Map<string, 'agreed' | 'disagreed' | 'excluded'>();

after(() => {
  for (const family of Object.values(renderers)) family.close?.();
});

describe('differential: rendered sources vs the real kube-apiserver', { concurrency: 4 }, () => {
  for (const [n, scenario] of scenarios.entries()) {
    test(`${scenario.file}: ${scenario.name}`, async (t) => {
      if (scenario.excluded) {
        outcomes.set(scenario.name, 'excluded');
        t.skip(`excluded: ${scenario.excluded}`);
        return;
      }
      const cluster = requireCluster(t);
      const family = renderers[scenario.renderer]!;
      const tool = cluster && family.tool(t, scenario);
      if (!cluster || !tool) return;
      outcomes.set(scenario.name, 'disagreed');
      await family.run(scenario, tool, { kubeconfig: cluster.kubeconfig, prefix: `kr${n}` });
      outcomes.set(scenario.name, 'agreed');
    });
  }
});

test('agreement over the rendered corpus', (t) => {
  if (!requireCluster(t)) return;
  const counted = scenarios.filter((s) => !s.excluded);
  const agreed = counted.filter((s) => outcomes.get(s.name) === 'agreed');
  const excluded = scenarios.length - counted.length;
  const perFamily = Object.entries(renderers).map(([name, family]) => ({
    name,
    family,
    count: counted.filter((s) => s.renderer === name).length,
  }));
  const line = `agreement: ${agreed.length}/${counted.length} rendered scenarios (${perFamily.map((f) => `${f.count} ${f.family.label}`).join(', ')})${excluded ? `; ${excluded} excluded, reasons in the corpus` : ''}`;
  console.log(line);
  t.diagnostic(line);
  assert.ok(
    counted.length >= minimumTotal,
    `the corpus has ${counted.length} rendered scenarios; at least ${minimumTotal} are needed`,
  );
  for (const f of perFamily)
    assert.ok(
      f.count >= f.family.minimum,
      `the corpus has ${f.count} ${f.family.label} scenarios; at least ${f.family.minimum} are needed`,
    );
  const failed = counted.filter((s) => outcomes.get(s.name) !== 'agreed').map((s) => s.name);
  assert.deepEqual(failed, [], 'every rendered scenario must agree with the server');
});
