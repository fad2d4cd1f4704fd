// What the tests of the live-object cache (test/unit/cluster/live-objects*.test.ts) ask of a
// connection and plant in the cluster: the object a state holds, the next change that matches, and a
// Secret whose values must never be read.
import assert from 'node:assert/strict';
import type { ClusterConnection, LiveObjectChange, LiveObjectState } from '../../server/src/cluster';
import { clientSideApply, objectOf, type Connection, type KubeObject } from './seed';

/** The object of a state that must be `exists`. */
export function existing(state: LiveObjectState): KubeObject {
  assert.equal(state.state, 'exists', JSON.stringify(state));
  return (state as { object: unknown }).object as KubeObject;
}

/** The next change the connection announces that `predicate` accepts; rejected after `timeoutMs`. */
export function nextChange(
  c: ClusterConnection,
  predicate: (change: LiveObjectChange) => boolean,
  timeoutMs = 10_000,
): Promise<LiveObjectChange> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      sub.dispose();
      reject(new Error(`no matching change within ${timeoutMs} ms`));
    }, timeoutMs);
    const sub = c.onObjectChange((change) => {
      if (!predicate(change)) return;
      clearTimeout(timer);
      sub.dispose();
      resolve(change);
    });
  });
}

/**
 * The Secret `db` holding `data` (and `stringData`), written by client-side apply, which keeps a copy
 * of the values in the last-applied annotation too: values a test plants and then looks for.
 */
export async function plantedSecret(
  admin: Connection,
  namespace: string,
  data: Record<string, string>,
  stringData?: Record<string, string>,
): Promise<KubeObject> {
  const secret: KubeObject = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'db', namespace },
    type: 'Opaque',
    data,
    ...(stringData ? { stringData } : {}),
  };
  objectOf(await clientSideApply(admin, secret), 'seed');
  return secret;
}
