// How tests find the real kube-apiserver that scripts/test.mjs started (npm run cluster:up).
// Under CI=true a missing cluster is a failure, never a skip.
import * as fs from 'node:fs';
import type { TestContext } from 'node:test';

export interface TestClusterInfo {
  /** kubeconfig with contexts `admin`, `viewer` and `stranger` (see test/support/cluster.ts). */
  kubeconfig: string;
  /** JSON-lines audit log of every request the API server received. */
  auditLog: string;
  /** https://127.0.0.1:PORT */
  server: string;
}

export function testCluster(): TestClusterInfo | undefined {
  const kubeconfig = process.env.KCH_KUBECONFIG;
  if (!kubeconfig || !fs.existsSync(kubeconfig)) return undefined;
  return {
    kubeconfig,
    auditLog: process.env.KCH_AUDIT_LOG ?? '',
    server: process.env.KCH_SERVER ?? '',
  };
}

/** The cluster, or: skip the test outside CI, fail it under CI=true. */
export function requireCluster(t: TestContext): TestClusterInfo | undefined {
  const info = testCluster();
  if (info) return info;
  const why = 'no local kube-apiserver: run through `npm test` (it starts one) or `npm run cluster:up`';
  if (process.env.CI === 'true') throw new Error(why);
  t.skip(why);
  return undefined;
}
