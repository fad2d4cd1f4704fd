// How the rendered differential suite renders and checks a Kustomize scenario. The truth's rendering
// is the test's own run of the real kustomize (KCH_KUSTOMIZE, built by test/tools/): what
// `kubectl apply -k` would send. The product is run as a user runs it: `check -k DIR`.
import { spawnSync } from 'node:child_process';
import type { TestContext } from 'node:test';
import { requireTool } from '../tools/tools';

export interface ScenarioRenderer {
  /** The tool's path, or undefined when the test was skipped for the lack of it. */
  tool(t: TestContext): string | undefined;
  /** The rendered stream of `target` (relative to `dir`), as the user's tool prints it. */
  render(tool: string, dir: string, target: string): string;
  /** The product's arguments after `check` that render and check `target`. */
  checkArgs(tool: string, target: string): string[];
}

export const kustomizeRenderer: ScenarioRenderer = {
  tool: (t) => requireTool(t, 'kustomize'),
  render(tool, dir, target) {
    const out = spawnSync(tool, ['build', target], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
    if (out.status !== 0) throw new Error(`kustomize build ${target}: ${out.stderr || out.error?.message}`);
    return out.stdout;
  },
  checkArgs: (tool, target) => ['--kustomize-binary', tool, '-k', target],
};
