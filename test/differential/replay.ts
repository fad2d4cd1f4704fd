// Replays a scenario's history against the real API server, as admin, through the seeding helpers
// (plain HTTPS, independent of product code). Every step must succeed: a history that the server
// refuses is a broken scenario, not an answer.
import {
  apply,
  clientSideApply,
  create,
  deleteObject,
  get,
  objectOf,
  patch,
  request,
  scale,
  update,
  type ApiResult,
  type Connection,
  type KubeObject,
  type ObjectRef,
} from '../support/seed';
import type { HistoryStep, StepTarget } from './scenario';

/** Puts an object of the history into the scenario's namespace. */
function placed(obj: KubeObject, namespace: string): KubeObject {
  return { ...obj, metadata: { ...obj.metadata, namespace } };
}

function refOf(target: StepTarget | undefined, fallback: ObjectRef, namespace: string): ObjectRef {
  return target
    ? { apiVersion: target.apiVersion, kind: target.kind, metadata: { name: target.name, namespace } }
    : fallback;
}

/** Maps deep-merged, lists and scalars replaced: how a step says "this object, but with ...". */
function deepMerge(base: unknown, over: unknown): unknown {
  const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isMap(base) || !isMap(over)) return over;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = k in out ? deepMerge(out[k], v) : v;
  return out;
}

/** `${i}` in every string of a step, for `repeat`. */
function instantiate<T>(step: T, i: number): T {
  const n = String(i).padStart(2, '0');
  return JSON.parse(JSON.stringify(step).replaceAll('${i}', n)) as T;
}

async function runStep(conn: Connection, step: HistoryStep, ref: ObjectRef, namespace: string): Promise<ApiResult> {
  if ('apply' in step) {
    const s = step.apply;
    return apply(conn, s.manager, placed(s.object, namespace), {
      ...(s.force ? { force: true } : {}),
      ...(s.subresource ? { subresource: s.subresource } : {}),
    });
  }
  if ('create' in step) return create(conn, step.create.manager, placed(step.create.object, namespace));
  if ('update' in step) {
    const s = step.update;
    const target = refOf(s.target, ref, namespace);
    const current = objectOf(
      await get(conn, target, s.subresource ? { subresource: s.subresource } : {}),
      'read before update',
    );
    return update(
      conn,
      s.manager,
      deepMerge(current, s.merge) as KubeObject,
      s.subresource ? { subresource: s.subresource } : {},
    );
  }
  if ('patch' in step) {
    const s = step.patch;
    return patch(conn, s.manager, refOf(s.target, ref, namespace), s.body, {
      type: s.type ?? 'strategic',
      ...(s.subresource ? { subresource: s.subresource } : {}),
    });
  }
  if ('scale' in step)
    return scale(conn, step.scale.manager, refOf(step.scale.target, ref, namespace), step.scale.replicas);
  if ('clientSideApply' in step) return clientSideApply(conn, placed(step.clientSideApply.object, namespace));
  if ('resetManagedFields' in step) {
    return patch(
      conn,
      'kch-reset',
      refOf(step.resetManagedFields.target, ref, namespace),
      { metadata: { managedFields: [{}] } },
      { type: 'merge' },
    );
  }
  if ('crd' in step) return applyCrd(conn, step.crd.object);
  return deleteObject(conn, refOf(step.delete.target, ref, namespace));
}

/**
 * Applies a CustomResourceDefinition and returns once the server writes its objects with that
 * schema. A change of the schema (a new generation) is in effect when the OpenAPI the server
 * publishes for the CRD's versions has changed: the publisher and the handler that types the
 * CRD's objects both follow the same CRD watch, the handler first.
 */
export async function applyCrd(conn: Connection, crd: KubeObject): Promise<ApiResult> {
  const spec = crd.spec as { group: string; versions: { name: string; served: boolean }[] };
  const keys = spec.versions.filter((v) => v.served).map((v) => `apis/${spec.group}/${v.name}`);
  const before = await get(conn, crd);
  const hashesBefore = await openApiHashes(conn, keys);
  const result = await apply(conn, 'kch-test-setup', crd, { force: true });
  const applied = objectOf(result, `apply CRD ${String(crd.metadata.name)}`);
  const changed = !before.ok || before.object.metadata.generation !== applied.metadata.generation;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const current = objectOf(await get(conn, crd), 'read CRD');
    const conditions =
      (current.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? [];
    const established = conditions.some((c) => c.type === 'Established' && c.status === 'True');
    const hashes = await openApiHashes(conn, keys);
    const published =
      keys.every((k) => hashes[k] !== undefined) && (!changed || keys.some((k) => hashes[k] !== hashesBefore[k]));
    if (established && published) return result;
    if (Date.now() > deadline)
      throw new Error(`CRD ${String(crd.metadata.name)}: not established with its OpenAPI published after 60 s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The `hash` of each group-version's URL in the OpenAPI v3 index (undefined: not published). */
async function openApiHashes(conn: Connection, keys: readonly string[]): Promise<Record<string, string | undefined>> {
  const index = await request(conn, 'GET', '/openapi/v3');
  const paths = (index.body as { paths?: Record<string, { serverRelativeURL?: string }> } | undefined)?.paths ?? {};
  return Object.fromEntries(keys.map((k) => [k, paths[k]?.serverRelativeURL?.split('hash=')[1]]));
}

/** Sends every step in order; throws with the step and the server's words when one is refused. */
export async function replayHistory(
  conn: Connection,
  history: readonly HistoryStep[],
  ref: ObjectRef,
  namespace: string,
): Promise<void> {
  for (const [n, step] of history.entries()) {
    const times = step.repeat ?? 1;
    for (let i = 1; i <= times; i++) {
      const concrete = times > 1 ? instantiate(step, i) : step;
      const result = await runStep(conn, concrete, ref, namespace);
      const kind = Object.keys(step).find((k) => k !== 'repeat');
      objectOf(result, `history step ${n + 1} (${kind}${times > 1 ? ` #${i}` : ''})`);
    }
  }
}
