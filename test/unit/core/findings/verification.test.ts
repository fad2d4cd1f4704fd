// The server's answer to a dry run beside the prediction, for the answers of authorization: a 403 in
// the words a `forbidden` finding foresaw agrees; a 403 nobody foresaw says nothing of the manifest
// (the object is not verified); an accepted dry run disagrees with a foreseen refusal. The words are
// the real server's (test/differential/permission.test.ts compares them with kubectl's).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Finding } from '../../../../server/src/core/findings';
import { compareWithServer } from '../../../../server/src/core/findings/verification';
import { parseManifestText } from '../../../../server/src/core/manifest/manifest';

const resource = parseManifestText('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: prod\n')
  .resources[0]!;
const words =
  'configmaps "settings" is forbidden: User "viewer" cannot patch resource "configmaps" in API group "" in the namespace "prod"';
const forbidden: Finding = {
  code: 'forbidden',
  severity: 'error',
  message: `${words} — kubectl apply --server-side is refused (403 Forbidden)`,
  range: { start: { line: 3, character: 8 }, end: { line: 3, character: 16 } },
  object: { apiVersion: 'v1', kind: 'ConfigMap', name: 'settings', namespace: 'prod' },
  serverMessage: words,
};
const refused = {
  outcome: 'rejected' as const,
  problem: { kind: 'forbidden', message: words, reason: 'Forbidden' },
  causes: [],
};

describe('a dry run refused by authorization', () => {
  test('a 403 in the words the prediction gave agrees', () => {
    const compared = compareWithServer(resource, [forbidden], refused, undefined);
    assert.deepEqual(compared, { ok: true, verification: { agrees: true, serverAnswer: words, differences: [] } });
  });

  test('a 403 nobody foresaw leaves the object unverified, as before', () => {
    const compared = compareWithServer(resource, [], refused, undefined);
    assert.deepEqual(compared, { ok: false, problem: refused.problem });
  });

  test('an accepted dry run disagrees with a foreseen refusal', () => {
    const compared = compareWithServer(resource, [forbidden], { outcome: 'accepted' }, undefined);
    assert.ok(compared.ok && !compared.verification.agrees);
    assert.match(compared.ok ? compared.verification.differences[0]!.message : '', /prediction says forbidden/);
  });
});
