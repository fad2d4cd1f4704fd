// The discovery and OpenAPI indexes are read once and shared; a refresh replaces them for everyone.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SharedLoad } from '../../../server/src/cluster/shared-load';
import type { ClusterResult } from '../../../server/src/cluster/types';

function counting(): { load: SharedLoad<number>; reads: () => number; finish: () => void } {
  let reads = 0;
  let release: (() => void) | undefined;
  const load = new SharedLoad<number>(async (): Promise<ClusterResult<number>> => {
    reads++;
    const value = reads;
    // Each read completes when the test says so: "during the read" is a state, not a delay.
    await new Promise<void>((resolve) => (release = resolve));
    return { ok: true, value };
  });
  return { load, reads: () => reads, finish: () => release?.() };
}

test('callers asking during a read share it; later callers get the kept value without a read', async () => {
  const c = counting();
  const [a, b] = [c.load.load(), c.load.load()];
  c.finish();
  assert.deepEqual(await Promise.all([a, b]), [
    { ok: true, value: 1 },
    { ok: true, value: 1 },
  ]);
  assert.deepEqual(await c.load.load(), { ok: true, value: 1 });
  assert.equal(c.reads(), 1);
});

test('a caller asking during a refresh gets the refreshed value, not the one being replaced', async () => {
  const c = counting();
  const first = c.load.load();
  c.finish();
  await first;
  const refreshing = c.load.load(true);
  const during = c.load.load();
  c.finish();
  assert.deepEqual(await refreshing, { ok: true, value: 2 });
  assert.deepEqual(await during, { ok: true, value: 2 });
  assert.equal(c.reads(), 2);
});
