// Charts made and installed by the real Helm for the tests: a private HOME for helm's caches, and a
// chart installed in a namespace of its own.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { scratchDir } from '../cli/cli-process';
import type { TestClusterInfo } from './env';
import { autoscale, connect, freshNamespace } from './seed';

/** helm's environment with its caches and config under `home` (never the user's), and the kubeconfig it installs with. */
export function helmEnv(home: string, kubeconfig?: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '',
    HOME: home,
    HELM_CACHE_HOME: `${home}/cache`,
    HELM_CONFIG_HOME: `${home}/config`,
    HELM_DATA_HOME: `${home}/data`,
    ...(kubeconfig ? { KUBECONFIG: kubeconfig } : {}),
  };
}

/** `helm create shop`, installed as release web by Helm 4, then scaled to 5 by an autoscaler. */
export async function scaledRelease(
  cluster: TestClusterInfo,
  helm: string,
  prefix: string,
): Promise<{ repo: string; chart: string; namespace: string }> {
  const conn = connect('admin', cluster.kubeconfig);
  const namespace = await freshNamespace(conn, prefix);
  const repo = scratchDir(prefix);
  const env = helmEnv(path.join(repo, '.home'), cluster.kubeconfig);
  const created = spawnSync(helm, ['create', 'shop'], { cwd: repo, encoding: 'utf8', env });
  assert.equal(created.status, 0, created.stderr);
  const chart = path.join(repo, 'shop');
  const installed = spawnSync(helm, ['install', 'web', chart, '--kube-context', 'admin', '--namespace', namespace], {
    cwd: repo,
    encoding: 'utf8',
    env,
  });
  assert.equal(installed.status, 0, installed.stderr);
  await autoscale(conn, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web-shop', namespace } }, 5);
  return { repo, chart, namespace };
}

/**
 * `helm create` of a chart whose name no other test's chart has (the cluster is shared, and a chart's
 * releases are recognised by its name), installed as release `web` in a fresh namespace and scaled
 * to 5 by an autoscaler; `install` installs it again elsewhere (`--set` pairs go to helm as given).
 */
export async function chartInstalledElsewhere(
  cluster: TestClusterInfo,
  helm: string,
  prefix: string,
  set: readonly string[] = [],
) {
  const conn = connect('admin', cluster.kubeconfig);
  const repo = scratchDir(prefix);
  const env = helmEnv(path.join(repo, '.home'), cluster.kubeconfig);
  const name = `store${crypto.randomBytes(3).toString('hex')}`;
  const created = spawnSync(helm, ['create', name], { cwd: repo, encoding: 'utf8', env });
  assert.equal(created.status, 0, created.stderr);
  const chart = path.join(repo, name);
  const install = async (release: string, replicas: number) => {
    const namespace = await freshNamespace(conn, prefix);
    const installed = spawnSync(
      helm,
      [
        'install',
        release,
        chart,
        '--kube-context',
        'admin',
        '--namespace',
        namespace,
        ...set.flatMap((s) => ['--set', s]),
      ],
      { cwd: repo, encoding: 'utf8', env },
    );
    assert.equal(installed.status, 0, installed.stderr);
    await autoscale(
      conn,
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: `${release}-${name}`, namespace } },
      replicas,
    );
    return namespace;
  };
  const namespace = await install('web', 5);
  return { repo, chart, name, namespace, install };
}

/** Every file of a chart folder as a repository holds it: `as/relative/path` → text (for an editor's workspace). */
export function chartFiles(chart: string, as: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const f of fs.readdirSync(chart, { recursive: true, encoding: 'utf8' })) {
    const full = path.join(chart, f);
    if (fs.statSync(full).isFile()) files[`${as}/${f.split(path.sep).join('/')}`] = fs.readFileSync(full, 'utf8');
  }
  return files;
}
