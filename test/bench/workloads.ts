// Writes the bench's workloads (test/bench/generate.ts) to the cluster: every object applied
// server-side as `kubectl`, then changed by its second manager, many requests in flight at once
// (bounded), each workload in a namespace of its own; the crowded namespace (20,000 ConfigMaps) is
// kept between runs under a well-known name and filled only when it holds fewer. The local API
// server runs no namespace controller, so removing a namespace is done here: its objects, then the
// namespace, then its finalizer.
import { parse } from 'yaml';
import { apply, create, objectOf, patch, request, scale, type Connection, type KubeObject } from '../support/seed';
import {
  crdInstallFile,
  crowd,
  crowdConfigMap,
  installGroup,
  settingsConfigMap,
  type Change,
  type Existing,
} from './generate';

/** Requests in flight at once while seeding: enough to keep the server busy, few enough not to time out. */
const inFlight = 48;

/** Runs `work` on every item, at most `limit` at a time; the first failure stops the rest and is thrown. */
export async function inParallel<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failed: unknown;
  const worker = async () => {
    while (failed === undefined && next < items.length) {
      const item = items[next++]!;
      try {
        await work(item);
      } catch (e) {
        failed ??= e;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failed !== undefined) throw failed;
}

const title = (o: KubeObject) => `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`;

async function change(conn: Connection, object: KubeObject, step: Change): Promise<void> {
  if (step.kind === 'scale') objectOf(await scale(conn, step.manager, object, step.replicas), `scale ${title(object)}`);
  else objectOf(await patch(conn, step.manager, object, step.patch), `edit ${title(object)}`);
}

/**
 * Every object applied as `kubectl` (forced, so that a run after another takes its fields back),
 * then every change; returns the number of requests.
 */
export async function seedExisting(conn: Connection, existing: readonly Existing[]): Promise<number> {
  const objects = existing.map((e) => ({ object: parse(e.applied) as KubeObject, change: e.change }));
  await inParallel(objects, inFlight, async ({ object }) => {
    objectOf(await apply(conn, 'kubectl', object, { force: true }), `apply ${title(object)}`);
  });
  const changes = objects.filter((o) => o.change);
  await inParallel(changes, inFlight, ({ object, change: step }) => change(conn, object, step!));
  return objects.length + changes.length;
}

/** Creates the namespace; one that exists already is fine (the crowded one is kept between runs). */
export async function ensureNamespace(conn: Connection, name: string): Promise<void> {
  const r = await create(conn, 'kch-bench-setup', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  if (!r.ok && r.status !== 409) objectOf(r, `namespace ${name}`);
}

/** How many ConfigMaps a namespace holds: one LIST of one item, which says how many remain. */
async function configMapCount(conn: Connection, namespace: string): Promise<number> {
  const answer = await request(conn, 'GET', `/api/v1/namespaces/${namespace}/configmaps`, { query: { limit: '1' } });
  if (answer.status !== 200) throw new Error(`counting the ConfigMaps of ${namespace}: ${answer.status}`);
  const list = answer.body as { items: unknown[]; metadata: { remainingItemCount?: number } };
  return list.items.length + (list.metadata.remainingItemCount ?? 0);
}

/** The namespace that holds `settings` among 20,000 other ConfigMaps, kept between bench runs. */
export const crowdedNamespace = 'kch-bench-crowd-20k';

/**
 * Fills the crowded namespace when it holds fewer than `crowd` ConfigMaps besides `settings`
 * (creating each missing one; those there already answer 409), and gives `settings` its history
 * again. Returns what it did and how long it took.
 */
export async function ensureCrowd(conn: Connection): Promise<{ created: number; ms: number; requests: number }> {
  const t0 = Date.now();
  await ensureNamespace(conn, crowdedNamespace);
  await seedExisting(conn, settingsConfigMap(crowdedNamespace).existing);
  const before = await configMapCount(conn, crowdedNamespace);
  let created = 0;
  let requests = 0;
  if (before < crowd + 1) {
    await inParallel(
      Array.from({ length: crowd }, (_, i) => i),
      inFlight,
      async (i) => {
        requests++;
        const r = await create(conn, 'kch-bench-setup', crowdConfigMap(crowdedNamespace, i) as KubeObject);
        if (r.ok) created++;
        else if (r.status !== 409) objectOf(r, `ConfigMap ${i} of ${crowdedNamespace}`);
      },
    );
    const after = await configMapCount(conn, crowdedNamespace);
    if (after < crowd + 1)
      throw new Error(`${crowdedNamespace} holds ${after} ConfigMaps after seeding, not ${crowd + 1}`);
  }
  return { created, ms: Date.now() - t0, requests };
}

/** A workload's namespace, named after it, with a random suffix (test/support/seed.ts freshNamespace does the same). */
export async function workloadNamespace(conn: Connection, prefix: string): Promise<string> {
  const name = `${prefix}-${Math.random().toString(36).slice(2, 8)}`;
  await ensureNamespace(conn, name);
  return name;
}

/** The kinds the workloads put in a namespace, as collection paths under it. */
const collections = [
  '/apis/apps/v1/namespaces/NS/deployments',
  '/api/v1/namespaces/NS/services',
  '/api/v1/namespaces/NS/configmaps',
  '/api/v1/namespaces/NS/serviceaccounts',
  '/apis/rbac.authorization.k8s.io/v1/namespaces/NS/roles',
  '/apis/rbac.authorization.k8s.io/v1/namespaces/NS/rolebindings',
];

/**
 * A request of the clean-up, sent again once when it fails: after minutes of measuring, the first
 * request may go out on a kept-alive connection the server has just closed.
 */
async function cleanupRequest(conn: Connection, method: string, urlPath: string, body?: unknown) {
  const send = () => request(conn, method, urlPath, body === undefined ? {} : { body });
  return send().catch(send);
}

/** Removes a namespace and everything the workloads put in it (no namespace controller runs here). */
export async function removeNamespace(conn: Connection, name: string): Promise<void> {
  for (const collection of collections) await cleanupRequest(conn, 'DELETE', collection.replace('NS', name));
  const ns = await cleanupRequest(conn, 'DELETE', `/api/v1/namespaces/${name}`);
  if (ns.status === 404) return;
  const current = await cleanupRequest(conn, 'GET', `/api/v1/namespaces/${name}`);
  if (current.status !== 200) return;
  const body = current.body as KubeObject & { spec?: { finalizers?: string[] } };
  await cleanupRequest(conn, 'PUT', `/api/v1/namespaces/${name}/finalize`, { ...body, spec: { finalizers: [] } });
}

/** Removes the install file's CustomResourceDefinitions (cluster-wide; only the bench uses their group). */
export async function removeInstallCrds(conn: Connection): Promise<void> {
  for (const e of crdInstallFile('').existing) {
    const object = parse(e.applied) as KubeObject;
    if (object.kind !== 'CustomResourceDefinition' || !object.metadata.name.endsWith(`.${installGroup}`)) continue;
    await cleanupRequest(
      conn,
      'DELETE',
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${object.metadata.name}`,
    );
  }
}
