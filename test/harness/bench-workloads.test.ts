// The bench's workloads (test/bench/generate.ts, written by test/bench/workloads.ts) must be what
// their names say: every object of the file exists, with the history it promises, and applying the
// file as `kubectl` now conflicts on exactly the fields the generator says. The bench waits for that
// many conflicts from the language server, so a generator that promised other conflicts than the
// API server answers would make it measure a wrong answer.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';
import {
  crdInstallFile,
  directoryFiles,
  existingDeployments,
  settingsConfigMap,
  type ExistingWorkload,
} from '../bench/generate';
import { inParallel, removeNamespace, seedExisting, workloadNamespace } from '../bench/workloads';
import { requireCluster } from '../support/env';
import { apply, connect, get, managers, objectOf, type Connection, type KubeObject } from '../support/seed';

/** What the API server answers to applying each object of the file as `kubectl` (dry run): `kind/name` → fields. */
async function serverConflicts(conn: Connection, text: string): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (const doc of parseAllDocuments(text)) {
    const object = doc.toJS() as KubeObject;
    const answer = await apply(conn, 'kubectl', object, { dryRun: true });
    if (answer.ok) continue;
    assert.equal(answer.status, 409, `${object.kind} ${object.metadata.name}: ${answer.failure.message}`);
    out.set(
      `${object.kind.toLowerCase()}/${object.metadata.name}`,
      (answer.failure.details?.causes ?? []).map((c) => c.field ?? ''),
    );
  }
  return out;
}

const managerNames = (o: KubeObject) =>
  managers(o)
    .map((m) => `${m.manager} ${m.operation}${m.subresource ? ` /${m.subresource}` : ''}`)
    .sort();

async function seeded(
  t: TestContext,
  prefix: string,
  make: (namespace: string) => ExistingWorkload,
): Promise<{ conn: Connection; workload: ExistingWorkload } | undefined> {
  const cluster = requireCluster(t);
  if (!cluster) return undefined;
  const conn = connect('admin', cluster.kubeconfig);
  const namespace = await workloadNamespace(conn, prefix);
  t.after(() => removeNamespace(conn, namespace));
  const workload = make(namespace);
  await seedExisting(conn, workload.existing);
  return { conn, workload };
}

test('existing Deployments: applied by kubectl, then scaled or edited; the file conflicts where the generator says', async (t) => {
  const s = await seeded(t, 'bench-workload', (ns) => existingDeployments(ns, 24));
  if (!s) return;
  assert.deepEqual(await serverConflicts(s.conn, s.workload.text), s.workload.conflicts);
  // Of 24: web-0, -10, -20 scaled; web-1, 5, 9, 13, 17, 21 edited and never brought into the file.
  assert.deepEqual(
    [...s.workload.conflicts.keys()],
    ['deployment/web-0', 'deployment/web-1', 'deployment/web-5', 'deployment/web-9', 'deployment/web-10']
      .concat(['deployment/web-13', 'deployment/web-17', 'deployment/web-20', 'deployment/web-21'])
      .sort((a, b) => Number(a.split('-')[1]) - Number(b.split('-')[1])),
  );
  const histories = await Promise.all(
    [0, 1, 2, 3].map(async (i) =>
      managerNames(objectOf(await get(s.conn, parse(s.workload.existing[i]!.applied) as KubeObject), `web-${i}`)),
    ),
  );
  assert.deepEqual(histories, [
    ['kube-controller-manager Update /scale', 'kubectl Apply'],
    ['kubectl Apply', 'kubectl-edit Update'],
    ['kubectl Apply', 'kubectl-edit Update'],
    ['kubectl Apply', 'kubectl-edit Update'],
  ]);
});

test('one ConfigMap, and a directory of Deployments and Services: every object exists, the conflicts are the promised ones', async (t) => {
  const one = await seeded(t, 'bench-workload', settingsConfigMap);
  if (!one) return;
  assert.deepEqual(await serverConflicts(one.conn, one.workload.text), one.workload.conflicts);
  const directory = await seeded(t, 'bench-workload', (ns) => directoryFiles(ns, 7));
  if (!directory) return;
  assert.equal(directory.workload.existing.length, 10, '7 Deployments and the Services of web-0, web-3, web-6');
  assert.deepEqual(await serverConflicts(directory.conn, directory.workload.text), directory.workload.conflicts);
});

test("the install file's operator objects: histories on some Deployments, the conflicts are the promised ones", async (t) => {
  // The CustomResourceDefinitions are cluster-wide and heavy: the bench applies them; here only
  // the namespaced objects and their histories are held to the generator's word.
  const s = await seeded(t, 'bench-workload', (ns) => {
    const install = crdInstallFile(ns);
    const namespaced = install.existing.filter((e) => !e.applied.includes('kind: CustomResourceDefinition'));
    return { ...install, existing: namespaced, text: namespaced.map((e) => e.applied).join('---\n') };
  });
  if (!s) return;
  assert.equal(s.workload.existing.length, 60);
  assert.deepEqual(await serverConflicts(s.conn, s.workload.text), s.workload.conflicts);
  assert.equal(s.workload.conflicts.size, 6);
});

test('inParallel: every item once, never more than the limit at a time, the first failure thrown', async () => {
  let inFlight = 0;
  let most = 0;
  const seen: number[] = [];
  await inParallel(
    Array.from({ length: 40 }, (_, i) => i),
    6,
    async (i) => {
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise((resolve) => setImmediate(resolve));
      seen.push(i);
      inFlight--;
    },
  );
  assert.deepEqual(
    seen.sort((a, b) => a - b),
    Array.from({ length: 40 }, (_, i) => i),
  );
  assert.equal(most, 6);
  await assert.rejects(
    inParallel([1, 2, 3], 2, async (i) => {
      if (i === 2) throw new Error('two');
    }),
    /two/,
  );
});
