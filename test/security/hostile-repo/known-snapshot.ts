// The snapshot the hostile-repository cases check against: one ConfigMap that exists in the real
// API server, saved by `snapshot` with discovery and v1's OpenAPI document, in a scratch folder of
// its own. Made once per test file.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import type { TestContext } from 'node:test';
import { runCli, scratchDir, writeFiles } from '../../cli/cli-process';
import { requireCluster, type TestClusterInfo } from '../../support/env';
import { configMap, connect, create, freshNamespace, objectOf } from '../../support/seed';

export interface KnownSnapshot {
  cluster: TestClusterInfo;
  namespace: string;
  /** The snapshot folder. */
  snapshot: string;
  /** The scratch folder it is in, for the test's own files. */
  dir: string;
}

const made = new Map<string, Promise<KnownSnapshot>>();

/** The snapshot for this prefix (undefined, and the test skipped or failed as requireCluster says, without a cluster). */
export function knownSnapshot(t: TestContext, prefix: string): Promise<KnownSnapshot> | undefined {
  const cluster = requireCluster(t);
  if (!cluster) return undefined;
  let known = made.get(prefix);
  if (!known) {
    known = (async () => {
      const admin = connect('admin', cluster.kubeconfig);
      const namespace = await freshNamespace(admin, `kch-${prefix}`);
      objectOf(await create(admin, 'kubectl-create', configMap(namespace, 'known', { a: '1' })), 'known');
      const dir = scratchDir(prefix);
      writeFiles(dir, {
        'known.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: known\n  namespace: ${namespace}\n`,
      });
      const snapshot = path.join(dir, 'snapshot');
      const saved = await runCli([
        'snapshot',
        '--kubeconfig',
        cluster.kubeconfig,
        '--context',
        'admin',
        '--out',
        snapshot,
        path.join(dir, 'known.yaml'),
      ]);
      assert.equal(saved.status, 0, saved.stderr);
      return { cluster, namespace, snapshot, dir };
    })();
    made.set(prefix, known);
  }
  return known;
}
